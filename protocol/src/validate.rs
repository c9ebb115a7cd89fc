//! Turning a [`RunRequest`] into a [`RunConfig`]: defaults filled in, every range checked.

use std::fmt;

use crate::limits::{LIMITS, Range};
use crate::{RunConfig, RunRequest};

/// Why a request was refused. The server maps this to an `error` frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// `strategy` was empty.
    MissingStrategy,
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
    /// Fill in defaults and check every range. `fresh_seed` is used when no seed was sent.
    ///
    /// The strategy *name* is not checked here: which strategies exist is the server's business.
    pub fn validate(&self, fresh_seed: u64) -> Result<RunConfig, ConfigError> {
        if self.strategy.trim().is_empty() {
            return Err(ConfigError::MissingStrategy);
        }
        let max_qty = match self.max_qty {
            Some(q) => Some(check("max_qty", Some(q), LIMITS.qty)?),
            None => None,
        };
        Ok(RunConfig {
            strategy: String::from(self.strategy.trim()),
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

impl RunConfig {
    /// A one-line human description, e.g. for logs and the CLI header.
    pub fn describe(&self) -> String {
        let qty = match self.max_qty {
            Some(m) => format!("1..={m}"),
            None => format!("{}", self.qty),
        };
        format!(
            "{}: stock {}, {} buyers, qty {}, {} app servers, spread {} ms, race window {} ms, seed {}",
            self.strategy,
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
