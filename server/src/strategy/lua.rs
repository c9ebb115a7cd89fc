//! `lua`: `lua/reserve.lua` by EVALSHA. The check and the decrement run inside Redis as one step.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use super::{Attempt, Order, Strategy};
use crate::store;

/// The atomic script strategy.
pub struct Lua;

impl Strategy for Lua {
    fn name(&self) -> &'static str {
        "lua"
    }
    fn label(&self) -> &'static str {
        "Atomic (Lua script)"
    }
    fn description(&self) -> &'static str {
        "One EVALSHA: Redis reads, checks and decrements with no other command in between."
    }

    fn buy<'a>(&'a self, order: Order<'a>) -> BoxFuture<'a, Attempt> {
        // The race window does not apply: there is no app-side gap to widen.
        async move {
            let mut conn = match order.shared_redis() {
                Ok(c) => c,
                Err(a) => return a,
            };
            match store::reserve_atomic(&mut conn, order.keys, order.qty).await {
                Ok(r) if r.reserved => Attempt::reserved(Some(r.before), r.after, 1),
                Ok(r) => Attempt::sold_out(Some(r.before), 1),
                Err(e) => Attempt::failed(e.short(), None, 1),
            }
        }
        .boxed()
    }
}
