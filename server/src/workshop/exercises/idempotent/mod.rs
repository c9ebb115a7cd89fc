//! `idempotent`: a request resent (a timeout, a retry, a double tap) takes nothing more and
//! gets its first answer; the judge sends resends beside their originals.

use std::collections::HashMap;

use oversold_protocol::workshop::VerdictCode;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::counter::{self, Stock};
use super::{Broken, CallSpec, Crowd, Exercise, Expected, Model, Rules, Script, Size, Write};

/// The exercise.
pub static EXERCISE: Exercise = Exercise {
    id: "idempotent",
    title: "Take it once, however often it is sent",
    story: "A buyer's app times out waiting for the answer and sends the same request again, \
            with the same request id. Sometimes the first one had landed. Take the units \
            once per request id, and answer every resend with the answer the first one got, \
            whether that was 1 or 0.",
    starter: include_str!("starter.lua"),
    reference: include_str!("reference.lua"),
    hints: &[
        "Send the same request twice by hand: how many units leave the shelf?",
        "Look the request id up before you look at the stock.",
        "Record every answer, the 0s too: a resend of a refused request must be refused again \
         even if units came back since.",
    ],
    rules: &IDEMPOTENT,
};

struct Idempotent;
static IDEMPOTENT: Idempotent = Idempotent;

impl Rules for Idempotent {
    fn keys(&self) -> &'static [&'static str] {
        &["stock", "requests"]
    }

    fn crowd(&self, rng: &mut ChaCha8Rng, size: Size) -> Crowd {
        let (stock, requests) = match size {
            Size::Small => (rng.random_range(0..=8), rng.random_range(2..=6)),
            Size::Large => (rng.random_range(5..=40), rng.random_range(15..=40)),
        };
        let mut calls = Vec::new();
        for buyer in 1..=requests {
            let args = vec![counter::qty(rng).to_string(), format!("req-{buyer}")];
            let sends = if rng.random_bool(0.4) {
                rng.random_range(2..=3)
            } else {
                1
            };
            for _ in 0..sends {
                calls.push(CallSpec {
                    buyer,
                    args: args.clone(),
                    script: Script::Submitted,
                });
            }
        }
        // Resends land anywhere after, often right beside, their original.
        for i in (1..calls.len()).rev() {
            let j = rng.random_range(i.saturating_sub(3)..=i);
            calls.swap(i, j);
        }
        Crowd {
            setup: vec![Write::Set(0, stock.to_string())],
            calls,
        }
    }

    fn model(&self, setup: &[Write]) -> Box<dyn Model> {
        Box::new(Once {
            stock: Stock::from(setup),
            answers: HashMap::new(),
        })
    }

    fn classify(&self, b: &Broken) -> VerdictCode {
        if b.repeat && !b.got_error {
            VerdictCode::Duplicate
        } else {
            counter::classify(b)
        }
    }
}

/// The contract: one answer per request id.
struct Once {
    stock: Stock,
    answers: HashMap<String, Expected>,
}

impl Model for Once {
    fn call(&mut self, args: &[String]) -> Expected {
        let id = args.get(1).cloned().unwrap_or_default();
        if let Some(first) = self.answers.get(&id) {
            return first.clone();
        }
        let qty = args.first().and_then(|q| q.parse().ok()).unwrap_or(1);
        let answer = self.stock.take(qty);
        self.answers.insert(id, answer.clone());
        answer
    }

    fn checked(&self) -> Vec<(usize, Option<String>)> {
        vec![(0, self.stock.checked())]
    }
}
