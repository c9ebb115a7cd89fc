//! A per-socket token bucket, so one hostile tab cannot flood the server with frames.

use std::time::Instant;

/// Frames allowed in a burst.
const BURST: f64 = 20.0;
/// Frames refilled per second.
const PER_SECOND: f64 = 10.0;
/// Frames refused (each answered) that a client may owe before its socket is closed: a
/// page that misbehaves for a moment is told to slow down; a flood is ended.
const HARD_LIMIT: f64 = 100.0;

/// What to do with one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Within the budget: carry it out.
    Allow,
    /// Over the budget: answer `rate_limited`, carry nothing out.
    Refuse,
    /// Far past the budget: close the socket.
    Close,
}

/// Token bucket state for one socket.
#[derive(Debug)]
pub struct Limiter {
    /// Negative when frames were refused: the debt refills like the bucket does.
    tokens: f64,
    last: Instant,
}

impl Default for Limiter {
    fn default() -> Self {
        Limiter {
            tokens: BURST,
            last: Instant::now(),
        }
    }
}

impl Limiter {
    /// Take a token for one frame: allowed while one is left; refused below that (the
    /// refusal is owed back at the refill rate); closed once [`HARD_LIMIT`] refusals are owed.
    pub fn check(&mut self) -> Verdict {
        let now = Instant::now();
        self.tokens = (self.tokens + (now - self.last).as_secs_f64() * PER_SECOND).min(BURST);
        self.last = now;
        self.tokens -= 1.0;
        if self.tokens >= 0.0 {
            Verdict::Allow
        } else if self.tokens > -HARD_LIMIT {
            Verdict::Refuse
        } else {
            Verdict::Close
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_allowed_then_each_frame_refused_then_the_flood_closed() {
        let mut l = Limiter::default();
        let verdicts: Vec<Verdict> = (0..200).map(|_| l.check()).collect();
        let allowed = verdicts.iter().filter(|v| **v == Verdict::Allow).count();
        let refused = verdicts.iter().filter(|v| **v == Verdict::Refuse).count();
        assert!((20..=22).contains(&allowed), "{allowed}");
        assert!((95..=105).contains(&refused), "{refused}");
        assert_eq!(verdicts.last(), Some(&Verdict::Close));
        // Allowed first, then refused, then closed: never back and forth within a burst.
        assert!(verdicts.is_sorted_by_key(|v| *v as u8));
    }
}
