//! `short_script`: the fix. The report does the same reading, cut into 25 ms calls of
//! `busy_read.lua`, each far under `busy-reply-threshold`. Buyers' scripts run between the
//! steps: nobody gets `BUSY`, the watchdog never acts, nothing is lost. The cost: buyers
//! wait up to one step, and the report takes a round trip per step.

use std::borrow::Cow;

use oversold_protocol::{
    Category, Explanation, Scenario, ScriptCall, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{BusyStrategy, SlowClient};
use crate::store::busy::Job;

/// The same work in steps shorter than the threshold.
pub const STRATEGY: BusyStrategy = BusyStrategy {
    about: StrategyAbout {
        name: text("short_script"),
        label: text("The same work in short steps"),
        short_label: text("Short steps"),
        description: text(
            "The report reads for the same 2.5 s, as 100 calls of 25 ms: buyers run between the steps, nobody gets BUSY, and nothing needs killing.",
        ),
        unsafe_by_design: false,
        category: Category::Atomic,
        featured: true,
        scripts: Cow::Borrowed(&[text("busy_read.lua"), text("reserve.lua")]),
        explanation: Explanation {
            title: text("Why short steps keep the sale going"),
            how: text(
                "The report calls busy_read.lua 100 times with 25 ms each instead of once with 2.5 s. Buyers' reserve.lua \
                 calls queue behind the current step and run as soon as it ends.",
            ),
            why: text(
                "Redis still runs one thing at a time, but no step comes near busy-reply-threshold (100 ms), so Redis never \
                 answers BUSY and the watchdog never has to choose between killing and restarting.",
            ),
            cost: text(
                "A buyer may wait up to one step (25 ms) for its answer, and the report pays a round trip per step. A job \
                 cut in steps is no longer atomic as a whole: each step must leave the data consistent on its own.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "report",
                    "EVALSHA busy_read.lua 25 → 4100",
                    "one short step",
                    Tone::A,
                ),
                step(
                    "buyer #9",
                    "EVALSHA reserve 1 → {1, 6, 5}",
                    "ran between two steps",
                    Tone::B,
                ),
            ]),
        },
        tape: TapeRule::AtomicCall {
            call: ScriptCall::Evalsha,
        },
        scenario: Scenario::BusyScript,
    },
    client: SlowClient::Steps {
        job: Job::Read,
        step_ms: 25,
    },
};
