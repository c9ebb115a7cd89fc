//! The reaper under load: ten thousand holds expiring at once come back in batches of at
//! most 100, no call slow enough for Redis's slow log (10 ms) or its latency monitor, while
//! buyers keep reserving on the same Redis. The buyers' p99 is printed before and during.
//!
//! Redis times a command by the wall clock, so on a busy 2-core machine a process that is
//! merely descheduled can log a "slow" command. A slow entry therefore gets one more try on
//! a fresh Redis (up to three in all); a script that is really slow is slow every time.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use tokio::sync::{Mutex, watch};
use tokio_util::sync::CancellationToken;

use crate::common::TestRedis;
use oversold::checkout::clock::ShopClock;
use oversold::checkout::reaper::{BATCH, Reaper};
use oversold::store::{CheckoutKeys, RunKeys, holds, stock};
use oversold::summary::latency;

const HOLDS: u32 = 10_000;
/// Redis logs (and the latency monitor reports) any command slower than this.
const SLOW_US: u64 = 10_000;

async fn config_set(c: &mut redis::aio::MultiplexedConnection, name: &str, value: u64) {
    redis::cmd("CONFIG")
        .arg("SET")
        .arg(name)
        .arg(value)
        .query_async::<()>(c)
        .await
        .unwrap();
}

/// Buyers reserving one unit at a time on `conns`, recording each latency (µs) in
/// `before` or `during` depending on `reaping`.
async fn buyers(
    conns: Vec<oversold::store::RedisConn>,
    keys: RunKeys,
    reaping: Arc<AtomicBool>,
    stop: CancellationToken,
) -> (Vec<u64>, Vec<u64>) {
    let seen = Arc::new(Mutex::new((Vec::new(), Vec::new())));
    join_all((0..8).map(|i| {
        let (mut conn, key) = (conns[i % conns.len()].clone(), keys.stock_key().to_string());
        let (seen, reaping, stop) = (seen.clone(), reaping.clone(), stop.clone());
        async move {
            while !stop.is_cancelled() {
                let during = reaping.load(Ordering::Relaxed);
                let t = Instant::now();
                stock::reserve(&mut conn, &key, 1).await.unwrap();
                let us = u64::try_from(t.elapsed().as_micros()).unwrap();
                let mut seen = seen.lock().await;
                if during {
                    seen.1.push(us)
                } else {
                    seen.0.push(us)
                }
            }
        }
    }))
    .await;
    Arc::try_unwrap(seen).unwrap().into_inner()
}

/// One slow log entry as `<µs> µs <command> <first argument>`.
fn slow_entry(entry: &redis::Value) -> String {
    let redis::Value::Array(fields) = entry else {
        return format!("{entry:?}");
    };
    let us: i64 = fields
        .get(2)
        .and_then(|v| redis::from_redis_value_ref(v).ok())
        .unwrap_or(-1);
    let args: Vec<String> = fields
        .get(3)
        .and_then(|v| redis::from_redis_value_ref(v).ok())
        .unwrap_or_default();
    format!(
        "{us} µs {}",
        args.iter().take(2).cloned().collect::<Vec<_>>().join(" ")
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkout_reaper_returns_ten_thousand_expired_holds_in_batches_without_a_slow_script() {
    let _turn = super::heavy().await;
    let mut slow = String::new();
    for attempt in 1..=3 {
        match reap_under_load().await {
            Ok(()) => return,
            Err(e) => {
                println!("attempt {attempt}: {e}");
                slow = e;
            }
        }
    }
    panic!("a slow command on every attempt: {slow}");
}

/// One measurement on a fresh Redis. `Err` when Redis logged a slow command (every other
/// failure panics at once).
async fn reap_under_load() -> Result<(), String> {
    let redis = TestRedis::start();
    let mut raw = redis.raw().await;
    config_set(&mut raw, "slowlog-log-slower-than", SLOW_US).await;
    config_set(&mut raw, "latency-monitor-threshold", SLOW_US / 1_000).await;
    redis::cmd("SLOWLOG")
        .arg("RESET")
        .query_async::<()>(&mut raw)
        .await
        .unwrap();
    redis::cmd("LATENCY")
        .arg("RESET")
        .query_async::<()>(&mut raw)
        .await
        .unwrap();

    // Ten thousand holds of one unit, expired (due at shop ms 0 to 999), 500 customers.
    let mut admin = redis.conn().await;
    let keys = CheckoutKeys::new("reaper-load");
    stock::init(&mut admin, keys.run(), 0).await.unwrap();
    let planted: Vec<_> = (0..HOLDS)
        .map(|i| {
            (
                keys.hold(&format!("h{i}")),
                1,
                i % 500,
                u64::from(i % 1_000),
            )
        })
        .collect();
    holds::plant_holds(&mut admin, &keys, &planted)
        .await
        .unwrap();
    let before = holds::counters(&mut admin, &keys).await.unwrap();
    assert_eq!(
        (before.holds, before.held),
        (u64::from(HOLDS), i64::from(HOLDS))
    );

    // Buyers on another counter of the same Redis.
    let shelf = RunKeys::new("reaper-load-buyers");
    stock::init(&mut admin, &shelf, 100_000_000).await.unwrap();
    let conns = join_all((0..4).map(|_| redis.store.connect()))
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let (reaping, stop) = (Arc::new(AtomicBool::new(false)), CancellationToken::new());
    let load = tokio::spawn(buyers(conns, shelf.clone(), reaping.clone(), stop.clone()));
    tokio::time::sleep(Duration::from_millis(400)).await;

    // The reaper, draining: it stops as soon as no hold is left.
    let (_drain, draining) = watch::channel(true);
    reaping.store(true, Ordering::Relaxed);
    let started = Instant::now();
    let report = Reaper {
        conn: redis.conn().await,
        keys: keys.clone(),
        // The shop clock already reads 10 s: every hold is due.
        clock: ShopClock::start(Instant::now() - Duration::from_secs(10), 1),
        every: Duration::from_millis(20),
        draining,
        drain_for: Duration::from_secs(30),
        stop: CancellationToken::new(),
        losses: None,
    }
    .run()
    .await;
    let took = started.elapsed();
    stop.cancel();
    let (p_before, p_during) = load.await.unwrap();
    let (lb, ld) = (latency(p_before.clone()), latency(p_during.clone()));
    let stats = report.stats();
    println!(
        "reaper: {} holds in {} calls over {:.0} ms, largest batch {}, per call p50 {} µs, p99 {} µs, max {} µs; \
         buyers' reserve p99: {} µs before ({} calls), {} µs during ({} calls)",
        report.holds,
        report.calls,
        took.as_secs_f64() * 1e3,
        report.largest_batch,
        stats.p50_call_us,
        stats.p99_call_us,
        stats.max_call_us,
        lb.p99_us,
        p_before.len(),
        ld.p99_us,
        p_during.len()
    );

    // Every hold back, in bounded batches.
    assert_eq!(report.holds, u64::from(HOLDS));
    assert_eq!(report.units, u64::from(HOLDS));
    assert!(report.largest_batch <= BATCH, "{}", report.largest_batch);
    assert!(report.calls >= HOLDS / BATCH, "{}", report.calls);
    let after = holds::counters(&mut admin, &keys).await.unwrap();
    assert_eq!((after.holds, after.held), (0, 0));
    assert_eq!(after.available, Some(i64::from(HOLDS)));
    // The buyers were served all along.
    assert!(
        !p_during.is_empty(),
        "no buyer was served while the reaper ran"
    );
    holds::remove_run(&mut admin, &keys).await.unwrap();
    // Not one slow script: the slow log is empty, the latency monitor saw no slow command.
    let slow: Vec<redis::Value> = redis::cmd("SLOWLOG")
        .arg("GET")
        .arg(128)
        .query_async(&mut raw)
        .await
        .unwrap();
    let latest: Vec<redis::Value> = redis::cmd("LATENCY")
        .arg("LATEST")
        .query_async(&mut raw)
        .await
        .unwrap();
    if slow.is_empty() && latest.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "slow log: {}; latency monitor: {latest:?}",
            slow.iter().map(slow_entry).collect::<Vec<_>>().join(", ")
        ))
    }
}
