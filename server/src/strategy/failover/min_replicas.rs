//! `min_replicas`: the primary guards itself. With `min-replicas-to-write 1` it takes a write
//! only while at least one replica is connected and acknowledged within
//! `min-replicas-max-lag` seconds; otherwise it answers `NOREPLICAS` and writes nothing. The
//! sale fails closed while the replica lags: refused orders, none lost.

use std::borrow::Cow;

use oversold_protocol::{
    Category, Explanation, Scenario, ScriptCall, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{FailoverStrategy, Guard};

/// `min-replicas-max-lag`, in seconds (Redis counts it in whole seconds; replicas
/// acknowledge once a second).
pub const MAX_LAG_S: u32 = 1;

/// The primary refuses writes while no replica keeps up.
pub const STRATEGY: FailoverStrategy = FailoverStrategy {
    about: StrategyAbout {
        name: text("min_replicas"),
        label: text("Atomic script on a primary with min-replicas-to-write 1"),
        short_label: text("min-replicas"),
        description: text(
            "reserve.lua on a primary set to min-replicas-to-write 1: once its replica is gone it refuses every write with NOREPLICAS. Orders are refused while the replica lags, and none confirmed is lost.",
        ),
        unsafe_by_design: false,
        category: Category::Atomic,
        featured: false,
        scripts: Cow::Borrowed(&[text("reserve.lua")]),
        explanation: Explanation {
            title: text("Why a primary that refuses writes loses none"),
            how: text(
                "The primary runs with min-replicas-to-write 1 and min-replicas-max-lag 1. Buyers run reserve.lua \
                 as usual. When the replica stops and its link is dropped, the primary counts no good replica.",
            ),
            why: text(
                "Redis checks the rule before each write, inside a script at its first write: with no replica \
                 keeping up, reserve.lua's DECRBY is refused with NOREPLICAS and nothing is taken. Everything the \
                 primary did accept went out while the replica was connected and reading, so the promoted replica \
                 has it. The rule narrows the window rather than closing it: a replica that is connected but silent \
                 still counts for up to max-lag seconds (here the link is dropped at once, so no write slips through).",
            ),
            cost: text(
                "Fail closed: while the replica lags, nobody can buy. No extra latency while it keeps up.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #3",
                    "EVALSHA reserve 1 → {1, 8, 7}",
                    "the replica keeps up: taken",
                    Tone::A,
                ),
                step(
                    "buyer #7",
                    "EVALSHA reserve 1 → NOREPLICAS",
                    "no replica keeps up: refused, nothing taken",
                    Tone::Bad,
                ),
                step(
                    "failover",
                    "primary killed · REPLICAOF NO ONE",
                    "the new primary has every order taken",
                    Tone::B,
                ),
            ]),
        },
        tape: TapeRule::AtomicCall {
            call: ScriptCall::Evalsha,
        },
        scenario: Scenario::Failover,
    },
    guard: Guard::MinReplicas {
        max_lag_s: MAX_LAG_S,
    },
};
