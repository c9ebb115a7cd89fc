//! The settlement ledger of a checkout run: PostgreSQL when the server has it, else the
//! Redis-side fallback. Either way an order is written once per request id.
//!
//! Only `pg.rs` knows the SQL and only `store::ledger` the Redis keys; this module picks
//! one and gives both the same face.

use std::sync::Arc;

use oversold_protocol::{LedgerInfo, LedgerKind};

use crate::backends::Backends;
use crate::pg::{self, LedgerRun, PgConn};
use crate::shelf::ShelfError;
use crate::store::ledger as redis_ledger;
pub use crate::store::ledger::{LedgerTotals, RowState};
use crate::store::{CheckoutKeys, RedisConn};

/// Where a run's orders are settled.
pub enum Ledger {
    /// Rows of `oversold_ledger`, on one connection every buyer shares (tokio-postgres
    /// pipelines concurrent statements on it).
    Postgres {
        /// The connection.
        conn: Arc<PgConn>,
        /// The run's rows.
        run: LedgerRun,
    },
    /// A hash under the run's hash tag. Buyers write it on their own app server's
    /// connection (so those requests count in their round trips); reads use `admin`.
    Redis {
        /// The run's admin connection.
        admin: RedisConn,
        /// The run's keys (boxed: they are most of the variant's size).
        keys: Box<CheckoutKeys>,
    },
}

/// What `hello` and the CLI say about the ledger these stores give.
pub fn info(backends: &Backends) -> LedgerInfo {
    match &backends.postgres {
        Ok(db) => LedgerInfo {
            kind: LedgerKind::Postgres,
            note: format!(
                "orders settle in PostgreSQL ({}, table oversold_ledger)",
                db.display_addr()
            ),
        },
        Err(why) => LedgerInfo {
            kind: LedgerKind::Redis,
            note: format!(
                "PostgreSQL is not available ({why}): orders settle in a Redis hash under each run's hash tag"
            ),
        },
    }
}

impl Ledger {
    /// PostgreSQL if the server has it (one connection for the run), else Redis.
    pub async fn open(
        backends: &Backends,
        run_id: &str,
        keys: &CheckoutKeys,
        admin: &RedisConn,
    ) -> Result<Ledger, ShelfError> {
        Ok(match &backends.postgres {
            Ok(db) => Ledger::Postgres {
                conn: Arc::new(db.connect().await?),
                run: LedgerRun::new(run_id),
            },
            Err(_) => Ledger::Redis {
                admin: admin.clone(),
                keys: Box::new(keys.clone()),
            },
        })
    }

    /// Which kind it is.
    pub fn kind(&self) -> LedgerKind {
        match self {
            Ledger::Postgres { .. } => LedgerKind::Postgres,
            Ledger::Redis { .. } => LedgerKind::Redis,
        }
    }

    /// Write one order (once per `order` id). Returns whether it was written, or why not,
    /// and the Redis requests it took on `conn` (0 for PostgreSQL).
    pub async fn record(
        &self,
        conn: &mut RedisConn,
        order: &str,
        customer: u32,
        qty: u32,
        state: RowState,
    ) -> (Result<bool, String>, u32) {
        match self {
            Ledger::Postgres { conn: db, run } => {
                let written =
                    pg::ledger_insert(db, run, order, customer, qty, state.as_str()).await;
                (written.map_err(|e| e.short()), 0)
            }
            Ledger::Redis { keys, .. } => {
                match redis_ledger::record(conn, keys, order, customer, qty, state).await {
                    Ok(c) => (Ok(c.reply), c.round_trips),
                    Err(f) => (Err(f.error.short()), f.round_trips),
                }
            }
        }
    }

    /// The running totals, without the per-customer split (cheap: for live frames).
    pub async fn totals(&self) -> Result<LedgerTotals, ShelfError> {
        match self {
            Ledger::Postgres { conn, run } => {
                let mut t = LedgerTotals::default();
                for (state, rows, units) in pg::ledger_totals(conn, run).await? {
                    let (rows, units) = (
                        u32::try_from(rows).unwrap_or(u32::MAX),
                        u64::try_from(units).unwrap_or(0),
                    );
                    match state.as_str() {
                        "confirmed" => (t.confirmed_orders, t.confirmed_units) = (rows, units),
                        _ => (t.backorders, t.backorder_units) = (rows, units),
                    }
                }
                Ok(t)
            }
            Ledger::Redis { admin, keys } => {
                Ok(redis_ledger::totals(&mut admin.clone(), keys).await?)
            }
        }
    }

    /// Everything, with confirmed units per customer: for the end of a run.
    pub async fn read_all(&self) -> Result<LedgerTotals, ShelfError> {
        match self {
            Ledger::Postgres { conn, run } => {
                let mut t = self.totals().await?;
                t.per_customer = pg::ledger_per_customer(conn, run)
                    .await?
                    .into_iter()
                    .map(|(c, units)| {
                        (
                            u32::try_from(c).unwrap_or(0),
                            u64::try_from(units).unwrap_or(0),
                        )
                    })
                    .collect();
                Ok(t)
            }
            Ledger::Redis { admin, keys } => {
                Ok(redis_ledger::read_all(&mut admin.clone(), keys).await?)
            }
        }
    }

    /// Delete the run's rows (the Redis ledger goes with the run's keys).
    pub async fn clear(&self) -> Result<(), ShelfError> {
        match self {
            Ledger::Postgres { conn, run } => Ok(pg::ledger_clear(conn, run).await?),
            Ledger::Redis { .. } => Ok(()),
        }
    }
}
