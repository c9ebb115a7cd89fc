//! `atomic_no_holds`: the race's fix, `reserve.lua`, carried into a checkout unchanged.
//!
//! The check and the decrement are one script, so it never oversells. But the script
//! answers one question (are there units?) and writes nothing else down: not who took
//! them, not for which request. An app server that dies after the decrement leaks its
//! buyer's units for good, and a client that resends a request runs the script again.

use std::borrow::Cow;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{CheckoutBuyer, CheckoutStrategy, Claim, Order, Reservation, Step};
use crate::store::{RedisConn, stock};

/// The atomic decrement, without holds.
pub const STRATEGY: CheckoutStrategy = CheckoutStrategy {
    about: StrategyAbout {
        name: text("atomic_no_holds"),
        label: text("Atomic, no holds (reserve.lua)"),
        short_label: text("Atomic, no holds"),
        description: text(
            "The race's fix: one script checks and decrements. It never oversells, but a crash after the decrement leaks units for good, and a resent request reserves twice.",
        ),
        // It never oversells, but it leaks a crashed buyer's units and takes a resent
        // request's twice, by design: the page wears the unsafe colour for it.
        unsafe_by_design: true,
        category: Category::Atomic,
        featured: true,
        scripts: Cow::Borrowed(&[text("reserve.lua")]),
        explanation: Explanation {
            title: text("Why atomic is not enough for a checkout"),
            how: text(
                "Each buyer runs reserve.lua: check and decrement in one step. Confirming writes the order row; giving up \
                 sends INCRBY to put the units back.",
            ),
            why: text(
                "The decrement can no longer oversell. But nothing records who took the units or for which request. A \
                 buyer whose app server dies after the decrement took units that no order and no hold will ever explain: \
                 leaked. A client that times out and resends its request runs the script again and takes the units twice; \
                 the app only knows about the second answer, so the first units leak too.",
            ),
            cost: text(
                "One round trip to reserve. Leaked units stay leaked until a reconciliation, and a reconciliation cannot \
                 tell a crashed buyer's units from those of a buyer who is still paying.",
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
                    "refused: no oversell",
                    Tone::B,
                ),
                step(
                    "app server 2",
                    "(dies before #7's order row)",
                    "the unit is in no order: leaked for good",
                    Tone::Bad,
                ),
            ]),
        },
        tape: TapeRule::Story,
        scenario: Scenario::Checkout,
    },
    buyer: &AtomicNoHolds,
};

struct AtomicNoHolds;

impl CheckoutBuyer for AtomicNoHolds {
    fn keeps_holds(&self) -> bool {
        false
    }

    fn reserve<'a>(
        &'a self,
        mut conn: RedisConn,
        order: Order<'a>,
    ) -> BoxFuture<'a, Step<Reservation>> {
        async move {
            let key = order.keys.run().stock_key();
            match stock::reserve(&mut conn, key, order.qty).await {
                Ok(c) if c.reply.reserved => Step::ok(
                    Reservation::Reserved {
                        claim: Claim::Units(order.qty),
                        observed: Some(c.reply.before),
                        available_after: c.reply.after,
                        customer_units: None,
                        from_record: false,
                    },
                    c.round_trips,
                ),
                Ok(c) => Step::ok(
                    Reservation::SoldOut {
                        observed: Some(c.reply.before),
                        customer_units: None,
                        from_record: false,
                    },
                    c.round_trips,
                ),
                Err(f) => Step::failed(f.error, f.round_trips),
            }
        }
        .boxed()
    }
}
