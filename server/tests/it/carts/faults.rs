//! Redis killed in the middle of a cart race: the run ends promptly with the failure
//! reported, no hang, and once Redis is back the next run keeps every invariant.

use std::time::{Duration, Instant};

use super::checks::{check_all_or_nothing, default_config, run};
use crate::common::TestRedis;
use oversold::engine::RunError;
use oversold::strategy::cart;
use oversold_protocol::{RunRequest, Scenario};
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_mid_saga_ends_the_run_promptly_and_the_next_run_behaves() {
    let mut redis = TestRedis::start();
    let backends = redis.backends();
    // 400 buyers arriving over two seconds: the kill lands while most have not arrived.
    let config = RunRequest {
        strategy: Some("saga".into()),
        scenario: Some(Scenario::Cart),
        buyers: Some(400),
        stock: Some(100),
        arrival_spread_ms: Some(2_000),
        seed: Some(3),
        ..Default::default()
    }
    .validate(0)
    .unwrap();
    let strategy = cart::find("saga").unwrap();
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
        .expect("the run ended within 15 s of the kill")
        .unwrap();
    match ended {
        Err(RunError::StoreLost { ran, buyers, .. }) => {
            assert!(
                ran < buyers as usize,
                "it stopped releasing buyers: {ran} of {buyers}"
            );
        }
        Err(RunError::ReadBack(_)) => {}
        Err(other) => panic!("unexpected failure: {other}"),
        Ok(report) => panic!("a run survived its Redis: {:?}", report.summary),
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    redis.restart();
    let config = default_config(Scenario::Cart, "saga", 4);
    let report = run(&redis.backends(), &config, "after").await;
    check_all_or_nothing(&config, &report);
}
