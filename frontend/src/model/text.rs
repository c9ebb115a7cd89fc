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

/// Milliseconds for a label: `0 ms`, `250 ms`, `1.5 s`, `60 s`.
pub fn millis(ms: u32) -> String {
    if ms < 1_000 {
        format!("{ms} ms")
    } else if ms.is_multiple_of(1_000) {
        format!("{} s", ms / 1_000)
    } else {
        format!("{:.1} s", f64::from(ms) / 1_000.0)
    }
}

/// Microseconds for a label: `850 µs`, `1.2 ms`, `35 ms`, `2.40 s`.
pub fn micros(us: u64) -> String {
    if us < 1_000 {
        format!("{us} µs")
    } else if us < 10_000 {
        format!("{:.1} ms", us as f64 / 1_000.0)
    } else if us < 1_000_000 {
        format!("{} ms", (us as f64 / 1_000.0).round())
    } else {
        format!("{:.2} s", us as f64 / 1_000_000.0)
    }
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
        assert_eq!(micros(2_400_000), "2.40 s");
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
