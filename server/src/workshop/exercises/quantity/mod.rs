//! `quantity`: `reserve`, and refuse a quantity or a stock that is not a canonical integer
//! with a `BAD_INPUT` error, changing nothing (`tonumber` takes "01", "1.5" and "1e2").

use oversold_protocol::workshop::VerdictCode;
use rand::Rng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

use super::counter::{self, Stock, canonical};
use super::{Broken, CallSpec, Crowd, Exercise, Expected, Model, Rules, Script, Size, Write};

/// The exercise.
pub static EXERCISE: Exercise = Exercise {
    id: "quantity",
    title: "Refuse what is not a number",
    story: "The shop's app sends the quantity as text, and not every client behaves: some \
            send \"01\", \"1.5\" or \"1e2\", and a bad deploy once left \"lots\" in the stock \
            key. Take units as in reserve, but answer anything that is not a canonical \
            integer with an error that starts with BAD_INPUT, and change nothing.",
    starter: include_str!("starter.lua"),
    reference: include_str!("reference.lua"),
    hints: &[
        "tonumber(\"1.5\") is 1.5 and tonumber(\"01\") is 1: Lua is generous, the contract is not.",
        "Match the text itself: \"0\", or an optional minus and digits that do not start with 0.",
        "Check both ARGV[1] and what GET returned before any write, and return \
         redis.error_reply('BAD_INPUT …') when either is wrong.",
    ],
    rules: &QUANTITY,
};

struct Quantity;
static QUANTITY: Quantity = Quantity;

/// Quantities the contract refuses.
const BAD_QTYS: [&str; 9] = ["0", "-1", "01", "1.5", "1e2", " 2", "abc", "", "0x3"];
/// Stocks the contract refuses.
const BAD_STOCKS: [&str; 5] = ["lots", "2.5", "07", "", "1e3"];

impl Rules for Quantity {
    fn keys(&self) -> &'static [&'static str] {
        &["stock"]
    }

    fn crowd(&self, rng: &mut ChaCha8Rng, size: Size) -> Crowd {
        let calls = match size {
            Size::Small => rng.random_range(2..=8),
            Size::Large => rng.random_range(20..=60),
        };
        let setup = match rng.random_range(0..10) {
            0 => vec![], // no stock key: 0 in stock
            1 | 2 => vec![Write::Set(0, BAD_STOCKS.choose(rng).unwrap().to_string())],
            _ => vec![Write::Set(0, rng.random_range(0..=20).to_string())],
        };
        let calls = (1..=calls)
            .map(|buyer| {
                let qty = if rng.random_bool(0.25) {
                    BAD_QTYS.choose(rng).unwrap().to_string()
                } else {
                    counter::qty(rng).to_string()
                };
                CallSpec {
                    buyer,
                    args: vec![qty],
                    script: Script::Submitted,
                }
            })
            .collect();
        Crowd { setup, calls }
    }

    fn model(&self, setup: &[Write]) -> Box<dyn Model> {
        Box::new(Strict(Stock::from(setup)))
    }

    fn classify(&self, b: &Broken) -> VerdictCode {
        match b.expected {
            Expected::Error(_) => VerdictCode::BadInputAccepted,
            Expected::Int(_) => counter::classify(b),
        }
    }
}

/// The contract: `reserve`, after both inputs are checked.
struct Strict(Stock);

impl Model for Strict {
    fn call(&mut self, args: &[String]) -> Expected {
        let qty = args.first().and_then(|q| canonical(q)).filter(|q| *q >= 1);
        match (qty, self.0.units()) {
            (Some(qty), Some(_)) => self.0.take(qty),
            _ => Expected::Error("BAD_INPUT"),
        }
    }

    fn checked(&self) -> Vec<(usize, Option<String>)> {
        vec![(0, self.0.checked())]
    }
}
