//! What every scenario's run shares: its [`RunReport`], its [`RunError`] (and the wire code
//! each error becomes), who watches it ([`Watchers`]: the [`Event`]s it sends and the
//! [`Control`] requests it takes), and run ids.
//!
//! It sits below the scenarios (`engine`, `cart`, `checkout`) so that each of them and the
//! one door above them (`scenario`) speak the same types without depending on each other.

use oversold_protocol::{
    BuyerOutcome, ErrorCode, ReconcileReport, Reconciliation, RunSummary, Scenario,
};
use tokio::sync::mpsc;

use crate::shelf::ShelfError;
use crate::store::Cause;
use crate::strategy::PrepareError;

/// Why a run could not produce a summary.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The store was unreachable (or refused) before any buyer ran. Nothing was sold.
    #[error("could not set the run up: {0}")]
    Setup(#[source] ShelfError),
    /// The store became unreachable mid-run: the run stopped releasing buyers. The outcomes
    /// of the buyers that did run were delivered; no summary is invented from a lost store.
    #[error(
        "the store was lost mid-run ({why}); {ran} of {buyers} buyers ran before the run stopped"
    )]
    StoreLost {
        /// The first buyer's error that showed it.
        why: String,
        /// Buyers that ran.
        ran: usize,
        /// Buyers planned.
        buyers: u32,
    },
    /// Redis refused the run's commands for what they are (a Redis Cluster's `CROSSSLOT`
    /// for a script whose keys span slots): the message says why and what would fix it.
    #[error("Redis refused the run: {0}")]
    Refused(String),
    /// A scenario's runner was handed another scenario's config. The front doors cannot do
    /// this (they find the strategy in the config's own scenario); a caller in code can.
    #[error("strategy {strategy:?} runs in the {expected} scenario, not in a {got} config")]
    WrongScenario {
        /// The strategy's name.
        strategy: String,
        /// Its scenario.
        expected: Scenario,
        /// The config's.
        got: Scenario,
    },
    /// Buyers ran, but the final stock could not be read back (or was not what it must be).
    #[error("the run's final stock could not be read back: {0}")]
    ReadBack(#[source] ShelfError),
}

/// Everything a finished run produced.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The run's id.
    pub run_id: String,
    /// The tally.
    pub summary: RunSummary,
    /// One entry per buyer that ran, in the order they finished; empty when the caller
    /// asked for the summary only ([`Keep::Summary`]).
    pub outcomes: Vec<BuyerOutcome>,
    /// Requests the buyers' Redis connections really sent (0 for PostgreSQL), counted at the
    /// connection: tests hold the outcomes' `round_trips` to it.
    pub redis_requests: u64,
}

impl RunError {
    /// The wire code for a run that could not finish, chosen by cause: the one place the
    /// front doors learn what kind of failure it was.
    pub fn code(&self) -> ErrorCode {
        match self {
            RunError::Setup(ShelfError::Redis(e) | ShelfError::Prepare(PrepareError::Store(e))) => {
                if e.cause() == Cause::TooManyOpenFiles {
                    ErrorCode::ResourceExhausted
                } else {
                    ErrorCode::RedisUnavailable
                }
            }
            RunError::Setup(ShelfError::Postgres(e)) if e.is_resource_exhausted() => {
                ErrorCode::ResourceExhausted
            }
            RunError::Setup(ShelfError::OutageNotAllowed) => ErrorCode::OutageNotAllowed,
            RunError::Setup(ShelfError::OwnRedis(_)) => ErrorCode::RedisUnavailable,
            RunError::Setup(_) => ErrorCode::StrategyUnavailable,
            RunError::WrongScenario { .. } => ErrorCode::UnknownStrategy,
            RunError::StoreLost { .. } | RunError::Refused(_) | RunError::ReadBack(_) => {
                ErrorCode::RunFailed
            }
        }
    }
}

/// What a run tells whoever watches it, as it happens. Races and cart runs send only
/// outcomes; a checkout also sends its live numbers and the answers to `reconcile`.
#[derive(Debug, Clone)]
pub enum Event {
    /// A buyer's story ended.
    Outcome(BuyerOutcome),
    /// The shelf, reconciled, now.
    Snapshot(Reconciliation),
    /// The answer to a `reconcile`.
    Reconciled(ReconcileReport),
    /// A `reconcile` that could not be done, and why.
    ReconcileFailed(String),
}

impl Event {
    /// The buyer's outcome, when this event is one.
    pub fn outcome(self) -> Option<BuyerOutcome> {
        match self {
            Event::Outcome(o) => Some(o),
            _ => None,
        }
    }
}

/// Where events go. Unbounded, as outcomes are in a race: bounded by the run's size.
pub type EventSink = mpsc::UnboundedSender<Event>;

/// Send `event` to whoever watches, if anyone does. A watcher that went away only means
/// nobody is looking any more; the run goes on.
pub fn tell(events: &Option<EventSink>, event: Event) {
    if let Some(events) = events {
        let _ = events.send(event);
    }
}

/// What a watcher may ask of a running checkout (other scenarios take no requests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Run the correction: available = stock - sold - held.
    Reconcile,
}

/// Who watches a run: where its events go, where requests come from, and what it keeps
/// for the report. Events and requests are optional (the CLI watches nothing). The
/// requests' channel is lent: a comparison hands the same one to each of its races in turn.
#[derive(Default)]
pub struct Watchers<'a> {
    /// Events, as they happen.
    pub events: Option<EventSink>,
    /// Requests, such as `reconcile`.
    pub control: Option<&'a mut mpsc::Receiver<Control>>,
    /// What the report keeps besides the summary.
    pub keep: Keep,
}

/// What a run's report keeps besides its summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Keep {
    /// Every buyer's outcome ([`RunReport::outcomes`]): for a tape, a saved run, a test.
    #[default]
    Outcomes,
    /// The summary only. A race then adds its outcomes up as they come and keeps none (a
    /// million buyers cost megabytes, not gigabytes); events still carry each one. Other
    /// scenarios keep theirs regardless: they are capped at `MAX_BUYERS`.
    Summary,
}

/// `r-` (or another prefix) and 12 hex digits: unique enough per server, and a valid hash tag.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}-{:012x}", rand::random::<u64>() & 0xffff_ffff_ffff)
}
