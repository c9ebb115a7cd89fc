//! The checkout scenario against a real Redis and a real PostgreSQL.
//!
//! - `invariants`: hundreds of seeded random checkouts per safe strategy, run concurrently,
//!   each held to its checker; the unsafe strategies measured failing with default knobs.
//! - `settle_once`: confirm, release and the reaper racing on the same holds.
//! - `reaper_load`: ten thousand holds expiring at once, returned in bounded batches with
//!   no slow script, and the buyers' p99 before and during.
//! - `fail_modes`: an outage on our own Redis, closed against open; refused on a Redis we
//!   do not own; the Redis ledger when PostgreSQL is missing; reconciliation.
//! - `lost_or_slow`: Redis SIGKILLed mid-run ends the run within seconds; a paused Redis is
//!   slow, not lost: reservations time out in doubt and the run goes on.
//! - `notify`: `holds_notify`'s listener on `expired` events against the reaper: releases
//!   lost while its subscriber restarts, and late by however long Redis takes.
//! - `wire`: the WebSocket (live numbers, `reconcile`, a comparison) and the CLI's JSON.

mod fail_modes;
mod invariants;
mod lost_or_slow;
mod notify;
mod reaper_load;
mod settle_once;
mod wire;

use oversold::backends::Backends;
use oversold::checkout;
use oversold::run::RunReport;
use oversold::run::Watchers;
use oversold::strategy::checkout::{CheckoutStrategy, find};
use oversold_protocol::{RunConfig, RunRequest, Scenario};
use tokio_util::sync::CancellationToken;

/// The heavy tests of this module (hundreds of runs, ten thousand holds) take turns: one at
/// a time keeps the load they add to a 2-core box bounded, so neither they nor the rest of
/// the suite see Redis starved of CPU by their own neighbours.
static HEAVY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Wait for this module's turn to run something heavy.
pub async fn heavy() -> tokio::sync::MutexGuard<'static, ()> {
    HEAVY.lock().await
}

/// The checkout strategy called `name`.
pub fn strategy(name: &str) -> &'static CheckoutStrategy {
    find(name).expect("checkout strategy exists")
}

/// Run one checkout to its end; panics if it fails.
pub async fn run(backends: &Backends, config: &RunConfig, id: &str) -> RunReport {
    checkout::run(
        backends,
        strategy(&config.strategy),
        config,
        id,
        Watchers::default(),
        CancellationToken::new(),
    )
    .await
    .unwrap_or_else(|e| panic!("checkout {id} failed: {e}"))
}

/// A checkout request for `name`, played a thousand times faster than the shop clock.
pub fn fast(name: &str) -> RunRequest {
    RunRequest {
        scenario: Some(Scenario::Checkout),
        time_scale: Some(1_000),
        ..RunRequest::for_strategy(name)
    }
}
