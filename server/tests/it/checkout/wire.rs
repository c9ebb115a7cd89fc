//! The checkout over the WebSocket and on the command line.

use std::process::Command;
use std::time::Duration;

use oversold::backends::Backends;
use oversold_protocol::{CheckoutEnd, ErrorCode, LedgerKind, RunSummary, Scenario, ServerMessage};
use serde_json::{Value, json};

use crate::common::{Client, TestRedis, TestServer, pg_url};

/// Everything one checkout run sent, up to its terminal frame.
#[derive(Default)]
struct Seen {
    reconciliations: Vec<oversold_protocol::Reconciliation>,
    reconciled: Vec<oversold_protocol::ReconcileReport>,
    outcomes: Vec<oversold_protocol::BuyerOutcome>,
    summary: Option<RunSummary>,
}

/// Read one run's frames; send `reconcile` after the first live numbers when asked to.
async fn collect(client: &mut Client, reconcile: bool) -> Seen {
    let mut seen = Seen::default();
    let run_id = match client.next_not_status().await {
        ServerMessage::RunStarted { run_id, config } => {
            assert_eq!(config.race.scenario(), Scenario::Checkout);
            assert!(config.race.checkout().is_some());
            run_id
        }
        other => panic!("expected run_started, got {other:?}"),
    };
    let mut asked = !reconcile;
    loop {
        match client.next_not_status().await {
            ServerMessage::Reconciliation {
                run_id: id,
                reconciliation,
            } => {
                assert_eq!(id, run_id);
                seen.reconciliations.push(reconciliation);
                if !asked {
                    client.send_json(json!({"type": "reconcile"})).await;
                    asked = true;
                }
            }
            ServerMessage::Reconciled { run_id: id, report } => {
                assert_eq!(id, run_id);
                seen.reconciled.push(report);
            }
            ServerMessage::Outcomes {
                run_id: id,
                outcomes,
            } => {
                assert_eq!(id, run_id);
                seen.outcomes.extend(outcomes);
            }
            ServerMessage::RunFinished {
                run_id: id,
                summary,
            } => {
                assert_eq!(id, run_id);
                seen.summary = Some(summary);
                return seen;
            }
            other => panic!("unexpected frame in a checkout: {other:?}"),
        }
    }
}

/// `None` on a machine without PostgreSQL.
async fn server_with_postgres(redis: &TestRedis) -> Option<TestServer> {
    let backends: Backends = redis.backends_with_postgres().await?;
    Some(TestServer::start_with(backends, 4, "/nonexistent-oversold-dist".into()).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkout_over_the_socket_streams_stories_live_numbers_and_answers_reconcile() {
    let redis = TestRedis::start();
    let Some(server) = server_with_postgres(&redis).await else {
        return;
    };
    let mut client = server.client().await;
    let hello = client.hello().await;
    assert_eq!(hello.protocol_version, 3);
    let names: Vec<&str> = hello
        .checkout_strategies
        .iter()
        .map(|s| &*s.about.name)
        .collect();
    assert_eq!(
        names,
        [
            "naive_checkout",
            "atomic_no_holds",
            "holds",
            "idempotent_holds",
            "customer_limit",
            "naive_customer_limit",
            "holds_notify"
        ]
    );
    assert!(
        hello
            .checkout_strategies
            .iter()
            .all(|s| s.about.scenario == Scenario::Checkout)
    );
    assert!(
        hello
            .strategies
            .iter()
            .all(|s| s.about.scenario == Scenario::Race)
    );
    assert_eq!(hello.ledger.kind, LedgerKind::Postgres);
    client
        .send_json(json!({"type": "start_run", "config": {
            "strategy": "holds", "scenario": "checkout", "stock": 30, "buyers": 40,
            "time_scale": 1000, "hold_ttl_ms": 600000, "pay_ms": 300000,
            "crash_fraction": 0.2, "retry_fraction": 0.25, "seed": 4
        }}))
        .await;
    let seen = collect(&mut client, true).await;
    let s = seen.summary.unwrap();
    let c = s.checkout.as_ref().unwrap();
    // Every buyer's whole story, on its outcome.
    assert_eq!(seen.outcomes.len(), 40);
    for o in &seen.outcomes {
        let story = o.checkout.as_ref().expect("a story");
        assert!(!story.steps.is_empty());
        assert!(story.request_id.starts_with("rq"));
    }
    assert!(
        seen.outcomes
            .iter()
            .any(|o| o.checkout.as_ref().unwrap().end == CheckoutEnd::Crashed)
    );
    // Live numbers that add up, the answer to reconcile (nothing to fix with holds), and
    // a last frame that agrees with the summary.
    assert!(seen.reconciliations.len() >= 2);
    for r in &seen.reconciliations {
        assert_eq!(
            i64::from(r.stock),
            r.available + r.held + r.sold as i64 + r.settling + r.leaked
        );
    }
    assert_eq!(seen.reconciled.len(), 1);
    assert_eq!(seen.reconciled[0].fixed, 0);
    let last = seen.reconciliations.last().unwrap();
    assert_eq!(
        (last.available, last.sold, last.held),
        (s.final_stock, c.confirmed_units, 0)
    );
    assert_eq!(c.ledger, LedgerKind::Postgres);
    assert_eq!(
        i64::from(s.stock),
        s.final_stock + c.confirmed_units as i64 + c.held_units as i64 + c.leaked_units
    );
    assert_eq!(c.leaked_units, 0);
    // The socket is free for the next run, and reconcile outside a checkout is refused.
    client.send_json(json!({"type": "reconcile"})).await;
    assert_eq!(client.expect_error().await.code, ErrorCode::NoRunInProgress);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkout_compare_races_every_checkout_strategy_with_one_crowd() {
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 4).await;
    let mut client = server.client().await;
    let hello = client.hello().await;
    assert_eq!(hello.ledger.kind, LedgerKind::Redis);
    client
        .send_json(json!({"type": "start_compare", "config": {
            "scenario": "checkout", "stock": 5, "buyers": 20, "time_scale": 10000, "seed": 8
        }}))
        .await;
    let strategies = match client.next_not_status().await {
        ServerMessage::CompareStarted {
            strategies, config, ..
        } => {
            assert_eq!(config.scenario(), Scenario::Checkout);
            strategies
        }
        other => panic!("expected compare_started, got {other:?}"),
    };
    // Every registered checkout strategy, in the registry's order.
    let registered: Vec<&str> = oversold::strategy::checkout::REGISTRY
        .iter()
        .map(|s| s.name())
        .collect();
    assert_eq!(strategies, registered);
    for name in &strategies {
        let seen = collect(&mut client, false).await;
        let s = seen.summary.unwrap();
        assert_eq!(&s.strategy, name);
        assert_eq!(s.checkout.as_ref().unwrap().ledger, LedgerKind::Redis);
    }
    match client.next_not_status().await {
        ServerMessage::CompareFinished { summaries, .. } => {
            assert_eq!(summaries.len(), registered.len());
            assert!(summaries.iter().all(|s| s.checkout.is_some()));
        }
        other => panic!("expected compare_finished, got {other:?}"),
    }
}

#[tokio::test]
async fn checkout_requests_the_socket_refuses() {
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 4).await;
    let mut client = server.client().await;
    // This server did not start its Redis, and says so before anyone asks for an outage.
    assert!(!client.hello().await.outage_allowed);
    // reconcile with no run in flight.
    client.send_json(json!({"type": "reconcile"})).await;
    assert_eq!(client.expect_error().await.code, ErrorCode::NoRunInProgress);
    // An outage on a Redis this server did not start.
    client
        .send_json(json!({"type": "start_run", "config": {
            "strategy": "holds", "scenario": "checkout", "outage_ms": 1000
        }}))
        .await;
    let e = client.expect_error().await;
    assert_eq!(e.code, ErrorCode::OutageNotAllowed, "{e:?}");
    // A checkout strategy in a race, a race strategy in a checkout: each error says why.
    client
        .send_json(json!({"type": "start_run", "config": {"strategy": "holds"}}))
        .await;
    let e = client.expect_error().await;
    assert_eq!(e.code, ErrorCode::UnknownStrategy);
    assert!(e.message.contains("checkout strategy"), "{}", e.message);
    client
        .send_json(
            json!({"type": "start_run", "config": {"strategy": "lua", "scenario": "checkout"}}),
        )
        .await;
    let e = client.expect_error().await;
    assert_eq!(e.code, ErrorCode::UnknownStrategy);
    assert!(e.message.contains("race strategy"), "{}", e.message);
    // Fractions are typed and ranged.
    client
        .send_json(json!({"type": "start_run", "config": {
            "strategy": "holds", "scenario": "checkout", "crash_fraction": 1.5
        }}))
        .await;
    assert_eq!(client.expect_error().await.code, ErrorCode::OutOfRange);
    client
        .send_json(json!({"type": "start_run", "config": {
            "strategy": "holds", "scenario": "checkout", "crash_fraction": "0.5"
        }}))
        .await;
    assert_eq!(client.expect_error().await.code, ErrorCode::BadMessage);
    // Step-through steps the race.
    client
        .send_json(json!({"type": "step_open", "config": {
            "strategy": "holds", "scenario": "checkout"
        }}))
        .await;
    assert_eq!(client.expect_error().await.code, ErrorCode::BadMessage);
    // Nothing touched Redis.
    assert!(
        crate::common::run_keys(&mut redis.raw().await)
            .await
            .is_empty()
    );
}

pub(super) fn oversold(redis: &TestRedis, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_oversold"))
        .args(args)
        .env("REDIS_URL", redis.server.url())
        .env("DATABASE_URL", pg_url())
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[tokio::test]
async fn checkout_on_the_command_line_prints_the_ledger_in_json() {
    // The binary settles in PostgreSQL, which this test asserts: without one, it is skipped.
    if crate::common::postgres().await.is_none() {
        return;
    }
    let redis = TestRedis::start();
    let run = |strategy: &str| {
        oversold(
            &redis,
            &[
                "run",
                "--scenario",
                "checkout",
                "--strategy",
                strategy,
                "--time-scale",
                "10000",
                "--abandon-fraction",
                "0.2",
                "--seed",
                "21",
                "--json",
            ],
        )
    };
    for strategy in ["holds", "atomic_no_holds"] {
        let s = run(strategy);
        for field in [
            "confirmed_units",
            "held_units",
            "released_units",
            "expired_units",
            "leaked_units",
            "duplicate_reservations",
            "limit_violations",
            "stock",
            "final_stock",
            "oversold_units",
        ] {
            assert!(s[field].is_number(), "{strategy}: no {field} in {s}");
        }
        assert_eq!(s["ledger"], "postgres");
        let n = |f: &str| s[f].as_i64().unwrap();
        assert_eq!(
            n("stock"),
            n("final_stock") + n("confirmed_units") + n("held_units") + n("leaked_units"),
            "{s}"
        );
    }
    let all = oversold(
        &redis,
        &[
            "compare",
            "--scenario",
            "checkout",
            "--time-scale",
            "10000",
            "--buyers",
            "20",
            "--json",
        ],
    );
    assert_eq!(
        all.as_array().unwrap().len(),
        oversold::strategy::checkout::REGISTRY.len()
    );
    tokio::time::sleep(Duration::from_millis(1)).await;
}
