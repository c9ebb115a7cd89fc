//! Choosing which Redis to use: the one asked for (a URL, or a Redis Cluster's nodes), a
//! private cluster when asked for one, else a local Redis, else a private one.

use std::time::Duration;

use crate::private_cluster::PrivateCluster;
use crate::private_redis::{PrivateRedis, PrivateRedisError};
use crate::store::{Store, StoreError};

/// Where Redis is looked for when no URL is given.
pub const DEFAULT_URL: &str = "redis://127.0.0.1:6379";

/// What the command line asked for.
#[derive(Debug, Clone, Copy)]
pub enum Wanted<'a> {
    /// `--redis-url`/`REDIS_URL`: one Redis.
    Url(&'a str),
    /// `--redis-cluster`/`REDIS_CLUSTER`: a Redis Cluster, through these nodes.
    Cluster(&'a [String]),
    /// `--private-cluster`: start a three-master cluster of our own.
    PrivateCluster,
    /// `--private-redis`: start a `redis-server` of our own even when the local default
    /// answers (so a checkout may pause it for an outage).
    PrivateRedis,
    /// Nothing: the local default if it answers, else a private `redis-server`.
    Default,
}

/// The Redis in use, and the private server (or cluster) behind it if we started one.
/// Keep this alive for as long as the Redis is needed: dropping it stops a private server.
#[derive(Debug)]
pub struct RedisSource {
    /// Handle for connecting.
    pub store: Store,
    /// Set when we started our own `redis-server` or cluster.
    pub private: Option<Private>,
    /// How it was chosen, for the log.
    pub origin: &'static str,
}

/// What we started ourselves, stopped when dropped.
#[derive(Debug)]
pub enum Private {
    /// One `redis-server`.
    Redis(PrivateRedis),
    /// A three-master Redis Cluster.
    Cluster(PrivateCluster),
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

/// Resolve the Redis to use. An explicit URL or cluster is used even when it does not
/// answer yet (the server reports Redis down and recovers when it comes up).
pub async fn resolve(wanted: Wanted<'_>) -> Result<RedisSource, SourceError> {
    match wanted {
        Wanted::Url(url) => Ok(RedisSource {
            store: Store::open(url)?,
            private: None,
            origin: "--redis-url/REDIS_URL",
        }),
        Wanted::Cluster(nodes) => Ok(RedisSource {
            store: Store::open_cluster(nodes)?,
            private: None,
            origin: "--redis-cluster/REDIS_CLUSTER",
        }),
        Wanted::PrivateCluster => {
            let cluster = tokio::task::spawn_blocking(PrivateCluster::start)
                .await
                .expect("starting a cluster does not panic")?;
            Ok(RedisSource {
                store: Store::open_cluster(&cluster.seeds())?,
                private: Some(Private::Cluster(cluster)),
                origin: "a private three-master Redis Cluster started for this process",
            })
        }
        Wanted::PrivateRedis => private().await,
        Wanted::Default => local_or_private().await,
    }
}

/// The local default if it answers, else a private `redis-server`.
async fn local_or_private() -> Result<RedisSource, SourceError> {
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
    private().await
}

/// A private `redis-server` of our own, on a free loopback port.
async fn private() -> Result<RedisSource, SourceError> {
    let private = tokio::task::spawn_blocking(PrivateRedis::start)
        .await
        .expect("starting redis-server does not panic")?;
    Ok(RedisSource {
        store: Store::open(&private.url())?,
        private: Some(Private::Redis(private)),
        origin: "a private redis-server started for this process",
    })
}
