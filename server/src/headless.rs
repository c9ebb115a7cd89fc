//! `oversold run`: one race without the page, printed as a table or as JSON.

use std::fmt::Write as _;

use oversold_protocol::{RunConfig, RunSummary};
use tokio_util::sync::CancellationToken;

use crate::engine::{self, RunError};
use crate::shelf::Backends;
use crate::strategy::{self, Strategy};

/// Why a headless run did not produce a summary.
#[derive(Debug, thiserror::Error)]
pub enum HeadlessError {
    /// Bad flags.
    #[error("{0}")]
    Config(String),
    /// The run itself failed.
    #[error(transparent)]
    Run(#[from] RunError),
}

/// Validate, run, and return the summary.
pub async fn run_once(
    backends: &Backends,
    request: &oversold_protocol::RunRequest,
) -> Result<(RunConfig, RunSummary), HeadlessError> {
    let config = request
        .validate(rand::random())
        .map_err(|e| HeadlessError::Config(e.to_string()))?;
    let strategies = strategy::registry();
    let strategy: std::sync::Arc<dyn Strategy> = strategy::find(&strategies, &config.strategy)
        .ok_or_else(|| {
            let names: Vec<_> = strategies.iter().map(|s| s.name()).collect();
            HeadlessError::Config(format!(
                "unknown strategy {:?}; available: {}",
                config.strategy,
                names.join(", ")
            ))
        })?;
    if let Some(why) = strategy.unavailable_reason(backends) {
        return Err(HeadlessError::Config(format!(
            "strategy {:?} is unavailable: {why}",
            config.strategy
        )));
    }
    let run_id = format!("cli-{:08x}", rand::random::<u32>());
    let report = engine::run(
        backends,
        strategy,
        &config,
        &run_id,
        None,
        CancellationToken::new(),
    )
    .await?;
    Ok((config, report.summary))
}

/// The human-readable table.
pub fn table(config: &RunConfig, s: &RunSummary) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", config.describe());
    let verdict = if s.oversold_units > 0 {
        format!("OVERSOLD by {} units", s.oversold_units)
    } else if s.lost_updates != 0 {
        format!("LOST {} units to overwritten writes", s.lost_updates)
    } else {
        "no oversell".to_string()
    };
    let rows: [(&str, String); 13] = [
        ("stock", s.stock.to_string()),
        ("buyers", s.buyers.to_string()),
        ("orders accepted", s.orders_accepted.to_string()),
        ("units sold", s.units_sold.to_string()),
        ("final stock", s.final_stock.to_string()),
        ("oversold units", s.oversold_units.to_string()),
        ("rejected (sold out)", s.rejected.to_string()),
        ("errors", s.errors.to_string()),
        ("duration", format!("{:.1} ms", s.duration_ms)),
        ("throughput", format!("{:.0} orders/s", s.throughput_per_s)),
        (
            "latency p50/p95/p99",
            format!(
                "{} / {} / {} µs",
                s.latency.p50_us, s.latency.p95_us, s.latency.p99_us
            ),
        ),
        ("latency max", format!("{} µs", s.latency.max_us)),
        ("round trips", s.round_trips.to_string()),
    ];
    for (name, value) in rows {
        let _ = writeln!(out, "  {name:<22}{value:>14}");
    }
    let _ = writeln!(out, "  => {verdict}");
    out
}
