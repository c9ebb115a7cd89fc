//! Running one race: open the app servers' connections, put the stock on the shelf,
//! release every buyer through a start gate, collect outcomes, read the stock back, clean up.
//!
//! Buyers are tokio tasks in a [`JoinSet`]: tracked (the run waits for every one),
//! bounded (at most `MAX_BUYERS` per run, and the server caps concurrent runs) and
//! cancellable (a cancelled run skips buyers that have not started).

use std::sync::Arc;
use std::time::{Duration, Instant};

use oversold_protocol::{BuyerOutcome, RunConfig, RunSummary};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::plan::{BuyerPlan, plan};
use crate::shelf::{Backends, Link, Shelf, ShelfError};
use crate::store::RunKeys;
use crate::strategy::{Attempt, Order, Strategy};
use crate::summary::summarize;

/// A buyer that has not heard back after this long gives up with an error. Request
/// timeouts normally fire first; this is the backstop that guarantees a run ends.
const BUYER_DEADLINE: Duration = Duration::from_secs(20);

/// Why a run could not produce a summary.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The store was unreachable before any buyer ran. Nothing was sold.
    #[error("could not set the run up: {0}")]
    Setup(#[source] ShelfError),
    /// Buyers ran, but the final stock could not be read back.
    #[error("the run's final stock could not be read back: {0}")]
    ReadBack(#[source] ShelfError),
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
    backends: &Backends,
    strategy: Arc<dyn Strategy>,
    config: &RunConfig,
    run_id: &str,
    sink: Option<OutcomeSink>,
    cancel: CancellationToken,
) -> Result<RunReport, RunError> {
    let kind = strategy.link_kind();
    let mut shelf = Shelf::stock(backends, kind, run_id, config.stock)
        .await
        .map_err(RunError::Setup)?;
    let prepared = async {
        if let Some(admin) = shelf.redis_conn() {
            strategy.prepare(admin).await?;
        }
        Shelf::links(backends, kind, config.app_servers).await
    };
    let links = match prepared.await {
        Ok(links) => links,
        Err(e) => {
            let _ = shelf.clear().await;
            return Err(RunError::Setup(e));
        }
    };

    let keys = Arc::new(shelf.keys());
    let outcomes = race(&links, &keys, run_id, strategy, config, sink, cancel).await;
    drop(links);

    let final_stock = shelf.read_back(backends).await;
    // Clean up even when the read failed; Redis keys' TTL covers the case where this fails too.
    if let Err(e) = shelf.clear().await {
        tracing::warn!(run_id, error = %e, "could not delete the run's stock; Redis keys expire on their own");
    }
    let final_stock = final_stock.map_err(RunError::ReadBack)?;
    Ok(RunReport {
        summary: summarize(config, &outcomes, final_stock),
        outcomes,
    })
}

/// Release the buyers and wait for all of them.
async fn race(
    links: &[Link],
    keys: &Arc<RunKeys>,
    run_id: &str,
    strategy: Arc<dyn Strategy>,
    config: &RunConfig,
    sink: Option<OutcomeSink>,
    cancel: CancellationToken,
) -> Vec<BuyerOutcome> {
    // The gate carries the instant it opened, so every offset is measured from one origin.
    let (open_gate, gate) = watch::channel(None::<Instant>);
    let race_window = Duration::from_millis(u64::from(config.race_window_ms));
    let run_id: Arc<str> = Arc::from(run_id);
    let mut buyers = JoinSet::new();
    for plan in plan(config) {
        let buyer = Buyer {
            plan,
            link: links[plan.app_server as usize].clone(),
            keys: Arc::clone(keys),
            run_id: Arc::clone(&run_id),
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

/// One buyer task's inputs.
struct Buyer {
    plan: BuyerPlan,
    link: Link,
    keys: Arc<RunKeys>,
    run_id: Arc<str>,
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
            link: self.link,
            run_id: &self.run_id,
            keys: &self.keys,
            qty: self.plan.qty,
            race_window: self.race_window,
        };
        let attempt =
            tokio::time::timeout(BUYER_DEADLINE + self.race_window, self.strategy.buy(order))
                .await
                .unwrap_or_else(|_| {
                    let why = format!("no answer within {} s", BUYER_DEADLINE.as_secs());
                    Attempt::failed(why, None, 0)
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
            read_us: attempt
                .read_at
                .map(|t| micros(t.saturating_duration_since(opened))),
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
