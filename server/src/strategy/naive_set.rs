//! `naive_set`: GET the stock, check it in Rust, then SET it to what we computed. The
//! classic lost update.
//!
//! Each buyer writes an absolute value (`observed - qty`) based on a read that may already
//! be stale. When two buyers read the same stock, the second SET simply overwrites the
//! first: both orders are accepted but the counter only moves once. The stock never goes
//! negative, so a check on the counter alone looks healthy; the damage shows as orders
//! accepted beyond the units that existed (`oversold_units`) and as a final stock higher
//! than `stock - units_sold` (`lost_updates`).

use std::borrow::Cow;
use std::time::Instant;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{Attempt, Backend, Order, RedisBuyer, Strategy};
use crate::store::{RedisConn, RunKeys, stock};

/// The read-compute-overwrite strategy.
pub const STRATEGY: Strategy = Strategy {
    about: StrategyAbout {
        name: text("naive_set"),
        label: text("Lost update (GET, then SET)"),
        short_label: text("Lost update"),
        description: text(
            "Reads the stock, then writes back stock minus qty: concurrent buyers overwrite each other's sales.",
        ),
        unsafe_by_design: true,
        category: Category::CheckThenWrite,
        featured: false,
        scripts: Cow::Borrowed(&[]),
        explanation: Explanation {
            title: text("Why GET-then-SET loses sales"),
            how: text(
                "Each buyer reads the stock, subtracts its order in the app, and writes the result back with SET: an absolute value, not a change.",
            ),
            why: text(
                "Two buyers that read the same number both write the same answer. The second SET does not subtract again; it \
                 just repeats the first, so one sale vanishes from the counter. The counter stays at zero or above and looks \
                 healthy, while far more orders were accepted than units existed. Compare orders with stock, not the counter.",
            ),
            cost: text(
                "The failure is silent: no negative number, no error. Only the order count (or the lost-updates tally) gives it away.",
            ),
            steps: Cow::Borrowed(&[
                step("buyer #7", "GET stock → 10", "will write 9", Tone::A),
                step("buyer #12", "GET stock → 10", "will also write 9", Tone::B),
                step("buyer #7", "SET stock 9", "sold one", Tone::A),
                step(
                    "buyer #12",
                    "SET stock 9",
                    "sold one more; the counter moved once",
                    Tone::Bad,
                ),
            ]),
        },
        tape: TapeRule::ReadThenSet,
        scenario: Scenario::Race,
    },
    backend: Backend::SharedRedis(&NaiveSet),
};

struct NaiveSet;

impl RedisBuyer for NaiveSet {
    fn buy<'a>(&'a self, mut conn: RedisConn, order: Order<'a, RunKeys>) -> BoxFuture<'a, Attempt> {
        async move {
            let keys = order.shelf;
            let observed = match stock::get(&mut conn, keys).await {
                Ok(v) => v.unwrap_or(0),
                Err(e) => return Attempt::read_failed(&e, None, 1),
            };
            let read_at = Instant::now();
            let qty = i64::from(order.qty);
            if observed < qty {
                return Attempt::sold_out(Some(observed), 1).with_read_at(read_at);
            }
            if !order.race_window.is_zero() {
                tokio::time::sleep(order.race_window).await;
            }
            // The value is computed from our read, not from what Redis holds now.
            let after = observed - qty;
            match stock::overwrite(&mut conn, keys, after).await {
                Ok(()) => Attempt::reserved(Some(observed), after, 2),
                Err(e) => Attempt::write_failed(&e, Some(observed), 2),
            }
            .with_read_at(read_at)
        }
        .boxed()
    }
}
