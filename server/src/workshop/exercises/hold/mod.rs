//! `hold`: units kept for a buyer until a deadline, listed in a sorted set scored by the
//! moment each hold ends, and the reaper's batch that gives back the holds due: each once,
//! and never one still running. One script, two modes, so a check is still one `source`.

use oversold_protocol::workshop::VerdictCode;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::holds::{self, Book};
use super::{Broken, CallSpec, Crowd, Exercise, Expected, Model, Rules, Script, Size, Write};

/// The exercise.
pub static EXERCISE: Exercise = Exercise {
    id: "hold",
    title: "Hold until a deadline, then give back",
    story: "Paying takes a few minutes, and the buyer's units must be theirs meanwhile, then \
            back on the shelf if they never pay. Write one script with two modes. \"hold\" \
            takes qty units off the shelf into a hold that ends at now + ttl, recorded in a \
            hash and listed in a sorted set scored by that end. \"reap\" is the reaper's \
            batch: it gives back the holds whose end has come, the earliest first and at \
            most batch of them per call, each exactly once, and never a hold still running. \
            Redis has no shop clock, so every call brings its own now. The judge sends both \
            modes in the same crowds: buyers holding, the reaper reaping, all at once.",
    starter: include_str!("starter.lua"),
    reference: include_str!("reference.lua"),
    hints: &[
        "A hold made at now 1000 with a ttl of 300 ends at 1300. What score does your ZADD \
         give it, and does a reap at 1100 pick it up?",
        "Score each hold by the moment it ends, not by how long it lasts: the holds due are \
         then one range of scores, from -inf to the reaper's now, taken batch at a time.",
        "Release a hold in one step: its units back on the shelf, and the hold gone from the \
         hash and from the sorted set. Left in either, it is released again, or on the shelf \
         and held at once.",
    ],
    rules: &HOLD,
};

struct Hold;
static HOLD: Hold = Hold;

impl Rules for Hold {
    fn keys(&self) -> &'static [&'static str] {
        &["stock", "expiries", "holds"]
    }

    fn crowd(&self, rng: &mut ChaCha8Rng, size: Size) -> Crowd {
        let (stock, calls) = match size {
            Size::Small => (rng.random_range(0..=8), rng.random_range(2..=8)),
            Size::Large => (rng.random_range(10..=40), rng.random_range(30..=60)),
        };
        let mut crowd = Crowd {
            setup: vec![Write::Set(0, stock.to_string())],
            calls: Vec::with_capacity(calls + 1),
        };
        // One shop clock, in steps of 100 ms, so a reap often lands exactly on a hold's end.
        let mut now = 1_000u32;
        let mut buyers = 0;
        for i in 0..calls {
            now += 100 * rng.random_range(0..=1);
            if i > 0 && rng.random_bool(0.3) {
                crowd.calls.push(reap(now, rng.random_range(1..=3)));
            } else {
                buyers += 1;
                let ttl = 100 * rng.random_range(1..=4);
                crowd
                    .calls
                    .push(hold(buyers, super::counter::qty(rng), now, ttl));
            }
        }
        // Often a last reap past every end: whatever is still held must come back, once.
        if rng.random_bool(0.5) {
            crowd.calls.push(reap(now + 1_000, 100));
        }
        crowd
    }

    fn model(&self, setup: &[Write]) -> Box<dyn Model> {
        Box::new(Modes(Book::new(setup, false)))
    }

    fn classify(&self, broken: &Broken) -> VerdictCode {
        holds::classify(broken)
    }

    fn normalize(&self, key: usize, value: Option<String>) -> Option<String> {
        holds::normalize(key, value)
    }
}

/// Buyer `buyer`'s hold `h<buyer>` of `qty` units at `now` for `ttl` ms.
pub fn hold(buyer: u32, qty: i64, now: u32, ttl: u32) -> CallSpec {
    CallSpec {
        buyer,
        args: vec![
            "hold".into(),
            qty.to_string(),
            format!("h{buyer}"),
            now.to_string(),
            ttl.to_string(),
        ],
        script: Script::Submitted,
    }
}

/// The reaper's call at `now`, releasing at most `batch` holds.
pub fn reap(now: u32, batch: u32) -> CallSpec {
    CallSpec {
        buyer: 0,
        args: vec!["reap".into(), now.to_string(), batch.to_string()],
        script: Script::Submitted,
    }
}

/// The contract: a hold or a reap, by `ARGV[1]`.
struct Modes(Book);

impl Model for Modes {
    fn call(&mut self, args: &[String]) -> Expected {
        // The crowds send no other mode.
        self.0.shop_call(args).unwrap_or(Expected::Int(0))
    }

    fn checked(&self) -> Vec<(usize, Option<String>)> {
        self.0.checked()
    }
}
