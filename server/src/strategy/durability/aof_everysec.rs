//! `aof_everysec`: every write is appended to the AOF before Redis replies, and the file is
//! `fsync`ed once a second. A `kill -9` loses nothing: the appended bytes are already in the
//! kernel's page cache, which outlives the process. What this setting risks (up to a second
//! of writes not yet `fsync`ed) needs the machine itself to stop, which this run does not do.

use std::borrow::Cow;

use oversold_protocol::{
    Category, Explanation, Persistence, Scenario, ScriptCall, StrategyAbout, TapeRule, Tone, step,
    text,
};

use super::DurabilityStrategy;

/// Append-only file, `fsync` once a second.
pub const STRATEGY: DurabilityStrategy = DurabilityStrategy {
    about: StrategyAbout {
        name: text("aof_everysec"),
        label: text("AOF, fsync every second (a process crash loses nothing)"),
        short_label: text("AOF everysec"),
        description: text(
            "Redis appends every write to its AOF before replying and fsyncs once a second. Killed mid-sale, it replays the file and loses nothing; only a machine crash or power cut could lose the last second.",
        ),
        unsafe_by_design: false,
        category: Category::Atomic,
        featured: false,
        scripts: Cow::Borrowed(&[text("reserve.lua")]),
        explanation: Explanation {
            title: text("Why kill -9 loses nothing here, and what still could"),
            how: text(
                "The buyers run reserve.lua. The run's own redis-server has appendonly yes and appendfsync everysec: \
                 each write command is appended to the append-only file before its reply is sent, and a background \
                 thread fsyncs the file once a second. Mid-sale the server sends Redis SIGKILL and starts it again; \
                 Redis replays the file.",
            ),
            why: text(
                "write() hands the bytes to the kernel; the process may die a moment later and they still reach the \
                 disk, because the page cache belongs to the kernel, not to Redis. Only fsync protects against the \
                 kernel itself stopping: a power cut or a panic can take the writes of the last second. This run \
                 kills a process, not a machine, so it shows no such loss, and does not invent one.",
            ),
            cost: text(
                "A write per event-loop turn and an fsync a second: close to no persistence in throughput. The usual \
                 production choice.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #23",
                    "EVALSHA reserve 1 → {1, 18, 17}",
                    "appended to the AOF (page cache) before the reply",
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
    persistence: Persistence::AofEverysec,
};
