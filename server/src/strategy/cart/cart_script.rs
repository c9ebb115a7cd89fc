//! `cart_script`: the whole cart in one Lua script, `reserve_cart.lua`: every line or none.
//!
//! The script checks every line before it takes any, and Redis runs it with nothing in
//! between, so no buyer sees half a cart and a refused cart leaves nothing behind. On a
//! Redis Cluster that needs every key of the cart on one slot: the keys share the run's
//! hash tag. The cost is that tag: the whole catalogue lives on one node.

use std::borrow::Cow;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, LineEnd, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{Bought, CartBuyer, CartStrategy, Order};
use crate::store::RedisConn;
use crate::store::shelves::{self, Tagging};

/// One script over the cart, keys under the run's tag.
pub const STRATEGY: CartStrategy = CartStrategy {
    about: StrategyAbout {
        name: text("cart_script"),
        label: text("Cart script (reserve_cart.lua, shared hash tag)"),
        short_label: text("Cart script"),
        description: text(
            "Checks every line and takes them all in one Lua script, or takes nothing: no oversell, no partial cart. Its keys share one hash tag.",
        ),
        unsafe_by_design: false,
        category: Category::Atomic,
        featured: true,
        scripts: Cow::Borrowed(&[text("reserve_cart.lua")]),
        explanation: Explanation {
            title: text("Why one script makes the cart all or nothing"),
            how: text(
                "EVALSHA reserve_cart.lua with every SKU of the cart as a key and each quantity as an argument. The script \
                 reads every line, and only if all fit does it decrement them all.",
            ),
            why: text(
                "Redis runs a script to the end before any other command, so nobody can take the charger between this cart's \
                 check and its take, and a refusal changes nothing. On a Redis Cluster a script's keys must hash to one slot: \
                 the keys carry the run's tag, {run-ID}, so they do.",
            ),
            cost: text(
                "One round trip per cart. The shared tag puts every SKU of the run on one slot, so on one node: that node \
                 takes all the load, and adding nodes does not spread it.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #3",
                    "reserve_cart.lua phone charger → {1, 0, 0}",
                    "took both",
                    Tone::A,
                ),
                step(
                    "buyer #5",
                    "reserve_cart.lua phone case → {0, 0, 4}",
                    "refused whole: the case stays",
                    Tone::B,
                ),
            ]),
        },
        tape: TapeRule::Story,
        scenario: Scenario::Cart,
    },
    tagging: Tagging::Shared,
    buyer: &CartScript,
};

/// The cart script's buyer, whatever the keys' tagging (`cart_script_untagged` shares it).
pub(super) struct CartScript;

impl CartBuyer for CartScript {
    fn buy(&self, mut conn: RedisConn, order: Order) -> BoxFuture<'static, Bought> {
        async move {
            let mut bought = Bought::start(&order);
            match shelves::reserve_cart(&mut conn, &order.keys, &order.lines).await {
                Ok(called) => {
                    bought.round_trips += called.round_trips;
                    let r = called.reply;
                    for (line, &value) in bought.lines.iter_mut().zip(&r.values) {
                        if r.ok {
                            line.observed = Some(value + i64::from(line.qty));
                            line.taken = line.qty;
                            line.end = LineEnd::Taken;
                        } else {
                            line.observed = Some(value);
                            if value < i64::from(line.qty) {
                                line.end = LineEnd::SoldOut;
                            }
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
