//! `slow_write`: the same stall, by a script that wrote before it got slow. Redis will not
//! kill it (`UNKILLABLE`: half a script would stay applied), so the watchdog's only way out
//! is `SHUTDOWN NOSAVE`. Redis comes back from its last snapshot, and every sale it
//! acknowledged since is gone: the buyers hold confirmations for units back on the shelf.

use std::borrow::Cow;

use oversold_protocol::{
    Category, Explanation, Scenario, ScriptCall, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{BusyStrategy, SlowClient};
use crate::store::busy::Job;

/// A long script that wrote first: unkillable, so Redis is restarted.
pub const STRATEGY: BusyStrategy = BusyStrategy {
    about: StrategyAbout {
        name: text("slow_write"),
        label: text("Slow script that wrote (UNKILLABLE, SHUTDOWN NOSAVE)"),
        short_label: text("Slow write"),
        description: text(
            "Mid-sale, a job runs busy_write.lua: it writes, then runs for seconds. SCRIPT KILL is refused (UNKILLABLE); the watchdog's SHUTDOWN NOSAVE restarts Redis from its snapshot, and the sales since are lost.",
        ),
        unsafe_by_design: true,
        category: Category::Atomic,
        featured: true,
        scripts: Cow::Borrowed(&[text("busy_write.lua"), text("reserve.lua")]),
        explanation: Explanation {
            title: text("Why a script that wrote cannot be killed, and what the restart costs"),
            how: text(
                "Mid-sale a job sends busy_write.lua: it stamps its job record (a write), then reads the stock for 2.5 s. \
                 The watchdog sees BUSY for 500 ms and sends SCRIPT KILL; Redis answers UNKILLABLE. The watchdog then sends \
                 SHUTDOWN NOSAVE and starts Redis again, which loads the snapshot taken when the sale was set up.",
            ),
            why: text(
                "A script is all or nothing. Once it has written, stopping it would leave half of it applied, so Redis refuses \
                 to, and offers only SHUTDOWN NOSAVE: end the server without saving. Everything written since the last \
                 snapshot goes with it, every buyer's decrement included, though each of those buyers was told it bought.",
            ),
            cost: text(
                "Every acknowledged sale since the snapshot is lost, and the restored counter sells the same units again \
                 (an oversell after the fact). Persistence (AOF with fsync) narrows the loss; short scripts avoid the choice.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #3",
                    "EVALSHA reserve 1 → {1, 10, 9}",
                    "bought, and told so",
                    Tone::A,
                ),
                step(
                    "job",
                    "EVALSHA busy_write.lua 2500 → …",
                    "wrote its record, now holds Redis",
                    Tone::B,
                ),
                step(
                    "watchdog",
                    "SCRIPT KILL → UNKILLABLE; SHUTDOWN NOSAVE",
                    "Redis restarts from the snapshot: stock 10 again",
                    Tone::Bad,
                ),
            ]),
        },
        tape: TapeRule::AtomicCall {
            call: ScriptCall::Evalsha,
        },
        scenario: Scenario::BusyScript,
    },
    client: SlowClient::OneCall(Job::Write),
};
