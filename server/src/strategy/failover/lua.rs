//! `lua`: the race's fix, on a primary with a replica. Each reservation is one atomic
//! script, and the primary's answer is the buyer's confirmation. Replication is
//! asynchronous: the primary answers before its replica has the write. When the primary
//! dies while the replica lags, the promoted replica never had those orders: their units
//! are back on its shelf, and the sale sells them again.

use std::borrow::Cow;

use oversold_protocol::{
    Category, Explanation, Scenario, ScriptCall, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{FailoverStrategy, Guard};

/// The atomic script, confirmed by the primary alone.
pub const STRATEGY: FailoverStrategy = FailoverStrategy {
    about: StrategyAbout {
        name: text("lua"),
        label: text("Atomic script, confirmed by the primary alone"),
        short_label: text("Lua, no wait"),
        description: text(
            "reserve.lua on the primary, confirmed by its answer. The replica falls behind, the primary dies, the replica is promoted: the orders it never got are lost, and their units are sold again.",
        ),
        unsafe_by_design: true,
        category: Category::Atomic,
        featured: true,
        scripts: Cow::Borrowed(&[text("reserve.lua")]),
        explanation: Explanation {
            title: text("Why an atomic script still loses orders in a failover"),
            how: text(
                "Buyers run reserve.lua on the primary; its reply {1, before, after} confirms the order. Mid-sale \
                 the replica stops and the primary drops its link; a moment later the primary is killed, the replica \
                 is promoted, and the buyers' app servers move to it.",
            ),
            why: text(
                "The script is atomic on one server; replication is not part of it. The primary answers first and \
                 streams the write to its replica afterwards, so for a while an order exists on the primary alone. \
                 Every order confirmed in that while dies with the primary. The promoted replica's counter still \
                 holds those units, and the next buyers get them: the same units are confirmed twice.",
            ),
            cost: text(
                "No extra latency, and no guarantee: a confirmation means the primary had the order, not that the \
                 deployment will keep it.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #7",
                    "EVALSHA reserve 1 → {1, 6, 5}",
                    "confirmed by the primary; the replica lags",
                    Tone::A,
                ),
                step(
                    "failover",
                    "primary killed · REPLICAOF NO ONE",
                    "the replica, at 6, is the primary now",
                    Tone::Bad,
                ),
                step(
                    "buyer #31",
                    "EVALSHA reserve 1 → {1, 6, 5}",
                    "buyer #7's unit, sold again",
                    Tone::B,
                ),
            ]),
        },
        tape: TapeRule::AtomicCall {
            call: ScriptCall::Evalsha,
        },
        scenario: Scenario::Failover,
    },
    guard: Guard::None,
};
