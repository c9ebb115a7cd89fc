//! The two clocks of a checkout, in words: the *shop clock* the story is told on ("a
//! five-minute hold") and the real clock the room watches ("three seconds").

use super::super::text::{TimeUnit, duration};

/// Shop time as a clock reads: `0:45`, `5:00`, `1:02:03`; under a second, `0.4 s`.
pub fn shop_clock(ms: u64) -> String {
    if ms < 1_000 {
        return duration(ms * 1_000, TimeUnit::Seconds, 1);
    }
    let s = ms / 1_000;
    let (h, m, s) = (s / 3_600, s / 60 % 60, s % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

/// A span of shop time in words: `5 min`, `90 s`, `1 h 30 min`, `250 ms`.
pub fn shop_span(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        _ if !ms.is_multiple_of(60_000) && ms < 120_000 => {
            duration(ms * 1_000, TimeUnit::Seconds, 1)
        }
        _ if ms < 3_600_000 => format!("{} min", round1(ms as f64 / 60_000.0)),
        _ => {
            let (h, m) = (ms / 3_600_000, ms % 3_600_000 / 60_000);
            if m == 0 {
                format!("{h} h")
            } else {
                format!("{h} h {m} min")
            }
        }
    }
}

/// Real time in words: `850 ms`, `3 s`, `12.5 s`.
pub fn real_span(ms: u64) -> String {
    if ms < 1_000 {
        format!("{ms} ms")
    } else {
        duration(ms * 1_000, TimeUnit::Seconds, 1)
    }
}

/// How long `shop_ms` lasts in real time at `time_scale` shop ms per real ms.
pub fn real_ms(shop_ms: u64, time_scale: u32) -> u64 {
    shop_ms.div_ceil(u64::from(time_scale.max(1)))
}

/// `shop 4:35 · real 2.8 s · ×100`: both clocks at one instant.
pub fn both(shop_ms: u64, real_ms: u64, time_scale: u32) -> String {
    format!(
        "shop {} · real {} · ×{}",
        shop_clock(shop_ms),
        real_span(real_ms),
        super::super::text::thousands(time_scale.into())
    )
}

fn round1(x: f64) -> String {
    super::super::text::ratio(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shop_clock_reads_like_a_clock() {
        assert_eq!(shop_clock(0), "0 s");
        assert_eq!(shop_clock(400), "0.4 s");
        assert_eq!(shop_clock(45_000), "0:45");
        assert_eq!(shop_clock(300_000), "5:00");
        assert_eq!(shop_clock(3_723_000), "1:02:03");
    }

    #[test]
    fn spans_read_in_the_largest_sensible_unit() {
        assert_eq!(shop_span(250), "250 ms");
        assert_eq!(shop_span(90_000), "90 s");
        assert_eq!(shop_span(60_000), "1 min");
        assert_eq!(shop_span(300_000), "5 min");
        assert_eq!(shop_span(150_000), "2.5 min");
        assert_eq!(shop_span(3_600_000), "1 h");
        assert_eq!(shop_span(5_400_000), "1 h 30 min");
        assert_eq!(real_span(850), "850 ms");
        assert_eq!(real_span(3_000), "3 s");
        assert_eq!(real_span(12_500), "12.5 s");
    }

    #[test]
    fn a_five_minute_hold_lasts_three_real_seconds_at_x100() {
        assert_eq!(real_ms(300_000, 100), 3_000);
        assert_eq!(real_ms(1, 1_000), 1);
        assert_eq!(both(275_000, 2_750, 100), "shop 4:35 · real 2.8 s · ×100");
    }
}
