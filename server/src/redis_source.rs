//! Choosing which Redis to use: the one asked for, else a local one, else a private one.

use std::time::Duration;

use crate::private_redis::{PrivateRedis, PrivateRedisError};
use crate::store::{Store, StoreError};

/// Where Redis is looked for when no URL is given.
pub const DEFAULT_URL: &str = "redis://127.0.0.1:6379";

/// The Redis in use, and the private server behind it if we started one.
/// Keep this alive for as long as the Redis is needed: dropping it stops a private server.
#[derive(Debug)]
pub struct RedisSource {
    /// Handle for connecting.
    pub store: Store,
    /// Set when we started our own `redis-server`.
    pub private: Option<PrivateRedis>,
    /// How it was chosen, for the log.
    pub origin: &'static str,
}

/// Why no Redis could be had.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The URL given was malformed.
    #[error(transparent)]
    Url(#[from] StoreError),
    /// No local Redis, and no private one either.
    #[error(transparent)]
    Private(#[from] PrivateRedisError),
}

/// Resolve the Redis to use. An explicit URL is used even when it does not answer yet
/// (the server reports Redis down and recovers when it comes up).
pub async fn resolve(url: Option<&str>) -> Result<RedisSource, SourceError> {
    if let Some(url) = url {
        return Ok(RedisSource {
            store: Store::open(url)?,
            private: None,
            origin: "--redis-url/REDIS_URL",
        });
    }
    let local = Store::open(DEFAULT_URL)?;
    if matches!(
        tokio::time::timeout(Duration::from_secs(2), local.ping()).await,
        Ok(Ok(()))
    ) {
        return Ok(RedisSource {
            store: local,
            private: None,
            origin: "the local default",
        });
    }
    let private = tokio::task::spawn_blocking(PrivateRedis::start)
        .await
        .expect("starting redis-server does not panic")?;
    Ok(RedisSource {
        store: Store::open(&private.url())?,
        private: Some(private),
        origin: "a private redis-server started for this process",
    })
}
