//! `redlock` on real processes: what a quorum of three lock masters fixes, and what it does
//! not.
//!
//! - Fixes: a lock master killed (SIGKILL) or frozen (SIGSTOP) mid-run. The other two still
//!   grant the lock, every unit is sold once, nobody fails: seeded runs, the fault at a
//!   different moment and on a different master in each. Two of three gone is no majority:
//!   every later buyer is refused at once, and nothing is oversold.
//! - Does not fix: a holder stalled past its lease. Made to happen exactly (the lock expired
//!   on every master while the holder sits between its GET and its DECRBY: the last unit is
//!   sold twice), and for real (the stock's Redis paused past the lease the moment a buyer
//!   holds the lock: exclusion lost in most trials).
//! - Its round trips per order, beside `lock`'s, and step-through's refusal.
//!
//! Its random runs, the fault table and the round-trip count are in the shared suites
//! (`all_strategies`, `cluster`, `faults`, `strategies`), which pick it up from the registry;
//! those start the lock masters the default way, per run. Here the tests start the masters
//! themselves ([`LockMasters::Given`]) so they can kill or freeze one.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use oversold::backends::{Backends, LOCK_MASTERS, LockMasters};
use oversold::engine;
use oversold::run::{Event, RunError, RunReport};
use oversold::shelf::ShelfError;
use oversold::stepper::{StepError, Stepper};
use oversold::store::{RedisConn, RunKeys, scripts, stock};
use oversold::strategy::{Attempt, Backend, Order, QUORUM_VOTE_TIMEOUT, QuorumSeat};
use oversold_protocol::{BuyerOutcome, OutcomeResult, RunConfig, RunRequest};
use redis::aio::MultiplexedConnection;
use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::common::TestRedis;
use crate::common::checks::strategy;

/// The stock's Redis and three lock masters, each a `redis-server` of the test's own.
struct Rig {
    stock: TestRedis,
    masters: Vec<TestRedis>,
}

impl Rig {
    async fn start() -> Rig {
        tokio::task::spawn_blocking(|| Rig {
            stock: TestRedis::start(),
            masters: (0..LOCK_MASTERS).map(|_| TestRedis::start()).collect(),
        })
        .await
        .expect("redis-servers start")
    }

    /// The stock's Redis, with these masters as the lock service.
    fn backends(&self) -> Backends {
        let stores: [_; LOCK_MASTERS] = std::array::from_fn(|m| self.masters[m].store.clone());
        Backends {
            lock_masters: LockMasters::Given(Arc::new(stores)),
            ..self.stock.backends()
        }
    }

    /// A seat as the engine builds one: a stock connection and one to each master.
    async fn seat(&self, name: &str) -> QuorumSeat {
        let mut masters = Vec::new();
        for (m, master) in self.masters.iter().enumerate() {
            let conn = master
                .store
                .connect_named_within(&format!("{name}-lock-{m}"), QUORUM_VOTE_TIMEOUT)
                .await
                .unwrap();
            masters.push(conn);
        }
        QuorumSeat {
            stock: self.stock.conn().await,
            masters,
        }
    }

    /// `release_lock.lua` cached on every master, as the engine's set-up does.
    async fn preload(&self) {
        for master in &self.masters {
            scripts::preload(&mut master.conn().await, &scripts::RELEASE_LOCK)
                .await
                .unwrap();
        }
    }
}

fn config(request: RunRequest) -> RunConfig {
    request.validate(0).expect("valid test config")
}

/// A run going on in the background, and the outcomes it delivers.
struct Running {
    task: tokio::task::JoinHandle<Result<RunReport, RunError>>,
    outcomes: mpsc::UnboundedReceiver<Event>,
}

impl Running {
    fn start(backends: Backends, config: &RunConfig, run_id: &str) -> Running {
        let (sink, outcomes) = mpsc::unbounded_channel();
        let (config, run_id) = (config.clone(), run_id.to_string());
        let task = tokio::spawn(async move {
            let redlock = strategy("redlock");
            let stop = CancellationToken::new();
            engine::run(&backends, redlock, &config, &run_id, Some(sink), stop).await
        });
        Running { task, outcomes }
    }

    /// Wait for the first outcome; returns when the gate opened (outcome times count from it).
    async fn gate(&mut self) -> Instant {
        let first = tokio::time::timeout(Duration::from_secs(10), self.outcomes.recv())
            .await
            .expect("a first outcome within 10 s")
            .and_then(Event::outcome)
            .expect("a race sends outcomes");
        Instant::now() - Duration::from_micros(first.end_us)
    }

    async fn end(self) -> RunReport {
        tokio::time::timeout(Duration::from_secs(60), self.task)
            .await
            .expect("the run ends within 60 s")
            .expect("the run task did not panic")
            .expect("the run ends with a summary")
    }
}

/// Two reservations that read the same stock were inside the critical section together.
fn lost_exclusion(outcomes: &[BuyerOutcome]) -> bool {
    let mut seen = std::collections::HashSet::new();
    outcomes
        .iter()
        .filter(|o| o.result == OutcomeResult::Reserved)
        .filter_map(|o| o.observed_stock)
        .any(|read| !seen.insert(read))
}

/// What happens to one lock master mid-run.
#[derive(Debug, Clone, Copy)]
enum MasterFault {
    Killed,
    Frozen,
}

/// One seeded run with `fault` on master `victim`, `delay` after the first outcome.
async fn lose_one_master(seed: u64, fault: MasterFault, victim: usize, delay: Duration) {
    let mut rig = Rig::start().await;
    let cfg = config(RunRequest {
        strategy: Some("redlock".into()),
        stock: Some(150),
        buyers: Some(120),
        max_qty: Some(2),
        app_servers: Some(4),
        arrival_spread_ms: Some(800),
        race_window_ms: Some(1),
        seed: Some(seed),
        ..Default::default()
    });
    let mut run = Running::start(rig.backends(), &cfg, &format!("redlock-lose-{seed}"));
    let gate = run.gate().await;
    tokio::time::sleep(delay).await;
    match fault {
        MasterFault::Killed => tokio::task::block_in_place(|| rig.masters[victim].kill()),
        MasterFault::Frozen => rig.masters[victim].server.freeze().unwrap(),
    }
    let fault_us = gate.elapsed().as_micros() as u64;
    let report = run.end().await;
    if let MasterFault::Frozen = fault {
        rig.masters[victim].server.thaw().unwrap();
    }
    let s = &report.summary;
    let after = report
        .outcomes
        .iter()
        .filter(|o| o.result == OutcomeResult::Reserved && o.start_us > fault_us)
        .count();
    println!(
        "seed {seed}: master {victim} {fault:?} at {} ms: sold {} of {}, final {}, {after} \
         reservations began after it, errors {}, gave up {}",
        fault_us / 1000,
        s.units_sold,
        s.stock,
        s.final_stock,
        s.errors,
        s.gave_up
    );
    // Nobody failed or gave up; the counter holds exactly what the orders left; no two
    // holders read the same stock.
    assert_eq!(
        (s.errors, s.unknown, s.gave_up, s.oversold_units),
        (0, 0, 0, 0),
        "seed {seed}: {s:?}"
    );
    assert_eq!(s.final_stock, i64::from(s.stock) - s.units_sold as i64);
    assert!(s.final_stock >= 0);
    assert!(!lost_exclusion(&report.outcomes), "seed {seed}");
    assert!(
        after > 0,
        "seed {seed}: no reservation began after the fault"
    );
    assert_eq!(
        crate::common::reported_round_trips(&report),
        report.redis_requests,
        "seed {seed}: the buyers' reports disagree with what their connections sent"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_lock_master_killed_or_frozen_mid_run_changes_nothing() {
    const TRIALS: u64 = 6;
    let mut trials = JoinSet::new();
    for seed in 0..TRIALS {
        let fault = if seed % 2 == 0 {
            MasterFault::Killed
        } else {
            MasterFault::Frozen
        };
        let delay = Duration::from_millis(30 * seed);
        trials.spawn(lose_one_master(
            seed,
            fault,
            seed as usize % LOCK_MASTERS,
            delay,
        ));
    }
    for result in trials.join_all().await {
        let () = result;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_lock_masters_killed_leave_no_majority_and_no_oversell() {
    let mut rig = Rig::start().await;
    let cfg = config(RunRequest {
        strategy: Some("redlock".into()),
        stock: Some(150),
        buyers: Some(120),
        app_servers: Some(4),
        arrival_spread_ms: Some(800),
        seed: Some(2),
        ..Default::default()
    });
    let mut run = Running::start(rig.backends(), &cfg, "redlock-no-majority");
    let gate = run.gate().await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    tokio::task::block_in_place(|| {
        rig.masters[0].kill();
        rig.masters[2].kill();
    });
    let fault_us = gate.elapsed().as_micros() as u64;
    let report = run.end().await;
    let s = &report.summary;
    println!("two masters killed at {} ms: {s:?}", fault_us / 1000);
    assert_eq!((s.oversold_units, s.unknown, s.gave_up), (0, 0, 0), "{s:?}");
    assert_eq!(s.final_stock, i64::from(s.stock) - s.units_sold as i64);
    assert!(s.units_sold > 0, "some sold before the kill: {s:?}");
    // Every buyer that arrived once the masters were gone took nothing, and says why.
    let late: Vec<&BuyerOutcome> = report
        .outcomes
        .iter()
        .filter(|o| o.start_us > fault_us + 50_000)
        .collect();
    assert!(!late.is_empty());
    for o in late {
        assert_eq!(o.result, OutcomeResult::Error, "{o:?}");
        let why = o.error.as_deref().unwrap_or("");
        assert!(why.contains("no majority"), "{why}");
    }
    // Refused at once, not after polling for 10 s.
    assert!(
        s.latency.max_us < 5_000_000,
        "a buyer waited {} ms",
        s.latency.max_us / 1000
    );
}

/// One `redlock` order on `seat`, outside the engine.
async fn buy(seat: &Mutex<QuorumSeat>, keys: &RunKeys, race_window: Duration) -> Attempt {
    let Backend::QuorumRedis(s) = strategy("redlock").backend else {
        panic!("redlock takes its lock on lock masters");
    };
    let order = Order {
        shelf: keys,
        qty: 1,
        race_window,
        by_hand: false,
        ticket: 0,
    };
    s.buy(seat, order).await
}

/// Wait (bounded) until `key` exists on this master.
async fn until_taken(raw: &mut MultiplexedConnection, key: &str) {
    for _ in 0..2_000 {
        let taken: bool = redis::cmd("EXISTS")
            .arg(key)
            .query_async(raw)
            .await
            .unwrap();
        if taken {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("{key} was never taken");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redlock_sells_twice_when_a_holders_lease_runs_out() {
    let rig = Rig::start().await;
    rig.preload().await;
    let keys = RunKeys::new("redlock-lease-lost");
    stock::init(&mut rig.stock.conn().await, &keys, 1)
        .await
        .unwrap();
    let seat_a = Mutex::new(rig.seat("a").await);
    let seat_b = Mutex::new(rig.seat("b").await);
    // A holds the lock on all three masters and sits 300 ms between its GET and its DECRBY.
    let a = buy(&seat_a, &keys, Duration::from_millis(300));
    let b = async {
        until_taken(&mut rig.masters[0].raw().await, keys.lock_key()).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        // Its lease runs out on every master, as a stall past 2 s would make it.
        for master in &rig.masters {
            redis::cmd("PEXPIRE")
                .arg(keys.lock_key())
                .arg(1)
                .query_async::<()>(&mut master.raw().await)
                .await
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(3)).await;
        buy(&seat_b, &keys, Duration::ZERO).await
    };
    let (a, b) = tokio::join!(a, b);
    assert_eq!(
        (a.result, b.result),
        (OutcomeResult::Reserved, OutcomeResult::Reserved)
    );
    assert_eq!(
        (a.observed_stock, b.observed_stock),
        (Some(1), Some(1)),
        "both read the last unit"
    );
    assert_eq!(
        stock::get(&mut rig.stock.conn().await, &keys)
            .await
            .unwrap(),
        Some(-1),
        "sold twice: three masters did not help"
    );
    assert!(a.lease_lost && !b.lease_lost, "{a:?} {b:?}");
    // Uncontended, each is 3 SETs, a GET, a DECRBY and 3 releases.
    assert_eq!((a.round_trips, b.round_trips), (8, 8));
    for (seat, attempt) in [(&seat_a, &a), (&seat_b, &b)] {
        let seat = seat.lock().await;
        let sent: u64 = std::iter::once(&seat.stock)
            .chain(&seat.masters)
            .map(RedisConn::requests_sent)
            .sum();
        assert_eq!(u64::from(attempt.round_trips), sent);
    }
}

/// How long the stock's Redis is paused: past the 2 s lease, short of the 3 s response
/// timeout (so every request is still answered).
const PAUSE_MS: u64 = 2_500;

/// One trial: a unit of stock, 12 buyers on 4 app servers, and the stock's Redis paused the
/// moment master 0 holds the lock. Returns (leases lost, units oversold).
async fn stalled_trial(trial: usize) -> (usize, i64) {
    let rig = Rig::start().await;
    rig.preload().await;
    let keys = RunKeys::new(&format!("redlock-stall-{trial}"));
    stock::init(&mut rig.stock.conn().await, &keys, 1)
        .await
        .unwrap();
    let mut seats = Vec::new();
    for k in 0..4 {
        seats.push(Mutex::new(rig.seat(&format!("stall-{trial}-{k}")).await));
    }
    let buyers = (0..12).map(|i| buy(&seats[i % 4], &keys, Duration::from_millis(5)));
    let spy = async {
        let mut master = rig.masters[0].raw().await;
        until_taken(&mut master, keys.lock_key()).await;
        redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(PAUSE_MS)
            .arg("ALL")
            .query_async::<()>(&mut rig.stock.raw().await)
            .await
            .unwrap();
    };
    let (attempts, ()) = tokio::join!(join_all(buyers), spy);
    for a in &attempts {
        assert!(
            matches!(a.result, OutcomeResult::Reserved | OutcomeResult::SoldOut),
            "{a:?}"
        );
    }
    let reserved = attempts
        .iter()
        .filter(|a| a.result == OutcomeResult::Reserved)
        .count() as i64;
    let final_stock = stock::get(&mut rig.stock.conn().await, &keys)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        final_stock,
        1 - reserved,
        "the counter disagrees with the orders"
    );
    let lost = attempts.iter().filter(|a| a.lease_lost).count();
    (lost, (reserved - 1).max(0))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pause_of_the_stock_past_the_lease_breaks_redlock_as_it_breaks_lock() {
    const TRIALS: usize = 6;
    let results = join_all((0..TRIALS).map(stalled_trial)).await;
    let lost = results.iter().filter(|(l, _)| *l > 0).count();
    let oversold = results.iter().filter(|(_, o)| *o > 0).count();
    println!(
        "{TRIALS} trials, the stock's Redis paused {PAUSE_MS} ms mid-hold: redlock lost \
         exclusion in {lost} and oversold in {oversold}"
    );
    // The masters are never paused, so the lease runs out on all three while the holder
    // waits for the stock, and a waiter gathers a fresh majority.
    assert!(lost >= TRIALS / 2, "{results:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_trips_per_order_beside_lock() {
    let rig = Rig::start().await;
    let mut mean = Vec::new();
    for (name, app_servers) in [("lock", 1), ("redlock", 1), ("lock", 8), ("redlock", 8)] {
        let cfg = config(RunRequest {
            strategy: Some(name.into()),
            stock: Some(20),
            buyers: Some(50),
            app_servers: Some(app_servers),
            race_window_ms: Some(2),
            seed: Some(6),
            ..Default::default()
        });
        let backends = rig.backends();
        let run_id = format!("rt-{name}-{app_servers}");
        let stop = CancellationToken::new();
        let report = engine::run(&backends, strategy(name), &cfg, &run_id, None, stop)
            .await
            .unwrap();
        let s = &report.summary;
        assert_eq!(
            (s.units_sold, s.errors, s.gave_up),
            (20, 0, 0),
            "{name} {s:?}"
        );
        assert_eq!(
            crate::common::reported_round_trips(&report),
            report.redis_requests
        );
        if app_servers == 1 {
            // One app server: its buyers take turns, so nobody ever finds the lock busy.
            let per_lock = if name == "lock" { 1 + 1 } else { 3 + 3 };
            for o in &report.outcomes {
                let on_stock = if o.result == OutcomeResult::Reserved {
                    2
                } else {
                    1
                };
                assert_eq!(
                    (o.retries, o.round_trips),
                    (0, per_lock + on_stock),
                    "{o:?}"
                );
            }
        }
        mean.push(format!(
            "{name} on {app_servers} app server(s): {:.1} round trips per order",
            s.round_trips as f64 / f64::from(s.buyers)
        ));
    }
    println!("{}", mean.join("\n"));
}

#[tokio::test]
async fn step_through_refuses_redlock_and_says_why() {
    let redis = TestRedis::start();
    let cfg = config(RunRequest {
        strategy: Some("redlock".into()),
        buyers: Some(2),
        ..Default::default()
    });
    let refused = Stepper::open(
        &redis.backends(),
        strategy("redlock"),
        cfg,
        "s-redlock".into(),
    )
    .await
    .err()
    .expect("redlock cannot be stepped");
    let StepError::Setup(RunError::Setup(ShelfError::NotSteppable(why))) = &refused else {
        panic!("{refused}");
    };
    assert!(why.contains("3 lock masters at once"), "{why}");
    assert!(strategy("lock").step_refusal().is_none());
    // The page learns it from `hello`, so its step picker never offers redlock.
    let backends = redis.backends();
    let said = strategy("redlock").info(&backends).step_refusal;
    assert_eq!(said.as_deref(), Some(why.as_str()));
    assert_eq!(strategy("lock").info(&backends).step_refusal, None);
    let mut raw = redis.raw().await;
    assert!(
        crate::common::run_keys(&mut raw).await.is_empty(),
        "nothing was stocked"
    );
}
