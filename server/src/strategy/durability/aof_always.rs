//! `aof_always`: every write is appended to the AOF and `fsync`ed before Redis replies. No
//! acknowledged order is lost to a process crash, nor to a machine crash (as far as the
//! disk keeps its promise); each event-loop turn waits for the disk.

use std::borrow::Cow;

use oversold_protocol::{
    Category, Explanation, Persistence, Scenario, ScriptCall, StrategyAbout, TapeRule, Tone, step,
    text,
};

use super::DurabilityStrategy;

/// Append-only file, `fsync` before every reply.
pub const STRATEGY: DurabilityStrategy = DurabilityStrategy {
    about: StrategyAbout {
        name: text("aof_always"),
        label: text("AOF, fsync always (nothing acknowledged is lost)"),
        short_label: text("AOF always"),
        description: text(
            "Redis appends every write to its AOF and fsyncs it before replying. Killed mid-sale, it replays the file and loses nothing; the price is a disk flush in every round of replies.",
        ),
        unsafe_by_design: false,
        category: Category::Atomic,
        featured: false,
        scripts: Cow::Borrowed(&[text("reserve.lua")]),
        explanation: Explanation {
            title: text("Why an fsync before the reply makes the acknowledgement true"),
            how: text(
                "The buyers run reserve.lua. The run's own redis-server has appendonly yes and appendfsync always: \
                 before sending the replies of a round of commands, Redis appends their writes to the append-only file \
                 and waits for fsync. Mid-sale the server sends Redis SIGKILL and starts it again; Redis replays the \
                 file.",
            ),
            why: text(
                "An acknowledgement is only as good as where the write was when it left. Here it was on the disk: \
                 neither a killed process nor a stopped machine can take it back. Redis fsyncs once per event-loop \
                 turn, for every client whose command ran in it, so many buyers share one flush.",
            ),
            cost: text(
                "Every round of replies waits for the disk. The burst measured before the sale shows what that costs \
                 on this machine's disk, beside the other settings.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #23",
                    "EVALSHA reserve 1 → {1, 18, 17}",
                    "appended and fsynced before the reply",
                    Tone::A,
                ),
                step(
                    "server",
                    "kill -9 redis-server; restart",
                    "Redis replays the AOF",
                    Tone::B,
                ),
                step(
                    "server",
                    "GET stock → 17",
                    "every acknowledged order is still there",
                    Tone::B,
                ),
            ]),
        },
        tape: TapeRule::AtomicCall {
            call: ScriptCall::Evalsha,
        },
        scenario: Scenario::Durability,
    },
    persistence: Persistence::AofAlways,
};
