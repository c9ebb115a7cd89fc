//! `rdb`: snapshots only. The run's Redis writes one at set-up (`SAVE`) and one mid-sale
//! (`BGSAVE`, at a moment drawn from the seed, before the crash). Killed after it, Redis
//! loads that snapshot: every sale acknowledged since the snapshot is lost, and its units
//! are back on sale.

use std::borrow::Cow;

use oversold_protocol::{
    Category, Explanation, Persistence, Scenario, ScriptCall, StrategyAbout, TapeRule, Tone, step,
    text,
};

use super::DurabilityStrategy;

/// Snapshots: a crash loses what came after the last one.
pub const STRATEGY: DurabilityStrategy = DurabilityStrategy {
    about: StrategyAbout {
        name: text("rdb"),
        label: text("RDB snapshots (kill -9 loses what came after the last one)"),
        short_label: text("RDB"),
        description: text(
            "Redis writes a snapshot of everything at set-up and once mid-sale (BGSAVE). Killed after that and restarted, it loads the snapshot: every order acknowledged since is lost, and those units are sold again.",
        ),
        unsafe_by_design: true,
        category: Category::Atomic,
        featured: false,
        scripts: Cow::Borrowed(&[text("reserve.lua")]),
        explanation: Explanation {
            title: text("Why a snapshot is only as recent as its last write"),
            how: text(
                "The buyers run reserve.lua. The run's own redis-server writes a snapshot (dump file) with SAVE at \
                 set-up, then with BGSAVE mid-sale: Redis forks, and the child writes the data as it was at the fork. \
                 Later, at a moment drawn from the seed, the server sends Redis SIGKILL and starts it again.",
            ),
            why: text(
                "A snapshot is a photograph. Orders acknowledged after the fork live only in memory until the next \
                 snapshot, and there is none before the crash. The restarted Redis loads the photograph: the counter is \
                 back where it was, and buyers told they had a unit hold a confirmation the stock no longer remembers.",
            ),
            cost: text(
                "Cheap while selling (the fork writes in the background), and everything since the last snapshot at \
                 risk. Redis's save rules (save 60 1000 ...) choose how often; the risk is always that gap.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "server",
                    "BGSAVE → Background saving started",
                    "the snapshot holds the stock at this moment",
                    Tone::A,
                ),
                step(
                    "buyer #23",
                    "EVALSHA reserve 1 → {1, 18, 17}",
                    "acknowledged after the snapshot",
                    Tone::A,
                ),
                step(
                    "server",
                    "kill -9 redis-server; restart",
                    "loads the snapshot: buyer #23's unit is back on sale",
                    Tone::Bad,
                ),
            ]),
        },
        tape: TapeRule::AtomicCall {
            call: ScriptCall::Evalsha,
        },
        scenario: Scenario::Durability,
    },
    persistence: Persistence::Rdb,
};
