//! Running one `durability` sale: ordinary `lua` buyers on a `redis-server` the run starts
//! for itself with one persistence setting, a `SIGKILL` mid-sale, and a restart from the
//! server's own directory.
//!
//! # Layout
//! - this file: [`run`]: start the run's own Redis with the strategy's persistence, stock
//!   it, measure the setting's throughput with a short closed-loop [`burst`], take the set-up
//!   snapshot (`rdb`), release the buyers at their seeded arrivals; meanwhile the [`crash`]
//!   (on `rdb`, a `BGSAVE` first), then read the stock back and tally what was lost.
//! - [`report`]: the CLI's table and scoreboard.
//!
//! The run's Redis is never the shared one: only a server this run started may be killed.
//! It is stopped when the run ends (and dies with the process).
//!
//! # What counts as lost
//! Persistence keeps a prefix of the commands Redis ran: a snapshot is the data at one
//! moment, an AOF the commands up to some point. `reserve.lua` answers each sale with the
//! counter it left, and the counter only falls while selling, so an acknowledged order is
//! in the restarted Redis exactly when the counter it left is at or above the counter Redis
//! loaded. An order acknowledged before the crash whose `after` is below it is *acknowledged
//! and lost*; a stock key that did not come back at all loses every one. Nothing is
//! inferred from the setting: the count comes from the replies and the value read back.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use oversold_protocol::{
    BuyerOutcome, DurabilityTally, Epoch, OutcomeResult, Persistence, RunConfig, Scenario,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::sync::RwLock;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::backends::Backends;
use crate::gate::{StartGate, Turn};
use crate::plan::{self, BuyerPlan, CallAnswer};
use crate::private_redis::{ExtraConfig, PrivateRedis};
use crate::run::{Event, EventSink, RunError, RunReport, tell};
use crate::shelf::ShelfError;
use crate::store::durability::{self, DurabilityKeys};
use crate::store::{RedisConn, Store, scripts, stock};
use crate::strategy::durability::DurabilityStrategy;

pub mod report;

/// The longest one buyer may take; past it, its answer is `unknown`.
const BUYER_DEADLINE: Duration = Duration::from_secs(10);
/// How long the throughput burst lasts.
pub const BURST: Duration = Duration::from_millis(300);
/// The burst's own counter: more than any burst can take.
const BURST_STOCK: u32 = 10_000_000;
/// How long the mid-sale `BGSAVE` may take before the run gives up on it.
const BGSAVE_LIMIT: Duration = Duration::from_secs(5);

/// When things happen in a sale, ms after the gate opens, drawn from the seed (a stream of
/// its own, so the buyers' plan is the same as every other scenario's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moments {
    /// The mid-sale snapshot (`rdb` only): between 15% and 30% of the arrival spread.
    pub snapshot: Duration,
    /// The `SIGKILL`: between 45% and 65% of the arrival spread, so buyers have bought
    /// before it (and on `rdb`, after the snapshot) and more arrive after it.
    pub crash: Duration,
}

/// The seeded moments of `config`'s sale.
pub fn moments(config: &RunConfig) -> Moments {
    let mut rng = ChaCha8Rng::seed_from_u64(config.race.seed ^ 0x6475_7261_626c_6521);
    let spread = u64::from(config.race.arrival_spread_ms);
    let mut at = |lo: u64, hi: u64| {
        Duration::from_millis(rng.random_range(spread * lo / 100..=spread * hi / 100))
    };
    let snapshot = at(15, 30);
    let crash = at(45, 65);
    Moments { snapshot, crash }
}

/// The buyers' connections, and the life of the counter they reach (0 before the crash, from
/// the stock; 1 after the restart, from what Redis loaded): each outcome carries it, so the
/// tape orders each life on its own.
struct Fleet {
    life: Epoch,
    conns: Vec<RedisConn>,
}

/// Run one `durability` sale to its end (or cancellation). `config` must be validated and be
/// a `durability` config. `_backends` is not used: the run brings its own Redis.
pub async fn run(
    _backends: &Backends,
    strategy: &'static DurabilityStrategy,
    config: &RunConfig,
    run_id: &str,
    sink: Option<EventSink>,
    cancel: CancellationToken,
) -> Result<RunReport, RunError> {
    if config.race.scenario() != Scenario::Durability {
        return Err(RunError::WrongScenario {
            strategy: config.strategy.clone(),
            expected: Scenario::Durability,
            got: config.race.scenario(),
        });
    }
    let persistence = strategy.persistence;
    let redis = start_own_redis(persistence).await?;
    let store = Store::open(&redis.url()).map_err(|e| RunError::Setup(e.into()))?;
    let keys = DurabilityKeys::new(run_id);
    let (admin, fleet) = set_up(&store, config, run_id, &keys)
        .await
        .map_err(RunError::Setup)?;
    let burst = burst(&fleet, &keys).await.map_err(RunError::Setup)?;
    let burst_sent: u64 = fleet.iter().map(RedisConn::requests_sent).sum();
    if persistence == Persistence::Rdb {
        let mut admin = admin.clone();
        durability::save(&mut admin)
            .await
            .map_err(|e| RunError::Setup(e.into()))?;
    }
    let fleet = Arc::new(RwLock::new(Fleet {
        life: Epoch {
            n: 0,
            began_at: Some(i64::from(config.race.stock)),
            evicted: false,
        },
        conns: fleet,
    }));
    let crash = Crash {
        redis: Arc::new(Mutex::new(redis)),
        store: store.clone(),
        fleet: fleet.clone(),
        admin,
        keys: keys.clone(),
        run_id: run_id.to_string(),
        persistence,
        moments: moments(config),
    };
    let redis = crash.redis.clone();
    let (outcomes, crashed) = sale(config, &keys, &fleet, crash, sink, cancel).await;
    let new_sent: u64 = fleet
        .read()
        .await
        .conns
        .iter()
        .map(RedisConn::requests_sent)
        .sum();
    let redis_requests = crashed.old_fleet_sent.saturating_sub(burst_sent) + new_sent;
    let read = read_back(&store, &keys).await;
    drop(redis); // the run's Redis stops with its last handle
    if let Some(why) = crashed.failed.clone() {
        return Err(RunError::ReadBack(ShelfError::OwnRedis(why)));
    }
    let final_stock = read.map_err(RunError::ReadBack)?;
    let tally = tally(&outcomes, &crashed, persistence, burst);
    let mut summary = crate::summary::summarize(config, &outcomes, final_stock);
    summary.durability = Some(Box::new(tally));
    Ok(RunReport {
        run_id: run_id.to_string(),
        summary,
        outcomes,
        redis_requests,
    })
}

/// The `redis-server` arguments for `persistence`, on top of a private Redis's defaults
/// (`save ""`, `appendonly no`: nothing on disk).
pub fn redis_args(persistence: Persistence) -> Vec<String> {
    let args: &[&str] = match persistence {
        // Snapshots only when the run asks (SAVE at set-up, BGSAVE mid-sale), so "the last
        // snapshot" is a moment the run knows.
        Persistence::None => &[],
        Persistence::Rdb => &["--dbfilename", "durability.rdb"],
        Persistence::AofEverysec => &["--appendonly", "yes", "--appendfsync", "everysec"],
        Persistence::AofAlways => &["--appendonly", "yes", "--appendfsync", "always"],
    };
    args.iter().map(|a| a.to_string()).collect()
}

/// The run's own `redis-server`: loopback, a free port, the setting's persistence in its
/// own directory, which a restart loads from.
async fn start_own_redis(persistence: Persistence) -> Result<PrivateRedis, RunError> {
    let extra = ExtraConfig {
        args: redis_args(persistence),
        ..ExtraConfig::default()
    };
    tokio::task::spawn_blocking(move || PrivateRedis::start_with(extra))
        .await
        .map_err(|e| RunError::Setup(ShelfError::OwnRedis(e.to_string())))?
        .map_err(|e| RunError::Setup(ShelfError::OwnRedis(e.to_string())))
}

/// Stock on the shelf, the burst's counter, `reserve.lua` cached; the admin's connection
/// and the buyers'.
async fn set_up(
    store: &Store,
    config: &RunConfig,
    run_id: &str,
    keys: &DurabilityKeys,
) -> Result<(RedisConn, Vec<RedisConn>), ShelfError> {
    let mut admin = store
        .connect_named(&format!("oversold:{run_id}:admin"))
        .await?;
    stock::init(&mut admin, keys.run(), config.race.stock).await?;
    stock::init(&mut admin, keys.burst(), BURST_STOCK).await?;
    scripts::preload(&mut admin, &scripts::RESERVE).await?;
    let fleet = store.connect_fleet(run_id, config.race.app_servers).await?;
    Ok((admin, fleet))
}

/// What the closed-loop burst measured.
#[derive(Debug, Clone, Copy, Default)]
pub struct Burst {
    /// Reserves a second.
    pub ops_per_s: u64,
    /// 99th-percentile latency, µs.
    pub p99_us: u64,
    /// Connections it ran on.
    pub connections: u32,
}

/// Every app server's connection reserves one unit at a time from the burst's counter, each
/// as soon as its last answer arrived, for [`BURST`]: what this persistence setting lets
/// Redis sell a second on this machine (`aof_always` waits for the disk in every round).
async fn burst(fleet: &[RedisConn], keys: &DurabilityKeys) -> Result<Burst, ShelfError> {
    let key = keys.burst().stock_key().to_string();
    let started = Instant::now();
    let deadline = started + BURST;
    let mut tasks = JoinSet::new();
    for conn in fleet {
        let (mut conn, key) = (conn.clone(), key.clone());
        tasks.spawn(async move {
            let mut latencies = Vec::new();
            while Instant::now() < deadline {
                let t = Instant::now();
                stock::reserve(&mut conn, &key, 1)
                    .await
                    .map_err(|f| f.error)?;
                latencies.push(t.elapsed().as_micros() as u64);
            }
            Ok::<_, crate::store::StoreError>(latencies)
        });
    }
    let mut all = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(Ok(l)) => all.extend(l),
            Ok(Err(e)) => return Err(e.into()),
            Err(e) => return Err(ShelfError::OwnRedis(format!("burst task: {e}"))),
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.sort_unstable();
    let p99_us = match all.len() {
        0 => 0,
        n => all[(n * 99 / 100).min(n - 1)],
    };
    Ok(Burst {
        ops_per_s: (all.len() as f64 / elapsed).round() as u64,
        p99_us,
        connections: fleet.len() as u32,
    })
}

/// The crash, waiting for its moment: the run's Redis, the connections it replaces, and the
/// admin's connection (for `rdb`'s mid-sale `BGSAVE`).
struct Crash {
    redis: Arc<Mutex<PrivateRedis>>,
    store: Store,
    fleet: Arc<RwLock<Fleet>>,
    admin: RedisConn,
    keys: DurabilityKeys,
    run_id: String,
    persistence: Persistence,
    moments: Moments,
}

/// What the crash did, with times relative to the gate's opening.
#[derive(Debug, Clone, Default)]
struct Crashed {
    snapshot_at: Option<Duration>,
    killed_at: Option<Duration>,
    down: Duration,
    /// The stock counter as the restarted Redis loaded it; `None` when the key was gone.
    restored: Option<i64>,
    /// Requests sent on the connections the crash replaced.
    old_fleet_sent: u64,
    /// Why the restart (or the snapshot) failed, if it did.
    failed: Option<String>,
}

impl Crash {
    /// Wait for the moments; on `rdb`, snapshot; then kill Redis, restart it from its
    /// directory, read what it loaded, and hand the buyers new connections.
    async fn strike(mut self, turn: Turn, stop: CancellationToken) -> Crashed {
        let mut seen = Crashed::default();
        if self.persistence == Persistence::Rdb {
            let Some(opened) = turn.clone().arrive(self.moments.snapshot, &stop).await else {
                return seen;
            };
            match durability::background_save(&mut self.admin, BGSAVE_LIMIT).await {
                Ok(()) => seen.snapshot_at = Some(opened.elapsed()),
                Err(e) => {
                    seen.failed = Some(format!("the mid-sale BGSAVE failed: {e}"));
                    return seen;
                }
            }
        }
        let Some(opened) = turn.arrive(self.moments.crash, &stop).await else {
            return seen;
        };
        // Buyers wait for the new connections rather than fail on a closed port; a request
        // already on its way dies with the process (its answer is `unknown`).
        let mut fleet = self.fleet.write().await;
        let killed = Instant::now();
        seen.killed_at = Some(killed.saturating_duration_since(opened));
        let redis = self.redis.clone();
        let restarted = tokio::task::spawn_blocking(move || {
            let mut redis = redis.lock().unwrap_or_else(|p| p.into_inner());
            // `Child::kill`: SIGKILL. No final save, no goodbye: a crash.
            redis.stop();
            redis.restart()
        })
        .await;
        match restarted {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                seen.failed = Some(format!("the run's Redis did not restart: {e}"));
                return seen;
            }
            Err(e) => {
                seen.failed = Some(format!("the restart task failed: {e}"));
                return seen;
            }
        }
        tracing::info!(run_id = %self.run_id, persistence = self.persistence.as_str(), "the run's Redis was killed and restarted");
        let restored = async {
            let mut conn = self.store.connect().await?;
            stock::get(&mut conn, self.keys.run()).await
        };
        match restored.await {
            Ok(value) => seen.restored = value,
            Err(e) => {
                seen.failed = Some(format!("the restarted Redis did not answer: {e}"));
                return seen;
            }
        }
        seen.old_fleet_sent = fleet.conns.iter().map(RedisConn::requests_sent).sum();
        let n = fleet.conns.len() as u32;
        match self.store.connect_fleet(&self.run_id, n).await {
            Ok(fresh) => {
                fleet.conns = fresh;
                fleet.life = Epoch {
                    n: fleet.life.n + 1,
                    began_at: seen.restored,
                    evicted: false,
                };
            }
            Err(e) => seen.failed = Some(format!("no connection to the restarted Redis: {e}")),
        }
        seen.down = killed.elapsed();
        seen
    }
}

/// Release every buyer at its arrival, and the crash at its moment; the outcomes (each
/// with the life of the counter that answered it) and what the crash did.
async fn sale(
    config: &RunConfig,
    keys: &DurabilityKeys,
    fleet: &Arc<RwLock<Fleet>>,
    crash: Crash,
    sink: Option<EventSink>,
    cancel: CancellationToken,
) -> (Vec<BuyerOutcome>, Crashed) {
    let (gate, turn) = StartGate::new();
    let mut buyers = JoinSet::new();
    for plan in plan::plan(&config.race) {
        let (turn, stop) = (turn.clone(), cancel.clone());
        let fleet = fleet.clone();
        let key = keys.run().stock_key().to_string();
        buyers.spawn(async move {
            let opened = turn.arrive(plan.arrival, &stop).await?;
            Some(buy(&plan, opened, &fleet, &key).await)
        });
    }
    let striking = tokio::spawn(crash.strike(turn, cancel.clone()));
    gate.open().await;
    let mut outcomes = Vec::new();
    while let Some(joined) = buyers.join_next().await {
        if let Ok(Some(o)) = joined {
            tell(&sink, Event::Outcome(o.clone()));
            outcomes.push(o);
        }
    }
    let crashed = striking.await.unwrap_or_else(|e| Crashed {
        failed: Some(format!("the crash task failed: {e}")),
        ..Crashed::default()
    });
    (outcomes, crashed)
}

/// One buyer: `reserve.lua` on its app server's current connection; its outcome says which
/// life of the counter that connection reached.
async fn buy(plan: &BuyerPlan, opened: Instant, fleet: &RwLock<Fleet>, key: &str) -> BuyerOutcome {
    let start = Instant::now();
    let (mut conn, life) = {
        let fleet = fleet.read().await;
        let conns = &fleet.conns;
        (
            conns[plan.app_server as usize % conns.len()].clone(),
            fleet.life,
        )
    };
    let reserve = stock::reserve(&mut conn, key, plan.qty);
    let (result, observed, after, error, round_trips) =
        match tokio::time::timeout(BUYER_DEADLINE, reserve).await {
            Ok(Ok(c)) if c.reply.reserved => (
                OutcomeResult::Reserved,
                Some(c.reply.before),
                Some(c.reply.after),
                None,
                c.round_trips,
            ),
            Ok(Ok(c)) => (
                OutcomeResult::SoldOut,
                Some(c.reply.before),
                None,
                None,
                c.round_trips,
            ),
            Ok(Err(f)) => {
                let result = if f.error.in_doubt() {
                    OutcomeResult::Unknown
                } else {
                    OutcomeResult::Error
                };
                (result, None, None, Some(f.error.short()), f.round_trips)
            }
            Err(_) => (
                OutcomeResult::Unknown,
                None,
                None,
                Some(format!("no answer within {} s", BUYER_DEADLINE.as_secs())),
                1,
            ),
        };
    let outcome = plan.outcome(
        CallAnswer {
            result,
            observed,
            after,
            error,
            round_trips,
        },
        opened,
        start,
        Instant::now(),
    );
    BuyerOutcome {
        epoch: Some(life),
        ..outcome
    }
}

/// The stock as the restarted Redis holds it at the end. A key the restart did not bring
/// back reads 0, as `reserve.lua` reads it (and the tally says it was gone).
async fn read_back(store: &Store, keys: &DurabilityKeys) -> Result<i64, ShelfError> {
    let mut conn = store.connect().await?;
    let value = stock::get(&mut conn, keys.run()).await?;
    if let Err(e) = durability::remove_run(&mut conn, keys).await {
        tracing::debug!(error = %e, "could not delete the run's keys; its Redis stops anyway");
    }
    Ok(value.unwrap_or(0))
}

/// The crash's tally: what was acknowledged before it, what the restart loaded, and which
/// acknowledged orders it does not have.
fn tally(
    outcomes: &[BuyerOutcome],
    crashed: &Crashed,
    persistence: Persistence,
    burst: Burst,
) -> DurabilityTally {
    let before: Vec<&BuyerOutcome> = outcomes
        .iter()
        .filter(|o| o.epoch.is_some_and(|e| e.n == 0) && o.result == OutcomeResult::Reserved)
        .collect();
    // The tape marks the same orders lost (`BuyerOutcome::lost_to`).
    let lost: Vec<&&BuyerOutcome> = match crashed.killed_at {
        None => Vec::new(),
        Some(_) => before
            .iter()
            .filter(|o| o.lost_to(crashed.restored))
            .collect(),
    };
    let ms = |d: Duration| d.as_millis() as u32;
    DurabilityTally {
        persistence,
        crash_at_ms: crashed.killed_at.map_or(0, ms),
        snapshot_at_ms: crashed.snapshot_at.map(ms),
        down_ms: crashed.down.as_millis() as u64,
        acknowledged_before_crash: before.len() as u32,
        restored_stock: crashed.restored,
        acknowledged_lost: lost.len() as u32,
        units_lost: lost.iter().map(|o| u64::from(o.qty)).sum(),
        burst_ops_per_s: burst.ops_per_s,
        burst_p99_us: burst.p99_us,
        burst_ms: BURST.as_millis() as u32,
        burst_connections: burst.connections,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oversold_protocol::RunRequest;

    fn config(seed: u64) -> RunConfig {
        RunRequest {
            strategy: Some("rdb".into()),
            scenario: Some(Scenario::Durability),
            seed: Some(seed),
            ..RunRequest::default()
        }
        .validate(0)
        .unwrap()
    }

    #[test]
    fn the_snapshot_comes_before_the_crash_and_both_follow_the_seed() {
        for seed in 1..=50 {
            let m = moments(&config(seed));
            assert!(m.snapshot < m.crash, "seed {seed}: {m:?}");
            assert!(m.snapshot >= Duration::from_millis(300), "{m:?}");
            assert!(m.crash <= Duration::from_millis(1_300), "{m:?}");
            assert_eq!(m, moments(&config(seed)));
        }
        assert_ne!(moments(&config(1)), moments(&config(2)));
    }
}
