//! Running one `failover` sale: `reserve.lua` buyers on a primary with one replica, both
//! `redis-server`s the run starts for itself, and a failover mid-sale.
//!
//! # Layout
//! - this file: [`run`]: start the pair ([`pair`]), stock the primary and wait until the
//!   replica has it, release the buyers at their seeded arrivals with the failover among
//!   them ([`manager`]), read the stock back from the promoted replica, tally.
//! - [`pair`]: the primary and its replica as processes: start, freeze, kill, thaw.
//! - [`manager`]: the failover itself, at two fixed moments of the sale.
//! - [`report`]: the CLI's table and scoreboard.
//!
//! Why no Sentinel (nor a Redis Cluster with replicas): the lesson is what the promoted
//! replica does not have, and that is the same whoever promotes it. Sentinel would add three
//! more processes and a quorum, and decide on its own clock (`down-after-milliseconds`,
//! elections) when the primary is down: on a shared two-core machine that is seconds, and not
//! the same from one run to the next. So the run plays Sentinel's part itself, at fixed
//! moments: it notices the dead primary at once and promotes the only replica with
//! `REPLICAOF NO ONE`, as Sentinel would promote the best one. (A cluster's replica
//! promotes itself by the same kind of vote, on `cluster-node-timeout`.)
//!
//! The run's servers are never the shared Redis: the run kills one and promotes the other.
//! They stop when the run ends (and die with the process).

use std::sync::Arc;
use std::time::{Duration, Instant};

use oversold_protocol::{BuyerOutcome, Epoch, FailoverTally, OutcomeResult, RunConfig, Scenario};
use tokio::sync::RwLock;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::backends::Backends;
use crate::gate::StartGate;
use crate::plan::{self, BuyerPlan, CallAnswer};
use crate::run::{Event, EventSink, RunError, RunReport, tell};
use crate::shelf::ShelfError;
use crate::store::{RedisConn, RunKeys, Store, failover, scripts, stock};
use crate::strategy::failover::{FailoverStrategy, Guard};

pub mod manager;
pub mod pair;
pub mod report;

use manager::{FailedOver, Manager};
use pair::Pair;

/// The longest one buyer may take; past it, its answer is `unknown`.
const BUYER_DEADLINE: Duration = Duration::from_secs(10);
/// How long set-up waits for the replica to have the stocked shelf (under the store's 3 s
/// response timeout).
const SYNC_LIMIT_MS: u32 = 2_500;

/// When the replica falls behind: a twentieth into the arrivals, so a few buyers are
/// served while it keeps up.
pub fn replica_stops_at(config: &RunConfig) -> Duration {
    Duration::from_millis(u64::from(config.race.arrival_spread_ms / 20))
}

/// When the primary dies: three twentieths into the arrivals, so a few buyers are served
/// while the replica lags, and most arrive after the promotion.
pub fn primary_dies_at(config: &RunConfig) -> Duration {
    Duration::from_millis(u64::from(config.race.arrival_spread_ms * 3 / 20))
}

/// The buyers' connections, replaced by the failover.
pub struct Fleet {
    /// One connection per app server.
    pub conns: Vec<RedisConn>,
    /// The life of the counter they reach (0 the first primary's, from the stock; 1 the
    /// promoted replica's, from what it held at its promotion): each outcome carries it, so
    /// the tape orders each life on its own.
    pub life: Epoch,
    /// Requests sent on connections this fleet replaced.
    pub retired_requests: u64,
}

impl Fleet {
    fn requests_sent(&self) -> u64 {
        self.retired_requests + self.conns.iter().map(RedisConn::requests_sent).sum::<u64>()
    }
}

/// Run one `failover` sale to its end (or cancellation). `config` must be validated and be
/// a `failover` config. `_backends` is not used: the run brings its own primary and replica.
pub async fn run(
    _backends: &Backends,
    strategy: &'static FailoverStrategy,
    config: &RunConfig,
    run_id: &str,
    sink: Option<EventSink>,
    cancel: CancellationToken,
) -> Result<RunReport, RunError> {
    if config.race.scenario() != Scenario::Failover {
        return Err(RunError::WrongScenario {
            strategy: config.strategy.clone(),
            expected: Scenario::Failover,
            got: config.race.scenario(),
        });
    }
    let pair = Pair::start().await.map_err(RunError::Setup)?;
    let primary = Store::open(&pair.primary_url()).map_err(|e| RunError::Setup(e.into()))?;
    let replica = Store::open(&pair.replica_url()).map_err(|e| RunError::Setup(e.into()))?;
    let keys = RunKeys::new(run_id);
    let (conns, primary_admin, replica_admin) =
        set_up(&primary, &replica, strategy.guard, config, run_id, &keys)
            .await
            .map_err(RunError::Setup)?;
    let fleet = Arc::new(RwLock::new(Fleet {
        conns,
        life: Epoch {
            n: 0,
            began_at: Some(i64::from(config.race.stock)),
            evicted: false,
        },
        retired_requests: 0,
    }));
    let manager = Manager {
        primary: primary.clone(),
        replica_port: pair.replica_port(),
        guard: strategy.guard,
        replica: replica.clone(),
        fleet: fleet.clone(),
        run_id: run_id.to_string(),
        keys: keys.clone(),
        primary_admin,
        replica_admin,
        app_servers: config.race.app_servers,
    };
    let sale = Sale {
        config,
        keys: &keys,
        fleet: &fleet,
        guard: strategy.guard,
    };
    let (served, failed_over, opened) = sale.run(manager, pair, sink, cancel).await;
    let redis_requests = fleet.read().await.requests_sent();
    let outcomes = served;
    let (failed_over, pair) = match failed_over {
        Some(Ok(done)) => done,
        Some(Err(why)) => {
            return Err(RunError::StoreLost {
                why: format!("the failover failed: {why}"),
                ran: outcomes.len(),
                buyers: config.race.buyers,
            });
        }
        // Cancelled before the primary died: no failover to report.
        None => {
            return Err(RunError::StoreLost {
                why: "the run ended before its failover".into(),
                ran: outcomes.len(),
                buyers: config.race.buyers,
            });
        }
    };
    // A fresh connection to the promoted replica: the sale's shelf now.
    let read = read_back(&replica, &keys).await;
    drop(pair); // the replica stops here (the primary died mid-sale)
    let final_stock = read.map_err(RunError::ReadBack)?;
    let mut summary = crate::summary::summarize(config, &outcomes, final_stock);
    summary.failover = Some(Box::new(tally(
        config,
        strategy.guard,
        &outcomes,
        &failed_over,
        opened,
    )));
    Ok(RunReport {
        run_id: run_id.to_string(),
        summary,
        outcomes,
        redis_requests,
    })
}

/// Stock on the primary, the script cached on both servers, the replica in step (and, for
/// `min_replicas`, the primary's rule switched on); then the buyers' connections and the
/// manager's one on each server.
async fn set_up(
    primary: &Store,
    replica: &Store,
    guard: Guard,
    config: &RunConfig,
    run_id: &str,
    keys: &RunKeys,
) -> Result<(Vec<RedisConn>, RedisConn, RedisConn), ShelfError> {
    let mut admin = primary
        .connect_named(&format!("oversold:{run_id}:primary-admin"))
        .await?;
    let mut replica_admin = replica
        .connect_named(&format!("oversold:{run_id}:replica-admin"))
        .await?;
    stock::init(&mut admin, keys, config.race.stock).await?;
    scripts::preload(&mut admin, &scripts::RESERVE).await?;
    // SCRIPT LOAD is not replicated: load it on the replica too, so it answers EVALSHA
    // once promoted.
    scripts::preload(&mut replica_admin, &scripts::RESERVE).await?;
    // The replica has the shelf once it acknowledged this connection's writes.
    let synced = failover::wait_for_replicas(&mut admin, 1, SYNC_LIMIT_MS).await?;
    if synced < 1 {
        return Err(ShelfError::OwnRedis(format!(
            "the replica did not have the stocked shelf within {SYNC_LIMIT_MS} ms"
        )));
    }
    if let Guard::MinReplicas { max_lag_s } = guard {
        // Switched on only now: with it, the primary would have refused to stock the shelf
        // before its replica had connected.
        failover::require_replicas(&mut admin, 1, max_lag_s).await?;
    }
    let fleet = primary
        .connect_fleet(run_id, config.race.app_servers)
        .await?;
    Ok((fleet, admin, replica_admin))
}

/// The stock as the promoted replica holds it; a vanished key is an error.
async fn read_back(store: &Store, keys: &RunKeys) -> Result<i64, ShelfError> {
    let mut conn = store.connect().await?;
    let value = stock::get(&mut conn, keys).await?;
    if let Err(e) = stock::remove_run(&mut conn, keys).await {
        tracing::debug!(error = %e, "could not delete the run's keys; its Redis stops anyway");
    }
    value.ok_or_else(|| ShelfError::Vanished(keys.stock_key().to_string()))
}

/// The part of a run between set-up and read-back.
struct Sale<'a> {
    config: &'a RunConfig,
    keys: &'a RunKeys,
    fleet: &'a Arc<RwLock<Fleet>>,
    guard: Guard,
}

impl Sale<'_> {
    /// Release every buyer at its arrival and the manager's two steps at theirs; the
    /// outcomes, what the failover did (`None` if cancelled before it), and when the gate
    /// opened.
    async fn run(
        &self,
        manager: Manager,
        pair: Pair,
        sink: Option<EventSink>,
        cancel: CancellationToken,
    ) -> (
        Vec<BuyerOutcome>,
        Option<Result<(FailedOver, Pair), String>>,
        Option<Instant>,
    ) {
        let (gate, turn) = StartGate::new();
        let mut buyers = JoinSet::new();
        for plan in plan::plan(&self.config.race) {
            let (turn, stop) = (turn.clone(), cancel.clone());
            let fleet = self.fleet.clone();
            let key = self.keys.stock_key().to_string();
            let guard = self.guard;
            buyers.spawn(async move {
                let opened = turn.arrive(plan.arrival, &stop).await?;
                Some(buy(&plan, opened, &fleet, &key, guard).await)
            });
        }
        let (stop_at, kill_at) = (replica_stops_at(self.config), primary_dies_at(self.config));
        let failing = tokio::spawn(manager.fail_over(pair, turn.clone(), stop_at, kill_at, cancel));
        drop(turn);
        let opened = gate.open().await;
        let mut outcomes = Vec::new();
        while let Some(joined) = buyers.join_next().await {
            if let Ok(Some(o)) = joined {
                tell(&sink, Event::Outcome(o.clone()));
                outcomes.push(o);
            }
        }
        let failed_over = match failing.await {
            Ok(result) => result,
            Err(e) => Some(Err(format!("the failover task ended: {e}"))),
        };
        (outcomes, failed_over, Some(opened))
    }
}

/// One buyer: `reserve.lua` on its app server's current connection (during the failover,
/// it waits for the new one), then what the guard asks. The outcome says which life of the
/// counter its connection reached; a buyer that timed out before it had one says none.
async fn buy(
    plan: &BuyerPlan,
    opened: Instant,
    fleet: &RwLock<Fleet>,
    key: &str,
    guard: Guard,
) -> BuyerOutcome {
    let start = Instant::now();
    let mut reached: Option<Epoch> = None;
    let order = async {
        // The fleet is held for the whole call, not only to pick a connection: the manager's
        // steps take it exclusively, so they start once no order is on its way. Otherwise an
        // order sent just after the manager read the primary's counter would land before the
        // kill, and the counter "at the kill" would be stale (measured under load: 7 sales
        // confirmed below it, and the ledger check failed).
        let fleet = fleet.read().await;
        let k = plan.app_server as usize % fleet.conns.len();
        reached = Some(fleet.life);
        let mut conn = fleet.conns[k].clone();
        reserve(&mut conn, key, plan.qty, guard).await
    };
    let answer = match tokio::time::timeout(BUYER_DEADLINE, order).await {
        Ok(done) => done,
        Err(_) => Answer::unknown(
            format!("no answer within {} s", BUYER_DEADLINE.as_secs()),
            1,
        ),
    };
    let outcome = plan.outcome(
        CallAnswer {
            result: answer.result,
            observed: answer.observed,
            after: answer.after,
            error: answer.error,
            round_trips: answer.round_trips,
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

/// What one buyer's calls came to.
struct Answer {
    result: OutcomeResult,
    observed: Option<i64>,
    after: Option<i64>,
    error: Option<String>,
    round_trips: u32,
}

impl Answer {
    fn unknown(why: String, round_trips: u32) -> Self {
        Answer {
            result: OutcomeResult::Unknown,
            observed: None,
            after: None,
            error: Some(why),
            round_trips,
        }
    }
}

/// `reserve.lua`, and with [`Guard::Wait`] a `WAIT` after a reservation.
async fn reserve(conn: &mut RedisConn, key: &str, qty: u32, guard: Guard) -> Answer {
    let called = match stock::reserve(conn, key, qty).await {
        Ok(c) => c,
        Err(f) => {
            let result = if f.error.in_doubt() {
                OutcomeResult::Unknown
            } else {
                OutcomeResult::Error
            };
            // Redis's own words for NOREPLICAS: the lesson is in them.
            let why = match f.error.reply_detail() {
                Some(detail) if failover::is_no_replicas(&f.error) => {
                    format!("NOREPLICAS {detail}")
                }
                _ => f.error.short(),
            };
            return Answer {
                result,
                observed: None,
                after: None,
                error: Some(why),
                round_trips: f.round_trips,
            };
        }
    };
    let reply = called.reply;
    if !reply.reserved {
        return Answer {
            result: OutcomeResult::SoldOut,
            observed: Some(reply.before),
            after: None,
            error: None,
            round_trips: called.round_trips,
        };
    }
    let confirmed = Answer {
        result: OutcomeResult::Reserved,
        observed: Some(reply.before),
        after: Some(reply.after),
        error: None,
        round_trips: called.round_trips,
    };
    let Guard::Wait { timeout_ms } = guard else {
        return confirmed;
    };
    let round_trips = called.round_trips + 1;
    let taken = format!("{{1, {}, {}}}", reply.before, reply.after);
    match failover::wait_for_replicas(conn, 1, timeout_ms).await {
        Ok(n) if n >= 1 => Answer {
            round_trips,
            ..confirmed
        },
        Ok(n) => Answer::unknown(
            format!(
                "reserve → {taken}, then WAIT 1 {timeout_ms} → {n}: no replica has it yet; in \
                 doubt, not confirmed"
            ),
            round_trips,
        ),
        Err(e) => Answer::unknown(
            format!(
                "reserve → {taken}, then WAIT failed ({}); in doubt",
                e.short()
            ),
            round_trips,
        ),
    }
}

/// What the failover cost: confirmed orders the promoted replica never had, units sold
/// twice, refusals, `WAIT`s that ran out, and the confirmed orders' latency.
fn tally(
    config: &RunConfig,
    guard: Guard,
    served: &[BuyerOutcome],
    done: &FailedOver,
    opened: Option<Instant>,
) -> FailoverTally {
    // The replica has a prefix of the old primary's history, and the counter only falls:
    // an order the old primary confirmed leaving the counter below what the replica held
    // at its promotion came after that prefix (the tape marks the same orders lost).
    let lost: Vec<&BuyerOutcome> = served
        .iter()
        .filter(|o| {
            o.epoch.is_some_and(|e| e.n == 0) && o.lost_to(Some(done.replica_stock_at_promotion))
        })
        .collect();
    let confirmed_units: u64 = served
        .iter()
        .filter(|o| o.result == OutcomeResult::Reserved)
        .map(|o| u64::from(o.qty))
        .sum();
    let refused_writes = served
        .iter()
        .filter(|o| {
            o.error
                .as_deref()
                .is_some_and(|e| e.starts_with("NOREPLICAS"))
        })
        .count() as u32;
    let wait_timed_out = served
        .iter()
        .filter(|o| {
            o.error
                .as_deref()
                .is_some_and(|e| e.contains("then WAIT 1"))
        })
        .count() as u32;
    let confirm_latency = crate::summary::latency(
        served
            .iter()
            .filter(|o| o.result == OutcomeResult::Reserved)
            .map(|o| o.latency_us)
            .collect(),
    );
    let ms_after_open =
        |t: Instant| opened.map_or(0, |o| t.saturating_duration_since(o).as_millis() as u32);
    let (wait_timeout_ms, min_replicas_max_lag_s) = match guard {
        Guard::None => (0, 0),
        Guard::Wait { timeout_ms } => (timeout_ms, 0),
        Guard::MinReplicas { max_lag_s } => (0, max_lag_s),
    };
    FailoverTally {
        acknowledged_lost: lost.iter().map(|o| u64::from(o.qty)).sum(),
        acknowledged_lost_orders: lost.len() as u32,
        sold_twice: confirmed_units.saturating_sub(u64::from(config.race.stock)),
        refused_writes,
        wait_timed_out,
        primary_stock_at_kill: done.primary_stock_at_kill,
        replica_stock_at_promotion: done.replica_stock_at_promotion,
        replica_stopped_at_ms: ms_after_open(done.replica_stopped),
        primary_killed_at_ms: ms_after_open(done.primary_killed),
        failover_ms: done
            .promoted
            .saturating_duration_since(done.primary_killed)
            .as_millis() as u64,
        guard: guard.kind(),
        wait_timeout_ms,
        min_replicas_max_lag_s,
        confirm_p50_us: confirm_latency.p50_us,
        confirm_p99_us: confirm_latency.p99_us,
    }
}
