//! The one-line reading of the picture, in plain words with numbers. Every count it prints is
//! the run's Redis tape's (the same numbers the tape panel prints under its picture); the only
//! clock number is where the run-out marker sits on the time axis.

use super::race::{Race, TapeCounts};
use crate::model::text::{count, micros, thousands};

/// The one-line reading of the picture, in plain words with numbers.
pub fn caption(race: &Race, running: bool) -> String {
    if race.answered == 0 {
        return if running {
            "Waiting for the first answers…".to_string()
        } else {
            "Run a strategy: each buyer becomes a bar from arrival to answer, on one time axis."
                .to_string()
        };
    }
    let Some(c) = race.counts else {
        return format!(
            "{} answered; each bar runs from a buyer's arrival to its answer.",
            count(race.answered.into(), "buyer")
        );
    };
    let Some(out) = race.stock_out_us else {
        let so_far = if running { " so far" } else { "" };
        return format!(
            "The stock has not run out{so_far}: {} of {} units sold.",
            thousands(c.units_sold as i64),
            thousands(race.stock.into())
        );
    };
    if race.stock == 0 {
        return match c.phantom_sales {
            0 => "There was no stock at all, and every order was refused.".to_string(),
            n => format!(
                "There was no stock at all, yet {} sold units that did not exist.",
                count(n.into(), "buyer")
            ),
        };
    }
    let at = micros(out);
    if c.has_reads && c.passed_check > 0 {
        let read = if c.unit_orders {
            "read the stock"
        } else {
            "read enough stock for their order"
        };
        let lead = format!(
            "{} {read} before it ran out at {at}",
            count(c.passed_check.into(), "buyer")
        );
        return format!("{lead}; {}", what_they_did(&c));
    }
    let mut text = format!("The stock ran out at {at}");
    if c.phantom_sales > 0 && c.came_back {
        text.push_str(&format!(
            "; {} sold a unit a second time: Redis had come back without sales it confirmed.",
            count(c.phantom_sales.into(), "buyer")
        ));
        return text;
    }
    if c.phantom_sales > 0 {
        text.push_str(&format!(
            "; {} still sold units that did not exist.",
            count(c.phantom_sales.into(), "buyer")
        ));
        return text;
    }
    if c.refused > 0 {
        text.push_str(&format!(
            "; {} were refused",
            count(c.refused.into(), "buyer")
        ));
    }
    if c.has_reads {
        text.push('.');
    } else {
        text.push_str(". No app-side read to go stale: check and write were one atomic step.");
    }
    text
}

/// What the buyers that read in time went on to do, in the tape's numbers.
fn what_they_did(c: &TapeCounts) -> String {
    match c.phantom_sales {
        0 if c.oversold_units > 0 => format!(
            "their writes overwrote each other, and {} more than existed were sold.",
            count(c.oversold_units, "unit")
        ),
        0 => "none of them sold a unit that did not exist.".to_string(),
        n if n == c.passed_check => format!(
            "all {} went on to sell units that did not exist.",
            thousands(n.into())
        ),
        n => format!(
            "{} of them went on to sell units that did not exist.",
            thousands(n.into())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{atomic_run, atomic_tape, naive_run, naive_tape};
    use super::super::race::race;
    use super::*;

    #[test]
    fn naive_caption_counts_what_the_tape_counts() {
        let run = naive_run(10, 50);
        let tape = naive_tape(&run);
        let r = race(&run.rows, 10, Some(&tape));
        // Every read came before the first write: all 50 saw stock; 40 wrote on a counter at 0.
        assert_eq!(
            caption(&r, false),
            "50 buyers read the stock before it ran out at 1.1 ms; \
             40 of them went on to sell units that did not exist."
        );
        // The same numbers the tape panel prints.
        assert_eq!(
            (tape.caption.passed_check, tape.caption.phantom_sales),
            (50, 40)
        );
        // Clocks do not change the count: a read that came back "late" on its app's clock
        // still sits before the run-out write in Redis's order.
        let mut late = naive_run(10, 50);
        late.rows[11].outcome.read_us = Some(5_000);
        let r = race(&late.rows, 10, Some(&naive_tape(&late)));
        assert!(caption(&r, false).starts_with("50 buyers read the stock before it ran out"));
    }

    #[test]
    fn atomic_caption_claims_no_race() {
        let run = atomic_run(10, 50);
        let r = race(&run.rows, 10, Some(&atomic_tape(&run)));
        let text = caption(&r, false);
        assert_eq!(
            text,
            "The stock ran out at 250 µs; 40 buyers were refused. \
             No app-side read to go stale: check and write were one atomic step."
        );
    }

    #[test]
    fn captions_for_the_edges() {
        let empty = race(&[], 10, None);
        assert!(caption(&empty, false).starts_with("Run a strategy"));
        assert!(caption(&empty, true).starts_with("Waiting"));
        let few = atomic_run(100, 3);
        let r = race(&few.rows, 100, Some(&atomic_tape(&few)));
        assert_eq!(r.stock_out_us, None);
        assert_eq!(
            caption(&r, true),
            "The stock has not run out so far: 3 of 100 units sold."
        );
        let none = atomic_run(0, 4);
        let r = race(&none.rows, 0, Some(&atomic_tape(&none)));
        assert_eq!(r.stock_out_us, Some(0));
        assert_eq!(
            caption(&r, false),
            "There was no stock at all, and every order was refused."
        );
        // Without the strategy's rule there is no tape, and no count is guessed.
        assert_eq!(
            caption(&race(&few.rows, 100, None), false),
            "3 buyers answered; each bar runs from a buyer's arrival to its answer."
        );
        // Three read the one unit; two wrote on a counter already at 0.
        let three = naive_run(1, 3);
        let r = race(&three.rows, 1, Some(&naive_tape(&three)));
        assert!(
            caption(&r, false).ends_with("; 2 of them went on to sell units that did not exist.")
        );
        // "all" when every reader oversold; SETs that overwrote each other say so.
        let c = TapeCounts {
            passed_check: 4,
            phantom_sales: 4,
            ..TapeCounts::default()
        };
        assert_eq!(
            what_they_did(&c),
            "all 4 went on to sell units that did not exist."
        );
        let sets = TapeCounts {
            passed_check: 50,
            oversold_units: 40,
            ..TapeCounts::default()
        };
        assert_eq!(
            what_they_did(&sets),
            "their writes overwrote each other, and 40 units more than existed were sold."
        );
    }

    #[test]
    fn after_a_failover_a_sale_beyond_the_stock_is_a_unit_sold_a_second_time() {
        let r = Race {
            stock: 10,
            stock_out_us: Some(900_000),
            counts: Some(TapeCounts {
                phantom_sales: 4,
                came_back: true,
                ..TapeCounts::default()
            }),
            answered: 50,
            last_end_us: 1_900_000,
        };
        assert!(
            caption(&r, false).ends_with(
                "; 4 buyers sold a unit a second time: Redis had come back without sales it \
                 confirmed."
            ),
            "{}",
            caption(&r, false)
        );
    }
}
