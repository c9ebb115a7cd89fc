//! `customer_limit`: holds, with the per-customer limit checked and recorded in the same
//! script as the decrement.
//!
//! A bot sends all its orders at once. `reserve_hold_limited.lua` reads the customer's
//! tally, refuses an order that would pass the limit, and otherwise takes the units and
//! adds them to the tally, in one step: each call sees what the previous one left.

use std::borrow::Cow;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{
    CheckoutBuyer, CheckoutStrategy, Order, Reservation, Step, from_hold_reply, hold_request,
};
use crate::store::{RedisConn, holds};

/// Holds, at most `per_customer_limit` units per customer.
pub const STRATEGY: CheckoutStrategy = CheckoutStrategy {
    about: StrategyAbout {
        name: text("customer_limit"),
        label: text("Per-customer limit in the script (reserve_hold_limited.lua)"),
        short_label: text("Customer limit"),
        description: text(
            "Holds, with the per-customer limit checked and recorded in the same script as the decrement: a bot's many orders stop at the limit.",
        ),
        unsafe_by_design: false,
        category: Category::Holds,
        featured: false,
        scripts: Cow::Borrowed(&[
            text("reserve_hold_limited.lua"),
            text("confirm_hold.lua"),
            text("release_hold.lua"),
            text("reap_holds.lua"),
        ]),
        explanation: Explanation {
            title: text("Why the limit holds against a bot"),
            how: text(
                "reserve_hold_limited.lua reads the customer's units held or bought, refuses the order if it would pass the \
                 limit, and otherwise takes the units into a hold and adds them to the customer's tally, in one step. A \
                 release or an expiry takes them off the tally again.",
            ),
            why: text(
                "A bot sends all its orders at once, but Redis runs the calls one after another, and each sees the tally the \
                 one before it left. With a limit of one, the bot's second order finds 1 and is refused, however close \
                 together the orders arrive.",
            ),
            cost: text(
                "A hash field per customer. A bot is still served up to the limit, and a resent request counts against its \
                 own customer's limit until its extra hold expires.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "bot c3, order 1",
                    "EVALSHA reserve_hold_limited c3 limit 1 → {1, 8, 300000, 1}",
                    "held: c3 has 1",
                    Tone::A,
                ),
                step(
                    "bot c3, order 2",
                    "EVALSHA reserve_hold_limited c3 limit 1 → {2, 8, 0, 1}",
                    "over the limit: refused, nothing taken",
                    Tone::B,
                ),
            ]),
        },
        tape: TapeRule::Story,
        scenario: Scenario::Checkout,
    },
    buyer: &CustomerLimit,
};

struct CustomerLimit;

impl CheckoutBuyer for CustomerLimit {
    fn keeps_holds(&self) -> bool {
        true
    }

    fn reserve<'a>(
        &'a self,
        mut conn: RedisConn,
        order: Order<'a>,
    ) -> BoxFuture<'a, Step<Reservation>> {
        async move {
            let request = hold_request(&order);
            match holds::reserve_hold_limited(&mut conn, order.keys, &request, order.limit).await {
                Ok(c) => Step::ok(from_hold_reply(c.reply), c.round_trips),
                Err(f) => Step::failed(f.error, f.round_trips),
            }
        }
        .boxed()
    }
}
