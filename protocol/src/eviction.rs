//! The `eviction` scenario: a sale on a Redis that runs out of memory.
//!
//! The run starts a Redis of its own with a low `maxmemory` and the eviction policy the
//! request names ([`EvictionPolicy`]). The crowd comes in two waves with a quiet spell
//! between them; in the quiet, another client of the same Redis (a page cache) writes far
//! more than fits. What Redis does then is the policy's:
//! - `allkeys-lru` frees memory by deleting the least recently used keys, whoever owns
//!   them: the stock counter, idle since the first wave, goes first;
//! - `volatile-lru` deletes only keys that carry a TTL, and every key of a run carries one,
//!   so the counter goes the same way;
//! - `noeviction` deletes nothing and refuses every write that would need memory (`OOM`).
//!
//! # Layout
//! - [`EvictionPolicy`], [`EvictionConfig`]: the scenario's one knob.
//! - [`EvictionTally`]: what the memory pressure cost, flat in the run's summary.

use std::fmt;
use std::str::FromStr;

use crate::wire_names::wire_names;

use serde::{Deserialize, Serialize};

/// `arrival_spread_ms` when an `eviction` request leaves it out: the first wave is the
/// crowd's first tenth of it, the second wave the rest, after the quiet spell.
pub const DEFAULT_SPREAD_MS: u32 = 1_000;

/// Redis's `maxmemory-policy` on the run's own server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EvictionPolicy {
    /// Evict any key, least recently used first.
    #[default]
    AllkeysLru,
    /// Evict only keys with a TTL, least recently used first.
    VolatileLru,
    /// Evict nothing: refuse writes with `OOM` once memory is full.
    Noeviction,
}

wire_names! { EvictionPolicy {
    AllkeysLru = "allkeys-lru",
    VolatileLru = "volatile-lru",
    Noeviction = "noeviction",
} }

impl EvictionPolicy {
    /// Every policy, in the order the page and the CLI list them.
    pub const ALL: [EvictionPolicy; 3] = [
        EvictionPolicy::AllkeysLru,
        EvictionPolicy::VolatileLru,
        EvictionPolicy::Noeviction,
    ];

    /// What Redis does under this policy when memory is full, in one sentence (the page's
    /// words for the policy picker).
    pub fn describe(self) -> &'static str {
        match self {
            EvictionPolicy::AllkeysLru => {
                "Full memory deletes any key, least recently used first: the idle stock counter too."
            }
            EvictionPolicy::VolatileLru => {
                "Full memory deletes only keys with a TTL; every run key carries one, so the counter still goes."
            }
            EvictionPolicy::Noeviction => {
                "Full memory deletes nothing: Redis refuses every write that needs memory with OOM."
            }
        }
    }
}

impl fmt::Display for EvictionPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EvictionPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::from_wire_name(s)
            .ok_or_else(|| format!("unknown policy {s:?}: allkeys-lru, volatile-lru or noeviction"))
    }
}

/// The `eviction` scenario's knobs. On the wire: `"policy"` beside the race's knobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvictionConfig {
    /// The run's Redis's `maxmemory-policy`.
    pub policy: EvictionPolicy,
}

/// What an `eviction` run's memory pressure cost. Its fields sit flat in the summary.
///
/// The summary's own fields keep their meaning, with one reading spelled out: when the stock
/// counter was evicted, `final_stock` is 0, which is how `reserve.lua` reads a missing key,
/// and `lost_updates` is negative by the units that vanished with it. `false_sold_out`
/// counts buyers answered "sold out" while the orders left at least their quantity unsold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvictionTally {
    /// The policy the run's Redis had.
    pub policy: EvictionPolicy,
    /// Was the stock counter gone when the run read it back?
    pub stock_key_evicted: bool,
    /// Buyers refused with `STOCK_MISSING`: the script found no counter and said so.
    pub stock_missing_refusals: u32,
    /// Buyers refused with Redis's `OOM` error: memory full, nothing written.
    pub oom_refusals: u32,
    /// Keys Redis evicted during the run (`evicted_keys` from `INFO stats`).
    pub evicted_keys: u64,
    /// Units the orders left unsold: `stock - units_sold`, whatever the counter says.
    pub units_unsold: u64,
    /// The page cache's writes that Redis took.
    pub filler_writes: u32,
    /// The page cache's writes that Redis refused with `OOM`.
    pub filler_refused: u32,
    /// Redis's `maxmemory`, in bytes: its memory after set-up plus the run's headroom.
    pub maxmemory_bytes: u64,
    /// When the page cache started writing, ms after the gate opened.
    pub filler_at_ms: u32,
    /// The quiet spell between the waves, in ms.
    pub lull_ms: u32,
}
