//! The accepted range of every run knob, and the defaults. Out of range is an error, never a clamp.

use serde::{Deserialize, Serialize};

/// Default units in stock.
pub const DEFAULT_STOCK: u32 = 10;
/// Default number of buyers.
pub const DEFAULT_BUYERS: u32 = 50;
/// Default units per order.
pub const DEFAULT_QTY: u32 = 1;
/// Default number of app servers (Redis connections).
pub const DEFAULT_APP_SERVERS: u32 = 8;

/// Most buyers in one run: what a server sends in `hello` unless started to allow more,
/// and the cap of every scenario but the race.
pub const MAX_BUYERS: u32 = 10_000;
/// Most buyers in one race anywhere: the CLI's cap (`oversold run`, `compare`), and what a
/// server started with `--max-buyers` may allow (never a `--public` one). A flash sale is a
/// million people for ten thousand units.
pub const MAX_BUYERS_AT_SCALE: u32 = 1_000_000;
/// Most units in stock.
pub const MAX_STOCK: u32 = 100_000;
/// Most units in one order.
pub const MAX_QTY: u32 = 100;
/// Most app servers.
pub const MAX_APP_SERVERS: u32 = 256;
/// Longest arrival window, ms.
pub const MAX_ARRIVAL_SPREAD_MS: u32 = 60_000;
/// Longest race window, ms.
pub const MAX_RACE_WINDOW_MS: u32 = 5_000;
/// Fewest buyers in step-through mode (one alone cannot race).
pub const MIN_STEP_BUYERS: u32 = 2;
/// Most buyers in step-through mode (one key each on a keyboard, and room on a phone).
pub const MAX_STEP_BUYERS: u32 = 4;

/// Default hold, shop ms: five minutes.
pub const DEFAULT_HOLD_TTL_MS: u32 = 300_000;
/// Default shop ms per real ms: a five-minute hold lasts fifteen real seconds and a minute's
/// payment three, a pace the eye can follow on a projector (at 100 a default checkout was
/// over in about a second). The page's form starts here too (`hello.limits`).
pub const DEFAULT_TIME_SCALE: u32 = 20;
/// Default payment time, shop ms: a minute.
pub const DEFAULT_PAY_MS: u32 = 60_000;
/// Longest shop time any checkout knob may name: an hour.
pub const MAX_SHOP_MS: u32 = 3_600_000;
/// Longest real time a hold, a payment (at its slowest, twice `pay_ms`) or the wait for an
/// outage may take once scaled: a run must end while the audience still watches.
pub const MAX_REAL_PHASE_MS: u64 = 60_000;
/// Longest real outage. Shorter than the server's 3 s Redis response timeout, so a confirm
/// or a release stuck behind the pause is answered late rather than lost: the outage shows
/// what the fail mode does to *new* orders, not a different failure.
pub const MAX_REAL_OUTAGE_MS: u64 = 2_000;
/// Most units one customer may be allowed.
pub const MAX_PER_CUSTOMER_LIMIT: u32 = 1_000;

/// An inclusive range, as sent in `hello` so a page can size its sliders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Range {
    /// Smallest accepted value.
    pub min: u32,
    /// Largest accepted value.
    pub max: u32,
    /// The value used when the field is left out.
    pub default: u32,
}

/// An inclusive range of a fraction, as sent in `hello`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FractionRange {
    /// Smallest accepted value (0.0).
    pub min: f64,
    /// Largest accepted value (1.0).
    pub max: f64,
    /// The value used when the field is left out.
    pub default: f64,
}

/// The checkout scenario's ranges. Shop times are in shop ms; each also has a real-time
/// ceiling once divided by `time_scale` ([`MAX_REAL_PHASE_MS`], [`MAX_REAL_OUTAGE_MS`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CheckoutLimits {
    /// `hold_ttl_ms`.
    pub hold_ttl_ms: Range,
    /// `time_scale`.
    pub time_scale: Range,
    /// `pay_ms`.
    pub pay_ms: Range,
    /// `abandon_fraction`.
    pub abandon_fraction: FractionRange,
    /// `pay_fail_fraction`.
    pub pay_fail_fraction: FractionRange,
    /// `crash_fraction`.
    pub crash_fraction: FractionRange,
    /// `retry_fraction`.
    pub retry_fraction: FractionRange,
    /// `customers`: at most `buyers`; left out, half the buyers rounded up (the `default`
    /// here is that for the default crowd).
    pub customers: Range,
    /// `per_customer_limit`.
    pub per_customer_limit: Range,
    /// `outage_at_ms`.
    pub outage_at_ms: Range,
    /// `outage_ms` (0: no outage).
    pub outage_ms: Range,
}

impl Default for CheckoutLimits {
    fn default() -> Self {
        CHECKOUT_LIMITS
    }
}

const fn fraction(default: f64) -> FractionRange {
    FractionRange {
        min: 0.0,
        max: 1.0,
        default,
    }
}

/// The checkout ranges this protocol version enforces.
pub const CHECKOUT_LIMITS: CheckoutLimits = CheckoutLimits {
    hold_ttl_ms: Range {
        min: 100,
        max: MAX_SHOP_MS,
        default: DEFAULT_HOLD_TTL_MS,
    },
    time_scale: Range {
        min: 1,
        max: 100_000,
        default: DEFAULT_TIME_SCALE,
    },
    pay_ms: Range {
        min: 0,
        max: MAX_SHOP_MS,
        default: DEFAULT_PAY_MS,
    },
    abandon_fraction: fraction(0.2),
    pay_fail_fraction: fraction(0.1),
    crash_fraction: fraction(0.1),
    retry_fraction: fraction(0.2),
    customers: Range {
        min: 1,
        max: MAX_BUYERS,
        default: DEFAULT_BUYERS.div_ceil(2),
    },
    per_customer_limit: Range {
        min: 1,
        max: MAX_PER_CUSTOMER_LIMIT,
        default: 1,
    },
    outage_at_ms: Range {
        min: 0,
        max: MAX_SHOP_MS,
        default: 0,
    },
    outage_ms: Range {
        min: 0,
        max: MAX_SHOP_MS,
        default: 0,
    },
};

/// Every range in one place.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// `stock`.
    pub stock: Range,
    /// `buyers`.
    pub buyers: Range,
    /// `qty` and `max_qty`.
    pub qty: Range,
    /// `app_servers`.
    pub app_servers: Range,
    /// `arrival_spread_ms`.
    pub arrival_spread_ms: Range,
    /// `race_window_ms`.
    pub race_window_ms: Range,
    /// The checkout scenario's knobs (protocol version 3).
    #[serde(default)]
    pub checkout: CheckoutLimits,
    /// The `cart` and `warehouses` scenarios' knobs.
    #[serde(default)]
    pub cart: CartLimits,
}

/// The `cart` and `warehouses` scenarios' ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CartLimits {
    /// `skus`; `max_lines` has the same range, is at most `skus`, and left out is `skus`.
    pub skus: Range,
    /// `warehouses`.
    pub warehouses: Range,
}

impl Default for CartLimits {
    fn default() -> Self {
        CART_LIMITS
    }
}

/// The `cart` and `warehouses` ranges: as many shelves as the catalogue has names.
pub const CART_LIMITS: CartLimits = CartLimits {
    skus: Range {
        min: 1,
        max: crate::cart::SKU_NAMES.len() as u32,
        default: 3,
    },
    warehouses: Range {
        min: 2,
        max: crate::cart::WAREHOUSE_NAMES.len() as u32,
        default: 3,
    },
};

impl Limits {
    /// These limits with races of up to `max_buyers` buyers, kept between [`MAX_BUYERS`] and
    /// [`MAX_BUYERS_AT_SCALE`]. Only the race scenario takes more than [`MAX_BUYERS`]: the
    /// others (and a checkout's customers) keep theirs.
    pub const fn with_max_buyers(self, max_buyers: u32) -> Limits {
        let max = if max_buyers < MAX_BUYERS {
            MAX_BUYERS
        } else if max_buyers > MAX_BUYERS_AT_SCALE {
            MAX_BUYERS_AT_SCALE
        } else {
            max_buyers
        };
        Limits {
            buyers: Range { max, ..self.buyers },
            ..self
        }
    }
}

/// The limits this protocol version enforces by default (a public server's).
pub const LIMITS: Limits = Limits {
    stock: Range {
        min: 0,
        max: MAX_STOCK,
        default: DEFAULT_STOCK,
    },
    buyers: Range {
        min: 1,
        max: MAX_BUYERS,
        default: DEFAULT_BUYERS,
    },
    qty: Range {
        min: 1,
        max: MAX_QTY,
        default: DEFAULT_QTY,
    },
    app_servers: Range {
        min: 1,
        max: MAX_APP_SERVERS,
        default: DEFAULT_APP_SERVERS,
    },
    arrival_spread_ms: Range {
        min: 0,
        max: MAX_ARRIVAL_SPREAD_MS,
        default: 0,
    },
    race_window_ms: Range {
        min: 0,
        max: MAX_RACE_WINDOW_MS,
        default: 0,
    },
    checkout: CHECKOUT_LIMITS,
    cart: CART_LIMITS,
};
