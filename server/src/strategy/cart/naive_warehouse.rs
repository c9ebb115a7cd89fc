//! `naive_warehouse`: read every warehouse, then DECRBY the first (preferred, then
//! nearest) that looked like it had enough.
//!
//! The read and the take are separate steps, so two buyers can both see the last units of
//! the same warehouse and both take them: a warehouse oversells while its neighbours may
//! still have stock. With split allowed, it takes what each looked to have, in order, with
//! the same race on every warehouse it touches.

use std::borrow::Cow;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, LineEnd, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{Bought, CartBuyer, CartStrategy, Order, app_work};
use crate::store::RedisConn;
use crate::store::shelves::{self, Tagging};

/// Read all, decide in the app, take from one.
pub const STRATEGY: CartStrategy = CartStrategy {
    about: StrategyAbout {
        name: text("naive_warehouse"),
        label: text("Naive fallback (GET each warehouse, then DECRBY one)"),
        short_label: text("Naive fallback"),
        description: text(
            "Reads every warehouse, picks the preferred one if it looked sufficient, else the nearest that did, then decrements it: warehouses oversell.",
        ),
        unsafe_by_design: true,
        category: Category::CheckThenWrite,
        featured: true,
        scripts: Cow::Borrowed(&[]),
        explanation: Explanation {
            title: text("Why a naive fallback oversells a warehouse"),
            how: text(
                "GET each warehouse, preferred first, then nearest first. In the app, pick the first whose count covers the \
                 order (or, with split, what each has in turn). Then DECRBY the chosen warehouse.",
            ),
            why: text(
                "Between the GETs and the DECRBY other buyers read the same counts and choose the same warehouse. Its last \
                 units are sold twice while the next warehouse over may still have stock.",
            ),
            cost: text(
                "One round trip per warehouse read, then one per take. Oversold units to refund or ship late.",
            ),
            steps: Cow::Borrowed(&[
                step("buyer #2", "GET north → 1", "north will do", Tone::A),
                step("buyer #6", "GET north → 1", "north will do too", Tone::B),
                step(
                    "buyer #2",
                    "DECRBY north 1 → 0",
                    "took the last unit in north",
                    Tone::A,
                ),
                step(
                    "buyer #6",
                    "DECRBY north 1 → -1",
                    "north is oversold; south still had 3",
                    Tone::Bad,
                ),
            ]),
        },
        tape: TapeRule::Story,
        scenario: Scenario::Warehouses,
    },
    tagging: Tagging::Shared,
    buyer: &NaiveWarehouse,
};

struct NaiveWarehouse;

impl CartBuyer for NaiveWarehouse {
    fn buy(&self, mut conn: RedisConn, order: Order) -> BoxFuture<'static, Bought> {
        async move {
            let mut bought = Bought::start(&order);
            for (i, &(shelf, _)) in order.lines.iter().enumerate() {
                bought.round_trips += 1;
                match shelves::get(&mut conn, &order.keys, shelf).await {
                    Ok(seen) => bought.lines[i].observed = Some(seen.unwrap_or(0)),
                    Err(e) => {
                        bought.failed(i, &e);
                        return bought;
                    }
                }
            }
            // The gap: other buyers read the same counts while this one decides.
            app_work(order.race_window).await;
            let Some(plan) = choose(&bought, &order) else {
                for line in &mut bought.lines {
                    line.end = LineEnd::SoldOut;
                }
                return bought;
            };
            for (i, take) in plan.into_iter().enumerate().filter(|(_, t)| *t > 0) {
                let shelf = bought.lines[i].shelf;
                bought.round_trips += 1;
                if let Err(e) = shelves::decr_by(&mut conn, &order.keys, shelf, take).await {
                    bought.failed(i, &e);
                    bought.strand_taken();
                    return bought;
                }
                bought.lines[i].taken = take;
                bought.lines[i].end = LineEnd::Taken;
            }
            bought.accept();
            bought
        }
        .boxed()
    }
}

/// What to take from each warehouse, decided on the counts read: the first that covers
/// the order; else, with split, what each has until it is covered; else `None`.
fn choose(bought: &Bought, order: &Order) -> Option<Vec<u32>> {
    let qty = order.lines.first().map_or(0, |&(_, q)| q);
    let seen: Vec<u32> = bought
        .lines
        .iter()
        .map(|l| u32::try_from(l.observed.unwrap_or(0).max(0)).unwrap_or(u32::MAX))
        .collect();
    let mut plan = vec![0; seen.len()];
    if let Some(i) = seen.iter().position(|&s| s >= qty) {
        plan[i] = qty;
        return Some(plan);
    }
    if !order.split || seen.iter().map(|&s| u64::from(s)).sum::<u64>() < u64::from(qty) {
        return None;
    }
    let mut left = qty;
    for (p, &s) in plan.iter_mut().zip(&seen) {
        *p = s.min(left);
        left -= *p;
    }
    Some(plan)
}
