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

/// Most buyers in one run.
pub const MAX_BUYERS: u32 = 10_000;
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

/// Every range in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
}

/// The limits this protocol version enforces.
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
};
