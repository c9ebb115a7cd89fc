//! Running a job a socket was admitted for (see `admit`): its races one after another, each
//! one's frames as they happen, and exactly one terminal frame per `run_started`.
//!
//! A checkout job also takes `reconcile` requests from its socket, through a small channel
//! whose receiving end it lends to each checkout race in turn.

use std::sync::Arc;

use oversold_protocol::at_scale::streams_progress;
use oversold_protocol::{ErrorCode, RunConfig, RunSummary, ServerMessage, WireError};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::admit::{self, Job};
use super::{at_scale, batcher};
use crate::run::{Control, Event, Keep, RunError, RunReport, Watchers, new_id};
use crate::scenario::AnyStrategy;
use crate::state::AppState;

/// Where a job's frames go: the socket's queue, and the shelf for the record of a race at
/// scale (which the session reads `audit_page` answers from).
pub struct Outlet {
    /// The send task's queue.
    pub frames: mpsc::Sender<ServerMessage>,
    /// The socket's audit record of its latest race at scale.
    pub audit: at_scale::Shelf,
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
    outlet: Outlet,
    cancel: CancellationToken,
    ended: CancellationToken,
    mut control: mpsc::Receiver<Control>,
) {
    let outbound = &outlet.frames;
    let Job {
        compare,
        races,
        permits,
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
            (&outlet, &mut control),
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
    drop(permits);
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
    strategy: AnyStrategy,
    config: RunConfig,
    run_id: String,
    (outlet, control): (&Outlet, &mut mpsc::Receiver<Control>),
    cancel: &CancellationToken,
    in_compare: bool,
) -> (ServerMessage, Option<RunSummary>) {
    let outbound = &outlet.frames;
    tracing::info!(run_id, config = %config.describe(), "run started");
    let started = ServerMessage::RunStarted {
        run_id: run_id.clone(),
        config: config.clone(),
    };
    let _ = outbound.send(started).await;
    let _postgres = if in_compare && !cancel.is_cancelled() {
        match admit::reserve_postgres_in_compare(state, strategy, &config) {
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
        strategy => Some(race(state, strategy, &config, &run_id, (outlet, control), cancel).await),
    };
    terminal_frame(run_id, result, cancel.is_cancelled())
}

/// Run `strategy` while its events go out: outcomes in batches (or, for a race at scale, as
/// progress and a record), a checkout's live numbers and `reconcile` answers as frames of
/// their own, in the order they came.
async fn race(
    state: &AppState,
    strategy: AnyStrategy,
    config: &RunConfig,
    run_id: &str,
    (outlet, control): (&Outlet, &mut mpsc::Receiver<Control>),
    cancel: &CancellationToken,
) -> Result<RunReport, RunError> {
    let (events, seen) = mpsc::unbounded_channel();
    // The page gets every outcome as an event; the report needs only the summary.
    let watchers = Watchers {
        events: Some(events),
        control: Some(control),
        keep: Keep::Summary,
    };
    let race = strategy.run(&state.backends, config, run_id, watchers, cancel.clone());
    let at_scale = streams_progress(config.race.buyers).then(|| outlet.audit.clone());
    let forward = forward_events(run_id, seen, &outlet.frames, at_scale, config.race.buyers);
    tokio::join!(race, forward).0
}

/// A run's events to the socket: outcomes through the batcher, every other event as a frame
/// of its own.
async fn forward_events(
    run_id: &str,
    mut events: mpsc::UnboundedReceiver<Event>,
    outbound: &mpsc::Sender<ServerMessage>,
    at_scale: Option<at_scale::Shelf>,
    buyers: u32,
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
                Event::ReconcileFailed(why) => ServerMessage::Error(WireError::new(
                    ErrorCode::RedisUnavailable,
                    format!("reconcile could not run: {why}"),
                )),
            };
            if outbound.send(frame).await.is_err() {
                break;
            }
        }
    };
    let outcomes = async {
        match at_scale {
            Some(shelf) => {
                at_scale::forward(
                    run_id.to_string(),
                    buyers,
                    to_batch,
                    outbound.clone(),
                    shelf,
                )
                .await
            }
            None => batcher::forward(run_id.to_string(), to_batch, outbound.clone()).await,
        }
    };
    tokio::join!(split, outcomes);
}

/// The terminal frame for a run that ended with `result` (`None`: never started, because it
/// was cancelled first).
fn terminal_frame(
    run_id: String,
    result: Option<Result<RunReport, RunError>>,
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
                code: e.code(),
                message: e.to_string(),
                run_id: Some(run_id),
            });
            (frame, None)
        }
    }
}
