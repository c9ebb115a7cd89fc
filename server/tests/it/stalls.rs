//! A stall past the lock's lease, injected for real: `CLIENT PAUSE` freezes Redis while a
//! buyer holds the lock, so the lease runs out before anyone can act on it.
//!
//! That is what a long GC pause or a network stall does to a lease-based lock: when
//! everything moves again, the lock has expired, another app server's waiting buyer takes
//! it at once, and the first holder carries on as if it still held it. `lock` loses
//! exclusion, and when the pause also held back the holder's read, both read the last unit
//! and both sell it. `fenced_lock` loses the lease just as often, but the stock turns the
//! stale holder away, so it never oversells.
//!
//! Each trial gets its own Redis (the pause freezes a whole server), a small shelf, a few
//! app servers and a short race window. A spy connection watches the trial's lock key and
//! freezes Redis the moment the first buyer takes it, so the pause lands inside that
//! holder's critical section. All trials run at once: the test costs one pause.

use std::time::Duration;

use crate::common::TestRedis;
use crate::common::checks::strategy;
use futures_util::future::join_all;
use oversold::store::{RunKeys, stock};
use oversold::strategy::{Attempt, Backend, Order};
use oversold_protocol::OutcomeResult;
use redis::aio::MultiplexedConnection;
use tokio::sync::Mutex;

/// How long Redis is frozen, in ms: past the lease (2 s plus the race window), and short of
/// the store's 3 s response timeout, so every request is still answered.
const PAUSE_MS: u64 = 2_500;
/// One unit: two holders inside at once both sell it.
const STOCK: u32 = 1;
const BUYERS: usize = 12;
const APP_SERVERS: usize = 4;
/// Between a holder's read and its write: long enough that the next holder, freed by the
/// expired lease, reads before the stale holder writes.
const RACE_WINDOW: Duration = Duration::from_millis(5);
/// Trials per strategy, all at once.
const TRIALS: usize = 8;

/// What one trial showed.
#[derive(Debug)]
struct Trial {
    /// Releases that found the lock no longer theirs: the lease ran out under a holder, and
    /// another buyer took the lock while it was still inside.
    leases_lost: usize,
    /// Units sold beyond the stock.
    oversold: i64,
    /// Holders the stock turned away for a stale token (`fenced_lock` only): tokens handed
    /// out beyond one per buyer.
    fenced_out: i64,
}

/// Freeze Redis as soon as `lock` exists (bounded: gives up after 20,000 looks).
///
/// `CLIENT PAUSE ms ALL` holds every client's commands unanswered, and keys whose time is
/// up are expired when it ends: for a lease, the same as `DEBUG SLEEP`, which a private
/// redis-server refuses unless started with `enable-debug-command`.
async fn pause_when_taken(mut raw: MultiplexedConnection, lock: String) -> bool {
    for _ in 0..20_000 {
        let taken: bool = redis::cmd("EXISTS")
            .arg(&lock)
            .query_async(&mut raw)
            .await
            .unwrap();
        if taken {
            redis::cmd("CLIENT")
                .arg("PAUSE")
                .arg(PAUSE_MS)
                .arg("ALL")
                .query_async::<()>(&mut raw)
                .await
                .unwrap();
            return true;
        }
    }
    false
}

/// One trial of `name` on its own Redis.
async fn trial(name: &'static str) -> Trial {
    let redis = TestRedis::start();
    let keys = RunKeys::new(&format!("stall-{name}"));
    let mut admin = redis.conn().await;
    stock::init(&mut admin, &keys, STOCK).await.unwrap();
    let fleet = redis
        .store
        .connect_fleet(&format!("stall-{name}"), APP_SERVERS as u32)
        .await
        .unwrap();
    let links: Vec<Mutex<_>> = fleet.into_iter().map(Mutex::new).collect();
    let Backend::ExclusiveRedis(s) = strategy(name).backend else {
        panic!("{name} is a lock strategy");
    };
    let buyers = (0..BUYERS).map(|i| {
        let order = Order {
            shelf: &keys,
            qty: 1,
            race_window: RACE_WINDOW,
            by_hand: false,
            ticket: i as u64,
        };
        s.buy(&links[i % APP_SERVERS], order)
    });
    let spy = pause_when_taken(redis.raw().await, keys.lock_key().to_string());
    let (attempts, paused) = tokio::join!(join_all(buyers), spy);
    assert!(paused, "{name}: no buyer ever took the lock");
    let final_stock = stock::get(&mut admin, &keys).await.unwrap().unwrap();
    let tokens: Option<i64> = redis::cmd("GET")
        .arg(keys.fence_key())
        .query_async(&mut redis.raw().await)
        .await
        .unwrap();
    tally(name, &attempts, final_stock, tokens.unwrap_or(0))
}

fn tally(name: &str, attempts: &[Attempt], final_stock: i64, tokens: i64) -> Trial {
    for a in attempts {
        // Every request is answered within the pause, and every buyer gets its turn in
        // time: nothing fails, nothing gives up.
        assert!(
            matches!(a.result, OutcomeResult::Reserved | OutcomeResult::SoldOut),
            "{name}: {a:?}"
        );
    }
    let reserved = attempts
        .iter()
        .filter(|a| a.result == OutcomeResult::Reserved)
        .count() as i64;
    assert_eq!(
        final_stock,
        i64::from(STOCK) - reserved,
        "{name}: the counter disagrees with the orders"
    );
    Trial {
        leases_lost: attempts.iter().filter(|a| a.lease_lost).count(),
        oversold: (reserved - i64::from(STOCK)).max(0),
        fenced_out: (tokens - BUYERS as i64).max(0),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stall_past_the_lease_breaks_lock_but_not_fenced_lock() {
    let trials = (0..TRIALS).flat_map(|_| [trial("lock"), trial("fenced_lock")]);
    let results = join_all(trials).await;
    let (plain, fenced): (Vec<&Trial>, Vec<&Trial>) =
        results.chunks(2).map(|p| (&p[0], &p[1])).unzip();
    let count = |ts: &[&Trial], f: fn(&Trial) -> bool| ts.iter().filter(|t| f(t)).count();
    let (lost, over, fenced_out) = (
        |t: &Trial| t.leases_lost > 0,
        |t: &Trial| t.oversold > 0,
        |t: &Trial| t.fenced_out > 0,
    );
    println!(
        "{TRIALS} trials each, Redis paused {PAUSE_MS} ms mid-hold: lock lost exclusion in {} \
         and oversold in {}; fenced_lock lost a lease in {}, fenced a stale holder out in {}, \
         oversold in {}",
        count(&plain, lost),
        count(&plain, over),
        count(&fenced, lost),
        count(&fenced, fenced_out),
        count(&fenced, over),
    );
    // lock: a waiting buyer takes the expired lock while the holder is still inside, in
    // nearly every trial (measured: 96 of 96). Whether that sells the unit twice depends on
    // whether the pause also held back the holder's GET (measured: 27 of 96);
    // strategies.rs shows that oversell deterministically.
    assert!(
        count(&plain, lost) >= TRIALS / 2,
        "lock kept exclusion through a pause past its lease: {plain:?}"
    );
    // fenced_lock: the pause breaks a holder's lease just as often (its release finds the
    // lock gone, or the stock fences it out: measured 96 of 96), but it never sells twice.
    let broken = |t: &Trial| t.leases_lost > 0 || t.fenced_out > 0;
    assert!(
        count(&fenced, broken) >= TRIALS / 2,
        "the pause never reached a fenced_lock holder: {fenced:?}"
    );
    assert_eq!(count(&fenced, over), 0, "fenced_lock oversold: {fenced:?}");
}
