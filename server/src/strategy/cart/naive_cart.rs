//! `naive_cart`: the race's check-then-write, once per line of a cart. GET the SKU, check
//! in the app, DECRBY; then the next line.
//!
//! Two bugs. Each line races like the single-SKU `naive` (every buyer whose GET lands
//! before the last unit's DECRBY passes its check), so SKUs oversell. And the cart is not
//! one step: when a later line is sold out, the earlier lines are already taken and
//! nothing gives them back, so the order fails with units stranded in it.

use std::borrow::Cow;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, LineEnd, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{Bought, CartBuyer, CartStrategy, Order, app_work};
use crate::store::RedisConn;
use crate::store::shelves::{self, Tagging};

/// Check-then-write, line by line.
pub const STRATEGY: CartStrategy = CartStrategy {
    about: StrategyAbout {
        name: text("naive_cart"),
        label: text("Naive cart (GET, then DECRBY, per line)"),
        short_label: text("Naive cart"),
        description: text(
            "Reads each SKU, checks it in the app, then decrements, one line after another: SKUs oversell, and a cart whose later line is sold out keeps its earlier lines.",
        ),
        unsafe_by_design: true,
        category: Category::CheckThenWrite,
        featured: true,
        scripts: Cow::Borrowed(&[]),
        explanation: Explanation {
            title: text("Why a naive cart oversells and strands units"),
            how: text(
                "For each line of the cart: GET sku, compare with the quantity in the app, DECRBY sku qty. A line that looks \
                 sold out ends the order.",
            ),
            why: text(
                "Each line is the single-SKU race again: two buyers read the last case, both decrement. And the lines are \
                 separate steps: when the charger runs out after the phone and the case were taken, the order fails, and the \
                 phone and the case stay off the shelf in an order nobody will pay for.",
            ),
            cost: text(
                "Two round trips per line. Stranded units are lost sales until someone reconciles the counters by hand.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #3",
                    "GET phone → 1, DECRBY phone 1 → 0",
                    "took the last phone",
                    Tone::A,
                ),
                step(
                    "buyer #3",
                    "GET charger → 0",
                    "sold out: the order fails",
                    Tone::A,
                ),
                step(
                    "buyer #9",
                    "GET phone → 0",
                    "sold out, though #3 will never pay",
                    Tone::B,
                ),
                step(
                    "(nobody)",
                    "INCRBY phone 1",
                    "never sent: the phone is stranded",
                    Tone::Bad,
                ),
            ]),
        },
        tape: TapeRule::Story,
        scenario: Scenario::Cart,
    },
    tagging: Tagging::Shared,
    buyer: &NaiveCart,
};

struct NaiveCart;

impl CartBuyer for NaiveCart {
    fn buy(&self, mut conn: RedisConn, order: Order) -> BoxFuture<'static, Bought> {
        async move {
            let mut bought = Bought::start(&order);
            for (i, &(shelf, qty)) in order.lines.iter().enumerate() {
                bought.round_trips += 1;
                let seen = match shelves::get(&mut conn, &order.keys, shelf).await {
                    Ok(seen) => seen.unwrap_or(0),
                    Err(e) => {
                        bought.failed(i, &e);
                        bought.strand_taken();
                        return bought;
                    }
                };
                bought.lines[i].observed = Some(seen);
                // The gap: other buyers read the same count while this one decides.
                app_work(order.race_window).await;
                if seen < i64::from(qty) {
                    bought.lines[i].end = LineEnd::SoldOut;
                    bought.strand_taken();
                    return bought;
                }
                bought.round_trips += 1;
                if let Err(e) = shelves::decr_by(&mut conn, &order.keys, shelf, qty).await {
                    bought.failed(i, &e);
                    bought.strand_taken();
                    return bought;
                }
                bought.lines[i].taken = qty;
                bought.lines[i].end = LineEnd::Taken;
            }
            bought.accept();
            bought
        }
        .boxed()
    }
}
