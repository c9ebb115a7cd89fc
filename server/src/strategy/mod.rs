//! The ways a buyer can try to take stock. One file per strategy; [`REGISTRY`] lists them.
//!
//! A strategy is one `const` [`Strategy`]: its self-description ([`StrategyAbout`]: every word
//! the page shows about it, sent in `hello`) and its [`Backend`]: which kind of connection
//! its buyers need, with a buy function typed for exactly that connection. The engine opens
//! the right connections by matching on the backend once, so a strategy can never be handed
//! the wrong kind of link.
//!
//! Adding a strategy is one new file in this folder plus one line in [`REGISTRY`]. The
//! checkout scenario's strategies live in [`checkout`], with their own registry and the same
//! rule.
//! The files repeat small steps on purpose (naive and naive_set both GET, check, write):
//! each one reads top to bottom on its own, which is what a workshop student needs.
//! A strategy decides *how* a buyer talks to the store; the engine decides *when* (gate,
//! arrival time) and *over which connection*.

use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use oversold_protocol::{OutcomeResult, StrategyAbout, StrategyInfo};
use tokio::sync::Mutex;

use crate::backends::{Backends, LOCK_MASTERS};
use crate::pg::{PgConn, PgError, StockRow};
use crate::store::{RedisConn, RunKeys, StockLayout, StoreError};

pub mod busy;
pub mod cart;
pub mod checkout;
mod decr_compensate;
pub mod durability;
pub mod eviction;
pub mod failover;
mod fenced_lock;
mod function;
mod lock;
mod lua;
mod naive;
mod naive_set;
mod postgres;
mod postgres_naive;
mod redlock;
mod sharded;
mod sharded_sum;
mod watch;

/// Every strategy this server offers, in the order the page lists them.
pub static REGISTRY: [&Strategy; 13] = [
    &naive::STRATEGY,
    &naive_set::STRATEGY,
    &lua::STRATEGY,
    &decr_compensate::STRATEGY,
    &watch::STRATEGY,
    &lock::STRATEGY,
    &redlock::STRATEGY,
    &fenced_lock::STRATEGY,
    &function::STRATEGY,
    &sharded::STRATEGY,
    &sharded_sum::STRATEGY,
    &postgres::STRATEGY,
    &postgres_naive::STRATEGY,
];

/// Find a strategy by its wire name.
pub fn find(name: &str) -> Option<&'static Strategy> {
    REGISTRY.iter().copied().find(|s| s.name() == name)
}

/// One way of buying: what it says about itself, and how its buyers reach the stock.
pub struct Strategy {
    /// Every word the page shows about it.
    pub about: StrategyAbout,
    /// Its buyers' kind of connection, and its buy function for that kind.
    pub backend: Backend,
}

/// Which connections a strategy's buyers need, each with a buy function typed for it.
#[derive(Clone, Copy)]
pub enum Backend {
    /// A multiplexed Redis connection per app server, shared by every buyer on it: requests
    /// from many buyers are pipelined. Right for single commands and scripts.
    SharedRedis(&'static dyn RedisBuyer),
    /// A Redis connection per app server that one buyer holds at a time. `WATCH` state
    /// belongs to a connection, so two buyers' transactions must never interleave on one.
    ExclusiveRedis(&'static dyn ExclusiveRedisBuyer),
    /// A PostgreSQL connection per app server, one buyer at a time (a transaction owns it).
    Postgres(&'static dyn PostgresBuyer),
    /// [`Backend::ExclusiveRedis`], plus the app server's connections to each master of the
    /// run's lock service (`redlock`): a [`QuorumSeat`] that one buyer holds at a time.
    QuorumRedis(&'static dyn QuorumRedisBuyer),
}

impl Strategy {
    /// The wire name, e.g. `"naive"`.
    pub fn name(&self) -> &str {
        &self.about.name
    }

    /// True when its buyers talk to Redis (so a Redis outage stops it).
    pub fn uses_redis(&self) -> bool {
        !self.uses_postgres()
    }

    /// True when its buyers buy in PostgreSQL (so a command running it needs PostgreSQL).
    pub fn uses_postgres(&self) -> bool {
        matches!(self.backend, Backend::Postgres(_))
    }

    /// Why this strategy cannot run with these stores, if it cannot.
    pub fn unavailable_reason(&self, backends: &Backends) -> Option<String> {
        match self.backend {
            Backend::Postgres(_) => backends.postgres.as_ref().err().cloned(),
            Backend::QuorumRedis(_) => backends.lock_masters.unavailable_reason(),
            Backend::SharedRedis(_) | Backend::ExclusiveRedis(_) => None,
        }
    }

    /// Why step-through mode (one command per click, on one Redis) cannot step it, if it
    /// cannot.
    pub fn step_refusal(&self) -> Option<String> {
        let label = &self.about.short_label;
        match self.backend {
            Backend::Postgres(_) => Some(format!(
                "{label} runs in PostgreSQL; step-through steps Redis commands"
            )),
            Backend::QuorumRedis(_) => Some(format!(
                "{label} asks {LOCK_MASTERS} lock masters at once and counts a vote only if it \
                 comes within {} ms, so a click cannot hold one command back; race it instead",
                QUORUM_VOTE_TIMEOUT.as_millis()
            )),
            Backend::SharedRedis(_) | Backend::ExclusiveRedis(_) => None,
        }
    }

    /// Why `bench --pipeline` cannot send its orders several to a request, if it cannot.
    pub fn pipeline_refusal(&self) -> Option<String> {
        match self.backend {
            Backend::SharedRedis(s) if s.batch().is_some() => None,
            _ => Some(format!(
                "{} cannot be pipelined: an order of it is not one command (it waits for a reply \
                 before its next command, or holds a lock); pipeline lua, or bench it with --pipeline 1",
                self.about.name
            )),
        }
    }

    /// Connections (open files) a run of it opens besides its app servers' and its admin's:
    /// for `redlock`, each app server's connection to each lock master, and the lock
    /// masters' own `redis-server`s.
    pub fn extra_connections(&self, app_servers: u32) -> u32 {
        match self.backend {
            Backend::QuorumRedis(_) => (app_servers + 1) * LOCK_MASTERS as u32,
            Backend::SharedRedis(_) | Backend::ExclusiveRedis(_) | Backend::Postgres(_) => 0,
        }
    }

    /// The `hello` entry for this strategy.
    pub fn info(&self, backends: &Backends) -> StrategyInfo {
        let unavailable_reason = self.unavailable_reason(backends);
        StrategyInfo {
            about: self.about.clone(),
            available: unavailable_reason.is_none(),
            unavailable_reason,
            step_refusal: self.step_refusal(),
        }
    }
}

/// Why a strategy's one-off preparation failed.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// Redis could not be reached, or refused a command.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Redis answered, but the strategy cannot run on it (say, a foreign Function library).
    #[error("{0}")]
    Refused(String),
}

/// A strategy whose buyers share their app server's pipelined Redis connection.
pub trait RedisBuyer: Sync {
    /// How the run's stock is kept (default: one counter).
    fn layout(&self) -> StockLayout {
        StockLayout::Counter
    }
    /// One-off work before the buyers start, on the run's admin connection (e.g. loading a
    /// Function library). Default: nothing.
    fn prepare<'a>(&'a self, _admin: &'a mut RedisConn) -> BoxFuture<'a, Result<(), PrepareError>> {
        Box::pin(std::future::ready(Ok(())))
    }
    /// Place one order. Must not panic on store errors: report them in the [`Attempt`].
    ///
    /// Boxed so strategies can be `&'static dyn` trait objects in one registry; one
    /// allocation per buyer is noise next to a network round trip.
    fn buy<'a>(&'a self, conn: RedisConn, order: Order<'a, RunKeys>) -> BoxFuture<'a, Attempt>;
    /// The same orders sent `n` at a time in one pipeline, if an order is one command that
    /// needs no reply before it is sent (`oversold bench --pipeline`). Default: `None`, for a
    /// strategy that reads and then decides: its write cannot leave before its read returns.
    fn batch(&self) -> Option<&dyn BatchBuyer> {
        None
    }
}

/// A [`RedisBuyer`] whose order is one command, so `n` orders can share one pipeline.
pub trait BatchBuyer: Sync {
    /// Place `n` identical orders as one pipeline; one [`Attempt`] per order, in order.
    fn buy_batch<'a>(
        &'a self,
        conn: RedisConn,
        order: Order<'a, RunKeys>,
        n: usize,
    ) -> BoxFuture<'a, Vec<Attempt>>;
}

/// A strategy whose buyers each hold their app server's Redis connection for an attempt.
pub trait ExclusiveRedisBuyer: Sync {
    /// Place one order; lock `conn` for as long as the connection's state is yours.
    fn buy<'a>(
        &'a self,
        conn: &'a Mutex<RedisConn>,
        order: Order<'a, RunKeys>,
    ) -> BoxFuture<'a, Attempt>;
}

/// A strategy whose buyers take a lock on a majority of the run's lock masters, then buy
/// on the stock's Redis (`redlock`).
pub trait QuorumRedisBuyer: Sync {
    /// Place one order; lock `seat` for as long as its connections are yours.
    fn buy<'a>(
        &'a self,
        seat: &'a Mutex<QuorumSeat>,
        order: Order<'a, RunKeys>,
    ) -> BoxFuture<'a, Attempt>;
}

/// One app server's connections for a quorum lock: to the stock's Redis, and to each lock
/// master (in master order), each of those waiting at most [`QUORUM_VOTE_TIMEOUT`] for an
/// answer.
pub struct QuorumSeat {
    /// The app server's connection to the stock.
    pub stock: RedisConn,
    /// Its connection to each lock master.
    pub masters: Vec<RedisConn>,
}

/// How long a lock master's answer may take before it counts as no vote: far below the
/// lock's lease, far above a loopback round trip on a busy machine.
pub const QUORUM_VOTE_TIMEOUT: Duration = redlock::VOTE_TIMEOUT;

/// A strategy whose buyers run PostgreSQL transactions on their app server's connection.
pub trait PostgresBuyer: Sync {
    /// Place one order; lock `conn` for the whole transaction.
    fn buy<'a>(
        &'a self,
        conn: &'a Mutex<PgConn>,
        order: Order<'a, StockRow>,
    ) -> BoxFuture<'a, Attempt>;
}

/// How long a person stepping by hand may pause between clicks: a step session idle this
/// long is closed, and the timers that bound a by-hand buyer (a lock's lease and its wait)
/// stretch to it (see [`Order::by_hand`]).
pub const BY_HAND_IDLE: Duration = Duration::from_secs(10 * 60);

/// Everything one buyer needs to place its order, besides its connection.
pub struct Order<'a, Shelf> {
    /// Where the run's stock is: its Redis keys, or its PostgreSQL row.
    pub shelf: &'a Shelf,
    /// Units wanted.
    pub qty: u32,
    /// Simulated application work between a read and the write that depends on it.
    pub race_window: Duration,
    /// Stepped by hand (step-through mode): a person takes seconds between clicks, so the
    /// timers that bound a buyer (the lock's lease and its wait) stretch to the step session's
    /// idle limit instead of racing the person.
    pub by_hand: bool,
    /// A seeded random number of this buyer's own (same seed, same tickets), for strategies
    /// that pick something at random, like which bucket to try first.
    pub ticket: u64,
}

/// What a strategy reports for one buyer; the engine adds timing and identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// How it ended.
    pub result: OutcomeResult,
    /// The stock the strategy read (or its atomic command saw) before deciding, if any.
    pub observed_stock: Option<i64>,
    /// The stock right after this buyer's write, if it wrote.
    pub stock_after: Option<i64>,
    /// Requests sent to the store (a script call or a MULTI/EXEC pipeline counts as one).
    pub round_trips: u32,
    /// Attempts beyond the first.
    pub retries: u32,
    /// Why, when `result` is not `reserved` or `sold_out`.
    pub error: Option<String>,
    /// When the app got its read of the stock back (strategies that read, then decide in
    /// the app). The page draws it: with `naive`, every read lands before the first write.
    pub read_at: Option<Instant>,
    /// True when the failure means the store is unreachable: the engine stops the run.
    pub outage: bool,
    /// True when the buyer's lock lease ran out while it was still inside its critical
    /// section: giving the lock back found it gone or someone else's, so another buyer may
    /// have been inside at the same time. Lock strategies only; logged, and read by tests.
    pub lease_lost: bool,
    /// Which stock bucket answered `observed_stock` and `stock_after`, for strategies that
    /// split the stock (`sharded`); the tape needs it to put each reply on its counter.
    pub bucket: Option<u32>,
}

impl Attempt {
    fn new(result: OutcomeResult, observed_stock: Option<i64>, round_trips: u32) -> Self {
        Attempt {
            result,
            observed_stock,
            stock_after: None,
            round_trips,
            retries: 0,
            error: None,
            read_at: None,
            outage: false,
            lease_lost: false,
            bucket: None,
        }
    }

    /// Units taken.
    pub fn reserved(observed_stock: Option<i64>, stock_after: i64, round_trips: u32) -> Self {
        Attempt {
            stock_after: Some(stock_after),
            ..Self::new(OutcomeResult::Reserved, observed_stock, round_trips)
        }
    }

    /// Refused for lack of stock.
    pub fn sold_out(observed_stock: Option<i64>, round_trips: u32) -> Self {
        Self::new(OutcomeResult::SoldOut, observed_stock, round_trips)
    }

    /// A command that changes nothing (a read, a lock try) failed: the order took nothing.
    pub fn read_failed(e: &StoreError, observed_stock: Option<i64>, round_trips: u32) -> Self {
        Attempt {
            error: Some(e.short()),
            outage: e.is_outage(),
            ..Self::new(OutcomeResult::Error, observed_stock, round_trips)
        }
    }

    /// The write failed. If it was sent and never answered it may have been applied: the
    /// outcome is `unknown` and its units are in doubt; otherwise nothing was taken.
    pub fn write_failed(e: &StoreError, observed_stock: Option<i64>, round_trips: u32) -> Self {
        let result = if e.in_doubt() {
            OutcomeResult::Unknown
        } else {
            OutcomeResult::Error
        };
        Attempt {
            error: Some(e.short()),
            outage: e.is_outage(),
            ..Self::new(result, observed_stock, round_trips)
        }
    }

    /// A PostgreSQL statement failed; `in_doubt` when it was the COMMIT.
    pub fn postgres_failed(e: &PgError, in_doubt: bool, round_trips: u32) -> Self {
        let result = if in_doubt {
            OutcomeResult::Unknown
        } else {
            OutcomeResult::Error
        };
        Attempt {
            error: Some(e.short()),
            outage: e.is_outage(),
            ..Self::new(result, None, round_trips)
        }
    }

    /// The buyer stopped waiting for its turn and took nothing; `why` is one short line.
    pub fn gave_up(why: impl Into<String>, round_trips: u32) -> Self {
        Attempt {
            error: Some(why.into()),
            ..Self::new(OutcomeResult::GaveUp, None, round_trips)
        }
    }

    /// The engine's own failure for a buyer (its deadline passed with no answer).
    pub fn timed_out(why: impl Into<String>) -> Self {
        Attempt {
            error: Some(why.into()),
            ..Self::new(OutcomeResult::Unknown, None, 0)
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

    /// The same attempt, plus `round_trips` more requests (say, the lock's release).
    pub fn plus_round_trips(mut self, round_trips: u32) -> Self {
        self.round_trips += round_trips;
        self
    }

    /// The same attempt, reporting which bucket answered it (when one did).
    pub fn with_bucket(mut self, bucket: Option<u32>) -> Self {
        self.bucket = bucket;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_and_labels_are_unique_and_self_consistent() {
        let names: HashSet<&str> = REGISTRY.iter().map(|s| s.name()).collect();
        assert_eq!(names.len(), REGISTRY.len());
        let labels: HashSet<&str> = REGISTRY.iter().map(|s| &*s.about.label).collect();
        assert_eq!(labels.len(), REGISTRY.len());
        for s in REGISTRY {
            let e = &s.about.explanation;
            assert!(!e.title.is_empty() && !e.how.is_empty() && !e.why.is_empty());
            assert!(e.steps.len() >= 2, "{} needs an interleaving", s.name());
            assert!(!s.about.short_label.is_empty());
            assert!(find(s.name()).is_some());
        }
        assert!(find("nope").is_none());
        let featured: Vec<&str> = REGISTRY
            .iter()
            .filter(|s| s.about.featured)
            .map(|s| s.name())
            .collect();
        assert_eq!(featured, ["naive", "lua"]);
    }

    /// What `main.rs` asks before it looks for PostgreSQL: the backend says, not the name.
    #[test]
    fn only_the_postgres_backend_uses_postgres() {
        let pg: Vec<&str> = REGISTRY
            .iter()
            .filter(|s| s.uses_postgres())
            .map(|s| s.name())
            .collect();
        assert_eq!(pg, ["postgres", "postgres_naive"]);
        assert!(REGISTRY.iter().all(|s| s.uses_redis() != s.uses_postgres()));
    }

    /// The tape rule must fit what the strategy is: a lock-based strategy whose script
    /// reports before and after (a fenced lock) may use `AtomicCall`.
    #[test]
    fn every_strategy_names_a_tape_rule_that_fits_its_category() {
        use oversold_protocol::{Category, Guard, TapeRule};
        for s in REGISTRY {
            let fits = match (s.about.category, s.about.tape) {
                (
                    Category::CheckThenWrite,
                    TapeRule::ReadThenSet
                    | TapeRule::SelectThenUpdate
                    | TapeRule::ReadThenDecrement {
                        guard: Guard::Unguarded,
                    },
                ) => s.about.unsafe_by_design,
                // A check over several keys (the sum of `sharded_sum`'s buckets) has no
                // single point in Redis's order: no tape, only the summary.
                (Category::CheckThenWrite, TapeRule::Story) => s.about.unsafe_by_design,
                (Category::Atomic, TapeRule::AtomicCall { .. } | TapeRule::DecrementThenUndo) => {
                    true
                }
                (Category::Optimistic, TapeRule::ReadThenDecrement { guard }) => {
                    guard == Guard::Watch
                }
                (Category::Lock, TapeRule::ReadThenDecrement { guard }) => guard == Guard::Lock,
                (Category::Lock, TapeRule::AtomicCall { .. }) => true,
                (Category::Database, TapeRule::ReadThenDecrement { guard }) => {
                    guard == Guard::RowLock
                }
                (Category::Sharded, TapeRule::AtomicPerBucket { buckets }) => {
                    buckets == sharded::BUCKETS
                }
                _ => false,
            };
            assert!(
                fits,
                "{}: {:?} with {:?}",
                s.name(),
                s.about.category,
                s.about.tape
            );
        }
    }

    #[test]
    fn every_script_a_strategy_names_is_one_the_server_runs() {
        let files: HashSet<&str> = crate::store::scripts::all()
            .iter()
            .map(|f| f.file)
            .collect();
        for s in REGISTRY {
            for script in s.about.scripts.iter() {
                assert!(files.contains(&**script), "{} names {script}", s.name());
            }
        }
    }
}
