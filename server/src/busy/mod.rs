//! Running one `busy_script` sale: ordinary `lua` buyers on a `redis-server` the run starts
//! for itself, one slow client mid-sale, and the server's watchdog.
//!
//! # Layout
//! - this file: [`run`]: start the run's own Redis (`busy-reply-threshold` set low), stock
//!   it and take a snapshot (`SAVE`: what a restart comes back to), release the buyers at
//!   their seeded arrivals with the slow client among them, read the stock back, tally.
//! - [`watchdog`]: `PING`s Redis; stops a job busy past its patience, or restarts Redis.
//! - [`report`]: the CLI's table and scoreboard.
//!
//! The run's Redis is never the shared one: a watchdog's `SHUTDOWN NOSAVE` must only ever
//! end a server this run owns. It is stopped when the run ends (and dies with the process).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use oversold_protocol::{
    BusyTally, BuyerOutcome, Epoch, OutcomeResult, RunConfig, Scenario, SlowJobEnd,
};
use tokio::sync::RwLock;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::backends::Backends;
use crate::gate::StartGate;
use crate::plan::{self, BuyerPlan, CallAnswer};
use crate::private_redis::{ExtraConfig, PrivateRedis};
use crate::run::{Event, EventSink, RunError, RunReport, tell};
use crate::shelf::ShelfError;
use crate::store::busy::{self, BusyKeys};
use crate::store::{RedisConn, Store, StoreError, scripts, stock};
use crate::strategy::busy::{BusyStrategy, SlowClient};

pub mod report;
pub mod watchdog;

use watchdog::{Watchdog, Watched};

/// Redis's `busy-reply-threshold` on the run's own server (Redis 7's name for
/// `lua-time-limit`; the default is 5 s): past it, others get `BUSY`.
pub const BUSY_THRESHOLD_MS: u32 = 100;
/// How long the slow client's job lasts, if nobody stops it.
pub const SLOW_JOB_MS: u32 = 2_500;
/// The longest one buyer may take; past it, its answer is `unknown`.
const BUYER_DEADLINE: Duration = Duration::from_secs(10);

/// When the slow client sends its job: a tenth into the arrivals, so some buyers have
/// bought before it and most arrive during or after it.
pub fn slow_job_at(config: &RunConfig) -> Duration {
    Duration::from_millis(u64::from(config.race.arrival_spread_ms / 10))
}

/// Run one `busy_script` sale to its end (or cancellation). `config` must be validated and
/// be a `busy_script` config. `_backends` is not used: the run brings its own Redis.
pub async fn run(
    _backends: &Backends,
    strategy: &'static BusyStrategy,
    config: &RunConfig,
    run_id: &str,
    sink: Option<EventSink>,
    cancel: CancellationToken,
) -> Result<RunReport, RunError> {
    if config.race.scenario() != Scenario::BusyScript {
        return Err(RunError::WrongScenario {
            strategy: config.strategy.clone(),
            expected: Scenario::BusyScript,
            got: config.race.scenario(),
        });
    }
    let redis = start_own_redis().await?;
    let store = Store::open(&redis.url()).map_err(|e| RunError::Setup(e.into()))?;
    let keys = BusyKeys::new(run_id);
    let redis = Arc::new(Mutex::new(redis));
    let (fleet, watchdog_conn, slow_conn) = set_up(&store, strategy, config, run_id, &keys)
        .await
        .map_err(RunError::Setup)?;
    let fleet = Arc::new(RwLock::new(Fleet {
        conns: fleet,
        life: Epoch {
            n: 0,
            began_at: Some(i64::from(config.race.stock)),
            evicted: false,
        },
    }));
    let watchdog = Watchdog {
        redis: redis.clone(),
        store: store.clone(),
        fleet: fleet.clone(),
        run_id: run_id.to_string(),
        conn: watchdog_conn,
        keys: keys.clone(),
    };
    let sale = Sale {
        config,
        keys: &keys,
        fleet: &fleet,
    };
    let done = CancellationToken::new();
    let watching = tokio::spawn(watchdog.watch(done.clone()));
    let (outcomes, job, sent_at, _opened) =
        sale.run(strategy.client, slow_conn, sink, cancel).await;
    done.cancel();
    let watched = watching.await.unwrap_or_default();
    let redis_requests = fleet
        .read()
        .await
        .conns
        .iter()
        .map(RedisConn::requests_sent)
        .sum();
    // A fresh connection: the set-up's may have died with a restart.
    let read = read_back(&store, &keys).await;
    drop(redis); // the run's Redis stops with the last handle (the watchdog's is gone)
    let final_stock = read.map_err(RunError::ReadBack)?;
    let mut summary = crate::summary::summarize(config, &outcomes, final_stock);
    summary.busy = Some(Box::new(tally(&outcomes, &watched, job, sent_at, config)));
    Ok(RunReport {
        run_id: run_id.to_string(),
        summary,
        outcomes,
        redis_requests,
    })
}

/// The run's own `redis-server`: loopback, a free port, `busy-reply-threshold` low, and a
/// snapshot file it loads when started again.
async fn start_own_redis() -> Result<PrivateRedis, RunError> {
    let extra = ExtraConfig {
        args: vec![
            "--busy-reply-threshold".into(),
            BUSY_THRESHOLD_MS.to_string(),
            "--dbfilename".into(),
            "busy.rdb".into(),
        ],
        ..ExtraConfig::default()
    };
    tokio::task::spawn_blocking(move || PrivateRedis::start_with(extra))
        .await
        .map_err(|e| RunError::Setup(ShelfError::OwnRedis(e.to_string())))?
        .map_err(|e| RunError::Setup(ShelfError::OwnRedis(e.to_string())))
}

/// Stock on the shelf, the scripts cached, the function loaded, the snapshot taken; then
/// the buyers', the watchdog's and the slow client's connections.
async fn set_up(
    store: &Store,
    strategy: &BusyStrategy,
    config: &RunConfig,
    run_id: &str,
    keys: &BusyKeys,
) -> Result<(Vec<RedisConn>, RedisConn, RedisConn), ShelfError> {
    let mut admin = store
        .connect_named(&format!("oversold:{run_id}:admin"))
        .await?;
    stock::init(&mut admin, keys.run(), config.race.stock).await?;
    scripts::preload(&mut admin, &scripts::RESERVE).await?;
    match strategy.client {
        SlowClient::OneCall(busy::Job::WriteFunction) => busy::load_library(&mut admin).await?,
        SlowClient::OneCall(job) | SlowClient::Steps { job, .. } => {
            let file = match job {
                busy::Job::Write => &scripts::BUSY_WRITE,
                _ => &scripts::BUSY_READ,
            };
            scripts::preload(&mut admin, file).await?;
        }
    }
    busy::snapshot(&mut admin).await?;
    let fleet = store.connect_fleet(run_id, config.race.app_servers).await?;
    let watchdog = store
        .connect_named(&format!("oversold:{run_id}:watchdog"))
        .await?;
    let slow = store
        .connect_named(&format!("oversold:{run_id}:slow"))
        .await?;
    Ok((fleet, watchdog, slow))
}

/// The stock as the (possibly restarted) Redis holds it; a vanished key is an error.
async fn read_back(store: &Store, keys: &BusyKeys) -> Result<i64, ShelfError> {
    let mut conn = store.connect().await?;
    let value = stock::get(&mut conn, keys.run()).await?;
    if let Err(e) = busy::remove_run(&mut conn, keys).await {
        tracing::debug!(error = %e, "could not delete the run's keys; its Redis stops anyway");
    }
    value.ok_or_else(|| ShelfError::Vanished(keys.run().stock_key().to_string()))
}

/// The buyers' connections, and the life of the counter they reach (0 from the stock; 1
/// after a restart, from what the snapshot brought back): each outcome carries it, so the
/// tape orders each life on its own.
pub struct Fleet {
    /// One connection per app server.
    pub conns: Vec<RedisConn>,
    /// The life of the counter they reach.
    pub life: Epoch,
}

/// The part of a run between set-up and read-back.
struct Sale<'a> {
    config: &'a RunConfig,
    keys: &'a BusyKeys,
    fleet: &'a Arc<RwLock<Fleet>>,
}

/// What the slow client's call(s) came to.
type JobResult = Result<(), StoreError>;

impl Sale<'_> {
    /// Release every buyer at its arrival and the slow client at [`slow_job_at`]; the
    /// outcomes, the job's result, when it was sent and when the gate opened.
    async fn run(
        &self,
        client: SlowClient,
        mut slow: RedisConn,
        sink: Option<EventSink>,
        cancel: CancellationToken,
    ) -> (
        Vec<BuyerOutcome>,
        JobResult,
        Option<Instant>,
        Option<Instant>,
    ) {
        let (gate, turn) = StartGate::new();
        let mut buyers = JoinSet::new();
        for plan in plan::plan(&self.config.race) {
            let (turn, stop) = (turn.clone(), cancel.clone());
            let fleet = self.fleet.clone();
            let key = self.keys.run().stock_key().to_string();
            buyers.spawn(async move {
                let opened = turn.arrive(plan.arrival, &stop).await?;
                Some(buy(&plan, opened, &fleet, &key).await)
            });
        }
        let at = slow_job_at(self.config);
        let keys = self.keys.clone();
        let slow_turn = turn.clone();
        let slow_stop = cancel.clone();
        let job = tokio::spawn(async move {
            let opened = slow_turn.arrive(at, &slow_stop).await?;
            let sent = Instant::now();
            let result = match client {
                SlowClient::OneCall(job) => busy::run_job(&mut slow, &keys, job, SLOW_JOB_MS)
                    .await
                    .map(drop),
                SlowClient::Steps { job, step_ms } => {
                    let mut result = Ok(());
                    for _ in 0..SLOW_JOB_MS / step_ms {
                        if let Err(e) = busy::run_job(&mut slow, &keys, job, step_ms).await {
                            result = Err(e);
                            break;
                        }
                    }
                    result
                }
            };
            Some((result, sent, opened))
        });
        drop(turn);
        gate.open().await;
        let mut outcomes = Vec::new();
        while let Some(joined) = buyers.join_next().await {
            if let Ok(Some(o)) = joined {
                tell(&sink, Event::Outcome(o.clone()));
                outcomes.push(o);
            }
        }
        match job.await {
            Ok(Some((result, sent, opened))) => (outcomes, result, Some(sent), Some(opened)),
            _ => (outcomes, Ok(()), None, None),
        }
    }
}

/// One buyer: `reserve.lua` on its app server's current connection (after a restart, a new
/// one; during a restart, it waits for it). Its outcome says which life of the counter that
/// connection reached; a buyer that timed out before it had one says none.
async fn buy(plan: &BuyerPlan, opened: Instant, fleet: &RwLock<Fleet>, key: &str) -> BuyerOutcome {
    let start = Instant::now();
    let mut reached: Option<Epoch> = None;
    let reserve = async {
        let mut conn = {
            let fleet = fleet.read().await;
            reached = Some(fleet.life);
            fleet.conns[plan.app_server as usize % fleet.conns.len()].clone()
        };
        stock::reserve(&mut conn, key, plan.qty).await
    };
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
                // Redis's own words for BUSY: the lesson is in them.
                let why = match f.error.reply_detail() {
                    Some(detail) if busy::is_busy(&f.error) => format!("BUSY {detail}"),
                    _ => f.error.short(),
                };
                (result, None, None, Some(why), f.round_trips)
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
        epoch: reached,
        ..outcome
    }
}

/// The stall's tally: `BUSY` replies, its length, kills, restarts, and what a restart lost.
fn tally(
    outcomes: &[BuyerOutcome],
    watched: &Watched,
    job: JobResult,
    sent_at: Option<Instant>,
    config: &RunConfig,
) -> BusyTally {
    let busy_replies = outcomes.iter().filter(|o| o.answered_busy()).count() as u32;
    let stalled_ms = match (sent_at, watched.stall_ended) {
        (Some(sent), Some(ended)) => ended.saturating_duration_since(sent).as_millis() as u64,
        _ => 0,
    };
    // Orders acknowledged before the shutdown that the snapshot the restarted Redis loaded
    // does not have (the tape marks the same orders lost: `BuyerOutcome::lost_to`).
    let lost: Vec<&BuyerOutcome> = match watched.restored {
        Some(restored) => outcomes
            .iter()
            .filter(|o| o.epoch.is_some_and(|e| e.n == 0) && o.lost_to(restored))
            .collect(),
        None => Vec::new(),
    };
    let slow_job = if watched.restarted > 0 {
        SlowJobEnd::ShutDown
    } else if watched.killed > 0 {
        SlowJobEnd::Killed
    } else if job.is_ok() {
        SlowJobEnd::Finished
    } else {
        SlowJobEnd::Failed
    };
    BusyTally {
        busy_replies,
        stalled_ms,
        killed: watched.killed,
        kill_refused: watched.kill_refused,
        restarted: watched.restarted,
        acknowledged_lost: lost.len() as u32,
        units_lost: lost.iter().map(|o| u64::from(o.qty)).sum(),
        slow_job,
        slow_job_ms: SLOW_JOB_MS,
        slow_job_at_ms: slow_job_at(config).as_millis() as u32,
        busy_threshold_ms: BUSY_THRESHOLD_MS,
        watchdog_ms: watchdog::PATIENCE.as_millis() as u32,
    }
}
