//! Work a socket asked for: admitting a `start_run` or `start_compare` (every check before
//! anything touches a store), then running its races and sending each one's frames, ending
//! with exactly one terminal frame per `run_started`.
//!
//! Admission takes, in this order, everything the job will hold until it ends (its
//! [`Holds`]): a run of this address's share, a comparison slot (comparisons only), a run
//! slot, the connections it will open from the connection budget, and for a `postgres` run
//! its PostgreSQL connections (a checkout run: one, for its ledger). The first that is
//! missing refuses the job with a sentence that says which and why; nothing is opened
//! before all are held.
//!
//! A checkout job also takes `reconcile` requests from its socket, through a small channel
//! whose receiving end it lends to each checkout race in turn.

use std::sync::Arc;

use oversold_protocol::{
    ErrorCode, RaceConfig, RunConfig, RunRequest, RunSummary, Scenario, ServerMessage, WireError,
};
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio_util::sync::CancellationToken;

use super::Caller;
use super::batcher;
use super::inbound::{self, wire_error};
use crate::app::AppState;
use crate::budget::Shortfall;
use crate::cart;
use crate::checkout::{self, Control, Event, Watchers};
use crate::client::ClientSlot;
use crate::engine::{self, RunError};
use crate::shelf::ShelfError;
use crate::store::Cause;
use crate::strategy::cart::CartStrategy;
use crate::strategy::checkout::CheckoutStrategy;
use crate::strategy::{self, Backend, PrepareError, REGISTRY, Strategy};

/// Work admitted for one socket: a single race, or a comparison of several.
pub struct Job {
    /// Set for a comparison: its id and the knobs every race shares.
    pub compare: Option<(String, RaceConfig)>,
    /// The races to run, in order.
    pub races: Vec<(Contender, RunConfig)>,
    /// Held for the whole job, given back when it ends.
    pub holds: Holds,
}

/// A strategy of either scenario, as a job runs it.
#[derive(Clone, Copy)]
pub enum Contender {
    /// A `race` strategy.
    Race(&'static Strategy),
    /// A `checkout` strategy.
    Checkout(&'static CheckoutStrategy),
    /// A `cart` or `warehouses` strategy.
    Cart(&'static CartStrategy),
}

impl Contender {
    /// The strategy's wire name.
    pub fn name(&self) -> &str {
        match self {
            Contender::Race(s) => s.name(),
            Contender::Checkout(s) => s.name(),
            Contender::Cart(s) => s.name(),
        }
    }

    /// PostgreSQL connections a run of it holds: a `postgres` run one per app server and
    /// one for its admin; a checkout run one for its ledger when the ledger is PostgreSQL.
    fn postgres_connections(&self, state: &AppState, app_servers: u32) -> usize {
        match self {
            Contender::Race(s) if uses_postgres(s) => app_servers as usize + 1,
            Contender::Race(_) | Contender::Cart(_) => 0,
            Contender::Checkout(_) => usize::from(state.backends.postgres.is_ok()),
        }
    }

    /// Connections (open files) a run opens besides its app servers' and its admin's: a
    /// checkout's reaper, and its ledger's PostgreSQL connection when it has one.
    fn extra_connections(&self, state: &AppState) -> u32 {
        match self {
            Contender::Race(_) | Contender::Cart(_) => 0,
            Contender::Checkout(_) => 1 + u32::from(state.backends.postgres.is_ok()),
        }
    }
}

/// What a job holds while it runs; dropping it gives everything back.
pub struct Holds {
    /// One of its address's runs.
    _client: ClientSlot,
    /// A comparison slot (comparisons only).
    _compare: Option<OwnedSemaphorePermit>,
    /// One slot of the server's run cap.
    _run: OwnedSemaphorePermit,
    /// Its connections from the connection budget (its races run one at a time, so one
    /// race's worth covers a comparison).
    _connections: OwnedSemaphorePermit,
    /// Its PostgreSQL connections, for a single `postgres` run. A comparison reserves them
    /// only for its `postgres` race, when that race begins.
    _postgres: Option<OwnedSemaphorePermit>,
}

/// A single run or a comparison: they are capped differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A single run, and the PostgreSQL connections its strategy needs (0: none).
    Run { postgres: usize },
    /// A comparison (a race needing PostgreSQL reserves its connections when it begins).
    Compare,
}

impl Job {
    /// The id the socket tracks the job by: the run's id, or the comparison's.
    pub fn id(&self, run_id: &str) -> String {
        match &self.compare {
            Some((id, _)) => id.clone(),
            None => run_id.to_string(),
        }
    }

    /// True when its races are checkouts (it then answers `reconcile`).
    pub fn is_checkout(&self) -> bool {
        self.races
            .iter()
            .any(|(c, _)| matches!(c, Contender::Checkout(_)))
    }
}

/// The checkout strategy `name`, or the error that lists them (and says so when `name` is
/// a race strategy).
fn find_checkout(name: &str) -> Result<&'static CheckoutStrategy, WireError> {
    strategy::checkout::find(name).ok_or_else(|| {
        let names: Vec<&str> = strategy::checkout::REGISTRY
            .iter()
            .map(|s| s.name())
            .collect();
        let hint = if strategy::find(name).is_some() {
            format!(" ({name:?} is a race strategy: leave \"scenario\" out)")
        } else {
            String::new()
        };
        wire_error(
            ErrorCode::UnknownStrategy,
            format!(
                "unknown checkout strategy {name:?}{hint}; available: {}",
                names.join(", ")
            ),
        )
    })
}

/// The `cart` or `warehouses` strategy `config` names, in its scenario.
fn find_cart(config: &RunConfig) -> Result<&'static CartStrategy, WireError> {
    let scenario = config.race.scenario;
    strategy::cart::find(&config.strategy)
        .filter(|s| s.about.scenario == scenario)
        .ok_or_else(|| {
            let names: Vec<&str> = strategy::cart::of(scenario).map(|s| s.name()).collect();
            wire_error(
                ErrorCode::UnknownStrategy,
                format!(
                    "unknown {scenario} strategy {:?}; available: {}",
                    config.strategy,
                    names.join(", ")
                ),
            )
        })
}

/// `outage_ms` only on a Redis this server started itself.
fn check_outage(state: &AppState, config: &RunConfig) -> Result<(), WireError> {
    let wants_outage = config
        .race
        .checkout
        .as_ref()
        .is_some_and(|c| c.outage_ms > 0);
    if wants_outage && !state.backends.owns_redis {
        return Err(wire_error(
            ErrorCode::OutageNotAllowed,
            ShelfError::OutageNotAllowed.to_string(),
        ));
    }
    Ok(())
}

/// Check a start_run completely before anything touches a store.
pub fn admit_run(
    state: &AppState,
    caller: &Caller,
    request: &RunRequest,
) -> Result<Job, WireError> {
    let config = inbound::validate_run(request)?;
    if matches!(config.race.scenario, Scenario::Cart | Scenario::Warehouses) {
        let strategy = find_cart(&config)?;
        check_redis(state)?;
        return admit_single(state, caller, Contender::Cart(strategy), config);
    }
    if config.race.scenario == Scenario::Checkout {
        let strategy = find_checkout(&config.strategy)?;
        check_outage(state, &config)?;
        check_redis(state)?;
        return admit_single(state, caller, Contender::Checkout(strategy), config);
    }
    let strategy = find_race(&config.strategy)?;
    if let Some(why) = strategy.unavailable_reason(&state.backends) {
        return Err(wire_error(
            ErrorCode::StrategyUnavailable,
            format!("strategy {:?} is unavailable here: {why}", strategy.name()),
        ));
    }
    if strategy.uses_redis() {
        check_redis(state)?;
    }
    admit_single(state, caller, Contender::Race(strategy), config)
}

/// The race strategy `name`, or the error that lists them (and says so when `name` is a
/// checkout strategy).
fn find_race(name: &str) -> Result<&'static Strategy, WireError> {
    strategy::find(name).ok_or_else(|| {
        let names: Vec<&str> = REGISTRY.iter().map(|s| s.name()).collect();
        let hint = if strategy::checkout::find(name).is_some() {
            format!(" ({name:?} is a checkout strategy: send \"scenario\":\"checkout\" with it)")
        } else {
            String::new()
        };
        wire_error(
            ErrorCode::UnknownStrategy,
            format!(
                "unknown strategy {name:?}{hint}; available: {}",
                names.join(", ")
            ),
        )
    })
}

/// A single run of `contender`, once its checks have passed: the job, if its holds can be
/// taken (a cart run needs no PostgreSQL and no extra connections).
fn admit_single(
    state: &AppState,
    caller: &Caller,
    contender: Contender,
    config: RunConfig,
) -> Result<Job, WireError> {
    let kind = Kind::Run {
        postgres: contender.postgres_connections(state, config.race.app_servers),
    };
    let extra = contender.extra_connections(state);
    let holds = take_holds(state, caller, kind, config.race.app_servers, extra)?;
    Ok(Job {
        compare: None,
        races: vec![(contender, config)],
        holds,
    })
}

/// Check a start_compare: the knobs once, then every strategy that can run here.
pub fn admit_compare(
    state: &AppState,
    caller: &Caller,
    request: &RunRequest,
) -> Result<Job, WireError> {
    let race = inbound::validate_compare(request)?;
    let races: Vec<(Contender, RunConfig)> =
        if matches!(race.scenario, Scenario::Cart | Scenario::Warehouses) {
            strategy::cart::of(race.scenario)
                .map(|s| (Contender::Cart(s), race.with_strategy(s.name())))
                .collect()
        } else if race.scenario == Scenario::Checkout {
            let config = race.with_strategy("");
            check_outage(state, &config)?;
            strategy::checkout::REGISTRY
                .iter()
                .map(|&s| (Contender::Checkout(s), race.with_strategy(s.name())))
                .collect()
        } else {
            REGISTRY
                .iter()
                .copied()
                .filter(|s| s.unavailable_reason(&state.backends).is_none())
                .map(|s| (Contender::Race(s), race.with_strategy(s.name())))
                .collect()
        };
    check_redis(state)?;
    let extra = races
        .iter()
        .map(|(c, _)| c.extra_connections(state))
        .max()
        .unwrap_or(0);
    let holds = take_holds(state, caller, Kind::Compare, race.app_servers, extra)?;
    Ok(Job {
        compare: Some((new_id("c"), race)),
        races,
        holds,
    })
}

/// What a step-through session holds: the same caps as a single Redis run of `buyers` app
/// servers, plus one connection to read the stock between clicks.
pub fn hold_for_step(state: &AppState, caller: &Caller, buyers: u32) -> Result<Holds, WireError> {
    check_redis(state)?;
    take_holds(state, caller, Kind::Run { postgres: 0 }, buyers + 1, 0)
}

fn check_redis(state: &AppState) -> Result<(), WireError> {
    let health = state.health.borrow();
    if health.state == oversold_protocol::RedisState::Down {
        let why = health.reason.as_deref().unwrap_or("not answering");
        return Err(wire_error(
            ErrorCode::RedisUnavailable,
            format!(
                "Redis is down ({why}); the run was not started (the page is told when it is back)"
            ),
        ));
    }
    Ok(())
}

fn uses_postgres(strategy: &Strategy) -> bool {
    matches!(strategy.backend, Backend::Postgres(_))
}

/// Everything the job holds, in the order of the module doc; each refusal says which cap
/// and why. A run opens its app servers' connections, an admin connection, and `extra`
/// more (a checkout's reaper).
fn take_holds(
    state: &AppState,
    caller: &Caller,
    kind: Kind,
    app_servers: u32,
    extra: u32,
) -> Result<Holds, WireError> {
    let busy = |message: String| wire_error(ErrorCode::Busy, message);
    let client = state.clients.start_run(caller.addr).map_err(busy)?;
    let compare = match kind {
        Kind::Compare => Some(take_compare_slot(state)?),
        Kind::Run { .. } => None,
    };
    let run = state.run_slots.clone().try_acquire_owned().map_err(|_| {
        busy(format!(
            "the server is running its maximum of {}; try again in a moment",
            plural(state.max_runs, "race", "races")
        ))
    })?;
    // Each app server's connection, the run's admin one and any extra (a checkout's reaper):
    // one socket each on a single Redis, one per node on a cluster.
    let wanted =
        (app_servers as usize + 1 + extra as usize) * state.backends.redis.sockets_per_connection();
    let connections = state
        .connections
        .try_reserve(wanted)
        .map_err(|short| connections_exhausted(app_servers, extra, short))?;
    let postgres = match kind {
        Kind::Run { postgres: 0 } | Kind::Compare => None,
        Kind::Run { postgres: 1 } => Some(reserve_ledger(state)?),
        Kind::Run { .. } => Some(reserve_postgres(state, app_servers)?),
    };
    Ok(Holds {
        _client: client,
        _compare: compare,
        _run: run,
        _connections: connections,
        _postgres: postgres,
    })
}

/// A comparison slot, or `busy` with how the run slots are shared out right now.
fn take_compare_slot(state: &AppState) -> Result<OwnedSemaphorePermit, WireError> {
    let refused = |_| {
        let runs = state.max_runs - state.run_slots.available_permits();
        let compares = state.max_compares - state.compare_slots.available_permits();
        let singles = runs.saturating_sub(compares);
        let all = match state.max_compares {
            1 => "the only comparison slot is".to_string(),
            n => format!("all {n} comparison slots are"),
        };
        let after = if runs < state.max_runs {
            "single runs are still accepted"
        } else {
            "every run slot is busy too; try again in a moment"
        };
        let message = format!(
            "{all} in use ({runs} of {} run slots busy: {}, {}); {after}",
            state.max_runs,
            plural(compares, "comparison", "comparisons"),
            plural(singles, "single run", "single runs"),
        );
        wire_error(ErrorCode::Busy, message)
    };
    state
        .compare_slots
        .clone()
        .try_acquire_owned()
        .map_err(refused)
}

/// `1 race`, `2 races`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn connections_exhausted(app_servers: u32, extra: u32, short: Shortfall) -> WireError {
    let reaper = match extra {
        0 => "",
        1 => " + 1 reaper",
        _ => " + 1 reaper + 1 ledger",
    };
    let needs = format!(
        "this run needs {} connections ({app_servers} app servers + 1 admin{reaper})",
        short.wanted
    );
    let message = if short.never_fits() {
        format!(
            "{needs}, more than this server's whole budget of {} (it keeps the server under its \
             open-file limit); use at most {} app servers",
            short.total,
            short.total.saturating_sub(1)
        )
    } else {
        format!(
            "{needs} and only {} of the server's {} are free (the budget keeps the server under \
             its open-file limit); try fewer app servers, or again when a run ends",
            short.free, short.total
        )
    };
    wire_error(ErrorCode::ResourceExhausted, message)
}

/// A `postgres` run's `app_servers + 1` connections from the PostgreSQL pool.
fn reserve_postgres(state: &AppState, app_servers: u32) -> Result<OwnedSemaphorePermit, WireError> {
    state
        .pg_connections
        .try_reserve(app_servers as usize + 1)
        .map_err(|short| {
            let needs = format!(
                "a postgres run with {app_servers} app servers needs {} PostgreSQL connections \
                 (one per app server + 1 admin)",
                short.wanted
            );
            let message = if short.never_fits() {
                format!(
                    "{needs}, more than this server's pool of {} (--pg-max-connections); use at \
                     most {} app servers",
                    short.total,
                    short.total.saturating_sub(1)
                )
            } else {
                format!(
                    "{needs} and only {} of the server's {} are free; try fewer app servers, or \
                     again when a run ends",
                    short.free, short.total
                )
            };
            wire_error(ErrorCode::ResourceExhausted, message)
        })
}

/// A checkout run's one PostgreSQL connection, for its ledger.
fn reserve_ledger(state: &AppState) -> Result<OwnedSemaphorePermit, WireError> {
    state.pg_connections.try_reserve(1).map_err(|short| {
        wire_error(
            ErrorCode::ResourceExhausted,
            format!(
                "a checkout run settles its orders in PostgreSQL on one connection, and none of \
                 the server's {} is free; try again when a run ends",
                short.total
            ),
        )
    })
}

/// Run a job's races one after another; a comparison is framed by its own messages.
///
/// Everything the job holds is given back, and `ended` cancelled, *before* its last frame
/// goes out: a client that starts its next run the moment it reads that frame finds its
/// slots free and its socket idle (see `Session::handle` in the parent module).
pub async fn run_job(
    state: Arc<AppState>,
    job: Job,
    first_run_id: String,
    outbound: mpsc::Sender<ServerMessage>,
    cancel: CancellationToken,
    ended: CancellationToken,
    mut control: mpsc::Receiver<Control>,
) {
    let Job {
        compare,
        races,
        holds,
    } = job;
    if let Some((compare_id, config)) = &compare {
        let strategies = races.iter().map(|(s, _)| s.name().to_string()).collect();
        let started = ServerMessage::CompareStarted {
            compare_id: compare_id.clone(),
            strategies,
            config: config.clone(),
        };
        let _ = outbound.send(started).await;
    }
    let mut summaries = Vec::new();
    let mut run_id = Some(first_run_id);
    // The latest race's terminal frame, held back in case it is the job's last frame.
    let mut pending = None;
    for (strategy, config) in races {
        // A cancelled comparison starts no further races; a single run that was cancelled
        // before it began still gets its run_started and a run_cancelled.
        if cancel.is_cancelled() && compare.is_some() {
            break;
        }
        if let Some(frame) = pending.take() {
            let _ = outbound.send(frame).await;
        }
        let id = run_id.take().unwrap_or_else(|| new_id("r"));
        let in_compare = compare.is_some();
        let race = run_one(
            &state,
            strategy,
            config,
            id,
            (&outbound, &mut control),
            &cancel,
            in_compare,
        );
        let (terminal, summary) = race.await;
        summaries.extend(summary);
        pending = Some(terminal);
    }
    let last = match compare {
        Some((compare_id, _)) => {
            if let Some(frame) = pending.take() {
                let _ = outbound.send(frame).await;
            }
            Some(ServerMessage::CompareFinished {
                compare_id,
                summaries,
            })
        }
        None => pending,
    };
    drop(holds);
    ended.cancel();
    if let Some(frame) = last {
        let _ = outbound.send(frame).await;
    }
}

/// One run: announce it and race while batching outcomes out. Returns its one terminal
/// frame (for the caller to send), and its summary if it finished (not cancelled, not
/// failed).
async fn run_one(
    state: &AppState,
    strategy: Contender,
    config: RunConfig,
    run_id: String,
    (outbound, control): (&mpsc::Sender<ServerMessage>, &mut mpsc::Receiver<Control>),
    cancel: &CancellationToken,
    in_compare: bool,
) -> (ServerMessage, Option<RunSummary>) {
    tracing::info!(run_id, config = %config.describe(), "run started");
    let started = ServerMessage::RunStarted {
        run_id: run_id.clone(),
        config: config.clone(),
    };
    let _ = outbound.send(started).await;
    let _postgres = if in_compare && !cancel.is_cancelled() {
        match reserve_postgres_in_compare(state, strategy, &config) {
            Ok(permit) => permit,
            Err(mut e) => {
                tracing::info!(run_id, reason = %e.message, "postgres race refused");
                e.run_id = Some(run_id);
                return (ServerMessage::Error(e), None);
            }
        }
    } else {
        None
    };
    let result = match strategy {
        _ if cancel.is_cancelled() => None,
        strategy => Some(
            race(
                state,
                strategy,
                &config,
                &run_id,
                (outbound, control),
                cancel,
            )
            .await,
        ),
    };
    terminal_frame(run_id, result, cancel.is_cancelled())
}

/// The PostgreSQL connections one race of a comparison needs, reserved as it begins.
///
/// A comparison holds PostgreSQL connections only while a race that needs them runs, not
/// for the minutes the other races take; when the pool is full, that one race is refused
/// (its terminal frame is the error) and the comparison goes on.
fn reserve_postgres_in_compare(
    state: &AppState,
    strategy: Contender,
    config: &RunConfig,
) -> Result<Option<OwnedSemaphorePermit>, WireError> {
    match strategy.postgres_connections(state, config.race.app_servers) {
        0 => Ok(None),
        1 => reserve_ledger(state).map(Some),
        _ => reserve_postgres(state, config.race.app_servers).map(Some),
    }
}

/// Run `strategy`'s race (or checkout, or cart run) while its outcomes go out in batches,
/// and a checkout's live numbers and `reconcile` answers as frames of their own.
async fn race(
    state: &AppState,
    strategy: Contender,
    config: &RunConfig,
    run_id: &str,
    (outbound, control): (&mpsc::Sender<ServerMessage>, &mut mpsc::Receiver<Control>),
    cancel: &CancellationToken,
) -> Result<engine::RunReport, RunError> {
    match strategy {
        Contender::Race(strategy) => {
            let (sink, outcomes) = mpsc::unbounded_channel();
            let race = engine::run(
                &state.backends,
                strategy,
                config,
                run_id,
                Some(sink),
                cancel.clone(),
            );
            let forward = batcher::forward(run_id.to_string(), outcomes, outbound.clone());
            tokio::join!(race, forward).0
        }
        Contender::Checkout(strategy) => {
            let (events, seen) = mpsc::unbounded_channel();
            let watchers = Watchers {
                events: Some(events),
                control: Some(control),
            };
            let race = checkout::run(
                &state.backends,
                strategy,
                config,
                run_id,
                watchers,
                cancel.clone(),
            );
            tokio::join!(race, forward_checkout(run_id, seen, outbound)).0
        }
        Contender::Cart(strategy) => {
            let (sink, outcomes) = mpsc::unbounded_channel();
            let race = cart::run(
                &state.backends,
                strategy,
                config,
                run_id,
                Some(sink),
                cancel.clone(),
            );
            let forward = batcher::forward(run_id.to_string(), outcomes, outbound.clone());
            tokio::join!(race, forward).0
        }
    }
}

/// A checkout's events to the socket: outcomes in batches (as a race's), the live
/// reconciliation and `reconcile`'s answers as frames of their own, in the order they came.
async fn forward_checkout(
    run_id: &str,
    mut events: mpsc::UnboundedReceiver<Event>,
    outbound: &mpsc::Sender<ServerMessage>,
) {
    let (outcomes, to_batch) = mpsc::unbounded_channel();
    let split = async move {
        while let Some(event) = events.recv().await {
            let frame = match event {
                Event::Outcome(o) => {
                    let _ = outcomes.send(o);
                    continue;
                }
                Event::Snapshot(reconciliation) => ServerMessage::Reconciliation {
                    run_id: run_id.to_string(),
                    reconciliation,
                },
                Event::Reconciled(report) => ServerMessage::Reconciled {
                    run_id: run_id.to_string(),
                    report,
                },
                // Not the run's end: the error carries no run_id.
                Event::ReconcileFailed(why) => ServerMessage::Error(wire_error(
                    ErrorCode::RedisUnavailable,
                    format!("reconcile could not run: {why}"),
                )),
            };
            if outbound.send(frame).await.is_err() {
                break;
            }
        }
    };
    let batches = batcher::forward(run_id.to_string(), to_batch, outbound.clone());
    tokio::join!(split, batches);
}

/// The terminal frame for a run that ended with `result` (`None`: never started, because it
/// was cancelled first).
fn terminal_frame(
    run_id: String,
    result: Option<Result<engine::RunReport, RunError>>,
    cancelled: bool,
) -> (ServerMessage, Option<RunSummary>) {
    let Some(result) = result else {
        tracing::info!(run_id, "run cancelled before it began");
        return (
            ServerMessage::RunCancelled {
                run_id,
                summary: None,
            },
            None,
        );
    };
    match result {
        Ok(report) if cancelled || report.summary.cancelled => {
            tracing::info!(run_id, "run cancelled");
            let frame = ServerMessage::RunCancelled {
                run_id,
                summary: Some(report.summary),
            };
            (frame, None)
        }
        Ok(report) => {
            let s = &report.summary;
            tracing::info!(
                run_id,
                sold = s.units_sold,
                oversold = s.oversold_units,
                final_stock = s.final_stock,
                errors = s.errors,
                unknown = s.unknown,
                ms = s.duration_ms,
                "run finished"
            );
            let summary = report.summary;
            let frame = ServerMessage::RunFinished {
                run_id,
                summary: summary.clone(),
            };
            (frame, Some(summary))
        }
        Err(e) if cancelled => {
            tracing::info!(run_id, error = %e, "run cancelled (and failed)");
            (
                ServerMessage::RunCancelled {
                    run_id,
                    summary: None,
                },
                None,
            )
        }
        Err(e) => {
            tracing::warn!(run_id, error = %e, "run failed");
            let frame = ServerMessage::Error(WireError {
                code: error_code(&e),
                message: e.to_string(),
                run_id: Some(run_id),
            });
            (frame, None)
        }
    }
}

/// The wire code for a run that could not finish, chosen by cause.
pub fn error_code(e: &RunError) -> ErrorCode {
    match e {
        RunError::Setup(ShelfError::Redis(e) | ShelfError::Prepare(PrepareError::Store(e))) => {
            if e.cause() == Cause::TooManyOpenFiles {
                ErrorCode::ResourceExhausted
            } else {
                ErrorCode::RedisUnavailable
            }
        }
        RunError::Setup(ShelfError::Postgres(e)) if e.is_resource_exhausted() => {
            ErrorCode::ResourceExhausted
        }
        RunError::Setup(ShelfError::OutageNotAllowed) => ErrorCode::OutageNotAllowed,
        RunError::Setup(_) => ErrorCode::StrategyUnavailable,
        RunError::StoreLost { .. } | RunError::Refused(_) | RunError::ReadBack(_) => {
            ErrorCode::RunFailed
        }
    }
}

/// `r-` (or another prefix) and 12 hex digits: unique enough per server, and a valid hash tag.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}-{:012x}", rand::random::<u64>() & 0xffff_ffff_ffff)
}
