//! Step-through mode on a socket: `step_open`, `step`, `step_reset`, `step_close`, each
//! answered with the whole [`StepState`](oversold_protocol::StepState) (or an error).
//!
//! A socket has at most one step session. It holds one of the server's run slots while open
//! (it holds connections and keys like a run does), and closes itself after
//! [`stepper::IDLE`] without a click.

use std::sync::Arc;

use super::admit::{self, Permits};
use super::inbound;
use crate::client::Caller;
use crate::state::AppState;
use crate::stepper::{StepError, Stepper};
use crate::strategy;
use oversold_protocol::limits::{LIMITS, MAX_STEP_BUYERS, MIN_STEP_BUYERS};
use oversold_protocol::{ErrorCode, RunConfig, RunRequest, ServerMessage, WireError};

/// A socket's open step session and the caps it holds (as a run would).
pub struct StepSlot {
    stepper: Stepper,
    _permits: Permits,
}

impl StepSlot {
    /// True when nobody has clicked for [`crate::stepper::IDLE`].
    pub fn idle(&self) -> bool {
        self.stepper.last_used.elapsed() >= crate::stepper::IDLE
    }
}

/// Step-through opens on the classic case: one unit, two buyers.
const DEFAULT_STOCK: u32 = 1;
const DEFAULT_BUYERS: u32 = 2;

/// Check a `step_open` completely (nothing touches Redis before that).
fn admit(
    _state: &AppState,
    request: &RunRequest,
) -> Result<(&'static strategy::Strategy, RunConfig), WireError> {
    let request = RunRequest {
        stock: request.stock.or(Some(DEFAULT_STOCK)),
        buyers: request.buyers.or(Some(DEFAULT_BUYERS)),
        ..request.clone()
    };
    let config = inbound::validate_run(&request, &LIMITS)?;
    if config.race.checkout().is_some() {
        return Err(WireError::new(
            ErrorCode::BadMessage,
            "step-through steps the race scenario's commands; a checkout runs with start_run",
        ));
    }
    let buyers = config.race.buyers;
    if !(MIN_STEP_BUYERS..=MAX_STEP_BUYERS).contains(&buyers) {
        return Err(WireError::new(
            ErrorCode::OutOfRange,
            format!(
                "buyers = {buyers} is out of range for step-through: it must be between \
                 {MIN_STEP_BUYERS} and {MAX_STEP_BUYERS} (the stock may be 0 to {})",
                LIMITS.stock.max
            ),
        ));
    }
    let Some(strategy) = strategy::find(&config.strategy) else {
        return Err(WireError::new(
            ErrorCode::UnknownStrategy,
            format!("unknown strategy {:?}", config.strategy),
        ));
    };
    if let Some(why) = strategy.step_refusal() {
        return Err(WireError::new(ErrorCode::StrategyUnavailable, why));
    }
    Ok((strategy, config))
}

/// `step_open` (also used by `step_reset`): close any session, open a new one.
pub async fn open(
    state: &Arc<AppState>,
    caller: &Caller,
    request: &RunRequest,
    current: &mut Option<StepSlot>,
) -> ServerMessage {
    let (strategy, config) = match admit(state, request) {
        Ok(ok) => ok,
        Err(e) => return ServerMessage::Error(e),
    };
    // The session being replaced gives its permits back first.
    close_quietly(state, current).await;
    let permits = match admit::permits_for_step(state, caller, config.race.buyers) {
        Ok(permits) => permits,
        Err(e) => return ServerMessage::Error(e),
    };
    let run_id = crate::run::new_id("s");
    match Stepper::open(&state.backends, strategy, config, run_id).await {
        Ok(mut stepper) => {
            let snapshot = stepper.state().await;
            *current = Some(StepSlot {
                stepper,
                _permits: permits,
            });
            ServerMessage::StepState(snapshot)
        }
        Err(e) => ServerMessage::Error(WireError::new(ErrorCode::RedisUnavailable, e.to_string())),
    }
}

/// `step`: move one buyer by one command.
pub async fn step(buyer: u32, current: &mut Option<StepSlot>) -> ServerMessage {
    let Some(slot) = current.as_mut() else {
        return ServerMessage::Error(WireError::new(
            ErrorCode::NoRunInProgress,
            "no step-through is open; send step_open first",
        ));
    };
    let stepped = slot.stepper.step(buyer).await;
    let snapshot = slot.stepper.state().await;
    match stepped {
        Ok(()) => ServerMessage::StepState(snapshot),
        Err(e) => {
            let code = match e {
                StepError::NoSuchBuyer(_) => ErrorCode::OutOfRange,
                StepError::Done(_) => ErrorCode::BadMessage,
                StepError::Stuck(..) | StepError::Setup(_) => ErrorCode::RunFailed,
            };
            let mut err = WireError::new(code, e.to_string());
            err.run_id = Some(snapshot.run_id);
            ServerMessage::Error(err)
        }
    }
}

/// `step_reset`: the same knobs, fresh keys, buyers back at the start.
pub async fn reset(
    state: &Arc<AppState>,
    caller: &Caller,
    current: &mut Option<StepSlot>,
) -> ServerMessage {
    let Some(slot) = current.as_ref() else {
        return ServerMessage::Error(WireError::new(
            ErrorCode::NoRunInProgress,
            "no step-through is open; send step_open first",
        ));
    };
    let c = slot.stepper.config();
    let request = RunRequest {
        strategy: Some(c.strategy.clone()),
        stock: Some(c.race.stock),
        buyers: Some(c.race.buyers),
        qty: Some(c.race.qty),
        max_qty: c.race.max_qty,
        seed: Some(c.race.seed),
        ..Default::default()
    };
    open(state, caller, &request, current).await
}

/// `step_close` (and the idle timeout): close the session and say so.
pub async fn close(state: &AppState, current: &mut Option<StepSlot>) -> Option<ServerMessage> {
    let slot = current.take()?;
    let run_id = slot.stepper.run_id().to_string();
    slot.stepper.close(&state.backends).await;
    Some(ServerMessage::StepClosed { run_id })
}

/// Close without a frame (the socket is going away, or a new session replaces this one).
pub async fn close_quietly(state: &AppState, current: &mut Option<StepSlot>) {
    let _ = close(state, current).await;
}
