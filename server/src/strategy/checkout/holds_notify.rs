//! `holds_notify`: holds that Redis expires itself, given back when Redis says so.
//!
//! `reserve_hold_ttl.lua` takes the units and writes the hold as a key with a TTL (`PX`),
//! plus a shadow that remembers its units after the key is gone. Nothing scans: a listener
//! subscribed to Redis's `expired` keyspace events (`crate::checkout::listener`) returns
//! each expired hold's units with `release_hold_ttl.lua`. Confirm and release delete the key
//! and the shadow (a deleted key publishes no `expired` event), so a hold is still settled
//! once.
//!
//! The gap is in the delivery, not the scripts: pub/sub is fire-and-forget, so an event
//! published while the listener reconnects is gone, and its hold's units are stranded for
//! good; and Redis publishes `expired` when it *removes* the key (on a read, or when its
//! background cycle samples it), not at the deadline, so every release is late.

use std::borrow::Cow;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{
    CheckoutBuyer, CheckoutStrategy, Claim, Expiry, Order, Reservation, Returned, Settled, Step,
    from_hold_reply, hold_request,
};
use crate::store::holds::ConfirmReply;
use crate::store::notify::{self, TtlRelease};
use crate::store::{CheckoutKeys, RedisConn};

/// Holds with a TTL in Redis, and a listener on `expired` events.
pub const STRATEGY: CheckoutStrategy = CheckoutStrategy {
    about: StrategyAbout {
        name: text("holds_notify"),
        label: text("Holds that Redis expires (reserve_hold_ttl.lua + expired events)"),
        short_label: text("Holds + events"),
        description: text(
            "One script takes the units into a hold key with a TTL; a listener on Redis's expired events gives them back. \
             Events published while it reconnects are lost, and every event comes when Redis gets round to the key.",
        ),
        unsafe_by_design: true,
        category: Category::Holds,
        featured: false,
        scripts: Cow::Borrowed(&[
            text("reserve_hold_ttl.lua"),
            text("confirm_hold_ttl.lua"),
            text("release_hold_ttl.lua"),
        ]),
        explanation: Explanation {
            title: text("Why an expired event is not a reaper"),
            how: text(
                "reserve_hold_ttl.lua decrements the available count and writes the hold as a key with a TTL (SET PX), with a \
                 shadow hash that remembers its units once the key is gone. Nothing lists the holds by expiry. The app \
                 subscribes to __keyevent@0__:expired; for each hold key it hears of, release_hold_ttl.lua reads the shadow, \
                 puts the units back and deletes it, in one step. Confirm and release delete the key and its shadow.",
            ),
            why: text(
                "Pub/sub is fire-and-forget: Redis sends an event to whoever is subscribed at that instant and keeps no copy. \
                 While the listener's connection is down (a deploy, a restart, a network blip) every hold that expires is \
                 announced to nobody, and its units stay out of stock for good. And Redis announces an expiry when it removes \
                 the key, on a read or when its background cycle (hz 10) samples it, not at the deadline: every release is late.",
            ),
            cost: text(
                "Lost releases are leaked units: only a scan (the reaper, or a reconciliation over the shadows) finds them. \
                 Keyspace events are a server-wide setting (notify-keyspace-events Ex), so this runs on a Redis of the run's own.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #7",
                    "EVALSHA reserve_hold_ttl 1 → {1, 0, 300000, 1}",
                    "hold key set with PX 3000; a shadow keeps qty 1",
                    Tone::A,
                ),
                step(
                    "listener",
                    "(reconnecting: the app server restarts)",
                    "subscribed to nothing for two seconds",
                    Tone::Bad,
                ),
                step(
                    "Redis",
                    "PUBLISH __keyevent@0__:expired …:hold:h7.1 → 0",
                    "heard by 0 subscribers: the unit never comes back",
                    Tone::B,
                ),
            ]),
        },
        tape: TapeRule::Story,
        scenario: Scenario::Checkout,
    },
    buyer: &HoldsNotify,
};

struct HoldsNotify;

impl CheckoutBuyer for HoldsNotify {
    fn keeps_holds(&self) -> bool {
        true
    }

    fn expiry(&self) -> Expiry {
        Expiry::Notifications
    }

    fn reserve<'a>(
        &'a self,
        mut conn: RedisConn,
        order: Order<'a>,
    ) -> BoxFuture<'a, Step<Reservation>> {
        async move {
            // Redis counts the TTL in real ms; round up, so the key never dies before the
            // hold's expiry on the shop clock.
            let px = order.hold_real.as_micros().div_ceil(1_000) as u64;
            let request = hold_request(&order);
            match notify::reserve_hold_ttl(&mut conn, order.keys, &request, px).await {
                Ok(c) => Step::ok(from_hold_reply(c.reply), c.round_trips),
                Err(f) => Step::failed(f.error, f.round_trips),
            }
        }
        .boxed()
    }

    fn confirm<'a>(
        &'a self,
        mut conn: RedisConn,
        keys: &'a CheckoutKeys,
        claim: &'a Claim,
        now: u64,
    ) -> BoxFuture<'a, Step<Settled>> {
        async move {
            let Claim::Hold { hold, .. } = claim else {
                return Step::ok(Settled::Confirmed, 0); // never: every claim here is a hold
            };
            match notify::confirm_hold_ttl(&mut conn, keys, hold, now).await {
                Ok(c) => Step::ok(
                    match c.reply {
                        ConfirmReply::Confirmed { .. } => Settled::Confirmed,
                        ConfirmReply::Expired { .. } => Settled::Expired,
                        ConfirmReply::Gone => Settled::Gone,
                    },
                    c.round_trips,
                ),
                Err(f) => Step::failed(f.error, f.round_trips),
            }
        }
        .boxed()
    }

    fn release<'a>(
        &'a self,
        mut conn: RedisConn,
        keys: &'a CheckoutKeys,
        claim: &'a Claim,
    ) -> BoxFuture<'a, Step<Returned>> {
        async move {
            let Claim::Hold { hold, .. } = claim else {
                return Step::ok(Returned::Gone, 0); // never: every claim here is a hold
            };
            match notify::release_hold_ttl(&mut conn, keys, hold).await {
                Ok(c) => Step::ok(
                    match c.reply {
                        TtlRelease::Released {
                            available_after, ..
                        } => Returned::Released(available_after),
                        TtlRelease::Gone { .. } => Returned::Gone,
                    },
                    c.round_trips,
                ),
                Err(f) => Step::failed(f.error, f.round_trips),
            }
        }
        .boxed()
    }
}
