//! Turning a [`RunRequest`] into a [`RunConfig`] or a [`RaceConfig`]: defaults filled in,
//! every range checked.

use std::fmt;

use crate::limits::{LIMITS, Range};
use crate::{RaceConfig, RunConfig, RunRequest};

/// Why a request was refused. The server maps this to an `error` frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// `start_run` without a strategy (or with an empty one).
    MissingStrategy,
    /// `start_compare` with a strategy: a comparison races every strategy.
    StrategyNotAllowed,
    /// A field is outside its [`Range`].
    OutOfRange {
        /// The field's wire name.
        field: &'static str,
        /// What was sent.
        value: u64,
        /// What is accepted.
        range: Range,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::MissingStrategy => f.write_str("config.strategy is required"),
            ConfigError::StrategyNotAllowed => f.write_str(
                "start_compare races every available strategy: leave config.strategy out",
            ),
            ConfigError::OutOfRange {
                field,
                value,
                range,
            } => write!(
                f,
                "{field} = {value} is out of range: it must be between {} and {}",
                range.min, range.max
            ),
        }
    }
}

fn check(field: &'static str, value: Option<u32>, range: Range) -> Result<u32, ConfigError> {
    let value = value.unwrap_or(range.default);
    if value < range.min || value > range.max {
        return Err(ConfigError::OutOfRange {
            field,
            value: u64::from(value),
            range,
        });
    }
    Ok(value)
}

impl RunRequest {
    /// For `start_run`: the strategy (required) and every knob, defaults filled in and ranges
    /// checked. `fresh_seed` is used when no seed was sent.
    ///
    /// The strategy *name* is not checked here: which strategies exist is the server's business.
    pub fn validate(&self, fresh_seed: u64) -> Result<RunConfig, ConfigError> {
        let strategy = match self.strategy.as_deref().map(str::trim) {
            Some(name) if !name.is_empty() => name.to_string(),
            _ => return Err(ConfigError::MissingStrategy),
        };
        Ok(self.race(fresh_seed)?.with_strategy(strategy))
    }

    /// For `start_compare`: every knob, defaults filled in and ranges checked; a strategy is
    /// refused, since a comparison races them all.
    pub fn validate_compare(&self, fresh_seed: u64) -> Result<RaceConfig, ConfigError> {
        if self.strategy.is_some() {
            return Err(ConfigError::StrategyNotAllowed);
        }
        self.race(fresh_seed)
    }

    fn race(&self, fresh_seed: u64) -> Result<RaceConfig, ConfigError> {
        let max_qty = match self.max_qty {
            Some(q) => Some(check("max_qty", Some(q), LIMITS.qty)?),
            None => None,
        };
        Ok(RaceConfig {
            stock: check("stock", self.stock, LIMITS.stock)?,
            buyers: check("buyers", self.buyers, LIMITS.buyers)?,
            qty: check("qty", self.qty, LIMITS.qty)?,
            max_qty,
            app_servers: check("app_servers", self.app_servers, LIMITS.app_servers)?,
            arrival_spread_ms: check(
                "arrival_spread_ms",
                self.arrival_spread_ms,
                LIMITS.arrival_spread_ms,
            )?,
            race_window_ms: check("race_window_ms", self.race_window_ms, LIMITS.race_window_ms)?,
            seed: self.seed.unwrap_or(fresh_seed),
        })
    }
}
