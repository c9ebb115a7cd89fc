//! `none`: the run's Redis writes nothing to disk (`save ""`, `appendonly no`). Killed
//! mid-sale, it comes back empty: the stock key itself is gone, every sale acknowledged
//! before the crash is lost, and the shop reads an empty shelf as sold out.

use std::borrow::Cow;

use oversold_protocol::{
    Category, Explanation, Persistence, Scenario, ScriptCall, StrategyAbout, TapeRule, Tone, step,
    text,
};

use super::DurabilityStrategy;

/// No persistence: a crash forgets everything.
pub const STRATEGY: DurabilityStrategy = DurabilityStrategy {
    about: StrategyAbout {
        name: text("none"),
        label: text("No persistence (kill -9 forgets everything)"),
        short_label: text("None"),
        description: text(
            "Redis keeps the stock in memory only. Killed mid-sale and restarted, it loads nothing: every order acknowledged before the crash is gone, and the stock key with it.",
        ),
        unsafe_by_design: true,
        category: Category::Atomic,
        featured: true,
        scripts: Cow::Borrowed(&[text("reserve.lua")]),
        explanation: Explanation {
            title: text("Why an acknowledged order can vanish"),
            how: text(
                "The buyers run reserve.lua, atomic as ever. The run's own redis-server has save \"\" and appendonly no. \
                 Mid-sale, at a moment drawn from the seed, the server sends it SIGKILL and starts it again from its \
                 directory, which holds no file.",
            ),
            why: text(
                "Atomic is not durable. reserve.lua decides each order correctly in memory, and the buyer's \
                 acknowledgement leaves before anything is on disk, because nothing ever goes to disk. A process that dies \
                 takes its memory along; the restarted Redis has no stock key at all.",
            ),
            cost: text(
                "The fastest setting, and every acknowledged order since the start at risk. Fine for a cache that can be \
                 rebuilt; not for the only copy of the stock.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #7",
                    "EVALSHA reserve 1 → {1, 31, 30}",
                    "acknowledged: the buyer is told it has a unit",
                    Tone::A,
                ),
                step(
                    "server",
                    "kill -9 redis-server; restart",
                    "nothing on disk to load",
                    Tone::Bad,
                ),
                step(
                    "server",
                    "GET stock → (nil)",
                    "the stock and buyer #7's order are gone",
                    Tone::Bad,
                ),
            ]),
        },
        tape: TapeRule::AtomicCall {
            call: ScriptCall::Evalsha,
        },
        scenario: Scenario::Durability,
    },
    persistence: Persistence::None,
};
