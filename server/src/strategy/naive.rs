//! `naive`: GET the stock, check it in Rust, then DECRBY. Two round trips with a gap between.
//!
//! Each command is atomic on its own. The bug is the gap: every buyer whose GET lands
//! before the last unit's DECRBY sees stock, passes the check, and decrements anyway.

use std::time::Instant;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use super::{Attempt, Order, Strategy};
use crate::store;

/// The check-then-write strategy.
pub struct Naive;

impl Strategy for Naive {
    fn name(&self) -> &'static str {
        "naive"
    }
    fn label(&self) -> &'static str {
        "Naive (GET, then DECRBY)"
    }
    fn description(&self) -> &'static str {
        "Reads the stock, checks it in the app, then decrements: another buyer can act in between."
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
            if observed < i64::from(qty) {
                return Attempt::sold_out(Some(observed), 1).with_read_at(read_at);
            }
            // The app "does work" here (validates the cart, prices it...). Even at zero the
            // gap exists: other buyers' GETs are already queued ahead of this DECRBY.
            if !race_window.is_zero() {
                tokio::time::sleep(race_window).await;
            }
            match store::decr_by(&mut conn, keys, qty).await {
                Ok(after) => Attempt::reserved(Some(observed), after, 2),
                Err(e) => Attempt::failed(e.short(), Some(observed), 2),
            }
            .with_read_at(read_at)
        }
        .boxed()
    }
}
