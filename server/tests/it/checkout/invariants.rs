//! Two hundred seeded random checkouts per safe strategy, each held to `check_checkout`:
//! never oversold, every unit accounted for, holds that leave nothing behind once reaped,
//! no request reserved twice by `idempotent_holds`, no customer past `customer_limit`'s
//! limit, round trips as sent. The unsafe strategies are measured failing.
//!
//! Runs go eight at a time on one Redis and one PostgreSQL (their keys and rows are
//! separate per run); a third of them settle in the Redis ledger instead of PostgreSQL.

use futures_util::StreamExt;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{fast, heavy, run, strategy};
use crate::common::checks::{check_checkout, random_checkout};
use crate::common::{TestRedis, pg_count, run_keys};

/// How many random checkouts each safe strategy gets.
const RUNS: u32 = 200;
/// Runs in flight at once.
const AT_ONCE: usize = 6;

async fn random_checkouts(name: &'static str, seed: u64) {
    let _turn = heavy().await;
    let redis = TestRedis::start();
    let Some(with_pg) = redis.backends_with_postgres().await else {
        return;
    };
    let without = redis.backends();
    let s = strategy(name);
    let holds = s.buyer.keeps_holds();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let configs: Vec<_> = (0..RUNS).map(|_| random_checkout(&mut rng, name)).collect();
    let started = std::time::Instant::now();
    let results: Vec<_> = futures_util::stream::iter(configs.iter().enumerate())
        .map(|(i, config)| {
            let backends = if i % 3 == 0 { &without } else { &with_pg };
            async move {
                let report = run(backends, config, &format!("inv-{name}-{i}")).await;
                (config, report)
            }
        })
        .buffer_unordered(AT_ONCE)
        .collect()
        .await;
    let (mut leaked_crashes, mut expired, mut dups, mut late) = (0, 0, 0, 0);
    for (config, report) in &results {
        if let Err(e) = check_checkout(config, report, holds, true) {
            panic!("{name}: {e}");
        }
        let c = report.summary.checkout.as_ref().unwrap();
        leaked_crashes += c.leaked_units;
        expired += c.expired_units;
        dups += c.duplicate_reservations;
        late += u64::from(c.paid_too_late);
    }
    println!(
        "{name}: {RUNS} random checkouts in {:.1} s: {leaked_crashes} units leaked, {expired} returned by the reaper, \
         {dups} reserved twice, {late} paid too late",
        started.elapsed().as_secs_f64()
    );
    // Every run cleaned up after itself: no key, no ledger row.
    assert!(run_keys(&mut redis.raw().await).await.is_empty());
    let rows = pg_count(&format!(
        "SELECT count(*) FROM oversold_ledger WHERE run_id LIKE 'inv-{name}-%'"
    ))
    .await;
    assert_eq!(rows, 0, "{name} left ledger rows behind");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkout_atomic_no_holds_never_oversells_and_its_leaks_are_exactly_the_lost_claims() {
    random_checkouts("atomic_no_holds", 11).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkout_holds_never_oversell_and_leak_nothing_once_reaped() {
    random_checkouts("holds", 12).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkout_idempotent_holds_never_reserve_twice_for_one_request() {
    random_checkouts("idempotent_holds", 13).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkout_customer_limit_is_never_exceeded() {
    random_checkouts("customer_limit", 14).await;
}

/// The unsafe strategies with every knob at its default (only the clock is sped up):
/// how often each shows its failure, over many seeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkout_unsafe_strategies_fail_in_nearly_every_default_run() {
    const SEEDS: u64 = 40;
    let _turn = heavy().await;
    let redis = TestRedis::start();
    let Some(backends) = redis.backends_with_postgres().await else {
        return;
    };
    for (name, what, failed) in [
        (
            "naive_checkout",
            "oversold",
            (|s: &oversold_protocol::RunSummary| s.oversold_units > 0) as fn(&_) -> bool,
        ),
        ("naive_checkout", "leaked", |s| {
            s.checkout.as_ref().unwrap().leaked_units > 0
        }),
        ("atomic_no_holds", "leaked or reserved twice", |s| {
            let c = s.checkout.as_ref().unwrap();
            c.leaked_units > 0 || c.duplicate_reservations > 0
        }),
        ("naive_customer_limit", "let a bot past the limit", |s| {
            s.checkout.as_ref().unwrap().limit_violations > 0
        }),
    ] {
        let configs: Vec<_> = (0..SEEDS)
            .map(|seed| {
                oversold_protocol::RunRequest {
                    seed: Some(seed),
                    time_scale: Some(10_000),
                    ..fast(name)
                }
                .validate(0)
                .unwrap()
            })
            .collect();
        let reports: Vec<_> = futures_util::stream::iter(configs.iter().enumerate())
            .map(|(i, config)| {
                let backends = &backends;
                async move {
                    (
                        config,
                        run(backends, config, &format!("unsafe-{name}-{i}")).await,
                    )
                }
            })
            .buffer_unordered(AT_ONCE)
            .collect()
            .await;
        let mut failures = 0;
        for (config, report) in &reports {
            let holds = strategy(name).buyer.keeps_holds();
            // Unsafe, but every unit is still accounted for.
            if let Err(e) = check_checkout(config, report, holds, false) {
                panic!("{name}: {e}");
            }
            failures += u32::from(failed(&report.summary));
        }
        println!("{name} {what} in {failures} of {SEEDS} default runs");
        assert!(
            failures * 10 >= SEEDS as u32 * 9,
            "{name} {what} in only {failures} of {SEEDS} default runs"
        );
    }
}
