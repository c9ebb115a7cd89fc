//! Step-through mode: "you are the scheduler". Two to four buyers of one strategy stand ready,
//! each on its own connection with a [`Turnstile`]; every click lets one buyer send its next
//! real Redis command, and the reply comes back from Redis.
//!
//! The buyers run their strategy's own `buy`, unchanged, so the visitor steps through exactly
//! what a race sends. Between two commands a buyer decides in the app at once (no click), so
//! after a `GET` its next command already shows what it decided: `DECRBY stock 1`, or nothing
//! because it saw too little and is done. The log is the exact order Redis ran the commands
//! in, since each one was sent alone.

use std::sync::Arc;
use std::time::{Duration, Instant};

use oversold_protocol::{
    BuyerOutcome, OutcomeResult, RunConfig, StepBuyer, StepCommand, StepState,
};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use crate::backends::Backends;
use crate::engine::{Arena, OrderTerms};
use crate::run::RunError;
use crate::store::RedisConn;
use crate::store::stock::{self, Reading};
use crate::store::turnstile::{Passed, Turn, Turnstile};
use crate::strategy::{Attempt, Strategy};

/// Longest a click waits for its buyer to reach its next command (a lock buyer sleeps a few
/// ms between polls; nothing else waits at all).
const SETTLE: Duration = Duration::from_secs(5);
/// A step session nobody clicked for this long is closed, so a forgotten tab frees its keys.
/// Defined with the orders (by-hand orders' timers stretch to it), named here for the socket.
pub const IDLE: Duration = crate::strategy::BY_HAND_IDLE;

/// Why step-through mode could not open, or a click could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The arena could not be set up (Redis down, a PostgreSQL strategy...).
    #[error(transparent)]
    Setup(#[from] RunError),
    /// No such buyer.
    #[error("there is no buyer {0} in this step-through (buyers are numbered from 1)")]
    NoSuchBuyer(u32),
    /// That buyer has already finished.
    #[error("buyer {0} is done; pick another, or reset")]
    Done(u32),
    /// The buyer did not reach its next command in time.
    #[error("buyer {0} did not reach its next command within {1} s")]
    Stuck(u32, u64),
}

/// One buyer in step-through mode.
struct Stepped {
    turnstile: Arc<Turnstile>,
    turn: watch::Receiver<Turn>,
    outcome: Option<BuyerOutcome>,
}

/// A step-through session: its arena, its buyers, the log so far.
pub struct Stepper {
    run_id: String,
    config: RunConfig,
    arena: Arc<Arena>,
    reader: RedisConn,
    buyers: Vec<Stepped>,
    tasks: JoinSet<(u32, Attempt)>,
    passed: mpsc::UnboundedReceiver<(u32, Passed)>,
    log: Vec<StepCommand>,
    opened: Instant,
    /// When a click last came, for [`IDLE`].
    pub last_used: Instant,
}

impl Stepper {
    /// Put the stock on the shelf and stop each buyer before its first command.
    pub async fn open(
        backends: &Backends,
        strategy: &'static Strategy,
        config: RunConfig,
        run_id: String,
    ) -> Result<Stepper, StepError> {
        let n = config.race.buyers;
        let (passed_tx, passed) = mpsc::unbounded_channel();
        let turnstiles: Vec<Arc<Turnstile>> = (1..=n)
            .map(|buyer| Arc::new(Turnstile::new(buyer, passed_tx.clone())))
            .collect();
        let arena = Arena::set_up_gated(
            backends,
            strategy,
            &run_id,
            config.race.stock,
            n,
            &turnstiles,
        )
        .await?;
        let reader = backends
            .redis
            .connect()
            .await
            .map_err(|e| StepError::Setup(RunError::Setup(e.into())))?;
        let arena = Arc::new(arena);
        let plan = crate::plan::plan(&config.race);
        let mut tasks = JoinSet::new();
        for p in &plan {
            let line = OrderTerms {
                qty: p.qty,
                race_window: Duration::ZERO,
                ticket: p.ticket,
                by_hand: true,
            };
            // Buyer k on app server k-1: each has a connection, and a turnstile, of its own.
            let fut = arena.buy(p.buyer - 1, line);
            let buyer = p.buyer;
            tasks.spawn(async move { (buyer, fut.await) });
        }
        let buyers = turnstiles
            .into_iter()
            .map(|t| Stepped {
                turn: t.turn(),
                turnstile: t,
                outcome: None,
            })
            .collect();
        let mut stepper = Stepper {
            run_id,
            config,
            arena,
            reader,
            buyers,
            tasks,
            passed,
            log: Vec::new(),
            opened: Instant::now(),
            last_used: Instant::now(),
        };
        // Let every buyer reach its first command (or finish without one).
        for b in 1..=n {
            stepper.settle(b).await?;
        }
        Ok(stepper)
    }

    /// The session's id.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Its knobs.
    pub fn config(&self) -> &RunConfig {
        &self.config
    }

    /// Let buyer `buyer` send its next command; return once it waits at the next one or is done.
    pub async fn step(&mut self, buyer: u32) -> Result<(), StepError> {
        self.last_used = Instant::now();
        let Some(b) = buyer
            .checked_sub(1)
            .and_then(|i| self.buyers.get(i as usize))
        else {
            return Err(StepError::NoSuchBuyer(buyer));
        };
        if b.outcome.is_some() || !matches!(*b.turn.borrow(), Turn::Waiting(_)) {
            return Err(StepError::Done(buyer));
        }
        b.turnstile.let_one_through();
        // Wait for the turnstile to see the command through (Busy), then settle.
        let mut turn = b.turn.clone();
        let _ = tokio::time::timeout(SETTLE, turn.wait_for(|t| *t == Turn::Busy)).await;
        self.settle(buyer).await
    }

    /// Wait until `buyer` stands at a command again, or has finished.
    async fn settle(&mut self, buyer: u32) -> Result<(), StepError> {
        let deadline = tokio::time::Instant::now() + SETTLE;
        loop {
            self.collect();
            let b = &self.buyers[(buyer - 1) as usize];
            if b.outcome.is_some() || matches!(*b.turn.borrow(), Turn::Waiting(_)) {
                return Ok(());
            }
            let mut turn = b.turn.clone();
            tokio::select! {
                _ = tokio::time::sleep_until(deadline) => {
                    return Err(StepError::Stuck(buyer, SETTLE.as_secs()));
                }
                _ = turn.changed() => {}
                Some(done) = self.tasks.join_next() => self.finished(done),
            }
        }
    }

    /// Take in what has happened: commands that passed, buyers that finished.
    fn collect(&mut self) {
        while let Ok((buyer, p)) = self.passed.try_recv() {
            self.log.push(StepCommand::new(buyer, p.call, p.answer));
        }
        while let Some(done) = self.tasks.try_join_next() {
            self.finished(done);
        }
    }

    fn finished(&mut self, done: Result<(u32, Attempt), tokio::task::JoinError>) {
        let Ok((buyer, attempt)) = done else {
            tracing::error!("a step-through buyer task panicked");
            return;
        };
        let at = u64::try_from(self.opened.elapsed().as_micros()).unwrap_or(u64::MAX);
        let qty = crate::plan::plan(&self.config.race)[(buyer - 1) as usize].qty;
        self.buyers[(buyer - 1) as usize].outcome = Some(BuyerOutcome {
            buyer,
            app_server: buyer - 1,
            qty,
            observed_stock: attempt.observed_stock,
            result: attempt.result,
            error: attempt.error,
            stock_after: attempt.stock_after,
            latency_us: 0,
            start_us: 0,
            end_us: at,
            read_us: None,
            round_trips: attempt.round_trips,
            retries: attempt.retries,
            node: self.arena.node_for(attempt.bucket),
            bucket: attempt.bucket,
            checkout: None,
            cart: None,
            epoch: None,
        });
    }

    /// Everything the page shows, with the stock read from Redis now.
    pub async fn state(&mut self) -> StepState {
        self.collect();
        let stock = match self.arena.redis_keys() {
            Some(keys) => match stock::read_back(&mut self.reader, keys).await {
                Ok(Reading::Units(n)) => Some(n),
                _ => None,
            },
            None => None,
        };
        let buyers = self
            .buyers
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let next_call = match (&b.outcome, &*b.turn.borrow()) {
                    (None, Turn::Waiting(call)) => Some(call.clone()),
                    _ => None,
                };
                StepBuyer {
                    buyer: i as u32 + 1,
                    next: next_call.as_ref().map(ToString::to_string),
                    next_call,
                    outcome: b.outcome.clone(),
                }
            })
            .collect();
        let units_sold = self
            .buyers
            .iter()
            .filter_map(|b| b.outcome.as_ref())
            .filter(|o| o.result == OutcomeResult::Reserved)
            .map(|o| u64::from(o.qty))
            .sum();
        StepState {
            run_id: self.run_id.clone(),
            config: self.config.clone(),
            buyers,
            log: self.log.clone(),
            stock,
            units_sold,
        }
    }

    /// End the session: stop the buyers still waiting, delete the keys.
    pub async fn close(mut self, backends: &Backends) {
        self.tasks.shutdown().await;
        drop(self.buyers);
        match Arc::try_unwrap(self.arena) {
            Ok(arena) => {
                let _ = arena.finish(backends, &self.run_id).await;
            }
            Err(_) => tracing::warn!(
                run_id = self.run_id,
                "step arena still shared; keys expire by TTL"
            ),
        }
    }
}
