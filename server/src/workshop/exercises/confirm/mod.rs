//! `confirm`: sell a hold while the reaper may be giving it back. The race is between two
//! scripts, the student's confirm and the shop's own hold-and-reap script (the `hold`
//! exercise's reference), and the judge runs them in the same crowds on the same
//! connections, as it runs a resend beside its original.

use oversold_protocol::workshop::VerdictCode;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::holds::{self, Book};
use super::{Broken, CallSpec, Crowd, Exercise, Expected, Model, Rules, Script, Size, Write};

/// The exercise.
pub static EXERCISE: Exercise = Exercise {
    id: "confirm",
    title: "Confirm while the reaper runs",
    story: "The buyer paid, and the app confirms their hold. The app used to ask whether the \
            hold was still there, then confirm it in a second call; the reaper ran in between, \
            and the same units went back on the shelf and out in a parcel. Now confirm is one \
            script, and you write only that: the shop's own script makes the holds and reaps \
            them (the hold exercise's contract), and the judge races it against yours in the \
            same crowds. Sell the hold if it still stands; answer 0 if it is gone (reaped, or \
            sold already by a resend of this confirm) and -1 if it has ended, leaving it to \
            the reaper. Either way, change nothing.",
    starter: include_str!("starter.lua"),
    reference: include_str!("reference.lua"),
    hints: &[
        "The reaper gave hold h1 back at 1300, and the buyer's confirm lands at 1350. What \
         does your script sell, and where are those units now?",
        "ARGV[2] is what the app remembers, not what the shop still holds: look the hold up \
         in KEYS[3] first, and answer 0 without writing when it is not there.",
        "Sell it in one step: gone from KEYS[2] and from KEYS[3], its units added to KEYS[4]. \
         Still listed, the reaper gives it back later; still in the hash, it is held and sold \
         at once.",
    ],
    rules: &CONFIRM,
};

struct Confirm;
static CONFIRM: Confirm = Confirm;

impl Rules for Confirm {
    fn keys(&self) -> &'static [&'static str] {
        &["stock", "expiries", "holds", "sold"]
    }

    /// Buyers hold, some confirm (now and then twice, the app resending), some too late,
    /// and the reaper reaps throughout, all on one shop clock in steps of 100 ms: sorted by
    /// that clock, the serial crowds read like a day in the shop, and raced, Redis mixes them.
    fn crowd(&self, rng: &mut ChaCha8Rng, size: Size) -> Crowd {
        let (stock, buyers) = match size {
            Size::Small => (rng.random_range(0..=8), rng.random_range(2..=4)),
            Size::Large => (rng.random_range(10..=40), rng.random_range(12..=25)),
        };
        // (shop clock, order among calls at the same moment, call)
        let mut timed: Vec<(u32, u32, CallSpec)> = Vec::new();
        for buyer in 1..=buyers {
            let made = 1_000 + 100 * rng.random_range(0..=buyers);
            let qty = super::counter::qty(rng);
            let ttl = 100 * rng.random_range(1..=4);
            let mut hold = super::hold::hold(buyer, qty, made, ttl);
            hold.script = Script::Shop;
            timed.push((made, 0, hold));
            if rng.random_bool(0.8) {
                // Paid within the hold about half the time, after it ended the rest.
                let paid = made + 100 * rng.random_range(0..=5);
                let call = CallSpec {
                    buyer,
                    args: vec![format!("h{buyer}"), qty.to_string(), paid.to_string()],
                    script: Script::Submitted,
                };
                if rng.random_bool(0.15) {
                    let again = paid + 100 * rng.random_range(0..=2);
                    timed.push((again, rng.random_range(1..=2), call.clone()));
                }
                timed.push((paid, rng.random_range(1..=2), call));
            }
        }
        let reaps = match size {
            Size::Small => rng.random_range(1..=3),
            Size::Large => rng.random_range(buyers / 2..=buyers),
        };
        for _ in 0..reaps {
            let at = 1_000 + 100 * rng.random_range(1..=buyers + 6);
            let mut reap = super::hold::reap(at, rng.random_range(1..=3));
            reap.script = Script::Shop;
            timed.push((at, rng.random_range(1..=2), reap));
        }
        timed.sort_by_key(|(at, order, _)| (*at, *order));
        let mut calls: Vec<CallSpec> = timed.into_iter().map(|(.., call)| call).collect();
        // Often a last reap past every end: a sold hold must not come back.
        if rng.random_bool(0.5) {
            let mut reap = super::hold::reap(1_000 + 100 * (2 * buyers + 12), 100);
            reap.script = Script::Shop;
            calls.push(reap);
        }
        Crowd {
            setup: vec![Write::Set(0, stock.to_string())],
            calls,
        }
    }

    fn model(&self, setup: &[Write]) -> Box<dyn Model> {
        Box::new(Sales(Book::new(setup, true)))
    }

    fn classify(&self, broken: &Broken) -> VerdictCode {
        holds::classify(broken)
    }

    fn shop_script(&self) -> Option<&'static str> {
        Some(super::hold::EXERCISE.reference)
    }

    fn normalize(&self, key: usize, value: Option<String>) -> Option<String> {
        holds::normalize(key, value)
    }
}

/// The contract: the shop's holds and reaps (`ARGV[1]` is their mode), and confirms.
struct Sales(Book);

impl Model for Sales {
    fn call(&mut self, args: &[String]) -> Expected {
        match self.0.shop_call(args) {
            Some(shop) => shop,
            None => self.0.confirm(args),
        }
    }

    fn checked(&self) -> Vec<(usize, Option<String>)> {
        self.0.checked()
    }
}
