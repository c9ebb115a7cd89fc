//! `per_line`: each line of the cart taken atomically with `reserve.lua`, and no undo.
//!
//! No SKU ever oversells: each line's check and take are one step in Redis. But the cart
//! is still several steps: when a later line is sold out, the lines already taken stay
//! taken, and the failed order strands them. Atomic per key is not atomic per order.

use std::borrow::Cow;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, LineEnd, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{Bought, CartBuyer, CartStrategy, Order};
use crate::store::RedisConn;
use crate::store::shelves::{self, Tagging};

/// Atomic per line, no rollback.
pub const STRATEGY: CartStrategy = CartStrategy {
    about: StrategyAbout {
        name: text("per_line"),
        label: text("Atomic per line (reserve.lua each, no undo)"),
        short_label: text("Per line"),
        description: text(
            "Takes each line with the atomic reserve script: no SKU oversells, but a cart whose later line is sold out keeps its earlier lines.",
        ),
        unsafe_by_design: true,
        category: Category::Atomic,
        featured: false,
        scripts: Cow::Borrowed(&[text("reserve.lua")]),
        explanation: Explanation {
            title: text("Why atomic lines still strand units"),
            how: text("For each line: EVALSHA reserve.lua sku qty. A refused line ends the order."),
            why: text(
                "Every line is checked and taken in one step, so no counter goes below zero. But the cart spans several \
                 steps, and between them other buyers empty the next SKU: the order fails holding the lines it already \
                 took, and nothing gives them back.",
            ),
            cost: text(
                "One round trip per line. Stranded units: lost sales, and a cart the customer never gets.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #3",
                    "reserve.lua phone 1 → {1, 1, 0}",
                    "took the last phone",
                    Tone::A,
                ),
                step(
                    "buyer #5",
                    "reserve.lua charger 1 → {1, 1, 0}",
                    "took the last charger",
                    Tone::B,
                ),
                step(
                    "buyer #3",
                    "reserve.lua charger 1 → {0, 0, 0}",
                    "sold out: the order fails",
                    Tone::A,
                ),
                step(
                    "(nobody)",
                    "the phone stays taken",
                    "stranded in a failed order",
                    Tone::Bad,
                ),
            ]),
        },
        tape: TapeRule::Story,
        scenario: Scenario::Cart,
    },
    tagging: Tagging::Shared,
    buyer: &PerLine,
};

struct PerLine;

impl CartBuyer for PerLine {
    fn buy(&self, mut conn: RedisConn, order: Order) -> BoxFuture<'static, Bought> {
        async move {
            let mut bought = Bought::start(&order);
            for (i, &(shelf, qty)) in order.lines.iter().enumerate() {
                match shelves::reserve_line(&mut conn, &order.keys, shelf, qty).await {
                    Ok(called) => {
                        bought.round_trips += called.round_trips;
                        let r = called.reply;
                        bought.lines[i].observed = Some(r.before);
                        if !r.reserved {
                            bought.lines[i].end = LineEnd::SoldOut;
                            bought.strand_taken();
                            return bought;
                        }
                        bought.lines[i].taken = qty;
                        bought.lines[i].end = LineEnd::Taken;
                    }
                    Err(f) => {
                        bought.round_trips += f.round_trips;
                        bought.failed(i, &f.error);
                        bought.strand_taken();
                        return bought;
                    }
                }
            }
            bought.accept();
            bought
        }
        .boxed()
    }
}
