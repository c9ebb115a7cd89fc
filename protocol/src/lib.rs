//! The wire contract between the oversold server and any client: JSON text frames over `/ws`.
//!
//! This crate is serde only, so it builds for the host and for `wasm32-unknown-unknown`
//! alike. Nothing here knows about Redis, axum or Leptos.
//!
//! # Layout
//! - [`ClientMessage`]: what a client may send (one enum, tagged by `type`).
//! - [`ServerMessage`]: what the server sends back (one enum, tagged by `type`).
//! - [`RunRequest`] / [`RunConfig`]: a run's knobs, as asked for and as filled in.
//! - [`BuyerOutcome`] / [`RunSummary`]: what each buyer did, and the tally at the end.
//! - [`limits`]: the accepted ranges, and [`RunRequest::validate`] which enforces them.
//!
//! # A session, frame by frame
//! ```text
//! client                                   server
//!   | ---- (connect /ws) ------------------> |
//!   | <--- {"type":"hello", ...} ----------- |  protocol version, Redis status,
//!   |                                        |  strategies, Lua sources, limits
//!   | ---- {"type":"start_run","config":{"strategy":"naive"}} --> |
//!   | <--- {"type":"run_started","run_id":"r-…","config":{…}} --- |  defaults filled in
//!   | <--- {"type":"outcomes","run_id":"r-…","outcomes":[…]} ---- |  0..n batches
//!   | <--- {"type":"run_finished","run_id":"r-…","summary":{…}} - |
//! ```
//! Any bad frame is answered with `{"type":"error","code":"…","message":"…"}` and the socket
//! stays open. See [`ErrorCode`] for the codes.

use serde::{Deserialize, Serialize};

pub mod limits;
mod validate;

pub use validate::ConfigError;

/// Bumped whenever a message changes shape in a way an old client would misread.
pub const PROTOCOL_VERSION: u32 = 1;

/// Every frame a client may send. Tagged by `type`, fields in `snake_case`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMessage {
    /// Start one run. Only `config.strategy` is required; the rest fall back to defaults.
    StartRun {
        /// The knobs for this run.
        config: RunRequest,
    },
    /// Race the same config (same seed, same arrivals) through every available strategy,
    /// one after another. `config.strategy` is ignored. Each race streams as a normal run
    /// (`run_started`, `outcomes`, `run_finished`), between `compare_started` and
    /// `compare_finished`.
    StartCompare {
        /// The knobs shared by every race.
        config: RunRequest,
    },
    /// Stop the run (or comparison) in flight on this connection; buyers not yet started are
    /// skipped, and a comparison runs no further strategies.
    CancelRun,
}

/// Every frame the server sends. Tagged by `type`, fields in `snake_case`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// Sent once, right after the socket opens.
    Hello(Hello),
    /// Sent when Redis goes down or comes back, so a page can show it without polling.
    RedisStatus {
        /// The new state.
        redis: RedisState,
    },
    /// A run was accepted; `config` has every default filled in (including the seed).
    RunStarted {
        /// The id every later frame of this run carries.
        run_id: String,
        /// The full configuration the run uses.
        config: RunConfig,
    },
    /// A batch of buyer outcomes, in the order they finished.
    Outcomes {
        /// Which run these belong to.
        run_id: String,
        /// One entry per buyer that finished since the last batch.
        outcomes: Vec<BuyerOutcome>,
    },
    /// The run is over; no more `outcomes` frames follow for it.
    RunFinished {
        /// Which run finished.
        run_id: String,
        /// The tally, with the final stock read back from Redis.
        summary: RunSummary,
    },
    /// A comparison began: these strategies will race, in this order, with this config.
    CompareStarted {
        /// Identifies the comparison (each race still has its own `run_id`).
        compare_id: String,
        /// Strategy names, in the order they will race.
        strategies: Vec<String>,
        /// The shared config (its `strategy` is the first one's; only the name differs).
        config: RunConfig,
    },
    /// A comparison ended; one summary per race that completed, in order.
    CompareFinished {
        /// Which comparison.
        compare_id: String,
        /// The scoreboard.
        summaries: Vec<RunSummary>,
    },
    /// Something the client sent could not be done. The connection stays open.
    Error(WireError),
}

/// The greeting: everything a page needs to draw its controls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// [`PROTOCOL_VERSION`] of the server.
    pub protocol_version: u32,
    /// The server's crate version, for display.
    pub server_version: String,
    /// Whether Redis answered at the time of connecting.
    pub redis: RedisState,
    /// The strategies a client may name in `start_run`.
    pub strategies: Vec<StrategyInfo>,
    /// The Lua sources the server runs, exactly as loaded.
    pub scripts: Vec<ScriptSource>,
    /// The accepted ranges for every config field.
    pub limits: limits::Limits,
}

/// Whether the server can reach Redis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RedisState {
    /// Redis answered the last health ping.
    Up,
    /// Redis did not answer; runs will fail until it is back.
    Down,
}

/// One strategy a client may pick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StrategyInfo {
    /// The name to send in `config.strategy`, e.g. `"naive"`.
    pub name: String,
    /// A short label for a button, e.g. `"Naive (GET, then DECRBY)"`.
    pub label: String,
    /// One line on what it does.
    pub description: String,
    /// Whether it oversells by design (the page colours it as a warning).
    pub unsafe_by_design: bool,
    /// False when the strategy needs something this server lacks (say, PostgreSQL).
    pub available: bool,
    /// Why it is unavailable, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable_reason: Option<String>,
}

/// A Lua file the server loads, shown verbatim on the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptSource {
    /// The file name under `lua/`, e.g. `"reserve.lua"`.
    pub file: String,
    /// The full source text.
    pub source: String,
}

/// A run as a client asks for it: every field but `strategy` may be left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// Strategy name, one of `hello.strategies[].name`. Required by `start_run`.
    #[serde(default)]
    pub strategy: String,
    /// Units in stock before the run (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stock: Option<u32>,
    /// Number of buyers (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buyers: Option<u32>,
    /// Units per order (default 1). Ignored when `max_qty` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qty: Option<u32>,
    /// When set, each buyer orders a seeded random quantity in `1..=max_qty`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_qty: Option<u32>,
    /// Separate Redis connections the buyers are spread over (default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_servers: Option<u32>,
    /// Window over which arrivals are spread, in ms (default 0: all at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival_spread_ms: Option<u32>,
    /// Simulated app work between a read and its write, in ms (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race_window_ms: Option<u32>,
    /// Seed for quantities and arrival times (default: chosen by the server, reported back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// A run's configuration with every default filled in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Strategy name.
    pub strategy: String,
    /// Units in stock before the run.
    pub stock: u32,
    /// Number of buyers.
    pub buyers: u32,
    /// Units per order when `max_qty` is absent.
    pub qty: u32,
    /// When present, each buyer orders a seeded random `1..=max_qty`.
    pub max_qty: Option<u32>,
    /// Separate Redis connections.
    pub app_servers: u32,
    /// Arrival window in ms.
    pub arrival_spread_ms: u32,
    /// Simulated work between read and write in ms.
    pub race_window_ms: u32,
    /// The seed actually used.
    pub seed: u64,
}

/// How one buyer's order ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeResult {
    /// The order was accepted: the buyer believes it owns `qty` units.
    Reserved,
    /// The strategy saw too little stock and refused.
    SoldOut,
    /// Something failed (Redis down, timeout, gave up retrying); see `error`.
    Error,
}

/// What one buyer did. `start_us`/`end_us` are offsets from the moment the start gate opened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuyerOutcome {
    /// 1-based buyer number.
    pub buyer: u32,
    /// 0-based index of the app server (Redis connection) the buyer went through.
    pub app_server: u32,
    /// Units ordered.
    pub qty: u32,
    /// The stock the strategy read before deciding, where it reads one.
    pub observed_stock: Option<i64>,
    /// How it ended.
    pub result: OutcomeResult,
    /// The error message when `result` is `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The stock right after this buyer's write, where there was one.
    pub stock_after: Option<i64>,
    /// Time from the buyer's arrival to its answer, in µs.
    pub latency_us: u64,
    /// When the buyer arrived, µs after the gate opened.
    pub start_us: u64,
    /// When the buyer got its answer, µs after the gate opened.
    pub end_us: u64,
    /// When the app got its read of the stock back, µs after the gate opened, for strategies
    /// that read and then decide in the app (`naive`, `naive_set`, `watch`, `lock`). With
    /// `naive` every read lands before the first write: that is the race, on a time axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_us: Option<u64>,
    /// Requests this buyer sent to Redis (a script call counts as one).
    pub round_trips: u32,
    /// Attempts beyond the first (optimistic or lock strategies); 0 otherwise.
    #[serde(default)]
    pub retries: u32,
}

/// Latency percentiles over all buyers of a run, in µs (nearest rank).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Median.
    pub p50_us: u64,
    /// 95th percentile.
    pub p95_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// Slowest buyer.
    pub max_us: u64,
}

/// The tally of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// Strategy name.
    pub strategy: String,
    /// Units in stock before the run.
    pub stock: u32,
    /// Number of buyers.
    pub buyers: u32,
    /// Orders that ended `reserved`.
    pub orders_accepted: u32,
    /// Units across accepted orders.
    pub units_sold: u64,
    /// The stock counter read back from Redis after the run.
    pub final_stock: i64,
    /// `max(0, units_sold - stock)`: units promised that never existed.
    pub oversold_units: u64,
    /// `final_stock - (stock - units_sold)`: units the counter forgot. Non-zero means writes
    /// overwrote each other (a lost update), even when the counter never went negative.
    pub lost_updates: i64,
    /// Orders that ended `sold_out`.
    pub rejected: u32,
    /// Orders that ended `error`.
    pub errors: u32,
    /// Wall time from gate open to the last answer, in ms.
    pub duration_ms: f64,
    /// Buyers answered per second over `duration_ms`.
    pub throughput_per_s: f64,
    /// Latency percentiles.
    pub latency: LatencySummary,
    /// Requests sent to Redis across all buyers.
    pub round_trips: u64,
    /// Retries across all buyers.
    pub retries: u64,
    /// True when the run was cancelled before every buyer ran.
    #[serde(default)]
    pub cancelled: bool,
}

/// An error frame's body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireError {
    /// Machine-readable reason.
    pub code: ErrorCode,
    /// A sentence for a human.
    pub message: String,
    /// The run this error concerns, when it concerns one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// Machine-readable error codes. Only `run_failed` ends a run; the connection always stays open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The frame was not valid JSON, or not a JSON object.
    BadJson,
    /// The frame had no `type`, or one this server does not know.
    UnknownType,
    /// A required field (such as `config.strategy`) was missing.
    MissingField,
    /// A known `type` whose fields were mistyped or unknown.
    BadMessage,
    /// `config.strategy` names no strategy.
    UnknownStrategy,
    /// The strategy exists but cannot run here (see `hello.strategies[].unavailable_reason`).
    StrategyUnavailable,
    /// A config field is outside [`limits`].
    OutOfRange,
    /// This connection already has a run in flight.
    RunInProgress,
    /// The server is at its cap of concurrent runs; try again shortly.
    Busy,
    /// `cancel_run` with no run in flight.
    NoRunInProgress,
    /// Redis could not be reached to set the run up.
    RedisUnavailable,
    /// The run started but could not finish cleanly (outcomes so far were sent).
    RunFailed,
    /// Too many frames in a short time from this connection.
    RateLimited,
}

impl ErrorCode {
    /// The wire spelling, e.g. `"out_of_range"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadJson => "bad_json",
            ErrorCode::UnknownType => "unknown_type",
            ErrorCode::MissingField => "missing_field",
            ErrorCode::BadMessage => "bad_message",
            ErrorCode::UnknownStrategy => "unknown_strategy",
            ErrorCode::StrategyUnavailable => "strategy_unavailable",
            ErrorCode::OutOfRange => "out_of_range",
            ErrorCode::RunInProgress => "run_in_progress",
            ErrorCode::Busy => "busy",
            ErrorCode::NoRunInProgress => "no_run_in_progress",
            ErrorCode::RedisUnavailable => "redis_unavailable",
            ErrorCode::RunFailed => "run_failed",
            ErrorCode::RateLimited => "rate_limited",
        }
    }
}

#[cfg(test)]
mod tests;
