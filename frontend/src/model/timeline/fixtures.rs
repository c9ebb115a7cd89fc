//! Runs shaped like the real thing, for the timeline's tests: a naive race, an atomic one, and a
//! long tail of late buyers.

use oversold_protocol::OutcomeResult;

use crate::model::fixtures::{config, outcome};
use crate::model::run::RunModel;

/// A naive race: everyone arrives at 0 and reads at 100..; writes answer at 1000 + 10·b.
pub(super) fn naive_run(stock: u32, buyers: u32) -> RunModel {
    let mut run = RunModel::new("r-1".into(), config(stock, buyers));
    run.push_batch(
        (1..=buyers)
            .map(|b| {
                let mut o = outcome(b, 1, OutcomeResult::Reserved);
                o.start_us = u64::from(b % 3);
                o.read_us = Some(100 + u64::from(b));
                o.end_us = 1_000 + 10 * u64::from(b);
                o.stock_after = Some(i64::from(stock) - i64::from(b));
                o
            })
            .collect(),
    );
    run
}

/// An atomic run: no reads; the first `stock` buyers get a unit, the rest are refused.
pub(super) fn atomic_run(stock: u32, buyers: u32) -> RunModel {
    let mut run = RunModel::new("r-2".into(), config(stock, buyers));
    run.push_batch(
        (1..=buyers)
            .map(|b| {
                let result = if b <= stock {
                    OutcomeResult::Reserved
                } else {
                    OutcomeResult::SoldOut
                };
                let mut o = outcome(b, 1, result);
                o.observed_stock = None;
                o.start_us = 0;
                o.end_us = 200 + 5 * u64::from(b);
                o
            })
            .collect(),
    );
    run
}

/// A long tail: buyer b arrives at 10·b µs and is answered 50 µs later; atomic, so the
/// stock runs out with the 10th sale (150 µs) and the other buyers are refused.
pub(super) fn long_tail(buyers: u32) -> RunModel {
    let mut run = atomic_run(10, buyers);
    for row in &mut run.rows {
        let b = u64::from(row.outcome.buyer);
        row.outcome.start_us = 10 * b;
        row.outcome.end_us = 10 * b + 50;
    }
    run
}
