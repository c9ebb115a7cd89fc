//! [`TapeCache`]: the run's tape, built once per batch of outcomes and shared by every reader.
//!
//! The tape panel, its caption and the race timeline all read the tape of the run on screen.
//! Building it is a sort over every outcome (about a millisecond for 10,000 buyers), so it is
//! built once per change of the run, by whichever reader asks first, and handed to the others.
//! It lives in `PageState` because that is the one value every panel already reads; it is a
//! cache, not state: two pages are equal whatever their caches hold.

use std::sync::{Arc, Mutex, OnceLock};

use oversold_protocol::TapeRule;

use super::run_tape::RunTape;

/// What a cached tape was built from: the run, how many outcomes it had, and the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TapeKey {
    /// The run's id.
    pub run_id: String,
    /// Outcomes received (a run only grows, so this says which batch).
    pub outcomes: usize,
    /// The strategy's tape rule.
    pub rule: TapeRule,
}

/// A millisecond clock for measuring builds, set once by the page (`performance.now`); the
/// model itself has no clock, and host tests run without one.
static CLOCK: OnceLock<fn() -> f64> = OnceLock::new();

/// Measure every tape build with `now` from here on (the first call wins).
pub fn set_clock(now: fn() -> f64) {
    let _ = CLOCK.set(now);
}

/// The last tape built, by key, and how long building it took. A `Mutex` rather than a
/// `RefCell` because the page's state sits in a signal, which wants `Send + Sync`; in the
/// browser nothing ever waits on it.
#[derive(Default)]
pub struct TapeCache(Mutex<Held>);

#[derive(Default, Clone)]
struct Held {
    tape: Option<(TapeKey, Arc<RunTape>)>,
    build_ms: Option<f64>,
}

impl TapeCache {
    /// The tape for `key`: the cached one if it was built from the same, else `build()`'s.
    pub fn get_or_build(&self, key: TapeKey, build: impl FnOnce() -> RunTape) -> Arc<RunTape> {
        let mut held = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((k, tape)) = held.tape.as_ref()
            && *k == key
        {
            return Arc::clone(tape);
        }
        let clock = CLOCK.get();
        let start = clock.map(|now| now());
        let tape = Arc::new(build());
        held.build_ms = clock.zip(start).map(|(now, t0)| now() - t0);
        held.tape = Some((key, Arc::clone(&tape)));
        tape
    }

    /// How long the last build took, in ms (`None` without a clock, or before any build).
    pub fn build_ms(&self) -> Option<f64> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).build_ms
    }
}

impl Clone for TapeCache {
    fn clone(&self) -> Self {
        let held = self.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        Self(Mutex::new(held))
    }
}

impl PartialEq for TapeCache {
    /// A cache says nothing about the page: any two are equal.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for TapeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TapeCache")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oversold_protocol::Guard;

    const RULE: TapeRule = TapeRule::ReadThenDecrement {
        guard: Guard::Unguarded,
    };

    fn key(outcomes: usize) -> TapeKey {
        TapeKey {
            run_id: "r-1".into(),
            outcomes,
            rule: RULE,
        }
    }

    #[test]
    fn builds_once_per_key() {
        let cache = TapeCache::default();
        let rule = RULE;
        let mut builds = 0;
        let mut build = || {
            builds += 1;
            RunTape::build(10, rule, &[])
        };
        let a = cache.get_or_build(key(0), &mut build);
        let b = cache.get_or_build(key(0), &mut build);
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(cache.build_ms(), None, "no clock, no measurement");
        set_clock(|| 7.0);
        let _ = cache.get_or_build(key(1), &mut build);
        assert_eq!(builds, 2, "a new batch is a new tape");
        assert_eq!(
            cache.build_ms(),
            Some(0.0),
            "a stopped clock measures nothing"
        );
        assert_eq!(cache, TapeCache::default(), "a cache is not state");
    }
}
