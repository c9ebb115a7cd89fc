//! A per-socket token bucket, so one hostile tab cannot flood the server with frames.

use std::time::Instant;

/// Frames allowed in a burst.
const BURST: f64 = 20.0;
/// Frames refilled per second.
const PER_SECOND: f64 = 10.0;

/// Token bucket state for one socket.
#[derive(Debug)]
pub struct Limiter {
    tokens: f64,
    last: Instant,
    last_report: Option<Instant>,
}

impl Default for Limiter {
    fn default() -> Self {
        Limiter {
            tokens: BURST,
            last: Instant::now(),
            last_report: None,
        }
    }
}

impl Limiter {
    /// Take a token if one is left.
    pub fn allow(&mut self) -> bool {
        let now = Instant::now();
        self.tokens = (self.tokens + (now - self.last).as_secs_f64() * PER_SECOND).min(BURST);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Report a refusal at most once a second, so refusals cannot be used to amplify traffic.
    pub fn should_report(&mut self) -> bool {
        let now = Instant::now();
        match self.last_report {
            Some(t) if (now - t).as_secs_f64() < 1.0 => false,
            _ => {
                self.last_report = Some(now);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_allowed_then_refused() {
        let mut l = Limiter::default();
        let allowed = (0..100).filter(|_| l.allow()).count();
        assert!((20..=22).contains(&allowed), "{allowed}");
        assert!(l.should_report());
        assert!(!l.should_report());
    }
}
