//! `lua_wait`: the same script, then `WAIT 1 <timeout>` on the same connection. A buyer is
//! confirmed only once a replica has acknowledged its write, so a confirmed order survives
//! the replica's promotion. A `WAIT` that runs out says nothing either way: the order is in
//! doubt (taken on the primary, maybe never on the replica), never confirmed.

use std::borrow::Cow;

use oversold_protocol::{
    Category, Explanation, Scenario, ScriptCall, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{FailoverStrategy, Guard};

/// How long a buyer waits for a replica to acknowledge its reservation.
pub const WAIT_TIMEOUT_MS: u32 = 100;

/// The atomic script, confirmed once a replica has it.
pub const STRATEGY: FailoverStrategy = FailoverStrategy {
    about: StrategyAbout {
        name: text("lua_wait"),
        label: text("Atomic script, then WAIT for a replica"),
        short_label: text("Lua + WAIT"),
        description: text(
            "reserve.lua, then WAIT 1 100: an order is confirmed only when the replica has it. While the replica lags, WAIT runs out and the order is in doubt, not confirmed; no confirmed order is lost in the failover.",
        ),
        unsafe_by_design: false,
        category: Category::Atomic,
        featured: false,
        scripts: Cow::Borrowed(&[text("reserve.lua")]),
        explanation: Explanation {
            title: text("Why WAIT keeps every confirmed order, and what it cannot tell you"),
            how: text(
                "Each buyer runs reserve.lua on the primary, then sends WAIT 1 100 on the same connection: Redis \
                 answers once one replica has acknowledged everything that connection wrote, or after 100 ms with \
                 the number that had.",
            ),
            why: text(
                "A replica that acknowledged a write has applied it, so when it is promoted it has every order \
                 confirmed this way. While the replica lags, WAIT answers 0: the primary took the units, but nobody \
                 can say whether they will survive. That order is in doubt: the shop must not confirm it, and must \
                 find out later (here the primary died, and the units are back on the new primary's shelf). WAIT \
                 does not make replication synchronous: a timed-out write stays applied on the primary.",
            ),
            cost: text(
                "One more round trip to a replica per order while it keeps up; 100 ms per order and a pile of \
                 orders in doubt while it does not.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #3",
                    "EVALSHA reserve 1 → {1, 8, 7} · WAIT 1 100 → 1",
                    "the replica has it: confirmed",
                    Tone::A,
                ),
                step(
                    "buyer #7",
                    "EVALSHA reserve 1 → {1, 6, 5} · WAIT 1 100 → 0",
                    "the replica lags: in doubt, not confirmed",
                    Tone::Bad,
                ),
                step(
                    "failover",
                    "primary killed · REPLICAOF NO ONE",
                    "every confirmed order is on the new primary",
                    Tone::B,
                ),
            ]),
        },
        tape: TapeRule::AtomicCall {
            call: ScriptCall::Evalsha,
        },
        scenario: Scenario::Failover,
    },
    guard: Guard::Wait {
        timeout_ms: WAIT_TIMEOUT_MS,
    },
};
