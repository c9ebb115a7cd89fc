//! `lua`: `lua/reserve.lua` by EVALSHA. The check and the decrement run inside Redis as one step.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::OutcomeResult;

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
            let Order {
                mut conn,
                keys,
                qty,
                ..
            } = order;
            match store::reserve_atomic(&mut conn, keys, qty).await {
                Ok(reply) => Attempt {
                    result: if reply.reserved {
                        OutcomeResult::Reserved
                    } else {
                        OutcomeResult::SoldOut
                    },
                    observed_stock: Some(reply.before),
                    stock_after: reply.reserved.then_some(reply.after),
                    round_trips: 1,
                    retries: 0,
                    error: None,
                },
                Err(e) => Attempt::failed(&e, None, 1),
            }
        }
        .boxed()
    }
}
