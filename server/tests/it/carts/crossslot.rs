//! The CROSSSLOT lesson, and knobs refused before Redis is touched.

use super::checks::{check_all_or_nothing, default_config, run};
use crate::common::{TestCluster, TestRedis, TestServer};
use oversold::run::RunError;
use oversold::strategy::cart;
use oversold_protocol::{ErrorCode, RunRequest, Scenario, ServerMessage};
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_refuses_the_untagged_cart_with_crossslot_and_the_tagged_one_runs() {
    let cluster = TestCluster::start();
    let b = cluster.backends();
    let config = RunRequest {
        skus: Some(3),
        max_lines: Some(3),
        ..RunRequest {
            strategy: Some("cart_script_untagged".into()),
            scenario: Some(Scenario::Cart),
            seed: Some(11),
            ..Default::default()
        }
    }
    .validate(0)
    .unwrap();
    let strategy = cart::find("cart_script_untagged").unwrap();
    let (sink, mut sunk) = tokio::sync::mpsc::unbounded_channel();
    let failed = oversold::cart::run(
        &b,
        strategy,
        &config,
        "xslot",
        Some(sink),
        CancellationToken::new(),
    )
    .await;
    // The refusals are counted by their cause; each buyer's line keeps Redis's own word.
    let mut refused = 0;
    while let Some(o) = sunk.try_recv().ok().and_then(oversold::run::Event::outcome) {
        if o.error
            .as_deref()
            .is_some_and(|e| e.starts_with("CROSSSLOT "))
        {
            refused += 1;
        }
    }
    match failed {
        Err(RunError::Refused(why)) => {
            assert!(refused > 0, "no buyer was refused with CROSSSLOT");
            assert!(
                why.starts_with(&format!(
                    "the Redis Cluster refused {refused} cart(s) with CROSSSLOT: "
                )),
                "{why}"
            );
            assert!(why.contains("tag"), "the fix is named: {why}");
        }
        Err(other) => panic!("expected a CROSSSLOT refusal, got {other}"),
        Ok(r) => panic!("a cluster ran an untagged cart script: {:?}", r.summary),
    }
    // The same carts with the shared tag run, all or nothing, and nothing is left behind.
    let config = default_config(Scenario::Cart, "cart_script", 11);
    let report = run(&b, &config, "tagged").await;
    check_all_or_nothing(&config, &report);
    assert!(
        cluster.run_keys().await.is_empty(),
        "{:?}",
        cluster.run_keys().await
    );
}

#[tokio::test]
async fn on_a_single_redis_the_untagged_cart_runs_and_says_a_cluster_would_refuse_it() {
    let redis = TestRedis::start();
    let config = default_config(Scenario::Cart, "cart_script_untagged", 3);
    let report = run(&redis.backends(), &config, "untagged").await;
    check_all_or_nothing(&config, &report);
    let why = report
        .summary
        .cart
        .as_deref()
        .unwrap()
        .would_fail_on_cluster
        .clone();
    assert!(why.is_some_and(|w| w.contains("CROSSSLOT")));
    let tagged = run(
        &redis.backends(),
        &default_config(Scenario::Cart, "cart_script", 3),
        "t",
    )
    .await;
    assert!(
        tagged
            .summary
            .cart
            .as_deref()
            .unwrap()
            .would_fail_on_cluster
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_socket_reports_crossslot_as_run_failed() {
    let cluster = TestCluster::start();
    let server = TestServer::start(cluster.store.clone(), 4).await;
    let mut client = server.client().await;
    let hello = client.hello().await;
    let names: Vec<&str> = hello
        .cart_strategies
        .iter()
        .map(|s| s.about.name.as_ref())
        .collect();
    assert_eq!(
        names,
        [
            "naive_cart",
            "per_line",
            "half_cart",
            "cart_script",
            "cart_script_untagged",
            "saga",
            "naive_warehouse",
            "warehouse_script"
        ]
    );
    client
        .send_json(json!({"type": "start_run", "config": {
            "strategy": "cart_script_untagged", "scenario": "cart", "seed": 5}}))
        .await;
    let run_id = match client.next_not_status().await {
        ServerMessage::RunStarted { run_id, config } => {
            assert_eq!(config.race.cart().map(|c| c.skus), Some(3));
            run_id
        }
        other => panic!("{other:?}"),
    };
    loop {
        match client.next_within(30).await {
            ServerMessage::Outcomes { .. } | ServerMessage::RedisStatus { .. } => {}
            ServerMessage::Error(e) => {
                assert_eq!(e.code, ErrorCode::RunFailed, "{e:?}");
                assert_eq!(e.run_id.as_deref(), Some(run_id.as_str()));
                assert!(e.message.contains("CROSSSLOT"), "{}", e.message);
                break;
            }
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn bad_knobs_are_refused_before_redis_is_touched() {
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 4).await;
    let mut client = server.client().await;
    client.hello().await;
    let mut raw = redis.raw().await;
    let before = crate::common::calls(&mut raw, "set").await;
    let refusals = [
        (
            json!({"strategy": "saga", "scenario": "cart", "skus": 9}),
            ErrorCode::OutOfRange,
            "skus",
        ),
        (
            json!({"strategy": "saga", "scenario": "cart", "skus": 2, "max_lines": 3}),
            ErrorCode::OutOfRange,
            "max_lines",
        ),
        (
            json!({"strategy": "saga", "scenario": "cart", "warehouses": 3}),
            ErrorCode::BadMessage,
            "warehouses",
        ),
        (
            json!({"strategy": "warehouse_script", "scenario": "warehouses", "warehouses": 1}),
            ErrorCode::OutOfRange,
            "warehouses",
        ),
        (
            json!({"strategy": "warehouse_script", "scenario": "warehouses", "split": 1}),
            ErrorCode::BadMessage,
            "split",
        ),
        (
            json!({"strategy": "lua", "skus": 3}),
            ErrorCode::BadMessage,
            "skus",
        ),
        (
            json!({"strategy": "saga", "scenario": "warehouses"}),
            ErrorCode::UnknownStrategy,
            "warehouse_script",
        ),
        (
            json!({"strategy": "saga"}),
            ErrorCode::UnknownStrategy,
            "saga",
        ),
    ];
    for (config, code, mentions) in refusals {
        client
            .send_json(json!({"type": "start_run", "config": config}))
            .await;
        let e = client.expect_error().await;
        assert_eq!(e.code, code, "{config}: {e:?}");
        assert!(e.message.contains(mentions), "{config}: {}", e.message);
        assert!(e.run_id.is_none());
    }
    assert_eq!(
        crate::common::calls(&mut raw, "set").await,
        before,
        "Redis was touched"
    );
    assert!(crate::common::run_keys(&mut raw).await.is_empty());
}
