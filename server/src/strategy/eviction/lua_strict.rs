//! `lua_strict`: `reserve_strict.lua`, which refuses with `STOCK_MISSING` when the counter is
//! not there. It cannot bring the units back, but it turns a silent "sold out" into an
//! error the app can see, count and act on (page someone, restore the counter from the
//! books). It writes nothing to a missing key either.

use std::borrow::Cow;

use oversold_protocol::{
    Category, Explanation, Scenario, ScriptCall, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{EvictionStrategy, Reserve};

/// `reserve_strict.lua`, where a missing key is an error.
pub const STRATEGY: EvictionStrategy = EvictionStrategy {
    about: StrategyAbout {
        name: text("lua_strict"),
        label: text("Strict Lua script (STOCK_MISSING)"),
        short_label: text("Lua strict"),
        description: text(
            "reserve_strict.lua: the same check-and-take, but a missing counter is an error, STOCK_MISSING, not an empty shelf. An evicted counter fails loudly instead of selling out.",
        ),
        unsafe_by_design: false,
        category: Category::Atomic,
        featured: false,
        scripts: Cow::Borrowed(&[text("reserve_strict.lua")]),
        explanation: Explanation {
            title: text("Fail closed, and say why"),
            how: text(
                "Buyers run reserve_strict.lua: GET the counter; if it is not there, return the error STOCK_MISSING \
                 and write nothing; otherwise the same check and DECRBY as reserve.lua.",
            ),
            why: text(
                "A missing counter during a sale means the data is gone (evicted, flushed, a restart without \
                 persistence), not that the shelf is empty. Only the books know the truth, so the script refuses \
                 rather than guess, and never creates the key, so no DECRBY can start a fresh counter below zero.",
            ),
            cost: text(
                "The same lost sales while the counter is missing, but visible: every refusal carries a code, so an \
                 alert fires on the first one. The fix proper is operational: noeviction, or a Redis of its own for \
                 stock, sized so it never fills.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "page cache",
                    "SET cache:… (64 KiB) → OK",
                    "the counter is evicted",
                    Tone::A,
                ),
                step(
                    "buyer #31",
                    "EVALSHA reserve_strict 1 → STOCK_MISSING",
                    "refused with a reason: nothing written",
                    Tone::B,
                ),
            ]),
        },
        tape: TapeRule::AtomicCall {
            call: ScriptCall::Evalsha,
        },
        scenario: Scenario::Eviction,
    },
    reserve: Reserve::Strict,
};
