//! Test fixtures for the checkout: stories, live frames, summaries and a server's checkout
//! strategies, as host tests need them. The strategy words stand in for a real server's.

use oversold_protocol::{
    BuyerOutcome, Category, CheckoutEnd, CheckoutStep, CheckoutStory, CheckoutTally, Fate,
    LedgerKind, NotifyStats, OutcomeResult, ReaperStats, Reconciliation, RunConfig, RunRequest,
    RunSummary, Scenario, Stage, StepOutcome, StrategyInfo, TapeRule,
};

use crate::model::fixtures::{info, outcome, summary};

/// The race term a checkout ending is reported with (`protocol::CheckoutEnd`'s docs).
pub(crate) fn result_of(end: CheckoutEnd) -> OutcomeResult {
    match end {
        CheckoutEnd::Confirmed | CheckoutEnd::Backordered => OutcomeResult::Reserved,
        CheckoutEnd::SoldOut | CheckoutEnd::OverLimit => OutcomeResult::SoldOut,
        CheckoutEnd::Refused | CheckoutEnd::Failed => OutcomeResult::Error,
        CheckoutEnd::Abandoned | CheckoutEnd::PaymentFailed | CheckoutEnd::Expired => {
            OutcomeResult::GaveUp
        }
        CheckoutEnd::Crashed => OutcomeResult::Unknown,
    }
}

/// Buyer `buyer` (customer = buyer, one unit) whose story is `steps`, one shop second each.
pub(crate) fn story(buyer: u32, end: CheckoutEnd, steps: &[(Stage, StepOutcome)]) -> BuyerOutcome {
    let mut o = outcome(buyer, 1, result_of(end));
    o.checkout = Some(CheckoutStory {
        customer: buyer,
        request_id: format!("rq{buyer}"),
        hold_id: None,
        expires_at_shop_ms: None,
        fate: Fate::Pay,
        retried: false,
        from_record: false,
        duplicate_units: 0,
        customer_units: None,
        end,
        steps: steps
            .iter()
            .enumerate()
            .map(|(i, &(stage, outcome))| CheckoutStep {
                stage,
                outcome,
                start_us: i as u64 * 10,
                end_us: i as u64 * 10 + 10,
                start_shop_ms: i as u64 * 1_000,
                end_shop_ms: i as u64 * 1_000 + 1_000,
            })
            .collect(),
    });
    o
}

/// A story that ends `end`, with the usual steps for it (holds strategies).
pub(crate) fn ending(buyer: u32, end: CheckoutEnd) -> BuyerOutcome {
    use Stage as S;
    use StepOutcome as O;
    let steps: &[(Stage, StepOutcome)] = match end {
        CheckoutEnd::Confirmed => &[
            (S::Reserve, O::Held),
            (S::Pay, O::Paid),
            (S::Confirm, O::Confirmed),
            (S::Ledger, O::Recorded),
        ],
        CheckoutEnd::Abandoned => &[
            (S::Reserve, O::Held),
            (S::Pay, O::Abandoned),
            (S::Release, O::Released),
        ],
        CheckoutEnd::PaymentFailed => &[
            (S::Reserve, O::Held),
            (S::Pay, O::Declined),
            (S::Release, O::Released),
        ],
        CheckoutEnd::Crashed => &[(S::Reserve, O::Held), (S::Crash, O::Crashed)],
        CheckoutEnd::SoldOut => &[(S::Reserve, O::SoldOut)],
        CheckoutEnd::OverLimit => &[(S::Reserve, O::OverLimit)],
        _ => &[(S::Reserve, O::Failed)],
    };
    story(buyer, end, steps)
}

/// A `reconciliation` frame at shop 1:40 (real 1 s), one hold per held unit.
pub(crate) fn reconciliation(
    stock: u32,
    available: i64,
    held: i64,
    sold: u64,
    leaked: i64,
) -> Reconciliation {
    Reconciliation {
        shop_ms: 100_000,
        real_ms: 1_000,
        stock,
        available,
        held,
        holds: held as u32,
        sold,
        settling: 0,
        leaked,
        backorders: 0,
    }
}

/// A checkout's tally with every count at zero, settled in PostgreSQL.
pub(crate) fn tally() -> CheckoutTally {
    CheckoutTally {
        ledger: LedgerKind::Postgres,
        confirmed_units: 0,
        confirmed_orders: 0,
        held_units: 0,
        released_units: 0,
        expired_units: 0,
        leaked_units: 0,
        duplicate_reservations: 0,
        limit_violations: 0,
        backorder_units: 0,
        overage_units: 0,
        refused_unreachable: 0,
        refused_by_limit: 0,
        crashed: 0,
        abandoned: 0,
        payment_failed: 0,
        paid_too_late: 0,
        answered_from_record: 0,
        reconciled_units: 0,
        shop_ms: 400_000,
        real_ms: 4_000,
        reaper: ReaperStats::default(),
        notify: NotifyStats::default(),
    }
}

/// A checkout summary: `stock == final_stock + confirmed + held + leaked` (held is what is left).
pub(crate) fn tally_summary(
    stock: u32,
    final_stock: i64,
    confirmed: u64,
    leaked: i64,
) -> RunSummary {
    let mut s = summary(stock, confirmed, final_stock);
    s.strategy = "holds".into();
    s.oversold_units = u64::try_from(-final_stock).unwrap_or(0);
    s.checkout = Some(Box::new(CheckoutTally {
        confirmed_units: confirmed,
        confirmed_orders: confirmed as u32,
        held_units: (i64::from(stock) - final_stock - confirmed as i64 - leaked) as u64,
        leaked_units: leaked,
        ..tally()
    }));
    s
}

/// A `holds` checkout's config with the defaults (hold 5 min, ×20).
pub(crate) fn checkout_config(stock: u32, buyers: u32) -> RunConfig {
    RunRequest {
        strategy: Some("holds".into()),
        stock: Some(stock),
        buyers: Some(buyers),
        scenario: Some(Scenario::Checkout),
        seed: Some(7),
        ..Default::default()
    }
    .validate(7)
    .expect("defaults are valid")
}

/// A server's checkout strategies: two featured (`atomic_no_holds`, unsafe by design: it
/// leaks; `idempotent_holds`), and `naive_checkout`, unsafe too.
pub(crate) fn checkout_strategies() -> Vec<StrategyInfo> {
    let mut list = vec![
        info(
            "naive_checkout",
            "Naive checkout",
            "Naive checkout",
            Category::CheckThenWrite,
            false,
            &[],
        ),
        info(
            "atomic_no_holds",
            "Atomic, no holds",
            "Atomic, no holds",
            Category::Atomic,
            true,
            &["reserve.lua"],
        ),
        info(
            "holds",
            "Holds that expire",
            "Holds",
            Category::Holds,
            false,
            &["reserve_hold.lua"],
        ),
        info(
            "idempotent_holds",
            "Idempotent holds",
            "Idempotent holds",
            Category::Holds,
            true,
            &["reserve_hold_once.lua"],
        ),
    ];
    for s in &mut list {
        s.about.scenario = Scenario::Checkout;
        s.about.tape = TapeRule::Story;
        s.about.unsafe_by_design = matches!(&*s.about.name, "naive_checkout" | "atomic_no_holds");
    }
    list
}
