//! A race's knobs: as a client asks for them ([`RunRequest`]), and as the server fills them in
//! ([`RaceConfig`], plus the strategy in [`RunConfig`]).

use serde::{Deserialize, Serialize};

/// A race as a client asks for it: every knob may be left out.
///
/// `start_run` needs `strategy`; `start_compare` races every strategy and refuses one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// Strategy name, one of `hello.strategies[].name`. Required by `start_run`, refused by
    /// `start_compare`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
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

impl RunRequest {
    /// The JSON names of every field, in declaration order. A server uses them to tell an
    /// unknown field from a mistyped one without reading serde's messages; a test pins them
    /// to what serde actually accepts.
    pub const FIELDS: [&'static str; 9] = [
        "strategy",
        "stock",
        "buyers",
        "qty",
        "max_qty",
        "app_servers",
        "arrival_spread_ms",
        "race_window_ms",
        "seed",
    ];

    /// A request for `strategy` with every knob left to its default.
    pub fn for_strategy(strategy: impl Into<String>) -> Self {
        RunRequest {
            strategy: Some(strategy.into()),
            ..Default::default()
        }
    }
}

/// Every knob of a race with its default filled in: what `start_compare` races every
/// strategy with, and (with a strategy) what one run uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaceConfig {
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

/// One run's configuration: a strategy and the race's knobs. On the wire the knobs sit beside
/// `strategy` in one flat object, as in protocol version 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Strategy name.
    pub strategy: String,
    /// The knobs.
    #[serde(flatten)]
    pub race: RaceConfig,
}

impl RaceConfig {
    /// This race, run by `strategy`.
    pub fn with_strategy(&self, strategy: impl Into<String>) -> RunConfig {
        RunConfig {
            strategy: strategy.into(),
            race: self.clone(),
        }
    }

    /// The knobs in one line, e.g. for logs and the CLI header.
    pub fn describe(&self) -> String {
        let qty = match self.max_qty {
            Some(m) => format!("1..={m}"),
            None => format!("{}", self.qty),
        };
        format!(
            "stock {}, {} buyers, qty {}, {} app servers, spread {} ms, race window {} ms, seed {}",
            self.stock,
            self.buyers,
            qty,
            self.app_servers,
            self.arrival_spread_ms,
            self.race_window_ms,
            self.seed
        )
    }
}

impl RunConfig {
    /// A one-line human description, e.g. `naive: stock 10, 50 buyers, …`.
    pub fn describe(&self) -> String {
        format!("{}: {}", self.strategy, self.race.describe())
    }
}
