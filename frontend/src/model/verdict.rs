//! What a finished run means, in one word and one sentence: exact, unsold, oversold, lost
//! update, or (a checkout) leaked.
//!
//! The lost update needs its own wording: the counter never goes negative, so a page that only
//! watched the counter would call the run healthy. The sentence therefore puts orders beside
//! units and says what the counter claims is left.

use oversold_protocol::RunSummary;

use super::text::count;

/// The kind of ending, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Writes overwrote each other: the counter forgot sales (it may still look healthy).
    LostUpdate,
    /// More units were promised than existed, and the counter shows it.
    Oversold,
    /// A checkout whose books do not add up: units left the shelf and are in no hold and no
    /// order (nothing was promised twice, but the shop lost track of them).
    Leaked,
    /// Every unit sold, none twice.
    Exact,
    /// Nothing oversold, but units are left (fewer buyers than units, a cancel, or give-ups).
    Unsold,
}

impl Kind {
    /// A word for a badge and a CSS hook.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::LostUpdate => "lost update",
            Kind::Oversold => "oversold",
            Kind::Leaked => "leaked",
            Kind::Exact => "exact",
            Kind::Unsold => "units left",
        }
    }

    /// True when the run sold something that did not exist, or lost track of units.
    pub fn is_bad(self) -> bool {
        matches!(self, Kind::LostUpdate | Kind::Oversold | Kind::Leaked)
    }
}

/// Classify a finished run.
pub fn kind(s: &RunSummary) -> Kind {
    // Lost updates first: such a run usually also oversold, but "the counter lied" is the news.
    if s.lost_updates != 0 {
        Kind::LostUpdate
    } else if s.oversold_units > 0 {
        Kind::Oversold
    } else if s.checkout.as_ref().is_some_and(|t| t.leaked_units != 0) {
        Kind::Leaked
    } else if s.units_sold == u64::from(s.stock) {
        Kind::Exact
    } else {
        Kind::Unsold
    }
}

/// One run in words, e.g. `Naive: 10 in stock, 34 sold (stock -24), 24 oversold`, or
/// `Lost update: 50 orders for 10 units, counter says 8 left (48 lost updates)`.
pub fn sentence(s: &RunSummary, who: &str) -> String {
    let mut text = match kind(s) {
        Kind::LostUpdate => {
            let orders = if s.units_sold == u64::from(s.orders_accepted) {
                format!("{} orders", s.orders_accepted)
            } else {
                format!("{} orders ({} units)", s.orders_accepted, s.units_sold)
            };
            format!(
                "{who}: {orders} for {} units, counter says {} left ({} lost updates)",
                s.stock,
                s.final_stock,
                s.lost_updates.abs()
            )
        }
        Kind::Oversold => format!(
            "{who}: {} in stock, {} sold (stock {}), {} oversold",
            s.stock, s.units_sold, s.final_stock, s.oversold_units
        ),
        Kind::Leaked => format!("{who}: {} of {} sold, 0 oversold", s.units_sold, s.stock),
        Kind::Exact => format!("{who}: exactly {} sold, 0 oversold", s.units_sold),
        Kind::Unsold => format!("{who}: {} of {} sold, 0 oversold", s.units_sold, s.stock),
    };
    for note in notes(s) {
        text.push_str(", ");
        text.push_str(&note);
    }
    if s.cancelled {
        text.push_str(" (cancelled)");
    }
    text
}

/// The endings beside the sales, each only when it happened: `2 failed`, `3 gave up`,
/// `4 units in doubt`, `refused 12 buyers while units remained`. The numbers are the summary's,
/// the same the counters show.
pub fn notes(s: &RunSummary) -> Vec<String> {
    if let Some(t) = s.checkout.as_deref() {
        return checkout_notes(t);
    }
    let mut notes = Vec::new();
    if s.errors > 0 {
        notes.push(format!("{} failed", s.errors));
    }
    if s.gave_up > 0 {
        notes.push(format!("{} gave up", s.gave_up));
    }
    if s.in_doubt_units > 0 {
        notes.push(format!(
            "{} in doubt (the counter shows Redis took {})",
            count(s.in_doubt_units, "unit"),
            s.in_doubt_taken
        ));
    }
    if s.false_sold_out > 0 {
        notes.push(format!(
            "refused {} while units remained",
            count(s.false_sold_out.into(), "buyer")
        ));
    }
    notes
}

/// A checkout's endings worth a word beside its sales: units leaked, reserved twice, customers
/// past the limit, units promised beyond the stock. (Buyers who walked away are the
/// scenario, not news.)
fn checkout_notes(t: &oversold_protocol::CheckoutTally) -> Vec<String> {
    let mut notes = Vec::new();
    if t.leaked_units != 0 {
        notes.push(format!(
            "{} leaked",
            count(t.leaked_units.unsigned_abs(), "unit")
        ));
    }
    if t.duplicate_reservations > 0 {
        notes.push(format!(
            "{} reserved twice",
            count(t.duplicate_reservations, "unit")
        ));
    }
    if t.limit_violations > 0 {
        notes.push(format!(
            "{} past the limit",
            count(t.limit_violations.into(), "customer")
        ));
    }
    if t.overage_units > 0 && t.backorder_units > 0 {
        notes.push(format!("{} overbooked", count(t.overage_units, "unit")));
    }
    notes
}

/// What the counter should read if no write was lost: `stock - units_sold`, less the units of
/// unanswered orders that Redis did take.
pub fn expected_stock(s: &RunSummary) -> i64 {
    i64::from(s.stock) - s.units_sold as i64 - s.in_doubt_taken as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixtures::summary;

    #[test]
    fn classifies_worst_first() {
        assert_eq!(kind(&summary(10, 10, 0)), Kind::Exact);
        assert_eq!(kind(&summary(10, 4, 6)), Kind::Unsold);
        assert_eq!(kind(&summary(10, 34, -24)), Kind::Oversold);
        let mut lost = summary(10, 50, 8);
        lost.lost_updates = 48;
        assert_eq!(kind(&lost), Kind::LostUpdate);
        assert!(Kind::LostUpdate.is_bad() && Kind::Oversold.is_bad());
        assert!(!Kind::Exact.is_bad() && !Kind::Unsold.is_bad());
    }

    #[test]
    fn a_lost_update_is_told_as_orders_against_units() {
        let mut s = summary(10, 50, 8);
        s.lost_updates = 48;
        assert_eq!(
            sentence(&s, "Lost update"),
            "Lost update: 50 orders for 10 units, counter says 8 left (48 lost updates)"
        );
        assert_eq!(expected_stock(&s), -40);
        // Random quantities: orders and units differ, so both are said.
        s.orders_accepted = 20;
        s.errors = 2;
        s.cancelled = true;
        assert_eq!(
            sentence(&s, "Lost update"),
            "Lost update: 20 orders (50 units) for 10 units, counter says 8 left (48 lost updates), 2 failed (cancelled)"
        );
    }

    #[test]
    fn failures_give_ups_doubts_and_false_refusals_are_each_said_with_the_counters_numbers() {
        let mut s = summary(10, 6, 4);
        assert!(notes(&s).is_empty());
        s.errors = 1;
        s.gave_up = 3;
        s.unknown = 2;
        s.in_doubt_units = 2;
        s.false_sold_out = 12;
        assert_eq!(
            sentence(&s, "Sharded"),
            "Sharded: 6 of 10 sold, 0 oversold, 1 failed, 3 gave up, 2 units in doubt \
             (the counter shows Redis took 0), refused 12 buyers while units remained"
        );
        s.in_doubt_units = 1;
        s.in_doubt_taken = 1;
        s.false_sold_out = 1;
        assert_eq!(
            notes(&s)[2..],
            [
                "1 unit in doubt (the counter shows Redis took 1)",
                "refused 1 buyer while units remained"
            ]
        );
        // The counter is expected one lower for the in-doubt unit that landed.
        assert_eq!(expected_stock(&s), 3);
        // In doubt is not sold: the verdict does not count those units either way.
        assert_eq!(kind(&s), Kind::Unsold);
    }

    #[test]
    fn a_checkout_names_its_leaks_and_duplicates_not_its_walkaways() {
        use crate::model::checkout::fixtures::tally_summary;
        let mut s = tally_summary(10, 3, 5, 2);
        s.gave_up = 12;
        s.checkout.as_deref_mut().unwrap().duplicate_reservations = 1;
        assert_eq!(kind(&s), Kind::Leaked);
        assert!(Kind::Leaked.is_bad());
        assert_eq!(
            sentence(&s, "Atomic, no holds"),
            "Atomic, no holds: 5 of 10 sold, 0 oversold, 2 units leaked, 1 unit reserved twice"
        );
        let naive = tally_summary(10, -30, 25, 15);
        assert_eq!(kind(&naive), Kind::Oversold);
        let fine = tally_summary(10, 6, 4, 0);
        assert_eq!((kind(&fine), notes(&fine).len()), (Kind::Unsold, 0));
    }

    #[test]
    fn other_endings() {
        assert_eq!(
            sentence(&summary(10, 34, -24), "Naive"),
            "Naive: 10 in stock, 34 sold (stock -24), 24 oversold"
        );
        assert_eq!(
            sentence(&summary(10, 10, 0), "Atomic"),
            "Atomic: exactly 10 sold, 0 oversold"
        );
        assert_eq!(
            sentence(&summary(10, 4, 6), "Atomic"),
            "Atomic: 4 of 10 sold, 0 oversold"
        );
    }
}
