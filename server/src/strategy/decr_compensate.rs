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
//! never an oversell: it shows as `false_sold_out`). And if the app dies (or loses its
//! answer) between the DECRBY and the INCRBY, the units are never given back: the counter
//! drifts below the truth until someone reconciles it. No buyer is ever told it got a
//! unit that does not exist.
//!
//! `observed_stock` is `after + qty`: the value the counter held just before this buyer's
//! DECRBY, as that atomic command saw it. It is not a separate read, and during someone
//! else's overshoot it can be below zero.

use std::borrow::Cow;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, OutcomeResult, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{Attempt, Backend, Order, RedisBuyer, Strategy};
use crate::store::{RedisConn, RunKeys, stock};

/// The decrement-then-compensate strategy.
pub const STRATEGY: Strategy = Strategy {
    about: StrategyAbout {
        name: text("decr_compensate"),
        label: text("DECRBY, then undo"),
        short_label: text("DECRBY + undo"),
        description: text(
            "Decrements first and adds the units back if the counter went negative: atomic without Lua, but a crash before the undo leaks units.",
        ),
        unsafe_by_design: false,
        category: Category::Atomic,
        featured: false,
        scripts: Cow::Borrowed(&[]),
        explanation: Explanation {
            title: text("Why decrement-first cannot oversell"),
            how: text(
                "Each buyer sends DECRBY straight away and looks at the answer. At zero or above, the units are its own. \
                 Below zero, it sends INCRBY to give them back and reports sold out.",
            ),
            why: text(
                "DECRBY is one atomic command that returns the new value, so the decrement itself is the decision: two buyers \
                 can never both land on the last unit. No separate read means no stale read.",
            ),
            cost: text(
                "While an overshoot waits for its undo the counter reads too low, so a buyer can be refused although units exist. \
                 And if the app dies between DECRBY and INCRBY, those units never come back.",
            ),
            steps: Cow::Borrowed(&[
                step("buyer #7", "DECRBY stock 1 → 0", "0 or more: sold", Tone::A),
                step(
                    "buyer #12",
                    "DECRBY stock 1 → -1",
                    "below zero: not mine",
                    Tone::B,
                ),
                step(
                    "buyer #12",
                    "INCRBY stock 1 → 0",
                    "gives it back, sold out",
                    Tone::B,
                ),
            ]),
        },
        tape: TapeRule::DecrementThenUndo,
        scenario: Scenario::Race,
    },
    backend: Backend::SharedRedis(&DecrCompensate),
};

struct DecrCompensate;

impl RedisBuyer for DecrCompensate {
    fn buy<'a>(&'a self, mut conn: RedisConn, order: Order<'a, RunKeys>) -> BoxFuture<'a, Attempt> {
        // No race window: there is no read for app work to sit behind.
        async move {
            let (keys, qty) = (order.shelf, order.qty);
            let after = match stock::decr_by(&mut conn, keys, qty).await {
                Ok(v) => v,
                Err(e) => return Attempt::write_failed(&e, None, 1),
            };
            let before = after + i64::from(qty);
            if after >= 0 {
                return Attempt::reserved(Some(before), after, 1);
            }
            match stock::incr_by(&mut conn, keys, qty).await {
                Ok(_) => Attempt::sold_out(Some(before), 2),
                // The buyer was sold nothing, but the shelf may be short: whether the undo
                // landed is unknown (and if it was never sent, the units are leaked until
                // someone reconciles the counter). Either way the units are in doubt.
                Err(e) => Attempt {
                    result: OutcomeResult::Unknown,
                    error: Some(format!("overshot, and the undo failed: {}", e.short())),
                    ..Attempt::write_failed(&e, Some(before), 2)
                },
            }
        }
        .boxed()
    }
}
