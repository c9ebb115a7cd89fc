//! `naive_set`: GET the stock, check it in Rust, then SET it to what we computed. The
//! classic lost update.
//!
//! Each buyer writes an absolute value (`observed - qty`) based on a read that may already
//! be stale. When two buyers read the same stock, the second SET simply overwrites the
//! first: both orders are accepted but the counter only moves once. The stock never goes
//! negative, so a check on the counter alone looks healthy; the damage shows as orders
//! accepted beyond the units that existed (`oversold_units`) and as a final stock higher
//! than `stock - units_sold` (`lost_updates`).

use std::time::Instant;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use super::{Attempt, Order, Strategy};
use crate::store;

/// The read-compute-overwrite strategy.
pub struct NaiveSet;

impl Strategy for NaiveSet {
    fn name(&self) -> &'static str {
        "naive_set"
    }
    fn label(&self) -> &'static str {
        "Lost update (GET, then SET)"
    }
    fn description(&self) -> &'static str {
        "Reads the stock, then writes back stock minus qty: concurrent buyers overwrite each other's sales."
    }
    fn unsafe_by_design(&self) -> bool {
        true
    }

    fn buy<'a>(&'a self, order: Order<'a>) -> BoxFuture<'a, Attempt> {
        async move {
            let mut conn = match order.shared_redis() {
                Ok(c) => c,
                Err(a) => return a,
            };
            let Order {
                keys,
                qty,
                race_window,
                ..
            } = order;
            let observed = match store::read_stock(&mut conn, keys).await {
                Ok(v) => v.unwrap_or(0),
                Err(e) => return Attempt::failed(e.short(), None, 1),
            };
            let read_at = Instant::now();
            let qty = i64::from(qty);
            if observed < qty {
                return Attempt::sold_out(Some(observed), 1).with_read_at(read_at);
            }
            if !race_window.is_zero() {
                tokio::time::sleep(race_window).await;
            }
            // The value is computed from our read, not from what Redis holds now.
            let after = observed - qty;
            match store::overwrite_stock(&mut conn, keys, after).await {
                Ok(()) => Attempt::reserved(Some(observed), after, 2),
                Err(e) => Attempt::failed(e.short(), Some(observed), 2),
            }
            .with_read_at(read_at)
        }
        .boxed()
    }
}
