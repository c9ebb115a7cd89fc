//! `holds`: every reserved unit is written down, in a hold that expires.
//!
//! `reserve_hold.lua` takes the units and writes the hold (qty, customer, request id),
//! listed in a sorted set by expiry, in one step. Paying customers confirm it, others
//! release it, and a reaper pops the expired ones in small batches. Each of the three
//! removes the hold in the same script that moves its units, so a hold is settled exactly
//! once, whoever gets there first. A crashed app server's hold simply expires.

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

/// Holds that expire, and a reaper.
pub const STRATEGY: CheckoutStrategy = CheckoutStrategy {
    about: StrategyAbout {
        name: text("holds"),
        label: text("Holds that expire (reserve_hold.lua + reaper)"),
        short_label: text("Holds"),
        description: text(
            "One script takes the units into a hold that expires; confirm and release settle it once; a reaper returns expired holds in small batches.",
        ),
        unsafe_by_design: false,
        category: Category::Holds,
        featured: false,
        scripts: Cow::Borrowed(&[
            text("reserve_hold.lua"),
            text("confirm_hold.lua"),
            text("release_hold.lua"),
            text("reap_holds.lua"),
        ]),
        explanation: Explanation {
            title: text("Why holds bring a crashed buyer's units back"),
            how: text(
                "reserve_hold.lua decrements the available count and writes a hold (qty, customer, request id), listed in a \
                 sorted set by its expiry, all in one step. Paying customers confirm the hold (it becomes a sale), the others \
                 release it. A reaper pops expired holds, a small batch per call, and puts their units back.",
            ),
            why: text(
                "Every reserved unit is written down, in a hold, until it is sold or given back. If an app server dies, its \
                 hold still expires and the reaper returns the units. Confirm, release and the reaper each remove the hold in \
                 the same script that moves its units, so whichever comes first wins and the others find nothing: units come \
                 back exactly once, never twice.",
            ),
            cost: text(
                "A crashed buyer's units are out of stock until the hold expires. A resent request still reserves twice; the \
                 extra hold expires, so it costs time on the shelf, not units.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #7",
                    "EVALSHA reserve_hold 1 → {1, 0, 300000, 1}",
                    "held until 5:00 on the shop clock",
                    Tone::A,
                ),
                step(
                    "app server 2",
                    "(dies before #7 confirms)",
                    "the hold stays, and keeps ticking",
                    Tone::Bad,
                ),
                step(
                    "reaper",
                    "EVALSHA reap_holds 300000 100 → {1, 1, 0, 0}",
                    "expired: the unit is back on the shelf",
                    Tone::B,
                ),
            ]),
        },
        tape: TapeRule::Story,
        scenario: Scenario::Checkout,
    },
    buyer: &Holds,
};

struct Holds;

impl CheckoutBuyer for Holds {
    fn keeps_holds(&self) -> bool {
        true
    }

    fn reserve<'a>(
        &'a self,
        mut conn: RedisConn,
        order: Order<'a>,
    ) -> BoxFuture<'a, Step<Reservation>> {
        async move {
            match holds::reserve_hold(&mut conn, order.keys, &hold_request(&order)).await {
                Ok(c) => Step::ok(from_hold_reply(c.reply), c.round_trips),
                Err(f) => Step::failed(f.error, f.round_trips),
            }
        }
        .boxed()
    }
}
