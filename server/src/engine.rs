//! Running one race: put the stock on the shelf, open the app servers' connections, release
//! every buyer through a start gate, collect outcomes, read the stock back, clean up.
//!
//! [`Arena::set_up`] matches on the strategy's [`Backend`] once and pairs its typed buy
//! function with connections of exactly that type; everything after (the race here, the
//! closed loop in `bench`) only sees "buyer `n` on app server `k`".
//!
//! Buyers are tokio tasks in a [`JoinSet`]: tracked (the run waits for every one),
//! bounded (at most [`in_flight`] at once, and the server caps concurrent runs) and
//! cancellable (a cancelled run skips buyers that have not started). When a buyer finds the
//! store unreachable, the run stops releasing buyers at once, so losing Redis ends a run in
//! seconds whatever its arrival spread.
//!
//! A crowd larger than `MAX_BUYERS` (a million-buyer flash sale) queues like the requests
//! at real app servers' worker pools ([`in_flight`]): buyers start in arrival order, the
//! first ones behind the gate, each next one as soon as a buyer ends. Every buyer still
//! sends its own commands on its app server's connection; a crowd of up to `MAX_BUYERS` runs
//! exactly as before, every buyer behind the gate. With [`Keep::Summary`] the outcomes are
//! added up as they come ([`Tally`]) instead of kept.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use oversold_protocol::limits::MAX_BUYERS;
use oversold_protocol::{BuyerOutcome, Knobs, RunConfig, Scenario};
use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::backends::Backends;
use crate::gate::{StartGate, Turn};
use crate::lock_service::LockService;
use crate::pg::PgConn;
use crate::plan::{BuyerPlan, plan};
use crate::run::{Event, EventSink, Keep, RunError, RunReport, tell};
use crate::shelf::{PgShelf, RedisShelf, Shelf, ShelfError};
use crate::store::stock::{self, Reading};
use crate::store::turnstile::Turnstile;
use crate::store::{RedisConn, RunKeys, StockLayout, Store, scripts};
use crate::strategy::{
    Attempt, Backend, ExclusiveRedisBuyer, Order, PostgresBuyer, QUORUM_VOTE_TIMEOUT,
    QuorumRedisBuyer, QuorumSeat, RedisBuyer, Strategy,
};
use crate::summary::Tally;

/// A buyer that has not heard back after this long is recorded as `unknown`. Request
/// timeouts normally fire first; this is the backstop that guarantees a run ends.
const BUYER_DEADLINE: Duration = Duration::from_secs(20);

/// Buyers one app server serves at once when the crowd is larger than `MAX_BUYERS`: its
/// worker pool. 256 requests in flight per connection keep Redis's pipeline full, while a
/// request's wait behind the others stays far under the 3 s response timeout even in a
/// debug build on a busy machine (with 10,000 in flight it did not).
pub const WORKERS_PER_APP_SERVER: usize = 256;

/// Most buyer tasks of one race alive at once: the whole crowd up to `MAX_BUYERS` (the
/// largest run the page offers by default, every buyer behind the gate as always), else
/// [`WORKERS_PER_APP_SERVER`] per app server. A million waiting tasks would hold gigabytes.
pub fn in_flight(buyers: u32, app_servers: u32) -> usize {
    if buyers <= MAX_BUYERS {
        buyers as usize
    } else {
        WORKERS_PER_APP_SERVER * app_servers as usize
    }
}

/// One buyer's order, as the arena needs it.
#[derive(Debug, Clone, Copy)]
pub struct OrderTerms {
    /// Units wanted.
    pub qty: u32,
    /// Simulated app work between a read and its write.
    pub race_window: Duration,
    /// The buyer's seeded random number.
    pub ticket: u64,
    /// Stepped by hand (see [`Order::by_hand`]).
    pub by_hand: bool,
}

type BuyFn = Arc<dyn Fn(u32, OrderTerms) -> BoxFuture<'static, Attempt> + Send + Sync>;
/// `n` orders as one pipeline on an app server (strategies whose order is one command).
type BatchFn =
    Arc<dyn Fn(u32, OrderTerms, usize) -> BoxFuture<'static, Vec<Attempt>> + Send + Sync>;
/// Answers "can the run go on?": `None` when a fresh connection reaches the store and the
/// run's stock is still there, else why not.
type ProbeFn = Box<dyn Fn() -> BoxFuture<'static, Option<String>> + Send + Sync>;

/// How long the outage probe waits for a fresh connection to answer.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// A run's stock on its shelf, and its app servers' connections, ready for buyers.
pub struct Arena {
    shelf: Shelf,
    buy: BuyFn,
    /// `Some` when the strategy can send several orders in one pipeline (`bench --pipeline`).
    buy_batch: Option<BatchFn>,
    probe: ProbeFn,
    redis_fleet: Vec<RedisConn>,
    /// `redlock`'s lock masters, and every app server's connections to them (counted with
    /// the fleet's); `None` for every other strategy.
    lock_service: Option<(LockService, Vec<RedisConn>)>,
    app_servers: u32,
    /// On a Redis Cluster, the node serving each stock counter (the counter, or each
    /// bucket), from the slot map read as the run started; empty otherwise.
    nodes: Vec<Option<String>>,
}

impl Arena {
    /// Put `stock` units on the shelf the strategy uses, prepare the strategy, and open
    /// `app_servers` connections of the kind it needs. Cleans up after itself on failure.
    ///
    /// The one place a strategy's backend meets connections: each arm pairs the strategy's
    /// typed buy function with connections of exactly its type.
    pub async fn set_up(
        backends: &Backends,
        strategy: &'static Strategy,
        run_id: &str,
        stock: u32,
        app_servers: u32,
    ) -> Result<Arena, RunError> {
        Self::set_up_gated(backends, strategy, run_id, stock, app_servers, &[]).await
    }

    /// [`Arena::set_up`], with a turnstile on each app server's connection (step-through
    /// mode: app server `k` gets `turnstiles[k]`). A strategy whose
    /// [`Strategy::step_refusal`] says why cannot be stepped.
    pub async fn set_up_gated(
        backends: &Backends,
        strategy: &'static Strategy,
        run_id: &str,
        stock: u32,
        app_servers: u32,
        turnstiles: &[Arc<Turnstile>],
    ) -> Result<Arena, RunError> {
        let setup = RunError::Setup;
        if let Some(why) = strategy.step_refusal().filter(|_| !turnstiles.is_empty()) {
            return Err(setup(ShelfError::NotSteppable(why)));
        }
        let (shelf, wired) = match strategy.backend {
            Backend::SharedRedis(s) => {
                let mut shelf = RedisShelf::stock(backends, run_id, s.layout(), stock)
                    .await
                    .map_err(setup)?;
                let wired = match preload(strategy, &mut shelf).await {
                    Ok(()) => shared_redis(backends, s, &mut shelf, app_servers, turnstiles).await,
                    Err(e) => Err(e),
                };
                (Shelf::Redis(shelf), wired)
            }
            Backend::ExclusiveRedis(s) => {
                let mut shelf = RedisShelf::stock(backends, run_id, StockLayout::Counter, stock)
                    .await
                    .map_err(setup)?;
                let wired = match preload(strategy, &mut shelf).await {
                    Ok(()) => {
                        exclusive_redis(backends, s, &mut shelf, app_servers, turnstiles).await
                    }
                    Err(e) => Err(e),
                };
                (Shelf::Redis(shelf), wired)
            }
            Backend::QuorumRedis(s) => {
                let mut shelf = RedisShelf::stock(backends, run_id, StockLayout::Counter, stock)
                    .await
                    .map_err(setup)?;
                let wired = match preload(strategy, &mut shelf).await {
                    Ok(()) => quorum_redis(backends, s, &shelf, app_servers).await,
                    Err(e) => Err(e),
                };
                (Shelf::Redis(shelf), wired)
            }
            Backend::Postgres(s) => {
                let shelf = PgShelf::stock(backends, run_id, stock)
                    .await
                    .map_err(setup)?;
                let wired = postgres(backends, s, &shelf, app_servers).await;
                (Shelf::Postgres(shelf), wired)
            }
        };
        match wired {
            Ok(Wiring {
                buy,
                buy_batch,
                fleet: redis_fleet,
                lock_service,
            }) => Ok(Arena {
                probe: probe_for(backends, &shelf),
                nodes: match &shelf {
                    Shelf::Redis(s) => stock::serving_nodes(&s.admin, &s.keys),
                    Shelf::Postgres(_) => Vec::new(),
                },
                shelf,
                buy,
                buy_batch,
                redis_fleet,
                lock_service,
                app_servers,
            }),
            Err(e) => {
                let mut shelf = shelf;
                let _ = shelf.clear().await;
                Err(RunError::Setup(e))
            }
        }
    }

    /// Place one order on app server `app_server` (taken modulo the number of app servers).
    pub fn buy(&self, app_server: u32, line: OrderTerms) -> BoxFuture<'static, Attempt> {
        (self.buy)(app_server % self.app_servers, line)
    }

    /// Place `n` orders in one pipeline on app server `app_server`: `None` when the
    /// strategy's order is not one command (see [`Strategy::pipeline_refusal`]).
    pub fn buy_batch(
        &self,
        app_server: u32,
        line: OrderTerms,
        n: usize,
    ) -> Option<BoxFuture<'static, Vec<Attempt>>> {
        let batch = self.buy_batch.as_ref()?;
        Some(batch(app_server % self.app_servers, line, n))
    }

    /// `None` when the run can go on: a fresh connection reaches the store within a second,
    /// the run's stock is still there, and at least one app server's connection still works.
    /// A buyer whose connection broke does not mean the store is gone (one app server's
    /// connection can be killed); this tells the cases apart. A Redis that restarted between
    /// the break and this check answers, but has lost the stock, so the run ends all the same.
    pub async fn lost(&self) -> Option<String> {
        if !self.redis_fleet.is_empty() && self.redis_fleet.iter().all(RedisConn::is_broken) {
            return Some("every app server's connection to Redis is lost".into());
        }
        (self.probe)().await
    }

    /// On a Redis Cluster, the `host:port` of the node that serves the counter a buyer took
    /// from: bucket `bucket` for `sharded`, the run's one counter otherwise. `None` on a
    /// single Redis, for PostgreSQL, and for a `sharded` buyer that names no bucket (its
    /// first request failed, so we cannot say which node it reached).
    pub fn node_for(&self, bucket: Option<u32>) -> Option<String> {
        match (bucket, self.nodes.as_slice()) {
            (Some(i), nodes) => nodes.get(i as usize).cloned().flatten(),
            (None, [counter]) => counter.clone(),
            (None, _) => None,
        }
    }

    /// The run's Redis keys (`None` for a PostgreSQL run).
    pub fn redis_keys(&self) -> Option<&crate::store::RunKeys> {
        match &self.shelf {
            Shelf::Redis(shelf) => Some(&shelf.keys),
            Shelf::Postgres(_) => None,
        }
    }

    /// Requests the buyers' Redis connections have sent so far (0 for PostgreSQL runs),
    /// `redlock`'s to its lock masters included.
    pub fn redis_requests_sent(&self) -> u64 {
        let lock_fleet = self.lock_service.iter().flat_map(|(_, conns)| conns);
        self.redis_fleet
            .iter()
            .chain(lock_fleet)
            .map(RedisConn::requests_sent)
            .sum()
    }

    /// Read the stock back and clear the shelf (even when the read failed; Redis keys' TTL
    /// covers the case where clearing fails too).
    pub async fn finish(mut self, backends: &Backends, run_id: &str) -> Result<i64, ShelfError> {
        drop(self.buy);
        if let Some((service, conns)) = self.lock_service.take() {
            drop(conns);
            service.stop().await;
        }
        let final_stock = self.shelf.read_back(backends).await;
        if let Err(e) = self.shelf.clear().await {
            tracing::warn!(run_id, error = %e, "could not delete the run's stock; Redis keys expire on their own");
        }
        final_stock
    }
}

/// A strategy's buy function and the connections it was given.
struct Wiring {
    buy: BuyFn,
    buy_batch: Option<BatchFn>,
    /// The app servers' connections to the stock's Redis (empty for PostgreSQL).
    fleet: Vec<RedisConn>,
    /// `redlock`'s lock service and the connections to it.
    lock_service: Option<(LockService, Vec<RedisConn>)>,
}

impl Wiring {
    fn new(buy: BuyFn, fleet: Vec<RedisConn>) -> Self {
        Wiring {
            buy,
            buy_batch: None,
            fleet,
            lock_service: None,
        }
    }
}

type Wired = Result<Wiring, ShelfError>;

fn probe_for(backends: &Backends, shelf: &Shelf) -> ProbeFn {
    match shelf {
        Shelf::Redis(shelf) => {
            let (store, keys) = (backends.redis.clone(), shelf.keys.clone());
            Box::new(move || {
                let (store, keys) = (store.clone(), keys.clone());
                Box::pin(async move { probe_redis(&store, &keys).await })
            })
        }
        Shelf::Postgres(_) => {
            let db = backends.postgres.clone().ok();
            Box::new(move || {
                let db = db.clone();
                Box::pin(async move {
                    let db = db?;
                    match tokio::time::timeout(PROBE_TIMEOUT, db.connect()).await {
                        Ok(Ok(_)) => None,
                        Ok(Err(e)) => Some(e.short()),
                        Err(_) => Some("PostgreSQL did not answer a fresh connection".into()),
                    }
                })
            })
        }
    }
}

/// The outage probe of a run whose stock is in Redis: `None` when a fresh connection reads
/// the run's stock within [`PROBE_TIMEOUT`], else why the run cannot go on. The race and the
/// checkout both ask it, so they give up on Redis for the same reasons.
pub async fn probe_redis(store: &Store, keys: &RunKeys) -> Option<String> {
    let read = async {
        let mut conn = store.connect().await?;
        stock::read_back(&mut conn, keys).await
    };
    match tokio::time::timeout(PROBE_TIMEOUT, read).await {
        Ok(Ok(Reading::Units(_))) => None,
        Ok(Ok(Reading::Missing(key))) => Some(format!(
            "the stock ({key}) is gone: Redis restarted or was flushed mid-run"
        )),
        Ok(Ok(Reading::NotInteger { key, .. })) => {
            Some(format!("the stock ({key}) no longer holds a number"))
        }
        Ok(Err(e)) => Some(e.short()),
        Err(_) => Some(format!(
            "Redis did not answer a fresh connection within {} s",
            PROBE_TIMEOUT.as_secs()
        )),
    }
}

/// `SCRIPT LOAD` the scripts the strategy says it runs, so its first buyers find them cached
/// (a Function library is the strategy's own `prepare`'s business).
async fn preload(strategy: &Strategy, shelf: &mut RedisShelf) -> Result<(), ShelfError> {
    for name in strategy.about.scripts.iter() {
        if let Some(file) = scripts::by_name(name).filter(|f| !f.is_library()) {
            scripts::preload(&mut shelf.admin, file).await?;
        }
    }
    Ok(())
}

/// The app servers' connections, each behind its turnstile when there are some.
async fn fleet(
    backends: &Backends,
    shelf: &RedisShelf,
    app_servers: u32,
    turnstiles: &[Arc<Turnstile>],
) -> Result<Vec<RedisConn>, ShelfError> {
    let fleet = backends
        .redis
        .connect_fleet(shelf.run_id(), app_servers)
        .await?;
    Ok(match turnstiles {
        [] => fleet,
        gates => fleet
            .into_iter()
            .zip(gates)
            .map(|(conn, gate)| conn.with_turnstile(gate.clone()))
            .collect(),
    })
}

/// A pipelined connection per app server, cloned into each buyer.
async fn shared_redis(
    backends: &Backends,
    strategy: &'static dyn RedisBuyer,
    shelf: &mut RedisShelf,
    app_servers: u32,
    turnstiles: &[Arc<Turnstile>],
) -> Wired {
    strategy.prepare(&mut shelf.admin).await?;
    let fleet = fleet(backends, shelf, app_servers, turnstiles).await?;
    let (links, keys) = (Arc::new(fleet.clone()), Arc::new(shelf.keys.clone()));
    let buy_batch = strategy.batch().map(|batcher| {
        let (links, keys) = (links.clone(), keys.clone());
        let batch: BatchFn = Arc::new(move |app_server, line, n| {
            let (conn, keys) = (links[app_server as usize].clone(), keys.clone());
            Box::pin(async move { batcher.buy_batch(conn, order(&keys, line), n).await })
        });
        batch
    });
    let buy: BuyFn = Arc::new(move |app_server, line| {
        let (conn, keys) = (links[app_server as usize].clone(), keys.clone());
        Box::pin(async move { strategy.buy(conn, order(&keys, line)).await })
    });
    Ok(Wiring {
        buy_batch,
        ..Wiring::new(buy, fleet)
    })
}

/// A connection per app server that one buyer at a time locks.
async fn exclusive_redis(
    backends: &Backends,
    strategy: &'static dyn ExclusiveRedisBuyer,
    shelf: &mut RedisShelf,
    app_servers: u32,
    turnstiles: &[Arc<Turnstile>],
) -> Wired {
    let fleet = fleet(backends, shelf, app_servers, turnstiles).await?;
    let links: Arc<Vec<Arc<Mutex<RedisConn>>>> = Arc::new(
        fleet
            .iter()
            .map(|c| Arc::new(Mutex::new(c.clone())))
            .collect(),
    );
    let keys = Arc::new(shelf.keys.clone());
    let buy: BuyFn = Arc::new(move |app_server, line| {
        let (link, keys) = (links[app_server as usize].clone(), keys.clone());
        Box::pin(async move { strategy.buy(&link, order(&keys, line)).await })
    });
    Ok(Wiring::new(buy, fleet))
}

/// `redlock`: the run's lock masters, and a seat per app server (its stock connection and
/// one connection to each master) that one buyer at a time locks.
async fn quorum_redis(
    backends: &Backends,
    strategy: &'static dyn QuorumRedisBuyer,
    shelf: &RedisShelf,
    app_servers: u32,
) -> Wired {
    let service = LockService::for_run(&backends.lock_masters).await?;
    service.preload(&scripts::RELEASE_LOCK).await?;
    let fleet = fleet(backends, shelf, app_servers, &[]).await?;
    let seats =
        (0..app_servers).map(|k| service.connect_seat(shelf.run_id(), k, QUORUM_VOTE_TIMEOUT));
    let to_masters = futures_util::future::try_join_all(seats).await?;
    let lock_fleet: Vec<RedisConn> = to_masters.iter().flatten().cloned().collect();
    let seats: Arc<Vec<Arc<Mutex<QuorumSeat>>>> = Arc::new(
        fleet
            .iter()
            .zip(to_masters)
            .map(|(stock, masters)| {
                let stock = stock.clone();
                Arc::new(Mutex::new(QuorumSeat { stock, masters }))
            })
            .collect(),
    );
    let keys = Arc::new(shelf.keys.clone());
    let buy: BuyFn = Arc::new(move |app_server, line| {
        let (seat, keys) = (seats[app_server as usize].clone(), keys.clone());
        Box::pin(async move { strategy.buy(&seat, order(&keys, line)).await })
    });
    Ok(Wiring {
        lock_service: Some((service, lock_fleet)),
        ..Wiring::new(buy, fleet)
    })
}

/// A PostgreSQL connection per app server that one buyer at a time locks.
async fn postgres(
    backends: &Backends,
    strategy: &'static dyn PostgresBuyer,
    shelf: &PgShelf,
    app_servers: u32,
) -> Wired {
    let db = backends
        .postgres
        .as_ref()
        .map_err(|why| ShelfError::NoPostgres(why.clone()))?;
    let conns = futures_util::future::try_join_all((0..app_servers).map(|_| db.connect())).await?;
    let links: Arc<Vec<Arc<Mutex<PgConn>>>> =
        Arc::new(conns.into_iter().map(|c| Arc::new(Mutex::new(c))).collect());
    let row = Arc::new(shelf.row.clone());
    let buy: BuyFn = Arc::new(move |app_server, line| {
        let (link, row) = (links[app_server as usize].clone(), row.clone());
        Box::pin(async move { strategy.buy(&link, order(&row, line)).await })
    });
    Ok(Wiring::new(buy, Vec::new()))
}

fn order<S>(shelf: &S, line: OrderTerms) -> Order<'_, S> {
    Order {
        shelf,
        qty: line.qty,
        race_window: line.race_window,
        ticket: line.ticket,
        by_hand: line.by_hand,
    }
}

/// Run one race to completion (or cancellation), keeping every outcome. `config` must
/// already be validated.
pub async fn run(
    backends: &Backends,
    strategy: &'static Strategy,
    config: &RunConfig,
    run_id: &str,
    sink: Option<EventSink>,
    cancel: CancellationToken,
) -> Result<RunReport, RunError> {
    run_keeping(
        backends,
        strategy,
        config,
        run_id,
        (sink, Keep::Outcomes),
        cancel,
    )
    .await
}

/// [`run`], keeping what `keep` asks for: with [`Keep::Summary`] no outcome is kept (the
/// report's `outcomes` is empty), only the tally.
pub async fn run_keeping(
    backends: &Backends,
    strategy: &'static Strategy,
    config: &RunConfig,
    run_id: &str,
    (sink, keep): (Option<EventSink>, Keep),
    cancel: CancellationToken,
) -> Result<RunReport, RunError> {
    let race_config = &config.race;
    if race_config.knobs != Knobs::Race {
        return Err(RunError::WrongScenario {
            strategy: strategy.name().to_string(),
            expected: Scenario::Race,
            got: race_config.scenario(),
        });
    }
    let arena = Arena::set_up(
        backends,
        strategy,
        run_id,
        race_config.stock,
        race_config.app_servers,
    )
    .await?;
    let arena = Arc::new(arena);
    let lost = Arc::new(std::sync::OnceLock::new());
    let (tally, outcomes) = race(&arena, config, (sink, keep), cancel, lost.clone()).await;
    let arena = Arc::into_inner(arena).expect("every buyer task has ended");
    let redis_requests = arena.redis_requests_sent();
    let final_stock = arena.finish(backends, run_id).await;
    if let Some(why) = lost.get() {
        return Err(RunError::StoreLost {
            why: String::clone(why),
            ran: tally.len(),
            buyers: race_config.buyers,
        });
    }
    let final_stock = final_stock.map_err(RunError::ReadBack)?;
    Ok(RunReport {
        run_id: run_id.to_string(),
        summary: tally.summary(config, final_stock),
        outcomes,
        redis_requests,
    })
}

/// Release the buyers and wait for all of them: their tally, and their outcomes when `keep`
/// asks for them. When a buyer reports its connection lost, the arena probes the store with
/// a fresh connection: if that fails too, the store is gone, `lost` records why, and no more
/// buyers are released. (If it answers, only that app server's connection died; its buyers
/// fail, the others go on.)
async fn race(
    arena: &Arc<Arena>,
    config: &RunConfig,
    (sink, keep): (Option<EventSink>, Keep),
    cancel: CancellationToken,
    lost: Arc<std::sync::OnceLock<String>>,
) -> (Tally, Vec<BuyerOutcome>) {
    let (gate, turn) = StartGate::new();
    let race_window = Duration::from_millis(u64::from(config.race.race_window_ms));
    // Stops releasing buyers: cancelled by the caller, or by an outage.
    let stop = cancel.child_token();
    let (outage, mut outages) = mpsc::unbounded_channel::<String>();
    // Earliest first, so the buyers waiting for a slot are the ones due last (stable: at
    // one arrival time, buyer order).
    let mut crowd = plan(&config.race);
    crowd.sort_by_key(|b| b.arrival);
    let mut crowd = crowd.into_iter();
    let mut buyers = JoinSet::new();
    let spawn = |buyers: &mut JoinSet<_>, plan: BuyerPlan| {
        let buyer = Buyer {
            plan,
            arena: Arc::clone(arena),
            race_window,
            sink: sink.clone(),
            stop: stop.clone(),
            outage: outage.clone(),
        };
        buyers.spawn(buyer.run(turn.clone()));
    };
    let slots = in_flight(config.race.buyers, config.race.app_servers);
    for plan in crowd.by_ref().take(slots) {
        spawn(&mut buyers, plan);
    }
    gate.open().await;

    let buyers_total = config.race.buyers as usize;
    let mut tally = Tally::with_capacity(buyers_total);
    let mut outcomes = match keep {
        Keep::Outcomes => Vec::with_capacity(buyers_total),
        Keep::Summary => Vec::new(),
    };
    let mut last_probe: Option<Instant> = None;
    loop {
        tokio::select! {
            joined = buyers.join_next() => {
                match joined {
                    Some(Ok(Some(outcome))) => {
                        tally.add(&outcome);
                        if keep == Keep::Outcomes {
                            outcomes.push(outcome);
                        }
                    }
                    Some(Ok(None)) => {} // skipped: the run stopped before this buyer arrived
                    Some(Err(e)) => tracing::error!(error = %e, "a buyer task panicked"),
                    None => break,
                }
                // A slot is free: the next buyer in arrival order takes it, unless the run
                // has stopped (then the rest are skipped, as if they never arrived).
                if !stop.is_cancelled()
                    && let Some(plan) = crowd.next()
                {
                    spawn(&mut buyers, plan);
                }
            },
            Some(why) = outages.recv(), if lost.get().is_none() => {
                // Many buyers report the same broken connection at once: probe at most
                // every PROBE_TIMEOUT.
                if last_probe.is_some_and(|t| t.elapsed() < PROBE_TIMEOUT) {
                    continue;
                }
                last_probe = Some(Instant::now());
                if let Some(gone) = arena.lost().await {
                    let why = format!("{gone}; the first buyer to notice: {why}");
                    if lost.set(why).is_ok() {
                        tracing::warn!(reason = gone, "the run cannot go on: releasing no more buyers");
                        stop.cancel();
                    }
                }
            }
        }
    }
    (tally, outcomes)
}

/// One buyer task's inputs.
struct Buyer {
    plan: BuyerPlan,
    arena: Arc<Arena>,
    race_window: Duration,
    sink: Option<EventSink>,
    stop: CancellationToken,
    outage: mpsc::UnboundedSender<String>,
}

impl Buyer {
    /// Wait for the gate and the arrival time, place the order, report. `None` if the run
    /// stopped first.
    async fn run(self, turn: Turn) -> Option<BuyerOutcome> {
        let opened = turn.arrive(self.plan.arrival, &self.stop).await?;
        let line = OrderTerms {
            qty: self.plan.qty,
            race_window: self.race_window,
            ticket: self.plan.ticket,
            by_hand: false,
        };
        let (outcome, outage) = buy_once(
            &self.arena,
            self.plan.buyer,
            self.plan.app_server,
            line,
            opened,
        )
        .await;
        if let Some(why) = outage {
            let _ = self.outage.send(why);
        }
        tell(&self.sink, Event::Outcome(outcome.clone()));
        Some(outcome)
    }
}

/// One order, now, on app server `app_server`, bounded by the buyer deadline: the outcome
/// (times measured from `opened`), and the error when the buyer found the store unreachable
/// (the caller decides whether the run can go on). The race's buyers and a room's phones
/// both buy through here.
pub async fn buy_once(
    arena: &Arena,
    buyer: u32,
    app_server: u32,
    line: OrderTerms,
    opened: Instant,
) -> (BuyerOutcome, Option<String>) {
    let started = Instant::now();
    let deadline = BUYER_DEADLINE + line.race_window;
    let attempt = tokio::time::timeout(deadline, arena.buy(app_server, line))
        .await
        .unwrap_or_else(|_| {
            Attempt::timed_out(format!("no answer within {} s", deadline.as_secs()))
        });
    let outage = attempt
        .outage
        .then(|| attempt.error.clone().unwrap_or_default());
    let ended = Instant::now();
    let outcome = BuyerOutcome {
        buyer,
        app_server: app_server % arena.app_servers,
        qty: line.qty,
        observed_stock: attempt.observed_stock,
        result: attempt.result,
        error: attempt.error,
        stock_after: attempt.stock_after,
        latency_us: micros(ended - started),
        start_us: micros(started.saturating_duration_since(opened)),
        end_us: micros(ended.saturating_duration_since(opened)),
        read_us: attempt
            .read_at
            .map(|t| micros(t.saturating_duration_since(opened))),
        round_trips: attempt.round_trips,
        retries: attempt.retries,
        node: arena.node_for(attempt.bucket),
        bucket: attempt.bucket,
        checkout: None,
        cart: None,
        epoch: None,
    };
    (outcome, outage)
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
