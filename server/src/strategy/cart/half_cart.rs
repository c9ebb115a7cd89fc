//! `half_cart`: the whole cart in one Lua script, `take_cart_lines.lua`, written like a
//! transaction: take a line, go on, and raise an error at the first line that is short.
//!
//! The script is atomic in the sense Redis gives: nothing runs between its commands. It is
//! not a transaction: an error stops it where it is and undoes nothing. A cart whose third
//! line is sold out keeps its first two lines taken, and the buyer gets an error for an
//! order it does not have: the units are stranded, as with `per_line`, except that here it
//! happens in one indivisible step, every time a later line is short. `cart_script` checks
//! every line before the first write, so its refusal has nothing to undo.

use std::borrow::Cow;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, LineEnd, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{Bought, CartBuyer, CartStrategy, Order};
use crate::store::RedisConn;
use crate::store::shelves::{self, LinesTaken, Tagging};

/// One script that takes line by line and stops with an error: no rollback.
pub const STRATEGY: CartStrategy = CartStrategy {
    about: StrategyAbout {
        name: text("half_cart"),
        label: text("Cart script that errors halfway (no rollback)"),
        short_label: text("Half cart"),
        description: text(
            "One Lua script takes the cart line by line and raises an error at a short line: the lines it took stay taken.",
        ),
        unsafe_by_design: true,
        category: Category::Atomic,
        featured: false,
        scripts: Cow::Borrowed(&[text("take_cart_lines.lua")]),
        explanation: Explanation {
            title: text("Why an error in a script does not undo what it wrote"),
            how: text(
                "EVALSHA take_cart_lines.lua with every SKU of the cart. For each line in turn the script reads the counter, \
                 and if it covers the line, DECRBYs it; at the first short line it raises an error, expecting the cart to \
                 be called off.",
            ),
            why: text(
                "Redis runs a script with nothing in between, which makes it isolated, not transactional: there is no \
                 rollback. An error, whether the script raises it or a redis.call fails (WRONGTYPE, OOM), stops the script \
                 where it is, and every write before it stays. The lines already taken are stranded in an order the buyer \
                 was told failed. redis.pcall would hand a failing command's error back as a value, so the script could \
                 give the taken lines back itself; Redis never does it for you.",
            ),
            cost: text(
                "One round trip per cart, like cart_script, and stranded units every time a later line is short. The fix \
                 costs nothing: check every line first, then write (reserve_cart.lua), so a refusal has nothing to undo.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #3",
                    "take_cart_lines.lua phone case → {1, 0, 0}",
                    "took both",
                    Tone::A,
                ),
                step("buyer #5", "… DECRBY phone 1 → 4", "line 1 taken", Tone::B),
                step(
                    "buyer #5",
                    "… case: 0 left → SHORT_LINE 2",
                    "the script stops with an error",
                    Tone::B,
                ),
                step(
                    "(nobody)",
                    "the phone stays taken",
                    "no rollback: stranded in a failed order",
                    Tone::Bad,
                ),
            ]),
        },
        tape: TapeRule::Story,
        scenario: Scenario::Cart,
    },
    tagging: Tagging::Shared,
    buyer: &HalfCart,
};

struct HalfCart;

impl CartBuyer for HalfCart {
    fn buy(&self, mut conn: RedisConn, order: Order) -> BoxFuture<'static, Bought> {
        async move {
            let mut bought = Bought::start(&order);
            match shelves::take_cart_lines(&mut conn, &order.keys, &order.lines).await {
                Ok(called) => {
                    bought.round_trips += called.round_trips;
                    match called.reply {
                        LinesTaken::All(afters) => {
                            for (line, after) in bought.lines.iter_mut().zip(afters) {
                                line.observed = Some(after + i64::from(line.qty));
                                line.taken = line.qty;
                                line.end = LineEnd::Taken;
                            }
                            bought.accept();
                        }
                        LinesTaken::StoppedAt { line: short, had } => {
                            // Every line before the short one was taken inside the script, and
                            // the error undid none of them.
                            for line in &mut bought.lines[..short] {
                                line.taken = line.qty;
                                line.end = LineEnd::Taken;
                            }
                            bought.lines[short].observed = Some(had);
                            bought.lines[short].end = LineEnd::SoldOut;
                            bought.strand_taken();
                        }
                    }
                }
                Err(f) => bought.script_failed(&f.error, f.round_trips),
            }
            bought
        }
        .boxed()
    }
}
