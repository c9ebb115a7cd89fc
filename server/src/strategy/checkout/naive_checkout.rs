//! `naive_checkout`: the race's check-then-write, carried into a checkout. GET the available
//! count, check it in the app, DECRBY; no hold.
//!
//! Two bugs in one. The race: every buyer whose GET lands before the last unit's DECRBY
//! passes the check, so the counter sinks below zero. And the leak: nothing in Redis says
//! who took units, so when an app server dies between its DECRBY and its order row, those
//! units are in no order and on no shelf, for good.

use std::borrow::Cow;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{CheckoutBuyer, CheckoutStrategy, Claim, Order, Reservation, Step};
use crate::store::{RedisConn, stock};

/// The check-then-write checkout.
pub const STRATEGY: CheckoutStrategy = CheckoutStrategy {
    about: StrategyAbout {
        name: text("naive_checkout"),
        label: text("Naive checkout (GET, then DECRBY, no holds)"),
        short_label: text("Naive checkout"),
        description: text(
            "Reads the available count, checks it in the app, then decrements, with no hold: it oversells, and a crashed app server's units vanish.",
        ),
        unsafe_by_design: true,
        category: Category::CheckThenWrite,
        featured: false,
        scripts: Cow::Borrowed(&[]),
        explanation: Explanation {
            title: text("Why a naive checkout oversells and leaks"),
            how: text(
                "Each buyer sends GET available, decides in the app, then DECRBY available qty. Confirming writes the order \
                 row; giving up sends INCRBY to put the units back.",
            ),
            why: text(
                "Two buyers can both read the last unit before either decrements: the race, unchanged. And Redis keeps no \
                 record of who took units. When an app server dies between its DECRBY and its order row, the units are off \
                 the shelf and in no order, and nothing will ever bring them back.",
            ),
            cost: text(
                "Two round trips to reserve. A crash costs its units until someone reconciles the counter, and reconciling \
                 during the sale also hands out the units of buyers who are still paying.",
            ),
            steps: Cow::Borrowed(&[
                step("buyer #7", "GET available → 1", "looks fine", Tone::A),
                step("buyer #12", "GET available → 1", "looks fine too", Tone::B),
                step(
                    "buyer #7",
                    "DECRBY available 1 → 0",
                    "reserved the last unit",
                    Tone::A,
                ),
                step(
                    "buyer #12",
                    "DECRBY available 1 → -1",
                    "reserved a unit that does not exist",
                    Tone::Bad,
                ),
                step(
                    "app server 3",
                    "(dies before #7's order row)",
                    "#7's unit is in no order and on no shelf",
                    Tone::Bad,
                ),
            ]),
        },
        tape: TapeRule::Story,
        scenario: Scenario::Checkout,
    },
    buyer: &NaiveCheckout,
};

struct NaiveCheckout;

impl CheckoutBuyer for NaiveCheckout {
    fn keeps_holds(&self) -> bool {
        false
    }

    fn reserve<'a>(
        &'a self,
        mut conn: RedisConn,
        order: Order<'a>,
    ) -> BoxFuture<'a, Step<Reservation>> {
        async move {
            let keys = order.keys.run();
            let observed = match stock::get(&mut conn, keys).await {
                Ok(v) => v.unwrap_or(0),
                Err(e) => return Step::failed(e, 1),
            };
            if observed < i64::from(order.qty) {
                let refused = Reservation::SoldOut {
                    observed: Some(observed),
                    customer_units: None,
                    from_record: false,
                };
                return Step::ok(refused, 1);
            }
            // The gap: other buyers' GETs are already queued ahead of this DECRBY.
            if !order.race_window.is_zero() {
                tokio::time::sleep(order.race_window).await;
            }
            match stock::decr_by(&mut conn, keys, order.qty).await {
                Ok(after) => Step::ok(
                    Reservation::Reserved {
                        claim: Claim::Units(order.qty),
                        observed: Some(observed),
                        available_after: after,
                        customer_units: None,
                        from_record: false,
                    },
                    2,
                ),
                Err(e) => Step::failed(e, 2),
            }
        }
        .boxed()
    }
}
