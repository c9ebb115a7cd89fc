//! `cart`: three lines, all or nothing. A script that takes line by line and gives back when
//! a later line is short must give back every line it took: Redis has no rollback.

use oversold_protocol::workshop::VerdictCode;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::counter::{self, Stock};
use super::{Broken, CallSpec, Crowd, Exercise, Expected, Model, Rules, Script, Size, Write};

/// The exercise.
pub static EXERCISE: Exercise = Exercise {
    id: "cart",
    title: "A cart is all or nothing",
    story: "A buyer checks out a cart of three products at once. Either every line is taken, \
            or none is: a cart that leaves with the case but not the phone is a support call. \
            Redis runs the script whole, but it does not undo what a script already wrote: \
            write nothing until you know every line fits.",
    starter: include_str!("starter.lua"),
    reference: include_str!("reference.lua"),
    hints: &[
        "Try a cart whose first line fits and whose second does not: what is left of the first?",
        "Redis has no rollback: a DECRBY stays done, even if the script returns 0 (or errors) later.",
        "Read and check every line first; only when all fit, DECRBY each.",
    ],
    rules: &CART,
};

pub(super) struct Cart;
pub(super) static CART: Cart = Cart;

impl Rules for Cart {
    fn keys(&self) -> &'static [&'static str] {
        &["sku1", "sku2", "sku3"]
    }

    fn crowd(&self, rng: &mut ChaCha8Rng, size: Size) -> Crowd {
        let (most, calls) = match size {
            Size::Small => (5, rng.random_range(2..=6)),
            Size::Large => (30, rng.random_range(15..=40)),
        };
        Crowd {
            setup: (0..3)
                .map(|k| Write::Set(k, rng.random_range(0..=most).to_string()))
                .collect(),
            calls: (1..=calls)
                .map(|buyer| CallSpec {
                    buyer,
                    args: (0..3)
                        .map(|_| rng.random_range(1..=2).to_string())
                        .collect(),
                    script: Script::Submitted,
                })
                .collect(),
        }
    }

    fn model(&self, setup: &[Write]) -> Box<dyn Model> {
        let stock = |k: usize| {
            Stock(setup.iter().find_map(|w| match w {
                Write::Set(i, v) if *i == k => Some(v.clone()),
                _ => None,
            }))
        };
        Box::new(Lines([stock(0), stock(1), stock(2)]))
    }

    fn classify(&self, b: &Broken) -> VerdictCode {
        let refused_but_wrote = b.expected == Expected::Int(0) && !b.got_error && b.state.is_some();
        if refused_but_wrote || (b.got_error && b.state.is_some()) {
            VerdictCode::PartialCart
        } else {
            counter::classify(b)
        }
    }
}

/// The contract: every line, or none.
struct Lines([Stock; 3]);

impl Model for Lines {
    fn call(&mut self, args: &[String]) -> Expected {
        let want: Vec<i64> = args.iter().map(|q| q.parse().unwrap_or(1)).collect();
        let fits = self
            .0
            .iter()
            .zip(&want)
            .all(|(s, q)| s.units().unwrap_or(0) >= *q);
        if !fits {
            return Expected::Int(0);
        }
        for (s, q) in self.0.iter_mut().zip(want) {
            s.take(q);
        }
        Expected::Int(1)
    }

    fn checked(&self) -> Vec<(usize, Option<String>)> {
        self.0
            .iter()
            .enumerate()
            .map(|(k, s)| (k, s.checked()))
            .collect()
    }
}
