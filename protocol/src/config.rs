//! A race's knobs: as a client asks for them ([`RunRequest`]), and as the server fills them in
//! ([`RaceConfig`], plus the strategy in [`RunConfig`]).
//!
//! The checkout scenario's knobs (protocol version 3) sit in the same flat object; a client
//! that never sends them gets a `race`, exactly as before.

use serde::{Deserialize, Serialize};

use crate::cart::{CartConfig, WarehouseConfig};
use crate::checkout::{CheckoutConfig, FailMode, Scenario};
use crate::eviction::{EvictionConfig, EvictionPolicy};

/// A race as a client asks for it: every knob may be left out.
///
/// `start_run` needs `strategy`; `start_compare` races every strategy and refuses one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// `race` (default), `checkout`, `cart` or `warehouses`. Each field below belongs to one
    /// scenario (the checkout's, then the cart's and the warehouses'), and is refused in any
    /// other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<Scenario>,
    /// How long a hold lasts, shop ms (default 300,000: five minutes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold_ttl_ms: Option<u32>,
    /// Shop ms per real ms (default 20: a five-minute hold lasts fifteen real seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_scale: Option<u32>,
    /// Typical payment time, shop ms (default 60,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pay_ms: Option<u32>,
    /// Share of buyers who walk away after reserving, 0.0–1.0 (default 0.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abandon_fraction: Option<f64>,
    /// Share of buyers whose payment is declined, 0.0–1.0 (default 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pay_fail_fraction: Option<f64>,
    /// Share of buyers whose app server dies after reserving, 0.0–1.0 (default 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crash_fraction: Option<f64>,
    /// Share of buyers whose client resends its reserve request, 0.0–1.0 (default 0.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_fraction: Option<f64>,
    /// Distinct customers, 1 to `buyers` (default: half the buyers, rounded up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customers: Option<u32>,
    /// Most units one customer may hold or have bought (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_customer_limit: Option<u32>,
    /// `closed` (default) or `open`: what happens to an order while Redis is unreachable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_mode: Option<FailMode>,
    /// End when the last buyer is done instead of waiting for the last hold to expire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_wait_expiry: Option<bool>,
    /// When the server pauses its own Redis, shop ms after the gate (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outage_at_ms: Option<u32>,
    /// How long it stays paused, shop ms (default 0: no outage). Refused unless the server
    /// started its Redis itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outage_ms: Option<u32>,
    /// `cart` only: SKUs in the catalogue, 1–8 (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skus: Option<u32>,
    /// `cart` only: most lines per cart, 1 to `skus` (default: `skus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lines: Option<u32>,
    /// `warehouses` only: warehouses the stock is split over, 2–8 (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warehouses: Option<u32>,
    /// `warehouses` only: may an order be split over warehouses (default false)?
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<bool>,
    /// `eviction` only: the run's Redis's `maxmemory-policy` (default `allkeys-lru`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<EvictionPolicy>,
}

/// The JSON type a [`RunRequest`] field must have: what a server checks before serde does,
/// so a mistyped field gets a precise error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A string (`strategy`), or one of a few words (`scenario`, `fail_mode`).
    Text,
    /// A whole number from 0 to 2^32-1.
    Whole32,
    /// A whole number from 0 to 2^64-1 (`seed`).
    Whole64,
    /// Any JSON number; the range check wants 0.0 to 1.0.
    Fraction,
    /// `true` or `false`.
    Flag,
}

impl FieldKind {
    /// What a value of this kind must be, in words: `true or false`. (`scenario` and
    /// `fail_mode` name their own words.)
    pub fn expected(self) -> &'static str {
        match self {
            FieldKind::Text => "a string",
            FieldKind::Whole64 => "a whole number from 0 to 2^64-1",
            FieldKind::Whole32 => "a whole number from 0 to 4294967295",
            FieldKind::Fraction => "a number from 0.0 to 1.0",
            FieldKind::Flag => "true or false",
        }
    }
}

impl RunRequest {
    /// The JSON names of every field, in declaration order. A server uses them to tell an
    /// unknown field from a mistyped one without reading serde's messages; a test pins them
    /// to what serde actually accepts.
    pub const FIELDS: [&'static str; 28] = [
        "strategy",
        "stock",
        "buyers",
        "qty",
        "max_qty",
        "app_servers",
        "arrival_spread_ms",
        "race_window_ms",
        "seed",
        "scenario",
        "hold_ttl_ms",
        "time_scale",
        "pay_ms",
        "abandon_fraction",
        "pay_fail_fraction",
        "crash_fraction",
        "retry_fraction",
        "customers",
        "per_customer_limit",
        "fail_mode",
        "no_wait_expiry",
        "outage_at_ms",
        "outage_ms",
        "skus",
        "max_lines",
        "warehouses",
        "split",
        "policy",
    ];

    /// The JSON type each of [`RunRequest::FIELDS`] must have; `None` for an unknown name.
    pub fn field_kind(name: &str) -> Option<FieldKind> {
        Some(match name {
            "strategy" | "scenario" | "fail_mode" | "policy" => FieldKind::Text,
            "seed" => FieldKind::Whole64,
            "abandon_fraction" | "pay_fail_fraction" | "crash_fraction" | "retry_fraction" => {
                FieldKind::Fraction
            }
            "no_wait_expiry" | "split" => FieldKind::Flag,
            other if Self::FIELDS.contains(&other) => FieldKind::Whole32,
            _ => return None,
        })
    }

    /// A request for `strategy` with every knob left to its default.
    pub fn for_strategy(strategy: impl Into<String>) -> Self {
        RunRequest {
            strategy: Some(strategy.into()),
            ..Default::default()
        }
    }
}

/// Every knob of a race with its default filled in: what `start_compare` races every
/// strategy with, and (with a strategy) what one run uses. Read by [`RaceConfig::from_object`]
/// (see there); written in the derived shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
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
    /// The scenario and its own knobs. On the wire: `scenario` (absent in version 2
    /// frames: `race`) and the scenario's knobs flat beside the others.
    #[serde(flatten, skip_deserializing)]
    pub knobs: Knobs,
}

/// A scenario and the knobs only it has: one value, so a checkout run always has its
/// checkout knobs and a race has none (no `Option` beside `scenario` to check by hand).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(into = "FlatKnobs")]
pub enum Knobs {
    /// The race: no knobs of its own.
    #[default]
    Race,
    /// A checkout: holds, payment, fates, the fail mode.
    Checkout(CheckoutConfig),
    /// Carts over several SKUs.
    Cart(CartConfig),
    /// One product in several warehouses.
    Warehouses(WarehouseConfig),
    /// A sale stalled by one long script: no knobs of its own.
    BusyScript,
    /// A sale crashed and restarted from disk: no knobs of its own (the persistence setting
    /// is the strategy, so a comparison races the four side by side).
    Durability,
    /// A sale on a Redis out of memory: the eviction policy.
    Eviction(EvictionConfig),
    /// A sale across a failover: no knobs of its own.
    Failover,
}

/// [`Knobs`] as protocol version 3 writes them: `scenario`, then each scenario's fields
/// flat. Only serde sees this shape; [`Knobs::from_object`] reads it.
#[derive(Serialize)]
struct FlatKnobs {
    scenario: Scenario,
    #[serde(flatten)]
    checkout: Option<CheckoutConfig>,
    #[serde(flatten)]
    cart: Option<CartConfig>,
    #[serde(flatten)]
    warehouses: Option<WarehouseConfig>,
    #[serde(flatten)]
    eviction: Option<EvictionConfig>,
}

impl From<Knobs> for FlatKnobs {
    fn from(knobs: Knobs) -> Self {
        let scenario = knobs.scenario();
        let (mut checkout, mut cart, mut warehouses, mut eviction) = (None, None, None, None);
        match knobs {
            Knobs::Race | Knobs::BusyScript | Knobs::Durability | Knobs::Failover => {}
            Knobs::Checkout(c) => checkout = Some(c),
            Knobs::Cart(c) => cart = Some(c),
            Knobs::Warehouses(w) => warehouses = Some(w),
            Knobs::Eviction(e) => eviction = Some(e),
        }
        FlatKnobs {
            scenario,
            checkout,
            cart,
            warehouses,
            eviction,
        }
    }
}

impl Knobs {
    /// The knobs in a config's object: `scenario` (absent: `race`), then the one scenario
    /// config it names, read from the same object (its keys sit flat beside the others).
    fn from_object(object: &serde_json::Value) -> Result<Self, serde_json::Error> {
        let scenario = match object.get("scenario") {
            Some(name) => Scenario::deserialize(name)?,
            None => Scenario::Race,
        };
        Ok(match scenario {
            Scenario::Race => Knobs::Race,
            Scenario::Checkout => Knobs::Checkout(scenario_knobs(scenario, "checkout", object)?),
            Scenario::Cart => Knobs::Cart(scenario_knobs(scenario, "cart", object)?),
            Scenario::Warehouses => {
                Knobs::Warehouses(scenario_knobs(scenario, "warehouse", object)?)
            }
            Scenario::BusyScript => Knobs::BusyScript,
            Scenario::Durability => Knobs::Durability,
            Scenario::Eviction => Knobs::Eviction(scenario_knobs(scenario, "policy", object)?),
            Scenario::Failover => Knobs::Failover,
        })
    }

    /// Which scenario these are the knobs of.
    pub fn scenario(&self) -> Scenario {
        match self {
            Knobs::Race => Scenario::Race,
            Knobs::Checkout(_) => Scenario::Checkout,
            Knobs::Cart(_) => Scenario::Cart,
            Knobs::Warehouses(_) => Scenario::Warehouses,
            Knobs::BusyScript => Scenario::BusyScript,
            Knobs::Durability => Scenario::Durability,
            Knobs::Eviction(_) => Scenario::Eviction,
            Knobs::Failover => Scenario::Failover,
        }
    }
}

/// One scenario's own knobs, read from the whole config object; an error says which are
/// missing.
fn scenario_knobs<T: serde::de::DeserializeOwned>(
    scenario: Scenario,
    what: &str,
    object: &serde_json::Value,
) -> Result<T, serde_json::Error> {
    use serde::de::Error;
    T::deserialize(object)
        .map_err(|e| Error::custom(format!("a {scenario} config without its {what} knobs: {e}")))
}

impl RaceConfig {
    /// Read from a config's object in one tree: the race's own fields by the derived reader,
    /// the knobs by [`Knobs::from_object`]. serde's `flatten` (twice: a run's config flattens
    /// the race's, which flattens the scenario's) would copy the object into a buffer of its
    /// own at each level and carry a reader of every scenario config for that buffer too.
    pub fn from_object(object: &serde_json::Value) -> Result<Self, serde_json::Error> {
        let mut race = RaceConfig::deserialize(object)?;
        race.knobs = Knobs::from_object(object)?;
        Ok(race)
    }
}

impl Serialize for RaceConfig {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RaceConfig::serialize(self, serializer)
    }
}

impl<'de> Deserialize<'de> for RaceConfig {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = serde_json::Value::deserialize(deserializer)?;
        RaceConfig::from_object(&object).map_err(serde::de::Error::custom)
    }
}

/// One run's configuration: a strategy and the race's knobs. On the wire the knobs sit beside
/// `strategy` in one flat object, as in protocol version 1.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunConfig {
    /// Strategy name.
    pub strategy: String,
    /// The knobs.
    #[serde(flatten)]
    pub race: RaceConfig,
}

impl<'de> Deserialize<'de> for RunConfig {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let object = serde_json::Value::deserialize(deserializer)?;
        let strategy = match object.get("strategy") {
            Some(name) => String::deserialize(name).map_err(D::Error::custom)?,
            None => return Err(D::Error::missing_field("strategy")),
        };
        let race = RaceConfig::from_object(&object).map_err(D::Error::custom)?;
        Ok(RunConfig { strategy, race })
    }
}

impl RaceConfig {
    /// Which scenario this is.
    pub fn scenario(&self) -> Scenario {
        self.knobs.scenario()
    }

    /// The checkout knobs, in a checkout.
    pub fn checkout(&self) -> Option<&CheckoutConfig> {
        match &self.knobs {
            Knobs::Checkout(c) => Some(c),
            _ => None,
        }
    }

    /// The checkout knobs to change, in a checkout.
    pub fn checkout_mut(&mut self) -> Option<&mut CheckoutConfig> {
        match &mut self.knobs {
            Knobs::Checkout(c) => Some(c),
            _ => None,
        }
    }

    /// The cart knobs, in a cart run.
    pub fn cart(&self) -> Option<CartConfig> {
        match self.knobs {
            Knobs::Cart(c) => Some(c),
            _ => None,
        }
    }

    /// The warehouse knobs, in a warehouses run.
    pub fn warehouses(&self) -> Option<WarehouseConfig> {
        match self.knobs {
            Knobs::Warehouses(w) => Some(w),
            _ => None,
        }
    }

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
        let race = format!(
            "stock {}, {} buyers, qty {}, {} app servers, spread {} ms, race window {} ms, seed {}",
            self.stock,
            self.buyers,
            qty,
            self.app_servers,
            self.arrival_spread_ms,
            self.race_window_ms,
            self.seed
        );
        if let Some(c) = self.cart() {
            return format!("{race}; cart: {} SKUs, up to {} lines", c.skus, c.max_lines);
        }
        if let Some(w) = self.warehouses() {
            let split = if w.split { ", split allowed" } else { "" };
            return format!("{race}; {} warehouses{split}", w.warehouses);
        }
        if let Knobs::Eviction(e) = self.knobs {
            return format!("{race}; eviction: maxmemory-policy {}", e.policy);
        }
        if self.scenario() == Scenario::BusyScript {
            return format!("{race}; busy_script: one slow client mid-sale");
        }
        if self.scenario() == Scenario::Durability {
            return format!("{race}; durability: Redis killed mid-sale, restarted from disk");
        }
        if self.scenario() == Scenario::Failover {
            return format!("{race}; failover: the primary dies while its replica lags");
        }
        match self.checkout() {
            None => race,
            Some(c) => format!("{race}; checkout: {}", c.describe()),
        }
    }
}

impl CheckoutConfig {
    /// The checkout knobs in one line.
    pub fn describe(&self) -> String {
        let outage = match self.outage_ms {
            0 => String::new(),
            ms => format!(", Redis paused {ms} ms at {} ms", self.outage_at_ms),
        };
        format!(
            "hold {} ms, x{} time, pay ~{} ms, abandon {}, declined {}, crash {}, resend {}, \
             {} customers, limit {}, fail {}{}{}",
            self.hold_ttl_ms,
            self.time_scale,
            self.pay_ms,
            self.abandon_fraction,
            self.pay_fail_fraction,
            self.crash_fraction,
            self.retry_fraction,
            self.customers,
            self.per_customer_limit,
            self.fail_mode,
            if self.no_wait_expiry {
                ", no wait for expiry"
            } else {
                ""
            },
            outage
        )
    }
}

impl RunConfig {
    /// A one-line human description, e.g. `naive: stock 10, 50 buyers, …`.
    pub fn describe(&self) -> String {
        format!("{}: {}", self.strategy, self.race.describe())
    }
}
