//! Number formatting for prose on the page (test hooks show bare numbers, never these).

/// `12345` → `"12,345"`, `-2400` → `"-2,400"`: big counts read at a glance from the back row.
pub fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count and its noun, digits grouped: `1 buyer`, `12 buyers`, `10,000 buyers`.
pub fn count(n: u64, noun: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{} {noun}{s}", thousands(n as i64))
}

/// A unit for durations on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TimeUnit {
    /// µs
    Micros,
    /// ms
    Millis,
    /// s
    Seconds,
}

impl TimeUnit {
    /// The largest unit `us` reaches: µs below a millisecond, ms below a second, then s.
    pub fn for_us(us: u64) -> Self {
        match us {
            0..1_000 => TimeUnit::Micros,
            1_000..1_000_000 => TimeUnit::Millis,
            _ => TimeUnit::Seconds,
        }
    }

    /// Microseconds in one of this unit.
    pub fn in_us(self) -> u64 {
        match self {
            TimeUnit::Micros => 1,
            TimeUnit::Millis => 1_000,
            TimeUnit::Seconds => 1_000_000,
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Micros => "µs",
            TimeUnit::Millis => "ms",
            TimeUnit::Seconds => "s",
        }
    }
}

/// The one duration formatter: `us` in `unit` with at most `decimals` decimals, trailing zeros
/// dropped: `duration(2_400_000, Seconds, 2)` is `2.4 s`. Every other duration label calls it.
pub fn duration(us: u64, unit: TimeUnit, decimals: usize) -> String {
    let digits = format!("{:.*}", decimals, us as f64 / unit.in_us() as f64);
    let digits = if digits.contains('.') {
        digits.trim_end_matches('0').trim_end_matches('.')
    } else {
        &digits
    };
    format!("{digits} {}", unit.symbol())
}

/// A duration to read at a glance, about two significant figures: `850 µs`, `1.2 ms`, `35 ms`,
/// `2.21 s`. Latencies, the run-out moment, power-of-ten ticks (`10 µs`, `1 ms`, `1 s`).
pub fn micros(us: u64) -> String {
    readable(us, TimeUnit::for_us(us))
}

/// A knob's milliseconds: `0 ms`, `250 ms`, `1.5 s`, `60 s` (never µs: the knob is in ms).
pub fn millis(ms: u32) -> String {
    let us = u64::from(ms) * 1_000;
    readable(us, TimeUnit::for_us(us).max(TimeUnit::Millis))
}

/// `us` in `unit`, with decimals only where a small value needs them.
fn readable(us: u64, unit: TimeUnit) -> String {
    let value = us as f64 / unit.in_us() as f64;
    let decimals = match unit {
        TimeUnit::Micros => 0,
        TimeUnit::Millis if value < 10.0 => 1,
        TimeUnit::Millis => 0,
        TimeUnit::Seconds if value < 10.0 => 2,
        TimeUnit::Seconds if value < 100.0 => 1,
        TimeUnit::Seconds => 0,
    };
    duration(us, unit, decimals)
}

/// A rate for a label: `12,345/s`, or `0.5/s` below one.
pub fn per_second(rate: f64) -> String {
    if !rate.is_finite() || rate <= 0.0 {
        "0/s".to_string()
    } else if rate < 10.0 {
        format!("{rate:.1}/s")
    } else {
        format!("{}/s", thousands(rate.round() as i64))
    }
}

/// A small ratio with one decimal, dropping a trailing `.0`: `2`, `2.5`, `11.3`.
pub fn ratio(x: f64) -> String {
    let s = format!("{x:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(10_000), "10,000");
        assert_eq!(thousands(-2_400), "-2,400");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(count(1, "buyer"), "1 buyer");
        assert_eq!(count(0, "unit"), "0 units");
        assert_eq!(count(10_000, "buyer"), "10,000 buyers");
    }

    #[test]
    fn formats_durations() {
        assert_eq!(millis(0), "0 ms");
        assert_eq!(millis(250), "250 ms");
        assert_eq!(millis(1_500), "1.5 s");
        assert_eq!(millis(60_000), "60 s");
        assert_eq!(micros(850), "850 µs");
        assert_eq!(micros(1_234), "1.2 ms");
        assert_eq!(micros(35_400), "35 ms");
        assert_eq!(micros(2_400_000), "2.4 s");
        assert_eq!(micros(2_210_000), "2.21 s");
        assert_eq!(micros(2_000), "2 ms", "no trailing zeros");
        // Powers of ten, as the latency axis ticks them.
        let decades: Vec<String> = [10, 1_000, 100_000, 1_000_000, 10_000_000]
            .into_iter()
            .map(micros)
            .collect();
        assert_eq!(decades, ["10 µs", "1 ms", "100 ms", "1 s", "10 s"]);
        // The formatter under both, as axis labels use it directly.
        assert_eq!(duration(150, TimeUnit::Millis, 2), "0.15 ms");
        assert_eq!(duration(10_000_000, TimeUnit::Seconds, 0), "10 s");
        assert_eq!(duration(1_000_000, TimeUnit::Seconds, 1), "1 s");
        assert_eq!(TimeUnit::for_us(999), TimeUnit::Micros);
        assert_eq!(TimeUnit::for_us(1_000_000), TimeUnit::Seconds);
    }

    #[test]
    fn formats_rates_and_ratios() {
        assert_eq!(per_second(12_345.4), "12,345/s");
        assert_eq!(per_second(0.5), "0.5/s");
        assert_eq!(per_second(f64::NAN), "0/s");
        assert_eq!(ratio(2.0), "2");
        assert_eq!(ratio(2.54), "2.5");
    }
}
