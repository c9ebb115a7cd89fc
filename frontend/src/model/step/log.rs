//! The step log, read: what each command did to the counter, and each write joined to the read
//! it was decided on.
//!
//! The log is Redis's exact order (each command went through alone, on a click). What a command
//! did is read from the counter around it ([`StepTrail`]), never from per-strategy text:
//! - the counter went down: a write (a sale, or an overshoot below zero);
//! - it went up: an undo;
//! - the reply is `nil`: Redis refused it (a lock already held, a discarded transaction);
//! - a `GET` whose integer reply is the counter: a read of the stock;
//! - a buyer that ended `reserved` without moving the counter wrote over another sale (a
//!   lost update: `SET` of a value computed from a stale read);
//! - anything else (a lock, a WATCH, a release) changed nothing and is drawn as such.
//!
//! Commands and replies are the protocol's typed [`RedisCall`] and [`RedisReply`]; their text
//! (the protocol's `Display`) is only ever shown, never read back.

use oversold_protocol::{BuyerOutcome, OutcomeResult, RedisCall, RedisReply, StepState};

use super::trail::StepTrail;
use crate::model::tape_view::strip::CellKind;

/// One command of the log, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepCell {
    /// Who sent it.
    pub buyer: u32,
    /// The command, e.g. `DECRBY stock 1`.
    pub call: RedisCall,
    /// Redis's reply, e.g. `-1`, `nil`, `[1, 1, 0]`.
    pub answer: RedisReply,
    /// The counter just before it, where known.
    pub before: Option<i64>,
    /// The counter just after it, where known.
    pub after: Option<i64>,
    /// What it was.
    pub kind: CellKind,
    /// For a write: the index of the read it was decided on (the buyer's last read before it).
    pub read: Option<usize>,
    /// For a write: other buyers' writes that landed between its read and it.
    pub writes_between: Vec<usize>,
    /// For a sale: units it took that did not exist.
    pub phantom_units: u32,
    /// For a sale: units the counter did not lose although it sold them (a lost update).
    pub lost_units: u32,
}

/// The whole log, read, with each buyer's outcome beside it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StepLog {
    /// In Redis's order.
    pub cells: Vec<StepCell>,
    /// Each buyer's outcome once it has one, by buyer (index 0 is buyer 1).
    pub outcomes: Vec<Option<BuyerOutcome>>,
    /// Units per order.
    pub qty: u32,
}

impl StepLog {
    /// Read `state`'s log against the counter `trail` recorded.
    pub fn read(state: &StepState, trail: &StepTrail) -> Self {
        let outcomes: Vec<Option<BuyerOutcome>> =
            state.buyers.iter().map(|b| b.outcome.clone()).collect();
        let qty = state.config.race.qty.max(1);
        let mut cells = first_look_at(state, trail);
        mark_silent_overwrites(&mut cells, &outcomes);
        join_writes_to_reads(&mut cells, &outcomes, qty);
        mark_refusals(&mut cells, &outcomes);
        StepLog {
            cells,
            outcomes,
            qty,
        }
    }

    /// Buyer `buyer`'s commands, as indices into [`StepLog::cells`].
    pub fn of(&self, buyer: u32) -> impl Iterator<Item = usize> + '_ {
        (0..self.cells.len()).filter(move |&i| self.cells[i].buyer == buyer)
    }

    /// Buyer `buyer`'s outcome, once it has one.
    pub fn outcome(&self, buyer: u32) -> Option<&BuyerOutcome> {
        outcome_of(&self.outcomes, buyer)
    }
}

/// What a command did, from the counter around it and its reply alone.
fn first_look(
    call: &RedisCall,
    answer: &RedisReply,
    before: Option<i64>,
    after: Option<i64>,
) -> CellKind {
    match (before, after) {
        (Some(b), Some(a)) if a < b => return CellKind::Sale,
        (Some(b), Some(a)) if a > b => return CellKind::Undo,
        _ => {}
    }
    if *answer == RedisReply::Nil {
        return CellKind::Nil;
    }
    let value = read_value(call, answer);
    if value.is_some() && (before.is_none() || value == before) {
        return CellKind::Read;
    }
    CellKind::Other
}

/// What a read of the stock saw: a `GET`'s integer, or the sum of a pipeline of `GET`s (a
/// stock split over buckets, read bucket by bucket and summed in the app); `None` for any
/// other call.
pub fn read_value(call: &RedisCall, answer: &RedisReply) -> Option<i64> {
    match (call, answer) {
        (RedisCall::Command(c), _) if c.name == "GET" => answer.integer(),
        (RedisCall::Pipeline(cs), RedisReply::Array(items))
            if !cs.is_empty() && cs.iter().all(|c| c.name == "GET") && cs.len() == items.len() =>
        {
            items.iter().map(RedisReply::integer).sum()
        }
        _ => None,
    }
}

/// The call as a short verb, for a mark: `MULTI · DECRBY stock 1 · EXEC` is `EXEC` (its reply
/// is EXEC's), `SET lock … NX PX 2000` is `SET NX`, `EVALSHA reserve.lua 1 stock 1` is
/// `EVALSHA`, a pipeline its last command's.
pub fn verb(call: &RedisCall) -> String {
    let last = match call {
        RedisCall::Transaction(_) => return "EXEC".to_string(),
        RedisCall::Command(c) => c,
        RedisCall::Pipeline(cs) => match cs.last() {
            Some(c) => c,
            None => return String::new(),
        },
    };
    if last.name == "SET" && last.has_word("NX") {
        return "SET NX".to_string();
    }
    last.name.clone()
}

/// Buyer `buyer`'s outcome in `outcomes` (1-based), once it has one.
fn outcome_of(outcomes: &[Option<BuyerOutcome>], buyer: u32) -> Option<&BuyerOutcome> {
    outcomes
        .get((buyer as usize).checked_sub(1)?)
        .and_then(Option::as_ref)
}

/// One cell per command, with the counter around it (when the trail is this session's) and
/// what the command and its reply say on their own.
fn first_look_at(state: &StepState, trail: &StepTrail) -> Vec<StepCell> {
    let same_session = trail.run_id == state.run_id;
    state
        .log
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (before, after) = if same_session {
                (trail.before(i), trail.after(i))
            } else {
                (None, None)
            };
            StepCell {
                buyer: c.buyer,
                call: c.call.clone(),
                answer: c.answer.clone(),
                before,
                after,
                kind: first_look(&c.call, &c.answer, before, after),
                read: None,
                writes_between: Vec::new(),
                phantom_units: 0,
                lost_units: 0,
            }
        })
        .collect()
}

/// A buyer that sold without ever moving the counter wrote over another sale: its last
/// command that was neither a read nor refused was that write.
fn mark_silent_overwrites(cells: &mut [StepCell], outcomes: &[Option<BuyerOutcome>]) {
    for o in outcomes.iter().flatten() {
        if o.result != OutcomeResult::Reserved {
            continue;
        }
        let mine = || cells.iter().enumerate().filter(|(_, c)| c.buyer == o.buyer);
        if mine().any(|(_, c)| c.kind == CellKind::Sale) {
            continue;
        }
        let last = mine()
            .filter(|(_, c)| c.kind == CellKind::Other)
            .map(|(i, _)| i)
            .next_back();
        if let Some(i) = last {
            cells[i].kind = CellKind::Overwrite;
        }
    }
}

/// Join each write to its read, count what landed between, and settle what it was: a sale,
/// a phantom (units that did not exist), an overwrite (units the counter lost), an overshoot.
fn join_writes_to_reads(cells: &mut [StepCell], outcomes: &[Option<BuyerOutcome>], qty: u32) {
    let writes: Vec<usize> = (0..cells.len())
        .filter(|&i| matches!(cells[i].kind, CellKind::Sale | CellKind::Overwrite))
        .collect();
    for &w in &writes {
        let buyer = cells[w].buyer;
        let read = (0..w)
            .rev()
            .take_while(|&i| !(cells[i].buyer == buyer && writes.contains(&i)))
            .find(|&i| cells[i].buyer == buyer && cells[i].kind == CellKind::Read);
        let between: Vec<usize> = read.map_or_else(Vec::new, |r| {
            writes
                .iter()
                .copied()
                .filter(|&x| x > r && x < w && cells[x].buyer != buyer)
                .collect()
        });
        let done = outcome_of(outcomes, buyer);
        let sold = done.is_some_and(|o| o.result == OutcomeResult::Reserved);
        let q = done.map_or(qty, |o| o.qty);
        let c = &mut cells[w];
        c.read = read;
        if let (true, Some(b), Some(a)) = (sold, c.before, c.after) {
            c.phantom_units = (i64::from(q) - b.clamp(0, i64::from(q))) as u32;
            c.lost_units = (i64::from(q) - (b - a)).clamp(0, i64::from(q)) as u32;
        }
        c.kind = if c.lost_units > 0 {
            CellKind::Overwrite
        } else if c.phantom_units > 0 {
            CellKind::Phantom
        } else if !sold && c.after.is_some_and(|a| a < 0) {
            // Below zero and not (yet) a sale: an overshoot waiting to be undone.
            CellKind::Overshoot
        } else {
            CellKind::Sale
        };
        let stale = !between.is_empty();
        c.writes_between = between;
        if let (true, Some(r)) = (stale, read) {
            cells[r].kind = CellKind::StaleRead;
        }
    }
}

/// Reads that showed too little, and a refused buyer's one command.
fn mark_refusals(cells: &mut [StepCell], outcomes: &[Option<BuyerOutcome>]) {
    for i in 0..cells.len() {
        let Some(o) = outcome_of(outcomes, cells[i].buyer) else {
            continue;
        };
        if o.result != OutcomeResult::SoldOut {
            continue;
        }
        let c = &cells[i];
        let short = read_value(&c.call, &c.answer).is_some_and(|v| v < i64::from(o.qty));
        if c.kind == CellKind::Read && short {
            cells[i].kind = CellKind::RefusedRead;
        }
        let only = cells.iter().filter(|x| x.buyer == o.buyer).count() == 1;
        if only && cells[i].kind == CellKind::Other {
            cells[i].kind = CellKind::Refused;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{
        ended, exec, get, int, lua, lua_one_each, naive_oversell, ok, overshoot_and_undo, played,
        set, watch_retry,
    };
    use super::*;

    fn kinds(log: &StepLog) -> Vec<CellKind> {
        log.cells.iter().map(|c| c.kind).collect()
    }

    #[test]
    fn naive_both_read_then_both_write_the_second_write_is_phantom() {
        let (s, t) = naive_oversell();
        let log = StepLog::read(&s, &t);
        assert_eq!(
            kinds(&log),
            [
                CellKind::Read,
                CellKind::StaleRead,
                CellKind::Sale,
                CellKind::Phantom
            ]
        );
        let w = &log.cells[3];
        assert_eq!((w.before, w.after, w.phantom_units), (Some(0), Some(-1), 1));
        assert_eq!(w.read, Some(1));
        assert_eq!(w.writes_between, [2]);
        assert_eq!(log.cells[2].read, Some(0));
        assert!(log.cells[2].writes_between.is_empty());
    }

    #[test]
    fn one_command_each_atomic_sale_and_refusal() {
        let (s, t) = lua_one_each();
        let log = StepLog::read(&s, &t);
        assert_eq!(kinds(&log), [CellKind::Sale, CellKind::Refused]);
        assert_eq!(log.cells[0].read, None, "no read to go stale");
    }

    #[test]
    fn a_set_that_leaves_the_counter_where_it_was_is_a_lost_update() {
        // naive_set, two units: both read 2, both SET 1. The second SET moves nothing.
        let r1 = ended(1, OutcomeResult::Reserved, Some(2), Some(1));
        let r2 = ended(2, OutcomeResult::Reserved, Some(2), Some(1));
        let (s, t) = played(
            2,
            &[get(), get()],
            &[
                (1, get(), int(2), 2, &[Ok(set(1)), Ok(get())]),
                (2, get(), int(2), 2, &[Ok(set(1)), Ok(set(1))]),
                (1, set(1), ok(), 1, &[Err(r1.clone()), Ok(set(1))]),
                (2, set(1), ok(), 1, &[Err(r1), Err(r2)]),
            ],
        );
        let log = StepLog::read(&s, &t);
        assert_eq!(
            kinds(&log),
            [
                CellKind::Read,
                CellKind::StaleRead,
                CellKind::Sale,
                CellKind::Overwrite
            ]
        );
        assert_eq!(log.cells[3].lost_units, 1);
        assert_eq!(
            log.cells[3].phantom_units, 0,
            "the unit existed; the counter forgot it"
        );
    }

    #[test]
    fn watch_lock_and_undo_read_from_replies_and_the_counter() {
        // WATCH: the second EXEC comes back nil; the retry reads 0 and gives up.
        let (s, t) = watch_retry();
        let log = StepLog::read(&s, &t);
        use CellKind::*;
        assert_eq!(
            kinds(&log),
            [
                Other,
                Other,
                Read,
                Read,
                Sale,
                Nil,
                Other,
                RefusedRead,
                Other
            ]
        );
        // decr_compensate: below zero, then put back.
        let (s, t) = overshoot_and_undo();
        assert_eq!(kinds(&StepLog::read(&s, &t)), [Sale, Overshoot, Undo]);
    }

    #[test]
    fn a_pipeline_of_gets_is_a_read_of_their_sum() {
        use oversold_protocol::RedisCommand;
        let reads = RedisCall::Pipeline(vec![
            RedisCommand::new("GET").key("stock:b0"),
            RedisCommand::new("GET").key("stock:b1"),
        ]);
        let answer = RedisReply::Array(vec![int(1), int(2)]);
        assert_eq!(read_value(&reads, &answer), Some(3));
        assert_eq!(read_value(&get(), &int(4)), Some(4));
        assert_eq!(read_value(&set(1), &ok()), None);
        assert_eq!(
            first_look(&reads, &answer, Some(3), Some(3)),
            CellKind::Read
        );
    }

    #[test]
    fn verbs_for_marks() {
        use oversold_protocol::RedisCommand;
        assert_eq!(verb(&exec()), "EXEC");
        let lock = RedisCommand::new("SET")
            .key("lock")
            .word("ab12")
            .word("NX")
            .word("PX")
            .int(2000);
        assert_eq!(verb(&lock.into()), "SET NX");
        assert_eq!(verb(&set(1)), "SET");
        assert_eq!(verb(&lua(1)), "EVALSHA");
        assert_eq!(verb(&get()), "GET");
        let reads = RedisCall::Pipeline(vec![
            RedisCommand::new("GET").key("stock:b0"),
            RedisCommand::new("GET").key("stock:b1"),
        ]);
        assert_eq!(verb(&reads), "GET");
    }
}
