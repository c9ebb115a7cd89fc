//! Where a run's stock lives: Redis keys, or a PostgreSQL row. The engine puts stock on the
//! shelf, reads it back after the race and clears it, through the run's own admin connection
//! (separate from the buyers').

use crate::backends::Backends;
use crate::pg::{self, PgConn, PgError, StockRow};
use crate::store::stock::{self, Reading};
use crate::store::{RedisConn, RunKeys, StockLayout, StoreError};
use crate::strategy::PrepareError;

/// A store error from either side, or a shelf that is not what the run left on it.
#[derive(Debug, thiserror::Error)]
pub enum ShelfError {
    /// From Redis.
    #[error(transparent)]
    Redis(#[from] StoreError),
    /// From PostgreSQL.
    #[error(transparent)]
    Postgres(#[from] PgError),
    /// The strategy's one-off preparation failed.
    #[error(transparent)]
    Prepare(#[from] PrepareError),
    /// The strategy needs PostgreSQL and there is none.
    #[error("PostgreSQL is unavailable: {0}")]
    NoPostgres(String),
    /// A stock key (or row) was gone when the run read it back: Redis restarted, was
    /// flushed, or evicted it. Any number read now would be invented, not the run's result.
    #[error("the stock ({0}) vanished mid-run: Redis restarted, was flushed, or evicted it")]
    Vanished(String),
    /// A run that needs a `redis-server` of its own (`busy_script`) could not start one.
    #[error("the run's own redis-server did not start: {0}")]
    OwnRedis(String),
    /// Step-through mode was asked for a strategy it cannot step (the reason is the
    /// strategy's [`crate::strategy::Strategy::step_refusal`]).
    #[error("{0}")]
    NotSteppable(String),
    /// `bench --pipeline` was asked for a strategy whose order is not one command (its
    /// [`crate::strategy::Strategy::pipeline_refusal`] says why).
    #[error("{0}")]
    NotPipelinable(String),
    /// A checkout asked for an outage on a Redis this process did not start.
    #[error(
        "outage_ms pauses Redis with CLIENT PAUSE, which stalls every client of that Redis: the \
         server only does it to a private redis-server it started itself, and this one is shared \
         (given by --redis-url, or found running locally)"
    )]
    OutageNotAllowed,
    /// A stock key held something that is not a number when read back.
    #[error("the stock ({key}) holds {raw:?}, not a number: something else wrote it mid-run")]
    NotANumber {
        /// Which key.
        key: String,
        /// What it held.
        raw: String,
    },
}

/// A run's stock in Redis, and the admin connection that put it there.
pub struct RedisShelf {
    run_id: String,
    /// The admin connection (separate from the buyers').
    pub admin: RedisConn,
    /// The run's keys.
    pub keys: RunKeys,
}

/// A run's stock in a PostgreSQL row, and the admin connection that put it there.
pub struct PgShelf {
    /// The admin connection (separate from the buyers').
    pub admin: PgConn,
    /// The row.
    pub row: StockRow,
}

impl RedisShelf {
    /// Open an admin connection and put `stock` units in Redis, laid out as `layout`.
    pub async fn stock(
        backends: &Backends,
        run_id: &str,
        layout: StockLayout,
        stock: u32,
    ) -> Result<RedisShelf, ShelfError> {
        let mut admin = backends
            .redis
            .connect_named(&format!("oversold:{run_id}:admin"))
            .await?;
        let keys = RunKeys::with_layout(run_id, layout);
        stock::init(&mut admin, &keys, stock).await?;
        Ok(RedisShelf {
            run_id: run_id.to_string(),
            admin,
            keys,
        })
    }

    /// The run this shelf belongs to.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }
}

impl PgShelf {
    /// Open an admin connection and put `stock` units in a PostgreSQL row.
    pub async fn stock(
        backends: &Backends,
        run_id: &str,
        stock: u32,
    ) -> Result<PgShelf, ShelfError> {
        let db = backends
            .postgres
            .as_ref()
            .map_err(|why| ShelfError::NoPostgres(why.clone()))?;
        let admin = db.connect().await?;
        let row = StockRow::new(run_id);
        pg::init_stock(&admin, &row, stock).await?;
        Ok(PgShelf { admin, row })
    }
}

/// A run's stock, in whichever store its strategy uses.
pub enum Shelf {
    /// Redis keys.
    Redis(RedisShelf),
    /// A PostgreSQL row.
    Postgres(PgShelf),
}

impl Shelf {
    /// Read the stock back. For Redis, retries once on a fresh connection if the admin one
    /// broke (a Redis that restarted answers again, and then says the key is gone).
    pub async fn read_back(&mut self, backends: &Backends) -> Result<i64, ShelfError> {
        match self {
            Shelf::Redis(RedisShelf { admin, keys, .. }) => {
                let reading = match stock::read_back(admin, keys).await {
                    Ok(r) => r,
                    Err(first) => {
                        tracing::debug!(error = %first, "read-back failed; retrying on a new connection");
                        *admin = backends.redis.connect().await?;
                        stock::read_back(admin, keys).await?
                    }
                };
                match reading {
                    Reading::Units(n) => Ok(n),
                    Reading::Missing(key) => Err(ShelfError::Vanished(key)),
                    Reading::NotInteger { key, raw } => Err(ShelfError::NotANumber { key, raw }),
                }
            }
            Shelf::Postgres(PgShelf { admin, row }) => pg::read_stock(admin, row)
                .await?
                .ok_or_else(|| ShelfError::Vanished("the oversold_stock row".into())),
        }
    }

    /// Delete the run's stock (Redis keys also expire by TTL if this never runs).
    pub async fn clear(&mut self) -> Result<(), ShelfError> {
        match self {
            Shelf::Redis(RedisShelf { admin, keys, .. }) => {
                Ok(stock::remove_run(admin, keys).await?)
            }
            Shelf::Postgres(PgShelf { admin, row }) => Ok(pg::remove_run(admin, row).await?),
        }
    }
}
