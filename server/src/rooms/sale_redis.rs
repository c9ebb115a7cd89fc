//! The Redis a room's sale runs on: a `redis-server` of the sale's own, started by the
//! process that runs the sale and stopped with it, whenever this server may start them
//! ([`super::Rooms::with_own_sale_redis`]); otherwise the shared Redis, and no chaos.
//!
//! Why its own: chaos buttons pause, flush, kill and restart a Redis. On the shared one, a
//! press in one room would hit every other room, every sale and every visitor's run. On
//! the sale's own, the worst a presenter can do is to their own sale. The room itself (its
//! record, its stream, the sale's lease) stays on the shared Redis, so a restart of the
//! sale's Redis loses the sale's stock and nothing of the room.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use oversold_protocol::{ErrorCode, WireError};

use crate::backends::Backends;
use crate::private_redis::PrivateRedis;
use crate::store::Store;

/// The most memory a sale's own Redis may use: a sale's shelf is a few keys, so this only
/// bounds what a misbehaving script could pile up.
const MAXMEMORY: &str = "64mb";

/// Where one sale's stock lives.
pub struct SaleRedis {
    /// The stores the sale's arena uses (its Redis; never PostgreSQL).
    pub backends: Backends,
    /// The sale's own `redis-server`, when it has one (chaos acts on it).
    process: Option<Arc<Mutex<PrivateRedis>>>,
}

impl SaleRedis {
    /// The shared Redis: no chaos.
    pub fn shared(backends: &Backends) -> Self {
        SaleRedis {
            backends: backends.clone(),
            process: None,
        }
    }

    /// Start a `redis-server` for one sale (a few tens of ms), capped at [`MAXMEMORY`].
    pub async fn start_own() -> Result<Self, WireError> {
        let t = Instant::now();
        let process = tokio::task::spawn_blocking(PrivateRedis::start)
            .await
            .map_err(|e| WireError::new(ErrorCode::RunFailed, e.to_string()))?
            .map_err(|e| {
                WireError::new(
                    ErrorCode::RedisUnavailable,
                    format!("the sale's own Redis did not start: {e}"),
                )
            })?;
        let store = Store::open(&process.url()).map_err(super::unavailable)?;
        let mut conn = store.connect().await.map_err(super::unavailable)?;
        crate::store::rooms::cap_memory(&mut conn, MAXMEMORY)
            .await
            .map_err(super::unavailable)?;
        tracing::debug!(port = process.port(), took_ms = %t.elapsed().as_millis(), "a sale's own Redis started");
        Ok(SaleRedis {
            backends: Backends::redis_only(store, "a room's sale runs on Redis").owning_redis(),
            process: Some(Arc::new(Mutex::new(process))),
        })
    }

    /// The store the sale's buyers use.
    pub fn store(&self) -> &Store {
        &self.backends.redis
    }

    /// True when the sale has a Redis of its own (chaos may act on it).
    pub fn is_own(&self) -> bool {
        self.process.is_some()
    }

    /// Stop the sale's own Redis and start it again, empty, on the same port. Returns how
    /// long it was down.
    pub async fn restart(&self) -> Result<std::time::Duration, WireError> {
        let Some(process) = self.process.clone() else {
            return Err(WireError::new(
                ErrorCode::ChaosNotAllowed,
                "this sale runs on the shared Redis; chaos never touches it",
            ));
        };
        let t = Instant::now();
        tokio::task::spawn_blocking(move || {
            let mut redis = process.lock().expect("sale redis poisoned");
            redis.stop();
            redis.restart()
        })
        .await
        .map_err(|e| WireError::new(ErrorCode::RunFailed, e.to_string()))?
        .map_err(|e| WireError::new(ErrorCode::RedisUnavailable, e.to_string()))?;
        Ok(t.elapsed())
    }
}
