//! `check_solution` on the socket: the judge runs in the background (a check takes a second
//! or two) and its one `solution_verdict`, or one `error`, comes back on this socket.

use std::sync::Arc;

use oversold_protocol::ServerMessage;
use tokio::sync::mpsc;

use crate::client::Caller;
use crate::state::AppState;

/// Judge a submission for this socket's address.
pub async fn check(
    state: &Arc<AppState>,
    caller: &Caller,
    exercise: &str,
    source: String,
    frames: &mpsc::Sender<ServerMessage>,
) {
    // Refusals that need no sandbox are answered now, in order with the socket's frames.
    if let Err(e) = crate::workshop::service::admit(exercise, &source) {
        let _ = frames.send(ServerMessage::Error(e)).await;
        return;
    }
    let (workshop, addr, exercise) = (state.workshop.clone(), caller.addr, exercise.to_string());
    let frames = frames.clone();
    tokio::spawn(async move {
        let answer = match workshop.check(addr, &exercise, &source).await {
            Ok(verdict) => ServerMessage::SolutionVerdict(verdict),
            Err(e) => ServerMessage::Error(e),
        };
        let _ = frames.send(answer).await;
    });
}
