//! `idempotent_holds`: holds, plus the request id recorded inside the reservation script.
//!
//! A client that times out cannot tell whether its request landed, so it sends it again.
//! `reserve_hold_once.lua` looks the request id up and reserves only if it is new, in one
//! step: a resent request gets the first answer back (the same hold) and takes nothing.

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

/// Holds, reserved at most once per request id.
pub const STRATEGY: CheckoutStrategy = CheckoutStrategy {
    about: StrategyAbout {
        name: text("idempotent_holds"),
        label: text("Idempotent holds (reserve_hold_once.lua)"),
        short_label: text("Idempotent holds"),
        description: text(
            "Holds, plus the request id recorded in the same script: a resent request gets the first answer back and reserves nothing.",
        ),
        unsafe_by_design: false,
        category: Category::Holds,
        featured: true,
        scripts: Cow::Borrowed(&[
            text("reserve_hold_once.lua"),
            text("confirm_hold.lua"),
            text("release_hold.lua"),
            text("reap_holds.lua"),
        ]),
        explanation: Explanation {
            title: text("Why a resent request reserves once"),
            how: text(
                "As with holds, but reserve_hold_once.lua first looks the request id up in a record. A new id: it reserves \
                 and records its answer in the same step. A known id: it returns the recorded answer, with the first hold, \
                 and changes nothing.",
            ),
            why: text(
                "Looking the record up and reserving are one script, so even two copies of a request arriving at the same \
                 moment reserve once: whichever runs second finds the first's record. The client gets the same hold whichever \
                 reply it ends up reading.",
            ),
            cost: text(
                "One more hash per run, a field per request, which must outlive any resend. Everything holds cost, too.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #7",
                    "EVALSHA reserve_hold_once r7 → {1, 0, 300000, 1, h7.1, 0}",
                    "held; the reply is slow and the client gives up",
                    Tone::A,
                ),
                step(
                    "buyer #7 (resent)",
                    "EVALSHA reserve_hold_once r7 → {1, 0, 300000, 1, h7.1, 1}",
                    "from the record: the same hold, nothing taken",
                    Tone::B,
                ),
            ]),
        },
        tape: TapeRule::Story,
        scenario: Scenario::Checkout,
    },
    buyer: &IdempotentHolds,
};

struct IdempotentHolds;

impl CheckoutBuyer for IdempotentHolds {
    fn keeps_holds(&self) -> bool {
        true
    }

    fn reserve<'a>(
        &'a self,
        mut conn: RedisConn,
        order: Order<'a>,
    ) -> BoxFuture<'a, Step<Reservation>> {
        async move {
            match holds::reserve_hold_once(&mut conn, order.keys, &hold_request(&order)).await {
                Ok(c) => Step::ok(from_hold_reply(c.reply), c.round_trips),
                Err(f) => Step::failed(f.error, f.round_trips),
            }
        }
        .boxed()
    }
}
