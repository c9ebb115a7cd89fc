//! The multi-key scenarios: a cart of several SKUs bought all or nothing (`cart`), and one
//! SKU stocked in several warehouses (`warehouses`).
//!
//! Both put stock on several *shelves* (one counter per SKU, or per warehouse) instead of
//! one. A buyer's order touches several of them, which is where one atomic command stops
//! being enough: a cart either takes every line or none, and a warehouse order must not
//! take from a warehouse that has run out while looking elsewhere.
//!
//! # Conservation, per shelf
//! For every shelf and every strategy: `stock = final_stock + units_sold + stranded_units`,
//! where `units_sold` are in accepted orders and `stranded_units` were taken by an order
//! that failed and never given back. A shelf oversold ends with a negative `final_stock`;
//! its `oversold_units` is `-final_stock`.
//!
//! # Layout
//! - [`CartConfig`], [`WarehouseConfig`]: the knobs, filled in (flat in the run's config).
//! - [`CartStory`], [`CartLine`], [`LineEnd`]: one buyer's order, line by line, on its
//!   `BuyerOutcome` (`outcomes[].cart`).
//! - [`CartTally`], [`ShelfLedger`]: the end of a run, flat in its summary.

use serde::{Deserialize, Serialize};

use crate::wire_names::wire_names;

/// The `cart` scenario's knobs with defaults filled in (flat in `run_started.config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CartConfig {
    /// SKUs in the catalogue (phone, case, charger, ...), each with its own stock.
    pub skus: u32,
    /// Most lines in one cart; each cart has a seeded 1..=`max_lines` distinct SKUs.
    pub max_lines: u32,
}

/// The `warehouses` scenario's knobs with defaults filled in (flat in `run_started.config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarehouseConfig {
    /// Warehouses the stock is split over (as evenly as it goes).
    pub warehouses: u32,
    /// When true, an order no single warehouse can fill may be split: what the preferred
    /// one has, the rest from the next nearest.
    pub split: bool,
}

/// How one line of an order ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LineEnd {
    /// The units are the buyer's (the order went through).
    Taken,
    /// Taken, then the order failed and nothing gave them back: stranded.
    Stranded,
    /// Taken, then given back when the order failed (a saga's compensation).
    Compensated,
    /// Too few units on this shelf.
    SoldOut,
    /// Never tried: an earlier line failed, or another shelf served the order.
    Skipped,
    /// Sent, no answer: the units may or may not have been taken.
    Unknown,
    /// A store error; nothing was taken.
    Failed,
}

wire_names! { LineEnd {
    Taken = "taken",
    Stranded = "stranded",
    Compensated = "compensated",
    SoldOut = "sold_out",
    Skipped = "skipped",
    Unknown = "unknown",
    Failed = "failed",
} }

/// One line of an order: a SKU of a cart, or a warehouse tried for a warehouse order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CartLine {
    /// 0-based shelf: the SKU's index in the catalogue, or the warehouse's.
    pub shelf: u32,
    /// Units this line asks for (for a warehouse, what was asked of it).
    pub qty: u32,
    /// Units this line took off its shelf (0 unless `Taken`, `Stranded` or `Compensated`).
    pub taken: u32,
    /// The shelf's count the strategy read before deciding, where it reads one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<i64>,
    /// How it ended.
    pub end: LineEnd,
    /// On a Redis Cluster, the node serving this shelf's key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

/// One buyer's multi-key order, on its `BuyerOutcome` (`outcomes[].cart`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CartStory {
    /// The lines, in the order the buyer tried them (a warehouse order: preferred first,
    /// then nearest first).
    pub lines: Vec<CartLine>,
    /// True when the order failed with some units still taken (stranded).
    pub partial: bool,
    /// Lines given back by compensation.
    pub compensations: u32,
    /// A warehouse order served (wholly or partly) by a warehouse other than the preferred.
    pub fallback: bool,
    /// How long a doomed order held units before giving them back, µs: from its first take
    /// to its last compensation (a saga). Other buyers were refused those units meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doomed_hold_us: Option<u64>,
}

/// One shelf at the end of a run: its ledger must add up
/// (`stock = final_stock + units_sold + stranded_units`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShelfLedger {
    /// The SKU's or warehouse's name, e.g. `phone` or `north`.
    pub name: String,
    /// Units before the run.
    pub stock: u32,
    /// Units in accepted orders.
    pub units_sold: u64,
    /// The counter read back after the run.
    pub final_stock: i64,
    /// `max(0, -final_stock)`: units taken that never existed.
    pub oversold_units: u64,
    /// Units taken by failed orders and never given back.
    pub stranded_units: u64,
    /// On a Redis Cluster, the node serving this shelf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

impl ShelfLedger {
    /// Units the ledger cannot explain: `stock - final_stock - units_sold - stranded_units`
    /// (zero when it adds up).
    pub fn unexplained(&self) -> i64 {
        i64::from(self.stock)
            - self.final_stock
            - self.units_sold as i64
            - self.stranded_units as i64
    }
}

/// The end of a `cart` or `warehouses` run: on the wire these fields sit flat in the
/// summary. The summary's `oversold_units` is the sum of the shelves' own.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CartTally {
    /// Orders that failed with units still taken.
    pub partial_carts: u32,
    /// Units taken by failed orders and never given back.
    pub stranded_units: u64,
    /// Lines given back by compensation.
    pub compensations: u32,
    /// Accepted orders served (wholly or partly) by a warehouse other than the preferred.
    pub fallback_orders: u32,
    /// The longest time a doomed order held units, µs (a saga's window).
    #[serde(default)]
    pub longest_doomed_hold_us: u64,
    /// The run's strategy would be refused by a Redis Cluster (`CROSSSLOT`): it ran on a
    /// single Redis, where every key is on the one node. The sentence says why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub would_fail_on_cluster: Option<String>,
    /// Per SKU, in a `cart` run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_sku: Option<Vec<ShelfLedger>>,
    /// Per warehouse, in a `warehouses` run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_warehouse: Option<Vec<ShelfLedger>>,
}

impl CartTally {
    /// The shelves, whichever scenario.
    pub fn shelves(&self) -> &[ShelfLedger] {
        self.per_sku
            .as_deref()
            .or(self.per_warehouse.as_deref())
            .unwrap_or(&[])
    }
}

/// The catalogue's SKU names, in order: a `cart` run with `skus = n` sells the first `n`.
pub const SKU_NAMES: [&str; 8] = [
    "phone", "case", "charger", "cable", "earbuds", "stand", "sleeve", "adapter",
];
/// Each SKU's stock, in halves of the run's `stock`: the phone is the scarce one.
const SKU_STOCK_HALVES: [u32; 8] = [2, 4, 3, 5, 2, 4, 3, 5];
/// The warehouses' names, west to east: a `warehouses` run with `warehouses = n` uses the
/// first `n`, and "nearest" means fewest places apart in this list.
pub const WAREHOUSE_NAMES: [&str; 8] = [
    "harbour", "west", "north", "central", "south", "east", "valley", "airport",
];

/// The `cart` scenario's catalogue for a run of `stock`: each SKU's name and stock
/// (`stock` times 1, 2, 1.5, 2.5, ... rounded down). Server and page both call this, so
/// the page can draw the shelves before the first outcome arrives.
pub fn catalogue(skus: u32, stock: u32) -> Vec<(&'static str, u32)> {
    SKU_NAMES
        .iter()
        .zip(SKU_STOCK_HALVES)
        .take(skus as usize)
        .map(|(&name, halves)| (name, (u64::from(stock) * u64::from(halves) / 2) as u32))
        .collect()
}

/// The `warehouses` scenario's shelves for a run of `stock`: the units split as evenly as
/// they go, the remainder to the first warehouses (10 over 3 is 4, 3, 3).
pub fn warehouses(count: u32, stock: u32) -> Vec<(&'static str, u32)> {
    let n = count.clamp(1, WAREHOUSE_NAMES.len() as u32);
    WAREHOUSE_NAMES
        .iter()
        .take(n as usize)
        .enumerate()
        .map(|(i, &name)| (name, stock / n + u32::from((i as u32) < stock % n)))
        .collect()
}
