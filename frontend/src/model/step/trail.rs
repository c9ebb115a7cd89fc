//! [`StepTrail`]: the stock after every command of a step session.
//!
//! Each click moves one buyer by exactly one command, and its answer carries the stock read
//! from Redis right after it. Kept in order, those answers are the counter after every command
//! of the log: what tells a write (the counter moved) from a read or a lock (it did not).

use oversold_protocol::StepState;

/// The counter after each command of one step session.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StepTrail {
    /// The session it belongs to.
    pub run_id: String,
    /// `stocks[n]`: the stock when the log held `n` commands (`None` where no answer said).
    pub stocks: Vec<Option<i64>>,
}

impl StepTrail {
    /// Take in one `step_state`: a new session (or a reset, which has a new id) starts over.
    pub fn observe(&mut self, state: &StepState) {
        let n = state.log.len();
        if state.run_id != self.run_id || n + 1 < self.stocks.len() {
            self.run_id = state.run_id.clone();
            self.stocks.clear();
        }
        if self.stocks.len() < n + 1 {
            self.stocks.resize(n + 1, None);
        }
        self.stocks[n] = state.stock;
    }

    /// The counter just before command `i` of the log, where known.
    pub fn before(&self, i: usize) -> Option<i64> {
        self.stocks.get(i).copied().flatten()
    }

    /// The counter just after command `i` of the log, where known.
    pub fn after(&self, i: usize) -> Option<i64> {
        self.stocks.get(i + 1).copied().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{decrby, get, int, state};
    use super::*;

    #[test]
    fn records_the_stock_after_every_click_and_restarts_on_a_new_session() {
        let mut t = StepTrail::default();
        t.observe(&state("s-1", 1, &[], Some(1)));
        t.observe(&state("s-1", 1, &[(1, get(), int(1))], Some(1)));
        t.observe(&state(
            "s-1",
            1,
            &[(1, get(), int(1)), (1, decrby(1), int(0))],
            Some(0),
        ));
        assert_eq!(t.stocks, [Some(1), Some(1), Some(0)]);
        assert_eq!((t.before(1), t.after(1)), (Some(1), Some(0)));
        assert_eq!(t.after(2), None);
        // A reset is a new session: the trail starts over.
        t.observe(&state("s-2", 1, &[], Some(1)));
        assert_eq!(t.stocks, [Some(1)]);
        // A missed answer leaves a hole, not a guess.
        t.observe(&state(
            "s-2",
            1,
            &[(1, get(), int(1)), (2, get(), int(1))],
            Some(1),
        ));
        assert_eq!(t.stocks, [Some(1), None, Some(1)]);
    }
}
