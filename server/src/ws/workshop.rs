//! `check_solution` on the socket: placeholder until the judge service lands.

use oversold_protocol::{ErrorCode, ServerMessage, WireError};
use tokio::sync::mpsc;

use crate::client::Caller;
use crate::state::AppState;

/// Judge a submission (not wired yet).
pub async fn check(
    _state: &AppState,
    _caller: &Caller,
    _exercise: &str,
    _source: String,
    frames: &mpsc::Sender<ServerMessage>,
) {
    let _ = frames
        .send(ServerMessage::Error(WireError::new(
            ErrorCode::BadMessage,
            "the workshop judge is not available yet",
        )))
        .await;
}
