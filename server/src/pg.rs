//! Everything that knows PostgreSQL: the stock table, the settlement ledger, connections, and
//! the row-lock transaction.
//!
//! The `postgres` strategy is the database answer to the race: `SELECT ... FOR UPDATE`
//! serializes buyers on the row; `postgres_naive` is the same transaction without it, whose
//! `UPDATE` writes a value computed from a plain `SELECT` (the lost update). One row per run
//! in one table, deleted when the run ends.
//!
//! The checkout scenario settles its orders in `oversold_ledger`: a row per order, keyed by
//! run and request id, so a retried write is one order, never two. A run's rows are deleted
//! when the run has been tallied.

use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_postgres::{Client, NoTls};

/// Where PostgreSQL is looked for when no URL is given (this machine's local server).
pub const DEFAULT_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";
/// How long opening a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// What went wrong talking to PostgreSQL.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// The URL could not be parsed.
    #[error("invalid database URL: {0}")]
    BadUrl(#[source] tokio_postgres::Error),
    /// Could not connect in time.
    #[error("cannot connect to PostgreSQL at {addr}: {reason}")]
    Connect {
        /// Where (no password).
        addr: String,
        /// Why.
        reason: String,
        /// True when the server refused for lack of connection slots ("too many clients").
        too_many_clients: bool,
    },
    /// A statement failed.
    #[error("{op} failed: {source}")]
    Query {
        /// Which statement.
        op: &'static str,
        /// The cause.
        #[source]
        source: tokio_postgres::Error,
    },
}

impl PgError {
    fn query(op: &'static str) -> impl FnOnce(tokio_postgres::Error) -> PgError {
        move |source| PgError::Query { op, source }
    }

    /// True when PostgreSQL refused for lack of connection slots: the run is refused as
    /// `resource_exhausted`, not blamed on the strategy.
    pub fn is_resource_exhausted(&self) -> bool {
        matches!(
            self,
            PgError::Connect {
                too_many_clients: true,
                ..
            }
        )
    }

    /// True when PostgreSQL itself is unreachable (not one failed statement): the engine
    /// stops a run early.
    pub fn is_outage(&self) -> bool {
        match self {
            PgError::Connect { .. } => true,
            PgError::Query { source, .. } => source.is_closed(),
            PgError::BadUrl(_) => false,
        }
    }

    /// A short message fit for one buyer's audit line.
    pub fn short(&self) -> String {
        match self {
            PgError::Query { op, source } if source.is_closed() => {
                format!("{op}: connection to PostgreSQL lost")
            }
            PgError::Query { op, source } => match source.as_db_error() {
                Some(db) => format!("{op}: {}", db.message()),
                None => format!("{op}: {source}"),
            },
            other => other.to_string(),
        }
    }
}

/// Where one run's stock lives in PostgreSQL: its row in `oversold_stock`.
#[derive(Debug, Clone)]
pub struct StockRow {
    run_id: String,
}

impl StockRow {
    /// The row of the run `run_id`.
    pub fn new(run_id: &str) -> Self {
        StockRow {
            run_id: run_id.to_string(),
        }
    }
}

/// A PostgreSQL database we can put stock in.
#[derive(Debug, Clone)]
pub struct PgDb {
    config: tokio_postgres::Config,
    display: String,
}

/// One open connection; its background task ends when this is dropped. Only this module
/// sends statements on it.
pub struct PgConn {
    client: Client,
    task: JoinHandle<()>,
}

impl Drop for PgConn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl PgDb {
    /// Parse the URL, connect once, and make sure the stock table exists.
    pub async fn open(url: &str) -> Result<Self, PgError> {
        let config: tokio_postgres::Config = url.parse().map_err(PgError::BadUrl)?;
        let display = describe(&config);
        let db = PgDb { config, display };
        let conn = db.connect().await?;
        conn.client
            .batch_execute(
                "CREATE TABLE IF NOT EXISTS oversold_stock (
                     run_id text PRIMARY KEY,
                     stock  bigint NOT NULL,
                     created_at timestamptz NOT NULL DEFAULT now())",
            )
            .await
            .map_err(PgError::query("CREATE TABLE oversold_stock"))?;
        conn.client
            .batch_execute(
                "CREATE TABLE IF NOT EXISTS oversold_ledger (
                     run_id   text NOT NULL,
                     order_id text NOT NULL,
                     customer integer NOT NULL,
                     qty      integer NOT NULL CHECK (qty > 0),
                     state    text NOT NULL CHECK (state IN ('confirmed', 'backorder')),
                     created_at timestamptz NOT NULL DEFAULT now(),
                     PRIMARY KEY (run_id, order_id))",
            )
            .await
            .map_err(PgError::query("CREATE TABLE oversold_ledger"))?;
        Ok(db)
    }

    /// What `SHOW max_connections` says: every client's connections together, superuser
    /// slots included. The server keeps its own pool well below it (see
    /// [`crate::budget::fit_pg_pool`]).
    pub async fn server_max_connections(&self) -> Result<usize, PgError> {
        let conn = self.connect().await?;
        let row = conn
            .client
            .query_one("SHOW max_connections", &[])
            .await
            .map_err(PgError::query("SHOW max_connections"))?;
        let text: String = row.get(0);
        // PostgreSQL sends an integer setting; anything else would be a PostgreSQL bug, and
        // the pool check is then skipped rather than the server refusing to start.
        Ok(text.trim().parse().unwrap_or(usize::MAX))
    }

    /// `host:port/dbname as user`: safe to log.
    pub fn display_addr(&self) -> &str {
        &self.display
    }

    /// Open one connection (one app server's).
    pub async fn connect(&self) -> Result<PgConn, PgError> {
        let connecting = self.config.connect(NoTls);
        let (client, connection) = tokio::time::timeout(CONNECT_TIMEOUT, connecting)
            .await
            .map_err(|_| PgError::Connect {
                addr: self.display.clone(),
                reason: "timed out".into(),
                too_many_clients: false,
            })?
            .map_err(|e| PgError::Connect {
                addr: self.display.clone(),
                too_many_clients: e.code()
                    == Some(&tokio_postgres::error::SqlState::TOO_MANY_CONNECTIONS),
                reason: e.to_string(),
            })?;
        // The connection future drives the socket; it is tied to PgConn's lifetime.
        let task = tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "PostgreSQL connection closed");
            }
        });
        Ok(PgConn { client, task })
    }
}

fn describe(config: &tokio_postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "{host}:{port}/{} as {}",
        config.get_dbname().unwrap_or("?"),
        config.get_user().unwrap_or("?")
    )
}

/// Put `stock` units on the shelf for a run.
pub async fn init_stock(conn: &PgConn, row: &StockRow, stock: u32) -> Result<(), PgError> {
    let run_id = &row.run_id;
    conn.client
        .execute(
            "INSERT INTO oversold_stock (run_id, stock) VALUES ($1, $2)
         ON CONFLICT (run_id) DO UPDATE SET stock = EXCLUDED.stock",
            &[&run_id, &i64::from(stock)],
        )
        .await
        .map_err(PgError::query("INSERT stock"))?;
    Ok(())
}

/// Read a run's stock (`None` if its row is gone).
pub async fn read_stock(conn: &PgConn, row: &StockRow) -> Result<Option<i64>, PgError> {
    let run_id = &row.run_id;
    let row = conn
        .client
        .query_opt(
            "SELECT stock FROM oversold_stock WHERE run_id = $1",
            &[&run_id],
        )
        .await
        .map_err(PgError::query("SELECT stock"))?;
    Ok(row.map(|r| r.get(0)))
}

/// Delete a run's row.
pub async fn remove_run(conn: &PgConn, row: &StockRow) -> Result<(), PgError> {
    let run_id = &row.run_id;
    conn.client
        .execute("DELETE FROM oversold_stock WHERE run_id = $1", &[&run_id])
        .await
        .map_err(PgError::query("DELETE stock"))?;
    Ok(())
}

/// Where one checkout run's orders live in PostgreSQL: its rows of `oversold_ledger`.
#[derive(Debug, Clone)]
pub struct LedgerRun {
    run_id: String,
}

impl LedgerRun {
    /// The ledger rows of the run `run_id`.
    pub fn new(run_id: &str) -> Self {
        LedgerRun {
            run_id: run_id.to_string(),
        }
    }
}

/// Write one order. `state` is `confirmed` or `backorder` (the table checks). Returns true
/// when the row is new; an order id written before is left as it was.
pub async fn ledger_insert(
    conn: &PgConn,
    run: &LedgerRun,
    order: &str,
    customer: u32,
    qty: u32,
    state: &str,
) -> Result<bool, PgError> {
    let customer = i32::try_from(customer).unwrap_or(i32::MAX);
    let qty = i32::try_from(qty).unwrap_or(i32::MAX);
    let rows = conn
        .client
        .execute(
            "INSERT INTO oversold_ledger (run_id, order_id, customer, qty, state)
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (run_id, order_id) DO NOTHING",
            &[&run.run_id, &order, &customer, &qty, &state],
        )
        .await
        .map_err(PgError::query("INSERT ledger row"))?;
    Ok(rows == 1)
}

/// Each state's rows and units: `(state, rows, units)`.
pub async fn ledger_totals(
    conn: &PgConn,
    run: &LedgerRun,
) -> Result<Vec<(String, i64, i64)>, PgError> {
    let rows = conn
        .client
        .query(
            "SELECT state, count(*), coalesce(sum(qty), 0)::bigint FROM oversold_ledger
             WHERE run_id = $1 GROUP BY state",
            &[&run.run_id],
        )
        .await
        .map_err(PgError::query("SELECT ledger totals"))?;
    Ok(rows
        .into_iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect())
}

/// Confirmed units per customer: `(customer, units)`.
pub async fn ledger_per_customer(
    conn: &PgConn,
    run: &LedgerRun,
) -> Result<Vec<(i32, i64)>, PgError> {
    let rows = conn
        .client
        .query(
            "SELECT customer, sum(qty)::bigint FROM oversold_ledger
             WHERE run_id = $1 AND state = 'confirmed' GROUP BY customer",
            &[&run.run_id],
        )
        .await
        .map_err(PgError::query("SELECT ledger per customer"))?;
    Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// Delete a run's ledger rows.
pub async fn ledger_clear(conn: &PgConn, run: &LedgerRun) -> Result<(), PgError> {
    conn.client
        .execute(
            "DELETE FROM oversold_ledger WHERE run_id = $1",
            &[&run.run_id],
        )
        .await
        .map_err(PgError::query("DELETE ledger rows"))?;
    Ok(())
}

/// What one row-lock transaction saw and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowLockReply {
    /// The stock read under the lock.
    pub before: i64,
    /// The stock after, when units were taken.
    pub after: Option<i64>,
    /// Statements sent: 4 with a sale (BEGIN, SELECT, UPDATE, COMMIT), 3 without
    /// (BEGIN, SELECT, ROLLBACK).
    pub round_trips: u32,
}

/// A row-lock transaction that failed, and the statements it had sent.
#[derive(Debug)]
pub struct RowLockFailed {
    /// What went wrong.
    pub error: PgError,
    /// Statements sent, the failing one included.
    pub round_trips: u32,
    /// True when the failing statement was the `COMMIT`: the sale may or may not be durable.
    pub in_doubt: bool,
}

/// `BEGIN; SELECT stock ... FOR UPDATE; (check in Rust); UPDATE; COMMIT`. The row lock holds
/// every other buyer's SELECT until this COMMIT, so the check cannot go stale.
/// `race_window` of app work happens while holding the lock.
pub async fn reserve_for_update(
    conn: &mut PgConn,
    row: &StockRow,
    qty: u32,
    race_window: Duration,
) -> Result<RowLockReply, RowLockFailed> {
    let run_id = &row.run_id;
    let mut sent = 0;
    let mut step = |op: &'static str| {
        sent += 1;
        let round_trips = sent;
        move |source| RowLockFailed {
            error: PgError::Query { op, source },
            round_trips,
            in_doubt: op == "COMMIT",
        }
    };
    let tx = conn.client.transaction().await.map_err(step("BEGIN"))?;
    let row = tx
        .query_opt(
            "SELECT stock FROM oversold_stock WHERE run_id = $1 FOR UPDATE",
            &[&run_id],
        )
        .await
        .map_err(step("SELECT ... FOR UPDATE"))?;
    let before: i64 = row.map(|r| r.get(0)).unwrap_or(0);
    if before < i64::from(qty) {
        tx.rollback().await.map_err(step("ROLLBACK"))?;
        return Ok(RowLockReply {
            before,
            after: None,
            round_trips: 3,
        });
    }
    if !race_window.is_zero() {
        tokio::time::sleep(race_window).await;
    }
    let row = tx
        .query_one(
            "UPDATE oversold_stock SET stock = stock - $2 WHERE run_id = $1 RETURNING stock",
            &[&run_id, &i64::from(qty)],
        )
        .await
        .map_err(step("UPDATE stock"))?;
    tx.commit().await.map_err(step("COMMIT"))?;
    Ok(RowLockReply {
        before,
        after: Some(row.get(0)),
        round_trips: 4,
    })
}

/// What one read-then-write transaction (`postgres_naive`) saw and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadThenWriteReply {
    /// The stock its plain `SELECT` read (no row lock: possibly stale by the `UPDATE`).
    pub before: i64,
    /// The value its `UPDATE` wrote, when it sold: `before - qty`, whatever the row held by
    /// then.
    pub written: Option<i64>,
    /// Statements sent: 4 with a sale (BEGIN, SELECT, UPDATE, COMMIT), 3 without
    /// (BEGIN, SELECT, ROLLBACK).
    pub round_trips: u32,
    /// When the `SELECT`'s answer came back: the app decides from here on.
    pub read_at: std::time::Instant,
}

/// `BEGIN; SELECT stock (no FOR UPDATE); (check in Rust); UPDATE ... SET stock = <the value
/// computed in Rust>; COMMIT`: the lost update. Nothing holds the row between the SELECT and
/// the UPDATE, and under PostgreSQL's default READ COMMITTED isolation the transaction does
/// not help: a second buyer's SELECT reads the same committed value, its UPDATE waits for the
/// first one's row lock only to overwrite the first one's result with the same number. Each
/// buyer is told it sold; the row forgets all but one of them. (Failures are reported like
/// the row lock's: the statements sent, and in doubt when the COMMIT failed.)
pub async fn reserve_read_then_write(
    conn: &mut PgConn,
    row: &StockRow,
    qty: u32,
    race_window: Duration,
) -> Result<ReadThenWriteReply, RowLockFailed> {
    let run_id = &row.run_id;
    let mut sent = 0;
    let mut step = |op: &'static str| {
        sent += 1;
        let round_trips = sent;
        move |source| RowLockFailed {
            error: PgError::Query { op, source },
            round_trips,
            in_doubt: op == "COMMIT",
        }
    };
    let tx = conn.client.transaction().await.map_err(step("BEGIN"))?;
    let row = tx
        .query_opt(
            "SELECT stock FROM oversold_stock WHERE run_id = $1",
            &[&run_id],
        )
        .await
        .map_err(step("SELECT stock"))?;
    let read_at = std::time::Instant::now();
    let before: i64 = row.map(|r| r.get(0)).unwrap_or(0);
    if before < i64::from(qty) {
        tx.rollback().await.map_err(step("ROLLBACK"))?;
        return Ok(ReadThenWriteReply {
            before,
            written: None,
            round_trips: 3,
            read_at,
        });
    }
    if !race_window.is_zero() {
        tokio::time::sleep(race_window).await;
    }
    // The value is computed here, in the app, from the read: the bug is this one line.
    let computed = before - i64::from(qty);
    tx.execute(
        "UPDATE oversold_stock SET stock = $2 WHERE run_id = $1",
        &[&run_id, &computed],
    )
    .await
    .map_err(step("UPDATE stock"))?;
    tx.commit().await.map_err(step("COMMIT"))?;
    Ok(ReadThenWriteReply {
        before,
        written: Some(computed),
        round_trips: 4,
        read_at,
    })
}
