//! `reserve`: take units without overselling (the article's GET/DECR race, now in one
//! script: the check must compare the stock with the quantity, not with zero).

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::counter::{self, Stock};
use super::{CallSpec, Crowd, Exercise, Expected, Model, Rules, Script, Size, Write};

/// The exercise.
pub static EXERCISE: Exercise = Exercise {
    id: "reserve",
    title: "Reserve without overselling",
    story: "A phone shop sells a limited stock. Each buyer asks for a few units at once. \
            Write the script that takes them when there are enough, and takes nothing when \
            there are not: the stock must never go below zero, however many buyers arrive \
            together.",
    starter: include_str!("starter.lua"),
    reference: include_str!("reference.lua"),
    hints: &[
        "Try it by hand: 1 unit in stock, a buyer asks for 2. What does your check say?",
        "The question is not \"is anything left?\" but \"are there at least qty left?\".",
        "Compare the stock with tonumber(ARGV[1]) before you DECRBY, and return 0 without \
         writing when it is smaller.",
    ],
    rules: &RESERVE,
};

struct Reserve;
static RESERVE: Reserve = Reserve;

impl Rules for Reserve {
    fn keys(&self) -> &'static [&'static str] {
        &["stock"]
    }

    fn crowd(&self, rng: &mut ChaCha8Rng, size: Size) -> Crowd {
        let (stock, calls) = match size {
            Size::Small => (rng.random_range(0..=8), rng.random_range(2..=8)),
            Size::Large => (rng.random_range(5..=40), rng.random_range(20..=60)),
        };
        Crowd {
            setup: vec![Write::Set(0, stock.to_string())],
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
        Box::new(Counter(Stock::from(setup)))
    }
}

/// The contract: take `ARGV[1]` if there are that many.
pub struct Counter(pub Stock);

impl Model for Counter {
    fn call(&mut self, args: &[String]) -> Expected {
        let qty = args.first().and_then(|q| q.parse().ok()).unwrap_or(1);
        self.0.take(qty)
    }

    fn checked(&self) -> Vec<(usize, Option<String>)> {
        vec![(0, self.0.checked())]
    }
}
