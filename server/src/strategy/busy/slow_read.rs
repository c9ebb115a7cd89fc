//! `slow_read`: mid-sale, one client runs a long read-only script (a stock report). Redis
//! serves nobody else meanwhile; past `busy-reply-threshold` every buyer is answered `BUSY`,
//! until the watchdog's `SCRIPT KILL` stops the report. Nothing is lost: it wrote nothing.

use std::borrow::Cow;

use oversold_protocol::{
    Category, Explanation, Scenario, ScriptCall, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{BusyStrategy, SlowClient};
use crate::store::busy::Job;

/// A long read-only script, killed.
pub const STRATEGY: BusyStrategy = BusyStrategy {
    about: StrategyAbout {
        name: text("slow_read"),
        label: text("Slow read-only script (SCRIPT KILL)"),
        short_label: text("Slow read"),
        description: text(
            "Mid-sale, a report runs busy_read.lua for seconds: every buyer waits, then gets BUSY, until the watchdog's SCRIPT KILL stops it. It wrote nothing, so nothing is lost.",
        ),
        unsafe_by_design: false,
        category: Category::Atomic,
        featured: false,
        scripts: Cow::Borrowed(&[text("busy_read.lua"), text("reserve.lua")]),
        explanation: Explanation {
            title: text("Why one long script stops every buyer"),
            how: text(
                "The buyers run reserve.lua as usual. Mid-sale a report sends busy_read.lua, which reads the stock again and \
                 again for 2.5 s of Redis's clock. The server's watchdog PINGs Redis; once Redis has been busy for 500 ms it \
                 sends SCRIPT KILL.",
            ),
            why: text(
                "Redis has one command thread: while a script runs, nothing else does. For the first 100 ms \
                 (busy-reply-threshold) other commands simply wait; after it Redis answers each of them BUSY and runs none. \
                 A script that has written nothing can be abandoned at any line, so SCRIPT KILL stops it and the sale resumes \
                 with every unit where it was.",
            ),
            cost: text(
                "Half a second of no sales and a crowd of BUSY errors, for one report. Keep scripts short, and run long \
                 reads somewhere else (a replica), or in steps.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "report",
                    "EVALSHA busy_read.lua 2500 → …",
                    "holds Redis's one thread",
                    Tone::A,
                ),
                step(
                    "buyer #9",
                    "EVALSHA reserve 1 → BUSY",
                    "refused: Redis is running a script",
                    Tone::Bad,
                ),
                step(
                    "watchdog",
                    "SCRIPT KILL → OK",
                    "the report is stopped; the sale resumes",
                    Tone::B,
                ),
            ]),
        },
        tape: TapeRule::AtomicCall {
            call: ScriptCall::Evalsha,
        },
        scenario: Scenario::BusyScript,
    },
    client: SlowClient::OneCall(Job::Read),
};
