//! Watching Redis: a PING every second, published on a `watch` channel so every
//! socket can tell its page when Redis goes down or comes back.

use std::time::Duration;

use oversold_protocol::RedisState;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::store::{self, Conn, Store};

/// How often Redis is pinged.
pub const INTERVAL: Duration = Duration::from_millis(1000);

/// Ping until `stop` fires. The connection is reused while it works and reopened when it
/// breaks, so recovery needs no restart.
pub async fn monitor(store: Store, state: watch::Sender<RedisState>, stop: CancellationToken) {
    let mut conn: Option<Conn> = None;
    loop {
        let now = check(&store, &mut conn).await;
        let changed = state.send_if_modified(|s| std::mem::replace(s, now) != now);
        if changed {
            match now {
                RedisState::Up => tracing::info!(redis = %store.display_addr(), "Redis is up"),
                RedisState::Down => tracing::warn!(redis = %store.display_addr(), "Redis is down"),
            }
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(INTERVAL) => {}
        }
    }
}

async fn check(store: &Store, conn: &mut Option<Conn>) -> RedisState {
    if conn.is_none() {
        *conn = store.connect().await.ok();
    }
    let alive = match conn.as_mut() {
        Some(c) => store::ping(c).await.is_ok(),
        None => false,
    };
    if alive {
        RedisState::Up
    } else {
        *conn = None;
        RedisState::Down
    }
}
