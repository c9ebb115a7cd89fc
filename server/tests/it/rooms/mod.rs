//! Rooms over real WebSockets against a real Redis: the lifecycle, the presenter token,
//! two servers sharing one Redis, a Redis Cluster, expiry, and every chaos button.

mod challenge;
mod chaos;
mod cluster;
mod hostile;
mod lifecycle;
mod processes;
mod qr;
mod two_servers;

use std::time::Duration;

use oversold_protocol::room::BuyResult;
use oversold_protocol::{ServerMessage, WireError};
use serde_json::json;

use crate::common::Client;

/// A room as its presenter knows it.
pub struct Room {
    pub code: String,
    pub token: String,
    pub join_url: String,
}

/// Next frame that is not a head count or a Redis status, within `secs`.
pub async fn next_room_frame(c: &mut Client, secs: u64) -> ServerMessage {
    loop {
        match c.next_within(secs).await {
            ServerMessage::RoomPresence { .. } | ServerMessage::RedisStatus { .. } => continue,
            m => return m,
        }
    }
}

/// Frames until one `pick` accepts, within `secs` in all.
pub async fn wait_for<T>(
    c: &mut Client,
    secs: u64,
    mut pick: impl FnMut(&ServerMessage) -> Option<T>,
) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let m = tokio::time::timeout(left, c.next_within(secs))
            .await
            .expect("the awaited frame came in time");
        if let Some(t) = pick(&m) {
            return t;
        }
    }
}

pub async fn create(c: &mut Client) -> Room {
    c.hello().await;
    c.send_json(json!({"type": "create_room"})).await;
    match next_room_frame(c, 5).await {
        ServerMessage::RoomCreated {
            room,
            presenter_token,
            join_url,
        } => Room {
            code: room,
            token: presenter_token,
            join_url,
        },
        other => panic!("expected room_created, got {other:?}"),
    }
}

/// Join as `role` ("phone" or "spectator"); returns the participant id.
pub async fn join(c: &mut Client, room: &str, role: &str) -> u32 {
    c.hello().await;
    c.send_json(json!({"type": "join_room", "room": room, "as": role}))
        .await;
    match next_room_frame(c, 5).await {
        ServerMessage::RoomJoined { participant_id, .. } => participant_id,
        other => panic!("expected room_joined, got {other:?}"),
    }
}

/// The next error frame. The room's broadcasts (outcomes, a sale opening or closing, chaos)
/// may come first, at any time, and are skipped; anything else first is a failure.
pub async fn expect_error(c: &mut Client) -> WireError {
    loop {
        match next_room_frame(c, 5).await {
            ServerMessage::Error(e) => return e,
            ServerMessage::Outcomes { .. }
            | ServerMessage::SaleOpened(_)
            | ServerMessage::SaleClosed(_)
            | ServerMessage::ChaosApplied(_) => continue,
            other => panic!("expected an error, got {other:?}"),
        }
    }
}

pub fn open_sale(room: &Room, config: serde_json::Value) -> serde_json::Value {
    json!({"type": "open_sale", "room": room.code, "presenter_token": room.token, "config": config})
}

pub async fn wait_opened(c: &mut Client) -> String {
    wait_for(c, 10, |m| match m {
        ServerMessage::SaleOpened(s) => Some(s.sale_id.clone()),
        _ => None,
    })
    .await
}

pub async fn wait_result(c: &mut Client) -> BuyResult {
    wait_for(c, 15, |m| match m {
        ServerMessage::BuyResult(r) => Some(r.clone()),
        _ => None,
    })
    .await
}

/// Everything up to and including `sale_closed`.
pub async fn until_closed(c: &mut Client, secs: u64) -> Vec<ServerMessage> {
    let mut seen = Vec::new();
    loop {
        let m = next_room_frame(c, secs).await;
        let done = matches!(m, ServerMessage::SaleClosed(_));
        seen.push(m);
        if done {
            return seen;
        }
    }
}
