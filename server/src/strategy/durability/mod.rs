//! The `durability` strategies: one per persistence setting of the run's own Redis. Every
//! one sells with the same atomic `reserve.lua`; they differ only in what Redis writes to
//! disk, so a comparison shows, side by side on one seed, what a `kill -9` mid-sale takes
//! back and what each setting costs in throughput.
//!
//! The setting is the strategy (not a knob) for that reason: `compare` races every strategy
//! of a scenario, and the four settings are exactly the thing to put side by side.
//!
//! | strategy | on disk | lost to `kill -9` |
//! | --- | --- | --- |
//! | `none` | nothing | every sale since the start |
//! | `rdb` | a snapshot at set-up and one (`BGSAVE`) mid-sale | every sale since the last snapshot |
//! | `aof_everysec` | every write appended, `fsync` once a second | nothing (a power cut could lose up to a second) |
//! | `aof_always` | every write appended and `fsync`ed before the reply | nothing |
//!
//! Adding one is one new file in this folder plus one line in [`REGISTRY`].

use oversold_protocol::{Persistence, StrategyAbout, StrategyInfo};

mod aof_always;
mod aof_everysec;
mod none;
mod rdb;

/// Every `durability` strategy, in the order the page lists them.
pub static REGISTRY: [&DurabilityStrategy; 4] = [
    &none::STRATEGY,
    &rdb::STRATEGY,
    &aof_everysec::STRATEGY,
    &aof_always::STRATEGY,
];

/// One persistence setting.
pub struct DurabilityStrategy {
    /// Every word the page shows about it; `about.scenario` is `durability`.
    pub about: StrategyAbout,
    /// What the run's Redis writes to disk.
    pub persistence: Persistence,
}

impl DurabilityStrategy {
    /// The wire name, e.g. `"aof_always"`.
    pub fn name(&self) -> &str {
        &self.about.name
    }

    /// The `hello` entry: the run starts its own `redis-server`, so these are always offered
    /// (a server without `redis-server` on PATH fails the run at set-up, saying so).
    pub fn info(&self) -> StrategyInfo {
        StrategyInfo::always_available(self.about.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_strategy_is_named_after_its_setting() {
        for s in REGISTRY {
            assert_eq!(s.name(), s.persistence.as_str());
        }
    }
}
