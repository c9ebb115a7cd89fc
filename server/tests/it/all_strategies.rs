//! The randomized invariant test of `invariants.rs`, run for every registered race strategy
//! that claims to be safe and runs on Redis, plus a measurement of how reliably each unsafe
//! one fails with the defaults. The strategies come from `strategy::REGISTRY` (see
//! `common::registry`): a new one is raced here without being named.
//!
//! Each safe strategy gets 60 seeded random configurations (the featured one, `lua`, 40:
//! `invariants` races it 200 times more): it never oversells, the counter matches the
//! orders, every buyer gets exactly one outcome. The checker follows the strategy's tape
//! rule. Where `observed_stock` is a read taken atomically with its write (`lua`,
//! `function`, `watch`, `lock`, `fenced_lock`), some serial order of the buyers must explain
//! the run. (`lock` only because nothing stalls here: `stalls.rs` shows it without that.)
//! `decr_compensate` reports the value its DECRBY saw instead of a read, so it gets a
//! weaker, adapted check; `sharded` is serial per bucket, and its refusals that left units
//! behind must be exactly what the summary counts as `false_sold_out`.

use crate::common::TestRedis;
use crate::common::checks::{assert_one_outcome_per_buyer, random_config, serial_replay};
use crate::common::registry::{
    RaceCheck, RaceSuite, each, may_give_up, race_check, race_strategies, race_suite, seed,
};
use oversold::backends::Backends;
use oversold::engine;
use oversold::run::RunReport;
use oversold::strategy::{REGISTRY, Strategy};

use oversold_protocol::{BuyerOutcome, OutcomeResult, RunConfig, RunRequest, TapeRule};
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

/// Random runs per safe strategy.
const RUNS: u32 = 60;
/// Random runs for a featured safe strategy, which `invariants` races 200 times more.
const FEATURED_RUNS: u32 = 40;

/// Seeded random runs of `s` on a private Redis, with every invariant that applies to it,
/// and no key left behind.
async fn never_oversells(s: &'static Strategy) {
    let redis = TestRedis::start();
    let backends = redis.backends();
    assert_eq!(s.unavailable_reason(&backends), None, "{}", s.name());
    let mut conn = redis.raw().await;
    let runs = if s.about.featured {
        FEATURED_RUNS
    } else {
        RUNS
    };
    random_runs_hold_the_invariants(&backends, s, seed(0x0a11, s.name()), runs, |_, _| {}).await;
    assert!(
        crate::common::run_keys(&mut conn).await.is_empty(),
        "runs left keys behind"
    );
}

/// Every safe Redis strategy whose replies `check` checks (and, given `waits`, that does or
/// does not wait its turn), each on a Redis of its own.
async fn every_safe_strategy_checked_by(check: RaceCheck, waits: Option<bool>) {
    let strategies = race_strategies(RaceSuite::RandomOnRedis)
        .into_iter()
        .filter(|s| race_check(s) == check && waits.is_none_or(|w| may_give_up(s) == w))
        .map(|s| (s.name().to_string(), never_oversells(s)))
        .collect();
    each(
        &format!("safe on Redis, checked by {check:?}, waiting its turn: {waits:?}"),
        strategies,
    )
    .await;
}

/// `runs` seeded random runs of `s` on `backends` (a single Redis or a cluster), each
/// checked against every invariant that applies to it, then handed to `also` for checks
/// of the caller's own.
pub async fn random_runs_hold_the_invariants(
    backends: &Backends,
    s: &'static Strategy,
    seed: u64,
    runs: u32,
    mut also: impl FnMut(&RunConfig, &RunReport),
) {
    let name = s.name();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
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
            assert!(may_give_up(s), "{name} gave up: {o:?} in {config:?}");
            assert_eq!(o.stock_after, None);
        }
        gave_up += gave.len();

        let check = race_check(s);
        if check == RaceCheck::DecrementThenUndo {
            if check_decr_compensate(&config, &report.outcomes, sum.final_stock) {
                undersold_runs += 1;
            }
        } else if check == RaceCheck::PerBucket {
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

/// Strategies that never wait for their turn (one script or call per buyer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn safe_strategies_that_never_wait_replay_serially() {
    every_safe_strategy_checked_by(RaceCheck::SerialOrder, Some(false)).await;
}

/// Strategies that wait their turn (WATCH retries, a lock) and may give up: apart from the
/// others, because they are the slow ones, and giving up is theirs alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn safe_strategies_that_wait_their_turn_replay_serially() {
    every_safe_strategy_checked_by(RaceCheck::SerialOrder, Some(true)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn safe_strategies_that_undo_a_decrement_never_oversell() {
    every_safe_strategy_checked_by(RaceCheck::DecrementThenUndo, None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn safe_strategies_split_into_buckets_never_oversell() {
    every_safe_strategy_checked_by(RaceCheck::PerBucket, None).await;
}

/// Every registered race strategy is raced by some suite: one that no suite can race fails
/// here, instead of passing unraced.
#[test]
fn every_race_strategy_has_a_suite() {
    for s in REGISTRY {
        race_suite(s).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// What `runs` default runs (10 units, 50 buyers, 8 app servers) of the unsafe strategy `s`
/// show: how many failed. The failure is read from its tape rule: a read, then a DECRBY
/// (the counter stays true) oversells; a read, then a SET of an absolute value loses updates
/// (the counter looks fine while more orders than units are accepted); anything else must
/// do one or the other. The checker that passes every safe run must call out each failed
/// one.
pub async fn unsafe_runs_that_fail(s: &'static Strategy, runs: u64) -> u64 {
    let redis = TestRedis::start();
    let name = s.name();
    let (mut failed_runs, mut total_accepted, mut total_sold, mut total_lost) = (0, 0, 0, 0);
    for seed in 0..runs {
        let config = RunRequest {
            strategy: Some(name.into()),
            seed: Some(seed),
            ..Default::default()
        }
        .validate(0)
        .unwrap();
        let report = run(&redis, s, &config, &format!("{name}-default-{seed}")).await;
        let sum = &report.summary;
        let stock = i64::from(config.race.stock);
        assert_one_outcome_per_buyer(&config, &report.outcomes);
        assert_eq!(sum.errors, 0, "{name}: {sum:?}");
        assert_eq!(
            sum.oversold_units,
            sum.units_sold.saturating_sub(u64::from(config.race.stock))
        );
        if s.about.category == oversold_protocol::Category::CheckThenWrite {
            // Each buyer's read came back between its arrival and its answer.
            for o in &report.outcomes {
                let read = o.read_us.expect("a check-then-write reports its read");
                assert!(o.start_us <= read && read <= o.end_us, "{name}: {o:?}");
            }
        }
        let failed = match s.about.tape {
            TapeRule::ReadThenDecrement { .. } => {
                // DECRBY itself never loses a write: the counter always matches the orders.
                assert_eq!(sum.final_stock, stock - sum.units_sold as i64, "{sum:?}");
                sum.oversold_units > 0
            }
            TapeRule::ReadThenSet => {
                // Every write is an absolute value computed from a read of at least qty: the
                // counter itself never goes negative, so a check on it alone sees nothing wrong.
                assert!(sum.final_stock >= 0, "{sum:?}");
                sum.orders_accepted > config.race.stock && sum.lost_updates != 0
            }
            _ => sum.oversold_units > 0 || sum.lost_updates != 0,
        };
        if failed {
            failed_runs += 1;
            let all: Vec<_> = report.outcomes.iter().collect();
            assert!(
                serial_replay(&config, &all, sum.final_stock).is_err(),
                "{name}: a failed run passed the serial checker: {sum:?}"
            );
        }
        total_accepted += u64::from(sum.orders_accepted);
        total_sold += sum.units_sold;
        total_lost += sum.lost_updates;
    }
    let what = match s.about.tape {
        TapeRule::ReadThenDecrement { .. } => "oversold",
        TapeRule::ReadThenSet => "accepted more orders than units and lost updates",
        _ => "oversold or lost updates",
    };
    println!(
        "{name}, defaults (10 stock, 50 buyers, 8 app servers): {what} in {failed_runs}/{runs} \
         runs; mean {:.1} orders accepted, {:.1} units sold, {:.1} units lost to overwrites",
        total_accepted as f64 / runs as f64,
        total_sold as f64 / runs as f64,
        total_lost as f64 / runs as f64,
    );
    failed_runs
}

/// Every unsafe race strategy but the featured one (`invariants` measures that one over
/// 100 runs), over 50 default runs each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsafe_strategies_lose_updates_or_oversell_with_the_defaults_nearly_every_run() {
    const RUNS: u64 = 50;
    let strategies = race_strategies(RaceSuite::MeasuredOnRedis)
        .into_iter()
        .filter(|s| !s.about.featured)
        .map(|s| {
            (s.name().to_string(), async move {
                let failed = unsafe_runs_that_fail(s, RUNS).await;
                assert!(
                    failed >= 45,
                    "the failure should be near certain: only {failed}/{RUNS} runs"
                );
            })
        })
        .collect();
    each("unsafe and not featured", strategies).await;
}
