//! The Redis-side settlement ledger: the fallback when PostgreSQL is not available.
//!
//! Orders go into a hash under the run's hash tag (order id -> `"state customer qty"`),
//! written once per order id by `ledger_record.lua`, which keeps the totals in the same
//! step. A real shop settles money in a database; this keeps the lab whole without one.

use std::collections::BTreeMap;

use redis::Value;

use super::keys::{CheckoutKeys, RUN_KEY_TTL_SECS};
use super::scripts::{self, CallFailed, Called};
use super::{RedisConn, StoreError};

/// A row's state: a sale taken from the stock, or a backorder taken while Redis was
/// unreachable (fail-open).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowState {
    /// Paid and confirmed.
    Confirmed,
    /// Accepted without a reservation; ships when restocked.
    Backorder,
}

impl RowState {
    /// The word stored, `confirmed` or `backorder` (the PostgreSQL ledger uses the same).
    pub fn as_str(self) -> &'static str {
        match self {
            RowState::Confirmed => "confirmed",
            RowState::Backorder => "backorder",
        }
    }
}

/// What a ledger holds, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LedgerTotals {
    /// Units in confirmed rows.
    pub confirmed_units: u64,
    /// Confirmed rows.
    pub confirmed_orders: u32,
    /// Units in backorder rows.
    pub backorder_units: u64,
    /// Backorder rows.
    pub backorders: u32,
    /// Confirmed units per customer.
    pub per_customer: BTreeMap<u32, u64>,
}

/// `ledger_record.lua`: write the order `order` once. `true` when the row is new.
pub async fn record(
    conn: &mut RedisConn,
    keys: &CheckoutKeys,
    order: &str,
    customer: u32,
    qty: u32,
    state: RowState,
) -> Result<Called<bool>, CallFailed> {
    const OP: &str = "ledger_record.lua";
    let k = [keys.ledger.as_str(), &keys.ledger_totals];
    let args = (order, customer, qty, state.as_str(), RUN_KEY_TTL_SECS);
    let called: Called<Vec<Value>> =
        scripts::call(conn, OP, &scripts::LEDGER_RECORD, &k, args).await?;
    let round_trips = called.round_trips;
    match called.reply[..] {
        [Value::Int(new @ (0 | 1)), Value::Int(_)] => Ok(Called {
            reply: new == 1,
            round_trips,
        }),
        _ => Err(CallFailed {
            error: StoreError::Unexpected {
                op: OP,
                detail: format!("{:?}", called.reply),
            },
            round_trips,
        }),
    }
}

/// The running totals (one `HMGET`): cheap enough for the live reconciliation.
pub async fn totals(conn: &mut RedisConn, keys: &CheckoutKeys) -> Result<LedgerTotals, StoreError> {
    let cmd = redis::cmd("HMGET")
        .arg(&keys.ledger_totals)
        .arg(&[
            "confirmed",
            "orders:confirmed",
            "backorder",
            "orders:backorder",
        ])
        .to_owned();
    let v: Vec<Option<u64>> = conn.query("HMGET ledger totals", &cmd).await?;
    let at = |i: usize| v.get(i).copied().flatten().unwrap_or(0);
    Ok(LedgerTotals {
        confirmed_units: at(0),
        confirmed_orders: u32::try_from(at(1)).unwrap_or(u32::MAX),
        backorder_units: at(2),
        backorders: u32::try_from(at(3)).unwrap_or(u32::MAX),
        per_customer: BTreeMap::new(),
    })
}

/// Every row, counted, with the confirmed units per customer (one `HGETALL`, at the end of
/// a run: at most one row per buyer).
pub async fn read_all(
    conn: &mut RedisConn,
    keys: &CheckoutKeys,
) -> Result<LedgerTotals, StoreError> {
    let cmd = redis::cmd("HGETALL").arg(&keys.ledger).to_owned();
    let rows: BTreeMap<String, String> = conn.query("HGETALL ledger", &cmd).await?;
    let mut t = LedgerTotals::default();
    for (order, row) in rows {
        let bad = || StoreError::Unexpected {
            op: "HGETALL ledger",
            detail: format!("{order} holds {row:?}"),
        };
        let mut parts = row.split(' ');
        let (Some(state), Some(customer), Some(qty), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let customer: u32 = customer.parse().map_err(|_| bad())?;
        let qty: u64 = qty.parse().map_err(|_| bad())?;
        match state {
            "confirmed" => {
                t.confirmed_units += qty;
                t.confirmed_orders += 1;
                *t.per_customer.entry(customer).or_default() += qty;
            }
            "backorder" => {
                t.backorder_units += qty;
                t.backorders += 1;
            }
            _ => return Err(bad()),
        }
    }
    Ok(t)
}
