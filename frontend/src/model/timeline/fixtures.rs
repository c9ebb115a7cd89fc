//! Runs shaped like the real thing, for the timeline's tests: a naive race, an atomic one, and a
//! long tail of late buyers; and their Redis tapes, as the page builds them.

use oversold_protocol::{Guard, OutcomeResult, ScriptCall, TapeRule};

use crate::model::fixtures::{config, outcome};
use crate::model::run::RunModel;
use crate::model::tape_view::RunTape;

/// A naive race: everyone arrives at 0, reads the whole stock at 100..; writes answer at
/// 1000 + 10·b, buyer b's DECRBY leaving `stock - b`.
pub(super) fn naive_run(stock: u32, buyers: u32) -> RunModel {
    let mut run = RunModel::new("r-1".into(), config(stock, buyers));
    run.push_batch(
        (1..=buyers)
            .map(|b| {
                let mut o = outcome(b, 1, OutcomeResult::Reserved);
                o.observed_stock = Some(i64::from(stock));
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

/// An atomic run: no reads in the app; the first `stock` buyers' calls take a unit each (in
/// buyer order), the rest find 0 and are refused.
pub(super) fn atomic_run(stock: u32, buyers: u32) -> RunModel {
    let mut run = RunModel::new("r-2".into(), config(stock, buyers));
    run.config.strategy = "lua".into();
    run.push_batch(
        (1..=buyers)
            .map(|b| {
                let sold = b <= stock;
                let result = if sold {
                    OutcomeResult::Reserved
                } else {
                    OutcomeResult::SoldOut
                };
                let mut o = outcome(b, 1, result);
                let before = (i64::from(stock) - i64::from(b) + 1).max(0);
                o.observed_stock = Some(before);
                o.stock_after = sold.then_some(before - 1);
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

/// The tape of a naive run (GET, then DECRBY).
pub(super) fn naive_tape(run: &RunModel) -> RunTape {
    let rule = TapeRule::ReadThenDecrement {
        guard: Guard::Unguarded,
    };
    RunTape::build(
        run.config.race.stock,
        rule,
        run.rows.iter().map(|r| &r.outcome),
    )
}

/// The tape of an atomic run (one EVALSHA per buyer).
pub(super) fn atomic_tape(run: &RunModel) -> RunTape {
    let rule = TapeRule::AtomicCall {
        call: ScriptCall::Evalsha,
    };
    RunTape::build(
        run.config.race.stock,
        rule,
        run.rows.iter().map(|r| &r.outcome),
    )
}

/// The tape of a run made by [`naive_run`], [`atomic_run`] or [`long_tail`].
pub(super) fn tape_for(run: &RunModel) -> RunTape {
    if run.config.strategy == "lua" {
        atomic_tape(run)
    } else {
        naive_tape(run)
    }
}
