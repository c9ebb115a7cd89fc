//! `lua`: the usual fix, `reserve.lua`, on a Redis that runs out of memory mid-sale. The
//! script is still atomic, so nothing is oversold; but when the policy evicts the stock
//! counter, the script reads the missing key as 0 in stock, and every later buyer is told
//! "sold out" while units are left.

use std::borrow::Cow;

use oversold_protocol::{
    Category, Explanation, Scenario, ScriptCall, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{EvictionStrategy, Reserve};

/// `reserve.lua`, where a missing key means an empty shelf.
pub const STRATEGY: EvictionStrategy = EvictionStrategy {
    about: StrategyAbout {
        name: text("lua"),
        label: text("Lua script (a missing counter is 0)"),
        short_label: text("Lua"),
        description: text(
            "reserve.lua as in the race. When Redis evicts the stock counter to free memory, the script reads the missing key as 0: later buyers hear \"sold out\" while units are left.",
        ),
        unsafe_by_design: false,
        category: Category::Atomic,
        featured: false,
        scripts: Cow::Borrowed(&[text("reserve.lua")]),
        explanation: Explanation {
            title: text("Why an evicted counter looks like a sold-out sale"),
            how: text(
                "Buyers run reserve.lua: GET the counter, and DECRBY it if it holds enough. A missing key reads as 0, \
                 which is what an unstocked product should say.",
            ),
            why: text(
                "Under maxmemory with an LRU policy, Redis deletes the least recently used keys to make room for new \
                 writes. In the quiet spell between the waves the counter is the coldest key, so a page cache's writes \
                 push it out. The script cannot tell an evicted counter from an empty one, so it answers sold out; it \
                 never writes to a missing key, so nothing is oversold.",
            ),
            cost: text(
                "Lost sales that look like success: no error anywhere, units left unsold, and a counter that no \
                 longer exists. The only trace is evicted_keys in INFO stats.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "page cache",
                    "SET cache:… (64 KiB) → OK",
                    "memory past maxmemory: Redis evicts the coldest key, the counter",
                    Tone::A,
                ),
                step(
                    "buyer #31",
                    "EVALSHA reserve 1 → {0, 0, 0}",
                    "\"sold out\" with units left",
                    Tone::Bad,
                ),
            ]),
        },
        tape: TapeRule::AtomicCall {
            call: ScriptCall::Evalsha,
        },
        scenario: Scenario::Eviction,
    },
    reserve: Reserve::Lenient,
};
