//! The page's counters while step-through mode is open: the stock is the real key (read from
//! Redis after every command), and the rest is counted from the buyers that have finished.

use oversold_protocol::{OutcomeResult, StepState};

use crate::model::run::Counters;

/// The counters for a step session.
pub fn counters(state: &StepState) -> Counters {
    let stock = i64::from(state.config.race.stock);
    let sold = state.units_sold;
    let mut c = Counters {
        units_sold: sold,
        oversold_units: sold.saturating_sub(u64::from(state.config.race.stock)),
        ..Counters::default()
    };
    for o in state.buyers.iter().filter_map(|b| b.outcome.as_ref()) {
        match o.result {
            OutcomeResult::Reserved => c.orders_accepted += 1,
            OutcomeResult::SoldOut => c.rejected += 1,
            OutcomeResult::Error => c.errors += 1,
            OutcomeResult::GaveUp => c.gave_up += 1,
            OutcomeResult::Unknown => {
                c.unknown += 1;
                c.in_doubt_units += u64::from(o.qty);
            }
        }
    }
    c.stock_remaining = state.stock.unwrap_or(stock - sold as i64);
    // A sale the counter forgot shows as a counter above what the sales leave (the summary's
    // `lost_updates`, with nothing in doubt).
    if let Some(now) = state.stock {
        c.lost_updates = now - (stock - sold as i64);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{lua_one_each, naive_oversell};
    use super::*;

    #[test]
    fn the_stock_is_the_real_key_and_the_rest_counts_finished_buyers() {
        let (s, _) = naive_oversell();
        let c = counters(&s);
        assert_eq!(
            (
                c.stock_remaining,
                c.units_sold,
                c.orders_accepted,
                c.oversold_units
            ),
            (-1, 2, 2, 1)
        );
        assert_eq!(c.lost_updates, 0);
        let (s, _) = lua_one_each();
        let c = counters(&s);
        assert_eq!(
            (
                c.stock_remaining,
                c.units_sold,
                c.rejected,
                c.oversold_units
            ),
            (0, 1, 1, 0)
        );
        // naive_set: two sales, the counter went down by one: one lost update.
        let (mut s, _) = naive_oversell();
        s.config.race.stock = 2;
        s.stock = Some(1);
        assert_eq!(counters(&s).lost_updates, 1);
    }
}
