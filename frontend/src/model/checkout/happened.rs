//! What happened in a checkout, in plain sentences: the first says how the stock ended, the
//! rest name each thing that happened to it (only what did happen), the last whether the
//! books add up. The strategy is named with the words `hello` gives it; the templates are
//! the same for every strategy, so a new strategy needs no new sentence.

use oversold_protocol::{BuyerOutcome, CheckoutConfig, CheckoutTally, RunSummary};

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
    let mut out = Vec::new();
    out.push(headline(who, s, t));
    what_came_back(t, &mut out);
    what_was_asked(s, t, config, outcomes, &mut out);
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
fn what_came_back(t: &CheckoutTally, out: &mut Vec<String>) {
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
    }
}

/// What the requests did: resends, duplicates, the per-customer limit, sold out.
fn what_was_asked<'a>(
    s: &RunSummary,
    t: &CheckoutTally,
    config: Option<&CheckoutConfig>,
    outcomes: impl Iterator<Item = &'a BuyerOutcome>,
    out: &mut Vec<String>,
) {
    let resent = outcomes
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
            "{} answered from the record of the first: nothing taken twice.",
            count(t.answered_from_record.into(), "resent request")
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
                "1 resent request answered from the record of the first: nothing taken twice.",
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
