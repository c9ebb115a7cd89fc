//! The `busy_script` strategies: what the one *slow client* does in the middle of a sale of
//! ordinary `lua` buyers. One file per strategy; [`REGISTRY`] lists them.
//!
//! A strategy is one `const` [`BusyStrategy`]: its self-description (sent in
//! `hello.busy_strategies`) and its [`SlowClient`]: one long job, or the same work in
//! steps. The runner (`crate::busy`) owns the sale, the Redis and the watchdog.
//!
//! | strategy | the slow client | the watchdog | units lost |
//! | --- | --- | --- | --- |
//! | `slow_read` | `busy_read.lua` for 2.5 s, writing nothing | `SCRIPT KILL` | none |
//! | `slow_write` | `busy_write.lua`: writes, then 2.5 s | `UNKILLABLE`, `SHUTDOWN NOSAVE` | everything since the snapshot |
//! | `slow_function` | `FCALL oversold_busy_write`: the same as a Function | `FUNCTION KILL` refused, `SHUTDOWN NOSAVE` | the same |
//! | `short_script` | `busy_read.lua` in 25 ms steps | nothing to do | none |
//!
//! Adding one is one new file in this folder plus one line in [`REGISTRY`].

use oversold_protocol::{StrategyAbout, StrategyInfo};

use crate::store::busy::Job;

mod short_script;
mod slow_function;
mod slow_read;
mod slow_write;

/// Every `busy_script` strategy, in the order the page lists them.
pub static REGISTRY: [&BusyStrategy; 4] = [
    &slow_read::STRATEGY,
    &slow_write::STRATEGY,
    &slow_function::STRATEGY,
    &short_script::STRATEGY,
];

/// One kind of slow client.
pub struct BusyStrategy {
    /// Every word the page shows about it; `about.scenario` is `busy_script`.
    pub about: StrategyAbout,
    /// What it sends.
    pub client: SlowClient,
}

/// What the slow client sends, mid-sale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlowClient {
    /// The whole job as one call: it holds Redis from start to end.
    OneCall(Job),
    /// The same job cut into calls of `step_ms` each, all shorter than the busy threshold:
    /// other clients' commands run between them.
    Steps {
        /// The job each step runs.
        job: Job,
        /// How long one step holds Redis.
        step_ms: u32,
    },
}

impl BusyStrategy {
    /// The wire name, e.g. `"slow_write"`.
    pub fn name(&self) -> &str {
        &self.about.name
    }

    /// The `hello` entry: the run starts its own `redis-server`, so these are always offered
    /// (a server without `redis-server` on PATH fails the run at set-up, saying so).
    pub fn info(&self) -> StrategyInfo {
        StrategyInfo::always_available(self.about.clone())
    }
}
