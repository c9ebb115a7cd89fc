//! `naive`: GET the stock, check it in Rust, then DECRBY. Two round trips with a gap between.
//!
//! Each command is atomic on its own. The bug is the gap: every buyer whose GET lands
//! before the last unit's DECRBY sees stock, passes the check, and decrements anyway.

use std::borrow::Cow;
use std::time::Instant;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, Guard, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{Attempt, Backend, Order, RedisBuyer, Strategy};
use crate::store::{RedisConn, RunKeys, stock};

/// The check-then-write strategy.
pub const STRATEGY: Strategy = Strategy {
    about: StrategyAbout {
        name: text("naive"),
        label: text("Naive (GET, then DECRBY)"),
        short_label: text("Naive"),
        description: text(
            "Reads the stock, checks it in the app, then decrements: another buyer can act in between.",
        ),
        unsafe_by_design: true,
        category: Category::CheckThenWrite,
        featured: true,
        scripts: Cow::Borrowed(&[]),
        explanation: Explanation {
            title: text("Why check-then-write oversells"),
            how: text(
                "Each buyer sends GET stock, decides in the app whether the number is big enough, then sends DECRBY stock qty.",
            ),
            why: text(
                "Redis runs each command whole, but nothing ties the two together. Between one buyer's GET and its DECRBY, \
                 the other buyers' commands run. With one unit left, fifty buyers can all read 1, all decide yes, and all \
                 decrement: the check was true when it was made and false when the write landed. The counter sinks below zero.",
            ),
            cost: text(
                "Two round trips per order, and a gap between them that any amount of app work makes wider.",
            ),
            steps: Cow::Borrowed(&[
                step("buyer #7", "GET stock → 1", "looks fine", Tone::A),
                step("buyer #12", "GET stock → 1", "looks fine too", Tone::B),
                step(
                    "buyer #7",
                    "DECRBY stock 1 → 0",
                    "sold the last unit",
                    Tone::A,
                ),
                step(
                    "buyer #12",
                    "DECRBY stock 1 → -1",
                    "sold a unit that does not exist",
                    Tone::Bad,
                ),
            ]),
        },
        tape: TapeRule::ReadThenDecrement {
            guard: Guard::Unguarded,
        },
        scenario: Scenario::Race,
    },
    backend: Backend::SharedRedis(&Naive),
};

struct Naive;

impl RedisBuyer for Naive {
    fn buy<'a>(&'a self, mut conn: RedisConn, order: Order<'a, RunKeys>) -> BoxFuture<'a, Attempt> {
        async move {
            let keys = order.shelf;
            let observed = match stock::get(&mut conn, keys).await {
                Ok(v) => v.unwrap_or(0),
                Err(e) => return Attempt::read_failed(&e, None, 1),
            };
            let read_at = Instant::now();
            if observed < i64::from(order.qty) {
                return Attempt::sold_out(Some(observed), 1).with_read_at(read_at);
            }
            // The app "does work" here (validates the cart, prices it...). Even at zero the
            // gap exists: other buyers' GETs are already queued ahead of this DECRBY.
            if !order.race_window.is_zero() {
                tokio::time::sleep(order.race_window).await;
            }
            match stock::decr_by(&mut conn, keys, order.qty).await {
                Ok(after) => Attempt::reserved(Some(observed), after, 2),
                Err(e) => Attempt::write_failed(&e, Some(observed), 2),
            }
            .with_read_at(read_at)
        }
        .boxed()
    }
}
