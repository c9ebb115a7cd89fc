//! What each buyer did ([`BuyerOutcome`]) and the tally of a run ([`RunSummary`]).

use serde::{Deserialize, Serialize};

use crate::wire_names::wire_names;

use crate::busy::BusyTally;
use crate::cart::{CartStory, CartTally};
use crate::checkout::{CheckoutStory, CheckoutTally};
use crate::durability::DurabilityTally;
use crate::eviction::EvictionTally;
use crate::failover::FailoverTally;

/// How one buyer's order ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutcomeResult {
    /// The order was accepted: the buyer believes it owns `qty` units.
    Reserved,
    /// The strategy saw too little stock and refused.
    SoldOut,
    /// Something failed before the order could have taken effect (Redis down, a read that
    /// timed out, a refused connection); see `error`. Nothing was taken.
    Error,
    /// The write was sent but no answer came back (a timeout, a dropped connection): it may or
    /// may not have been applied. Its units are counted as in doubt, never as sold.
    Unknown,
    /// The buyer stopped waiting for its turn (a lock held too long, optimistic retries that
    /// kept losing) and took nothing: a bounded wait, by design; see `error` for why.
    GaveUp,
}

wire_names! { OutcomeResult {
    Reserved = "reserved",
    SoldOut = "sold_out",
    Error = "error",
    Unknown = "unknown",
    GaveUp = "gave_up",
} }

/// What one buyer did. `start_us`/`end_us` are offsets from the moment the start gate opened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuyerOutcome {
    /// 1-based buyer number.
    pub buyer: u32,
    /// 0-based index of the app server (Redis connection) the buyer went through.
    pub app_server: u32,
    /// Units ordered.
    pub qty: u32,
    /// The stock the strategy read before deciding, where it reads one.
    pub observed_stock: Option<i64>,
    /// How it ended.
    pub result: OutcomeResult,
    /// Why, when `result` is `error`, `unknown` or `gave_up`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The stock right after this buyer's write, where there was one.
    pub stock_after: Option<i64>,
    /// Time from the buyer's arrival to its answer, in µs.
    pub latency_us: u64,
    /// When the buyer arrived, µs after the gate opened.
    pub start_us: u64,
    /// When the buyer got its answer, µs after the gate opened.
    pub end_us: u64,
    /// When the app got its read of the stock back, µs after the gate opened, for strategies
    /// that read and then decide in the app (`naive`, `naive_set`, `watch`, `lock`). With
    /// `naive` every read lands before the first write: that is the race, on a time axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_us: Option<u64>,
    /// Requests this buyer sent to Redis (a script call counts as one).
    pub round_trips: u32,
    /// Attempts beyond the first (optimistic or lock strategies); 0 otherwise.
    #[serde(default)]
    pub retries: u32,
    /// Which stock bucket answered `observed_stock` and `stock_after`, for strategies that
    /// split the stock over several counters (`sharded`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bucket: Option<u32>,
    /// On a Redis Cluster, the node that served this buyer, as `host:port`: the master of
    /// the slot of the key it took from (its bucket's, for `sharded`), from the slot map the
    /// server read when the run started. Absent on a single Redis (and for `postgres`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The buyer's whole checkout (reserve, pay, confirm or release, ...), in a `checkout`
    /// run; absent in a `race`. `result` then says how the story ends in race terms (see
    /// [`crate::CheckoutEnd`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkout: Option<CheckoutStory>,
    /// The buyer's order line by line, in a `cart` or `warehouses` run; absent otherwise.
    /// `qty` is then the order's total units, and `result` is `reserved` only when every
    /// line (or the whole quantity, over warehouses) was taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cart: Option<Box<CartStory>>,
    /// Which life of the stock counter answered this buyer, in a run where Redis forgot
    /// part of the sale and came back (a failover's promoted replica, a restart from disk or
    /// from a snapshot); absent where the counter has one life (every other run). Each
    /// outcome carries the value its life began at, so the tape can be drawn from the
    /// outcomes alone, while they stream in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<Epoch>,
}

/// One life of a run's stock counter. The same values are answered twice when Redis comes
/// back with less than it had acknowledged: the life says which counter answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Epoch {
    /// 0 for the counter the run stocked; 1 once Redis came back the first time (the
    /// promoted replica, the restarted server).
    pub n: u32,
    /// The counter as this life began: the stock for life 0; for a later one, what the
    /// promoted replica held or the restarted Redis loaded. `None` when the key did not
    /// come back at all (`reserve.lua` then reads it as 0).
    pub began_at: Option<i64>,
    /// True when this life began because Redis evicted the counter under memory pressure
    /// (the `eviction` scenario): nothing restarted and no decrement was undone, the key is
    /// simply gone, and a missing key reads as 0. Absent on the wire when false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub evicted: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl BuyerOutcome {
    /// True when Redis answered this buyer `BUSY`: another client's script was running past
    /// `busy-reply-threshold`, and nothing was taken. (The scenarios keep Redis's own words
    /// for it in `error`, so this is read from them.)
    pub fn answered_busy(&self) -> bool {
        self.error.as_deref().is_some_and(|e| e.starts_with("BUSY"))
    }

    /// True when this is an acknowledged sale that a counter which came back at
    /// `came_back_at` does not have: the sale left the counter below it (persistence and
    /// replication keep a prefix of what Redis ran, and each sale leaves the counter lower),
    /// or the key did not come back at all (`None`). The tape and the failure scenarios'
    /// tallies both count lost sales with this.
    pub fn lost_to(&self, came_back_at: Option<i64>) -> bool {
        self.result == OutcomeResult::Reserved
            && match came_back_at {
                None => true,
                Some(v) => self.stock_after.is_some_and(|after| after < v),
            }
    }
}

/// Latency percentiles over all buyers of a run, in µs (nearest rank).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Median.
    pub p50_us: u64,
    /// 95th percentile.
    pub p95_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// Slowest buyer.
    pub max_us: u64,
}

/// The tally of one run. A scenario's own tally sits flat in the same object (see
/// [`RunSummary`'s `Deserialize`](#impl-Deserialize<'de>-for-RunSummary) for how it is read).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct RunSummary {
    /// Strategy name.
    pub strategy: String,
    /// Units in stock before the run.
    pub stock: u32,
    /// Number of buyers.
    pub buyers: u32,
    /// Orders that ended `reserved`.
    pub orders_accepted: u32,
    /// Units across accepted orders.
    pub units_sold: u64,
    /// The stock counter read back from Redis after the run.
    pub final_stock: i64,
    /// `max(0, units_sold - stock)`: units promised that never existed.
    pub oversold_units: u64,
    /// `final_stock - (stock - units_sold - in_doubt_taken)`: units the counter forgot.
    /// Positive means writes overwrote each other (a lost update), even when the counter never
    /// went negative; negative means units left the counter that no order, certain or in
    /// doubt, explains. Zero for every strategy that works.
    pub lost_updates: i64,
    /// Orders that ended `sold_out`.
    pub rejected: u32,
    /// Orders that ended `error`.
    pub errors: u32,
    /// Orders that ended `unknown`: sent, unanswered, maybe applied.
    #[serde(default)]
    pub unknown: u32,
    /// Orders that ended `gave_up`: the buyer stopped waiting its turn.
    #[serde(default)]
    pub gave_up: u32,
    /// Units across `unknown` orders. Redis may or may not have taken them; every invariant
    /// check allows for either.
    #[serde(default)]
    pub in_doubt_units: u64,
    /// Of `in_doubt_units`, how many the read-back shows Redis did take:
    /// `stock - final_stock - units_sold`, kept between 0 and `in_doubt_units`. Those buyers
    /// were not told they bought anything, yet the units left the shelf: a shop reconciles
    /// them (refund or ship). Exact for one counter whose only writers are the buyers.
    #[serde(default)]
    pub in_doubt_taken: u64,
    /// Refusals that provably left units behind: the buyer was told "sold out" although the
    /// shelf still held at least its quantity when the run ended. An undersell, never an
    /// oversell (`sharded` when its probes miss the buckets that still hold units;
    /// `decr_compensate` while an overshoot waits for its undo).
    #[serde(default)]
    pub false_sold_out: u32,
    /// Wall time from gate open to the last answer, in ms.
    pub duration_ms: f64,
    /// Buyers answered per second over `duration_ms`.
    pub throughput_per_s: f64,
    /// Latency percentiles.
    pub latency: LatencySummary,
    /// Requests sent to Redis across all buyers.
    pub round_trips: u64,
    /// Retries across all buyers.
    pub retries: u64,
    /// True when the run was cancelled before every buyer ran.
    #[serde(default)]
    pub cancelled: bool,
    /// A `checkout` run's ledger, holds and leaks; its fields sit flat in this object
    /// (`confirmed_units`, `held_units`, ...), absent after a `race`. In a checkout run
    /// `orders_accepted`/`units_sold` count the orders the shop said yes to (confirmed, and
    /// backorders when it fails open), `final_stock` is the available counter, and
    /// `oversold_units` is `max(0, -final_stock)`: units promised beyond the stock. Boxed:
    /// a race's summary stays as small as it was.
    #[serde(flatten, skip_deserializing)]
    pub checkout: Option<Box<CheckoutTally>>,
    /// A `cart` or `warehouses` run's partial carts, stranded units, compensations,
    /// fallbacks and per-shelf ledger, flat in this object; absent otherwise. `stock`,
    /// `units_sold` and `final_stock` are then sums over the shelves, and `oversold_units`
    /// the sum of each shelf's own (one shelf's oversell is not hidden by another's spare).
    #[serde(flatten, skip_deserializing)]
    pub cart: Option<Box<CartTally>>,
    /// A `busy_script` run's stall: `BUSY` replies, the stall's length, kills, restarts and
    /// the acknowledged units a restart lost, flat in this object; absent otherwise.
    #[serde(flatten, skip_deserializing)]
    pub busy: Option<Box<BusyTally>>,
    /// A `durability` run's crash: the persistence setting, when Redis was killed, what it
    /// loaded, the acknowledged orders it lost, and the setting's throughput, flat in this
    /// object; absent otherwise.
    #[serde(flatten, skip_deserializing)]
    pub durability: Option<Box<DurabilityTally>>,
    /// An `eviction` run's memory pressure: the policy, refusals (`STOCK_MISSING`, `OOM`),
    /// keys evicted and units left unsold, flat in this object; absent otherwise.
    #[serde(flatten, skip_deserializing)]
    pub eviction: Option<Box<EvictionTally>>,
    /// A `failover` run's reckoning: acknowledged units the promoted replica never had,
    /// units sold twice, writes refused, flat in this object; absent otherwise.
    #[serde(flatten, skip_deserializing)]
    pub failover: Option<Box<FailoverTally>>,
}

impl Serialize for RunSummary {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // The derived shape (`remote = "Self"`): the core fields and each tally flat.
        RunSummary::serialize(self, serializer)
    }
}

/// Read like the derived shape, except the scenarios' tallies: several share field names
/// (`acknowledged_lost`, `units_lost`), and serde's flatten hands each key to the first
/// flattened field that reads it, so a tally declared earlier that fails to read swallowed
/// the keys of one declared later (a failover's tally came back `None`). Here each tally is
/// read from the whole object on its own, and the derived reader skips them
/// (`skip_deserializing`): with `flatten` it carried a second reader of every tally, for
/// serde's buffer, that this never used (15 KB of the lab's gzipped wasm).
impl<'de> Deserialize<'de> for RunSummary {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::{DeserializeOwned, Error};
        fn tally<T: DeserializeOwned>(object: &serde_json::Value) -> Option<Box<T>> {
            T::deserialize(object).ok().map(Box::new)
        }
        let object = serde_json::Value::deserialize(deserializer)?;
        let mut summary = RunSummary::deserialize(&object).map_err(D::Error::custom)?;
        summary.checkout = tally(&object);
        summary.cart = tally(&object);
        summary.busy = tally(&object);
        summary.durability = tally(&object);
        summary.eviction = tally(&object);
        summary.failover = tally(&object);
        Ok(summary)
    }
}

/// A finished run saved to a file (`oversold run --outcomes FILE`, or the page's "save"), so
/// it can be shown again without racing: a speaker's prepared run when the venue's network
/// fails. Everything the page draws comes from here: the knobs, every outcome, the tally,
/// and the strategy's own description (its words and its tape rule).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedRun {
    /// Always `"oversold-run"`, so a file can be recognised before it is trusted.
    pub format: String,
    /// The protocol version the file was written with.
    pub protocol_version: u32,
    /// The run's id when it raced.
    pub run_id: String,
    /// The knobs it ran with.
    pub config: crate::RunConfig,
    /// What its strategy says about itself.
    pub strategy: crate::StrategyAbout,
    /// Every buyer's outcome, in the order they finished.
    pub outcomes: Vec<BuyerOutcome>,
    /// The tally, with the stock read back from the store.
    pub summary: RunSummary,
}

impl SavedRun {
    /// The value of [`SavedRun::format`].
    pub const FORMAT: &'static str = "oversold-run";
}
