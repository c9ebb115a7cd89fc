//! The page's counters while step-through mode is open: the stock is the real key (read from
//! Redis after every command), and the rest is counted from the buyers that have finished.

use oversold_protocol::{OutcomeResult, StepState};

use crate::model::run::Counters;
use crate::model::text::{count, thousands};

/// Units sold against the stock, in the counters' numbers: `1 unit sold of 1 in stock, none
/// oversold`, `2 units sold of 1 in stock: 1 oversold`. Never "2 of 1 unit sold", which reads
/// as if the stock were the total.
pub fn sold_of_stock(sold: u64, stock: u32) -> String {
    let over = sold.saturating_sub(u64::from(stock));
    let head = format!(
        "{} sold of {} in stock",
        count(sold, "unit"),
        thousands(stock.into())
    );
    if over == 0 {
        format!("{head}, none oversold")
    } else {
        format!("{head}: {} oversold", thousands(over as i64))
    }
}

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

    #[test]
    fn sold_against_stock_reads_as_the_truth() {
        assert_eq!(
            sold_of_stock(2, 1),
            "2 units sold of 1 in stock: 1 oversold"
        );
        assert_eq!(
            sold_of_stock(1, 1),
            "1 unit sold of 1 in stock, none oversold"
        );
        assert_eq!(
            sold_of_stock(0, 3),
            "0 units sold of 3 in stock, none oversold"
        );
        let (s, _) = naive_oversell();
        let c = counters(&s);
        assert_eq!(
            sold_of_stock(c.units_sold, s.config.race.stock),
            format!(
                "{} units sold of 1 in stock: {} oversold",
                c.units_sold, c.oversold_units
            ),
            "the counters' numbers"
        );
    }
}
