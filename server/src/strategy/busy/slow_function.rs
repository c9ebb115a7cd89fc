//! `slow_function`: `slow_write`'s job as a Redis Function (`FCALL oversold_busy_write`). A
//! function is stopped with `FUNCTION KILL`, not `SCRIPT KILL`, under the same rule: one that
//! has written is `UNKILLABLE`, and only `SHUTDOWN NOSAVE` ends it, with the same loss.

use std::borrow::Cow;

use oversold_protocol::{
    Category, Explanation, Scenario, ScriptCall, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{BusyStrategy, SlowClient};
use crate::store::busy::Job;

/// A long function that wrote first: unkillable, so Redis is restarted.
pub const STRATEGY: BusyStrategy = BusyStrategy {
    about: StrategyAbout {
        name: text("slow_function"),
        label: text("Slow function that wrote (FUNCTION KILL refused)"),
        short_label: text("Slow function"),
        description: text(
            "The same job as a Redis Function: FUNCTION KILL is the command, UNKILLABLE the answer once it has written, and SHUTDOWN NOSAVE the way out, losing the sales since the snapshot.",
        ),
        unsafe_by_design: true,
        category: Category::Atomic,
        featured: false,
        scripts: Cow::Borrowed(&[text("busy_function.lua"), text("reserve.lua")]),
        explanation: Explanation {
            title: text("A Function is a script with a name: the same rule"),
            how: text(
                "The job is loaded once as the oversold_busy library and called with FCALL oversold_busy_write. It writes \
                 its record, then reads for 2.5 s. The watchdog sees BUSY (\"running a function\"), sends FUNCTION KILL, \
                 is refused, and restarts Redis with SHUTDOWN NOSAVE.",
            ),
            why: text(
                "Functions run on the same single thread as scripts and are just as atomic, so the same rule holds: one that \
                 has written cannot be stopped halfway. The library itself survives the restart (it is in the snapshot); \
                 the sales since the snapshot do not.",
            ),
            cost: text(
                "The same loss as slow_write. Being a Function changes how it is deployed, not how long it may run.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "job",
                    "FCALL oversold_busy_write 2500 → …",
                    "wrote, now holds Redis",
                    Tone::A,
                ),
                step(
                    "watchdog",
                    "FUNCTION KILL → UNKILLABLE",
                    "it wrote: Redis will not stop it",
                    Tone::B,
                ),
                step(
                    "watchdog",
                    "SHUTDOWN NOSAVE",
                    "restarted from the snapshot; recent sales gone",
                    Tone::Bad,
                ),
            ]),
        },
        tape: TapeRule::AtomicCall {
            call: ScriptCall::Evalsha,
        },
        scenario: Scenario::BusyScript,
    },
    client: SlowClient::OneCall(Job::WriteFunction),
};
