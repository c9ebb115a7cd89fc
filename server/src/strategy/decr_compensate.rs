//! `decr_compensate`: DECRBY first, ask questions after. If the counter went below zero,
//! INCRBY the units back and report sold out.
//!
//! DECRBY is atomic and returns the new value, so the decrement itself carries the
//! decision: a buyer that lands at zero or above owns its units, and no two buyers can
//! both take the last one. No script, and one round trip per sale; the second (the undo)
//! is paid only on overshoot.
//!
//! Two costs. While an overshoot waits for its undo, the counter sits too low, and a
//! buyer arriving in that moment can be refused although the units exist (an undersell,
//! never an oversell). And if the app dies between the DECRBY and the INCRBY, the units
//! are never given back: the shelf leaks stock. It can never oversell.
//!
//! `observed_stock` is `after + qty`: the value the counter held just before this buyer's
//! DECRBY, as that atomic command saw it. It is not a separate read, and during someone
//! else's overshoot it can be below zero.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use super::{Attempt, Order, Strategy};
use crate::store;

/// The decrement-then-compensate strategy.
pub struct DecrCompensate;

impl Strategy for DecrCompensate {
    fn name(&self) -> &'static str {
        "decr_compensate"
    }
    fn label(&self) -> &'static str {
        "DECRBY, then undo"
    }
    fn description(&self) -> &'static str {
        "Decrements first and adds the units back if the counter went negative: atomic without Lua, but a crash before the undo leaks units."
    }

    fn buy<'a>(&'a self, order: Order<'a>) -> BoxFuture<'a, Attempt> {
        // No race window: there is no read for app work to sit behind.
        async move {
            let mut conn = match order.shared_redis() {
                Ok(c) => c,
                Err(a) => return a,
            };
            let Order { keys, qty, .. } = order;
            let after = match store::decr_by(&mut conn, keys, qty).await {
                Ok(v) => v,
                Err(e) => return Attempt::failed(e.short(), None, 1),
            };
            let before = after + i64::from(qty);
            if after >= 0 {
                return Attempt::reserved(Some(before), after, 1);
            }
            match store::incr_by(&mut conn, keys, qty).await {
                Ok(_) => Attempt::sold_out(Some(before), 2),
                // The undo may not have happened: those units may now be leaked.
                Err(e) => Attempt::failed(
                    format!("overshot, and the undo failed: {}", e.short()),
                    Some(before),
                    2,
                ),
            }
        }
        .boxed()
    }
}
