//! What the counter exercises share: a stock counter as the contract sees it, the canonical
//! integer rule, and the verdict a broken step of a counter is.

use oversold_protocol::workshop::VerdictCode;

use super::{Broken, Expected, Write};

/// `"0"`, or an optional `-` and 1 to 15 digits without a leading zero; what every script
/// under `lua/` calls a canonical integer.
pub fn canonical(s: &str) -> Option<i64> {
    if s == "0" {
        return Some(0);
    }
    let digits = s.strip_prefix('-').unwrap_or(s);
    let ok = !digits.is_empty()
        && digits.len() <= 15
        && !digits.starts_with('0')
        && digits.bytes().all(|b| b.is_ascii_digit());
    if ok { s.parse().ok() } else { None }
}

/// A stock counter: what the key holds (`None`: missing, which means 0 in stock).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stock(pub Option<String>);

impl Stock {
    /// The counter after `setup` (key 0).
    pub fn from(setup: &[Write]) -> Self {
        Stock(setup.iter().find_map(|w| match w {
            Write::Set(0, v) => Some(v.clone()),
            _ => None,
        }))
    }

    /// Its value as a number: missing is 0; `None` when it holds something else.
    pub fn units(&self) -> Option<i64> {
        match &self.0 {
            None => Some(0),
            Some(v) => canonical(v),
        }
    }

    /// Take `qty` if there are that many: the contract's `1`, else `0`.
    pub fn take(&mut self, qty: i64) -> Expected {
        let have = self.units().unwrap_or(0);
        if have >= qty {
            self.0 = Some((have - qty).to_string());
            Expected::Int(1)
        } else {
            Expected::Int(0)
        }
    }

    /// What the key must hold, with a missing key and `"0"` counted the same (a script
    /// that writes a 0 it was not asked to is not wrong).
    pub fn checked(&self) -> Option<String> {
        match self.0.as_deref() {
            None => Some("0".into()),
            Some(v) => Some(v.to_string()),
        }
    }
}

/// The verdict of a counter's broken step: below zero (or an error the contract does not
/// have) first, then the wrong answer.
pub fn classify(b: &Broken) -> VerdictCode {
    if b.got_error && !matches!(b.expected, Expected::Error(_)) {
        return if is_noperm(&b.got) {
            VerdictCode::Noperm
        } else {
            VerdictCode::ScriptError
        };
    }
    let below_zero = b
        .state
        .as_ref()
        .and_then(|(_, _, found)| found.as_deref())
        .and_then(canonical)
        .is_some_and(|n| n < 0);
    if below_zero {
        VerdictCode::Oversold
    } else {
        VerdictCode::WrongAnswer
    }
}

/// An error reply that says the script may not run a command or touch a key.
pub fn is_noperm(text: &str) -> bool {
    text.starts_with("NOPERM")
        || text.contains("can't access")
        || text.contains("can't run this command")
        || text.contains("No permissions")
}

/// A quantity from 1 to 3, now and then a bigger one.
pub fn qty(rng: &mut rand_chacha::ChaCha8Rng) -> i64 {
    use rand::Rng;
    if rng.random_bool(0.1) {
        rng.random_range(4..=6)
    } else {
        rng.random_range(1..=3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_integers_are_lua_s() {
        for (s, n) in [("0", Some(0)), ("12", Some(12)), ("-3", Some(-3))] {
            assert_eq!(canonical(s), n, "{s}");
        }
        for s in [
            "",
            "-",
            "01",
            "1.5",
            "1e2",
            " 2",
            "abc",
            "-0",
            "1234567890123456",
        ] {
            assert_eq!(canonical(s), None, "{s:?}");
        }
    }
}
