//! Where a run's stock lives: a Redis key, or a PostgreSQL row. The engine puts stock on
//! the shelf, opens the app servers' links to it, reads it back and clears it, without
//! caring which store it is.

use std::sync::Arc;

use tokio::sync::Mutex;

use crate::pg::{self, PgConn, PgDb, PgError};
use crate::store::{self, Conn, RunKeys, Store, StoreError};

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

/// How a strategy's buyers reach the shelf. Each app server gets one link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    /// A multiplexed Redis connection shared by every buyer on the app server: requests
    /// from many buyers are pipelined on it. Right for single commands and scripts.
    SharedRedis,
    /// A Redis connection one buyer holds at a time. `WATCH` state belongs to a connection,
    /// so two buyers' transactions must never interleave on one.
    ExclusiveRedis,
    /// A PostgreSQL connection one buyer holds at a time (a transaction owns its connection).
    Postgres,
}

/// One app server's link to the shelf, handed to each buyer on that app server.
#[derive(Clone)]
pub enum Link {
    /// See [`LinkKind::SharedRedis`].
    Redis(Conn),
    /// See [`LinkKind::ExclusiveRedis`]: lock it for the whole attempt.
    RedisExclusive(Arc<Mutex<Conn>>),
    /// See [`LinkKind::Postgres`]: lock it for the whole transaction.
    Postgres(Arc<Mutex<PgConn>>),
}

/// A store error from either side.
#[derive(Debug, thiserror::Error)]
pub enum ShelfError {
    /// From Redis.
    #[error(transparent)]
    Redis(#[from] StoreError),
    /// From PostgreSQL.
    #[error(transparent)]
    Postgres(#[from] PgError),
    /// The strategy needs PostgreSQL and there is none.
    #[error("PostgreSQL is unavailable: {0}")]
    NoPostgres(String),
}

/// A run's stock and the admin connection that set it up.
pub enum Shelf {
    /// A Redis key.
    Redis {
        /// The admin connection (separate from the buyers').
        conn: Conn,
        /// The run's keys.
        keys: RunKeys,
    },
    /// A PostgreSQL row.
    Postgres {
        /// The admin connection.
        conn: PgConn,
        /// The row's key.
        run_id: String,
    },
}

impl Shelf {
    /// Open the admin connection for `kind` and put `stock` units on the shelf.
    pub async fn stock(
        backends: &Backends,
        kind: LinkKind,
        run_id: &str,
        stock: u32,
    ) -> Result<Shelf, ShelfError> {
        match kind {
            LinkKind::SharedRedis | LinkKind::ExclusiveRedis => {
                let mut conn = backends.redis.connect().await?;
                let keys = RunKeys::new(run_id);
                store::init_stock(&mut conn, &keys, stock).await?;
                Ok(Shelf::Redis { conn, keys })
            }
            LinkKind::Postgres => {
                let db = backends
                    .postgres
                    .as_ref()
                    .map_err(|why| ShelfError::NoPostgres(why.clone()))?;
                let conn = db.connect().await?;
                pg::init_stock(&conn.client, run_id, stock).await?;
                Ok(Shelf::Postgres {
                    conn,
                    run_id: run_id.to_string(),
                })
            }
        }
    }

    /// Open `n` links of `kind`, concurrently.
    pub async fn links(
        backends: &Backends,
        kind: LinkKind,
        n: u32,
    ) -> Result<Vec<Link>, ShelfError> {
        match kind {
            LinkKind::SharedRedis => Ok(backends
                .redis
                .connect_fleet(n)
                .await?
                .into_iter()
                .map(Link::Redis)
                .collect()),
            LinkKind::ExclusiveRedis => Ok(backends
                .redis
                .connect_fleet(n)
                .await?
                .into_iter()
                .map(|c| Link::RedisExclusive(Arc::new(Mutex::new(c))))
                .collect()),
            LinkKind::Postgres => {
                let db = backends
                    .postgres
                    .as_ref()
                    .map_err(|why| ShelfError::NoPostgres(why.clone()))?;
                let conns =
                    futures_util::future::try_join_all((0..n).map(|_| db.connect())).await?;
                Ok(conns
                    .into_iter()
                    .map(|c| Link::Postgres(Arc::new(Mutex::new(c))))
                    .collect())
            }
        }
    }

    /// The Redis keys, for strategies that need them (empty names for PostgreSQL runs).
    pub fn keys(&self) -> RunKeys {
        match self {
            Shelf::Redis { keys, .. } => keys.clone(),
            Shelf::Postgres { run_id, .. } => RunKeys::new(run_id),
        }
    }

    /// The admin Redis connection, for one-off preparation (e.g. `FUNCTION LOAD`).
    pub fn redis_conn(&mut self) -> Option<&mut Conn> {
        match self {
            Shelf::Redis { conn, .. } => Some(conn),
            Shelf::Postgres { .. } => None,
        }
    }

    /// Read the stock back. For Redis, retries once on a fresh connection if the admin one broke.
    pub async fn read_back(&mut self, backends: &Backends) -> Result<i64, ShelfError> {
        match self {
            Shelf::Redis { conn, keys } => match store::read_stock(conn, keys).await {
                Ok(v) => Ok(v.unwrap_or(0)),
                Err(first) => {
                    tracing::debug!(error = %first, "final read failed; retrying on a new connection");
                    *conn = backends.redis.connect().await?;
                    Ok(store::read_stock(conn, keys).await?.unwrap_or(0))
                }
            },
            Shelf::Postgres { conn, run_id } => {
                Ok(pg::read_stock(&conn.client, run_id).await?.unwrap_or(0))
            }
        }
    }

    /// Delete the run's stock (keys also expire by TTL if this never runs).
    pub async fn clear(&mut self) -> Result<(), ShelfError> {
        match self {
            Shelf::Redis { conn, keys } => Ok(store::remove_run(conn, keys).await?),
            Shelf::Postgres { conn, run_id } => Ok(pg::remove_run(&conn.client, run_id).await?),
        }
    }
}
