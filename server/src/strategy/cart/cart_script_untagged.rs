//! `cart_script_untagged`: the same `reserve_cart.lua`, with SKU keys that share no hash
//! tag. The CROSSSLOT lesson.
//!
//! On a single Redis every key is on the one node, and it works exactly like
//! `cart_script`. On a Redis Cluster each key hashes to its own slot, and a script may
//! only touch one slot: the cluster refuses every cart of two or more SKUs with
//! `CROSSSLOT`, and the run fails. The fix is the shared tag (`cart_script`); its cost is
//! that every key of the run then lives on one node.

use std::borrow::Cow;

use oversold_protocol::{
    Category, Explanation, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};

use super::CartStrategy;
use super::cart_script::CartScript;
use crate::store::shelves::Tagging;

/// One script over the cart, keys with no shared tag.
pub const STRATEGY: CartStrategy = CartStrategy {
    about: StrategyAbout {
        name: text("cart_script_untagged"),
        label: text("Cart script without a hash tag (CROSSSLOT on a cluster)"),
        short_label: text("Untagged script"),
        description: text(
            "The cart script over SKU keys that share no hash tag: fine on one Redis, refused with CROSSSLOT by a Redis Cluster.",
        ),
        unsafe_by_design: true,
        category: Category::Atomic,
        featured: false,
        scripts: Cow::Borrowed(&[text("reserve_cart.lua")]),
        explanation: Explanation {
            title: text("Why a cluster refuses the untagged cart"),
            how: text(
                "The same EVALSHA reserve_cart.lua, with keys named oversold:run-ID:sku:phone, oversold:run-ID:sku:case: no \
                 {…} tag, so each key's slot comes from its whole name.",
            ),
            why: text(
                "A Redis Cluster splits keys over 16384 slots, and a script (or MULTI, or MGET) may only touch keys of one \
                 slot, because one node must run it alone. Two SKUs without a shared tag land on two slots, usually on two \
                 nodes: Redis answers CROSSSLOT and runs nothing. On a single Redis there are no slots, so it runs, and the \
                 bug waits for the day the shop moves to a cluster. The fix: a shared tag, {run-ID}, as cart_script does.",
            ),
            cost: text(
                "The fix has a cost too: a shared tag puts every key it covers on one node. Group only what one script must \
                 see together (one cart's catalogue); anything wider than one node is a saga.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #3",
                    "reserve_cart.lua oversold:r-1:sku:phone oversold:r-1:sku:case",
                    "two slots",
                    Tone::A,
                ),
                step(
                    "cluster",
                    "→ CROSSSLOT Keys in request don't hash to the same slot",
                    "nothing ran",
                    Tone::Bad,
                ),
                step(
                    "fix",
                    "oversold:{r-1}:sku:phone oversold:{r-1}:sku:case",
                    "one slot, one node",
                    Tone::B,
                ),
            ]),
        },
        tape: TapeRule::Story,
        scenario: Scenario::Cart,
    },
    tagging: Tagging::Untagged,
    buyer: &CartScript,
};
