//! The `durability` scenario: what a crash takes back from a sale, per persistence setting.
//!
//! A sale of ordinary `lua` buyers runs on a `redis-server` the server started for the run
//! alone, configured with one persistence setting (the strategy says which). Mid-sale, at a
//! moment drawn from the seed, the server kills that process with `SIGKILL` (no goodbye, no
//! final save) and starts it again from its directory. Whatever the restarted Redis loaded
//! is all it knows: an order acknowledged before the crash whose write did not reach the
//! disk is *acknowledged and lost*, and the units come back on sale.
//!
//! What a `kill -9` can lose, by setting:
//! - `none`: everything since the start (there is no file to load).
//! - `rdb`: everything since the last snapshot.
//! - `aof_everysec` and `aof_always`: nothing. Redis writes each command to the AOF before it
//!   replies, and a killed process's writes are already in the kernel's page cache. What
//!   `everysec` risks (up to a second of writes not yet `fsync`ed) is lost only when the
//!   machine itself stops: a power cut, a kernel panic. A `kill -9` does not produce that,
//!   and this scenario does not pretend to.
//!
//! Each setting's cost is measured in the same run: a short closed-loop burst of reserves
//! on a counter of its own, before the sale.
//!
//! # Layout
//! - [`Persistence`]: the four settings.
//! - [`DurabilityTally`]: the crash, the restore, what was lost and the burst's throughput,
//!   flat in the run's summary.

use serde::{Deserialize, Serialize};

use crate::wire_names::wire_names;

/// `arrival_spread_ms` when a `durability` request leaves it out: buyers keep arriving
/// before and after the crash.
pub const DEFAULT_SPREAD_MS: u32 = 2_000;
/// `stock` when a `durability` request leaves it out: with the default 50 buyers of one
/// unit, the sale has not sold out when the crash comes (a sold-out shop writes nothing,
/// so it would have nothing to lose).
pub const DEFAULT_STOCK: u32 = 40;

/// How the run's Redis keeps its data on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Persistence {
    /// No snapshot, no append-only file: a restart comes back empty.
    None,
    /// Snapshots only: one at set-up, one mid-sale (`BGSAVE`); a restart loads the last.
    Rdb,
    /// Append-only file, `fsync`ed once a second.
    AofEverysec,
    /// Append-only file, `fsync`ed before each reply.
    AofAlways,
}

wire_names! { Persistence {
    None = "none",
    Rdb = "rdb",
    AofEverysec = "aof_everysec",
    AofAlways = "aof_always",
} }

/// What a `durability` run's crash cost, and what its persistence costs. Its fields sit flat
/// in the summary.
///
/// The summary's own fields keep their meaning: `units_sold` counts every acknowledged
/// order, before the crash and after; `final_stock` is the counter read back from the
/// restarted Redis at the end (a stock key the restart did not bring back reads 0, as
/// `reserve.lua` reads it). Units lost in the crash are sold again if buyers still come:
/// that is how a lost acknowledgement becomes an oversell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DurabilityTally {
    /// The run's persistence setting.
    pub persistence: Persistence,
    /// When the `SIGKILL` was sent, ms after the gate opened (drawn from the seed).
    pub crash_at_ms: u32,
    /// `rdb` only: when the mid-sale snapshot (`BGSAVE`) had been written, ms after the gate
    /// opened.
    #[serde(default)]
    pub snapshot_at_ms: Option<u32>,
    /// From the `SIGKILL` until the restarted Redis answered and the buyers had new
    /// connections, in ms.
    pub down_ms: u64,
    /// Orders acknowledged (`reserved`) before the crash.
    pub acknowledged_before_crash: u32,
    /// The stock counter as the restarted Redis loaded it; `None` when the key did not come
    /// back at all.
    pub restored_stock: Option<i64>,
    /// Orders acknowledged before the crash that the restarted Redis does not have: each one's
    /// reply said the counter was left at a value below the one Redis loaded. (Persistence
    /// keeps a prefix of what Redis ran, and a reserve's `after` falls with every sale.)
    pub acknowledged_lost: u32,
    /// Units across those orders.
    pub units_lost: u64,
    /// Reserves a second in the closed-loop burst before the sale, on this setting.
    pub burst_ops_per_s: u64,
    /// The burst's 99th-percentile reserve latency, in µs.
    pub burst_p99_us: u64,
    /// How long the burst lasted, in ms, and over how many connections.
    pub burst_ms: u32,
    /// Connections in the burst (one per app server).
    pub burst_connections: u32,
}
