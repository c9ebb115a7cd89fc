//! The `cart` and `warehouses` strategies: how a buyer takes an order that touches several
//! counters. One file per strategy; [`REGISTRY`] lists them.
//!
//! A strategy is one `const` [`CartStrategy`]: its self-description (sent in
//! `hello.cart_strategies`), whether its keys share the run's hash tag, and a [`CartBuyer`]
//! that places one order and reports each line. The engine (`crate::cart`) decides who
//! orders what, when, and tallies the shelves.
//!
//! | strategy | scenario | how | oversells | partial carts |
//! | --- | --- | --- | --- | --- |
//! | `naive_cart` | cart | GET, check, DECRBY, line by line | yes | yes |
//! | `per_line` | cart | `reserve.lua` per line, no undo | no | yes |
//! | `half_cart` | cart | `take_cart_lines.lua`: line by line in one script, an error at a short line | no | yes: the error undoes nothing |
//! | `cart_script` | cart | `reserve_cart.lua` over the cart | no | no |
//! | `cart_script_untagged` | cart | the same, keys without a shared tag | no | no (CROSSSLOT on a cluster) |
//! | `saga` | cart | `reserve.lua` per line, `compensate_line.lua` on failure | no | only while it undoes |
//! | `naive_warehouse` | warehouses | GET each, DECRBY the first that looked enough | yes | - |
//! | `warehouse_script` | warehouses | `reserve_warehouse.lua` | no | - |
//!
//! Adding one is one new file in this folder plus one line in [`REGISTRY`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use oversold_protocol::{LineEnd, OutcomeResult, Scenario, StrategyAbout, StrategyInfo};

use crate::store::shelves::{ShelfKeys, Tagging};
use crate::store::{Cause, RedisConn, StoreError};

mod cart_script;
mod cart_script_untagged;
mod half_cart;
mod naive_cart;
mod naive_warehouse;
mod per_line;
mod saga;
mod warehouse_script;

/// Every cart and warehouse strategy, in the order the page lists them.
pub static REGISTRY: [&CartStrategy; 8] = [
    &naive_cart::STRATEGY,
    &per_line::STRATEGY,
    &half_cart::STRATEGY,
    &cart_script::STRATEGY,
    &cart_script_untagged::STRATEGY,
    &saga::STRATEGY,
    &naive_warehouse::STRATEGY,
    &warehouse_script::STRATEGY,
];

/// Find a strategy by its wire name.
pub fn find(name: &str) -> Option<&'static CartStrategy> {
    REGISTRY.iter().copied().find(|s| s.name() == name)
}

/// The strategies of one scenario (`cart` or `warehouses`).
pub fn of(scenario: Scenario) -> impl Iterator<Item = &'static CartStrategy> {
    REGISTRY
        .iter()
        .copied()
        .filter(move |s| s.about.scenario == scenario)
}

/// One way of taking a multi-key order.
pub struct CartStrategy {
    /// Every word the page shows about it; `about.scenario` is `cart` or `warehouses`.
    pub about: StrategyAbout,
    /// Whether its keys share the run's hash tag.
    pub tagging: Tagging,
    /// How it places an order.
    pub buyer: &'static dyn CartBuyer,
}

impl CartStrategy {
    /// The wire name, e.g. `"saga"`.
    pub fn name(&self) -> &str {
        &self.about.name
    }

    /// The `hello` entry: these need only Redis, so they are always offered. (On a cluster
    /// `cart_script_untagged` is offered too: being refused is its lesson.)
    pub fn info(&self) -> StrategyInfo {
        StrategyInfo::always_available(self.about.clone())
    }
}

/// One order, as a buyer places it.
#[derive(Debug, Clone)]
pub struct Order {
    /// The run's shelf keys.
    pub keys: Arc<ShelfKeys>,
    /// 1-based buyer number (names a saga's lines).
    pub buyer: u32,
    /// A cart: (shelf, qty) per line, in the order the buyer takes them. A warehouse
    /// order: every warehouse, preferred first then nearest first, each with the order's
    /// whole quantity.
    pub lines: Vec<(u32, u32)>,
    /// A warehouse order may be split over warehouses.
    pub split: bool,
    /// Simulated app work between a read and the write that depends on it.
    pub race_window: Duration,
}

/// One line, as it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineResult {
    /// The shelf.
    pub shelf: u32,
    /// Units asked of it.
    pub qty: u32,
    /// Units it gave.
    pub taken: u32,
    /// The count read before deciding, where the strategy reads one.
    pub observed: Option<i64>,
    /// How it ended.
    pub end: LineEnd,
}

/// What placing one order came to.
#[derive(Debug, Clone)]
pub struct Bought {
    /// In race terms: `reserved` only when the whole order was taken.
    pub result: OutcomeResult,
    /// Why, for `error` and `unknown`.
    pub error: Option<String>,
    /// Every line, in the order tried.
    pub lines: Vec<LineResult>,
    /// Requests sent.
    pub round_trips: u32,
    /// Lines given back by compensation.
    pub compensations: u32,
    /// A doomed order's units held from its first take to its last undo.
    pub doomed_hold: Option<Duration>,
    /// True when its error says Redis itself is unreachable (the run may stop early).
    pub outage: bool,
    /// True when a Redis Cluster refused it with `CROSSSLOT` (the run fails with that).
    pub cross_slot: bool,
}

impl Bought {
    /// An order whose lines start untried.
    pub fn start(order: &Order) -> Self {
        Bought {
            result: OutcomeResult::SoldOut,
            error: None,
            lines: order
                .lines
                .iter()
                .map(|&(shelf, qty)| LineResult {
                    shelf,
                    qty,
                    taken: 0,
                    observed: None,
                    end: LineEnd::Skipped,
                })
                .collect(),
            round_trips: 0,
            compensations: 0,
            doomed_hold: None,
            outage: false,
            cross_slot: false,
        }
    }

    /// Line `i` failed with `error`: in doubt (`unknown`) when it may have been applied.
    pub fn failed(&mut self, i: usize, error: &StoreError) {
        let doubt = error.in_doubt();
        self.lines[i].end = if doubt {
            LineEnd::Unknown
        } else {
            LineEnd::Failed
        };
        self.result = if doubt {
            OutcomeResult::Unknown
        } else {
            OutcomeResult::Error
        };
        self.cross_slot = error.cause() == Cause::CrossSlot;
        // Redis's own words for a refusal the page teaches (the client's display of a
        // CROSSSLOT reply renames it).
        self.error = Some(match error.reply_detail() {
            Some(detail) if self.cross_slot => format!("CROSSSLOT {detail}"),
            _ => error.short(),
        });
        self.outage = error.is_outage();
    }

    /// The order's one script call failed (`round_trips` requests sent): every line shares
    /// its fate.
    pub fn script_failed(&mut self, error: &StoreError, round_trips: u32) {
        self.round_trips += round_trips;
        for i in 0..self.lines.len() {
            self.failed(i, error);
        }
    }

    /// The order failed: whatever lines it still holds are stranded.
    pub fn strand_taken(&mut self) {
        for line in &mut self.lines {
            if line.end == LineEnd::Taken {
                line.end = LineEnd::Stranded;
            }
        }
    }

    /// The order went through.
    pub fn accept(&mut self) {
        self.result = OutcomeResult::Reserved;
    }
}

/// When a saga began to hold units it later gave back, and when it stopped.
pub fn window(first_take: Option<Instant>) -> Option<Duration> {
    first_take.map(|t| t.elapsed())
}

/// The Redis side of a multi-key order. Gets its app server's connection (shared,
/// pipelined); must not panic on store errors: report them in the [`Bought`].
pub trait CartBuyer: Sync {
    /// Place `order`.
    fn buy(&self, conn: RedisConn, order: Order) -> BoxFuture<'static, Bought>;
}

/// Simulated app work between a read and the write that depends on it (none when zero).
pub async fn app_work(race_window: Duration) {
    if !race_window.is_zero() {
        tokio::time::sleep(race_window).await;
    }
}
