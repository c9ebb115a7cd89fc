//! Watching Redis: a PING every second on one long-lived connection, published on a `watch`
//! channel. Every socket tells its page when Redis goes down or comes back, and `/healthz`
//! answers from the latest result without touching Redis itself.
//!
//! On a Redis Cluster, "up" means the whole cluster: every slot has a master, every master
//! answers a PING, and the cluster reports `cluster_state:ok` ([`store::ping`]). One
//! master down is "down" (with the reason "a cluster node is down or its slots are
//! unserved"), even though runs whose keys live on the other masters could still work: with
//! no replicas, Redis itself stops serving every slot once it notices (its node timeout).

use std::time::Duration;

use oversold_protocol::RedisState;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::store::{self, RedisConn, Store, StoreError};

/// How often Redis is pinged.
pub const INTERVAL: Duration = Duration::from_millis(1000);

/// Redis as the monitor last saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    /// Up or down.
    pub state: RedisState,
    /// Why it is down (refused, authentication failed, out of memory...), in a few words.
    pub reason: Option<String>,
}

impl Health {
    /// Up, no reason.
    pub fn up() -> Self {
        Health {
            state: RedisState::Up,
            reason: None,
        }
    }

    /// Down because of `e`.
    pub fn down(e: &StoreError) -> Self {
        Health {
            state: RedisState::Down,
            reason: Some(e.cause().as_str().to_string()),
        }
    }
}

/// Check once, on a fresh connection: the first reading, before the monitor runs.
pub async fn check_once(store: &Store) -> Health {
    let mut conn = None;
    check(store, &mut conn).await
}

/// Ping until `stop` fires. The connection is reused while it works and reopened when it
/// breaks, so recovery needs no restart.
pub async fn monitor(store: Store, health: watch::Sender<Health>, stop: CancellationToken) {
    let mut conn: Option<RedisConn> = None;
    loop {
        let now = check(&store, &mut conn).await;
        let was = health.borrow().state;
        if now.state != was {
            match &now.reason {
                None => tracing::info!(redis = %store.display_addr(), "Redis is up"),
                Some(why) => {
                    tracing::warn!(redis = %store.display_addr(), reason = why, "Redis is down")
                }
            }
        }
        health.send_if_modified(|h| std::mem::replace(h, now.clone()) != now);
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(INTERVAL) => {}
        }
    }
}

async fn check(store: &Store, conn: &mut Option<RedisConn>) -> Health {
    if conn.as_ref().is_none_or(RedisConn::is_broken) {
        match store.connect().await {
            Ok(c) => *conn = Some(c),
            Err(e) => {
                *conn = None;
                return Health::down(&e);
            }
        }
    }
    let c = conn.as_mut().expect("connected above");
    match store::ping(c).await {
        Ok(()) => Health::up(),
        Err(e) => {
            *conn = None;
            Health::down(&e)
        }
    }
}
