//! Two hundred seeded random checkouts per safe strategy, each held to `check_checkout`:
//! never oversold, every unit accounted for, holds that leave nothing behind once reaped,
//! no request reserved twice where the reserve script records requests
//! (`idempotent_holds`), no customer past the limit where the script enforces one
//! (`customer_limit`), round trips as sent. The strategies that can fail are measured
//! failing, each as its row of [`LESSONS`] says. Every strategy comes from
//! `strategy::checkout::REGISTRY`: safe is what it says of itself (not `unsafe_by_design`);
//! a strategy that checks atomically but keeps no holds (`atomic_no_holds`, unsafe by design
//! because it leaks) gets the random runs of its kind too.
//!
//! Runs go six at a time on one Redis and one PostgreSQL (their keys and rows are
//! separate per run); a third of them settle in the Redis ledger instead of PostgreSQL.

use futures_util::StreamExt;
use oversold::strategy::checkout::{CheckoutStrategy, REGISTRY};
use oversold_protocol::{Category, RunSummary};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{fast, heavy, run};
use crate::common::checks::{check_checkout, random_checkout};
use crate::common::registry::{each, seed};
use crate::common::{TestRedis, pg_count, run_keys};

/// How many random checkouts each safe strategy gets.
const RUNS: u32 = 200;
/// Runs in flight at once.
const AT_ONCE: usize = 6;

/// What a default run of a strategy that can fail shows, by strategy: what it is called
/// and whether a run showed it. Nothing in a checkout strategy's words says which of its
/// lessons a default run shows, so every strategy that is unsafe by design or keeps no
/// holds (a crashed app server's units never come back) must have a row: a new one fails
/// [`the_unsafe_strategies_fail_in_nearly_every_default_run`] until someone writes down
/// what it gets wrong.
type Lesson = (&'static str, &'static str, fn(&RunSummary) -> bool);
const LESSONS: &[Lesson] = &[
    ("naive_checkout", "oversold", |s| s.oversold_units > 0),
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
    (
        "holds_notify",
        "lost releases while its listener restarted",
        |s| s.checkout.as_ref().unwrap().notify.releases_lost > 0,
    ),
];

/// A strategy whose default runs must show a failure: unsafe by design, or without holds.
fn can_fail(s: &CheckoutStrategy) -> bool {
    s.about.unsafe_by_design || !s.buyer.keeps_holds()
}

/// The rows of [`LESSONS`] for `s`; none for a strategy that can fail is an error.
fn lessons(s: &CheckoutStrategy) -> Result<Vec<Lesson>, String> {
    let rows: Vec<Lesson> = LESSONS
        .iter()
        .copied()
        .filter(|(name, _, _)| *name == s.name())
        .collect();
    if rows.is_empty() {
        Err(format!(
            "{}: unsafe by design or keeps no holds, and has no row in LESSONS \
             (tests/it/checkout/invariants.rs): write down what its default runs get wrong",
            s.name()
        ))
    } else {
        Ok(rows)
    }
}

async fn random_checkouts(s: &'static CheckoutStrategy) {
    let name = s.name();
    let seed = seed(0xc4ec, name);
    let _turn = heavy().await;
    let redis = TestRedis::start();
    let Some(with_pg) = redis.backends_with_postgres().await else {
        return;
    };
    let without = redis.backends();
    let holds = s.buyer.keeps_holds();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let configs: Vec<_> = (0..RUNS).map(|_| random_checkout(&mut rng, name)).collect();
    let started = std::time::Instant::now();
    let results: Vec<_> = futures_util::stream::iter(configs.iter().enumerate())
        .map(|(i, config)| {
            let backends = if i % 3 == 0 { &without } else { &with_pg };
            async move {
                // The process id keeps two test processes sharing one PostgreSQL apart: the
                // ledger's rows are keyed by run id.
                let id = format!("inv-{name}-{}-{i}", std::process::id());
                let report = run(backends, config, &id).await;
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
        "SELECT count(*) FROM oversold_ledger WHERE run_id LIKE 'inv-{name}-{}-%'",
        std::process::id()
    ))
    .await;
    assert_eq!(rows, 0, "{name} left ledger rows behind");
}

/// Every checkout strategy whose checker applies, keeping holds or not (`holds`), one at a
/// time: with holds, the safe ones; without, every one that never reads then decides in the
/// app (the checker holds it to "never oversold, leaks exactly the crashed claims").
async fn every_safe_checkout_strategy(holds: bool) {
    let checks = REGISTRY
        .iter()
        .copied()
        .filter(|s| {
            let checked = if holds {
                !s.about.unsafe_by_design
            } else {
                s.about.category != Category::CheckThenWrite
            };
            checked && s.buyer.keeps_holds() == holds
        })
        .map(|s| (s.name().to_string(), random_checkouts(s)))
        .collect();
    each(&format!("safe, keeping holds: {holds}"), checks).await;
}

/// With holds (`holds`, `idempotent_holds`, `customer_limit`): every hold settled exactly
/// once, nothing leaked once reaped, never two reservations for one request where the
/// script records requests, never a customer past a limit the script enforces.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn safe_checkout_strategies_with_holds_keep_their_checker_over_200_random_checkouts() {
    every_safe_checkout_strategy(true).await;
}

/// Without holds (`atomic_no_holds`): never oversold, and what leaks is exactly the claims
/// the crashed app servers took with them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn safe_checkout_strategies_without_holds_keep_their_checker_over_200_random_checkouts() {
    every_safe_checkout_strategy(false).await;
}

/// Every strategy that can fail has what it shows written down, and every row is about a
/// registered strategy that can fail.
#[test]
fn every_checkout_strategy_that_can_fail_has_a_lesson() {
    for s in REGISTRY.iter().filter(|s| can_fail(s)) {
        lessons(s).unwrap_or_else(|e| panic!("{e}"));
    }
    for (name, what, _) in LESSONS {
        assert!(
            REGISTRY.iter().any(|s| s.name() == *name && can_fail(s)),
            "LESSONS says {name} {what}, but no registered strategy that can fail is {name}"
        );
    }
}

/// The strategies that can fail, with every knob at its default (only the clock is sped
/// up): how often each shows each of its failures ([`LESSONS`]), over many seeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_unsafe_strategies_fail_in_nearly_every_default_run() {
    const SEEDS: u64 = 40;
    let _turn = heavy().await;
    let redis = TestRedis::start();
    let Some(backends) = redis.backends_with_postgres().await else {
        return;
    };
    let rows: Vec<(&CheckoutStrategy, Lesson)> = REGISTRY
        .iter()
        .copied()
        .filter(|s| can_fail(s))
        .flat_map(|s| {
            let rows = lessons(s).unwrap_or_else(|e| panic!("{e}"));
            rows.into_iter().map(move |row| (s, row))
        })
        .collect();
    assert!(!rows.is_empty(), "no checkout strategy can fail?");
    for (s, (name, what, failed)) in rows {
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
                        run(
                            backends,
                            config,
                            &format!("unsafe-{name}-{}-{i}", std::process::id()),
                        )
                        .await,
                    )
                }
            })
            .buffer_unordered(AT_ONCE)
            .collect()
            .await;
        let mut failures = 0;
        for (config, report) in &reports {
            let holds = s.buyer.keeps_holds();
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
