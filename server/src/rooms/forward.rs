//! A seat's forwarding task: the room's events turned into one socket's frames.
//!
//! First the current sale, replayed from the stream (a late joiner, or a phone back after a
//! reload, sees what happened, its own result included), then the live feed, skipping
//! anything already sent (stream ids only grow), and a coalesced `room_presence` at most
//! every [`PRESENCE_EVERY`]. A receiver that lags catches up from the stream. The task ends
//! when the socket's queue closes; the seat aborts it when it leaves.

use std::sync::Arc;
use std::time::Duration;

use oversold_protocol::ServerMessage;
use oversold_protocol::room::Presence;
use tokio::sync::{broadcast, mpsc};

use super::event::{Event, Stamped, StreamId};
use super::hub::Hub;

/// Head counts go out at most this often (500 phones joining is one frame, not 500).
const PRESENCE_EVERY: Duration = Duration::from_millis(250);

/// The frame `s` is for this participant, if any.
fn frame_for(s: &Stamped, participant: u32) -> Option<ServerMessage> {
    match &s.event {
        Event::All { msg } => Some(msg.clone()),
        Event::One { to, msg } if *to == participant => Some(msg.clone()),
        _ => None,
    }
}

/// The task (see the module doc).
pub async fn forward(
    hub: Arc<Hub>,
    mut live: broadcast::Receiver<Arc<Stamped>>,
    participant: u32,
    replay_from: Option<StreamId>,
    frames: mpsc::Sender<ServerMessage>,
) {
    let mut last: Option<StreamId> = None;
    if let Some(start) = replay_from
        && !replay(&hub, start, participant, &mut last, &frames).await
    {
        return;
    }
    let mut presence = hub.presence();
    presence.mark_changed();
    let mut dirty = false;
    let mut tick = tokio::time::interval(PRESENCE_EVERY);
    loop {
        tokio::select! {
            got = live.recv() => {
                let delivered = match got {
                    // Shared, not copied: most events are another phone's answer or click,
                    // and only a frame meant for this socket is cloned (`frame_for`). With
                    // 2,000 phones that is 2,000 answers seen by 2,000 receivers per sale.
                    Ok(s) => deliver(std::slice::from_ref(&*s), participant, &mut last, &frames).await,
                    // Fell behind the local feed: read what was missed from the stream.
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let mut missed = hub.since(last, false).await.unwrap_or_default();
                        catch_up(&hub, &mut missed, participant, &mut last, &frames).await
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                if !delivered {
                    return;
                }
            }
            Ok(()) = presence.changed() => dirty = true,
            _ = tick.tick(), if dirty => {
                dirty = false;
                let p: Presence = *presence.borrow_and_update();
                let msg = ServerMessage::RoomPresence { room: hub.code.clone(), presence: p };
                if frames.send(msg).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// The current sale from its first event to the newest, page by page (a sale of hundreds
/// of phones is thousands of entries): a late screen sees all of it, `sale_closed`
/// included. False once the socket is gone.
async fn replay(
    hub: &Hub,
    start: StreamId,
    participant: u32,
    last: &mut Option<StreamId>,
    frames: &mpsc::Sender<ServerMessage>,
) -> bool {
    let mut page = hub.since(Some(start), true).await.unwrap_or_default();
    catch_up(hub, &mut page, participant, last, frames).await
}

/// Deliver `page`, then every later page up to the newest entry. False once the socket is
/// gone.
async fn catch_up(
    hub: &Hub,
    page: &mut Vec<Stamped>,
    participant: u32,
    last: &mut Option<StreamId>,
    frames: &mpsc::Sender<ServerMessage>,
) -> bool {
    loop {
        let full = page.len() >= super::hub::READ_BATCH;
        if !deliver(page, participant, last, frames).await {
            return false;
        }
        if !full {
            return true;
        }
        *page = hub.since(*last, false).await.unwrap_or_default();
    }
}

/// Send what in `batch` is newer than `last` and meant for this participant. False once the
/// socket is gone.
async fn deliver(
    batch: &[Stamped],
    participant: u32,
    last: &mut Option<StreamId>,
    frames: &mpsc::Sender<ServerMessage>,
) -> bool {
    for s in batch {
        if last.is_some_and(|l| s.id <= l) {
            continue;
        }
        *last = Some(s.id);
        if let Some(msg) = frame_for(s, participant)
            && frames.send(msg).await.is_err()
        {
            return false;
        }
    }
    true
}
