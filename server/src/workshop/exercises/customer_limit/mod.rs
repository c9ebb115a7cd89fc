//! `customer_limit`: at most N units per customer across all their orders, so one buyer
//! cannot take a launch's stock; the limit counts what they already bought, not just this
//! order.

use std::collections::HashMap;

use oversold_protocol::workshop::VerdictCode;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::counter::{self, Stock};
use super::{Broken, CallSpec, Crowd, Exercise, Expected, Model, Rules, Script, Size, Write};

/// The exercise.
pub static EXERCISE: Exercise = Exercise {
    id: "customer_limit",
    title: "At most N per customer",
    story: "The launch allows each customer a few units in all, however many orders they \
            place. Take the units when the customer stays within the limit and the stock \
            has them; answer -1 when this order would take the customer past the limit, \
            and count every unit you sell against its customer.",
    starter: include_str!("starter.lua"),
    reference: include_str!("reference.lua"),
    hints: &[
        "A customer with a limit of 3 orders 2, then 2 again. What does your script answer the second time?",
        "The limit is about bought + qty, not qty alone: read what they already bought.",
        "HGET the customer's count before deciding, and HINCRBY it in the same script when you sell.",
    ],
    rules: &LIMIT,
};

struct Limit;
static LIMIT: Limit = Limit;

impl Rules for Limit {
    fn keys(&self) -> &'static [&'static str] {
        &["stock", "bought"]
    }

    fn crowd(&self, rng: &mut ChaCha8Rng, size: Size) -> Crowd {
        let (stock, calls, customers) = match size {
            Size::Small => (rng.random_range(0..=10), rng.random_range(2..=8), 3),
            Size::Large => (rng.random_range(10..=40), rng.random_range(20..=60), 8),
        };
        let limit = rng.random_range(2..=4).to_string();
        Crowd {
            setup: vec![Write::Set(0, stock.to_string())],
            calls: (1..=calls)
                .map(|buyer| CallSpec {
                    buyer,
                    args: vec![
                        rng.random_range(1..=3).to_string(),
                        format!("c{}", rng.random_range(1..=customers)),
                        limit.clone(),
                    ],
                    script: Script::Submitted,
                })
                .collect(),
        }
    }

    fn model(&self, setup: &[Write]) -> Box<dyn Model> {
        Box::new(PerCustomer {
            stock: Stock::from(setup),
            bought: HashMap::new(),
        })
    }

    fn classify(&self, b: &Broken) -> VerdictCode {
        if b.expected == Expected::Int(-1) && b.got == "1" {
            VerdictCode::LimitBroken
        } else {
            counter::classify(b)
        }
    }
}

/// The contract: the customer's limit first, then the stock.
struct PerCustomer {
    stock: Stock,
    bought: HashMap<String, i64>,
}

impl Model for PerCustomer {
    fn call(&mut self, args: &[String]) -> Expected {
        let n = |i: usize| args.get(i).and_then(|v| v.parse::<i64>().ok()).unwrap_or(1);
        let (qty, limit) = (n(0), n(2));
        let customer = args.get(1).cloned().unwrap_or_default();
        let had = self.bought.get(&customer).copied().unwrap_or(0);
        if had + qty > limit {
            return Expected::Int(-1);
        }
        let answer = self.stock.take(qty);
        if answer == Expected::Int(1) {
            self.bought.insert(customer, had + qty);
        }
        answer
    }

    fn checked(&self) -> Vec<(usize, Option<String>)> {
        vec![(0, self.stock.checked())]
    }
}
