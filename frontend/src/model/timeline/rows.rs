//! The rows: one bar per buyer, stacked by arrival or grouped by app server, and which buyers a
//! zoomed picture keeps. A 10,000-buyer run is one sort and a pass, once per animation frame.

use super::race::{Race, race};
use super::zoom::Hidden;
use crate::model::run::{AuditRow, Mark};
use crate::model::tape_view::RunTape;

/// How buyers are stacked on the y axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RowOrder {
    /// One row per buyer, by arrival time (then buyer number).
    #[default]
    Arrival,
    /// Grouped by app server (Redis connection), by arrival within each group.
    AppServer,
}

impl RowOrder {
    /// Both orders, for the toggle.
    pub const ALL: [RowOrder; 2] = [RowOrder::Arrival, RowOrder::AppServer];

    /// The toggle's label.
    pub fn label(self) -> &'static str {
        match self {
            RowOrder::Arrival => "by arrival",
            RowOrder::AppServer => "by app server",
        }
    }

    /// A short id for test hooks.
    pub fn id(self) -> &'static str {
        match self {
            RowOrder::Arrival => "arrival",
            RowOrder::AppServer => "app",
        }
    }
}

/// One buyer's bar: arrival to answer, with the moment its read of the stock came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bar {
    /// Row on the y axis, 0 at the top.
    pub row: u32,
    /// Arrival, µs after the gate.
    pub start_us: u64,
    /// Answer, µs after the gate.
    pub end_us: u64,
    /// When the app's read came back, for strategies that read before deciding.
    pub read_us: Option<u64>,
    /// Colour: reserved, oversold, sold out or error.
    pub mark: Mark,
}

/// A run of consecutive rows that went through one app server (only when grouping).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group {
    /// 0-based app server index.
    pub app_server: u32,
    /// First row of the group.
    pub first_row: u32,
    /// Rows in the group.
    pub rows: u32,
}

/// Everything the panel draws, independent of pixels.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Timeline {
    /// One bar per buyer, in row order.
    pub bars: Vec<Bar>,
    /// App-server groups, top to bottom (empty unless grouped by app server).
    pub groups: Vec<Group>,
    /// The latest answer, µs after the gate (the data's right edge).
    pub last_end_us: u64,
    /// The race's numbers (over every buyer, shown or not).
    pub race: Race,
    /// The zoomed axis' right edge (µs), when zoomed; `None` for the whole run.
    pub window_end_us: Option<u64>,
    /// Buyers left out of a zoomed picture.
    pub hidden: Hidden,
}

impl Timeline {
    /// Lay out `rows` (audit rows, in the order they reached the page) of a run that started
    /// with `stock` units, whose Redis tape is `tape`. With `zoom`, and a run long enough to
    /// need it ([`Race::zoom_end_us`]), only the buyers that arrived before the zoomed axis'
    /// right edge get a row.
    pub fn new(
        rows: &[AuditRow],
        stock: u32,
        order: RowOrder,
        zoom: bool,
        tape: Option<&RunTape>,
    ) -> Self {
        let race = race(rows, stock, tape);
        let window_end_us = race.zoom_end_us().filter(|_| zoom);
        let o = |i: usize| &rows[i].outcome;
        let mut hidden = Hidden::default();
        let mut idx: Vec<usize> = (0..rows.len())
            .filter(|&i| match window_end_us {
                Some(end) if o(i).start_us >= end => {
                    hidden.add(mark(&rows[i], tape));
                    false
                }
                _ => true,
            })
            .collect();
        match order {
            RowOrder::Arrival => idx.sort_unstable_by_key(|&i| (o(i).start_us, o(i).buyer)),
            RowOrder::AppServer => {
                idx.sort_unstable_by_key(|&i| (o(i).app_server, o(i).start_us, o(i).buyer))
            }
        }
        let mut groups: Vec<Group> = Vec::new();
        let bars: Vec<Bar> = idx
            .iter()
            .enumerate()
            .map(|(row, &i)| {
                let row = row as u32;
                let out = o(i);
                if order == RowOrder::AppServer {
                    match groups.last_mut() {
                        Some(g) if g.app_server == out.app_server => g.rows += 1,
                        _ => groups.push(Group {
                            app_server: out.app_server,
                            first_row: row,
                            rows: 1,
                        }),
                    }
                }
                Bar {
                    row,
                    start_us: out.start_us,
                    end_us: out.end_us.max(out.start_us),
                    read_us: out.read_us,
                    mark: mark(&rows[i], tape),
                }
            })
            .collect();
        let last_end_us = bars.iter().map(|b| b.end_us).max().unwrap_or(0);
        Self {
            bars,
            groups,
            last_end_us,
            race,
            window_end_us,
            hidden,
        }
    }

    /// Rows on the y axis (one per buyer).
    pub fn rows(&self) -> u32 {
        self.bars.len() as u32
    }
}

/// A bar's colour: how the buyer's order ended; for a sale, red exactly when the tape says its
/// write took units that did not exist, so the timeline's red bars are the tape's red writes.
/// (Where the tape cannot tell, `naive_set`'s SETs, the audit trail's mark stands: the orders
/// that took the running total past the stock in the order their answers came back.)
pub fn mark(row: &AuditRow, tape: Option<&RunTape>) -> Mark {
    match (row.mark, tape) {
        (Mark::Reserved | Mark::Oversold, Some(t)) if t.knows_phantoms => {
            if t.buyer(row.outcome.buyer).phantom_units > 0 {
                Mark::Oversold
            } else {
                Mark::Reserved
            }
        }
        (m, _) => m,
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{long_tail, naive_run, tape_for};
    use super::super::zoom::{hidden, zoom_note};
    use super::*;

    #[test]
    fn rows_sort_by_arrival_or_group_by_app_server() {
        let run = naive_run(10, 9);
        let t = Timeline::new(
            &run.rows,
            10,
            RowOrder::Arrival,
            true,
            Some(&tape_for(&run)),
        );
        // start_us = b % 3: buyers 3, 6, 9 at 0, then 1, 4, 7, then 2, 5, 8.
        let starts: Vec<u64> = t.bars.iter().map(|b| b.start_us).collect();
        assert_eq!(starts, [0, 0, 0, 1, 1, 1, 2, 2, 2]);
        assert!(t.groups.is_empty());
        assert_eq!(t.last_end_us, 1_090);
        assert_eq!(t.rows(), 9);

        let g = Timeline::new(
            &run.rows,
            10,
            RowOrder::AppServer,
            true,
            Some(&tape_for(&run)),
        );
        // app_server = b % 8: buyers 8 (app 0), 1 and 9 (app 1), 2 .. 7.
        assert_eq!(g.groups.len(), 8);
        assert_eq!(
            g.groups[1],
            Group {
                app_server: 1,
                first_row: 1,
                rows: 2
            }
        );
        assert_eq!(g.groups.iter().map(|x| x.rows).sum::<u32>(), 9);
        assert!(g.bars.iter().enumerate().all(|(i, b)| b.row == i as u32));
    }

    #[test]
    fn a_long_run_zooms_to_the_race_and_counts_who_it_leaves_out() {
        // 200 buyers: the run lasts 2,050 µs, more than 4 × 150: zoom to 3 × 150 = 450 µs.
        let run = long_tail(200);
        let r = race(&run.rows, 10, Some(&tape_for(&run)));
        assert_eq!((r.stock_out_us, r.last_end_us), (Some(150), 2_050));
        assert_eq!(r.zoom_end_us(), Some(450));

        let t = Timeline::new(
            &run.rows,
            10,
            RowOrder::Arrival,
            true,
            Some(&tape_for(&run)),
        );
        assert_eq!(t.window_end_us, Some(450));
        // Arrived before 450 µs: buyers 1..=44 (the 44th at 440 µs).
        assert_eq!(t.rows(), 44);
        assert!(t.bars.iter().all(|b| b.start_us < 450));
        assert_eq!(t.bars.iter().filter(|b| b.end_us > 450).count(), 4);
        assert_eq!(
            t.hidden,
            Hidden {
                buyers: 156,
                refused: 156,
                ..Hidden::default()
            }
        );
        assert_eq!(hidden(&run.rows, 450, Some(&tape_for(&run))), t.hidden);
        // The caption's numbers still count every buyer.
        assert_eq!(
            (t.race.answered, t.race.counts.unwrap().refused),
            (200, 190)
        );
        assert_eq!(
            zoom_note(&t.hidden, 450, 2_050),
            "Zoomed to the first 450 µs of a 2 ms run; 156 later buyers (all refused) not shown."
        );

        // Grouped by app server: the shown buyers only, rows renumbered without gaps.
        let g = Timeline::new(
            &run.rows,
            10,
            RowOrder::AppServer,
            true,
            Some(&tape_for(&run)),
        );
        assert_eq!(g.rows(), 44);
        assert_eq!(g.groups.iter().map(|x| x.rows).sum::<u32>(), 44);
        assert!(g.bars.iter().enumerate().all(|(i, b)| b.row == i as u32));

        // The whole run, on request: every buyer, nothing hidden.
        let w = Timeline::new(
            &run.rows,
            10,
            RowOrder::Arrival,
            false,
            Some(&tape_for(&run)),
        );
        assert_eq!((w.rows(), w.window_end_us), (200, None));
        assert_eq!(w.hidden, Hidden::default());
    }

    #[test]
    fn a_short_run_or_no_race_keeps_the_whole_run() {
        // 50 buyers: 550 µs is under 4 × 150: the race already fills the picture.
        let short = long_tail(50);
        assert_eq!(
            race(&short.rows, 10, Some(&tape_for(&short))).zoom_end_us(),
            None
        );
        let t = Timeline::new(
            &short.rows,
            10,
            RowOrder::Arrival,
            true,
            Some(&tape_for(&short)),
        );
        assert_eq!((t.rows(), t.window_end_us), (50, None));
        // No stock at all (run-out at 0), or stock left: nothing to zoom to.
        let none = long_tail(200);
        assert_eq!(
            race(&none.rows, 0, Some(&tape_for(&none))).zoom_end_us(),
            None
        );
        assert_eq!(race(&none.rows, 10_000, None).zoom_end_us(), None);
    }
}
