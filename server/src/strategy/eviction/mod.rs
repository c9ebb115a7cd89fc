//! The `eviction` strategies: how the buyers reserve when the Redis under them may lose the
//! stock counter to memory pressure. One file per strategy; [`REGISTRY`] lists them.
//!
//! A strategy is one `const` [`EvictionStrategy`]: its self-description (sent in
//! `hello.eviction_strategies`) and its [`Reserve`] script. The runner (`crate::eviction`)
//! owns the Redis, its policy, the page cache that fills it, and the two waves of buyers.
//!
//! | strategy | a missing counter reads as | under `allkeys-lru`/`volatile-lru` | under `noeviction` |
//! | --- | --- | --- | --- |
//! | `lua` | 0 in stock (`reserve.lua`) | "sold out" with units left: `false_sold_out` | `OOM` refusals |
//! | `lua_strict` | an error (`reserve_strict.lua`) | `STOCK_MISSING` refusals | `OOM` refusals |
//!
//! Adding one is one new file in this folder plus one line in [`REGISTRY`].

use oversold_protocol::{StrategyAbout, StrategyInfo};

mod lua;
mod lua_strict;

/// Every `eviction` strategy, in the order the page lists them.
pub static REGISTRY: [&EvictionStrategy; 2] = [&lua::STRATEGY, &lua_strict::STRATEGY];

/// One way to reserve on a Redis that may evict.
pub struct EvictionStrategy {
    /// Every word the page shows about it; `about.scenario` is `eviction`.
    pub about: StrategyAbout,
    /// The script each buyer runs.
    pub reserve: Reserve,
}

/// Which script a buyer runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reserve {
    /// `reserve.lua`: a missing counter is 0 in stock.
    Lenient,
    /// `reserve_strict.lua`: a missing counter is `STOCK_MISSING`.
    Strict,
}

impl EvictionStrategy {
    /// The wire name, e.g. `"lua_strict"`.
    pub fn name(&self) -> &str {
        &self.about.name
    }

    /// The `hello` entry: the run starts its own `redis-server`, so these are always offered
    /// (a server without `redis-server` on PATH fails the run at set-up, saying so).
    pub fn info(&self) -> StrategyInfo {
        StrategyInfo::always_available(self.about.clone())
    }
}
