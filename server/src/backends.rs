//! The stores a server (or a CLI run) can use: always a Redis, and PostgreSQL when one answered.

use crate::pg::PgDb;
use crate::store::Store;

/// The stores a run can use. PostgreSQL is optional: when it could not be reached at
/// startup, the reason is kept so the page can say why the `postgres` strategy is off.
#[derive(Debug, Clone)]
pub struct Backends {
    /// The Redis every Redis strategy uses.
    pub redis: Store,
    /// The PostgreSQL the `postgres` strategy uses, or why there is none.
    pub postgres: Result<PgDb, String>,
}

impl Backends {
    /// Redis only; PostgreSQL marked unavailable with `why`.
    pub fn redis_only(redis: Store, why: &str) -> Self {
        Backends {
            redis,
            postgres: Err(why.to_string()),
        }
    }
}
