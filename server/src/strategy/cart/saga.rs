//! `saga`: each line taken atomically with `reserve.lua`; when a line is sold out, the
//! lines already taken are given back, each exactly once, with `compensate_line.lua`.
//!
//! No SKU oversells, and a finished saga leaves no partial cart. It works across any
//! number of nodes, since every step touches one key. What it cannot hide is the window:
//! between a doomed cart's first take and its last undo, its units are off the shelf, and
//! buyers who come then are refused units that will be back a moment later.
//!
//! An undo is an `INCRBY`, which commutes with every other buyer's take, so racing them
//! is harmless. Sending one twice is not (units that never existed would appear), so each
//! undo names its line and the script adds the units only the first time it sees the
//! name. A lost answer can then be resent safely: it is, once.

use std::borrow::Cow;
use std::time::Instant;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, LineEnd, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{Bought, CartBuyer, CartStrategy, Order, window};
use crate::store::RedisConn;
use crate::store::shelves::{self, Tagging};

/// Atomic per line, with compensation.
pub const STRATEGY: CartStrategy = CartStrategy {
    about: StrategyAbout {
        name: text("saga"),
        label: text("Saga (reserve each line, undo them on failure)"),
        short_label: text("Saga"),
        description: text(
            "Takes each line atomically; when one is sold out, gives the taken lines back, each exactly once. No oversell, no partial cart left, across any number of nodes.",
        ),
        unsafe_by_design: false,
        category: Category::Saga,
        featured: false,
        scripts: Cow::Borrowed(&[text("reserve.lua"), text("compensate_line.lua")]),
        explanation: Explanation {
            title: text("Why a saga leaves no partial cart, and what it holds meanwhile"),
            how: text(
                "For each line: EVALSHA reserve.lua sku qty. When a line is refused, for each line already taken: EVALSHA \
                 compensate_line.lua sku undone qty line-id, which adds the units back only if that line id is new to the \
                 run's set of undone lines.",
            ),
            why: text(
                "Each step touches one key, so it runs on any cluster. A failed cart undoes what it took, so nothing stays \
                 stranded. The undo adds units back, which commutes with other buyers' takes; the line id makes a resent undo \
                 harmless, so units are given back exactly once even when an answer is lost.",
            ),
            cost: text(
                "Between a doomed cart's first take and its last undo, its units are held: other buyers are refused stock that \
                 is about to come back (counted as false sold-outs). More round trips: one per line, and one per undo.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #3",
                    "reserve.lua phone 1 → {1, 1, 0}",
                    "took the last phone",
                    Tone::A,
                ),
                step(
                    "buyer #9",
                    "reserve.lua phone 1 → {0, 0, 0}",
                    "refused: #3 holds it",
                    Tone::Bad,
                ),
                step(
                    "buyer #3",
                    "reserve.lua charger 1 → {0, 0, 0}",
                    "sold out: undo",
                    Tone::A,
                ),
                step(
                    "buyer #3",
                    "compensate_line.lua phone 1 b3:0 → {1, 1}",
                    "the phone is back, once",
                    Tone::A,
                ),
            ]),
        },
        tape: TapeRule::Story,
        scenario: Scenario::Cart,
    },
    tagging: Tagging::Shared,
    buyer: &Saga,
};

struct Saga;

/// Resends of one undo whose answer was lost: safe, since the script applies it once.
const UNDO_ATTEMPTS: u32 = 3;

impl CartBuyer for Saga {
    fn buy(&self, mut conn: RedisConn, order: Order) -> BoxFuture<'static, Bought> {
        async move {
            let mut bought = Bought::start(&order);
            let mut first_take = None;
            for (i, &(shelf, qty)) in order.lines.iter().enumerate() {
                match shelves::reserve_line(&mut conn, &order.keys, shelf, qty).await {
                    Ok(called) => {
                        bought.round_trips += called.round_trips;
                        let r = called.reply;
                        bought.lines[i].observed = Some(r.before);
                        if !r.reserved {
                            bought.lines[i].end = LineEnd::SoldOut;
                            undo(&mut conn, &order, &mut bought).await;
                            bought.doomed_hold = window(first_take);
                            return bought;
                        }
                        first_take.get_or_insert_with(Instant::now);
                        bought.lines[i].taken = qty;
                        bought.lines[i].end = LineEnd::Taken;
                    }
                    Err(f) => {
                        bought.round_trips += f.round_trips;
                        bought.failed(i, &f.error);
                        // A line in doubt is not undone: it may never have been taken.
                        undo(&mut conn, &order, &mut bought).await;
                        bought.doomed_hold = window(first_take);
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

/// Give back every line taken so far, last first; a line whose undo fails stays stranded.
async fn undo(conn: &mut RedisConn, order: &Order, bought: &mut Bought) {
    for i in (0..bought.lines.len()).rev() {
        let line = bought.lines[i];
        if line.end != LineEnd::Taken {
            continue;
        }
        let id = format!("b{}:{i}", order.buyer);
        for _ in 0..UNDO_ATTEMPTS {
            match shelves::compensate(conn, &order.keys, line.shelf, line.taken, &id).await {
                Ok(called) => {
                    bought.round_trips += called.round_trips;
                    bought.compensations += 1;
                    bought.lines[i].end = LineEnd::Compensated;
                    break;
                }
                Err(f) => {
                    bought.round_trips += f.round_trips;
                    // Only a lost answer is worth resending; a refusal or a dead
                    // connection will answer the same again.
                    if !f.error.in_doubt() || conn.is_broken() {
                        break;
                    }
                }
            }
        }
    }
    bought.strand_taken();
}
