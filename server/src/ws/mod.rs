//! The `/ws` WebSocket: one session per socket, at most one run in flight per session.
//!
//! Split as in axum's examples: a send task owns the socket's sink and drains a bounded
//! queue of [`ServerMessage`]s; the session loop reads frames, watches Redis health and
//! the run in flight. A run is its own task (engine + batcher) so a slow reader never
//! stalls the buyers, and closing the socket cancels the run, which still cleans up.

mod batcher;
pub mod inbound;
mod rate;

use std::sync::Arc;

use axum::extract::State;
use axum::extract::ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures_util::{SinkExt, StreamExt};
use oversold_protocol::{
    ClientMessage, ErrorCode, RedisState, RunConfig, RunRequest, RunSummary, ServerMessage,
    WireError,
};
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::app::AppState;
use crate::engine::{self, RunError};
use crate::shelf::{LinkKind, ShelfError};
use crate::strategy::{self, Strategy};
use inbound::wire_error;

/// Largest frame a client may send. A start_run is a few hundred bytes.
const MAX_FRAME_BYTES: usize = 16 * 1024;
/// Frames queued for the socket before producers wait.
const OUTBOUND_QUEUE: usize = 64;
/// Longest one frame may take to go out before the client is deemed gone.
const SEND_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// `GET /ws`.
pub async fn upgrade(ws: WebSocketUpgrade, State(state): State<Arc<AppState>>) -> Response {
    // Refuse before upgrading, with a status a browser and a load balancer understand.
    let Ok(slot) = state.socket_slots.clone().try_acquire_owned() else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "too many open connections; try again shortly",
        )
            .into_response();
    };
    ws.max_message_size(MAX_FRAME_BYTES)
        .max_frame_size(MAX_FRAME_BYTES)
        .on_upgrade(move |socket| async move {
            session(socket, state).await;
            drop(slot);
        })
}

/// The run (or comparison) this session has in flight.
struct InFlight {
    /// Its run id, or its compare id.
    id: String,
    cancel: CancellationToken,
}

/// Work admitted for one socket: a single race, or a comparison of several.
struct Job {
    /// Set for a comparison.
    compare_id: Option<String>,
    /// The races to run, in order.
    races: Vec<(Arc<dyn Strategy>, RunConfig)>,
    /// Held for the whole job: one slot of the server's run cap.
    permit: OwnedSemaphorePermit,
}

async fn session(socket: WebSocket, state: Arc<AppState>) {
    let (mut sink, mut stream) = socket.split();
    let (outbound, mut queue) = mpsc::channel::<ServerMessage>(OUTBOUND_QUEUE);

    // The send task: the only writer of the socket. A client that stops reading would
    // otherwise block it forever, then the queue, then the run task, which would keep its
    // run slot: after SEND_TIMEOUT on one frame the socket is given up instead.
    let mut writer = tokio::spawn(async move {
        while let Some(msg) = queue.recv().await {
            let text = serde_json::to_string(&msg).expect("protocol types always serialize");
            let frame = Message::Text(Utf8Bytes::from(text));
            match tokio::time::timeout(SEND_TIMEOUT, sink.send(frame)).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => break,
                Err(_) => {
                    tracing::warn!("client stopped reading; closing its socket");
                    return;
                }
            }
        }
        let _ = sink.close().await;
    });

    let _ = outbound.send(ServerMessage::Hello(state.hello())).await;
    let mut redis_state = state.redis_state.clone();
    redis_state.mark_unchanged();
    let mut limiter = rate::Limiter::default();
    let mut runs: JoinSet<()> = JoinSet::new();
    let mut in_flight: Option<InFlight> = None;

    loop {
        tokio::select! {
            frame = stream.next() => {
                let text = match frame {
                    Some(Ok(Message::Text(t))) => t,
                    Some(Ok(Message::Binary(_))) => {
                        send_error(&outbound, wire_error(ErrorCode::BadJson, "binary frames are not supported; send JSON text")).await;
                        continue;
                    }
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                };
                if !limiter.allow() {
                    if limiter.should_report() {
                        send_error(&outbound, wire_error(ErrorCode::RateLimited, "too many frames; slow down")).await;
                    }
                    continue;
                }
                match inbound::parse(&text) {
                    Err(e) => send_error(&outbound, e).await,
                    Ok(ClientMessage::CancelRun) => match &in_flight {
                        Some(run) => run.cancel.cancel(),
                        None => send_error(&outbound, wire_error(ErrorCode::NoRunInProgress, "there is no run in flight to cancel")).await,
                    },
                    Ok(ClientMessage::StartRun { .. } | ClientMessage::StartCompare { .. }) if in_flight.is_some() => {
                        let mut e = wire_error(ErrorCode::RunInProgress, "this connection already has a run in flight; wait for run_finished or send cancel_run");
                        e.run_id = in_flight.as_ref().map(|run| run.id.clone());
                        send_error(&outbound, e).await;
                    }
                    Ok(ClientMessage::StartRun { config: request }) => match admit_run(&state, &request) {
                        Err(e) => send_error(&outbound, e).await,
                        Ok(job) => in_flight = Some(start(&state, &mut runs, job, &outbound)),
                    },
                    Ok(ClientMessage::StartCompare { config: request }) => match admit_compare(&state, &request) {
                        Err(e) => send_error(&outbound, e).await,
                        Ok(job) => in_flight = Some(start(&state, &mut runs, job, &outbound)),
                    },
                }
            }
            Some(_) = runs.join_next() => in_flight = None,
            Ok(()) = redis_state.changed() => {
                let redis = *redis_state.borrow_and_update();
                let _ = outbound.send(ServerMessage::RedisStatus { redis }).await;
            }
            // The writer gave up (or the socket broke): nothing more can reach the client.
            _ = &mut writer => break,
            _ = state.shutdown.cancelled() => break,
        }
    }

    // The socket is gone (or the server is stopping): stop the run, but let it clean up.
    if let Some(run) = &in_flight {
        run.cancel.cancel();
    }
    // Sends fail fast once the writer is gone, so this cannot hang on a dead client.
    while runs.join_next().await.is_some() {}
    drop(outbound);
    if !writer.is_finished() {
        let _ = writer.await;
    }
}

/// Check a start_run completely before anything touches Redis.
fn admit_run(state: &AppState, request: &RunRequest) -> Result<Job, WireError> {
    let config = inbound::validate(request)?;
    let Some(strategy) = strategy::find(&state.strategies, &config.strategy) else {
        let names: Vec<_> = state.strategies.iter().map(|s| s.name()).collect();
        return Err(wire_error(
            ErrorCode::UnknownStrategy,
            format!(
                "unknown strategy {:?}; available: {}",
                config.strategy,
                names.join(", ")
            ),
        ));
    };
    let info = strategy.info(&state.backends);
    if !info.available {
        return Err(wire_error(
            ErrorCode::StrategyUnavailable,
            format!(
                "strategy {:?} is unavailable here: {}",
                info.name,
                info.unavailable_reason.unwrap_or_default()
            ),
        ));
    }
    if strategy.link_kind() != LinkKind::Postgres {
        check_redis(state)?;
    }
    Ok(Job {
        compare_id: None,
        races: vec![(strategy, config)],
        permit: take_slot(state)?,
    })
}

/// Check a start_compare: the config once, then every strategy that can run here.
fn admit_compare(state: &AppState, request: &RunRequest) -> Result<Job, WireError> {
    // The name is a placeholder: each race gets its own below.
    let shared = inbound::validate(&RunRequest {
        strategy: "compare".into(),
        ..request.clone()
    })?;
    check_redis(state)?;
    let races = state
        .strategies
        .iter()
        .filter(|s| s.unavailable_reason(&state.backends).is_none())
        .map(|s| {
            (
                s.clone(),
                RunConfig {
                    strategy: s.name().into(),
                    ..shared.clone()
                },
            )
        })
        .collect();
    Ok(Job {
        compare_id: Some(new_id("c")),
        races,
        permit: take_slot(state)?,
    })
}

fn check_redis(state: &AppState) -> Result<(), WireError> {
    if *state.redis_state.borrow() == RedisState::Down {
        return Err(wire_error(
            ErrorCode::RedisUnavailable,
            "Redis is not answering right now; the run was not started (the page is told when it is back)",
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

/// Spawn an admitted job on the session's task set.
fn start(
    state: &Arc<AppState>,
    runs: &mut JoinSet<()>,
    job: Job,
    outbound: &mpsc::Sender<ServerMessage>,
) -> InFlight {
    let cancel = state.shutdown.child_token();
    let id = job.compare_id.clone().unwrap_or_else(|| new_id("r"));
    runs.spawn(job_task(
        state.clone(),
        job,
        id.clone(),
        outbound.clone(),
        cancel.clone(),
    ));
    InFlight { id, cancel }
}

/// Run a job's races one after another; a comparison is framed by its own messages.
async fn job_task(
    state: Arc<AppState>,
    job: Job,
    id: String,
    outbound: mpsc::Sender<ServerMessage>,
    cancel: CancellationToken,
) {
    let Job {
        compare_id,
        races,
        permit: _permit,
    } = job;
    if let (Some(compare_id), Some((_, config))) = (&compare_id, races.first()) {
        let strategies = races.iter().map(|(s, _)| s.name().to_string()).collect();
        let started = ServerMessage::CompareStarted {
            compare_id: compare_id.clone(),
            strategies,
            config: config.clone(),
        };
        let _ = outbound.send(started).await;
    }
    let mut summaries = Vec::new();
    for (strategy, config) in races {
        if cancel.is_cancelled() {
            break;
        }
        // A single run uses the job's id; each race of a comparison gets its own.
        let run_id = if compare_id.is_some() {
            new_id("r")
        } else {
            id.clone()
        };
        if let Some(summary) =
            run_task(&state, strategy, config, run_id, &outbound, cancel.clone()).await
        {
            summaries.push(summary);
        }
    }
    if let Some(compare_id) = compare_id {
        let _ = outbound
            .send(ServerMessage::CompareFinished {
                compare_id,
                summaries,
            })
            .await;
    }
}

/// One run: announce it, race while batching outcomes out, then the summary (or the error).
async fn run_task(
    state: &AppState,
    strategy: Arc<dyn Strategy>,
    config: RunConfig,
    run_id: String,
    outbound: &mpsc::Sender<ServerMessage>,
    cancel: CancellationToken,
) -> Option<RunSummary> {
    tracing::info!(run_id, config = %config.describe(), "run started");
    let _ = outbound
        .send(ServerMessage::RunStarted {
            run_id: run_id.clone(),
            config: config.clone(),
        })
        .await;
    let (sink, outcomes) = mpsc::unbounded_channel();
    let (result, _) = tokio::join!(
        engine::run(
            &state.backends,
            strategy,
            &config,
            &run_id,
            Some(sink),
            cancel
        ),
        batcher::forward(run_id.clone(), outcomes, outbound.clone()),
    );
    let (msg, summary) = match result {
        Ok(report) => {
            let s = &report.summary;
            tracing::info!(
                run_id,
                sold = s.units_sold,
                oversold = s.oversold_units,
                final_stock = s.final_stock,
                errors = s.errors,
                ms = s.duration_ms,
                "run finished"
            );
            let msg = ServerMessage::RunFinished {
                run_id,
                summary: report.summary.clone(),
            };
            (msg, Some(report.summary))
        }
        Err(e) => {
            tracing::warn!(run_id, error = %e, "run failed");
            let code = match e {
                RunError::Setup(ShelfError::Redis(_)) => ErrorCode::RedisUnavailable,
                RunError::Setup(_) => ErrorCode::StrategyUnavailable,
                RunError::ReadBack(_) => ErrorCode::RunFailed,
            };
            let msg = ServerMessage::Error(WireError {
                code,
                message: e.to_string(),
                run_id: Some(run_id),
            });
            (msg, None)
        }
    };
    let _ = outbound.send(msg).await;
    summary
}

async fn send_error(outbound: &mpsc::Sender<ServerMessage>, e: WireError) {
    let _ = outbound.send(ServerMessage::Error(e)).await;
}

/// `r-` (or another prefix) and 12 hex digits: unique enough per server, and a valid hash tag.
fn new_id(prefix: &str) -> String {
    format!("{prefix}-{:012x}", rand::random::<u64>() & 0xffff_ffff_ffff)
}
