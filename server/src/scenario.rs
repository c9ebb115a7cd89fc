//! One door to every scenario: the page (`ws`), the command line (`headless`) and the
//! benchmarks find a strategy here, ask it what it needs, and run it here. Neither front door
//! names a registry.
//!
//! A scenario is a runner (`engine` for the race, `checkout`, `cart` for carts and
//! warehouses, `busy` for a sale stalled by a long script, `durability` for a sale crashed
//! and restarted from disk, `eviction` for a sale on a Redis out of memory, `failover` for a
//! sale across a failover) plus a registry of strategies in `strategy/`. Adding a scenario is one folder
//! for its runner and strategies, one arm in [`AnyStrategy`] and one line in [`registry`];
//! the compiler then points at every `match` that must learn it.

use std::fmt;

use oversold_protocol::{RunConfig, Scenario, StrategyAbout, StrategyInfo};
use tokio_util::sync::CancellationToken;

use crate::backends::Backends;
use crate::run::{RunError, RunReport, Watchers};
use crate::store::shelves::Tagging;
use crate::strategy::busy::BusyStrategy;
use crate::strategy::cart::CartStrategy;
use crate::strategy::checkout::{CheckoutStrategy, Expiry};
use crate::strategy::durability::DurabilityStrategy;
use crate::strategy::eviction::EvictionStrategy;
use crate::strategy::failover::FailoverStrategy;
use crate::strategy::{self, Backend, Strategy};
use crate::{busy, cart, checkout, durability, engine, eviction, failover};

/// Every scenario, in the order the page lists them.
pub const SCENARIOS: [Scenario; 8] = [
    Scenario::Race,
    Scenario::Checkout,
    Scenario::Cart,
    Scenario::Warehouses,
    Scenario::BusyScript,
    Scenario::Durability,
    Scenario::Eviction,
    Scenario::Failover,
];

/// A strategy of any scenario, as the front doors see it.
#[derive(Clone, Copy)]
pub enum AnyStrategy {
    /// A `race` strategy.
    Race(&'static Strategy),
    /// A `checkout` strategy.
    Checkout(&'static CheckoutStrategy),
    /// A `cart` or `warehouses` strategy.
    Cart(&'static CartStrategy),
    /// A `busy_script` strategy.
    Busy(&'static BusyStrategy),
    /// A `durability` strategy (a persistence setting).
    Durability(&'static DurabilityStrategy),
    /// An `eviction` strategy.
    Eviction(&'static EvictionStrategy),
    /// A `failover` strategy.
    Failover(&'static FailoverStrategy),
}

/// The strategies of `scenario`, in the order the page lists them: the registry line.
pub fn registry(scenario: Scenario) -> Vec<AnyStrategy> {
    match scenario {
        Scenario::Race => strategy::REGISTRY.map(AnyStrategy::Race).to_vec(),
        Scenario::Checkout => strategy::checkout::REGISTRY
            .map(AnyStrategy::Checkout)
            .to_vec(),
        Scenario::Cart | Scenario::Warehouses => strategy::cart::of(scenario)
            .map(AnyStrategy::Cart)
            .collect(),
        Scenario::BusyScript => strategy::busy::REGISTRY.map(AnyStrategy::Busy).to_vec(),
        Scenario::Durability => strategy::durability::REGISTRY
            .map(AnyStrategy::Durability)
            .to_vec(),
        Scenario::Eviction => strategy::eviction::REGISTRY
            .map(AnyStrategy::Eviction)
            .to_vec(),
        Scenario::Failover => strategy::failover::REGISTRY
            .map(AnyStrategy::Failover)
            .to_vec(),
    }
}

/// Every strategy of every scenario.
pub fn all() -> impl Iterator<Item = AnyStrategy> {
    SCENARIOS.into_iter().flat_map(registry)
}

/// The strategy `name` of `scenario`, or the one error every front door shows.
pub fn find(scenario: Scenario, name: &str) -> Result<AnyStrategy, UnknownStrategy> {
    registry(scenario)
        .into_iter()
        .find(|s| s.name() == name)
        .ok_or_else(|| UnknownStrategy {
            scenario,
            name: name.to_string(),
        })
}

/// A strategy name the scenario does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct UnknownStrategy {
    /// The scenario that was asked.
    pub scenario: Scenario,
    /// The name that was asked for.
    pub name: String,
}

impl fmt::Display for UnknownStrategy {
    /// `unknown checkout strategy "lua" ("lua" is a race strategy: choose the race
    /// scenario); available: naive_checkout, ...`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self { scenario, name } = self;
        let kind = match scenario {
            Scenario::Race => String::new(),
            other => format!("{other} "),
        };
        write!(f, "unknown {kind}strategy {name:?}")?;
        let elsewhere = SCENARIOS
            .into_iter()
            .filter(|s| s != scenario)
            .find(|&s| registry(s).iter().any(|st| st.name() == name));
        if let Some(other) = elsewhere {
            write!(
                f,
                " ({name:?} is a {other} strategy: choose the {other} scenario)"
            )?;
        }
        let names: Vec<&str> = registry(*scenario).iter().map(|s| s.name()).collect();
        write!(f, "; available: {}", names.join(", "))
    }
}

/// What a comparison races here, and what it leaves out (with why).
pub struct Lineup {
    /// The strategies to race, in registry order.
    pub races: Vec<AnyStrategy>,
    /// `(name, why)` for each strategy left out.
    pub skipped: Vec<(String, String)>,
}

/// The comparison of `scenario` on these stores: every strategy that can run here. Left
/// out: a strategy whose store is missing (PostgreSQL), and on a Redis Cluster the untagged
/// cart script, which the cluster refuses by design (its lesson is a run of its own, not a
/// hole in the scoreboard).
pub fn lineup(scenario: Scenario, backends: &Backends) -> Lineup {
    let mut lineup = Lineup {
        races: Vec::new(),
        skipped: Vec::new(),
    };
    for strategy in registry(scenario) {
        match strategy.left_out_of_compare(backends) {
            Some(why) => lineup.skipped.push((strategy.name().to_string(), why)),
            None => lineup.races.push(strategy),
        }
    }
    lineup
}

impl AnyStrategy {
    /// The wire name.
    pub fn name(&self) -> &'static str {
        &self.about().name
    }

    /// Every word the page shows about it.
    pub fn about(&self) -> &'static StrategyAbout {
        match self {
            AnyStrategy::Race(s) => &s.about,
            AnyStrategy::Checkout(s) => &s.about,
            AnyStrategy::Cart(s) => &s.about,
            AnyStrategy::Busy(s) => &s.about,
            AnyStrategy::Durability(s) => &s.about,
            AnyStrategy::Eviction(s) => &s.about,
            AnyStrategy::Failover(s) => &s.about,
        }
    }

    /// Its `hello` entry.
    pub fn info(&self, backends: &Backends) -> StrategyInfo {
        match self {
            AnyStrategy::Race(s) => s.info(backends),
            AnyStrategy::Checkout(s) => s.info(),
            AnyStrategy::Cart(s) => s.info(),
            AnyStrategy::Busy(s) => s.info(),
            AnyStrategy::Durability(s) => s.info(),
            AnyStrategy::Eviction(s) => s.info(),
            AnyStrategy::Failover(s) => s.info(),
        }
    }

    /// Why it cannot run with these stores, if it cannot.
    pub fn unavailable_reason(&self, backends: &Backends) -> Option<String> {
        match self {
            AnyStrategy::Race(s) => s.unavailable_reason(backends),
            AnyStrategy::Checkout(_)
            | AnyStrategy::Cart(_)
            | AnyStrategy::Busy(_)
            | AnyStrategy::Durability(_)
            | AnyStrategy::Eviction(_)
            | AnyStrategy::Failover(_) => None,
        }
    }

    /// True when its buyers talk to Redis (so a Redis outage refuses it).
    pub fn uses_redis(&self) -> bool {
        match self {
            AnyStrategy::Race(s) => s.uses_redis(),
            AnyStrategy::Checkout(_)
            | AnyStrategy::Cart(_)
            | AnyStrategy::Busy(_)
            | AnyStrategy::Durability(_)
            | AnyStrategy::Eviction(_)
            | AnyStrategy::Failover(_) => true,
        }
    }

    fn left_out_of_compare(&self, backends: &Backends) -> Option<String> {
        if let Some(why) = self.unavailable_reason(backends) {
            return Some(why);
        }
        match self {
            AnyStrategy::Cart(s)
                if backends.redis.is_cluster() && s.tagging == Tagging::Untagged =>
            {
                Some("a Redis Cluster refuses it with CROSSSLOT (run it alone to see)".into())
            }
            _ => None,
        }
    }

    /// PostgreSQL connections a run of it holds: a `postgres` race one per app server and
    /// one for its admin; a checkout one for its ledger when the ledger is PostgreSQL.
    pub fn postgres_connections(&self, backends: &Backends, app_servers: u32) -> usize {
        match self {
            AnyStrategy::Race(s) if matches!(s.backend, Backend::Postgres(_)) => {
                app_servers as usize + 1
            }
            AnyStrategy::Race(_)
            | AnyStrategy::Cart(_)
            | AnyStrategy::Busy(_)
            | AnyStrategy::Durability(_)
            | AnyStrategy::Eviction(_)
            | AnyStrategy::Failover(_) => 0,
            AnyStrategy::Checkout(_) => usize::from(backends.postgres.is_ok()),
        }
    }

    /// Connections (open files) a run opens besides its app servers' and its admin's:
    /// `redlock`'s to its lock masters; a checkout's reaper (or listener, with its subscriber
    /// and its own `redis-server`), and its ledger's PostgreSQL connection when it has one; a busy
    /// script's watchdog, slow client and read-back, and its own `redis-server`'s pipes; a
    /// failover's second fleet (on the promoted replica), its two admin connections, its
    /// read-back and its two `redis-server`s.
    pub fn extra_connections(&self, backends: &Backends, app_servers: u32) -> u32 {
        match self {
            // redlock's connections to its lock masters, and the masters themselves.
            AnyStrategy::Race(s) => s.extra_connections(app_servers),
            AnyStrategy::Cart(_) => 0,
            AnyStrategy::Busy(_) => 4,
            // The admin's, the restored read, the read-back, and the own redis-server's pipes.
            AnyStrategy::Durability(_) => 4,
            // The page cache's connection, the read-back, and the run's `redis-server`'s pipes.
            AnyStrategy::Eviction(_) => 3,
            // The promoted replica's fleet is opened while the first one is still held.
            AnyStrategy::Failover(_) => app_servers + 6,
            // `holds_notify`'s listener has a subscriber besides its connection, and its own
            // `redis-server`'s pipes.
            AnyStrategy::Checkout(s) => {
                let listens = s.buyer.expiry() == Expiry::Notifications && s.buyer.keeps_holds();
                1 + u32::from(backends.postgres.is_ok()) + if listens { 2 } else { 0 }
            }
        }
    }

    /// True for a checkout (its runs answer `reconcile`).
    pub fn takes_requests(&self) -> bool {
        matches!(self, AnyStrategy::Checkout(_))
    }

    /// Run it once, to its end or cancellation. `config` must be validated and be of this
    /// strategy's scenario. Race and cart runs send only outcomes to `watchers` and take no
    /// requests.
    pub async fn run(
        &self,
        backends: &Backends,
        config: &RunConfig,
        run_id: &str,
        watchers: Watchers<'_>,
        cancel: CancellationToken,
    ) -> Result<RunReport, RunError> {
        match *self {
            AnyStrategy::Race(s) => {
                let watched = (watchers.events, watchers.keep);
                engine::run_keeping(backends, s, config, run_id, watched, cancel).await
            }
            AnyStrategy::Checkout(s) => {
                checkout::run(backends, s, config, run_id, watchers, cancel).await
            }
            AnyStrategy::Cart(s) => {
                cart::run(backends, s, config, run_id, watchers.events, cancel).await
            }
            AnyStrategy::Busy(s) => {
                busy::run(backends, s, config, run_id, watchers.events, cancel).await
            }
            AnyStrategy::Durability(s) => {
                durability::run(backends, s, config, run_id, watchers.events, cancel).await
            }
            AnyStrategy::Eviction(s) => {
                eviction::run(backends, s, config, run_id, watchers.events, cancel).await
            }
            AnyStrategy::Failover(s) => {
                failover::run(backends, s, config, run_id, watchers.events, cancel).await
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_strategy_is_found_in_its_own_scenario_only() {
        for scenario in SCENARIOS {
            for s in registry(scenario) {
                assert_eq!(find(scenario, s.name()).unwrap().name(), s.name());
                assert_eq!(s.about().scenario, scenario, "{}", s.name());
            }
        }
        assert_eq!(all().count(), 13 + 7 + 8 + 4 + 4 + 2 + 3);
    }

    #[test]
    fn an_unknown_name_gets_one_hint_text_naming_its_real_scenario() {
        let e = find(Scenario::Checkout, "lua").err().unwrap();
        assert!(
            e.to_string().starts_with(
                "unknown checkout strategy \"lua\" (\"lua\" is a race strategy: choose the race \
                 scenario); available: naive_checkout, "
            ),
            "{e}"
        );
        let e = find(Scenario::Race, "holds").err().unwrap();
        assert!(
            e.to_string().starts_with(
                "unknown strategy \"holds\" (\"holds\" is a checkout strategy: choose the \
                 checkout scenario); available: naive, naive_set, lua,"
            ),
            "{e}"
        );
        let e = find(Scenario::Warehouses, "nope").err().unwrap();
        assert_eq!(
            e.to_string(),
            "unknown warehouses strategy \"nope\"; available: naive_warehouse, warehouse_script"
        );
    }
}
