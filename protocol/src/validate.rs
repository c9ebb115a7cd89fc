//! Turning a [`RunRequest`] into a [`RunConfig`] or a [`RaceConfig`]: defaults filled in,
//! every range checked.

use std::fmt;

use crate::checkout::{CheckoutConfig, Scenario};
use crate::limits::{
    CHECKOUT_LIMITS, FractionRange, LIMITS, Limits, MAX_BUYERS_AT_SCALE, MAX_REAL_OUTAGE_MS,
    MAX_REAL_PHASE_MS, Range,
};
use crate::{Knobs, RaceConfig, RunConfig, RunRequest};

/// Why a request was refused. The server maps this to an `error` frame.
#[derive(Debug, Clone, PartialEq)]
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
    /// A fraction outside 0.0–1.0 (or not a number at all).
    FractionOutOfRange {
        /// The field's wire name.
        field: &'static str,
        /// What was sent.
        value: f64,
    },
    /// `abandon_fraction + pay_fail_fraction + crash_fraction` is over 1: each buyer has
    /// one fate.
    FatesOverOne {
        /// The sum.
        sum: f64,
    },
    /// A shop time that, divided by `time_scale`, would take too long in real time.
    TooSlow {
        /// The field's wire name.
        field: &'static str,
        /// Real ms it would take.
        real_ms: u64,
        /// Real ms allowed.
        max_real_ms: u64,
    },
    /// A checkout knob in a `race`.
    NotThisScenario {
        /// The field's wire name.
        field: &'static str,
    },
    /// A knob of another scenario (`skus` outside a `cart`, `hold_ttl_ms` in a `cart`...).
    OtherScenario {
        /// The field's wire name.
        field: &'static str,
        /// The scenario it belongs to.
        belongs_to: Scenario,
    },
    /// `max_lines` above `skus`: a cart's lines are distinct SKUs.
    MoreLinesThanSkus {
        /// `max_lines`.
        max_lines: u32,
        /// `skus`.
        skus: u32,
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
            ConfigError::FractionOutOfRange { field, value } => write!(
                f,
                "{field} = {value} is out of range: it must be between 0.0 and 1.0"
            ),
            ConfigError::FatesOverOne { sum } => write!(
                f,
                "abandon_fraction + pay_fail_fraction + crash_fraction = {sum} is out of range: \
                 each buyer has one fate, so together they must be at most 1.0"
            ),
            ConfigError::TooSlow {
                field,
                real_ms,
                max_real_ms,
            } => write!(
                f,
                "{field} is out of range: at this time_scale it would last {real_ms} real ms, \
                 and at most {max_real_ms} are allowed; raise time_scale or shorten it"
            ),
            ConfigError::NotThisScenario { field } => write!(
                f,
                "{field} belongs to the checkout scenario: send \"scenario\":\"checkout\" with it"
            ),
            ConfigError::OtherScenario { field, belongs_to } => write!(
                f,
                "{field} belongs to the {belongs_to} scenario: send \"scenario\":\"{belongs_to}\" \
                 with it, or leave it out"
            ),
            ConfigError::MoreLinesThanSkus { max_lines, skus } => write!(
                f,
                "max_lines = {max_lines} is out of range: a cart's lines are distinct SKUs, so \
                 it must be at most skus = {skus}"
            ),
        }
    }
}

fn fraction(
    field: &'static str,
    value: Option<f64>,
    range: FractionRange,
) -> Result<f64, ConfigError> {
    let value = value.unwrap_or(range.default);
    // NaN fails both comparisons, so it is refused too.
    if !(value >= range.min && value <= range.max) {
        return Err(ConfigError::FractionOutOfRange { field, value });
    }
    Ok(value)
}

/// A shop time must also fit in real time once divided by the time scale.
fn real_time(
    field: &'static str,
    shop_ms: u64,
    time_scale: u32,
    max_real_ms: u64,
) -> Result<(), ConfigError> {
    let real_ms = shop_ms.div_ceil(u64::from(time_scale));
    if real_ms > max_real_ms {
        return Err(ConfigError::TooSlow {
            field,
            real_ms,
            max_real_ms,
        });
    }
    Ok(())
}

pub(crate) fn check(
    field: &'static str,
    value: Option<u32>,
    range: Range,
) -> Result<u32, ConfigError> {
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
        self.validate_within(&LIMITS, fresh_seed)
    }

    /// [`RunRequest::validate`] against `limits` (a server's, or the CLI's): a race may have
    /// up to `limits.buyers.max` buyers; every other scenario keeps [`LIMITS`]' cap.
    pub fn validate_within(
        &self,
        limits: &Limits,
        fresh_seed: u64,
    ) -> Result<RunConfig, ConfigError> {
        let strategy = match self.strategy.as_deref().map(str::trim) {
            Some(name) if !name.is_empty() => name.to_string(),
            _ => return Err(ConfigError::MissingStrategy),
        };
        Ok(self.race(limits, fresh_seed)?.with_strategy(strategy))
    }

    /// For `start_compare`: every knob, defaults filled in and ranges checked; a strategy is
    /// refused, since a comparison races them all.
    pub fn validate_compare(&self, fresh_seed: u64) -> Result<RaceConfig, ConfigError> {
        self.validate_compare_within(&LIMITS, fresh_seed)
    }

    /// [`RunRequest::validate_compare`] against `limits` (see [`RunRequest::validate_within`]).
    pub fn validate_compare_within(
        &self,
        limits: &Limits,
        fresh_seed: u64,
    ) -> Result<RaceConfig, ConfigError> {
        if self.strategy.is_some() {
            return Err(ConfigError::StrategyNotAllowed);
        }
        self.race(limits, fresh_seed)
    }

    fn race(&self, limits: &Limits, fresh_seed: u64) -> Result<RaceConfig, ConfigError> {
        let max_qty = match self.max_qty {
            Some(q) => Some(check("max_qty", Some(q), LIMITS.qty)?),
            None => None,
        };
        let scenario = self.scenario.unwrap_or_default();
        // Only a race is built to scale: its buyers keep no story, so a server (or the CLI)
        // may allow more of them; the other scenarios keep the protocol's cap.
        let buyer_range = match scenario {
            Scenario::Race => Range {
                max: limits
                    .buyers
                    .max
                    .clamp(LIMITS.buyers.max, MAX_BUYERS_AT_SCALE),
                ..LIMITS.buyers
            },
            _ => LIMITS.buyers,
        };
        let buyers = check("buyers", self.buyers, buyer_range)?;
        self.only_this_scenario(scenario)?;
        let knobs = match scenario {
            Scenario::Race => {
                if let Some(field) = self.checkout_field_sent() {
                    return Err(ConfigError::NotThisScenario { field });
                }
                Knobs::Race
            }
            Scenario::Checkout => Knobs::Checkout(self.checkout(buyers)?),
            Scenario::Cart | Scenario::Warehouses => self.multi_key(scenario)?,
            Scenario::BusyScript => Knobs::BusyScript,
            Scenario::Durability => Knobs::Durability,
            Scenario::Eviction => Knobs::Eviction(crate::EvictionConfig {
                policy: self.policy.unwrap_or_default(),
            }),
            Scenario::Failover => Knobs::Failover,
        };
        // A busy script needs buyers arriving while it holds Redis: its sale is spread out
        // unless the client says otherwise.
        let spread = match scenario {
            Scenario::BusyScript => Range {
                default: crate::busy::DEFAULT_SPREAD_MS,
                ..LIMITS.arrival_spread_ms
            },
            Scenario::Durability => Range {
                default: crate::durability::DEFAULT_SPREAD_MS,
                ..LIMITS.arrival_spread_ms
            },
            // Two waves: the first tenth of the spread, then the rest after a quiet spell.
            Scenario::Eviction => Range {
                default: crate::eviction::DEFAULT_SPREAD_MS,
                ..LIMITS.arrival_spread_ms
            },
            // A failover needs buyers before the replica falls behind, while it lags, and
            // after the promotion.
            Scenario::Failover => Range {
                default: crate::failover::DEFAULT_SPREAD_MS,
                ..LIMITS.arrival_spread_ms
            },
            _ => LIMITS.arrival_spread_ms,
        };
        // A crash can only lose what was sold before it: a durability sale has stock left
        // when the crash comes unless the client says otherwise.
        let stock = match scenario {
            Scenario::Durability => Range {
                default: crate::durability::DEFAULT_STOCK,
                ..LIMITS.stock
            },
            _ => LIMITS.stock,
        };
        Ok(RaceConfig {
            stock: check("stock", self.stock, stock)?,
            buyers,
            qty: check("qty", self.qty, LIMITS.qty)?,
            max_qty,
            app_servers: check("app_servers", self.app_servers, LIMITS.app_servers)?,
            arrival_spread_ms: check("arrival_spread_ms", self.arrival_spread_ms, spread)?,
            race_window_ms: check("race_window_ms", self.race_window_ms, LIMITS.race_window_ms)?,
            seed: self.seed.unwrap_or(fresh_seed),
            knobs,
        })
    }

    /// The first checkout knob this request sets, if any.
    pub(crate) fn checkout_field_sent(&self) -> Option<&'static str> {
        let sent: [(&'static str, bool); 13] = [
            ("hold_ttl_ms", self.hold_ttl_ms.is_some()),
            ("time_scale", self.time_scale.is_some()),
            ("pay_ms", self.pay_ms.is_some()),
            ("abandon_fraction", self.abandon_fraction.is_some()),
            ("pay_fail_fraction", self.pay_fail_fraction.is_some()),
            ("crash_fraction", self.crash_fraction.is_some()),
            ("retry_fraction", self.retry_fraction.is_some()),
            ("customers", self.customers.is_some()),
            ("per_customer_limit", self.per_customer_limit.is_some()),
            ("fail_mode", self.fail_mode.is_some()),
            ("no_wait_expiry", self.no_wait_expiry.is_some()),
            ("outage_at_ms", self.outage_at_ms.is_some()),
            ("outage_ms", self.outage_ms.is_some()),
        ];
        sent.into_iter()
            .find(|(_, set)| *set)
            .map(|(field, _)| field)
    }

    /// The checkout knobs, defaults filled in, each range checked, then the real-time
    /// ceilings (a shop time divided by the time scale).
    fn checkout(&self, buyers: u32) -> Result<CheckoutConfig, ConfigError> {
        let l = CHECKOUT_LIMITS;
        let customers = Range {
            max: buyers,
            default: buyers.div_ceil(2),
            ..l.customers
        };
        let config = CheckoutConfig {
            hold_ttl_ms: check("hold_ttl_ms", self.hold_ttl_ms, l.hold_ttl_ms)?,
            time_scale: check("time_scale", self.time_scale, l.time_scale)?,
            pay_ms: check("pay_ms", self.pay_ms, l.pay_ms)?,
            abandon_fraction: fraction(
                "abandon_fraction",
                self.abandon_fraction,
                l.abandon_fraction,
            )?,
            pay_fail_fraction: fraction(
                "pay_fail_fraction",
                self.pay_fail_fraction,
                l.pay_fail_fraction,
            )?,
            crash_fraction: fraction("crash_fraction", self.crash_fraction, l.crash_fraction)?,
            retry_fraction: fraction("retry_fraction", self.retry_fraction, l.retry_fraction)?,
            customers: check("customers", self.customers, customers)?,
            per_customer_limit: check(
                "per_customer_limit",
                self.per_customer_limit,
                l.per_customer_limit,
            )?,
            fail_mode: self.fail_mode.unwrap_or_default(),
            no_wait_expiry: self.no_wait_expiry.unwrap_or(false),
            outage_at_ms: check("outage_at_ms", self.outage_at_ms, l.outage_at_ms)?,
            outage_ms: check("outage_ms", self.outage_ms, l.outage_ms)?,
        };
        let fates = config.abandon_fraction + config.pay_fail_fraction + config.crash_fraction;
        // A little slack for decimal fractions that add up to 1 on paper (0.7 + 0.2 + 0.1).
        if fates > 1.0 + 1e-9 {
            return Err(ConfigError::FatesOverOne { sum: fates });
        }
        let scale = config.time_scale;
        real_time(
            "hold_ttl_ms",
            config.hold_ttl_ms.into(),
            scale,
            MAX_REAL_PHASE_MS,
        )?;
        real_time(
            "pay_ms",
            2 * u64::from(config.pay_ms),
            scale,
            MAX_REAL_PHASE_MS,
        )?;
        real_time(
            "outage_at_ms",
            config.outage_at_ms.into(),
            scale,
            MAX_REAL_PHASE_MS,
        )?;
        real_time(
            "outage_ms",
            config.outage_ms.into(),
            scale,
            MAX_REAL_OUTAGE_MS,
        )?;
        Ok(config)
    }
}
