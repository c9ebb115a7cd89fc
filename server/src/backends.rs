//! The stores a server (or a CLI run) can use: always a Redis, PostgreSQL when one answered,
//! and where a `redlock` run finds its three lock masters.

use std::sync::Arc;

use crate::pg::PgDb;
use crate::store::Store;

/// How many independent masters a `redlock` lock is taken on.
pub const LOCK_MASTERS: usize = 3;

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
    /// Where a `redlock` run takes its lock (see [`crate::lock_service`]).
    pub lock_masters: LockMasters,
}

/// Where a `redlock` run finds its [`LOCK_MASTERS`] lock masters.
#[derive(Debug, Clone, Default)]
pub enum LockMasters {
    /// Each run starts `redis-server`s of its own and stops them when it ends.
    #[default]
    PerRun,
    /// Masters someone else runs and may kill or freeze mid-run (the tests do): each a
    /// single Redis, independent of the others and of the stock's Redis.
    Given(Arc<[Store; LOCK_MASTERS]>),
}

impl LockMasters {
    /// Why a `redlock` run cannot get its masters here, if it cannot.
    pub fn unavailable_reason(&self) -> Option<String> {
        match self {
            LockMasters::PerRun if !crate::private_redis::installed() => Some(format!(
                "redlock starts {LOCK_MASTERS} redis-servers of its own as its lock masters, \
                 and redis-server is not on PATH"
            )),
            LockMasters::PerRun | LockMasters::Given(_) => None,
        }
    }
}

impl Backends {
    /// Redis only; PostgreSQL marked unavailable with `why`.
    pub fn redis_only(redis: Store, why: &str) -> Self {
        Backends {
            redis,
            postgres: Err(why.to_string()),
            owns_redis: false,
            lock_masters: LockMasters::PerRun,
        }
    }

    /// The same stores, marking the Redis as one this process started (and may pause).
    pub fn owning_redis(mut self) -> Self {
        self.owns_redis = true;
        self
    }
}
