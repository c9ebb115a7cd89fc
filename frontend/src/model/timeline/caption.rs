//! The one-line reading of the picture, in plain words with numbers: what the race did, told
//! from the numbers in [`Race`], so the caption and the drawing cannot disagree.

use super::race::Race;
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
    let Some(out) = race.stock_out_us else {
        let so_far = if running { " so far" } else { "" };
        return format!(
            "The stock has not run out{so_far}: {} of {} units sold.",
            thousands(race.units_sold as i64),
            thousands(race.stock.into())
        );
    };
    if race.stock == 0 {
        return match race.oversold_orders {
            0 => "There was no stock at all, and every order was refused.".to_string(),
            n => format!(
                "There was no stock at all, yet {} sold units that did not exist.",
                count(n.into(), "buyer")
            ),
        };
    }
    let at = micros(out);
    if race.read_before > 0 {
        let lead = format!(
            "{} read the stock before it ran out at {at}",
            count(race.read_before.into(), "buyer")
        );
        return match race.stale_oversold {
            0 => format!("{lead}; none of them sold a unit that did not exist."),
            n if n == race.read_before => format!(
                "{lead}; all {} went on to sell units that did not exist.",
                thousands(n.into())
            ),
            n => format!(
                "{lead}; {} of them went on to sell units that did not exist.",
                thousands(n.into())
            ),
        };
    }
    let mut text = format!("The stock ran out at {at}");
    if race.oversold_orders > 0 {
        text.push_str(&format!(
            "; after it, {} still sold units that did not exist.",
            count(race.oversold_orders.into(), "buyer")
        ));
        return text;
    }
    if race.refused > 0 {
        text.push_str(&format!(
            "; {} were refused",
            count(race.refused.into(), "buyer")
        ));
    }
    if race.readers == 0 {
        text.push_str(". No app-side read to go stale: check and write were one atomic step.");
    } else {
        text.push('.');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{atomic_run, naive_run};
    use super::super::race::race;
    use super::*;
    use crate::model::run::Mark;

    #[test]
    fn naive_caption_counts_reads_before_the_stock_ran_out() {
        let run = naive_run(10, 50);
        let r = race(&run.rows, 10);
        // Every read (101..=150 µs) came back before the tenth sale answered at 1,100 µs.
        assert_eq!(
            (r.read_before, r.stale_oversold, r.oversold_orders),
            (50, 40, 40)
        );
        assert_eq!(
            caption(&r, false),
            "50 buyers read the stock before it ran out at 1.1 ms; \
             40 of them went on to sell units that did not exist."
        );
        // Reads after the line do not count as racing it.
        let mut late = naive_run(10, 12);
        late.rows[11].outcome.read_us = Some(5_000);
        let r = race(&late.rows, 10);
        assert_eq!((r.read_before, r.stale_oversold), (11, 1));
    }

    #[test]
    fn atomic_caption_claims_no_race() {
        let run = atomic_run(10, 50);
        let r = race(&run.rows, 10);
        assert_eq!((r.readers, r.read_before, r.refused), (0, 0, 40));
        let text = caption(&r, false);
        assert_eq!(
            text,
            "The stock ran out at 250 µs; 40 buyers were refused. \
             No app-side read to go stale: check and write were one atomic step."
        );
        assert!(!text.contains("read the stock before"));
    }

    #[test]
    fn captions_for_the_edges() {
        let empty = race(&[], 10);
        assert!(caption(&empty, false).starts_with("Run a strategy"));
        assert!(caption(&empty, true).starts_with("Waiting"));
        let few = atomic_run(100, 3);
        let r = race(&few.rows, 100);
        assert_eq!(r.stock_out_us, None);
        assert_eq!(
            caption(&r, true),
            "The stock has not run out so far: 3 of 100 units sold."
        );
        let none = naive_run(0, 4);
        let r = race(&none.rows, 0);
        assert_eq!(r.stock_out_us, Some(0));
        assert_eq!(
            caption(&r, false),
            "There was no stock at all, yet 4 buyers sold units that did not exist."
        );
        // A safe read-then-write strategy (WATCH, lock): reads raced, nothing oversold.
        let mut watch = naive_run(10, 12);
        for row in &mut watch.rows[10..] {
            row.mark = Mark::SoldOut;
        }
        let r = race(&watch.rows, 10);
        assert!(caption(&r, false).ends_with("; none of them sold a unit that did not exist."));
        // Every racer oversold: "all", not "12 of them".
        let mut all = naive_run(1, 3);
        all.rows[0].outcome.read_us = None;
        assert!(
            caption(&race(&all.rows, 1), false)
                .ends_with("; all 2 went on to sell units that did not exist.")
        );
    }
}
