//! The stores a server (or a CLI run) can use: always a Redis, and PostgreSQL when one answered.

use crate::pg::PgDb;
use crate::store::Store;

/// The stores a run can use. PostgreSQL is optional: when it could not be reached at
/// startup, the reason is kept so the page can say why the `postgres` strategy is off.
#[derive(Debug, Clone)]
pub struct Backends {
    /// The Redis every Redis strategy uses.
    pub redis: Store,
    /// The PostgreSQL the `postgres` strategy (and the checkout ledger) uses, or why there
    /// is none.
    pub postgres: Result<PgDb, String>,
    /// True when this process started `redis` itself (a private `redis-server`): only then
    /// may a checkout's outage pause it. Nobody else's Redis is ever paused.
    pub owns_redis: bool,
}

impl Backends {
    /// Redis only; PostgreSQL marked unavailable with `why`.
    pub fn redis_only(redis: Store, why: &str) -> Self {
        Backends {
            redis,
            postgres: Err(why.to_string()),
            owns_redis: false,
        }
    }

    /// The same stores, marking the Redis as one this process started (and may pause).
    pub fn owning_redis(mut self) -> Self {
        self.owns_redis = true;
        self
    }
}
