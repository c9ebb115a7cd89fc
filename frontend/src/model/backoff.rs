//! Reconnect delays for the WebSocket: doubling from a base, capped, reset once a link holds.

/// Exponential backoff without jitter.
///
/// Jitter matters when thousands of clients reconnect to one server at once; a lecture room of
/// laptops is not that, and a predictable "retrying in 2 s" reads better on stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backoff {
    base_ms: u32,
    cap_ms: u32,
    attempt: u32,
}

impl Backoff {
    /// The page's policy: 0.5 s, 1 s, 2 s, 4 s, then 8 s forever.
    pub const fn page_default() -> Self {
        Self::new(500, 8_000)
    }

    /// A backoff starting at `base_ms` and never waiting longer than `cap_ms`.
    pub const fn new(base_ms: u32, cap_ms: u32) -> Self {
        Self {
            base_ms,
            cap_ms,
            attempt: 0,
        }
    }

    /// The delay before the next attempt; each call doubles the following one, up to the cap.
    pub fn next_delay_ms(&mut self) -> u32 {
        // Shifting past 31 bits would overflow; by then we sit at the cap anyway.
        let factor = 1u64 << self.attempt.min(20);
        self.attempt = self.attempt.saturating_add(1);
        (u64::from(self.base_ms) * factor).min(u64::from(self.cap_ms)) as u32
    }

    /// How many delays were handed out since the last reset.
    pub fn attempts(&self) -> u32 {
        self.attempt
    }

    /// Call when a connection succeeded, so the next outage starts from the base again.
    pub fn reset(&mut self) {
        self.attempt = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_then_caps() {
        let mut b = Backoff::page_default();
        let delays: Vec<u32> = (0..7).map(|_| b.next_delay_ms()).collect();
        assert_eq!(delays, [500, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
        assert_eq!(b.attempts(), 7);
    }

    #[test]
    fn reset_starts_over_and_never_overflows() {
        let mut b = Backoff::new(500, 8_000);
        for _ in 0..100 {
            b.next_delay_ms();
        }
        assert_eq!(b.next_delay_ms(), 8_000);
        b.reset();
        assert_eq!(b.next_delay_ms(), 500);
    }
}
