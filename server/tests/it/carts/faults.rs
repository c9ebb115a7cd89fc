//! Redis killed in the middle of every cart and warehouse race (a single Redis, or the
//! master serving the run on a cluster): the run ends promptly with the failure reported,
//! no hang, and once Redis is back the next run keeps every invariant.

use std::time::{Duration, Instant};

use super::checks::{check, check_all_or_nothing, default_config, run};
use crate::common::registry::{cart_all_or_nothing, cart_on_a_cluster};
use crate::common::{TestCluster, TestRedis};
use oversold::run::{RunError, RunReport};
use oversold::store::shelves::{ShelfKeys, ShelfKind, Tagging};
use oversold::strategy::cart;
use oversold_protocol::{Category, RunConfig, RunRequest};
use tokio_util::sync::CancellationToken;

/// Every cart and warehouse strategy, its Redis killed 400 ms into a two-second crowd.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_mid_run_ends_every_cart_strategy_promptly_and_the_next_run_behaves() {
    for strategy in cart::REGISTRY {
        killed_mid_run(strategy).await;
    }
}

async fn killed_mid_run(strategy: &'static cart::CartStrategy) {
    let name = strategy.about.name.to_string();
    let mut redis = TestRedis::start();
    let backends = redis.backends();
    // 400 buyers arriving over two seconds: the kill lands while most have not arrived.
    let config = RunRequest {
        strategy: Some(name.clone()),
        scenario: Some(strategy.about.scenario),
        buyers: Some(400),
        stock: Some(100),
        arrival_spread_ms: Some(2_000),
        seed: Some(3),
        ..Default::default()
    }
    .validate(0)
    .unwrap();
    let started = Instant::now();
    let race = tokio::spawn({
        let (backends, config) = (backends.clone(), config.clone());
        async move {
            oversold::cart::run(
                &backends,
                strategy,
                &config,
                "killed",
                None,
                CancellationToken::new(),
            )
            .await
        }
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    redis.kill();
    let ended = tokio::time::timeout(Duration::from_secs(15), race)
        .await
        .unwrap_or_else(|_| panic!("{name}: the run ended within 15 s of the kill"))
        .unwrap();
    match ended {
        Err(RunError::StoreLost { ran, buyers, .. }) => {
            assert!(
                ran < buyers as usize,
                "{name}: it stopped releasing buyers: {ran} of {buyers}"
            );
        }
        Err(RunError::ReadBack(_)) => {}
        Err(other) => panic!("{name}: unexpected failure: {other}"),
        Ok(report) => panic!("{name}: a run survived its Redis: {:?}", report.summary),
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{name}: {:?}",
        started.elapsed()
    );
    redis.restart();
    let config = default_config(strategy.about.scenario, &name, 4);
    let report = run(&redis.backends(), &config, "after").await;
    keeps_its_promise(strategy, &config, &report);
}

/// The next run after a fault keeps what the strategy promises when nothing fails: all or
/// nothing; or, for an unsafe one whose every step is atomic (`per_line`), no oversell.
fn keeps_its_promise(strategy: &cart::CartStrategy, config: &RunConfig, report: &RunReport) {
    if cart_all_or_nothing(strategy) {
        check_all_or_nothing(config, report);
    } else {
        check(
            config,
            report,
            strategy.about.category != Category::CheckThenWrite,
        );
    }
}

/// On a cluster, the master serving the run killed 300 ms into a six-second crowd, for every
/// cart and warehouse strategy that runs on a cluster (an untagged one, `cart_script_untagged`,
/// does not: its keys span slots, so it fails with CROSSSLOT before any buyer, see
/// `crossslot.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_master_killed_mid_run_on_a_cluster_ends_every_cart_strategy_and_the_next_run_behaves() {
    let mut cluster = TestCluster::start();
    for strategy in cart::REGISTRY {
        if cart_on_a_cluster(strategy) {
            master_killed_mid_run(&mut cluster, strategy).await;
        }
    }
}

async fn master_killed_mid_run(cluster: &mut TestCluster, strategy: &'static cart::CartStrategy) {
    let name: &str = &strategy.about.name;
    let victim = 1;
    // A run id whose shelves (one tag, one slot, whatever the kind) live on the victim.
    let shelf = |id: &str| {
        let keys = ShelfKeys::new(id, ShelfKind::Sku, &["phone"], Tagging::Shared);
        keys.counter(0).to_string()
    };
    let run_id = cluster.id_on(victim, &format!("kill-{name}"), shelf).await;
    let config = RunRequest {
        strategy: Some(name.into()),
        scenario: Some(strategy.about.scenario),
        buyers: Some(3000),
        stock: Some(2000),
        arrival_spread_ms: Some(6_000),
        seed: Some(5),
        ..Default::default()
    }
    .validate(0)
    .unwrap();
    let (sink, mut seen) = tokio::sync::mpsc::unbounded_channel();
    let race = tokio::spawn({
        let (backends, config) = (cluster.backends(), config.clone());
        async move {
            oversold::cart::run(
                &backends,
                strategy,
                &config,
                &run_id,
                Some(sink),
                CancellationToken::new(),
            )
            .await
        }
    });
    let (ended, took) = cluster
        .kill_while_serving(victim, &mut seen, race, Duration::from_secs(15))
        .await;
    assert!(
        ended.is_err(),
        "{name}: a summary from a lost master: {:?}",
        ended.map(|r| r.summary)
    );
    println!(
        "{name}: master killed mid-run; the run ended {:.2} s later",
        took.as_secs_f64()
    );
    assert!(took < Duration::from_secs(12), "{name}");
    tokio::task::block_in_place(|| cluster.cluster.restart(victim)).expect("the node comes back");
    let config = default_config(strategy.about.scenario, name, 6);
    let report = run(&cluster.backends(), &config, "after-kill").await;
    keeps_its_promise(strategy, &config, &report);
}
