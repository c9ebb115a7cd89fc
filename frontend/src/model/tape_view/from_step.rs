//! The step-through log as a [`Strip`]: one lane per buyer, one column per command (the log
//! is Redis's exact order, so no column holds two), each read joined to its write. Drawn by
//! the same scene as a run's tape, so a visitor who just made an oversell by hand sees the
//! same picture a 10,000-buyer race leaves.

use oversold_protocol::StepState;

use super::strip::{Band, CellKind, Column, LaneUnit, Link, Mark, SlotColumn, Strip};
use crate::model::step::log::{StepLog, verb};
use crate::model::step::tally::sold_of_stock;

/// The strip of a step session.
pub fn strip(state: &StepState, log: &StepLog) -> Strip {
    let columns = log
        .cells
        .iter()
        .map(|c| {
            Column::Slot(SlotColumn {
                marks: vec![Mark {
                    lane: c.buyer.saturating_sub(1),
                    kind: c.kind,
                    count: 1,
                    label: Some(format!("{}\n→ {}", verb(&c.call), c.answer)),
                }],
                commands: 1,
                approx: false,
                counter: c.after,
                gap: false,
            })
        })
        .collect();
    let links = log
        .cells
        .iter()
        .enumerate()
        .filter_map(|(w, c)| {
            let r = c.read?;
            Some(Link {
                from_column: r as u32,
                from_lane: log.cells[r].buyer.saturating_sub(1),
                to_column: w as u32,
                to_lane: c.buyer.saturating_sub(1),
                stale: !c.writes_between.is_empty(),
            })
        })
        .collect();
    // The stock ran out with the first write that left less than an order.
    let ran_out = log
        .cells
        .iter()
        .position(|c| {
            matches!(
                c.kind,
                CellKind::Sale | CellKind::Phantom | CellKind::Overwrite
            ) && c.after.is_some_and(|a| a < i64::from(log.qty))
        })
        .map(|i| i as u32);
    Strip {
        bands: vec![Band {
            label: None,
            lanes: state
                .buyers
                .iter()
                .map(|b| format!("#{}", b.buyer))
                .collect(),
            initial: Some(i64::from(state.config.race.stock)),
            columns,
            links,
            ran_out,
        }],
        unit: LaneUnit::Buyer,
        cut_columns: 0,
    }
}

/// The caption under the step tape: the same numbers the counters show, from the state.
pub fn caption(state: &StepState) -> String {
    let now = state
        .stock
        .map_or_else(|| "unknown".to_string(), |v| v.to_string());
    let commands = state.log.len();
    format!(
        "Step-through: {}; the counter is at {now}. {commands} command{} so far, each one on a click, in the exact order Redis ran them.",
        sold_of_stock(state.units_sold, state.config.race.stock),
        if commands == 1 { "" } else { "s" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::step::fixtures::naive_oversell;

    #[test]
    fn one_column_per_command_reads_joined_to_writes() {
        let (s, t) = naive_oversell();
        let log = StepLog::read(&s, &t);
        let strip = strip(&s, &log);
        let band = &strip.bands[0];
        assert_eq!(band.lanes, ["#1", "#2"]);
        assert_eq!(band.columns.len(), 4);
        let Column::Slot(last) = &band.columns[3] else {
            panic!("a slot")
        };
        assert_eq!(last.marks[0].kind, CellKind::Phantom);
        assert_eq!(last.marks[0].label.as_deref(), Some("DECRBY\n→ -1"));
        assert_eq!(last.counter, Some(-1));
        assert_eq!(
            band.links,
            [
                Link {
                    from_column: 0,
                    from_lane: 0,
                    to_column: 2,
                    to_lane: 0,
                    stale: false
                },
                Link {
                    from_column: 1,
                    from_lane: 1,
                    to_column: 3,
                    to_lane: 1,
                    stale: true
                }
            ]
        );
        assert_eq!(band.ran_out, Some(2), "buyer 1's DECRBY took the last unit");
        assert_eq!(
            caption(&s),
            "Step-through: 2 units sold of 1 in stock: 1 oversold; the counter is at -1. 4 commands so far, each one on a click, in the exact order Redis ran them."
        );
    }

    #[test]
    fn marks_say_the_typed_call_and_reply_as_before() {
        use crate::model::step::fixtures::watch_retry;
        let (s, t) = watch_retry();
        let strip = strip(&s, &StepLog::read(&s, &t));
        let labels: Vec<String> = strip.bands[0]
            .columns
            .iter()
            .map(|c| match c {
                Column::Slot(s) => s.marks[0].label.clone().unwrap_or_default(),
                _ => String::new(),
            })
            .collect();
        assert_eq!(
            labels,
            [
                "WATCH\n→ OK",
                "WATCH\n→ OK",
                "GET\n→ 1",
                "GET\n→ 1",
                "EXEC\n→ [0]",
                "EXEC\n→ nil",
                "WATCH\n→ OK",
                "GET\n→ 0",
                "UNWATCH\n→ OK"
            ]
        );
    }
}
