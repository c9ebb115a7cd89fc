//! The randomized invariant test of `invariants.rs`, run for every strategy that claims to be
//! safe, plus a measurement of how reliably `naive_set` loses updates.
//!
//! Each safe strategy gets 40 to 60 seeded random configurations (400 runs in all): it never
//! oversells, the counter matches the orders, every buyer gets exactly one outcome. Where
//! a strategy's `observed_stock` is a read taken atomically with its write (`lua`,
//! `function`, `watch`, `lock`, `fenced_lock`), some serial order of the buyers must explain
//! the run. (`lock` only because nothing stalls here: `stalls.rs` shows it without that.)
//! `decr_compensate` reports the value its DECRBY saw instead of a read, so it gets a
//! weaker, adapted check; `sharded` is serial per bucket, and its refusals that left units
//! behind must be exactly what the summary counts as `false_sold_out`.

use crate::common::TestRedis;
use crate::common::checks::{assert_one_outcome_per_buyer, random_config, serial_replay, strategy};
use oversold::backends::Backends;
use oversold::engine;
use oversold::run::RunReport;
use oversold::strategy::Strategy;

use oversold_protocol::{BuyerOutcome, OutcomeResult, RunConfig, RunRequest};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio_util::sync::CancellationToken;

/// The check for `decr_compensate`, whose `observed_stock` is `stock_after + qty` from its
/// own DECRBY rather than a read. Every reservation must have left the counter at zero or
/// above. With one unit per order an overshoot can only happen once the shelf is empty
/// (the counter cannot dip below one unit's worth while units remain), so there the sale
/// must be exactly serial: the reservations' `stock_after` are `stock-1, ..., stock-sold`.
/// With bigger orders a pending undo can make a buyer that would fit see a negative
/// counter, so only the weaker checks apply. Returns true when a refusal left sellable
/// stock behind (an undersell).
fn check_decr_compensate(config: &RunConfig, outcomes: &[BuyerOutcome], final_stock: i64) -> bool {
    for o in outcomes {
        let qty = i64::from(o.qty);
        let seen = o.observed_stock.expect("decr_compensate always reports");
        match o.result {
            OutcomeResult::Reserved => {
                let after = o.stock_after.unwrap();
                assert!(after >= 0, "reserved into the negative: {o:?}");
                assert_eq!(seen, after + qty, "{o:?}");
                assert_eq!(o.round_trips, 1, "{o:?}");
            }
            OutcomeResult::SoldOut => {
                assert!(seen < qty, "refused although its DECRBY fit: {o:?}");
                assert_eq!(o.round_trips, 2, "{o:?}");
            }
            _ => panic!("decr_compensate failed a buyer: {o:?}"),
        }
    }
    let reserved: Vec<i64> = outcomes
        .iter()
        .filter(|o| o.result == OutcomeResult::Reserved)
        .map(|o| o.stock_after.unwrap())
        .collect();
    if config.race.max_qty.is_none() && config.race.qty == 1 {
        let mut got = reserved.clone();
        got.sort_unstable_by(|a, b| b.cmp(a));
        let want: Vec<i64> = (final_stock..i64::from(config.race.stock)).rev().collect();
        assert_eq!(got, want, "{config:?}");
        assert_eq!(
            reserved.len() as u32,
            config.race.stock.min(config.race.buyers)
        );
    }
    let smallest_refused = outcomes
        .iter()
        .filter(|o| o.result == OutcomeResult::SoldOut)
        .map(|o| i64::from(o.qty))
        .min();
    smallest_refused.is_some_and(|q| final_stock >= q)
}

async fn run(redis: &TestRedis, s: &'static Strategy, config: &RunConfig, id: &str) -> RunReport {
    run_on(&redis.backends(), s, config, id).await
}

async fn run_on(
    backends: &Backends,
    s: &'static Strategy,
    config: &RunConfig,
    id: &str,
) -> RunReport {
    engine::run(backends, s, config, id, None, CancellationToken::new())
        .await
        .unwrap_or_else(|e| panic!("run {id} failed: {e}"))
}

/// `runs` seeded random runs of `name` on a private Redis, with every invariant that
/// applies to it, and no key left behind.
async fn never_oversells(name: &str, seed: u64, runs: u32) {
    let redis = TestRedis::start();
    let mut conn = redis.raw().await;
    random_runs_hold_the_invariants(&redis.backends(), name, seed, runs, |_, _| {}).await;
    assert!(
        crate::common::run_keys(&mut conn).await.is_empty(),
        "runs left keys behind"
    );
}

/// `runs` seeded random runs of `name` on `backends` (a single Redis or a cluster), each
/// checked against every invariant that applies to it, then handed to `also` for checks
/// of the caller's own.
pub async fn random_runs_hold_the_invariants(
    backends: &Backends,
    name: &str,
    seed: u64,
    runs: u32,
    mut also: impl FnMut(&RunConfig, &RunReport),
) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let s = strategy(name);
    let (mut sold_out_runs, mut gave_up, mut undersold_runs) = (0, 0, 0);
    for i in 0..runs {
        let config = random_config(&mut rng, name);
        let report = run_on(backends, s, &config, &format!("{name}-{i}")).await;
        also(&config, &report);
        let sum = &report.summary;
        assert_one_outcome_per_buyer(&config, &report.outcomes);
        assert_eq!(sum.oversold_units, 0, "{name} oversold: {config:?} {sum:?}");
        assert!(sum.units_sold <= u64::from(config.race.stock));
        assert_eq!(
            sum.final_stock,
            i64::from(config.race.stock) - sum.units_sold as i64
        );
        assert!(sum.final_stock >= 0);
        assert_eq!(sum.lost_updates, 0);
        assert_eq!(
            sum.orders_accepted + sum.rejected + sum.gave_up,
            config.race.buyers,
            "{sum:?}"
        );
        assert_eq!(
            (sum.errors, sum.unknown, sum.in_doubt_units),
            (0, 0, 0),
            "{sum:?}"
        );

        // The only other ending allowed is a bounded strategy giving up: it took nothing.
        let gave: Vec<&BuyerOutcome> = report
            .outcomes
            .iter()
            .filter(|o| o.result == OutcomeResult::GaveUp)
            .collect();
        for o in &gave {
            assert!(
                matches!(name, "watch" | "lock" | "fenced_lock"),
                "{name} gave up: {o:?} in {config:?}"
            );
            assert_eq!(o.stock_after, None);
        }
        gave_up += gave.len();

        if name == "decr_compensate" {
            if check_decr_compensate(&config, &report.outcomes, sum.final_stock) {
                undersold_runs += 1;
            }
        } else if name == "sharded" {
            // Each bucket is serial on its own; together they can refuse while units remain,
            // and the summary counts exactly those refusals.
            let left_behind = report
                .outcomes
                .iter()
                .filter(|o| {
                    o.result == OutcomeResult::SoldOut && i64::from(o.qty) <= sum.final_stock
                })
                .count() as u32;
            assert_eq!(sum.false_sold_out, left_behind);
            if sum.false_sold_out > 0 {
                undersold_runs += 1;
            }
        } else {
            let served: Vec<&BuyerOutcome> = report
                .outcomes
                .iter()
                .filter(|o| o.result != OutcomeResult::GaveUp)
                .collect();
            if let Err(e) = serial_replay(&config, &served, sum.final_stock) {
                panic!("{name} not serializable: {e}; {config:?}");
            }
            // A serial order never refuses a buyer whose units are still there at the end.
            assert_eq!(sum.false_sold_out, 0, "{name}: {sum:?}");
            if gave.is_empty() && config.race.max_qty.is_none() && config.race.qty == 1 {
                assert_eq!(
                    sum.units_sold,
                    u64::from(config.race.stock.min(config.race.buyers))
                );
            }
        }
        if sum.rejected > 0 {
            sold_out_runs += 1;
        }
    }
    println!(
        "{name}: {runs} runs, {sold_out_runs} ran out of stock, {gave_up} buyers gave up, \
         {undersold_runs} runs refused a buyer that would have fit the final stock"
    );
    // The generator must actually exercise contention, or this test proves little.
    assert!(
        sold_out_runs > runs / 2,
        "only {sold_out_runs} runs ran out of stock"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lua_never_oversells() {
    never_oversells("lua", 0x0a11_0001, 40).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn function_never_oversells() {
    never_oversells("function", 0x0a11_0002, 60).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_never_oversells() {
    never_oversells("watch", 0x0a11_0003, 60).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lock_never_oversells() {
    never_oversells("lock", 0x0a11_0004, 60).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fenced_lock_never_oversells() {
    never_oversells("fenced_lock", 0x0a11_0007, 60).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decr_compensate_never_oversells() {
    never_oversells("decr_compensate", 0x0a11_0005, 60).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharded_never_oversells() {
    never_oversells("sharded", 0x0a11_0006, 60).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn naive_set_loses_updates_with_the_defaults_nearly_every_run() {
    let redis = TestRedis::start();
    let s = strategy("naive_set");
    let runs = 50;
    let (mut lost_runs, mut total_accepted, mut total_lost) = (0, 0, 0);
    for seed in 0..runs {
        let config = RunRequest {
            strategy: Some("naive_set".into()),
            seed: Some(seed),
            ..Default::default()
        }
        .validate(0)
        .unwrap();
        let report = run(&redis, s, &config, &format!("naive-set-{seed}")).await;
        let sum = &report.summary;
        assert_one_outcome_per_buyer(&config, &report.outcomes);
        assert_eq!(sum.errors, 0);
        // Every write is an absolute value computed from a read of at least qty: the
        // counter itself never goes negative, so a check on it alone sees nothing wrong.
        assert!(sum.final_stock >= 0, "{sum:?}");
        assert_eq!(sum.oversold_units, sum.units_sold.saturating_sub(10));
        if sum.orders_accepted > config.race.stock && sum.lost_updates != 0 {
            lost_runs += 1;
        }
        total_accepted += sum.orders_accepted;
        total_lost += sum.lost_updates;
    }
    println!(
        "naive_set, defaults (10 stock, 50 buyers, 8 app servers): accepted more orders than \
         units and lost updates in {lost_runs}/{runs} runs; mean {:.1} orders accepted, \
         mean {:.1} units lost to overwrites",
        f64::from(total_accepted) / f64::from(runs as u32),
        total_lost as f64 / f64::from(runs as u32),
    );
    assert!(
        lost_runs >= 45,
        "the lost update should be near certain: only {lost_runs}/{runs} runs"
    );
}
