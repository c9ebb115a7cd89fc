//! A comparison as the page follows it: which strategies will race, which one is racing now,
//! and the summaries so far, so the scoreboard can fill in race by race.

use oversold_protocol::{RaceConfig, RunSummary};

/// Where a comparison stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComparePhase {
    /// Races are still to come.
    Running,
    /// `compare_finished` arrived: `results` is the server's scoreboard.
    Finished,
    /// The socket dropped before `compare_finished`.
    Interrupted,
}

impl ComparePhase {
    /// The word for `data-state`.
    pub fn as_str(self) -> &'static str {
        match self {
            ComparePhase::Running => "running",
            ComparePhase::Finished => "finished",
            ComparePhase::Interrupted => "interrupted",
        }
    }
}

/// The page's copy of one comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareModel {
    /// The server's id for it.
    pub compare_id: String,
    /// Strategy names, in racing order.
    pub strategies: Vec<String>,
    /// The knobs every race shares (each race's `run_started` adds its strategy).
    pub config: RaceConfig,
    /// Index into `strategies` of the race in flight, if one is.
    pub racing: Option<usize>,
    /// One summary per race that finished, in racing order.
    pub results: Vec<RunSummary>,
    /// Where it stands.
    pub phase: ComparePhase,
}

impl CompareModel {
    /// `compare_started` arrived.
    pub fn new(compare_id: String, strategies: Vec<String>, config: RaceConfig) -> Self {
        Self {
            compare_id,
            strategies,
            config,
            racing: None,
            results: Vec::new(),
            phase: ComparePhase::Running,
        }
    }

    /// A `run_started` for `strategy` arrived while this comparison runs.
    pub fn race_started(&mut self, strategy: &str) {
        if self.phase == ComparePhase::Running {
            self.racing = self.strategies.iter().position(|s| s == strategy);
        }
    }

    /// A race's `run_finished` arrived: keep its summary for the scoreboard until the real one.
    pub fn race_finished(&mut self, summary: &RunSummary) {
        if self.phase == ComparePhase::Running
            && self.strategies.contains(&summary.strategy)
            && !self.results.iter().any(|r| r.strategy == summary.strategy)
        {
            self.results.push(summary.clone());
        }
    }

    /// `compare_finished`: the server's summaries replace the ones gathered along the way.
    pub fn finish(&mut self, summaries: Vec<RunSummary>) {
        self.results = summaries;
        self.racing = None;
        self.phase = ComparePhase::Finished;
    }

    /// The socket dropped: no more races will be reported.
    pub fn interrupt(&mut self) {
        if self.phase == ComparePhase::Running {
            self.phase = ComparePhase::Interrupted;
            self.racing = None;
        }
    }

    /// True until `compare_finished` (or a dropped socket).
    pub fn is_running(&self) -> bool {
        self.phase == ComparePhase::Running
    }

    /// `(1-based position, total, strategy)` of the race in flight.
    pub fn progress(&self) -> Option<(usize, usize, &str)> {
        let i = self.racing?;
        Some((i + 1, self.strategies.len(), self.strategies[i].as_str()))
    }

    /// E.g. `3 / 7: watch`; before the first race, `0 / 7`.
    pub fn progress_text(&self) -> String {
        match self.progress() {
            Some((n, total, name)) => format!("{n} / {total}: {name}"),
            None => format!("{} / {}", self.results.len(), self.strategies.len()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixtures::{config, summary};

    fn named(name: &str) -> RunSummary {
        let mut s = summary(10, 10, 0);
        s.strategy = name.into();
        s
    }

    #[test]
    fn follows_races_in_order_and_ends_with_the_servers_board() {
        let names: Vec<String> = ["naive", "lua", "watch"].map(String::from).into();
        let mut c = CompareModel::new("c-1".into(), names, config(10, 50).race);
        assert_eq!(c.progress_text(), "0 / 3");
        c.race_started("naive");
        assert_eq!(c.progress_text(), "1 / 3: naive");
        c.race_finished(&named("naive"));
        c.race_finished(&named("naive")); // a replayed frame is not a second race
        c.race_finished(&named("other")); // not part of this comparison
        assert_eq!(c.results.len(), 1);
        c.race_started("watch");
        assert_eq!(c.progress(), Some((3, 3, "watch")));
        c.finish(vec![named("naive"), named("lua"), named("watch")]);
        assert_eq!(c.phase.as_str(), "finished");
        assert_eq!(c.results.len(), 3);
        assert_eq!(c.progress(), None);
        // Late frames change nothing once finished.
        c.race_started("lua");
        c.interrupt();
        assert_eq!((c.racing, c.phase), (None, ComparePhase::Finished));
    }

    #[test]
    fn a_dropped_socket_interrupts_a_running_comparison() {
        let mut c = CompareModel::new("c-2".into(), vec!["lua".into()], config(10, 50).race);
        c.race_started("lua");
        c.interrupt();
        assert!(!c.is_running());
        assert_eq!(c.phase.as_str(), "interrupted");
    }
}
