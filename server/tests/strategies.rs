//! Per-strategy contracts against a real Redis: the lock release script, the Redis Function,
//! and what `decr_compensate`, `watch` and `lock` report about their round trips and retries.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{TestRedis, calls, reply};
use oversold::engine::{self, RunReport};
use oversold::shelf::Link;
use oversold::store::{self, Conn, RELEASE_LOCK_LUA, RESERVE_FUNCTION_LUA, RunKeys};
use oversold::strategy::{self, Order, Strategy};
use oversold_protocol::{OutcomeResult, RunConfig, RunRequest};
use tokio_util::sync::CancellationToken;

fn strategy(name: &str) -> Arc<dyn Strategy> {
    strategy::find(&strategy::registry(), name).expect("strategy exists")
}

fn config(request: RunRequest) -> RunConfig {
    request.validate(0).expect("valid test config")
}

async fn run(redis: &TestRedis, config: &RunConfig, run_id: &str) -> RunReport {
    engine::run(
        &redis.backends(),
        strategy(&config.strategy),
        config,
        run_id,
        None,
        CancellationToken::new(),
    )
    .await
    .unwrap_or_else(|e| panic!("run {run_id} failed: {e}"))
}

async fn reset_stats(conn: &mut Conn) {
    redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async::<()>(conn)
        .await
        .unwrap();
}

#[tokio::test]
async fn release_lock_only_deletes_its_own_token() {
    let redis = TestRedis::start();
    let mut c = redis.conn().await;
    let keys = RunKeys::new("lock-contract");
    let ttl = Duration::from_secs(30);

    // Nothing to release yet.
    assert!(!store::release_lock(&mut c, &keys, "a").await.unwrap());

    assert!(store::try_lock(&mut c, &keys, "a", ttl).await.unwrap());
    // NX: a second taker is refused while the first holds it.
    assert!(!store::try_lock(&mut c, &keys, "b", ttl).await.unwrap());
    // Someone else's token deletes nothing.
    assert!(!store::release_lock(&mut c, &keys, "b").await.unwrap());
    assert!(store::key_exists(&mut c, keys.lock_key()).await.unwrap());
    // The holder's token does.
    assert!(store::release_lock(&mut c, &keys, "a").await.unwrap());
    assert!(!store::key_exists(&mut c, keys.lock_key()).await.unwrap());
    // Releasing twice is harmless, and cannot free a lock taken in between.
    assert!(store::try_lock(&mut c, &keys, "b", ttl).await.unwrap());
    assert!(!store::release_lock(&mut c, &keys, "a").await.unwrap());
    assert!(store::key_exists(&mut c, keys.lock_key()).await.unwrap());

    let err = store::release_lock(&mut c, &keys, "")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("INVALID_TOKEN"), "{err}");

    // The lock expires on its own (PX).
    store::release_lock(&mut c, &keys, "b").await.unwrap();
    assert!(
        store::try_lock(&mut c, &keys, "c", Duration::from_millis(50))
            .await
            .unwrap()
    );
    tokio::time::sleep(Duration::from_millis(120)).await;
    assert!(!store::key_exists(&mut c, keys.lock_key()).await.unwrap());
}

#[tokio::test]
async fn reserve_function_contract() {
    let redis = TestRedis::start();
    let mut c = redis.conn().await;
    let keys = RunKeys::new("function-contract");

    // Not loaded yet: the error is recognised as a missing function.
    let err = store::reserve_function(&mut c, &keys, 1).await.unwrap_err();
    assert!(err.is_function_missing(), "{err}");

    store::load_functions(&mut c).await.unwrap();
    // Loading again replaces it instead of failing.
    store::load_functions(&mut c).await.unwrap();

    // The same contract as reserve.lua.
    assert_eq!(
        store::reserve_function(&mut c, &keys, 1).await.unwrap(),
        reply(false, 0, 0)
    );
    assert!(!store::key_exists(&mut c, keys.stock_key()).await.unwrap());
    store::init_stock(&mut c, &keys, 3).await.unwrap();
    assert_eq!(
        store::reserve_function(&mut c, &keys, 3).await.unwrap(),
        reply(true, 3, 0)
    );
    store::init_stock(&mut c, &keys, 2).await.unwrap();
    assert_eq!(
        store::reserve_function(&mut c, &keys, 3).await.unwrap(),
        reply(false, 2, 2)
    );
    assert_eq!(
        store::reserve_function(&mut c, &keys, 1).await.unwrap(),
        reply(true, 2, 1)
    );
    for bad in ["0", "-1", "abc", "1.5", "", "nan"] {
        let err = store::reserve_function_raw(&mut c, &keys, bad)
            .await
            .unwrap_err();
        assert!(!err.is_function_missing());
        let err = err.to_string();
        assert!(err.contains("INVALID_QTY"), "qty {bad:?} gave {err}");
    }
    assert_eq!(store::read_stock(&mut c, &keys).await.unwrap(), Some(1));
    store::set_stock_raw(&mut c, &keys, "lots").await.unwrap();
    let err = store::reserve_function(&mut c, &keys, 1)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("STOCK_NOT_NUMBER"), "{err}");
    store::ping(&mut c).await.unwrap();
}

#[test]
fn new_lua_headers_document_their_contracts() {
    for needle in ["KEYS[1]", "ARGV[1]", "Returns", "Errors", "INVALID_TOKEN"] {
        assert!(
            RELEASE_LOCK_LUA.contains(needle),
            "release_lock.lua header lacks {needle}"
        );
    }
    assert!(RESERVE_FUNCTION_LUA.starts_with("#!lua name=oversold\n"));
    for needle in [
        "KEYS[1]",
        "ARGV[1]",
        "Returns",
        "Errors",
        "{1, stock_before, stock_after}",
        "INVALID_QTY",
        "STOCK_NOT_NUMBER",
        "register_function('oversold_reserve'",
    ] {
        assert!(
            RESERVE_FUNCTION_LUA.contains(needle),
            "reserve_function.lua lacks {needle}"
        );
    }
    let files: Vec<_> = store::lua_sources().iter().map(|(f, _)| *f).collect();
    assert_eq!(
        files,
        ["reserve.lua", "release_lock.lua", "reserve_function.lua"]
    );
}

/// One order placed directly, outside the engine.
async fn buy_once(
    strategy: &dyn Strategy,
    link: Link,
    keys: &RunKeys,
    qty: u32,
    race_window: Duration,
) -> strategy::Attempt {
    strategy
        .buy(Order {
            link,
            run_id: "direct",
            keys,
            qty,
            race_window,
        })
        .await
}

#[tokio::test]
async fn function_survives_script_flush_and_reloads_after_function_flush() {
    let redis = TestRedis::start();
    let mut c = redis.conn().await;
    let keys = RunKeys::new("function-flush");
    let function = strategy("function");
    store::init_stock(&mut c, &keys, 5).await.unwrap();
    function.prepare(&mut c).await.unwrap();

    // SCRIPT FLUSH empties the EVALSHA cache; functions are not in it.
    store::flush_script_cache(&mut c).await.unwrap();
    reset_stats(&mut c).await;
    let a = buy_once(&*function, Link::Redis(c.clone()), &keys, 1, Duration::ZERO).await;
    assert_eq!(a.result, OutcomeResult::Reserved);
    assert_eq!((a.observed_stock, a.stock_after), (Some(5), Some(4)));
    assert_eq!((a.round_trips, a.retries), (1, 0));
    assert_eq!(calls(&mut c, "function|load").await, 0);

    // FUNCTION FLUSH removes it; the strategy's prepare brings it back.
    store::flush_functions(&mut c).await.unwrap();
    let err = store::reserve_function(&mut c, &keys, 1).await.unwrap_err();
    assert!(err.is_function_missing(), "{err}");
    function.prepare(&mut c).await.unwrap();
    assert_eq!(
        store::reserve_function(&mut c, &keys, 1).await.unwrap(),
        reply(true, 4, 3)
    );

    // Flushed mid-run: the buyer reloads it and retries once (FCALL, LOAD, FCALL).
    store::flush_functions(&mut c).await.unwrap();
    let a = buy_once(&*function, Link::Redis(c.clone()), &keys, 2, Duration::ZERO).await;
    assert_eq!(a.result, OutcomeResult::Reserved, "{a:?}");
    assert_eq!((a.observed_stock, a.stock_after), (Some(3), Some(1)));
    assert_eq!((a.round_trips, a.retries), (3, 1));
    let a = buy_once(&*function, Link::Redis(c.clone()), &keys, 2, Duration::ZERO).await;
    assert_eq!(a.result, OutcomeResult::SoldOut);
    assert_eq!((a.round_trips, a.retries), (1, 0));

    // And through the engine, after a FUNCTION FLUSH between runs.
    store::flush_functions(&mut c).await.unwrap();
    let cfg = config(RunRequest {
        strategy: "function".into(),
        seed: Some(1),
        ..Default::default()
    });
    let s = run(&redis, &cfg, "function-run").await.summary;
    assert_eq!((s.units_sold, s.final_stock, s.errors), (10, 0, 0));
    assert_eq!(s.retries, 0, "prepare loaded it before the buyers started");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decr_compensate_pays_the_undo_only_on_overshoot() {
    let redis = TestRedis::start();
    let mut c = redis.conn().await;
    reset_stats(&mut c).await;
    let cfg = config(RunRequest {
        strategy: "decr_compensate".into(),
        seed: Some(3),
        ..Default::default()
    });
    let report = run(&redis, &cfg, "compensate").await;
    let s = &report.summary;
    assert_eq!((s.units_sold, s.final_stock, s.lost_updates), (10, 0, 0));
    assert_eq!((s.orders_accepted, s.rejected, s.errors), (10, 40, 0));
    for o in &report.outcomes {
        match o.result {
            OutcomeResult::Reserved => {
                assert_eq!(o.round_trips, 1, "{o:?}");
                let after = o.stock_after.unwrap();
                assert!(after >= 0);
                assert_eq!(o.observed_stock, Some(after + i64::from(o.qty)));
            }
            OutcomeResult::SoldOut => {
                assert_eq!(o.round_trips, 2, "{o:?}");
                assert!(o.observed_stock.unwrap() < i64::from(o.qty), "{o:?}");
            }
            OutcomeResult::Error => panic!("{o:?}"),
        }
    }
    assert_eq!(s.round_trips, 10 + 2 * 40);
    assert_eq!(calls(&mut c, "decrby").await, 50);
    assert_eq!(calls(&mut c, "incrby").await, 40, "one undo per overshoot");
    assert_eq!(calls(&mut c, "get").await, 1, "only the engine's read-back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_reports_retries_under_contention() {
    let redis = TestRedis::start();
    let cfg = config(RunRequest {
        strategy: "watch".into(),
        stock: Some(40),
        buyers: Some(100),
        app_servers: Some(32),
        race_window_ms: Some(2),
        seed: Some(4),
        ..Default::default()
    });
    let report = run(&redis, &cfg, "watch").await;
    let s = &report.summary;
    assert_eq!((s.units_sold, s.final_stock, s.errors), (40, 0, 0), "{s:?}");
    assert!(s.retries > 0, "32 app servers racing produced no retries");
    for o in &report.outcomes {
        // Every attempt is WATCH, GET, then EXEC (or UNWATCH when sold out).
        assert_eq!(o.round_trips, 3 * (o.retries + 1), "{o:?}");
    }
    assert_eq!(s.round_trips, 3 * (u64::from(cfg.buyers) + s.retries));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_gives_up_after_its_bound() {
    let redis = TestRedis::start();
    let mut c = redis.conn().await;
    let keys = RunKeys::new("watch-give-up");
    store::init_stock(&mut c, &keys, 100).await.unwrap();
    // Another client rewrites the stock every millisecond, so every WATCH is broken
    // before its EXEC (which comes 5 ms after the read).
    let stop = CancellationToken::new();
    let writer = {
        let (mut w, keys, stop) = (redis.conn().await, keys.clone(), stop.clone());
        tokio::spawn(async move {
            while !stop.is_cancelled() {
                store::init_stock(&mut w, &keys, 100).await.unwrap();
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
    };
    reset_stats(&mut c).await;
    let link = Link::RedisExclusive(Arc::new(tokio::sync::Mutex::new(redis.conn().await)));
    let a = buy_once(
        &*strategy("watch"),
        link,
        &keys,
        1,
        Duration::from_millis(5),
    )
    .await;
    stop.cancel();
    writer.await.unwrap();

    assert_eq!(a.result, OutcomeResult::Error, "{a:?}");
    let why = a.error.as_deref().unwrap();
    assert!(why.contains("gave up after 49 optimistic retries"), "{why}");
    assert_eq!((a.retries, a.round_trips), (49, 150));
    assert_eq!(a.stock_after, None);
    assert_eq!(calls(&mut c, "exec").await, 50);
    assert_eq!(
        calls(&mut c, "decrby").await,
        0,
        "a discarded EXEC ran nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lock_reports_waits_and_retries() {
    let redis = TestRedis::start();
    let mut c = redis.conn().await;
    let cfg = config(RunRequest {
        strategy: "lock".into(),
        stock: Some(20),
        buyers: Some(50),
        race_window_ms: Some(2),
        seed: Some(6),
        ..Default::default()
    });
    let report = run(&redis, &cfg, "lock").await;
    let s = &report.summary;
    assert_eq!((s.units_sold, s.final_stock, s.errors), (20, 0, 0), "{s:?}");
    assert!(s.retries > 0, "50 buyers never waited for the lock");
    for o in &report.outcomes {
        // One SET NX per try, then GET, (DECRBY,) and the release script.
        let held = match o.result {
            OutcomeResult::Reserved => 3,
            OutcomeResult::SoldOut => 2,
            OutcomeResult::Error => panic!("{o:?}"),
        };
        assert_eq!(o.round_trips, o.retries + 1 + held, "{o:?}");
    }
    // The waits are visible as latency: someone queued behind at least a few holders.
    assert!(s.latency.max_us > 5_000, "{:?}", s.latency);
    assert!(
        common::run_keys(&mut c).await.is_empty(),
        "lock left behind"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lock_gives_up_when_the_lock_is_never_free() {
    let redis = TestRedis::start();
    let mut c = redis.conn().await;
    let cfg = config(RunRequest {
        strategy: "lock".into(),
        buyers: Some(3),
        seed: Some(7),
        ..Default::default()
    });
    // Someone else holds the run's lock for longer than a buyer is willing to wait.
    let keys = RunKeys::new("lock-held");
    assert!(
        store::try_lock(&mut c, &keys, "squatter", Duration::from_secs(60))
            .await
            .unwrap()
    );
    let report = run(&redis, &cfg, "lock-held").await;
    let s = &report.summary;
    assert_eq!((s.errors, s.units_sold, s.final_stock), (3, 0, 10), "{s:?}");
    for o in &report.outcomes {
        let why = o.error.as_deref().unwrap();
        assert!(why.contains("gave up waiting for the lock"), "{why}");
        assert!(o.retries > 100, "{o:?}");
        assert_eq!(o.round_trips, o.retries + 1);
    }
    // The run's cleanup removes its keys, the squatter's lock included.
    assert!(common::run_keys(&mut c).await.is_empty());
}

#[tokio::test]
async fn naive_set_keeps_the_ttl() {
    let redis = TestRedis::start();
    let mut c = redis.conn().await;
    let keys = RunKeys::new("naive-set-ttl");
    store::init_stock(&mut c, &keys, 4).await.unwrap();
    let a = buy_once(
        &*strategy("naive_set"),
        Link::Redis(c.clone()),
        &keys,
        3,
        Duration::ZERO,
    )
    .await;
    assert_eq!(a.result, OutcomeResult::Reserved);
    assert_eq!(
        (a.observed_stock, a.stock_after, a.round_trips),
        (Some(4), Some(1), 2)
    );
    let ttl: i64 = redis::cmd("TTL")
        .arg(keys.stock_key())
        .query_async(&mut c)
        .await
        .unwrap();
    assert!(ttl > 0, "SET dropped the run key's expiry: TTL {ttl}");
}
