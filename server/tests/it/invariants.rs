//! The engine against a real Redis, over many seeded random configurations, for the
//! strategies the talk is about (the registry's `featured` ones) and those on PostgreSQL.
//!
//! For the featured safe one (`lua`), and every safe one on PostgreSQL (`postgres`): never
//! oversells, sells exactly what a serial order would, one outcome per buyer. For the
//! featured unsafe one (`naive`): oversells with the default settings nearly every time
//! (measured, then bounded). For every unsafe one on PostgreSQL (`postgres_naive`): loses
//! updates with the defaults nearly every time, where the row lock holds. Each comes from `strategy::REGISTRY` by what it says of itself
//! (see `common::registry`), not by name.

use crate::all_strategies::unsafe_runs_that_fail;
use crate::common::TestRedis;
use crate::common::checks::{
    assert_one_outcome_per_buyer, assert_serializable, random_config, serial_replay, strategy,
};
use crate::common::registry::{RaceSuite, each, race_strategies, seed};
use oversold::backends::Backends;
use oversold::engine;
use oversold::run::RunReport;
use oversold::strategy::Strategy;
use oversold_protocol::RunRequest;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio_util::sync::CancellationToken;

/// `runs` seeded random races of one safe strategy, each checked against every invariant.
async fn never_oversells(backends: &Backends, safe: &'static Strategy, seed: u64, runs: u32) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let name = safe.name();
    assert_eq!(safe.unavailable_reason(backends), None, "{name}");
    let mut sold_out_runs = 0;
    for i in 0..runs {
        let config = random_config(&mut rng, name);
        // The process id keeps two test processes sharing one PostgreSQL apart.
        let run_id = format!("inv-{name}-{}-{i}", std::process::id());
        let report = engine::run(
            backends,
            safe,
            &config,
            &run_id,
            None,
            CancellationToken::new(),
        )
        .await
        .unwrap_or_else(|e| panic!("{name} run {i} failed: {e}"));
        let s = &report.summary;
        assert_one_outcome_per_buyer(&config, &report.outcomes);
        assert_eq!(s.errors, 0, "{config:?}");
        assert_eq!(s.oversold_units, 0, "{name} oversold: {config:?} {s:?}");
        assert!(s.units_sold <= u64::from(config.race.stock));
        assert_eq!(
            s.final_stock,
            i64::from(config.race.stock) - s.units_sold as i64
        );
        assert!(s.final_stock >= 0);
        assert_eq!(s.lost_updates, 0);
        assert_eq!(s.orders_accepted + s.rejected, config.race.buyers);
        assert_serializable(&config, &report.outcomes, s.final_stock);
        // With one unit per order, a serial order sells min(stock, buyers).
        if config.race.max_qty.is_none() && config.race.qty == 1 {
            assert_eq!(
                s.units_sold,
                u64::from(config.race.stock.min(config.race.buyers))
            );
        }
        if s.rejected > 0 {
            sold_out_runs += 1;
        }
    }
    // The generator must actually exercise contention, or this test proves little.
    assert!(
        sold_out_runs > runs / 2,
        "only {sold_out_runs} of {runs} {name} runs ran out of stock"
    );
}

/// The featured strategies of one suite: the talk's own (`lua`, `naive`).
fn featured(suite: RaceSuite) -> Vec<&'static Strategy> {
    race_strategies(suite)
        .into_iter()
        .filter(|s| s.about.featured)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_featured_safe_strategy_never_oversells_over_200_seeded_random_runs() {
    let checks = featured(RaceSuite::RandomOnRedis)
        .into_iter()
        .map(|s| {
            (s.name().to_string(), async move {
                let redis = TestRedis::start();
                never_oversells(&redis.backends(), s, seed(0x0005_01d0_2026, s.name()), 200).await;
                let mut conn = redis.raw().await;
                assert!(
                    crate::common::run_keys(&mut conn).await.is_empty(),
                    "runs left keys behind"
                );
            })
        })
        .collect();
    each("featured and safe", checks).await;
}

/// The row lock serializes buyers in PostgreSQL: the same invariants, serial replay included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strategies_on_postgresql_never_oversell_over_40_seeded_random_runs() {
    let redis = TestRedis::start();
    let Some(backends) = redis.backends_with_postgres().await else {
        return;
    };
    let checks = race_strategies(RaceSuite::RandomOnPostgres)
        .into_iter()
        .map(|s| {
            let backends = backends.clone();
            (s.name().to_string(), async move {
                never_oversells(&backends, s, seed(0x0005_01d0_0015, s.name()), 40).await;
                let left = crate::common::pg_count(&format!(
                    "SELECT count(*) FROM oversold_stock WHERE run_id LIKE 'inv-{}-{}-%'",
                    s.name(),
                    std::process::id()
                ))
                .await;
                assert_eq!(left, 0, "{} runs left rows behind", s.name());
            })
        })
        .collect();
    each("safe on PostgreSQL", checks).await;
}

/// The lost update in SQL: with the naive race's defaults (10 units, 50 buyers, 8 app servers,
/// race window 0), an unsafe PostgreSQL strategy (`postgres_naive`) accepts more orders than
/// there are units in at least 9 of 10 seeded runs, while the row never goes below zero (each
/// write is a value computed from a read of at least the order) and its updates are lost;
/// on the same seeds every safe one (`postgres`) sells at most the stock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsafe_strategies_on_postgresql_lose_updates_with_the_defaults_where_the_row_lock_holds() {
    let redis = TestRedis::start();
    let Some(backends) = redis.backends_with_postgres().await else {
        return;
    };
    let safe = race_strategies(RaceSuite::RandomOnPostgres);
    let checks = race_strategies(RaceSuite::MeasuredOnPostgres)
        .into_iter()
        .map(|s| {
            let (backends, safe) = (backends.clone(), safe.clone());
            (s.name().to_string(), async move {
                let name = s.name();
                let mut failed = 0;
                let mut accepted = Vec::new();
                for seed in 0..10 {
                    let config = |name: &str| {
                        RunRequest {
                            strategy: Some(name.into()),
                            seed: Some(seed),
                            ..Default::default()
                        }
                        .validate(0)
                        .unwrap()
                    };
                    // Ids of their own: `never_oversells` may be running `inv-…` runs beside these.
                    let id = format!("lost-{name}-{}-{seed}", std::process::id());
                    let cfg = config(name);
                    let report =
                        engine::run(&backends, s, &cfg, &id, None, CancellationToken::new())
                            .await
                            .unwrap_or_else(|e| panic!("{name} seed {seed}: {e}"));
                    let sum = &report.summary;
                    assert_one_outcome_per_buyer(&cfg, &report.outcomes);
                    assert_eq!(sum.errors + sum.unknown, 0, "{sum:?}");
                    assert!(sum.final_stock >= 0, "{sum:?}");
                    for o in &report.outcomes {
                        let read = o.read_us.expect("a check in the app reports its read");
                        assert!(o.start_us <= read && read <= o.end_us, "{o:?}");
                    }
                    if sum.orders_accepted > cfg.race.stock && sum.lost_updates > 0 {
                        failed += 1;
                        assert!(sum.oversold_units > 0, "{sum:?}");
                        let all: Vec<_> = report.outcomes.iter().collect();
                        assert!(
                            serial_replay(&cfg, &all, sum.final_stock).is_err(),
                            "a lost update passed the serial checker: {sum:?}"
                        );
                    }
                    accepted.push(sum.orders_accepted);
                    for held in &safe {
                        let cfg = config(held.name());
                        let id = format!("lost-{}-{}-vs-{seed}", held.name(), std::process::id());
                        let report =
                            engine::run(&backends, held, &cfg, &id, None, CancellationToken::new())
                                .await
                                .unwrap();
                        assert_eq!(report.summary.oversold_units, 0, "{:?}", report.summary);
                    }
                }
                println!(
                    "{name}, defaults, seeds 0..10: more orders than units and lost updates in \
                     {failed}/10 runs; orders accepted per run {accepted:?}"
                );
                assert!(
                    failed >= 9,
                    "only {failed}/10 runs lost updates: {accepted:?}"
                );
                let left = crate::common::pg_count(&format!(
                    "SELECT count(*) FROM oversold_stock WHERE run_id LIKE 'lost-%-{}-%'",
                    std::process::id()
                ))
                .await;
                assert_eq!(left, 0, "{name} runs left rows behind");
            })
        })
        .collect();
    each("unsafe on PostgreSQL", checks).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_featured_safe_strategy_sells_exactly_the_stock_with_10000_buyers() {
    let checks = featured(RaceSuite::RandomOnRedis)
        .into_iter()
        .map(|s| {
            (s.name().to_string(), async move {
                let redis = TestRedis::start();
                let config = RunRequest {
                    strategy: Some(s.name().into()),
                    stock: Some(2500),
                    buyers: Some(10_000),
                    max_qty: Some(2),
                    seed: Some(5),
                    ..Default::default()
                }
                .validate(0)
                .unwrap();
                let report = engine::run(
                    &redis.backends(),
                    s,
                    &config,
                    "big",
                    None,
                    CancellationToken::new(),
                )
                .await
                .unwrap();
                assert_one_outcome_per_buyer(&config, &report.outcomes);
                assert_eq!(report.summary.oversold_units, 0);
                assert_serializable(&config, &report.outcomes, report.summary.final_stock);
                // 10,000 buyers wanting 1-2 units each against 2,500: the shelf must end
                // (nearly) empty.
                assert!(report.summary.final_stock <= 1, "{:?}", report.summary);
            })
        })
        .collect();
    each("featured and safe", checks).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_featured_unsafe_strategy_oversells_with_the_defaults_nearly_every_run() {
    const RUNS: u64 = 100;
    let checks = featured(RaceSuite::MeasuredOnRedis)
        .into_iter()
        .map(|s| {
            (s.name().to_string(), async move {
                let failed = unsafe_runs_that_fail(s, RUNS).await;
                assert!(
                    failed >= 95,
                    "the stage demo needs a reliable race: it failed in only {failed}/{RUNS} runs"
                );
            })
        })
        .collect();
    each("featured and unsafe", checks).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_seed_same_schedule() {
    let redis = TestRedis::start();
    let config = RunRequest {
        strategy: Some("lua".into()),
        buyers: Some(40),
        max_qty: Some(3),
        arrival_spread_ms: Some(5),
        seed: Some(99),
        ..Default::default()
    }
    .validate(0)
    .unwrap();
    let a = engine::run(
        &redis.backends(),
        strategy("lua"),
        &config,
        "seed-a",
        None,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    let b = engine::run(
        &redis.backends(),
        strategy("lua"),
        &config,
        "seed-b",
        None,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    let plan = |r: &RunReport| {
        let mut v: Vec<(u32, u32, u32)> = r
            .outcomes
            .iter()
            .map(|o| (o.buyer, o.app_server, o.qty))
            .collect();
        v.sort();
        v
    };
    assert_eq!(plan(&a), plan(&b));
}
