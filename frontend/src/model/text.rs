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
    }

    #[test]
    fn formats_durations() {
        assert_eq!(millis(0), "0 ms");
        assert_eq!(millis(250), "250 ms");
        assert_eq!(millis(1_500), "1.5 s");
        assert_eq!(millis(60_000), "60 s");
    }
}
