//! `lua`: `lua/reserve.lua` by EVALSHA. The check and the decrement run inside Redis as one step.

use std::borrow::Cow;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, Scenario, ScriptCall, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{Attempt, Backend, BatchBuyer, Order, RedisBuyer, Strategy};
use crate::store::{RedisConn, RunKeys, stock};

/// The atomic script strategy.
pub const STRATEGY: Strategy = Strategy {
    about: StrategyAbout {
        name: text("lua"),
        label: text("Atomic (Lua script)"),
        short_label: text("Atomic"),
        description: text(
            "One EVALSHA: Redis reads, checks and decrements with no other command in between.",
        ),
        unsafe_by_design: false,
        category: Category::Atomic,
        featured: true,
        scripts: Cow::Borrowed(&[text("reserve.lua")]),
        explanation: Explanation {
            title: text("Why the Lua script cannot oversell"),
            how: text(
                "Each buyer sends one EVALSHA. reserve.lua reads the stock, compares it with the order and decrements, all inside Redis.",
            ),
            why: text(
                "Redis runs a script from first line to last before it serves any other client, so no other buyer's command can \
                 land between the check and the write. The last unit goes to exactly one buyer; everyone after reads 0 and is refused.",
            ),
            cost: text(
                "One round trip per order, so the safe version is also the fast one. A long script would stall every client, so keep it tiny.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #7",
                    "EVALSHA reserve 1 → {1, 1, 0}",
                    "took the last unit",
                    Tone::A,
                ),
                step(
                    "buyer #12",
                    "EVALSHA reserve 1 → {0, 0, 0}",
                    "ran after #7's whole script: refused",
                    Tone::B,
                ),
            ]),
        },
        tape: TapeRule::AtomicCall {
            call: ScriptCall::Evalsha,
        },
        scenario: Scenario::Race,
    },
    backend: Backend::SharedRedis(&Lua),
};

struct Lua;

impl RedisBuyer for Lua {
    fn buy<'a>(&'a self, mut conn: RedisConn, order: Order<'a, RunKeys>) -> BoxFuture<'a, Attempt> {
        // The race window does not apply: there is no app-side gap to widen.
        async move {
            match stock::reserve(&mut conn, order.shelf.stock_key(), order.qty).await {
                Ok(c) if c.reply.reserved => {
                    Attempt::reserved(Some(c.reply.before), c.reply.after, c.round_trips)
                }
                Ok(c) => Attempt::sold_out(Some(c.reply.before), c.round_trips),
                Err(f) => Attempt::write_failed(&f.error, None, f.round_trips),
            }
        }
        .boxed()
    }

    fn batch(&self) -> Option<&dyn BatchBuyer> {
        Some(self)
    }
}

impl BatchBuyer for Lua {
    fn buy_batch<'a>(
        &'a self,
        mut conn: RedisConn,
        order: Order<'a, RunKeys>,
        n: usize,
    ) -> BoxFuture<'a, Vec<Attempt>> {
        async move {
            let key = order.shelf.stock_key();
            match stock::reserve_batch(&mut conn, key, order.qty, n).await {
                // Each order was its own EVALSHA in the pipeline: one request each.
                Ok(c) => c
                    .reply
                    .into_iter()
                    .map(|reply| match reply {
                        Ok(r) if r.reserved => Attempt::reserved(Some(r.before), r.after, 1),
                        Ok(r) => Attempt::sold_out(Some(r.before), 1),
                        Err(e) => Attempt::write_failed(&e, None, 1),
                    })
                    .collect(),
                Err(f) => (0..n)
                    .map(|_| Attempt::write_failed(&f.error, None, 1))
                    .collect(),
            }
        }
        .boxed()
    }
}
