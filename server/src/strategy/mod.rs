//! The ways a buyer can try to take stock. One file per strategy, all behind [`Strategy`].
//!
//! Adding a strategy is one new file in this folder plus one line in [`registry`].
//! The files repeat small steps on purpose (naive and naive_set both GET, check, write):
//! each one reads top to bottom on its own, which is what a workshop student needs.
//! A strategy decides *how* a buyer talks to Redis; the engine decides *when*
//! (gate, arrival time) and *over which connection*.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use oversold_protocol::{OutcomeResult, StrategyInfo};

use crate::shelf::{Backends, Link, LinkKind};
use crate::store::{Conn, RunKeys};

mod decr_compensate;
mod function;
mod lock;
mod lua;
mod naive;
mod naive_set;
mod postgres;
mod watch;

/// The strategies this server offers, in the order the page lists them.
pub fn registry() -> Vec<Arc<dyn Strategy>> {
    vec![
        Arc::new(naive::Naive),
        Arc::new(naive_set::NaiveSet),
        Arc::new(lua::Lua),
        Arc::new(decr_compensate::DecrCompensate),
        Arc::new(watch::Watch),
        Arc::new(lock::Lock),
        Arc::new(function::Function),
        Arc::new(postgres::Postgres),
    ]
}

/// Find a strategy by its wire name.
pub fn find(strategies: &[Arc<dyn Strategy>], name: &str) -> Option<Arc<dyn Strategy>> {
    strategies.iter().find(|s| s.name() == name).cloned()
}

/// Everything one buyer needs to place its order.
pub struct Order<'a> {
    /// This buyer's app server link, of the strategy's [`Strategy::link_kind`].
    pub link: Link,
    /// The run's id (the PostgreSQL row key).
    pub run_id: &'a str,
    /// The run's Redis keys.
    pub keys: &'a RunKeys,
    /// Units wanted.
    pub qty: u32,
    /// Simulated application work between a read and the write that depends on it.
    pub race_window: Duration,
}

/// What a strategy reports for one buyer; the engine adds timing and identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// How it ended.
    pub result: OutcomeResult,
    /// The stock the strategy read before deciding, if it read one.
    pub observed_stock: Option<i64>,
    /// The stock right after this buyer's write, if it wrote.
    pub stock_after: Option<i64>,
    /// Requests sent to Redis.
    pub round_trips: u32,
    /// Attempts beyond the first.
    pub retries: u32,
    /// Set when `result` is `Error`.
    pub error: Option<String>,
    /// When the app got its read of the stock back (strategies that read, then decide in
    /// the app). The page draws it: with `naive`, every read lands before the first write.
    pub read_at: Option<Instant>,
}

impl Attempt {
    /// A failed attempt after `round_trips` requests; `why` is one short line.
    pub fn failed(why: impl Into<String>, observed_stock: Option<i64>, round_trips: u32) -> Self {
        Attempt {
            result: OutcomeResult::Error,
            observed_stock,
            stock_after: None,
            round_trips,
            retries: 0,
            error: Some(why.into()),
            read_at: None,
        }
    }

    /// Refused for lack of stock.
    pub fn sold_out(observed_stock: Option<i64>, round_trips: u32) -> Self {
        Attempt {
            result: OutcomeResult::SoldOut,
            observed_stock,
            stock_after: None,
            round_trips,
            retries: 0,
            error: None,
            read_at: None,
        }
    }

    /// Units taken.
    pub fn reserved(observed_stock: Option<i64>, stock_after: i64, round_trips: u32) -> Self {
        Attempt {
            result: OutcomeResult::Reserved,
            observed_stock,
            stock_after: Some(stock_after),
            round_trips,
            retries: 0,
            error: None,
            read_at: None,
        }
    }

    /// The same attempt, reporting when its deciding read came back.
    pub fn with_read_at(mut self, read_at: Instant) -> Self {
        self.read_at = Some(read_at);
        self
    }

    /// The same attempt, reporting `retries` extra tries.
    pub fn with_retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }
}

impl Order<'_> {
    /// The shared Redis connection, for [`LinkKind::SharedRedis`] strategies.
    pub fn shared_redis(&self) -> Result<Conn, Attempt> {
        match &self.link {
            Link::Redis(c) => Ok(c.clone()),
            _ => Err(Attempt::failed(
                "internal: strategy got the wrong kind of link",
                None,
                0,
            )),
        }
    }
}

/// One way of buying. Implementations hold no per-run state; anything a run needs
/// travels in [`Order`].
pub trait Strategy: Send + Sync + 'static {
    /// Wire name, e.g. `"naive"`.
    fn name(&self) -> &'static str;
    /// Button label.
    fn label(&self) -> &'static str;
    /// One line on what it does.
    fn description(&self) -> &'static str;
    /// True for the strategies that exist to show the bug.
    fn unsafe_by_design(&self) -> bool {
        false
    }
    /// How buyers reach the shelf (default: a shared, pipelined Redis connection).
    fn link_kind(&self) -> LinkKind {
        LinkKind::SharedRedis
    }
    /// Why this strategy cannot run with these backends, if it cannot.
    fn unavailable_reason(&self, backends: &Backends) -> Option<String> {
        match (self.link_kind(), &backends.postgres) {
            (LinkKind::Postgres, Err(why)) => Some(why.clone()),
            _ => None,
        }
    }
    /// One-off work before the buyers start, on the run's admin Redis connection
    /// (e.g. `FUNCTION LOAD`). Default: nothing.
    fn prepare<'a>(
        &'a self,
        _admin: &'a mut Conn,
    ) -> BoxFuture<'a, Result<(), crate::store::StoreError>> {
        Box::pin(std::future::ready(Ok(())))
    }
    /// Place one order. Must not panic on store errors: report them in the [`Attempt`].
    ///
    /// Boxed so strategies can sit in one `Vec<Arc<dyn Strategy>>`; one allocation per
    /// buyer is noise next to a network round trip.
    fn buy<'a>(&'a self, order: Order<'a>) -> BoxFuture<'a, Attempt>;

    /// The `hello` entry for this strategy.
    fn info(&self, backends: &Backends) -> StrategyInfo {
        let unavailable_reason = self.unavailable_reason(backends);
        StrategyInfo {
            name: self.name().into(),
            label: self.label().into(),
            description: self.description().into(),
            unsafe_by_design: self.unsafe_by_design(),
            available: unavailable_reason.is_none(),
            unavailable_reason,
        }
    }
}
