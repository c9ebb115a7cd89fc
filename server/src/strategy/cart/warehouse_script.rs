//! `warehouse_script`: the preferred warehouse, else the nearest that can fill the order
//! (or, with split allowed, what each has in turn), in one Lua script,
//! `reserve_warehouse.lua`.
//!
//! The look and the take happen inside one script, with no other command in between, so
//! no warehouse ever goes below zero and an order is never half taken. The warehouses'
//! keys share the run's hash tag, so on a cluster they sit on one node.

use std::borrow::Cow;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, LineEnd, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{Bought, CartBuyer, CartStrategy, Order};
use crate::store::RedisConn;
use crate::store::shelves::{self, Tagging};

/// Preferred, then fallback, inside one script.
pub const STRATEGY: CartStrategy = CartStrategy {
    about: StrategyAbout {
        name: text("warehouse_script"),
        label: text("Warehouse script (fallback inside reserve_warehouse.lua)"),
        short_label: text("Warehouse script"),
        description: text(
            "Checks the preferred warehouse and falls back to the nearest that can fill the order, all in one Lua script: no warehouse oversells.",
        ),
        unsafe_by_design: false,
        category: Category::Atomic,
        featured: true,
        scripts: Cow::Borrowed(&[text("reserve_warehouse.lua")]),
        explanation: Explanation {
            title: text("Why a fallback inside one script never oversells"),
            how: text(
                "EVALSHA reserve_warehouse.lua with the warehouses as keys, preferred first, then nearest first, and the \
                 quantity (and whether a split is allowed) as arguments. The script takes from the first warehouse that can \
                 fill the order, or splits it, or refuses it whole.",
            ),
            why: text(
                "Redis runs the script to the end before any other command: the counts it looks at are the counts it takes \
                 from. Every warehouse key carries the run's tag, so a cluster keeps them on one slot.",
            ),
            cost: text(
                "One round trip per order. Without split, an order no single warehouse can fill is refused even when together \
                 they could; with split, one order ships from several places.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #2",
                    "reserve_warehouse.lua north south 1 0 → {1, 1, 0}",
                    "north's last unit",
                    Tone::A,
                ),
                step(
                    "buyer #6",
                    "reserve_warehouse.lua north south 1 0 → {1, 0, 1}",
                    "fell back to south",
                    Tone::B,
                ),
            ]),
        },
        tape: TapeRule::Story,
        scenario: Scenario::Warehouses,
    },
    tagging: Tagging::Shared,
    buyer: &WarehouseScript,
};

struct WarehouseScript;

impl CartBuyer for WarehouseScript {
    fn buy(&self, mut conn: RedisConn, order: Order) -> BoxFuture<'static, Bought> {
        async move {
            let mut bought = Bought::start(&order);
            let shelves_in_order: Vec<u32> = order.lines.iter().map(|&(s, _)| s).collect();
            let qty = order.lines.first().map_or(0, |&(_, q)| q);
            let keys = &order.keys;
            match shelves::reserve_warehouse(&mut conn, keys, &shelves_in_order, qty, order.split)
                .await
            {
                Ok(called) => {
                    bought.round_trips += called.round_trips;
                    let r = called.reply;
                    for (line, &value) in bought.lines.iter_mut().zip(&r.values) {
                        if r.ok {
                            line.taken = u32::try_from(value).unwrap_or(0);
                            if line.taken > 0 {
                                line.end = LineEnd::Taken;
                            }
                        } else {
                            line.observed = Some(value);
                            line.end = LineEnd::SoldOut;
                        }
                    }
                    if r.ok {
                        bought.accept();
                    }
                }
                Err(f) => bought.script_failed(&f.error, f.round_trips),
            }
            bought
        }
        .boxed()
    }
}
