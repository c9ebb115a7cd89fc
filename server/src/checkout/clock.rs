//! The shop clock: the real time since the gate opened, times `time_scale`.
//!
//! The story is told in shop time ("a five-minute hold"), the stage has real time ("three
//! seconds"). Every script that cares about time gets the shop clock as an argument:
//! Redis has no notion of it, and one clock for every app server keeps holds comparable.

use std::time::{Duration, Instant};

/// Shop time, counted from the gate.
#[derive(Debug, Clone, Copy)]
pub struct ShopClock {
    origin: Instant,
    scale: u32,
}

impl ShopClock {
    /// A clock that reads 0 at `origin` and runs `scale` shop ms per real ms.
    pub fn start(origin: Instant, scale: u32) -> Self {
        ShopClock {
            origin,
            scale: scale.max(1),
        }
    }

    /// The real instant the gate opened (shop time 0).
    pub fn opened(&self) -> Instant {
        self.origin
    }

    /// The shop clock now, ms.
    pub fn now(&self) -> u64 {
        self.shop_ms(Instant::now())
    }

    /// The shop clock at `t`, ms (0 before the gate).
    pub fn shop_ms(&self, t: Instant) -> u64 {
        let real_us = micros(t.saturating_duration_since(self.origin));
        real_us.saturating_mul(u64::from(self.scale)) / 1_000
    }

    /// Real µs from the gate to `t`.
    pub fn real_us(&self, t: Instant) -> u64 {
        micros(t.saturating_duration_since(self.origin))
    }

    /// How long `shop_ms` lasts in real time.
    pub fn real(&self, shop_ms: u64) -> Duration {
        Duration::from_micros(shop_ms.saturating_mul(1_000) / u64::from(self.scale))
    }

    /// The real instant at which the shop clock reads `shop_ms`.
    pub fn instant_at(&self, shop_ms: u64) -> Instant {
        self.origin + self.real(shop_ms)
    }
}

/// A duration in whole µs.
pub fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_five_minute_hold_lasts_three_seconds_at_a_hundred_times() {
        let t0 = Instant::now();
        let clock = ShopClock::start(t0, 100);
        assert_eq!(clock.real(300_000), Duration::from_secs(3));
        assert_eq!(clock.shop_ms(t0 + Duration::from_secs(3)), 300_000);
        assert_eq!(clock.shop_ms(t0), 0);
        assert_eq!(clock.instant_at(1_000), t0 + Duration::from_millis(10));
        assert_eq!(clock.real_us(t0 + Duration::from_millis(2)), 2_000);
    }
}
