//! The `failover` scenario: the script is atomic, the failover is not.
//!
//! A sale of `reserve.lua` buyers runs on a primary the server started for the run, with one
//! replica of its own. Replication is asynchronous: the primary answers a buyer before its
//! replica has the write. Mid-sale the replica falls behind (its process is stopped and the
//! primary drops its link), the primary is killed, and the replica is promoted; the sale goes
//! on against it. What the old primary acknowledged after the replica fell behind is not on
//! the new primary: those units go back on the shelf and are sold again.
//!
//! The strategy says what guards a sale against that ([`ReplicaGuard`]): nothing, `WAIT`
//! after each reservation (an order is confirmed only once a replica has it), or
//! `min-replicas-to-write` (the primary refuses writes while no replica keeps up).
//!
//! # Layout
//! - [`FailoverTally`]: what the failover cost, flat in the run's summary.
//! - [`ReplicaGuard`]: how a strategy makes sure an acknowledged order survives.

use serde::{Deserialize, Serialize};

use crate::wire_names::wire_names;

/// `arrival_spread_ms` when a `failover` request leaves it out: buyers arrive before the
/// replica falls behind, while it lags, and after the promotion.
pub const DEFAULT_SPREAD_MS: u32 = 2_000;

/// What stands between an acknowledged order and a failover that loses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplicaGuard {
    /// Nothing: the primary's answer is the confirmation.
    None,
    /// `WAIT 1 <timeout>` after each reservation: confirmed once a replica has it; a `WAIT`
    /// that times out leaves the order in doubt.
    Wait,
    /// `min-replicas-to-write 1` on the primary: with no replica keeping up, it refuses every
    /// write (`NOREPLICAS`), so the sale stops instead of taking orders it could lose.
    MinReplicas,
}

wire_names! { ReplicaGuard {
    None = "none",
    Wait = "wait",
    MinReplicas = "min_replicas",
} }

/// What a `failover` run's failover cost. Its fields sit flat in the summary.
///
/// The summary's own fields keep their meaning: `units_sold` counts every confirmed order,
/// on the old primary and on the promoted replica; `final_stock` is the promoted replica's
/// counter at the end; `in_doubt_units` are orders nobody can confirm (a `WAIT` that timed
/// out, an answer lost with the primary). A confirmed unit sold twice makes `units_sold`
/// exceed the stock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailoverTally {
    /// Confirmed units the promoted replica does not have: the old primary acknowledged
    /// them after the replica fell behind, then died.
    pub acknowledged_lost: u64,
    /// The confirmed orders those units belong to.
    pub acknowledged_lost_orders: u32,
    /// Units confirmed to two buyers: every confirmed unit past the stock. The lost units
    /// went back on the promoted replica's shelf and were sold again.
    pub sold_twice: u64,
    /// Reservations the primary refused because no replica kept up (`NOREPLICAS`): nothing
    /// was taken for them.
    pub refused_writes: u32,
    /// Reservations taken on the primary whose `WAIT` saw no replica in time: in doubt, not
    /// confirmed.
    pub wait_timed_out: u32,
    /// The old primary's counter just before it was killed.
    pub primary_stock_at_kill: i64,
    /// The replica's counter when it was promoted: what the sale went on with.
    pub replica_stock_at_promotion: i64,
    /// When the replica fell behind (its process stopped, its link dropped), ms after the
    /// gate opened.
    pub replica_stopped_at_ms: u32,
    /// When the primary was killed, ms after the gate opened.
    pub primary_killed_at_ms: u32,
    /// From the kill until the promoted replica took orders: the sale's pause, in ms.
    pub failover_ms: u64,
    /// The guard the strategy runs with.
    pub guard: ReplicaGuard,
    /// `WAIT`'s timeout in ms (0 without `WAIT`).
    pub wait_timeout_ms: u32,
    /// `min-replicas-max-lag` in seconds (0 without `min-replicas-to-write`).
    pub min_replicas_max_lag_s: u32,
    /// Confirmed orders' latency, median: what each fix costs an order that goes through.
    pub confirm_p50_us: u64,
    /// Confirmed orders' latency, 99th percentile.
    pub confirm_p99_us: u64,
}
