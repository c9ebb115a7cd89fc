//! The race in numbers: when the stock ran out, and what the caption says about it. Every count
//! here comes from the run's Redis tape (`model::tape_view::RunTape`), the same tape the tape
//! panel draws, so the two views cannot disagree on a number. Clocks only place things on the
//! time axis: the run-out marker sits at the answer of the write the tape says ran the stock
//! out (app-side clocks cannot order commands; Redis's replies can).

use super::zoom::{ZOOM_SPAN, ZOOM_WORTH};
use crate::model::run::AuditRow;
use crate::model::tape_view::RunTape;

/// The tape's numbers the caption prints (a `Copy` of the ones it needs from
/// `oversold_protocol::tape::Caption`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TapeCounts {
    /// Units across sales.
    pub units_sold: u64,
    /// Units sold beyond the stock.
    pub oversold_units: u64,
    /// Buyers refused for lack of stock.
    pub refused: u32,
    /// Reads that showed enough stock for the buyer's order: in Redis's order, before it ran out.
    pub passed_check: u32,
    /// Sales whose write took units that did not exist.
    pub phantom_sales: u32,
    /// True when the strategy reads the stock in the app before writing.
    pub has_reads: bool,
    /// True when every order was for one unit.
    pub unit_orders: bool,
    /// True when Redis came back mid-run with less than it had answered: a sale beyond the
    /// stock then sold a unit a second time.
    pub came_back: bool,
}

impl TapeCounts {
    /// The counts of `tape`.
    pub fn of(tape: &RunTape) -> Self {
        let c = &tape.caption;
        Self {
            units_sold: c.units_sold,
            oversold_units: c.oversold_units,
            refused: c.refused,
            passed_check: c.passed_check,
            phantom_sales: c.phantom_sales,
            has_reads: tape.has_reads(),
            unit_orders: tape.unit_orders(),
            came_back: c.breaks > 0,
        }
    }
}

/// The numbers the caption is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Race {
    /// Units in stock before the run.
    pub stock: u32,
    /// When the stock ran out, µs after the gate: the answer of the write the tape says took
    /// the counter below the smallest order (`Some(0)` with no stock at all); `None` while
    /// units are left, or without a tape.
    pub stock_out_us: Option<u64>,
    /// The tape's counts; `None` when the strategy's tape rule is unknown.
    pub counts: Option<TapeCounts>,
    /// Buyers answered so far.
    pub answered: u32,
    /// The latest answer, µs after the gate (how long the run has lasted so far).
    pub last_end_us: u64,
}

impl Race {
    /// The right edge of the zoomed axis (µs), when the run lasted more than [`ZOOM_WORTH`] times
    /// the moment the stock ran out: [`ZOOM_SPAN`] times that moment. `None` when the whole run
    /// already reads well (or the stock never ran out, or there was none to race for).
    pub fn zoom_end_us(&self) -> Option<u64> {
        let out = self.stock_out_us.filter(|&t| t > 0)?;
        (self.last_end_us > out.saturating_mul(ZOOM_WORTH)).then(|| out.saturating_mul(ZOOM_SPAN))
    }
}

/// The race of `rows` (a run that started with `stock` units), counted by its `tape`.
pub fn race(rows: &[AuditRow], stock: u32, tape: Option<&RunTape>) -> Race {
    let last_end_us = rows
        .iter()
        .map(|r| r.outcome.end_us.max(r.outcome.start_us))
        .max()
        .unwrap_or(0);
    let stock_out_us = if stock == 0 && !rows.is_empty() {
        Some(0)
    } else {
        tape.and_then(RunTape::ran_out_us)
    };
    Race {
        stock,
        stock_out_us,
        counts: tape.map(TapeCounts::of),
        answered: rows.len() as u32,
        last_end_us,
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{atomic_run, atomic_tape, naive_run, naive_tape};
    use super::*;

    #[test]
    fn the_stock_runs_out_at_the_answer_of_the_write_the_tape_names() {
        // Naive: the write that left 0 is buyer 10's, answered at 1,100 µs.
        let run = naive_run(10, 50);
        let r = race(&run.rows, 10, Some(&naive_tape(&run)));
        assert_eq!(r.stock_out_us, Some(1_100));
        // Clocks can disagree with Redis's order: buyer 10's answer came back last of all,
        // yet its DECRBY is the one that left 0. The marker follows the tape, not the clock.
        let mut late = naive_run(10, 50);
        late.rows[9].outcome.end_us = 9_000;
        let r = race(&late.rows, 10, Some(&naive_tape(&late)));
        assert_eq!(r.stock_out_us, Some(9_000));
        // Atomic: the tenth sale's call left 0 (answered at 250 µs).
        let run = atomic_run(10, 50);
        let r = race(&run.rows, 10, Some(&atomic_tape(&run)));
        assert_eq!(r.stock_out_us, Some(250));
        // Units left: not run out. No stock at all: out from the start. No tape: no marker.
        let few = atomic_run(10, 4);
        assert_eq!(
            race(&few.rows, 10, Some(&atomic_tape(&few))).stock_out_us,
            None
        );
        assert_eq!(race(&few.rows, 0, None).stock_out_us, Some(0));
        assert_eq!(race(&run.rows, 10, None).stock_out_us, None);
    }

    #[test]
    fn the_counts_are_the_tapes() {
        let run = naive_run(10, 50);
        let tape = naive_tape(&run);
        let r = race(&run.rows, 10, Some(&tape));
        let c = r.counts.unwrap();
        assert_eq!(c.units_sold, tape.caption.units_sold);
        assert_eq!(c.oversold_units, tape.caption.oversold_units);
        assert_eq!(c.passed_check, tape.caption.passed_check);
        assert_eq!(c.phantom_sales, tape.caption.phantom_sales);
        assert_eq!(
            (c.units_sold, c.oversold_units, c.phantom_sales),
            (50, 40, 40)
        );
        assert!(c.has_reads && c.unit_orders);
    }
}
