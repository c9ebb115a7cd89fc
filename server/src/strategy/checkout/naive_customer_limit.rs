//! `naive_customer_limit`: the per-customer limit as check-then-write. HGET the customer's
//! tally, compare it with the limit in the app, then reserve a hold.
//!
//! The stock is safe (the hold script checks it), but the limit is not: a bot's orders all
//! read the tally before any of them has added to it, all see room, and all pass.

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

/// The per-customer limit, checked in the app.
pub const STRATEGY: CheckoutStrategy = CheckoutStrategy {
    about: StrategyAbout {
        name: text("naive_customer_limit"),
        label: text("Per-customer limit in the app (HGET, then reserve)"),
        short_label: text("Naive limit"),
        description: text(
            "Reads the customer's tally, checks the limit in the app, then reserves a hold: a bot's orders all read the same tally, and all pass.",
        ),
        unsafe_by_design: true,
        category: Category::CheckThenWrite,
        featured: false,
        scripts: Cow::Borrowed(&[
            text("reserve_hold.lua"),
            text("confirm_hold.lua"),
            text("release_hold.lua"),
            text("reap_holds.lua"),
        ]),
        explanation: Explanation {
            title: text("Why a limit checked in the app lets a bot through"),
            how: text(
                "Each buyer sends HGET customers c, compares the answer with the limit in the app, and if the order fits runs \
                 reserve_hold.lua, which takes the units and adds them to the customer's tally.",
            ),
            why: text(
                "The stock is safe: the hold script checks it. The limit is check-then-write: a bot's orders all read the \
                 tally before any of them has added to it, all see room, and all pass. The bot leaves a one-per-customer \
                 sale with several units.",
            ),
            cost: text(
                "Two round trips per order, and a limit that only works while a customer places one order at a time.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "bot c3, order 1",
                    "HGET customers c3 → nil",
                    "0 + 1 <= 1: fine",
                    Tone::A,
                ),
                step(
                    "bot c3, order 2",
                    "HGET customers c3 → nil",
                    "0 + 1 <= 1: fine too",
                    Tone::B,
                ),
                step(
                    "bot c3, order 1",
                    "EVALSHA reserve_hold c3 → {1, 8, 300000, 1}",
                    "c3 has 1",
                    Tone::A,
                ),
                step(
                    "bot c3, order 2",
                    "EVALSHA reserve_hold c3 → {1, 7, 300000, 2}",
                    "c3 has 2: over the limit",
                    Tone::Bad,
                ),
            ]),
        },
        tape: TapeRule::Story,
        scenario: Scenario::Checkout,
    },
    buyer: &NaiveCustomerLimit,
};

struct NaiveCustomerLimit;

impl CheckoutBuyer for NaiveCustomerLimit {
    fn keeps_holds(&self) -> bool {
        true
    }

    fn reserve<'a>(
        &'a self,
        mut conn: RedisConn,
        order: Order<'a>,
    ) -> BoxFuture<'a, Step<Reservation>> {
        async move {
            let mine = match holds::customer_units(&mut conn, order.keys, order.customer).await {
                Ok(units) => units,
                Err(e) => return Step::failed(e, 1),
            };
            if mine + i64::from(order.qty) > i64::from(order.limit) {
                return Step::ok(
                    Reservation::OverLimit {
                        customer_units: mine,
                    },
                    1,
                );
            }
            // The gap: the customer's other orders read the same tally before this one
            // adds to it.
            if !order.race_window.is_zero() {
                tokio::time::sleep(order.race_window).await;
            }
            match holds::reserve_hold(&mut conn, order.keys, &hold_request(&order)).await {
                Ok(c) => Step::ok(from_hold_reply(c.reply), 1 + c.round_trips),
                Err(f) => Step::failed(f.error, 1 + f.round_trips),
            }
        }
        .boxed()
    }
}
