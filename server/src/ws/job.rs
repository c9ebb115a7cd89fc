//! Work a socket asked for: admitting a `start_run` or `start_compare` (every check before
//! anything touches a store), then running its races and sending each one's frames, ending
//! with exactly one terminal frame per `run_started`.

use std::sync::Arc;

use oversold_protocol::{
    ErrorCode, RaceConfig, RunConfig, RunRequest, RunSummary, ServerMessage, WireError,
};
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio_util::sync::CancellationToken;

use super::batcher;
use super::inbound::{self, wire_error};
use crate::app::AppState;
use crate::engine::{self, RunError};
use crate::shelf::ShelfError;
use crate::store::Cause;
use crate::strategy::{self, PrepareError, REGISTRY, Strategy};

/// Work admitted for one socket: a single race, or a comparison of several.
pub struct Job {
    /// Set for a comparison: its id and the knobs every race shares.
    pub compare: Option<(String, RaceConfig)>,
    /// The races to run, in order.
    pub races: Vec<(&'static Strategy, RunConfig)>,
    /// Held for the whole job: one slot of the server's run cap.
    pub permit: OwnedSemaphorePermit,
}

impl Job {
    /// The id the socket tracks the job by: the run's id, or the comparison's.
    pub fn id(&self, run_id: &str) -> String {
        match &self.compare {
            Some((id, _)) => id.clone(),
            None => run_id.to_string(),
        }
    }
}

/// Check a start_run completely before anything touches a store.
pub fn admit_run(state: &AppState, request: &RunRequest) -> Result<Job, WireError> {
    let config = inbound::validate_run(request)?;
    let Some(strategy) = strategy::find(&config.strategy) else {
        let names: Vec<&str> = REGISTRY.iter().map(|s| s.name()).collect();
        return Err(wire_error(
            ErrorCode::UnknownStrategy,
            format!(
                "unknown strategy {:?}; available: {}",
                config.strategy,
                names.join(", ")
            ),
        ));
    };
    if let Some(why) = strategy.unavailable_reason(&state.backends) {
        return Err(wire_error(
            ErrorCode::StrategyUnavailable,
            format!("strategy {:?} is unavailable here: {why}", strategy.name()),
        ));
    }
    if strategy.uses_redis() {
        check_redis(state)?;
    }
    Ok(Job {
        compare: None,
        races: vec![(strategy, config)],
        permit: take_slot(state)?,
    })
}

/// Check a start_compare: the knobs once, then every strategy that can run here.
pub fn admit_compare(state: &AppState, request: &RunRequest) -> Result<Job, WireError> {
    let race = inbound::validate_compare(request)?;
    check_redis(state)?;
    let races = REGISTRY
        .iter()
        .copied()
        .filter(|s| s.unavailable_reason(&state.backends).is_none())
        .map(|s| (s, race.with_strategy(s.name())))
        .collect();
    Ok(Job {
        compare: Some((new_id("c"), race)),
        races,
        permit: take_slot(state)?,
    })
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

fn take_slot(state: &AppState) -> Result<OwnedSemaphorePermit, WireError> {
    state.run_slots.clone().try_acquire_owned().map_err(|_| {
        wire_error(
            ErrorCode::Busy,
            format!(
                "the server is running its maximum of {} races; try again in a moment",
                state.max_runs
            ),
        )
    })
}

/// Run a job's races one after another; a comparison is framed by its own messages.
pub async fn run_job(
    state: Arc<AppState>,
    job: Job,
    first_run_id: String,
    outbound: mpsc::Sender<ServerMessage>,
    cancel: CancellationToken,
) {
    let Job {
        compare,
        races,
        permit: _permit,
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
    for (strategy, config) in races {
        // A cancelled comparison starts no further races; a single run that was cancelled
        // before it began still gets its run_started and a run_cancelled.
        if cancel.is_cancelled() && compare.is_some() {
            break;
        }
        let id = run_id.take().unwrap_or_else(|| new_id("r"));
        if let Some(summary) =
            run_one(&state, strategy, config, id, &outbound, cancel.clone()).await
        {
            summaries.push(summary);
        }
    }
    if let Some((compare_id, _)) = compare {
        let finished = ServerMessage::CompareFinished {
            compare_id,
            summaries,
        };
        let _ = outbound.send(finished).await;
    }
}

/// One run: announce it, race while batching outcomes out, then its one terminal frame.
/// Returns the summary of a run that finished (not cancelled, not failed).
async fn run_one(
    state: &AppState,
    strategy: &'static Strategy,
    config: RunConfig,
    run_id: String,
    outbound: &mpsc::Sender<ServerMessage>,
    cancel: CancellationToken,
) -> Option<RunSummary> {
    tracing::info!(run_id, config = %config.describe(), "run started");
    let started = ServerMessage::RunStarted {
        run_id: run_id.clone(),
        config: config.clone(),
    };
    let _ = outbound.send(started).await;
    let result = if cancel.is_cancelled() {
        None
    } else {
        let (sink, outcomes) = mpsc::unbounded_channel();
        let race = engine::run(
            &state.backends,
            strategy,
            &config,
            &run_id,
            Some(sink),
            cancel.clone(),
        );
        let forward = batcher::forward(run_id.clone(), outcomes, outbound.clone());
        Some(tokio::join!(race, forward).0)
    };
    let (terminal, finished) = terminal_frame(run_id, result, cancel.is_cancelled());
    let _ = outbound.send(terminal).await;
    finished
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
        RunError::Setup(_) => ErrorCode::StrategyUnavailable,
        RunError::StoreLost { .. } | RunError::ReadBack(_) => ErrorCode::RunFailed,
    }
}

/// `r-` (or another prefix) and 12 hex digits: unique enough per server, and a valid hash tag.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}-{:012x}", rand::random::<u64>() & 0xffff_ffff_ffff)
}
