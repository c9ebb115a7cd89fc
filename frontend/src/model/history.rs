//! Finished runs kept for comparison, the one-line verdict that compares them, and the
//! outcomes kept so a recent run can be reopened (bounded: see [`Kept`]).

use oversold_protocol::{BuyerOutcome, RunConfig, RunSummary};

use super::verdict::{kind, sentence};

/// How many finished runs the page keeps; a comparison's races count as one, so a comparison
/// of every strategy never pushes its own first races out.
pub const HISTORY_LEN: usize = 8;

/// One finished run, as the history table and the result line need it.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryEntry {
    /// The server's run id.
    pub run_id: String,
    /// Strategy name, e.g. `naive`.
    pub strategy: String,
    /// The strategy's short label for prose, as `hello` gave it, e.g. `Naive`.
    pub short_label: String,
    /// The tally from `run_finished`.
    pub summary: RunSummary,
    /// The comparison it was raced in, if any.
    pub compare: Option<String>,
}

impl HistoryEntry {
    /// What it counts as in [`HISTORY_LEN`]: its comparison, or itself.
    fn group(&self) -> &str {
        self.compare.as_deref().unwrap_or(&self.run_id)
    }
}

/// One run in words, e.g. `Naive: 10 in stock, 34 sold (stock -24), 24 oversold`
/// (see [`super::verdict::sentence`], which also words the lost update).
pub fn verdict(entry: &HistoryEntry) -> String {
    sentence(&entry.summary, &entry.short_label)
}

/// The latest run of each strategy, in `strategy_order`: its verdict, and whether it went wrong
/// (oversold or lost updates), so the page can colour each part.
pub fn result_parts(history: &[HistoryEntry], strategy_order: &[&str]) -> Vec<(String, bool)> {
    strategy_order
        .iter()
        // `history` is newest first.
        .filter_map(|name| history.iter().find(|e| e.strategy == *name))
        .map(|e| (verdict(e), kind(&e.summary).is_bad()))
        .collect()
}

/// [`result_parts`] joined: the line to read out on stage.
pub fn result_line(history: &[HistoryEntry], strategy_order: &[&str]) -> String {
    let parts: Vec<String> = result_parts(history, strategy_order)
        .into_iter()
        .map(|(text, _)| text)
        .collect();
    parts.join(" | ")
}

/// Add a finished run to the front of `history`, dropping the oldest runs (and comparisons)
/// past [`HISTORY_LEN`].
pub fn record(history: &mut Vec<HistoryEntry>, entry: HistoryEntry) {
    history.retain(|e| e.run_id != entry.run_id);
    history.insert(0, entry);
    let mut groups: Vec<String> = Vec::new();
    history.retain(|e| {
        if !groups.iter().any(|g| g == e.group()) {
            groups.push(e.group().to_string());
        }
        groups.len() <= HISTORY_LEN
    });
}

/// Most outcomes the page keeps across the history's runs: 20,000 outcomes are a few MB, and
/// a phone that has run two 10,000-buyer crowds should not carry more.
pub const MAX_KEPT_OUTCOMES: usize = 20_000;

/// One finished run's knobs and outcomes, enough to draw it again.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptRun {
    /// The run's id (its history entry's).
    pub run_id: String,
    /// The knobs it ran with.
    pub config: RunConfig,
    /// Every outcome, in the order they arrived.
    pub outcomes: Vec<BuyerOutcome>,
}

/// The outcomes behind the history, newest first, at most [`MAX_KEPT_OUTCOMES`] in all.
///
/// When a new run does not fit, the oldest runs' outcomes go first, and their ids are
/// remembered so the history can say why those rows no longer reopen (their summaries stay).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Kept {
    runs: Vec<KeptRun>,
    dropped: Vec<String>,
}

impl Kept {
    /// Keep `run` (just recorded at the front of `history`), then drop what `history` no longer
    /// lists and, oldest first, what does not fit under `cap` outcomes.
    pub fn keep(&mut self, run: KeptRun, history: &[HistoryEntry], cap: usize) {
        self.runs.retain(|r| r.run_id != run.run_id);
        self.dropped.retain(|id| *id != run.run_id);
        self.runs.insert(0, run);
        let listed = |id: &str| history.iter().any(|e| e.run_id == id);
        self.runs.retain(|r| listed(&r.run_id));
        self.dropped.retain(|id| listed(id));
        let mut total: usize = self.runs.iter().map(|r| r.outcomes.len()).sum();
        // The newest run always stays: a single run is at most MAX_BUYERS outcomes.
        while total > cap && self.runs.len() > 1 {
            let oldest = self.runs.pop().expect("more than one run");
            total -= oldest.outcomes.len();
            self.dropped.push(oldest.run_id);
        }
    }

    /// The kept run `run_id`, if its outcomes are still here.
    pub fn get(&self, run_id: &str) -> Option<&KeptRun> {
        self.runs.iter().find(|r| r.run_id == run_id)
    }

    /// True when `run_id`'s outcomes were dropped to stay under the cap.
    pub fn was_dropped(&self, run_id: &str) -> bool {
        self.dropped.iter().any(|id| id == run_id)
    }

    /// Outcomes kept, over every run.
    pub fn total(&self) -> usize {
        self.runs.iter().map(|r| r.outcomes.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixtures::{config, outcome, summary};
    use oversold_protocol::OutcomeResult;

    fn kept(id: &str, n: u32) -> KeptRun {
        KeptRun {
            run_id: id.into(),
            config: config(10, n),
            outcomes: (1..=n)
                .map(|b| outcome(b, 1, OutcomeResult::SoldOut))
                .collect(),
        }
    }

    #[test]
    fn keeps_outcomes_under_the_cap_dropping_the_oldest_runs_first() {
        let mut history = Vec::new();
        let mut store = Kept::default();
        for (id, n) in [("r-1", 40), ("r-2", 30), ("r-3", 20)] {
            record(
                &mut history,
                entry(id, "naive", "Naive", summary(10, 0, 10)),
            );
            store.keep(kept(id, n), &history, 60);
        }
        // 40 + 30 + 20 = 90 > 60: r-1 goes (50 left), and says so.
        assert_eq!(store.total(), 50);
        assert!(store.get("r-1").is_none() && store.was_dropped("r-1"));
        assert_eq!(store.get("r-2").map(|r| r.outcomes.len()), Some(30));
        assert!(!store.was_dropped("r-3"));
        // A run bigger than the cap alone still stays: it is the one on screen.
        record(
            &mut history,
            entry("r-4", "lua", "Atomic", summary(10, 10, 0)),
        );
        store.keep(kept("r-4", 100), &history, 60);
        assert_eq!(store.total(), 100);
        assert!(store.was_dropped("r-2") && store.was_dropped("r-3"));
        // Runs the history forgot are forgotten here too, dropped or not.
        for i in 5..5 + HISTORY_LEN {
            let id = format!("r-{i}");
            record(
                &mut history,
                entry(&id, "lua", "Atomic", summary(10, 10, 0)),
            );
            store.keep(kept(&id, 1), &history, 60);
        }
        assert!(!store.was_dropped("r-1") && store.get("r-4").is_none());
        assert_eq!(store.total(), HISTORY_LEN);
    }

    fn entry(id: &str, strategy: &str, short_label: &str, s: RunSummary) -> HistoryEntry {
        HistoryEntry {
            run_id: id.into(),
            strategy: strategy.into(),
            short_label: short_label.into(),
            summary: s,
            compare: None,
        }
    }

    #[test]
    fn says_what_happened() {
        let naive = entry("r-1", "naive", "Naive", summary(10, 34, -24));
        assert_eq!(
            verdict(&naive),
            "Naive: 10 in stock, 34 sold (stock -24), 24 oversold"
        );
        let lua = entry("r-2", "lua", "Atomic", summary(10, 10, 0));
        assert_eq!(verdict(&lua), "Atomic: exactly 10 sold, 0 oversold");
        let few = entry("r-3", "lua", "Atomic", summary(10, 4, 6));
        assert_eq!(verdict(&few), "Atomic: 4 of 10 sold, 0 oversold");
        let mut lost = summary(10, 12, 3);
        lost.lost_updates = 5;
        lost.cancelled = true;
        let lost = entry("r-4", "naive_set", "Naive SET", lost);
        assert_eq!(
            verdict(&lost),
            "Naive SET: 12 orders for 10 units, counter says 3 left (5 lost updates) (cancelled)"
        );
    }

    #[test]
    fn result_line_compares_the_latest_run_of_each_strategy() {
        let mut history = Vec::new();
        record(
            &mut history,
            entry("r-1", "naive", "Naive", summary(10, 30, -20)),
        );
        record(
            &mut history,
            entry("r-2", "lua", "Atomic", summary(10, 10, 0)),
        );
        record(
            &mut history,
            entry("r-3", "naive", "Naive", summary(10, 34, -24)),
        );
        let order = ["naive", "lua", "watch"];
        assert_eq!(
            result_line(&history, &order),
            "Naive: 10 in stock, 34 sold (stock -24), 24 oversold | Atomic: exactly 10 sold, 0 oversold"
        );
        assert_eq!(result_line(&[], &order), "");
        let bad: Vec<bool> = result_parts(&history, &order)
            .into_iter()
            .map(|(_, bad)| bad)
            .collect();
        assert_eq!(bad, [true, false]);
    }

    #[test]
    fn keeps_the_newest_few() {
        let mut history = Vec::new();
        for i in 0..12 {
            record(
                &mut history,
                entry(&format!("r-{i}"), "lua", "Atomic", summary(10, 10, 0)),
            );
        }
        assert_eq!(history.len(), HISTORY_LEN);
        assert_eq!(history[0].run_id, "r-11");
        assert_eq!(history[HISTORY_LEN - 1].run_id, "r-4");
        // The same run twice (say, a replayed frame) is not two runs.
        record(
            &mut history,
            entry("r-11", "lua", "Atomic", summary(10, 10, 0)),
        );
        assert_eq!(history.len(), HISTORY_LEN);
    }

    #[test]
    fn a_comparison_counts_as_one_so_every_strategy_it_raced_stays() {
        let mut history = Vec::new();
        for i in 0..3 {
            record(
                &mut history,
                entry(&format!("r-{i}"), "naive", "Naive", summary(10, 34, 24)),
            );
        }
        // Ten strategies raced in one comparison.
        let names: Vec<String> = (0..10).map(|i| format!("s{i}")).collect();
        for (i, name) in names.iter().enumerate() {
            let mut e = entry(&format!("c-{i}"), name, name, summary(10, 10, 0));
            e.compare = Some("cmp-1".into());
            record(&mut history, e);
        }
        assert_eq!(
            history.len(),
            13,
            "the comparison's ten and the three runs before it"
        );
        let order: Vec<&str> = names.iter().map(String::as_str).chain(["naive"]).collect();
        assert_eq!(
            result_parts(&history, &order).len(),
            11,
            "every strategy in the line"
        );
        // Seven more runs: the comparison is still one of the eight kept…
        for i in 3..10 {
            record(
                &mut history,
                entry(&format!("r-{i}"), "lua", "Atomic", summary(10, 10, 0)),
            );
        }
        assert_eq!(history.iter().filter(|e| e.compare.is_some()).count(), 10);
        // …and one more pushes it out whole.
        record(
            &mut history,
            entry("r-10", "lua", "Atomic", summary(10, 10, 0)),
        );
        assert!(history.iter().all(|e| e.compare.is_none()));
        assert_eq!(history.len(), HISTORY_LEN);
    }

    #[test]
    fn a_recent_run_reopens_with_its_grid_and_counters() {
        use crate::model::fixtures::hello;
        use crate::model::page::PageState;
        use oversold_protocol::ServerMessage;

        let mut p = PageState::default();
        p.apply(ServerMessage::Hello(Box::new(hello())));
        let mut race = |id: &str, strategy: &str, sold: u32| {
            let mut c = config(10, 50);
            c.strategy = strategy.into();
            p.apply(ServerMessage::RunStarted {
                run_id: id.into(),
                config: c,
            });
            p.apply(ServerMessage::Outcomes {
                run_id: id.into(),
                outcomes: (1..=50)
                    .map(|b| {
                        let result = if b <= sold {
                            OutcomeResult::Reserved
                        } else {
                            OutcomeResult::SoldOut
                        };
                        outcome(b, 1, result)
                    })
                    .collect(),
            });
            let mut s = summary(10, u64::from(sold), 10 - i64::from(sold));
            s.strategy = strategy.into();
            p.apply(ServerMessage::RunFinished {
                run_id: id.into(),
                summary: s,
            });
        };
        race("r-1", "naive", 34);
        race("r-2", "lua", 10);
        assert_eq!(p.run.as_ref().unwrap().counters().units_sold, 10);
        assert!(p.reopen("r-1"));
        let run = p.run.as_ref().unwrap();
        assert_eq!(
            (run.run_id.as_str(), run.phase.as_str()),
            ("r-1", "finished")
        );
        assert_eq!(run.counters().units_sold, 34);
        assert_eq!(run.counters().oversold_units, 24);
        assert_eq!(run.counters().stock_remaining, -24);
        assert_eq!(run.rows.len(), 50);
        // Reopening changes what is on screen, not the history.
        assert_eq!(p.history.len(), 2);
        assert!(!p.reopen("r-404"));
        // Not while a run is in flight: its frames would have nowhere to go.
        p.apply(ServerMessage::RunStarted {
            run_id: "r-3".into(),
            config: config(10, 50),
        });
        assert!(!p.reopen("r-2"));
        assert!(!p.clear_run());
        assert_eq!(p.run.as_ref().unwrap().run_id, "r-3");
        p.apply(ServerMessage::RunCancelled {
            run_id: "r-3".into(),
            summary: None,
        });
        assert!(p.clear_run());
        assert_eq!(p.run, None);
        assert_eq!(p.history.len(), 2);
    }
}
