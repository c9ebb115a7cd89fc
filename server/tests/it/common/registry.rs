//! Which suite races which strategy, read from the strategies themselves (their `about`,
//! their backend, their keys' tagging), never from a list of names: a strategy added to a
//! registry gets its seeded random runs, with the checker of its kind, without anyone
//! remembering to add it here.
//!
//! - race (`strategy::REGISTRY`): [`race_suite`] says whether a strategy gets random runs on
//!   Redis, random runs on PostgreSQL, or is unsafe and measured failing; [`race_check`]
//!   which checker its replies allow.
//! - cart and warehouses (`strategy::cart::REGISTRY`): [`cart_all_or_nothing`],
//!   [`cart_on_a_cluster`] and [`cart_failure`].
//! - checkout (`strategy::checkout::REGISTRY`): safe means not `unsafe_by_design` (a strategy
//!   without holds that never reads then decides in the app is raced with its checker too); what
//!   an unsafe one shows is a table in `checkout/invariants.rs`, because nothing in a
//!   checkout strategy's words says which of its lessons a default run shows.
//!
//! [`each`] runs one check per strategy and reports every strategy that failed, not only
//! the first.

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;

use oversold::store::StockLayout;
use oversold::store::shelves::Tagging;
use oversold::strategy::cart::CartStrategy;
use oversold::strategy::{Backend, Strategy};
use oversold_protocol::{Category, Scenario, TapeRule};

/// Where a race strategy is raced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaceSuite {
    /// Safe, on Redis alone: hundreds of random runs (`all_strategies`, `cluster`; the
    /// featured one also in `invariants`).
    RandomOnRedis,
    /// Safe, on PostgreSQL: random runs in `invariants`.
    RandomOnPostgres,
    /// Unsafe by design, on Redis: measured failing with the defaults (`invariants` for the
    /// featured one, `all_strategies` for the others).
    MeasuredOnRedis,
    /// Unsafe by design, on PostgreSQL: measured failing with the defaults, beside the safe
    /// ones on the same seeds (`invariants`).
    MeasuredOnPostgres,
}

/// Where `s` is raced. An error would mean no suite can race it (a strategy that fits none
/// must fail `every_race_strategy_has_a_suite` instead of going unraced); today every
/// combination of safe or not, Redis or PostgreSQL, has its suite.
pub fn race_suite(s: &Strategy) -> Result<RaceSuite, String> {
    match (s.about.unsafe_by_design, s.uses_redis()) {
        (false, true) => Ok(RaceSuite::RandomOnRedis),
        (false, false) => Ok(RaceSuite::RandomOnPostgres),
        (true, true) => Ok(RaceSuite::MeasuredOnRedis),
        (true, false) => Ok(RaceSuite::MeasuredOnPostgres),
    }
}

/// The registered race strategies raced by `suite`, in the registry's order.
pub fn race_strategies(suite: RaceSuite) -> Vec<&'static Strategy> {
    oversold::strategy::REGISTRY
        .iter()
        .copied()
        .filter(|s| race_suite(s) == Ok(suite))
        .collect()
}

/// How a safe race strategy's outcomes are checked, read from its tape rule: the rule says
/// what its replies are, and so how far they order the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaceCheck {
    /// Each reply is a read taken atomically with the write (or under a guard): some serial
    /// order of the buyers explains the run.
    SerialOrder,
    /// The reply is the counter after a DECRBY that may yet be undone (`decr_compensate`):
    /// serial only while every order is one unit; otherwise weaker, adapted checks.
    DecrementThenUndo,
    /// Serial per bucket (`sharded`): a refusal while another bucket held units is exactly
    /// what the summary counts as `false_sold_out`.
    PerBucket,
}

/// The checker for `s`'s replies.
pub fn race_check(s: &Strategy) -> RaceCheck {
    match s.about.tape {
        TapeRule::DecrementThenUndo => RaceCheck::DecrementThenUndo,
        TapeRule::AtomicPerBucket { .. } => RaceCheck::PerBucket,
        _ => RaceCheck::SerialOrder,
    }
}

/// True for a strategy whose buyers wait their turn (WATCH retries, a lock) and give up
/// after a bound, taking nothing: the one ending besides sold and sold out it may report.
pub fn may_give_up(s: &Strategy) -> bool {
    matches!(s.about.category, Category::Optimistic | Category::Lock)
}

/// How `s` keeps its run's stock: one counter, or buckets.
pub fn layout(s: &Strategy) -> StockLayout {
    match s.backend {
        Backend::SharedRedis(buyer) => buyer.layout(),
        Backend::ExclusiveRedis(_) | Backend::QuorumRedis(_) | Backend::Postgres(_) => {
            StockLayout::Counter
        }
    }
}

/// A seed of `s`'s own for a suite: `base` mixed with the strategy's name (FNV-1a), so each
/// strategy's runs stay the same when another strategy joins the registry.
pub fn seed(base: u64, name: &str) -> u64 {
    name.bytes().fold(base ^ 0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A cart or warehouse strategy that takes every line of an order or none on a single Redis.
/// `cart_script_untagged` is `unsafe_by_design` only because its keys share no hash tag (a
/// cluster refuses it with CROSSSLOT); a single Redis has no slots, so it counts here.
pub fn cart_all_or_nothing(s: &CartStrategy) -> bool {
    !s.about.unsafe_by_design || s.tagging == Tagging::Untagged
}

/// A cart or warehouse strategy a cluster runs: its keys share the run's tag.
pub fn cart_on_a_cluster(s: &CartStrategy) -> bool {
    s.tagging == Tagging::Shared
}

/// What an unsafe cart or warehouse strategy must show in a default run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CartFailure {
    /// A check-then-write oversells a shelf; anything else (each step atomic) never does.
    pub oversells: bool,
    /// A cart taken line by line, with no undo, leaves partial carts.
    pub partial: bool,
}

/// What `s` (unsafe, and not only on a cluster) must show; an error when its words imply
/// no failure at all, so that the suite asks what it gets wrong.
pub fn cart_failure(s: &CartStrategy) -> Result<CartFailure, String> {
    let f = CartFailure {
        oversells: s.about.category == Category::CheckThenWrite,
        partial: s.about.scenario == Scenario::Cart,
    };
    if f.oversells || f.partial {
        Ok(f)
    } else {
        Err(format!(
            "{}: unsafe by design, yet neither a check-then-write nor a cart: say what its \
             default runs get wrong in common/registry.rs",
            s.name()
        ))
    }
}

/// Run `checks` (one per strategy, named) one after another, and fail once at the end
/// naming every strategy whose check panicked: one broken strategy does not hide the next.
/// An empty list fails too: a filter that selects nothing would otherwise pass without
/// racing anything.
pub async fn each<F>(what: &str, checks: Vec<(String, F)>)
where
    F: Future<Output = ()>,
{
    assert!(!checks.is_empty(), "no registered strategy is {what}");
    let mut failed = Vec::new();
    for (name, check) in checks {
        // Caught in place, not spawned as a task: a check may hold what is not `Send` (a
        // stream of checkouts borrowing their configs).
        if let Err(panic) = AssertUnwindSafe(check).catch_unwind().await {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic without a message".into());
            failed.push(format!("{name}: {why}"));
        }
    }
    assert!(failed.is_empty(), "{what}:\n{}", failed.join("\n"));
}
