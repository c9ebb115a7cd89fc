//! What happened in a checkout, in plain sentences: the first says how the stock ended, the
//! rest name each thing that happened to it (only what did happen), the last whether the
//! books add up. The strategy is named with the words `hello` gives it; the templates are
//! the same for every strategy, so a new strategy needs no new sentence.
//!
//! A leak is named by its causes, read from the buyers' stories: which buyers' app servers
//! died holding units no hold would give back, which resends took units a second time, which
//! requests landed after the app had given up on them.

use oversold_protocol::{
    BuyerOutcome, CheckoutConfig, CheckoutEnd, CheckoutStory, CheckoutTally, RunSummary, Stage,
    StepOutcome,
};

use super::super::text::count;
use super::tradeoff;

fn units(n: u64) -> String {
    count(n, "unit")
}

fn buyers(n: u64) -> String {
    count(n, "buyer")
}

/// The sentences for one run of the strategy called `who`, from its summary, its config (for
/// the per-customer limit and the outage, when known) and the outcomes kept of it (for the
/// resends; an empty iterator when they were not kept).
pub fn happened<'a>(
    who: &str,
    s: &RunSummary,
    config: Option<&CheckoutConfig>,
    outcomes: impl Iterator<Item = &'a BuyerOutcome>,
) -> Vec<String> {
    let Some(t) = s.checkout.as_deref() else {
        return Vec::new();
    };
    let outcomes: Vec<&BuyerOutcome> = outcomes.collect();
    let mut out = Vec::new();
    out.push(headline(who, s, t));
    what_came_back(t, &outcomes, &mut out);
    what_was_asked(s, t, config, &outcomes, &mut out);
    how_it_closed(s, t, config, &mut out);
    out
}

/// How the stock ended: oversold, or sold with what is back on the shelf.
fn headline(who: &str, s: &RunSummary, t: &CheckoutTally) -> String {
    if s.oversold_units > 0 {
        format!(
            "{who} promised {} that never existed: the counter ended at {}, with {} sold for {} in stock.",
            units(s.oversold_units),
            s.final_stock,
            t.confirmed_units,
            s.stock
        )
    } else {
        format!(
            "{who} sold {} of {} units, each a confirmed row in the ledger; {} back on the shelf at the end.",
            t.confirmed_units, s.stock, s.final_stock
        )
    }
}

/// Units that went back, or were lost, after a reservation.
fn what_came_back(t: &CheckoutTally, outcomes: &[&BuyerOutcome], out: &mut Vec<String>) {
    let gave_back = u64::from(t.abandoned) + u64::from(t.payment_failed);
    if gave_back > 0 {
        out.push(format!(
            "{} gave their units back ({} walked away, {} card declined): {} released.",
            buyers(gave_back),
            t.abandoned,
            t.payment_failed,
            units(t.released_units)
        ));
    }
    if t.paid_too_late > 0 {
        out.push(format!(
            "{} paid after their hold had expired: refunded, nothing sold.",
            buyers(t.paid_too_late.into())
        ));
    }
    if t.crashed > 0 {
        out.push(format!(
            "{} lost their app server right after reserving: no answer, no order.",
            buyers(t.crashed.into())
        ));
    }
    if t.expired_units > 0 {
        out.push(format!(
            "Holds nobody settled expired, and the reaper put {} back on the shelf.",
            units(t.expired_units)
        ));
    }
    if t.leaked_units > 0 {
        out.push(format!(
            "{} leaked: off the shelf, in no hold and in no order, lost until a reconciliation.",
            units(t.leaked_units as u64)
        ));
        out.extend(leak_causes(t, outcomes));
    }
}

/// One crash that leaked: said alone, or in a list.
struct Crash {
    /// Whose.
    buyer: u32,
    /// `app server 2 died right after buyer #7's reserve`.
    alone: String,
    /// `#7 (app server 2)`.
    short: String,
}

impl Crash {
    /// A resent request went to another app server than the plan's, so only a buyer that
    /// sent once names its app server.
    fn of(o: &BuyerOutcome, s: &CheckoutStory) -> Self {
        let b = o.buyer;
        if s.retried {
            Crash {
                buyer: b,
                alone: format!("buyer #{b}'s app server died right after its resend"),
                short: format!("#{b} (after its resend)"),
            }
        } else {
            let a = o.app_server;
            Crash {
                buyer: b,
                alone: format!("app server {a} died right after buyer #{b}'s reserve"),
                short: format!("#{b} (app server {a})"),
            }
        }
    }
}

impl std::fmt::Display for Crash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.alone)
    }
}

/// Most buyers a cause names before it says how many more.
const NAMED: usize = 4;

/// `#7`, `#7 and #12`, `#7, #12, #31, #40 and 3 more`.
fn buyer_list(buyers: &[String]) -> String {
    let shown = &buyers[..buyers.len().min(NAMED)];
    let rest = buyers.len() - shown.len();
    let mut parts: Vec<String> = shown.to_vec();
    if rest > 0 {
        parts.push(format!("{rest} more"));
    }
    match parts.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// What each leaked unit was, from the stories: a crash after units were taken without a
/// hold, a resend that took them a second time, a request that landed after the app gave up.
/// Names the buyers (and a crash's app server); says what no story explains, if anything.
fn leak_causes(t: &CheckoutTally, outcomes: &[&BuyerOutcome]) -> Vec<String> {
    if outcomes.is_empty() {
        return Vec::new();
    }
    // Holds expire and the reaper returns them, so only a run whose reserves took units
    // without holds leaks what a late request took.
    let no_holds = !outcomes
        .iter()
        .filter_map(|o| o.checkout.as_ref())
        .any(|s| s.steps.iter().any(|st| st.outcome == StepOutcome::Held));
    let (mut crashes, mut crashed) = (Vec::<Crash>::new(), 0u64);
    let (mut resends, mut resent) = (Vec::<u32>::new(), 0u64);
    let (mut lates, mut late) = (Vec::<u32>::new(), 0u64);
    for o in outcomes {
        let Some(s) = o.checkout.as_ref() else {
            continue;
        };
        // The reserve the app heard (a resend's, for a client that resent).
        let heard = s.steps.iter().rfind(|st| {
            matches!(st.stage, Stage::Reserve | Stage::Retry) && st.outcome != StepOutcome::Orphaned
        });
        if s.end == CheckoutEnd::Crashed && heard.is_some_and(|st| st.outcome == StepOutcome::Taken)
        {
            crashed += u64::from(o.qty);
            crashes.push(Crash::of(o, s));
        }
        // The first copy of a resent request took units the app never heard about: whatever
        // the resend got (the units again, or sold out), no order holds the first copy's.
        let first_took = s
            .steps
            .iter()
            .find(|st| st.stage == Stage::Reserve)
            .is_some_and(|st| st.outcome == StepOutcome::Taken);
        if s.retried && first_took {
            resent += u64::from(o.qty);
            resends.push(o.buyer);
        }
        if no_holds {
            let orphans = s
                .steps
                .iter()
                .filter(|st| st.outcome == StepOutcome::Orphaned)
                .count() as u64;
            if orphans > 0 {
                late += orphans * u64::from(o.qty);
                lates.push(o.buyer);
            }
        }
    }
    // Buyer order, not the order their outcomes arrived in.
    crashes.sort_by_key(|c| c.buyer);
    resends.sort_unstable();
    lates.sort_unstable();
    let resends: Vec<String> = resends.iter().map(|b| format!("#{b}")).collect();
    let lates: Vec<String> = lates.iter().map(|b| format!("#{b}")).collect();
    let mut out = Vec::new();
    match crashes.as_slice() {
        [] => {}
        [one] => out.push(format!(
            "A crash leaked {}: {one}, with no hold to expire.",
            units(crashed)
        )),
        _ => {
            let who: Vec<String> = crashes.iter().map(|c| c.short.clone()).collect();
            out.push(format!(
                "Crashes leaked {}: app servers died right after the reserves of buyers {}, with no hold to expire.",
                units(crashed),
                buyer_list(&who)
            ));
        }
    }
    match resends.len() {
        0 => {}
        1 => out.push(format!(
            "A resend leaked {}: buyer {} never heard its first reserve's answer and sent it again; the first copy had taken units that no order holds.",
            units(resent),
            resends[0]
        )),
        _ => out.push(format!(
            "Resends leaked {}: buyers {} never heard their first reserve's answer and sent it again; each first copy had taken units that no order holds.",
            units(resent),
            buyer_list(&resends)
        )),
    }
    if !lates.is_empty() {
        out.push(format!(
            "Late requests leaked {}: the reserves of buyers {} landed after the app had given up on them.",
            units(late),
            buyer_list(&lates)
        ));
    }
    let explained = crashed + resent + late;
    let leaked = u64::try_from(t.leaked_units).unwrap_or(0);
    if explained < leaked && t.reconciled_units == 0 {
        out.push(format!(
            "{} more leaked that no buyer's story accounts for.",
            units(leaked - explained)
        ));
    }
    out
}

/// What the requests did: resends, duplicates, the per-customer limit, sold out.
fn what_was_asked(
    s: &RunSummary,
    t: &CheckoutTally,
    config: Option<&CheckoutConfig>,
    outcomes: &[&BuyerOutcome],
    out: &mut Vec<String>,
) {
    let resent = outcomes
        .iter()
        .filter_map(|o| o.checkout.as_ref())
        .filter(|s| s.retried)
        .count() as u64;
    if resent > 0 {
        out.push(format!(
            "{} timed out and resent the same request.",
            count(resent, "client")
        ));
    }
    if t.duplicate_reservations > 0 {
        out.push(format!(
            "Resent requests reserved {} a second time.",
            units(t.duplicate_reservations)
        ));
    }
    if t.answered_from_record > 0 {
        out.push(format!(
            // Whichever copy of the request reached Redis second (usually the resend, but a
            // resend can overtake its original) was answered from the other's record.
            "{} sent twice: the copy that came second was answered from the record, nothing taken twice.",
            count(t.answered_from_record.into(), "request")
        ));
    }
    let limit = config.map(|c| c.per_customer_limit);
    let each = limit.map(|l| format!(" of {l}")).unwrap_or_default();
    if t.refused_by_limit > 0 {
        out.push(format!(
            "{} refused by the per-customer limit{each}.",
            count(t.refused_by_limit.into(), "order")
        ));
    }
    if t.limit_violations > 0 {
        out.push(format!(
            "{} got past the per-customer limit{each}.",
            count(t.limit_violations.into(), "customer")
        ));
    }
    let sold_out = s.rejected.saturating_sub(t.refused_by_limit);
    if sold_out > 0 {
        out.push(format!("{} found it sold out.", buyers(sold_out.into())));
    }
}

/// The outage's trade-off, reconciliation, what is still held, and whether the books add up.
fn how_it_closed(
    s: &RunSummary,
    t: &CheckoutTally,
    config: Option<&CheckoutConfig>,
    out: &mut Vec<String>,
) {
    if let Some(c) = config
        && let Some(trade) = tradeoff::TradeOff::of(c, s)
    {
        out.push(trade.sentence());
    }
    if t.reconciled_units != 0 {
        let verb = if t.reconciled_units > 0 {
            "put"
        } else {
            "took"
        };
        let place = if t.reconciled_units > 0 {
            "back on"
        } else {
            "off"
        };
        out.push(format!(
            "Reconciliation {verb} {} {place} the shelf.",
            units(t.reconciled_units.unsigned_abs())
        ));
    }
    if t.held_units > 0 {
        out.push(format!(
            "{} still held when the run ended.",
            units(t.held_units)
        ));
    }
    out.push(if t.leaked_units == 0 && s.oversold_units == 0 {
        "The books add up: every unit is on the shelf, held or sold.".to_string()
    } else {
        format!(
            "The books do not add up: {} leaked, {} oversold.",
            units(u64::try_from(t.leaked_units).unwrap_or(0)),
            units(s.oversold_units)
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::checkout::fixtures::{checkout_config, ending, tally_summary};
    use oversold_protocol::{CheckoutEnd, FailMode};

    #[test]
    fn a_holds_run_in_plain_words() {
        let mut s = tally_summary(10, 6, 4, 0);
        let t = s.checkout.as_deref_mut().unwrap();
        t.abandoned = 2;
        t.payment_failed = 1;
        t.released_units = 3;
        t.crashed = 2;
        t.expired_units = 2;
        t.answered_from_record = 1;
        s.rejected = 30;
        let mut resent = ending(3, CheckoutEnd::Confirmed);
        resent.checkout.as_mut().unwrap().retried = true;
        let config = checkout_config(10, 50);
        let lines = happened(
            "Idempotent holds",
            &s,
            config.race.checkout(),
            [resent].iter(),
        );
        assert_eq!(
            lines,
            [
                "Idempotent holds sold 4 of 10 units, each a confirmed row in the ledger; 6 back on the shelf at the end.",
                "3 buyers gave their units back (2 walked away, 1 card declined): 3 units released.",
                "2 buyers lost their app server right after reserving: no answer, no order.",
                "Holds nobody settled expired, and the reaper put 2 units back on the shelf.",
                "1 client timed out and resent the same request.",
                "1 request sent twice: the copy that came second was answered from the record, nothing taken twice.",
                "30 buyers found it sold out.",
                "The books add up: every unit is on the shelf, held or sold.",
            ]
        );
    }

    #[test]
    fn an_oversell_a_leak_and_a_limit_are_named() {
        let mut s = tally_summary(10, -30, 25, 15);
        let t = s.checkout.as_deref_mut().unwrap();
        t.duplicate_reservations = 2;
        t.limit_violations = 1;
        t.refused_by_limit = 3;
        t.reconciled_units = 4;
        s.rejected = 3;
        let config = checkout_config(10, 50);
        let lines = happened(
            "Naive checkout",
            &s,
            config.race.checkout(),
            std::iter::empty(),
        );
        assert_eq!(
            lines,
            [
                "Naive checkout promised 30 units that never existed: the counter ended at -30, with 25 sold for 10 in stock.",
                "15 units leaked: off the shelf, in no hold and in no order, lost until a reconciliation.",
                "Resent requests reserved 2 units a second time.",
                "3 orders refused by the per-customer limit of 1.",
                "1 customer got past the per-customer limit of 1.",
                "Reconciliation put 4 units back on the shelf.",
                "The books do not add up: 15 units leaked, 30 units oversold.",
            ]
        );
        // A race's summary has nothing to say here.
        assert!(
            happened(
                "Naive",
                &crate::model::fixtures::summary(10, 10, 0),
                None,
                std::iter::empty()
            )
            .is_empty()
        );
    }

    #[test]
    fn each_leak_is_named_by_its_cause_from_the_stories() {
        use crate::model::checkout::fixtures::story;
        use oversold_protocol::{Stage as S, StepOutcome as O};
        // atomic_no_holds: units taken without holds. Buyer 7's app server (7) dies after its
        // reserve; buyer 4's first reply is lost and its resend takes the unit again; buyer 9
        // crashes after a resend that took twice; buyer 12 pays and confirms.
        let crash = story(
            7,
            CheckoutEnd::Crashed,
            &[(S::Reserve, O::Taken), (S::Crash, O::Crashed)],
        );
        let mut resend = story(
            4,
            CheckoutEnd::Confirmed,
            &[
                (S::Reserve, O::Taken),
                (S::Retry, O::Taken),
                (S::Pay, O::Paid),
                (S::Confirm, O::Confirmed),
            ],
        );
        let s4 = resend.checkout.as_mut().unwrap();
        s4.retried = true;
        s4.duplicate_units = 1;
        let mut both = story(
            9,
            CheckoutEnd::Crashed,
            &[
                (S::Reserve, O::Taken),
                (S::Retry, O::Taken),
                (S::Crash, O::Crashed),
            ],
        );
        let s9 = both.checkout.as_mut().unwrap();
        s9.retried = true;
        s9.duplicate_units = 1;
        let fine = story(12, CheckoutEnd::Confirmed, &[(S::Reserve, O::Taken)]);
        // Buyer 2's first copy took the last unit; its resend found nothing left.
        let mut short = story(
            2,
            CheckoutEnd::SoldOut,
            &[(S::Reserve, O::Taken), (S::Retry, O::SoldOut)],
        );
        short.checkout.as_mut().unwrap().retried = true;
        let mut s = tally_summary(10, 4, 1, 5);
        s.checkout.as_deref_mut().unwrap().crashed = 2;
        // In the order the outcomes arrived, not the buyers'.
        let all = [crash, resend, both, fine, short];
        let lines = happened("Atomic, no holds", &s, None, all.iter());
        assert_eq!(
            lines[1..5],
            [
                "2 buyers lost their app server right after reserving: no answer, no order.",
                "5 units leaked: off the shelf, in no hold and in no order, lost until a reconciliation.",
                "Crashes leaked 2 units: app servers died right after the reserves of buyers #7 (app server 7) and #9 (after its resend), with no hold to expire.",
                "Resends leaked 3 units: buyers #2, #4 and #9 never heard their first reserve's answer and sent it again; each first copy had taken units that no order holds.",
            ]
        );
        // One of each, and a leak no story explains (outcomes kept of part of the run).
        let mut s = tally_summary(10, 5, 1, 3);
        s.checkout.as_deref_mut().unwrap().crashed = 1;
        let lines = happened("Atomic, no holds", &s, None, all[..2].iter());
        assert_eq!(
            lines[3..6],
            [
                "A crash leaked 1 unit: app server 7 died right after buyer #7's reserve, with no hold to expire.",
                "A resend leaked 1 unit: buyer #4 never heard its first reserve's answer and sent it again; the first copy had taken units that no order holds.",
                "1 unit more leaked that no buyer's story accounts for.",
            ]
        );
        // With holds a crash's units come back when the hold expires: no cause to name.
        let held = ending(3, CheckoutEnd::Crashed);
        assert_eq!(
            leak_causes(s.checkout.as_deref().unwrap(), &[&held]),
            ["3 units more leaked that no buyer's story accounts for."]
        );
        assert_eq!(
            buyer_list(&(1..=6).map(|b| format!("#{b}")).collect::<Vec<_>>()),
            "#1, #2, #3, #4 and 2 more"
        );
    }

    #[test]
    fn an_outage_says_what_the_fail_mode_traded() {
        let mut s = tally_summary(10, 2, 8, 0);
        let t = s.checkout.as_deref_mut().unwrap();
        t.backorder_units = 5;
        t.overage_units = 3;
        let mut config = checkout_config(10, 50);
        let c = config.race.checkout_mut().unwrap();
        c.fail_mode = FailMode::Open;
        c.outage_ms = 30_000;
        c.outage_at_ms = 10_000;
        let lines = happened("Holds", &s, Some(c), std::iter::empty());
        assert!(
            lines.contains(&"Fail open: Redis paused for 30 s at shop 0:10; 5 units taken as backorders, 3 beyond the stock: no sale lost, 3 units promised that are not there.".to_string()),
            "{lines:?}"
        );
    }
}
