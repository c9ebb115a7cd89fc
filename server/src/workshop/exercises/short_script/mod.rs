//! `short_script`: correct is not enough; a script holds all of Redis while it runs, so the
//! judge times the longest call (`SLOWLOG`) on a shelf of 50,000 units.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{CallSpec, Crowd, Exercise, Expected, Model, Rules, Script, Size, Write, counter};

/// Units on the shelf in the large crowds: enough that reading them all is slow.
pub const LONG_SHELF: u32 = 50_000;

/// The exercise.
pub static EXERCISE: Exercise = Exercise {
    id: "short_script",
    title: "Keep the script short",
    story: "This shop keeps its stock as a list of unit ids, one entry per phone, so each \
            sale knows which phone it took. While a script runs, Redis serves nobody else: \
            take qty units off the list, or none when fewer remain, and never hold Redis \
            for more than a millisecond, even with 50,000 units on the shelf.",
    starter: include_str!("starter.lua"),
    reference: include_str!("reference.lua"),
    hints: &[
        "How many entries does LRANGE key 0 -1 copy when the shelf holds 50,000 units?",
        "Redis keeps a list's length: LLEN answers without reading the list.",
        "LPOP takes a count (Redis 6.2 and later): one call can take qty units.",
    ],
    rules: &SHORT,
};

struct Short;
static SHORT: Short = Short;

impl Rules for Short {
    fn keys(&self) -> &'static [&'static str] {
        &["shelf"]
    }

    fn crowd(&self, rng: &mut ChaCha8Rng, size: Size) -> Crowd {
        let (units, calls) = match size {
            Size::Small => (rng.random_range(0..=8), rng.random_range(2..=8)),
            Size::Large => (LONG_SHELF, rng.random_range(10..=30)),
        };
        let setup = if units == 0 {
            vec![]
        } else {
            vec![Write::Units(0, units)]
        };
        Crowd {
            setup,
            calls: (1..=calls)
                .map(|buyer| CallSpec {
                    buyer,
                    args: vec![counter::qty(rng).to_string()],
                    script: Script::Submitted,
                })
                .collect(),
        }
    }

    fn model(&self, setup: &[Write]) -> Box<dyn Model> {
        let units = setup
            .iter()
            .find_map(|w| match w {
                Write::Units(0, n) => Some(i64::from(*n)),
                _ => None,
            })
            .unwrap_or(0);
        Box::new(Shelf(units))
    }

    fn time_limit_us(&self) -> Option<u64> {
        Some(1_000)
    }
}

/// The contract: a list's length, taken from.
struct Shelf(i64);

impl Model for Shelf {
    fn call(&mut self, args: &[String]) -> Expected {
        let qty: i64 = args.first().and_then(|q| q.parse().ok()).unwrap_or(1);
        if self.0 >= qty {
            self.0 -= qty;
            Expected::Int(1)
        } else {
            Expected::Int(0)
        }
    }

    fn checked(&self) -> Vec<(usize, Option<String>)> {
        // An emptied list is no key at all.
        vec![(0, (self.0 > 0).then(|| format!("len={}", self.0)))]
    }
}
