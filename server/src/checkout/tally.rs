//! A checkout run's summary: the race's counts, plus the ledger, holds and leaks.
//!
//! The numbers that must add up come from the stores, not from the buyers' own accounts:
//! `final_stock` and `held_units` from Redis, `confirmed_units` from the ledger, and
//! `leaked_units` is whatever is left of the stock after those. The buyers' stories give
//! the rest (releases, resends, refusals).

use oversold_protocol::{
    BuyerOutcome, CheckoutEnd, CheckoutStory, CheckoutTally, LedgerKind, NotifyStats,
    OutcomeResult, ReaperStats, RunConfig, RunSummary, Stage, StepOutcome,
};

use super::ledger::LedgerTotals;
use super::listener::ListenerReport;
use crate::store::notify::Shadows;
use crate::summary::latency;

/// What the stores said at the end of a run.
#[derive(Debug, Clone)]
pub struct Closing {
    /// The available counter.
    pub final_stock: i64,
    /// Units in the holds still listed.
    pub held_units: u64,
    /// The ledger, with the per-customer split.
    pub ledger: LedgerTotals,
    /// Which ledger.
    pub ledger_kind: LedgerKind,
    /// Units the reaper returned.
    pub expired_units: u64,
    /// The reaper's work.
    pub reaper: ReaperStats,
    /// The listener's work, and the releases it never heard.
    pub notify: NotifyStats,
    /// What `reconcile` messages changed, summed.
    pub reconciled_units: i64,
    /// The shop clock at the end, ms.
    pub shop_ms: u64,
    /// The real clock at the end, ms.
    pub real_ms: u64,
}

/// Customers who went over the limit: who bought more than it (the ledger says), or held
/// and bought more than it at once (the hold scripts' tally said so in a reply).
fn over_limit(outcomes: &[BuyerOutcome], ledger: &LedgerTotals, limit: u32) -> u32 {
    let limit = u64::from(limit);
    let mut over: std::collections::BTreeSet<u32> = ledger
        .per_customer
        .iter()
        .filter(|&(_, &units)| units > limit)
        .map(|(&customer, _)| customer)
        .collect();
    over.extend(
        outcomes
            .iter()
            .filter_map(|o| o.checkout.as_ref())
            .filter(|s| s.customer_units.is_some_and(|u| u > limit as i64))
            .map(|s| s.customer),
    );
    over.len() as u32
}

/// Each outcome that has a checkout story, with its story.
fn stories(outcomes: &[BuyerOutcome]) -> impl Iterator<Item = (&BuyerOutcome, &CheckoutStory)> {
    outcomes
        .iter()
        .filter_map(|o| Some((o, o.checkout.as_ref()?)))
}

/// Units whose buyer gave them back (a release step that released).
fn released_units(outcomes: &[BuyerOutcome]) -> u64 {
    stories(outcomes)
        .filter(|(_, s)| {
            s.steps
                .iter()
                .any(|st| st.stage == Stage::Release && st.outcome == StepOutcome::Released)
        })
        .map(|(o, _)| u64::from(o.qty))
        .sum()
}

/// The run's summary. See [`CheckoutTally`] for what each number means.
pub fn summarize(config: &RunConfig, outcomes: &[BuyerOutcome], closing: &Closing) -> RunSummary {
    let count = |r: OutcomeResult| outcomes.iter().filter(|o| o.result == r).count() as u32;
    let accepted: Vec<&BuyerOutcome> = outcomes
        .iter()
        .filter(|o| o.result == OutcomeResult::Reserved)
        .collect();
    let duration_us = outcomes.iter().map(|o| o.end_us).max().unwrap_or(0);
    let tally = tally(config, outcomes, closing);
    let in_doubt: Vec<&BuyerOutcome> = stories(outcomes)
        .filter(|(o, s)| s.end == CheckoutEnd::Failed && o.result == OutcomeResult::Unknown)
        .map(|(o, _)| o)
        .collect();
    RunSummary {
        strategy: config.strategy.clone(),
        stock: config.race.stock,
        buyers: config.race.buyers,
        orders_accepted: accepted.len() as u32,
        units_sold: accepted.iter().map(|o| u64::from(o.qty)).sum(),
        final_stock: closing.final_stock,
        oversold_units: u64::try_from(-closing.final_stock).unwrap_or(0),
        lost_updates: 0,
        rejected: count(OutcomeResult::SoldOut),
        errors: count(OutcomeResult::Error),
        unknown: count(OutcomeResult::Unknown),
        gave_up: count(OutcomeResult::GaveUp),
        in_doubt_units: in_doubt.iter().map(|o| u64::from(o.qty)).sum(),
        in_doubt_taken: 0,
        false_sold_out: 0,
        duration_ms: duration_us as f64 / 1_000.0,
        throughput_per_s: if duration_us == 0 {
            0.0
        } else {
            outcomes.len() as f64 / (duration_us as f64 / 1e6)
        },
        latency: latency(outcomes.iter().map(|o| o.latency_us).collect()),
        round_trips: outcomes.iter().map(|o| u64::from(o.round_trips)).sum(),
        retries: outcomes.iter().map(|o| u64::from(o.retries)).sum(),
        cancelled: outcomes.len() < config.race.buyers as usize,
        checkout: Some(Box::new(tally)),
        cart: None,
        busy: None,
        durability: None,
        eviction: None,
        failover: None,
    }
}

/// The checkout's own numbers: the stores' (ledger, holds, leaks) and the stories'.
fn tally(config: &RunConfig, outcomes: &[BuyerOutcome], closing: &Closing) -> CheckoutTally {
    let stock = i64::from(config.race.stock);
    let limit = config
        .race
        .checkout()
        .map_or(u32::MAX, |c| c.per_customer_limit);
    let ended = |end: CheckoutEnd| stories(outcomes).filter(|(_, s)| s.end == end).count() as u32;
    let ledger = &closing.ledger;
    let confirmed = ledger.confirmed_units;
    CheckoutTally {
        ledger: closing.ledger_kind,
        confirmed_units: confirmed,
        confirmed_orders: ledger.confirmed_orders,
        held_units: closing.held_units,
        released_units: released_units(outcomes),
        expired_units: closing.expired_units,
        leaked_units: stock - closing.final_stock - confirmed as i64 - closing.held_units as i64,
        duplicate_reservations: stories(outcomes)
            .map(|(_, s)| u64::from(s.duplicate_units))
            .sum(),
        limit_violations: over_limit(outcomes, ledger, limit),
        backorder_units: ledger.backorder_units,
        overage_units: (confirmed + ledger.backorder_units).saturating_sub(stock as u64),
        refused_unreachable: ended(CheckoutEnd::Refused),
        refused_by_limit: ended(CheckoutEnd::OverLimit),
        crashed: ended(CheckoutEnd::Crashed),
        abandoned: ended(CheckoutEnd::Abandoned),
        payment_failed: ended(CheckoutEnd::PaymentFailed),
        paid_too_late: ended(CheckoutEnd::Expired),
        answered_from_record: stories(outcomes).filter(|(_, s)| s.from_record).count() as u32,
        reconciled_units: closing.reconciled_units,
        shop_ms: closing.shop_ms,
        real_ms: closing.real_ms,
        reaper: closing.reaper,
        notify: closing.notify,
    }
}

/// When the holds of crashed app servers were due (shop ms): the holds only an expiry can
/// return, so how late they came back is the reaper's (or the listener's) own lateness.
pub fn crashed_due(outcomes: &[BuyerOutcome]) -> Vec<u64> {
    stories(outcomes)
        .filter(|(_, s)| s.end == CheckoutEnd::Crashed)
        .filter_map(|(_, s)| s.expires_at_shop_ms)
        .collect()
}

/// The listener's numbers (all zero without one): what it gave back and how late, and the
/// holds it never heard of, which are the shadows left with no key.
pub fn notify_stats(listener: Option<&ListenerReport>, shadows: &Shadows) -> NotifyStats {
    let Some(l) = listener else {
        return NotifyStats::default();
    };
    let late = latency(l.late_us.clone());
    NotifyStats {
        releases: l.holds,
        releases_lost: shadows.stranded_holds,
        units_lost: shadows.stranded_units,
        listener_down_ms: l.down_us / 1_000,
        release_late_p50_us: late.p50_us,
        release_late_max_us: late.max_us,
    }
}
