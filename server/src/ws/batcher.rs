//! Forwarding a run's outcomes to the socket in batches.
//!
//! Buyers push into an unbounded channel and never wait. This task drains it and
//! sends one `outcomes` frame per batch: at most [`MAX_BATCH`] outcomes, and a frame
//! leaves at most [`MAX_DELAY`] after its first outcome arrived. If the browser reads
//! slowly, the outbound queue fills and *this* task waits; outcomes pile up in the
//! unbounded channel (bounded by the run's buyer count) and go out in bigger batches.

use std::time::Duration;

use oversold_protocol::{BuyerOutcome, ServerMessage};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Most outcomes in one frame (a 10,000-buyer run is about 20 frames).
pub const MAX_BATCH: usize = 512;
/// Longest an outcome waits for its batch to fill.
pub const MAX_DELAY: Duration = Duration::from_millis(40);

/// Drain `outcomes` into `outbound` until every sender is gone. Returns false if the
/// socket went away first (the rest of the outcomes are then dropped).
pub async fn forward(
    run_id: String,
    mut outcomes: mpsc::UnboundedReceiver<BuyerOutcome>,
    outbound: mpsc::Sender<ServerMessage>,
) -> bool {
    while let Some(first) = outcomes.recv().await {
        let deadline = Instant::now() + MAX_DELAY;
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            // Take what is already queued without waiting...
            match outcomes.try_recv() {
                Ok(o) => {
                    batch.push(o);
                    continue;
                }
                Err(mpsc::error::TryRecvError::Disconnected) => break,
                Err(mpsc::error::TryRecvError::Empty) => {}
            }
            // ...then wait for more, but not past the deadline.
            match tokio::time::timeout_at(deadline, outcomes.recv()).await {
                Ok(Some(o)) => batch.push(o),
                Ok(None) | Err(_) => break,
            }
        }
        let frame = ServerMessage::Outcomes {
            run_id: run_id.clone(),
            outcomes: batch,
        };
        if outbound.send(frame).await.is_err() {
            return false;
        }
    }
    true
}
