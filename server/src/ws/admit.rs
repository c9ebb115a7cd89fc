//! Admitting a `start_run` or `start_compare`: every check before anything touches a store.
//!
//! Admission takes, in this order, everything the job will hold until it ends (its
//! [`Permits`]): a run of this address's share, a comparison slot (comparisons only), a run
//! slot, the connections it will open from the connection budget, and for a `postgres` run
//! its PostgreSQL connections (a checkout run: one, for its ledger). The first that is
//! missing refuses the job with a sentence that says which and why; nothing is opened
//! before all are held. Which strategy a name means, and what it needs, is the scenario
//! layer's answer ([`crate::scenario`]).

use oversold_protocol::{ErrorCode, RaceConfig, RunConfig, RunRequest, WireError};
use tokio::sync::OwnedSemaphorePermit;

use super::inbound;
use crate::budget::Shortfall;
use crate::client::Caller;
use crate::client::ClientSlot;
use crate::run::new_id;
use crate::scenario::{self, AnyStrategy};
use crate::shelf::ShelfError;
use crate::state::AppState;

/// Work admitted for one socket: a single race, or a comparison of several.
pub struct Job {
    /// Set for a comparison: its id and the knobs every race shares.
    pub compare: Option<(String, RaceConfig)>,
    /// The races to run, in order.
    pub races: Vec<(AnyStrategy, RunConfig)>,
    /// Held for the whole job, given back when it ends.
    pub permits: Permits,
}

/// What a job holds while it runs; dropping it gives everything back.
pub struct Permits {
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
        self.races.iter().any(|(s, _)| s.takes_requests())
    }
}

/// `outage_ms` only on a Redis this server started itself.
fn check_outage(state: &AppState, config: &RunConfig) -> Result<(), WireError> {
    let wants_outage = config.race.checkout().is_some_and(|c| c.outage_ms > 0);
    if wants_outage && !state.backends.owns_redis {
        return Err(WireError::new(
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
    let config = inbound::validate_run(request, &state.limits)?;
    let strategy = scenario::find(config.race.scenario(), &config.strategy)
        .map_err(|e| WireError::new(ErrorCode::UnknownStrategy, e.to_string()))?;
    if let Some(why) = strategy.unavailable_reason(&state.backends) {
        return Err(WireError::new(
            ErrorCode::StrategyUnavailable,
            format!("strategy {:?} is unavailable here: {why}", strategy.name()),
        ));
    }
    check_outage(state, &config)?;
    if strategy.uses_redis() {
        check_redis(state)?;
    }
    let kind = Kind::Run {
        postgres: strategy.postgres_connections(&state.backends, config.race.app_servers),
    };
    let extra = strategy.extra_connections(&state.backends, config.race.app_servers);
    let permits = take_permits(state, caller, kind, config.race.app_servers, extra)?;
    Ok(Job {
        compare: None,
        races: vec![(strategy, config)],
        permits,
    })
}

/// Check a start_compare: the knobs once, then every strategy that can run here.
pub fn admit_compare(
    state: &AppState,
    caller: &Caller,
    request: &RunRequest,
) -> Result<Job, WireError> {
    let race = inbound::validate_compare(request, &state.limits)?;
    check_outage(state, &race.with_strategy(""))?;
    let races: Vec<(AnyStrategy, RunConfig)> = scenario::lineup(race.scenario(), &state.backends)
        .races
        .into_iter()
        .map(|s| (s, race.with_strategy(s.name())))
        .collect();
    check_redis(state)?;
    let extra = races
        .iter()
        .map(|(s, _)| s.extra_connections(&state.backends, race.app_servers))
        .max()
        .unwrap_or(0);
    let permits = take_permits(state, caller, Kind::Compare, race.app_servers, extra)?;
    Ok(Job {
        compare: Some((new_id("c"), race)),
        races,
        permits,
    })
}

/// What a step-through session holds: the same caps as a single Redis run of `buyers` app
/// servers, plus one connection to read the stock between clicks.
pub fn permits_for_step(
    state: &AppState,
    caller: &Caller,
    buyers: u32,
) -> Result<Permits, WireError> {
    check_redis(state)?;
    take_permits(state, caller, Kind::Run { postgres: 0 }, buyers + 1, 0)
}

/// What a room's sale holds: the same as a single Redis run of `app_servers` app servers
/// (its address's share, a run slot, its connections, and the `extra` its strategy opens),
/// plus one for the sale's lease and events. A sale is a run to every cap, `--public`'s
/// included.
pub fn permits_for_sale(
    state: &AppState,
    caller: &Caller,
    app_servers: u32,
    extra: u32,
) -> Result<Permits, WireError> {
    check_redis(state)?;
    take_permits(
        state,
        caller,
        Kind::Run { postgres: 0 },
        app_servers,
        1 + extra,
    )
}

fn check_redis(state: &AppState) -> Result<(), WireError> {
    let health = state.health.borrow();
    if health.state == oversold_protocol::RedisState::Down {
        let why = health.reason.as_deref().unwrap_or("not answering");
        return Err(WireError::new(
            ErrorCode::RedisUnavailable,
            format!(
                "Redis is down ({why}); the run was not started (the page is told when it is back)"
            ),
        ));
    }
    Ok(())
}

/// Everything the job holds, in the order of the module doc; each refusal says which cap
/// and why. A run opens its app servers' connections, an admin connection, and `extra`
/// more (a checkout's reaper).
fn take_permits(
    state: &AppState,
    caller: &Caller,
    kind: Kind,
    app_servers: u32,
    extra: u32,
) -> Result<Permits, WireError> {
    let busy = |message: String| WireError::new(ErrorCode::Busy, message);
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
    Ok(Permits {
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
        WireError::new(ErrorCode::Busy, message)
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
    WireError::new(ErrorCode::ResourceExhausted, message)
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
            WireError::new(ErrorCode::ResourceExhausted, message)
        })
}

/// A checkout run's one PostgreSQL connection, for its ledger.
fn reserve_ledger(state: &AppState) -> Result<OwnedSemaphorePermit, WireError> {
    state.pg_connections.try_reserve(1).map_err(|short| {
        WireError::new(
            ErrorCode::ResourceExhausted,
            format!(
                "a checkout run settles its orders in PostgreSQL on one connection, and none of \
                 the server's {} is free; try again when a run ends",
                short.total
            ),
        )
    })
}

/// The PostgreSQL connections one race of a comparison needs, reserved as it begins.
///
/// A comparison holds PostgreSQL connections only while a race that needs them runs, not
/// for the minutes the other races take; when the pool is full, that one race is refused
/// (its terminal frame is the error) and the comparison goes on.
pub fn reserve_postgres_in_compare(
    state: &AppState,
    strategy: AnyStrategy,
    config: &RunConfig,
) -> Result<Option<OwnedSemaphorePermit>, WireError> {
    match strategy.postgres_connections(&state.backends, config.race.app_servers) {
        0 => Ok(None),
        1 => reserve_ledger(state).map(Some),
        _ => reserve_postgres(state, config.race.app_servers).map(Some),
    }
}
