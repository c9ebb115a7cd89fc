//! Finished runs kept for comparison, and the one-line verdict that compares them.

use oversold_protocol::RunSummary;

use super::verdict::{kind, sentence};

/// How many finished runs the page keeps.
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

/// Add a finished run to the front of `history`, dropping the oldest past [`HISTORY_LEN`].
pub fn record(history: &mut Vec<HistoryEntry>, entry: HistoryEntry) {
    history.retain(|e| e.run_id != entry.run_id);
    history.insert(0, entry);
    history.truncate(HISTORY_LEN);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixtures::summary;

    fn entry(id: &str, strategy: &str, short_label: &str, s: RunSummary) -> HistoryEntry {
        HistoryEntry {
            run_id: id.into(),
            strategy: strategy.into(),
            short_label: short_label.into(),
            summary: s,
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
}
