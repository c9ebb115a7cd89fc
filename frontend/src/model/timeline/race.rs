//! The race in numbers: when the real stock ran out, and who read the stock before it did.
//! These are the numbers the caption says and the zoom is decided on, over every buyer.

use super::zoom::{ZOOM_SPAN, ZOOM_WORTH};
use crate::model::run::{AuditRow, Mark};

/// The numbers the caption is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Race {
    /// Units in stock before the run.
    pub stock: u32,
    /// When the real stock ran out (µs after the gate, see [`stock_out_us`]); `None` while units are left.
    pub stock_out_us: Option<u64>,
    /// Buyers whose read of the stock came back before `stock_out_us`.
    pub read_before: u32,
    /// Of those, buyers whose order went on to sell units that never existed.
    pub stale_oversold: u32,
    /// Orders that sold units that never existed (whatever they read).
    pub oversold_orders: u32,
    /// Buyers whose strategy read the stock in the app at all.
    pub readers: u32,
    /// Buyers refused as sold out.
    pub refused: u32,
    /// Units across accepted orders.
    pub units_sold: u64,
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

/// When the real stock ran out, µs after the gate; `None` while real units are left, `Some(0)`
/// when there were none.
///
/// Units are counted in the order answers reached the page (the count that marks audit lines
/// "oversold", so every red bar belongs after this moment), and the stock ran out no later than
/// the answer of the order that took the last real unit. An answer is only an upper bound on
/// when its write happened, though: a refusal that saw the counter at zero or below proves the
/// stock was already gone when that read came back, so the earliest such refusal can pull the
/// moment earlier. (Without it an atomic run would show refusals before the stock ran out.)
pub fn stock_out_us(rows: &[AuditRow], stock: u32) -> Option<u64> {
    if stock == 0 {
        return Some(0);
    }
    let stock = u64::from(stock);
    let mut sold = 0u64;
    let last_real = rows.iter().filter(|r| r.mark.is_sale()).find_map(|r| {
        sold += u64::from(r.outcome.qty);
        (sold >= stock).then_some(r.outcome.end_us)
    })?;
    let first_empty_read = rows
        .iter()
        .filter(|r| r.mark == Mark::SoldOut && r.outcome.observed_stock.is_some_and(|s| s <= 0))
        .map(|r| r.outcome.read_us.unwrap_or(r.outcome.end_us))
        .min();
    Some(first_empty_read.map_or(last_real, |t| t.min(last_real)))
}

/// Count what the caption says.
pub fn race(rows: &[AuditRow], stock: u32) -> Race {
    let out = stock_out_us(rows, stock);
    let mut r = Race {
        stock,
        stock_out_us: out,
        answered: rows.len() as u32,
        ..Race::default()
    };
    for row in rows {
        let o = &row.outcome;
        r.last_end_us = r.last_end_us.max(o.end_us.max(o.start_us));
        if row.mark.is_sale() {
            r.units_sold += u64::from(o.qty);
        }
        match row.mark {
            Mark::Oversold => r.oversold_orders += 1,
            Mark::SoldOut => r.refused += 1,
            _ => {}
        }
        let Some(read) = o.read_us else { continue };
        r.readers += 1;
        if out.is_some_and(|t| read < t) {
            r.read_before += 1;
            if row.mark == Mark::Oversold {
                r.stale_oversold += 1;
            }
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{atomic_run, naive_run};
    use super::*;
    use crate::model::fixtures::{config, outcome};
    use crate::model::run::RunModel;
    use oversold_protocol::{BuyerOutcome, OutcomeResult};

    #[test]
    fn the_stock_runs_out_with_the_order_that_took_the_last_real_unit() {
        let run = naive_run(10, 50);
        assert_eq!(stock_out_us(&run.rows, 10), Some(1_100));
        // A straddling order (units 9..11 of 10) takes the last real unit too.
        let mut big = RunModel::new("r".into(), config(10, 3));
        big.push_batch(
            [(1, 8, 300), (2, 3, 500), (3, 1, 700)]
                .map(|(b, qty, end)| BuyerOutcome {
                    end_us: end,
                    ..outcome(b, qty, OutcomeResult::Reserved)
                })
                .to_vec(),
        );
        assert_eq!(stock_out_us(&big.rows, 10), Some(500));
        // Sold-out and failed answers take nothing.
        let mut few = RunModel::new("r".into(), config(10, 2));
        few.push_batch(vec![
            outcome(1, 5, OutcomeResult::Reserved),
            outcome(2, 9, OutcomeResult::SoldOut),
            outcome(3, 9, OutcomeResult::Error),
        ]);
        assert_eq!(stock_out_us(&few.rows, 10), None);
        assert_eq!(stock_out_us(&few.rows, 0), Some(0));
    }

    #[test]
    fn a_refusal_that_saw_no_stock_pulls_the_moment_earlier() {
        // Atomic: the tenth sale's answer came back late (250 µs), but buyer 11 was refused at
        // 180 µs having seen 0 left: the stock was gone by then.
        let mut run = atomic_run(10, 12);
        for row in &mut run.rows[10..] {
            row.outcome.observed_stock = Some(0);
        }
        run.rows[10].outcome.end_us = 180;
        assert_eq!(stock_out_us(&run.rows, 10), Some(180));
        // A read-then-write refusal counts from when its read came back.
        run.rows[11].outcome.read_us = Some(120);
        run.rows[11].outcome.end_us = 400;
        assert_eq!(stock_out_us(&run.rows, 10), Some(120));
        // A refusal that saw stock left (too little for its order) proves nothing.
        run.rows[11].outcome.observed_stock = Some(1);
        assert_eq!(stock_out_us(&run.rows, 10), Some(180));
        // Nor does any refusal while real units are unsold.
        let mut early = atomic_run(10, 12);
        early.rows[0].mark = Mark::Error;
        assert_eq!(stock_out_us(&early.rows, 10), None);
    }
}
