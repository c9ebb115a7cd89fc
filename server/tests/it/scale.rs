//! Issue 20's flash sale at test size: 200,000 buyers for 10,000 units (a million runs in
//! `scripts/bench-scale.sh`, which prints its time and memory; nothing here is timed).
//!
//! `lua`'s run sells exactly what its serial replay says, and the summary the CLI computes
//! without keeping a single outcome (`Keep::Summary`) is that run's summary; `naive`
//! oversells at that size. A crowd past the in-flight cap with an arrival spread keeps every
//! invariant too, and a server allows more than 10,000 buyers only when started to.

use crate::common::checks::{assert_one_outcome_per_buyer, assert_serializable, strategy};
use crate::common::{Client, RunSeen, TestRedis, TestServer, calls, reply, run_keys};
use oversold::bench::{self, BenchConfig};
use oversold::engine;
use oversold::headless::{self, CLI_LIMITS};
use oversold::state::AppState;
use oversold::store::{scripts, stock};
use oversold_protocol::at_scale::MAX_AUDIT_PAGE;
use oversold_protocol::limits::MAX_BUYERS;
use oversold_protocol::{
    ErrorCode, OutcomeResult, RunConfig, RunRequest, RunSummary, ServerMessage,
};
use serde_json::json;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// A flash sale: `buyers` people, 10,000 units, one each, all at once, on 8 app servers.
const BUYERS: u32 = 200_000;
const STOCK: u32 = 10_000;

fn sale(name: &str, buyers: u32, spread_ms: u32) -> RunRequest {
    RunRequest {
        strategy: Some(name.into()),
        stock: Some(STOCK),
        buyers: Some(buyers),
        arrival_spread_ms: Some(spread_ms),
        seed: Some(20),
        ..Default::default()
    }
}

fn config(request: &RunRequest) -> RunConfig {
    request
        .validate_within(&CLI_LIMITS, 0)
        .expect("in the CLI's range")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_200k_buyer_lua_sale_is_its_serial_replay_and_the_cli_tally_agrees() {
    let redis = TestRedis::start();
    let backends = redis.backends();
    let lua = sale("lua", BUYERS, 0);
    let kept = config(&lua);
    let report = engine::run(
        &backends,
        strategy("lua"),
        &kept,
        "scale-lua",
        None,
        CancellationToken::new(),
    )
    .await
    .expect("the run finishes");
    let s = &report.summary;
    assert_one_outcome_per_buyer(&kept, &report.outcomes);
    assert_serializable(&kept, &report.outcomes, s.final_stock);
    assert_eq!((s.units_sold, s.final_stock), (u64::from(STOCK), 0));
    assert_eq!(
        (s.orders_accepted, s.rejected, s.errors, s.unknown),
        (STOCK, BUYERS - STOCK, 0, 0)
    );
    assert_eq!(s.round_trips, report.redis_requests);
    assert!(!s.cancelled);

    // The CLI's path keeps no outcome: its streaming tally must say what the replayed run
    // said (for `lua` with one unit each, every count is decided by the stock alone).
    let (_, streamed) = headless::run_once(&backends, &lua).await.expect("CLI run");
    assert_eq!(
        (
            streamed.buyers,
            streamed.units_sold,
            streamed.final_stock,
            streamed.orders_accepted,
            streamed.rejected,
            streamed.errors,
            streamed.unknown,
            streamed.oversold_units,
            streamed.lost_updates,
            streamed.false_sold_out,
            streamed.round_trips,
            streamed.cancelled,
        ),
        (
            s.buyers,
            s.units_sold,
            s.final_stock,
            s.orders_accepted,
            s.rejected,
            s.errors,
            s.unknown,
            s.oversold_units,
            s.lost_updates,
            s.false_sold_out,
            s.round_trips,
            s.cancelled,
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_200k_buyer_naive_sale_oversells() {
    let redis = TestRedis::start();
    let backends = redis.backends();
    let naive = config(&sale("naive", BUYERS, 0));
    let report = engine::run(
        &backends,
        strategy("naive"),
        &naive,
        "scale-naive",
        None,
        CancellationToken::new(),
    )
    .await
    .expect("the run finishes");
    let s = &report.summary;
    assert_one_outcome_per_buyer(&naive, &report.outcomes);
    assert!(s.oversold_units > 0, "{s:?}");
    assert!(s.final_stock < 0, "the counter sinks below zero: {s:?}");
    // DECRBY loses nothing: the counter matches the orders (those in doubt included).
    assert_eq!(s.lost_updates, 0, "{s:?}");
    assert_eq!(s.orders_accepted + s.rejected, BUYERS);
}

/// Past the in-flight cap with arrivals spread out: buyers queue in arrival order for a
/// slot, and the run is still one serial order, one outcome per buyer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crowd_past_the_in_flight_cap_with_a_spread_keeps_every_invariant() {
    let redis = TestRedis::start();
    let buyers = MAX_BUYERS + 5_000;
    assert!(engine::in_flight(buyers, 8) < buyers as usize);
    let spread = config(&RunRequest {
        max_qty: Some(3),
        ..sale("lua", buyers, 300)
    });
    let report = engine::run(
        &redis.backends(),
        strategy("lua"),
        &spread,
        "scale-spread",
        None,
        CancellationToken::new(),
    )
    .await
    .expect("the run finishes");
    assert_one_outcome_per_buyer(&spread, &report.outcomes);
    assert_serializable(&spread, &report.outcomes, report.summary.final_stock);
    assert_eq!(report.summary.oversold_units, 0);
}

/// A server allows more than 10,000 buyers per race only when started with
/// `--max-buyers` (and says so in `hello`); the default keeps the protocol's cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_takes_a_larger_crowd_only_when_started_to() {
    let redis = TestRedis::start();
    let crowd = MAX_BUYERS + 5_000;
    let start = json!({"type":"start_run","config":{
        "strategy":"lua","buyers":crowd,"stock":100,"seed":1}});

    let default = TestServer::start(redis.backends().redis, 2).await;
    let mut client = default.client().await;
    assert_eq!(client.hello().await.limits.buyers.max, MAX_BUYERS);
    client.send_json(start.clone()).await;
    assert_eq!(client.expect_error().await.code, ErrorCode::OutOfRange);

    let state = AppState::new(
        redis.backends(),
        watch::channel(oversold::health::Health::up()).1,
        "/nonexistent-oversold-dist".into(),
        2,
    )
    .with_max_buyers(1_000_000);
    let wide = TestServer::serve(state).await;
    let mut client = wide.client().await;
    assert_eq!(client.hello().await.limits.buyers.max, 1_000_000);
    client.send_json(start).await;
    let run = client.collect_run().await;
    let summary = run.summary.clone().expect("the run finishes");
    assert_eq!((summary.units_sold, summary.final_stock), (100, 0));
    assert_eq!(summary.rejected, crowd - 100);
    a_race_at_scale_streams_totals_and_keeps_its_audit(&mut client, &run, &summary).await;
    // A checkout keeps the protocol's cap on the same server.
    client
        .send_json(json!({"type":"start_run","config":{
            "strategy":"holds","scenario":"checkout","buyers":crowd}}))
        .await;
    assert_eq!(client.expect_error().await.code, ErrorCode::OutOfRange);
}

/// A race past `LIVE_OUTCOMES_MAX` sends `run_progress` instead of outcomes: totals that only
/// grow and end on the summary's. Its audit is on the server, read a page at a time: every
/// buyer exactly once, the units sold before each page right. Bad pages are refused, and the
/// socket goes on answering.
async fn a_race_at_scale_streams_totals_and_keeps_its_audit(
    client: &mut Client,
    run: &RunSeen,
    summary: &RunSummary,
) {
    let buyers = run.config.race.buyers;
    assert!(
        run.outcomes.is_empty(),
        "a race at scale streams totals, not outcomes"
    );
    let last = run.progress.last().expect("progress frames");
    assert_eq!(last.buyers_done, buyers);
    assert_eq!(
        (
            last.units_sold,
            last.orders_accepted,
            last.rejected,
            last.errors
        ),
        (
            summary.units_sold,
            summary.orders_accepted,
            summary.rejected,
            summary.errors
        )
    );
    assert!(
        run.progress
            .windows(2)
            .all(|w| w[0].buyers_done <= w[1].buyers_done)
    );

    let page = |from: u32, count: u32| json!({"type":"audit_page","run_id":run.run_id,"from":from,"count":count});
    let mut seen = vec![false; buyers as usize + 1];
    let (mut from, mut units) = (0u32, 0u64);
    while from < buyers {
        client.send_json(page(from, MAX_AUDIT_PAGE)).await;
        let rows = match client.next_not_status().await {
            ServerMessage::AuditRows(rows) => rows,
            other => panic!("expected audit_rows, got {other:?}"),
        };
        assert_eq!((rows.from, rows.total), (from, buyers));
        assert_eq!(
            rows.units_sold_before, units,
            "units sold before row {from}"
        );
        for o in &rows.outcomes {
            assert!(
                !std::mem::replace(&mut seen[o.buyer as usize], true),
                "buyer {} twice",
                o.buyer
            );
            if o.result == OutcomeResult::Reserved {
                units += u64::from(o.qty);
            }
        }
        from += rows.outcomes.len() as u32;
        // Within the socket's budget of ten frames a second.
        tokio::time::sleep(std::time::Duration::from_millis(110)).await;
    }
    assert!(seen[1..].iter().all(|&s| s), "every buyer is in the audit");
    assert_eq!(units, summary.units_sold);

    for (bad, code) in [
        (page(0, 0), ErrorCode::OutOfRange),
        (page(0, MAX_AUDIT_PAGE + 1), ErrorCode::OutOfRange),
        (page(buyers + 1, 1), ErrorCode::OutOfRange),
        (
            json!({"type":"audit_page","run_id":"r-000000000000","from":0,"count":5}),
            ErrorCode::NoRunInProgress,
        ),
        (
            json!({"type":"audit_page","run_id":run.run_id,"from":-1,"count":5}),
            ErrorCode::BadMessage,
        ),
    ] {
        client.send_json(bad).await;
        assert_eq!(client.expect_error().await.code, code);
    }
    client.send_json(page(buyers - 1, 5)).await;
    match client.next_not_status().await {
        ServerMessage::AuditRows(rows) => assert_eq!(rows.outcomes.len(), 1),
        other => panic!("the socket still answers pages, got {other:?}"),
    }
}

/// `bench --pipeline`: each worker's orders go 16 to a request, and Redis still runs every
/// order's script exactly once (its own count of `EVALSHA` calls, not ours). 3,001 orders
/// over 7 workers leave batches shorter than 16 at the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pipelined_bench_runs_every_order_once_in_a_sixteenth_of_the_requests() {
    let redis = TestRedis::start();
    let mut raw = redis.raw().await;
    let config = BenchConfig {
        requests: 3_001,
        concurrency: 7,
        connections: 3,
        pipeline: 16,
    };
    let report = bench::bench(&redis.backends(), strategy("lua"), &config, false)
        .await
        .expect("the bench runs");
    assert_eq!(
        (report.requests, report.errors, report.sold_out),
        (3_001, 0, 0)
    );
    assert_eq!(calls(&mut raw, "evalsha").await, 3_001);
    // At least ceil(3001 / 16) requests, and at most one short batch per worker more.
    assert!(
        (188..=188 + 7).contains(&report.redis_requests),
        "{} requests for 3,001 orders 16 at a time",
        report.redis_requests
    );
    assert_eq!(report.round_trips_per_order, 1.0);
    assert!(
        run_keys(&mut raw).await.is_empty(),
        "the bench cleared its stock"
    );
}

/// A strategy that reads, then writes, cannot send its write before its read returns: the
/// bench refuses to pipeline it, says why, and touches nothing in Redis.
#[tokio::test]
async fn a_bench_refuses_to_pipeline_a_strategy_whose_order_is_two_commands() {
    let redis = TestRedis::start();
    let mut raw = redis.raw().await;
    redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .exec_async(&mut raw)
        .await
        .unwrap();
    let config = BenchConfig {
        requests: 100,
        concurrency: 4,
        connections: 2,
        pipeline: 16,
    };
    let refused = bench::bench(&redis.backends(), strategy("naive"), &config, false)
        .await
        .expect_err("naive is refused");
    assert!(
        refused.to_string().contains("naive cannot be pipelined"),
        "{refused}"
    );
    assert_eq!(
        calls(&mut raw, "set").await + calls(&mut raw, "get").await,
        0
    );
    assert!(run_keys(&mut raw).await.is_empty());
}

/// A batch that finds Redis's script cache flushed: every call answered `NOSCRIPT` (so none
/// ran) is sent again on its own, and the counter ends exactly where one call per order
/// leaves it.
#[tokio::test]
async fn a_batch_after_a_script_flush_sends_each_refused_call_again_once() {
    let redis = TestRedis::start();
    let mut conn = redis.conn().await;
    let mut raw = redis.raw().await;
    let key = "oversold:batch-test:stock";
    redis::cmd("SET")
        .arg(key)
        .arg(5)
        .exec_async(&mut raw)
        .await
        .unwrap();
    scripts::flush_cache(&mut conn).await.unwrap();
    let called = stock::reserve_batch(&mut conn, key, 1, 8)
        .await
        .expect("the pipeline is answered");
    let replies: Vec<_> = called.reply.into_iter().map(Result::unwrap).collect();
    let reserved = replies.iter().filter(|r| r.reserved).count();
    assert_eq!(reserved, 5);
    assert_eq!(replies[7], reply(false, 0, 0));
    let left: i64 = redis::cmd("GET")
        .arg(key)
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(left, 0);
    // The pipeline; then the first refused call as EVALSHA and EVAL (EVAL caches the script
    // again), and the other seven as one EVALSHA each.
    assert_eq!(called.round_trips, 1 + 2 + 7);
}
