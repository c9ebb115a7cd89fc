//! The checkout scenario: what happens after the click.
//!
//! In the `race` scenario a buyer's story ends at the decrement. In `checkout` it goes on:
//! the buyer reserves, pays (for a seeded while, on the *shop clock*), and then confirms
//! (the hold becomes a sale and a row in the settlement ledger), or releases (abandoned, the
//! card declined), or says nothing ever again (its app server crashed after reserving). A
//! hold that nobody confirms or releases expires, and a reaper gives its units back.
//!
//! # Two clocks
//! Shop time is what the story is about ("a 5-minute hold"); real time is what the stage
//! has ("3 seconds"). `time_scale` is shop milliseconds per real millisecond: with 100, a
//! 300,000 ms hold lasts 3,000 real ms. Every step of a story carries both clocks.
//!
//! # Conservation
//! At every instant, for every strategy: `stock = available + held + sold + leaked`, where
//! `sold` is what the ledger says and `leaked` is whatever left the shelf and is nowhere
//! else. [`Reconciliation`] frames show the four live; [`CheckoutTally`] shows them at the
//! end, where a strategy that oversold ends with a negative `available` (`final_stock`).
//!
//! # Layout
//! - [`Scenario`], [`FailMode`], [`CheckoutConfig`]: the knobs, filled in.
//! - [`CheckoutStory`], [`CheckoutStep`], [`Stage`], [`StepOutcome`], [`CheckoutEnd`],
//!   [`Fate`]: one buyer's whole story, on its `BuyerOutcome`.
//! - [`CheckoutTally`], [`ReaperStats`], [`NotifyStats`], [`LedgerKind`]: the end of a run.
//! - [`Reconciliation`], [`ReconcileReport`]: live numbers, and the answer to `reconcile`.

use std::fmt;
use std::str::FromStr;

use crate::wire_names::wire_names;

use serde::{Deserialize, Serialize};

/// Which kind of race a run is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Scenario {
    /// Buyers race for the stock; the story ends at the decrement (protocol versions 1–2).
    #[default]
    Race,
    /// Buyers reserve, pay, then confirm or release; holds expire; a ledger settles.
    Checkout,
    /// Each buyer's cart holds several SKUs, bought all or nothing (see [`crate::cart`]).
    Cart,
    /// One SKU stocked in several warehouses; each buyer prefers one and falls back to the
    /// nearest others (see [`crate::cart`]).
    Warehouses,
    /// A sale on a Redis of the run's own, and one client's long script that stops it
    /// (see [`crate::busy`]).
    BusyScript,
    /// A sale on a Redis of the run's own with one persistence setting, killed mid-sale and
    /// restarted from disk (see [`crate::durability`]).
    Durability,
    /// A sale on a Redis of the run's own that runs out of memory mid-sale (see
    /// [`crate::eviction`]).
    Eviction,
    /// A sale on a primary and its replica, the primary killed while the replica lags, the
    /// replica promoted (see [`crate::failover`]).
    Failover,
}

wire_names! { Scenario {
    Race = "race",
    Checkout = "checkout",
    Cart = "cart",
    Warehouses = "warehouses",
    BusyScript = "busy_script",
    Durability = "durability",
    Eviction = "eviction",
    Failover = "failover",
} }

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Scenario {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Scenario::from_wire_name(s).ok_or_else(|| {
            format!(
                "unknown scenario {s:?}: race, checkout, cart, warehouses, busy_script, durability, eviction or failover"
            )
        })
    }
}

/// What the shop does with an order while Redis cannot be reached.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum FailMode {
    /// Refuse the order and ask the customer to try again: nothing is ever oversold, and
    /// sales are lost while the outage lasts. The default for scarce goods.
    #[default]
    Closed,
    /// Take the order anyway as a backorder row in the ledger: no sale is lost, and the
    /// shop may have promised more than it has (the overage).
    Open,
}

wire_names! { FailMode {
    Closed = "closed",
    Open = "open",
} }

impl fmt::Display for FailMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FailMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FailMode::from_wire_name(s)
            .ok_or_else(|| format!("unknown fail mode {s:?}: closed or open"))
    }
}

/// The checkout knobs with every default filled in. On the wire they sit flat beside the
/// race's knobs in `run_started.config` (present only when `scenario` is `checkout`).
///
/// Times ending in `_ms` are on the shop clock, except where a field says otherwise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckoutConfig {
    /// How long a hold lasts before it expires (shop ms).
    pub hold_ttl_ms: u32,
    /// Shop milliseconds per real millisecond.
    pub time_scale: u32,
    /// The typical payment time (shop ms). Each buyer's is seeded: the sum of two uniform
    /// draws in `0..pay_ms`, so it averages `pay_ms` and never exceeds twice it.
    pub pay_ms: u32,
    /// Share of buyers (0.0–1.0) who walk away after reserving; the app releases the hold.
    pub abandon_fraction: f64,
    /// Share of buyers whose payment fails; the app releases the hold.
    pub pay_fail_fraction: f64,
    /// Share of buyers whose app server dies after reserving and before writing the order:
    /// nobody confirms or releases their units.
    pub crash_fraction: f64,
    /// Share of buyers whose client times out and resends the same reserve request.
    pub retry_fraction: f64,
    /// Distinct customers. Fewer than buyers means some customers are bots placing many
    /// orders.
    pub customers: u32,
    /// Most units one customer may hold or have bought at once.
    pub per_customer_limit: u32,
    /// What the shop does while Redis cannot be reached.
    pub fail_mode: FailMode,
    /// End the run when the last buyer is done, without waiting for the remaining holds to
    /// expire: `held_units` then counts what is still held.
    pub no_wait_expiry: bool,
    /// When the server pauses its own Redis (shop ms after the gate), if `outage_ms > 0`.
    pub outage_at_ms: u32,
    /// How long Redis stays paused (shop ms); 0: no outage. Only on a Redis the server
    /// started itself.
    pub outage_ms: u32,
}

/// What the seed decided a buyer would do after reserving.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fate {
    /// Pays, then confirms.
    Pay,
    /// Walks away; the app releases the hold.
    Abandon,
    /// The payment is declined; the app releases the hold.
    PayFail,
    /// The app server dies right after reserving.
    Crash,
}

wire_names! { Fate {
    Pay = "pay",
    Abandon = "abandon",
    PayFail = "pay_fail",
    Crash = "crash",
} }

/// One step of a checkout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// The reserve request (the first one, for a buyer whose client resends).
    Reserve,
    /// The same reserve request, resent by a client that timed out.
    Retry,
    /// The customer paying (or walking away, or the card being declined).
    Pay,
    /// Turning the hold into a sale in Redis.
    Confirm,
    /// Giving the units back.
    Release,
    /// Writing the order (or the backorder) into the settlement ledger.
    Ledger,
    /// The app server dying.
    Crash,
}

wire_names! { Stage {
    Reserve = "reserve",
    Retry = "retry",
    Pay = "pay",
    Confirm = "confirm",
    Release = "release",
    Ledger = "ledger",
    Crash = "crash",
} }

/// What one step came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StepOutcome {
    /// Units taken, with a hold that expires.
    Held,
    /// Units taken, with no hold: nothing will give them back unless the app does.
    Taken,
    /// Too little stock.
    SoldOut,
    /// Refused by the per-customer limit.
    OverLimit,
    /// A resent request answered from the record of the first: nothing was taken again.
    FromRecord,
    /// Redis could not be reached in time.
    Unreachable,
    /// The request landed after the app had given up on it: the units it took are
    /// nobody's (a hold expires; units without a hold leak).
    Orphaned,
    /// The payment went through.
    Paid,
    /// The customer walked away.
    Abandoned,
    /// The payment was declined.
    Declined,
    /// The hold became a sale.
    Confirmed,
    /// The hold had expired before the confirmation arrived: nothing was sold.
    Expired,
    /// The hold was no longer there (released, or expired and reaped already).
    Gone,
    /// The units went back on the shelf.
    Released,
    /// The ledger took the row.
    Recorded,
    /// The app server died here.
    Crashed,
    /// A store error; see the story's `error`.
    Failed,
}

wire_names! { StepOutcome {
    Held = "held",
    Taken = "taken",
    SoldOut = "sold_out",
    OverLimit = "over_limit",
    FromRecord = "from_record",
    Unreachable = "unreachable",
    Orphaned = "orphaned",
    Paid = "paid",
    Abandoned = "abandoned",
    Declined = "declined",
    Confirmed = "confirmed",
    Expired = "expired",
    Gone = "gone",
    Released = "released",
    Recorded = "recorded",
    Crashed = "crashed",
    Failed = "failed",
} }

/// One step, timed on both clocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckoutStep {
    /// Which step.
    pub stage: Stage,
    /// What it came to.
    pub outcome: StepOutcome,
    /// When it began, µs after the gate opened (real time).
    pub start_us: u64,
    /// When it ended, µs after the gate opened (real time).
    pub end_us: u64,
    /// When it began on the shop clock, ms after the gate opened.
    pub start_shop_ms: u64,
    /// When it ended on the shop clock.
    pub end_shop_ms: u64,
}

/// How a buyer's checkout ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CheckoutEnd {
    /// Paid, confirmed, and in the ledger. (`result`: `reserved`.)
    Confirmed,
    /// Redis was unreachable and the shop fails open: the order is a backorder row in the
    /// ledger, not taken from the stock. (`result`: `reserved`.)
    Backordered,
    /// Too little stock. (`result`: `sold_out`.)
    SoldOut,
    /// Refused by the per-customer limit. (`result`: `sold_out`.)
    OverLimit,
    /// Redis was unreachable and the shop fails closed: asked to try again. (`result`:
    /// `error`.)
    Refused,
    /// Walked away; the units were released. (`result`: `gave_up`.)
    Abandoned,
    /// The payment was declined; the units were released. (`result`: `gave_up`.)
    PaymentFailed,
    /// Paid after the hold expired: refunded, nothing sold. (`result`: `gave_up`.)
    Expired,
    /// The app server died after reserving: no answer, no order, and only an expiry can
    /// bring the units back. (`result`: `unknown`.)
    Crashed,
    /// A store error ended the story; see `error`. (`result`: `error` or `unknown`.)
    Failed,
}

wire_names! { CheckoutEnd {
    Confirmed = "confirmed",
    Backordered = "backordered",
    SoldOut = "sold_out",
    OverLimit = "over_limit",
    Refused = "refused",
    Abandoned = "abandoned",
    PaymentFailed = "payment_failed",
    Expired = "expired",
    Crashed = "crashed",
    Failed = "failed",
} }

/// One buyer's whole checkout, on its `BuyerOutcome` (`outcomes[].checkout`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckoutStory {
    /// The customer placing the order (1-based). Bots place several orders.
    pub customer: u32,
    /// The order's request id: the same on a resent request, and the ledger row's key.
    pub request_id: String,
    /// The hold the buyer ended up with (the one it confirmed or released), if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold_id: Option<String>,
    /// When that hold expires (shop ms after the gate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_shop_ms: Option<u64>,
    /// What the seed decided this buyer would do after reserving.
    pub fate: Fate,
    /// True when its client resent the reserve request.
    pub retried: bool,
    /// True when the resent request was answered from the record of the first (idempotent).
    pub from_record: bool,
    /// Units reserved more than once for this request id (0 or `qty`).
    pub duplicate_units: u32,
    /// The customer's units held or bought right after this reservation, where the strategy
    /// reports it (the hold strategies); for a resent request, the larger of the two replies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_units: Option<i64>,
    /// How it ended.
    pub end: CheckoutEnd,
    /// Every step, in order.
    pub steps: Vec<CheckoutStep>,
}

/// Where confirmed orders are settled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum LedgerKind {
    /// A table in PostgreSQL: durable, and the source of truth a real shop would use.
    Postgres,
    /// A hash in Redis under the run's hash tag: the fallback when PostgreSQL is not
    /// available. Fine for a lab; a real shop would not settle money in a cache.
    #[default]
    Redis,
}

wire_names! { LedgerKind {
    Postgres = "postgres",
    Redis = "redis",
} }

/// Which ledger checkout runs on this server settle in, and why (in `hello`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerInfo {
    /// PostgreSQL, or the Redis fallback.
    pub kind: LedgerKind,
    /// One sentence: where, or why not PostgreSQL.
    pub note: String,
}

/// What the reaper did in one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReaperStats {
    /// Script calls.
    pub calls: u32,
    /// Holds it returned.
    pub holds_returned: u64,
    /// Most holds one call returned (never more than its batch size).
    pub largest_batch: u32,
    /// The batch size it asks for.
    pub batch_size: u32,
    /// Median time of one call as the server saw it, µs.
    pub p50_call_us: u64,
    /// 99th percentile of one call, µs.
    pub p99_call_us: u64,
    /// Slowest call, µs.
    pub max_call_us: u64,
    /// How late the reaper set about returning a hold only it could return (a crashed app
    /// server's): the start of the call that returned it minus its deadline, both on the
    /// app's clock, µs; median. The same measure as [`NotifyStats::release_late_p50_us`].
    #[serde(default)]
    pub late_p50_us: u64,
    /// The latest of those, µs.
    #[serde(default)]
    pub late_max_us: u64,
}

/// What the `expired`-event listener did in one run (`holds_notify`; all zero otherwise).
///
/// Every number is measured, none is inferred: `releases` counts events the listener heard and
/// acted on; `releases_lost` counts holds whose key Redis removed while nobody was subscribed,
/// found at the end as shadows with no key (their units are in `leaked_units`); lateness is
/// each heard event's arrival minus its hold's deadline, both on the app's clock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotifyStats {
    /// Holds given back on an `expired` event the listener heard.
    pub releases: u64,
    /// Holds that expired while the listener was down: never given back.
    pub releases_lost: u64,
    /// Units in those holds: stranded, counted in `leaked_units`.
    pub units_lost: u64,
    /// How long the listener's connection was down, real ms (0: it never dropped).
    pub listener_down_ms: u64,
    /// Median lateness of a heard release: the event's arrival minus the hold's deadline,
    /// both on the app's clock, µs.
    pub release_late_p50_us: u64,
    /// The latest heard release, µs after its deadline.
    pub release_late_max_us: u64,
}

/// The end of a checkout run: on the wire these fields sit flat in the run's summary.
///
/// Conservation: `stock == final_stock + confirmed_units + held_units + leaked_units`, for
/// every strategy and every run. An oversell shows as `final_stock < 0` (the counter
/// promised units that never existed); the summary's `oversold_units` is then
/// `-final_stock`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckoutTally {
    /// Where orders were settled.
    pub ledger: LedgerKind,
    /// Units in the ledger's confirmed rows.
    pub confirmed_units: u64,
    /// Confirmed rows.
    pub confirmed_orders: u32,
    /// Units in holds still active when the run ended (0 unless `no_wait_expiry`).
    pub held_units: u64,
    /// Units given back by a release (abandoned, declined).
    pub released_units: u64,
    /// Units given back by the reaper when their hold expired.
    pub expired_units: u64,
    /// Units that left the shelf and are nowhere: not available, not held, not sold.
    pub leaked_units: i64,
    /// Units reserved more than once for one request id (a resent request reserving again).
    pub duplicate_reservations: u64,
    /// Customers who went over `per_customer_limit`: bought more than it (the ledger), or
    /// held and bought more than it at once (the hold scripts' tally, in their replies).
    pub limit_violations: u32,
    /// Units in backorder rows (fail-open while Redis was unreachable).
    pub backorder_units: u64,
    /// Of those, units beyond the stock: `max(0, confirmed + backorder - stock)`.
    pub overage_units: u64,
    /// Orders refused because Redis was unreachable (fail-closed).
    pub refused_unreachable: u32,
    /// Orders refused by the per-customer limit.
    pub refused_by_limit: u32,
    /// Buyers whose app server crashed after reserving.
    pub crashed: u32,
    /// Buyers who walked away.
    pub abandoned: u32,
    /// Buyers whose payment was declined.
    pub payment_failed: u32,
    /// Buyers who paid after their hold had expired (refunded).
    pub paid_too_late: u32,
    /// Resent requests answered from the record of the first.
    pub answered_from_record: u32,
    /// What `reconcile` messages added to (or, negative, took from) the available count.
    pub reconciled_units: i64,
    /// The shop clock when the run ended, ms.
    pub shop_ms: u64,
    /// The real clock when the run ended (expiry wait included), ms.
    pub real_ms: u64,
    /// The reaper's work.
    pub reaper: ReaperStats,
    /// The `expired`-event listener's work (`holds_notify`); absent from older summaries.
    #[serde(default)]
    pub notify: NotifyStats,
}

/// The shelf, reconciled, at one instant of a checkout run: sent as `reconciliation`
/// frames during the run (a few per second) and once more at its end.
///
/// `stock = available + held + sold + settling + leaked`. Mid-run, for a strategy without
/// holds, `leaked` includes the units of buyers who are still paying: nothing in Redis
/// tells them apart from a crashed buyer's, which is why holds exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reconciliation {
    /// Shop clock, ms after the gate.
    pub shop_ms: u64,
    /// Real clock, ms after the gate.
    pub real_ms: u64,
    /// Units on the shelf before the run.
    pub stock: u32,
    /// The available counter in Redis.
    pub available: i64,
    /// Units in active holds.
    pub held: i64,
    /// Active holds.
    pub holds: u32,
    /// Units in the ledger's confirmed rows.
    pub sold: u64,
    /// Units confirmed in Redis whose ledger row is not written yet.
    pub settling: i64,
    /// `stock - available - held - sold - settling`.
    pub leaked: i64,
    /// Units in backorder rows.
    pub backorders: u64,
}

/// The answer to `reconcile`: the guide's correction, `available = stock - sold - held`,
/// applied atomically by one script, and what it changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReconcileReport {
    /// The available counter before the correction.
    pub available_before: i64,
    /// The available counter after it.
    pub available_after: i64,
    /// `available_after - available_before`: units put back (or, negative, taken away).
    pub fixed: i64,
    /// The sold units the correction used: the larger of the ledger's and Redis's count
    /// of confirmed units (a row may be on its way), so it never hands out a sold unit.
    pub sold: u64,
    /// The held units it used.
    pub held: i64,
    /// The shelf right after the correction.
    pub after: Reconciliation,
}
