//! The checkout strategies: how a buyer reserves, confirms and releases. One file per
//! strategy; [`REGISTRY`] lists them.
//!
//! A checkout strategy is one `const` [`CheckoutStrategy`]: its self-description (every word
//! the page shows, sent in `hello.checkout_strategies`) and a [`CheckoutBuyer`], the three
//! Redis steps of a checkout. The engine (`crate::checkout`) decides everything else: when a
//! buyer arrives, whether its client resends, how long it pays, whether its app server dies,
//! and the ledger row. So the files show only what differs between the strategies, which is
//! what the lesson is about:
//!
//! | strategy | reserve | oversells | a crash leaks | a resend reserves twice | limit |
//! | --- | --- | --- | --- | --- | --- |
//! | `naive_checkout` | GET, check, DECRBY | yes | yes | yes | no |
//! | `atomic_no_holds` | `reserve.lua` | no | yes, forever | yes | no |
//! | `holds` | `reserve_hold.lua` | no | no: the hold expires | yes (it expires) | no |
//! | `idempotent_holds` | `reserve_hold_once.lua` | no | no | no | no |
//! | `customer_limit` | `reserve_hold_limited.lua` | no | no | yes (it expires) | yes |
//! | `naive_customer_limit` | HGET, check, `reserve_hold.lua` | no | no | yes | a bot exceeds it |
//! | `holds_notify` | `reserve_hold_ttl.lua` | no | while its listener is down | yes (it expires) | no |
//!
//! Adding one is one new file in this folder plus one line in [`REGISTRY`].

use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{StrategyAbout, StrategyInfo};

use crate::store::holds::{ConfirmReply, HoldReply, HoldRequest, ReleaseReply};
use crate::store::{self, CheckoutKeys, HoldKey, RedisConn, StoreError, stock};

mod atomic_no_holds;
mod customer_limit;
mod holds;
mod holds_notify;
mod idempotent_holds;
mod naive_checkout;
mod naive_customer_limit;

/// Every checkout strategy, in the order the page lists them.
pub static REGISTRY: [&CheckoutStrategy; 7] = [
    &naive_checkout::STRATEGY,
    &atomic_no_holds::STRATEGY,
    &holds::STRATEGY,
    &idempotent_holds::STRATEGY,
    &customer_limit::STRATEGY,
    &naive_customer_limit::STRATEGY,
    &holds_notify::STRATEGY,
];

/// Find a checkout strategy by its wire name.
pub fn find(name: &str) -> Option<&'static CheckoutStrategy> {
    REGISTRY.iter().copied().find(|s| s.name() == name)
}

/// One way of checking out: what it says about itself, and its Redis steps.
pub struct CheckoutStrategy {
    /// Every word the page shows about it.
    pub about: StrategyAbout,
    /// Its reserve, confirm and release.
    pub buyer: &'static dyn CheckoutBuyer,
}

impl CheckoutStrategy {
    /// The wire name, e.g. `"holds"`.
    pub fn name(&self) -> &str {
        &self.about.name
    }

    /// The `hello` entry. Checkout strategies need only Redis (the ledger falls back to
    /// Redis when PostgreSQL is missing), so they are always available.
    pub fn info(&self) -> StrategyInfo {
        StrategyInfo::always_available(self.about.clone())
    }
}

/// What a buyer's reserve step is for.
#[derive(Debug, Clone, Copy)]
pub struct Order<'a> {
    /// The run's keys.
    pub keys: &'a CheckoutKeys,
    /// Units wanted.
    pub qty: u32,
    /// Who orders.
    pub customer: u32,
    /// The order's request id (the same on a resent request).
    pub request: &'a str,
    /// Where a new hold goes (a fresh key per request sent, resends included).
    pub hold: &'a HoldKey,
    /// The shop clock now, ms.
    pub now: u64,
    /// How long a hold lasts, shop ms.
    pub hold_ttl: u64,
    /// The same in real time: what a TTL set in Redis counts down.
    pub hold_real: Duration,
    /// Most units one customer may hold or have bought.
    pub limit: u32,
    /// Simulated app work between a read and the write that depends on it.
    pub race_window: Duration,
}

/// What a buyer owns once it has reserved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// A hold in Redis, which expires at `expires_at` (shop ms) unless confirmed or released.
    Hold {
        /// The hold.
        hold: HoldKey,
        /// Its expiry on the shop clock.
        expires_at: u64,
    },
    /// Units taken off the counter with no record of who took them: only the app knows,
    /// and an app that dies forgets.
    Units(u32),
}

/// What the reserve step came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reservation {
    /// The units are the buyer's.
    Reserved {
        /// What it owns now.
        claim: Claim,
        /// The available count the decision was made on, where the strategy reports it.
        observed: Option<i64>,
        /// The available count right after.
        available_after: i64,
        /// The customer's units held or bought, after (the hold strategies report it).
        customer_units: Option<i64>,
        /// True when a resent request was answered from the record of the first.
        from_record: bool,
    },
    /// Too few units.
    SoldOut {
        /// The available count seen.
        observed: Option<i64>,
        /// The customer's units held or bought, where reported.
        customer_units: Option<i64>,
        /// True when answered from the record of the first request.
        from_record: bool,
    },
    /// The customer would go over its limit.
    OverLimit {
        /// The customer's units held or bought.
        customer_units: i64,
    },
}

/// What the confirm step came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// The units are sold.
    Confirmed,
    /// The hold had expired: nothing sold (the shop refunds).
    Expired,
    /// The hold was no longer there.
    Gone,
}

/// What the release step came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Returned {
    /// The units are back; the available count after.
    Released(i64),
    /// The hold was no longer there: nothing changed.
    Gone,
}

/// One step's answer, and the Redis requests it sent (whether it succeeded or not).
#[derive(Debug)]
pub struct Step<T> {
    /// What came of it.
    pub answer: Result<T, StoreError>,
    /// Requests sent.
    pub round_trips: u32,
}

impl<T> Step<T> {
    /// A step that got its answer.
    pub fn ok(answer: T, round_trips: u32) -> Self {
        Step {
            answer: Ok(answer),
            round_trips,
        }
    }

    /// A step that failed.
    pub fn failed(error: StoreError, round_trips: u32) -> Self {
        Step {
            answer: Err(error),
            round_trips,
        }
    }
}

/// Who gives back the units of a hold nobody confirmed or released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// The reaper: `reap_holds.lua` on the holds listed by expiry, on a tick.
    Reaper,
    /// A listener on Redis's `expired` keyspace events, on a Redis of the run's own (the
    /// events are a server-wide setting): `release_hold_ttl.lua` per event heard.
    Notifications,
}

/// The Redis side of a checkout. Each method gets its app server's connection (shared,
/// pipelined) and must not panic on store errors: report them in the [`Step`].
pub trait CheckoutBuyer: Sync {
    /// True when a reservation is a hold that expires: the engine runs the reaper, and the
    /// run waits for the last hold.
    fn keeps_holds(&self) -> bool;
    /// Who returns its expired holds, when it keeps holds: the reaper, unless it says so.
    fn expiry(&self) -> Expiry {
        Expiry::Reaper
    }
    /// Take the order's units.
    fn reserve<'a>(&'a self, conn: RedisConn, order: Order<'a>)
    -> BoxFuture<'a, Step<Reservation>>;
    /// The payment went through: make the claim a sale. Every strategy here confirms the same
    /// way (a hold by script, hold-less units need nothing); a new one may do otherwise.
    fn confirm<'a>(
        &'a self,
        conn: RedisConn,
        keys: &'a CheckoutKeys,
        claim: &'a Claim,
        now: u64,
    ) -> BoxFuture<'a, Step<Settled>> {
        confirm_claim(conn, keys, claim, now).boxed()
    }
    /// The customer walked away or the payment failed: give the claim back (a hold by
    /// script, hold-less units by `INCRBY`).
    fn release<'a>(
        &'a self,
        conn: RedisConn,
        keys: &'a CheckoutKeys,
        claim: &'a Claim,
    ) -> BoxFuture<'a, Step<Returned>> {
        release_claim(conn, keys, claim).boxed()
    }
}

/// Confirm a claim: a hold with `confirm_hold.lua` (every hold strategy does the same);
/// hold-less units need nothing in Redis (their decrement was the sale).
pub async fn confirm_claim(
    mut conn: RedisConn,
    keys: &CheckoutKeys,
    claim: &Claim,
    now: u64,
) -> Step<Settled> {
    let Claim::Hold { hold, .. } = claim else {
        return Step::ok(Settled::Confirmed, 0); // no hold: nothing to turn into a sale
    };
    match store::holds::confirm_hold(&mut conn, keys, hold, now).await {
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

/// Release a hold with `release_hold.lua`, or a hold-less claim with `INCRBY`.
pub async fn release_claim(
    mut conn: RedisConn,
    keys: &CheckoutKeys,
    claim: &Claim,
) -> Step<Returned> {
    match claim {
        Claim::Hold { hold, .. } => match store::holds::release_hold(&mut conn, keys, hold).await {
            Ok(c) => Step::ok(
                match c.reply {
                    ReleaseReply::Released {
                        available_after, ..
                    } => Returned::Released(available_after),
                    ReleaseReply::Gone { .. } => Returned::Gone,
                },
                c.round_trips,
            ),
            Err(f) => Step::failed(f.error, f.round_trips),
        },
        // Nothing records who took these units: the app's memory is the only record.
        Claim::Units(qty) => match stock::incr_by(&mut conn, keys.run(), *qty).await {
            Ok(after) => Step::ok(Returned::Released(after), 1),
            Err(e) => Step::failed(e, 1),
        },
    }
}

/// Turn a reserve script's reply into a [`Reservation`].
pub fn from_hold_reply(reply: HoldReply) -> Reservation {
    match reply {
        HoldReply::Held {
            available_after,
            expires_at,
            customer_units,
            hold,
            from_record,
        } => Reservation::Reserved {
            claim: Claim::Hold { hold, expires_at },
            // From the record nothing was taken now: there was no decision to observe.
            observed: None,
            available_after,
            customer_units: Some(customer_units),
            from_record,
        },
        HoldReply::SoldOut {
            available,
            customer_units,
            from_record,
        } => Reservation::SoldOut {
            observed: Some(available),
            customer_units: Some(customer_units),
            from_record,
        },
        HoldReply::OverLimit { customer_units, .. } => Reservation::OverLimit { customer_units },
    }
}

/// The request a hold script gets for `order`.
pub fn hold_request<'a>(order: &Order<'a>) -> HoldRequest<'a> {
    HoldRequest {
        qty: order.qty,
        now: order.now,
        ttl: order.hold_ttl,
        customer: order.customer,
        request: order.request,
        hold: order.hold,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oversold_protocol::{Category, Scenario, TapeRule};
    use std::collections::HashSet;

    #[test]
    fn names_are_unique_and_none_is_a_race_strategy() {
        let names: HashSet<&str> = REGISTRY.iter().map(|s| s.name()).collect();
        assert_eq!(names.len(), REGISTRY.len());
        for s in REGISTRY {
            assert!(crate::strategy::find(s.name()).is_none(), "{}", s.name());
            assert_eq!(s.about.scenario, Scenario::Checkout, "{}", s.name());
            assert_eq!(s.about.tape, TapeRule::Story, "{}", s.name());
            assert!(find(s.name()).is_some());
            let e = &s.about.explanation;
            assert!(!e.title.is_empty() && !e.how.is_empty() && !e.why.is_empty());
            assert!(e.steps.len() >= 2, "{} needs an interleaving", s.name());
            // The unsafe ones say so, and only they read then decide in the app.
            assert_eq!(
                s.about.category == Category::CheckThenWrite,
                s.name().starts_with("naive"),
                "{}",
                s.name()
            );
        }
        let featured: Vec<&str> = REGISTRY
            .iter()
            .filter(|s| s.about.featured)
            .map(|s| s.name())
            .collect();
        assert_eq!(featured, ["atomic_no_holds", "idempotent_holds"]);
    }

    #[test]
    fn every_script_a_checkout_strategy_names_is_one_the_server_runs() {
        let files: HashSet<&str> = crate::store::scripts::all()
            .iter()
            .map(|f| f.file)
            .collect();
        for s in REGISTRY {
            for script in s.about.scripts.iter() {
                assert!(files.contains(&**script), "{} names {script}", s.name());
            }
        }
    }
}
