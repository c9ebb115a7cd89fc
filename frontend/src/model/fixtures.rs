//! Test fixtures: a server's `hello`, runs, outcomes and summaries, as host tests need them.
//!
//! The strategy words here stand in for what a real server sends; the page itself holds none.

use std::borrow::Cow;

use oversold_protocol::limits::LIMITS;
use oversold_protocol::{
    BuyerOutcome, Category, Explanation, Hello, LatencySummary, OutcomeResult, RaceConfig,
    RedisState, RunConfig, RunSummary, ScriptSource, StrategyAbout, StrategyInfo, Tone, step, text,
};

/// One strategy as `hello` lists it.
pub(crate) fn info(
    name: &'static str,
    label: &'static str,
    short_label: &'static str,
    category: Category,
    featured: bool,
    scripts: &'static [&'static str],
) -> StrategyInfo {
    StrategyInfo {
        about: StrategyAbout {
            name: text(name),
            label: text(label),
            short_label: text(short_label),
            description: text("one line on what it does"),
            unsafe_by_design: category == Category::CheckThenWrite,
            category,
            featured,
            tape: oversold_protocol::TapeRule::ReadThenDecrement {
                guard: oversold_protocol::Guard::Unguarded,
            },
            scenario: oversold_protocol::Scenario::Race,
            scripts: scripts.iter().map(|s| text(s)).collect::<Vec<_>>().into(),
            explanation: Explanation {
                title: Cow::Owned(format!("Why {short_label} does what it does")),
                how: text("how"),
                why: text("why"),
                cost: text("cost"),
                steps: Cow::Owned(vec![
                    step("buyer #7", "GET stock → 1", "looks fine", Tone::A),
                    step("buyer #12", "DECRBY stock 1 → -1", "oops", Tone::Bad),
                ]),
            },
        },
        available: true,
        unavailable_reason: None,
        step_refusal: (category == Category::Database).then(|| {
            format!("{short_label} runs in PostgreSQL; step-through steps Redis commands")
        }),
    }
}

/// The strategies of a typical server, in registry order: two featured, some scripts.
pub(crate) fn strategies() -> Vec<StrategyInfo> {
    vec![
        info(
            "naive",
            "Naive (GET, then DECRBY)",
            "Naive",
            Category::CheckThenWrite,
            true,
            &[],
        ),
        info(
            "naive_set",
            "Lost update (GET, then SET)",
            "Lost update",
            Category::CheckThenWrite,
            false,
            &[],
        ),
        info(
            "lua",
            "Atomic (Lua script)",
            "Atomic",
            Category::Atomic,
            true,
            &["reserve.lua"],
        ),
        info(
            "watch",
            "WATCH / MULTI / EXEC",
            "WATCH",
            Category::Optimistic,
            false,
            &[],
        ),
        info(
            "lock",
            "Lock per SKU",
            "Lock",
            Category::Lock,
            false,
            &["release_lock.lua"],
        ),
        info(
            "sharded",
            "Sharded counters",
            "Sharded",
            Category::Sharded,
            false,
            &["reserve_shard.lua", "reserve.lua"],
        ),
    ]
}

/// A `hello` listing [`strategies`] and their scripts.
pub(crate) fn hello() -> Hello {
    Hello {
        protocol_version: oversold_protocol::PROTOCOL_VERSION,
        server_version: "0.1.0".into(),
        redis: RedisState::Up,
        strategies: strategies(),
        scripts: ["reserve.lua", "release_lock.lua", "reserve_shard.lua"]
            .map(|file| ScriptSource {
                file: file.into(),
                source: format!("-- {file}"),
            })
            .into(),
        limits: LIMITS,
        checkout_strategies: crate::model::checkout::fixtures::checkout_strategies(),
        cart_strategies: Vec::new(),
        busy_strategies: Vec::new(),
        durability_strategies: Vec::new(),
        eviction_strategies: Vec::new(),
        failover_strategies: Vec::new(),
        ledger: oversold_protocol::LedgerInfo::default(),
        outage_allowed: false,
        chaos: Vec::new(),
        exercises: vec![],
        presets: vec![],
    }
}

/// A `naive` run's config.
pub(crate) fn config(stock: u32, buyers: u32) -> RunConfig {
    RaceConfig {
        stock,
        buyers,
        qty: 1,
        max_qty: None,
        app_servers: 8,
        arrival_spread_ms: 0,
        race_window_ms: 0,
        seed: 7,
        knobs: oversold_protocol::Knobs::Race,
    }
    .with_strategy("naive")
}

/// One buyer's outcome, answered at 100 µs.
pub(crate) fn outcome(buyer: u32, qty: u32, result: OutcomeResult) -> BuyerOutcome {
    BuyerOutcome {
        buyer,
        app_server: buyer % 8,
        qty,
        observed_stock: Some(5),
        result,
        error: None,
        stock_after: None,
        latency_us: 100,
        start_us: 0,
        end_us: 100,
        read_us: None,
        round_trips: 2,
        retries: 0,
        bucket: None,
        node: None,
        checkout: None,
        cart: None,
        epoch: None,
    }
}

/// A `naive` run's summary.
pub(crate) fn summary(stock: u32, units_sold: u64, final_stock: i64) -> RunSummary {
    RunSummary {
        strategy: "naive".into(),
        stock,
        buyers: 50,
        orders_accepted: units_sold as u32,
        units_sold,
        final_stock,
        oversold_units: units_sold.saturating_sub(u64::from(stock)),
        lost_updates: 0,
        rejected: 0,
        errors: 0,
        unknown: 0,
        gave_up: 0,
        in_doubt_units: 0,
        in_doubt_taken: 0,
        false_sold_out: 0,
        duration_ms: 12.0,
        throughput_per_s: 4000.0,
        latency: LatencySummary::default(),
        round_trips: 100,
        retries: 0,
        cancelled: false,
        checkout: None,
        cart: None,
        busy: None,
        durability: None,
        eviction: None,
        failover: None,
    }
}
