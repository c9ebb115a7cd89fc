//! The `failover` strategies: what guards a sale of `reserve.lua` buyers against a primary
//! that dies before its replica has caught up. One file per strategy; [`REGISTRY`] lists
//! them.
//!
//! A strategy is one `const` [`FailoverStrategy`]: its self-description (sent in
//! `hello.failover_strategies`) and its [`Guard`]. The runner (`crate::failover`) owns the
//! primary, the replica, the failover and the sale.
//!
//! | strategy | the guard | acknowledged units lost | the cost |
//! | --- | --- | --- | --- |
//! | `lua` | none: the primary's answer is the confirmation | yes, and sold again | nothing |
//! | `lua_wait` | `WAIT 1 <timeout>` after each reservation | none; a timed-out `WAIT` is in doubt | a replica's round trip per order |
//! | `min_replicas` | `min-replicas-to-write 1` on the primary | none | writes refused while the replica lags |
//!
//! Adding one is one new file in this folder plus one line in [`REGISTRY`].

use oversold_protocol::{ReplicaGuard, StrategyAbout, StrategyInfo};

mod lua;
mod lua_wait;
mod min_replicas;

/// Every `failover` strategy, in the order the page lists them.
pub static REGISTRY: [&FailoverStrategy; 3] =
    [&lua::STRATEGY, &lua_wait::STRATEGY, &min_replicas::STRATEGY];

/// One way to guard acknowledged orders against a failover.
pub struct FailoverStrategy {
    /// Every word the page shows about it; `about.scenario` is `failover`.
    pub about: StrategyAbout,
    /// What the buyers and the primary do about the replica.
    pub guard: Guard,
}

/// What stands between an acknowledged order and a failover that loses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// Nothing: a buyer is confirmed by the primary's answer.
    None,
    /// After a reservation, `WAIT 1 timeout_ms` on the same connection: confirmed when a
    /// replica has it, in doubt when the wait ran out.
    Wait {
        /// `WAIT`'s timeout.
        timeout_ms: u32,
    },
    /// The primary runs with `min-replicas-to-write 1` and `min-replicas-max-lag
    /// max_lag_s`: no replica keeping up, no writes.
    MinReplicas {
        /// Seconds since a replica's last acknowledgement before it no longer counts.
        max_lag_s: u32,
    },
}

impl Guard {
    /// The protocol's name for it.
    pub fn kind(self) -> ReplicaGuard {
        match self {
            Guard::None => ReplicaGuard::None,
            Guard::Wait { .. } => ReplicaGuard::Wait,
            Guard::MinReplicas { .. } => ReplicaGuard::MinReplicas,
        }
    }
}

impl FailoverStrategy {
    /// The wire name, e.g. `"lua_wait"`.
    pub fn name(&self) -> &str {
        &self.about.name
    }

    /// The `hello` entry: the run starts its own primary and replica, so these are always
    /// offered (a server without `redis-server` on PATH fails the run at set-up, saying so).
    pub fn info(&self) -> StrategyInfo {
        StrategyInfo::always_available(self.about.clone())
    }
}
