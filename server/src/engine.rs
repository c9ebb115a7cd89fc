//! Running one race: open the app servers' connections, put the stock on the shelf,
//! release every buyer through a start gate, collect outcomes, read the stock back, clean up.
//!
//! Buyers are tokio tasks in a [`JoinSet`]: tracked (the run waits for every one),
//! bounded (at most `MAX_BUYERS` per run, and the server caps concurrent runs) and
//! cancellable (a cancelled run skips buyers that have not started).

use std::sync::Arc;
use std::time::{Duration, Instant};

use oversold_protocol::{BuyerOutcome, OutcomeResult, RunConfig, RunSummary};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::plan::{BuyerPlan, plan};
use crate::store::{self, Conn, RunKeys, Store, StoreError};
use crate::strategy::{Attempt, Order, Strategy};
use crate::summary::summarize;

/// A buyer that has not heard back after this long gives up with an error. Request
/// timeouts normally fire first; this is the backstop that guarantees a run ends.
const BUYER_DEADLINE: Duration = Duration::from_secs(20);

/// Why a run could not produce a summary.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Redis was unreachable before any buyer ran. Nothing was sold.
    #[error("Redis is unavailable: {0}")]
    Setup(#[source] StoreError),
    /// Buyers ran, but the final stock could not be read back.
    #[error("the run's final stock could not be read back: {0}")]
    ReadBack(#[source] StoreError),
}

/// Everything a finished run produced.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The tally.
    pub summary: RunSummary,
    /// One entry per buyer that ran, in the order they finished.
    pub outcomes: Vec<BuyerOutcome>,
}

/// Where outcomes go as they happen. Unbounded on purpose: a buyer must never wait
/// for a slow reader, and a run has at most `MAX_BUYERS` outcomes, so memory is bounded.
pub type OutcomeSink = mpsc::UnboundedSender<BuyerOutcome>;

/// Run one race to completion (or cancellation). `config` must already be validated.
pub async fn run(
    store: &Store,
    strategy: Arc<dyn Strategy>,
    config: &RunConfig,
    run_id: &str,
    sink: Option<OutcomeSink>,
    cancel: CancellationToken,
) -> Result<RunReport, RunError> {
    let keys = Arc::new(RunKeys::new(run_id));
    let mut fleet = store
        .connect_fleet(config.app_servers)
        .await
        .map_err(RunError::Setup)?;
    store::init_stock(&mut fleet[0], &keys, config.stock)
        .await
        .map_err(RunError::Setup)?;

    let outcomes = race(&fleet, &keys, strategy, config, sink, cancel).await;

    let final_stock = read_back(store, &mut fleet[0], &keys).await;
    // Clean up even when the read failed; the keys' TTL covers the case where this fails too.
    if let Err(e) = store::remove_run(&mut fleet[0], &keys).await {
        tracing::warn!(run_id, error = %e, "could not delete run keys; they expire on their own");
    }
    let final_stock = final_stock.map_err(RunError::ReadBack)?;
    Ok(RunReport {
        summary: summarize(config, &outcomes, final_stock),
        outcomes,
    })
}

/// Release the buyers and wait for all of them.
async fn race(
    fleet: &[Conn],
    keys: &Arc<RunKeys>,
    strategy: Arc<dyn Strategy>,
    config: &RunConfig,
    sink: Option<OutcomeSink>,
    cancel: CancellationToken,
) -> Vec<BuyerOutcome> {
    // The gate carries the instant it opened, so every offset is measured from one origin.
    let (open_gate, gate) = watch::channel(None::<Instant>);
    let race_window = Duration::from_millis(u64::from(config.race_window_ms));
    let mut buyers = JoinSet::new();
    for plan in plan(config) {
        let buyer = Buyer {
            plan,
            conn: fleet[plan.app_server as usize].clone(),
            keys: Arc::clone(keys),
            strategy: Arc::clone(&strategy),
            race_window,
            sink: sink.clone(),
            cancel: cancel.clone(),
        };
        buyers.spawn(buyer.run(gate.clone()));
    }
    // Let the freshly spawned tasks reach the gate before it opens, so "all at once" is real.
    tokio::task::yield_now().await;
    open_gate.send_replace(Some(Instant::now()));

    let mut outcomes = Vec::with_capacity(config.buyers as usize);
    while let Some(joined) = buyers.join_next().await {
        match joined {
            Ok(Some(outcome)) => outcomes.push(outcome),
            Ok(None) => {} // skipped: the run was cancelled before this buyer arrived
            Err(e) => tracing::error!(error = %e, "a buyer task panicked"),
        }
    }
    outcomes
}

/// Read the final stock, on a fresh connection if the run's own one broke.
async fn read_back(store: &Store, conn: &mut Conn, keys: &RunKeys) -> Result<i64, StoreError> {
    match store::read_stock(conn, keys).await {
        Ok(v) => Ok(v.unwrap_or(0)),
        Err(first) => {
            tracing::debug!(error = %first, "final read failed; retrying on a new connection");
            let mut fresh = store.connect().await?;
            *conn = fresh.clone();
            Ok(store::read_stock(&mut fresh, keys).await?.unwrap_or(0))
        }
    }
}

/// One buyer task's inputs.
struct Buyer {
    plan: BuyerPlan,
    conn: Conn,
    keys: Arc<RunKeys>,
    strategy: Arc<dyn Strategy>,
    race_window: Duration,
    sink: Option<OutcomeSink>,
    cancel: CancellationToken,
}

impl Buyer {
    /// Wait for the gate and the arrival time, place the order, report. `None` if cancelled first.
    async fn run(self, mut gate: watch::Receiver<Option<Instant>>) -> Option<BuyerOutcome> {
        let opened = match gate.wait_for(Option::is_some).await {
            Ok(t) => t.expect("checked by wait_for"),
            Err(_) => return None, // the run was dropped before it started
        };
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => return None,
            _ = tokio::time::sleep_until((opened + self.plan.arrival).into()) => {}
        }
        let started = Instant::now();
        let order = Order {
            conn: self.conn,
            keys: &self.keys,
            qty: self.plan.qty,
            race_window: self.race_window,
        };
        let attempt =
            tokio::time::timeout(BUYER_DEADLINE + self.race_window, self.strategy.buy(order))
                .await
                .unwrap_or_else(|_| Attempt {
                    result: OutcomeResult::Error,
                    observed_stock: None,
                    stock_after: None,
                    round_trips: 0,
                    retries: 0,
                    error: Some(format!("no answer within {} s", BUYER_DEADLINE.as_secs())),
                });
        let ended = Instant::now();
        let outcome = BuyerOutcome {
            buyer: self.plan.buyer,
            app_server: self.plan.app_server,
            qty: self.plan.qty,
            observed_stock: attempt.observed_stock,
            result: attempt.result,
            error: attempt.error,
            stock_after: attempt.stock_after,
            latency_us: micros(ended - started),
            start_us: micros(started - opened),
            end_us: micros(ended - opened),
            round_trips: attempt.round_trips,
            retries: attempt.retries,
        };
        if let Some(sink) = &self.sink {
            // A closed sink only means nobody is watching any more; the run goes on.
            let _ = sink.send(outcome.clone());
        }
        Some(outcome)
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
