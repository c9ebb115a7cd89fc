//! Every strategy on a real three-master Redis Cluster that each test starts for itself.
//!
//! - The randomized invariant checks of `all_strategies`, for every safe Redis strategy of
//!   `strategy::REGISTRY` (`postgres` has no Redis to cluster), each on a cluster of its
//!   own, with every outcome naming the node that served it; and the round-trip
//!   truthfulness check, after script and function flushes too.
//! - `WATCH` holds: an app server's WATCH, GET, MULTI/EXEC and UNWATCH reach one node
//!   connection, so a write in between discards the EXEC, and UNWATCH really unwatches.
//! - `sharded` spreads its buckets over the nodes; every other run stays on one slot.
//! - A master killed mid-run: the run ends in seconds with the failure reported, health says
//!   the cluster is down, a run meanwhile is refused with a clear error, and once the node is
//!   back the next run sells exactly as it should.
//! - The binary on a cluster (`--redis-cluster`), and `REDIS_CLUSTER` hidden in `--help`.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use crate::all_strategies::random_runs_hold_the_invariants;
use crate::common::TestCluster;
use crate::common::checks::{assert_one_outcome_per_buyer, strategy};
use crate::common::registry::{
    RaceCheck, RaceSuite, each, layout, may_give_up, race_check, race_strategies, seed,
};
use oversold::engine;
use oversold::health;
use oversold::run::{RunError, RunReport};
use oversold::store::cluster::slot_of;
use oversold::store::{RunKeys, StockLayout, stock};
use oversold::strategy::{REGISTRY, Strategy};
use oversold_protocol::{OutcomeResult, RedisState, RunConfig, RunRequest};
use tokio_util::sync::CancellationToken;

/// Seeded random runs per strategy: enough to cross every knob (0 to 40 units, 1 to 300
/// buyers, 1 to 32 app servers, spreads, quantities), few enough to keep the suite quick.
const RUNS: u32 = 30;

/// The random invariant runs of `s` on a fresh cluster; every outcome names the node
/// serving the counter it took from, and no run leaves a key on any node.
async fn holds_on_a_cluster(s: &'static Strategy) {
    let name = s.name();
    let cluster = TestCluster::start();
    let conn = cluster.conn().await;
    let started = Instant::now();
    let seed = seed(0xc1, name);
    random_runs_hold_the_invariants(&cluster.backends(), s, seed, RUNS, |_, report| {
        let keys = RunKeys::with_layout(&report.run_id, layout(s));
        let nodes = stock::serving_nodes(&conn, &keys);
        for o in &report.outcomes {
            let want = nodes[o.bucket.unwrap_or(0) as usize].clone();
            assert!(want.is_some());
            assert_eq!(o.node, want, "{name}: {o:?}");
        }
    })
    .await;
    println!(
        "{name} on a 3-master cluster: {RUNS} random runs in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(cluster.run_keys().await.is_empty(), "runs left keys behind");
}

/// Every safe Redis strategy whose replies `check` checks (and, given `waits`, that does or
/// does not wait its turn), each on a cluster of its own.
async fn every_safe_strategy_on_a_cluster_checked_by(check: RaceCheck, waits: Option<bool>) {
    let checks = race_strategies(RaceSuite::RandomOnRedis)
        .into_iter()
        .filter(|s| race_check(s) == check && waits.is_none_or(|w| may_give_up(s) == w))
        .map(|s| (s.name().to_string(), holds_on_a_cluster(s)))
        .collect();
    each(
        &format!("safe on a cluster, checked by {check:?}, waiting its turn: {waits:?}"),
        checks,
    )
    .await;
}

/// Strategies that never wait for their turn (one script or call per buyer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn safe_strategies_that_never_wait_replay_serially_on_a_cluster() {
    every_safe_strategy_on_a_cluster_checked_by(RaceCheck::SerialOrder, Some(false)).await;
}

/// Strategies that wait their turn (WATCH retries, a lock) and may give up: apart from the
/// others, because they are the slow ones, and giving up is theirs alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn safe_strategies_that_wait_their_turn_replay_serially_on_a_cluster() {
    every_safe_strategy_on_a_cluster_checked_by(RaceCheck::SerialOrder, Some(true)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn safe_strategies_that_undo_a_decrement_never_oversell_on_a_cluster() {
    every_safe_strategy_on_a_cluster_checked_by(RaceCheck::DecrementThenUndo, None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn safe_strategies_split_into_buckets_never_oversell_on_a_cluster() {
    every_safe_strategy_on_a_cluster_checked_by(RaceCheck::PerBucket, None).await;
}

fn config(request: RunRequest) -> RunConfig {
    request.validate(0).expect("valid test config")
}

async fn run(
    cluster: &TestCluster,
    config: &RunConfig,
    run_id: &str,
) -> Result<RunReport, RunError> {
    engine::run(
        &cluster.backends(),
        strategy(&config.strategy),
        config,
        run_id,
        None,
        CancellationToken::new(),
    )
    .await
}

/// What each buyer says it sent is what its app server's cluster connection sent, for every
/// Redis strategy, and still after `SCRIPT FLUSH` and `FUNCTION FLUSH` on every node (the
/// reloads count too; on a cluster a Function library is loaded master by master).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_strategy_reports_the_round_trips_it_really_sent_on_a_cluster() {
    let cluster = TestCluster::start();
    for s in REGISTRY.iter().filter(|s| s.uses_redis()) {
        for seed in 0..2u32 {
            let cfg = config(RunRequest {
                strategy: Some(s.name().into()),
                stock: Some(15),
                buyers: Some(60),
                max_qty: Some(2),
                race_window_ms: Some(seed),
                seed: Some(u64::from(seed)),
                ..Default::default()
            });
            let report = run(&cluster, &cfg, &format!("rt-{}-{seed}", s.name()))
                .await
                .unwrap_or_else(|e| panic!("{}: {e}", s.name()));
            assert_eq!(
                crate::common::reported_round_trips(&report),
                report.redis_requests,
                "{}",
                s.name()
            );
            assert_eq!(
                report.summary.round_trips,
                crate::common::reported_round_trips(&report)
            );
        }
    }
    for name in ["lua", "sharded", "lock", "fenced_lock", "function"] {
        cluster.on_every_node(&["SCRIPT", "FLUSH"]).await;
        cluster.on_every_node(&["FUNCTION", "FLUSH"]).await;
        let cfg = config(RunRequest {
            strategy: Some(name.into()),
            seed: Some(9),
            ..Default::default()
        });
        let report = run(&cluster, &cfg, &format!("rt-flushed-{name}"))
            .await
            .unwrap();
        assert_eq!(
            crate::common::reported_round_trips(&report),
            report.redis_requests,
            "{name} after a flush"
        );
        assert_eq!(report.summary.errors, 0, "{name}: {:?}", report.summary);
    }
    assert!(cluster.run_keys().await.is_empty());
}

/// On a cluster each app server's connection is its own cluster connection, and WATCH, GET,
/// MULTI/EXEC and UNWATCH on one slot all travel on its one connection to that slot's node.
/// If any of them went elsewhere, the first EXEC below would commit instead of being
/// discarded, or the UNWATCH would leave the stale WATCH in place and the last EXEC would be
/// discarded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_multi_exec_and_unwatch_share_one_node_connection() {
    let cluster = TestCluster::start();
    let keys = RunKeys::new("watch-on-cluster");
    let (mut a, mut b) = (cluster.conn().await, cluster.conn().await);
    stock::init(&mut a, &keys, 10).await.unwrap();

    // Another app server writes between A's WATCH and A's EXEC: A's EXEC is discarded.
    stock::watch(&mut a, &keys).await.unwrap();
    assert_eq!(stock::get(&mut a, &keys).await.unwrap(), Some(10));
    assert_eq!(stock::decr_by(&mut b, &keys, 1).await.unwrap(), 9);
    assert_eq!(stock::exec_decr_by(&mut a, &keys, 1).await.unwrap(), None);

    // Nobody writes in between: it commits.
    stock::watch(&mut a, &keys).await.unwrap();
    assert_eq!(stock::get(&mut a, &keys).await.unwrap(), Some(9));
    assert_eq!(
        stock::exec_decr_by(&mut a, &keys, 1).await.unwrap(),
        Some(8)
    );

    // UNWATCH reaches the connection holding the WATCH: a later write no longer matters.
    stock::watch(&mut a, &keys).await.unwrap();
    stock::unwatch(&mut a, &keys).await.unwrap();
    assert_eq!(stock::decr_by(&mut b, &keys, 1).await.unwrap(), 7);
    assert_eq!(
        stock::exec_decr_by(&mut a, &keys, 1).await.unwrap(),
        Some(6)
    );

    // Two app servers, two cluster connections: B's WATCH is not A's.
    stock::watch(&mut b, &keys).await.unwrap();
    assert_eq!(
        stock::exec_decr_by(&mut a, &keys, 1).await.unwrap(),
        Some(5)
    );
    assert_eq!(stock::exec_decr_by(&mut b, &keys, 1).await.unwrap(), None);
    stock::remove_run(&mut a, &keys).await.unwrap();
}

/// A run's own keys share one slot; `sharded`'s buckets each have their own, spread over the
/// nodes, and its buyers are served by more than one node. Our slot function agrees with
/// Redis's `CLUSTER KEYSLOT`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharded_buckets_spread_over_the_nodes_and_other_runs_stay_on_one() {
    let cluster = TestCluster::start();
    let mut raw = cluster.raw_node(0).await;
    let keys = RunKeys::with_layout("spread", StockLayout::Buckets(4));
    for key in keys.all() {
        let slot: u16 = redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(&key)
            .query_async(&mut raw)
            .await
            .unwrap();
        assert_eq!(slot_of(&key), slot, "{key}");
    }

    let mut seen_nodes = HashSet::new();
    for seed in 0..4 {
        let sharded = config(RunRequest {
            strategy: Some("sharded".into()),
            stock: Some(200),
            buyers: Some(200),
            seed: Some(seed),
            ..Default::default()
        });
        let report = run(&cluster, &sharded, &format!("spread-{seed}"))
            .await
            .unwrap();
        assert_one_outcome_per_buyer(&sharded, &report.outcomes);
        let nodes: HashSet<String> = report
            .outcomes
            .iter()
            .filter_map(|o| o.node.clone())
            .collect();
        assert!(nodes.len() >= 2, "run spread-{seed}: {nodes:?}");
        seen_nodes.extend(nodes);
    }
    assert_eq!(seen_nodes.len(), 3, "4 runs x 4 buckets reach every master");

    let lua = config(RunRequest {
        strategy: Some("lua".into()),
        seed: Some(1),
        ..Default::default()
    });
    let report = run(&cluster, &lua, "one-slot").await.unwrap();
    let nodes: HashSet<Option<String>> = report.outcomes.iter().map(|o| o.node.clone()).collect();
    assert_eq!(nodes.len(), 1);
    assert!(nodes.iter().all(Option::is_some));
}

/// A long race (buyers arriving over 6 s) on the victim's slot; the victim is killed once
/// buyers are being served. The run must end within a few seconds, with what happened
/// reported, never a summary with an invented final stock.
async fn kill_mid_run(cluster: &mut TestCluster, name: &str, victim: usize, run_id: &str) {
    let cfg = config(RunRequest {
        strategy: Some(name.into()),
        stock: Some(5000),
        buyers: Some(3000),
        arrival_spread_ms: Some(6000),
        seed: Some(7),
        ..Default::default()
    });
    let (sink, mut seen) = tokio::sync::mpsc::unbounded_channel();
    let race = {
        let (backends, cfg, run_id) = (cluster.backends(), cfg.clone(), run_id.to_string());
        tokio::spawn(async move {
            let s = strategy(&cfg.strategy);
            engine::run(
                &backends,
                s,
                &cfg,
                &run_id,
                Some(sink),
                CancellationToken::new(),
            )
            .await
        })
    };
    let (ended, took) = cluster
        .kill_while_serving(victim, &mut seen, race, Duration::from_secs(10))
        .await;
    let mut outcomes = Vec::new();
    while let Ok(event) = seen.try_recv() {
        outcomes.extend(event.outcome());
    }
    println!(
        "{name}: master killed mid-run; the run ended {:.2} s later: {}",
        took.as_secs_f64(),
        match &ended {
            Ok(_) => "a summary (wrong)".to_string(),
            Err(e) => e.to_string(),
        }
    );
    match ended {
        Err(RunError::StoreLost { ran, buyers, .. }) => assert!(ran < buyers as usize),
        Err(RunError::ReadBack(_)) => {}
        other => panic!("{name}: expected the run to fail, got {other:?}"),
    }
    let failed = outcomes
        .iter()
        .filter(|o| matches!(o.result, OutcomeResult::Error | OutcomeResult::Unknown))
        .count();
    assert!(failed > 0, "{name}: no buyer reported the lost master");
    assert!(
        outcomes.len() < 3000,
        "{name}: the run stopped releasing buyers"
    );
}

/// Health on a cluster, a run refused while the victim is down, and the victim's return.
async fn down_then_back(cluster: &mut TestCluster, name: &str, victim: usize) {
    let health = health::check_once(&cluster.store).await;
    assert_eq!(health.state, RedisState::Down, "{name}: {health:?}");
    println!("{name}: health while a master is down: {:?}", health.reason);

    // Meanwhile a run on the victim's slot is refused, promptly and in words.
    let refused_id = run_id_on(cluster, victim, &format!("{name}-while-down")).await;
    let cfg = config(RunRequest {
        strategy: Some(name.into()),
        seed: Some(1),
        ..Default::default()
    });
    let asked = Instant::now();
    let refused = tokio::time::timeout(Duration::from_secs(10), run(cluster, &cfg, &refused_id))
        .await
        .expect("refused in time");
    let why = refused
        .expect_err("a run on a dead master's slot")
        .to_string();
    println!(
        "{name}: a run while the master is down was refused after {:.2} s: {why}",
        asked.elapsed().as_secs_f64()
    );
    assert!(why.contains("Redis Cluster is not whole"), "{why}");

    let restarted = Instant::now();
    tokio::task::block_in_place(|| cluster.cluster.restart(victim)).expect("the node comes back");
    println!(
        "{name}: restarted; cluster_state:ok on every node {:.1} s later",
        restarted.elapsed().as_secs_f64()
    );
    assert_eq!(
        health::check_once(&cluster.store).await.state,
        RedisState::Up
    );
    let next = run(cluster, &cfg, &format!("{refused_id}-after"))
        .await
        .unwrap();
    assert_one_outcome_per_buyer(&cfg, &next.outcomes);
    assert_eq!(next.summary.errors, 0, "{:?}", next.summary);
    assert_eq!(next.summary.units_sold, 10);
    assert_eq!(next.summary.final_stock, 0);
}

/// A run id (`prefix-N`) whose keys live on node `node`.
async fn run_id_on(cluster: &TestCluster, node: usize, prefix: &str) -> String {
    cluster
        .id_on(node, prefix, |id| RunKeys::new(id).stock_key().to_string())
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_master_killed_mid_run_ends_the_run_and_the_cluster_recovers() {
    let mut cluster = TestCluster::start();
    let victim = 1;
    let lua_run = run_id_on(&cluster, victim, "kill-lua").await;
    kill_mid_run(&mut cluster, "lua", victim, &lua_run).await;
    down_then_back(&mut cluster, "lua", victim).await;

    // Sharded: its buckets sit on several nodes; losing the master of one ends the run too.
    let sharded_run = "kill-sharded";
    let bucket_0 = RunKeys::with_layout(sharded_run, StockLayout::Buckets(4)).bucket_key(0);
    let victim = cluster.node_serving(&bucket_0).await;
    kill_mid_run(&mut cluster, "sharded", victim, sharded_run).await;
    down_then_back(&mut cluster, "sharded", victim).await;
}

/// The binary on a cluster, as a user types it; and `REDIS_CLUSTER`'s value (which may hold a
/// password) never shows in `--help`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_runs_on_a_cluster_and_hides_redis_cluster_in_help() {
    let cluster = TestCluster::start();
    let bin = env!("CARGO_BIN_EXE_oversold");
    let out = tokio::process::Command::new(bin)
        .args(["--redis-cluster", &cluster.cluster.spec()])
        .args([
            "run",
            "--strategy",
            "sharded",
            "--buyers",
            "100",
            "--stock",
            "40",
            "--json",
        ])
        .env_remove("REDIS_URL")
        .env_remove("REDIS_CLUSTER")
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["units_sold"], 40);

    let secret = "cluster-pw-77a1";
    let help = std::process::Command::new(bin)
        .arg("--help")
        .env_remove("REDIS_URL")
        .env("REDIS_CLUSTER", format!("redis://:{secret}@127.0.0.1:1"))
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&help.stdout);
    assert!(printed.contains("[env: REDIS_CLUSTER"), "{printed}");
    assert!(!printed.contains(secret), "{printed}");
}
