//! What the hold exercises share: the shop's book of holds as their contracts see it (units
//! on the shelf, each hold's units and end, units sold), how its keys read back, and the
//! verdict of a broken step, which weighs every key together: units counted twice show only
//! in the sum (the shelf alone looks fine when a released hold is still held).

use std::collections::BTreeMap;

use oversold_protocol::workshop::VerdictCode;

use super::counter::{self, Stock, canonical};
use super::{Broken, Expected, Write};

/// The stock counter's index in both exercises' keys.
pub const STOCK: usize = 0;
/// The expiries (a sorted set).
pub const EXPIRIES: usize = 1;
/// The holds (a hash of hold id -> units).
pub const HOLDS: usize = 2;
/// The sold counter (`confirm` only).
pub const SOLD: usize = 3;

/// How a key the model expects to be missing is written (and read back).
const NOTHING: &str = "nothing";

/// One hold: its units and when it ends.
#[derive(Debug, Clone, Copy)]
struct Hold {
    qty: i64,
    expires_at: i64,
}

/// The book: what the keys hold, as the contracts move it.
#[derive(Debug, Clone)]
pub struct Book {
    stock: i64,
    holds: BTreeMap<String, Hold>,
    /// Units sold; `None` in an exercise without a sold key.
    sold: Option<i64>,
}

/// `args[i]` as a number (the crowds only send numbers where the contracts want them).
fn int(args: &[String], i: usize) -> i64 {
    args.get(i).and_then(|v| v.parse().ok()).unwrap_or(0)
}

impl Book {
    /// The book after `setup` (the stock in key 0, nothing held); `sells` when the exercise
    /// keeps a sold counter.
    pub fn new(setup: &[Write], sells: bool) -> Self {
        Book {
            stock: Stock::from(setup).units().unwrap_or(0),
            holds: BTreeMap::new(),
            sold: sells.then_some(0),
        }
    }

    /// A call of the hold exercise's script (the shop's script in `confirm`): `ARGV[1]` is
    /// its mode. `None` for any other call.
    pub fn shop_call(&mut self, args: &[String]) -> Option<Expected> {
        match args.first().map(String::as_str) {
            Some("hold") => Some(self.hold(&args[1..])),
            Some("reap") => Some(self.reap(&args[1..])),
            _ => None,
        }
    }

    /// `hold qty id now ttl`: take qty into a hold ending at now + ttl, if there are that many.
    fn hold(&mut self, args: &[String]) -> Expected {
        let (qty, now, ttl) = (int(args, 0), int(args, 2), int(args, 3));
        if self.stock < qty {
            return Expected::Int(0);
        }
        self.stock -= qty;
        let id = args.get(1).cloned().unwrap_or_default();
        let expires_at = now + ttl;
        self.holds.insert(id, Hold { qty, expires_at });
        Expected::Int(1)
    }

    /// `reap now batch`: release at most `batch` holds whose end is at or before now,
    /// earliest end first, ties by id in byte order (a sorted set's order for equal scores).
    fn reap(&mut self, args: &[String]) -> Expected {
        let (now, batch) = (int(args, 0), int(args, 1));
        let mut due: Vec<(i64, String)> = self
            .holds
            .iter()
            .filter(|(_, h)| h.expires_at <= now)
            .map(|(id, h)| (h.expires_at, id.clone()))
            .collect();
        due.sort();
        due.truncate(usize::try_from(batch).unwrap_or(0));
        for (_, id) in &due {
            if let Some(h) = self.holds.remove(id) {
                self.stock += h.qty;
            }
        }
        Expected::Int(i64::try_from(due.len()).unwrap_or(i64::MAX))
    }

    /// `confirm id qty now`: sell a hold that still stands and has not ended (`1`), or
    /// answer that it is gone (`0`) or ended (`-1`), changing nothing.
    pub fn confirm(&mut self, args: &[String]) -> Expected {
        let (id, now) = (args.first().cloned().unwrap_or_default(), int(args, 2));
        let Some(hold) = self.holds.get(&id).copied() else {
            return Expected::Int(0);
        };
        if now >= hold.expires_at {
            return Expected::Int(-1);
        }
        self.holds.remove(&id);
        if let Some(sold) = &mut self.sold {
            *sold += hold.qty;
        }
        Expected::Int(1)
    }

    /// What each key must hold: the stock, the holds, the units sold, and last whether the
    /// expiries exist (the judge reads a sorted set's type, not its entries: those show in
    /// what the reaper does). In that order, so a failure names a key with units first.
    pub fn checked(&self) -> Vec<(usize, Option<String>)> {
        let held = self
            .holds
            .iter()
            .map(|(id, h)| format!("{id}={}", h.qty))
            .collect::<Vec<_>>()
            .join(" ");
        let mut keys = vec![
            (STOCK, Some(self.stock.to_string())),
            (HOLDS, (!held.is_empty()).then_some(held)),
        ];
        if let Some(sold) = self.sold {
            keys.push((SOLD, Some(sold.to_string())));
        }
        let listed = (!self.holds.is_empty()).then(|| "a zset".to_string());
        keys.push((EXPIRIES, listed));
        keys
    }
}

/// A key in the form it is compared in: a hash's fields sorted (Redis gives them in its own
/// order), and a missing sorted set or hash written as "nothing".
pub fn normalize(key: usize, value: Option<String>) -> Option<String> {
    match (key, value) {
        (EXPIRIES | HOLDS, None) => Some(NOTHING.into()),
        (HOLDS, Some(v)) => {
            let mut fields: Vec<&str> = v.split(' ').collect();
            fields.sort_unstable();
            Some(fields.join(" "))
        }
        (_, value) => value,
    }
}

/// The verdict of a broken step: an error first; then more units on the books than the shop
/// has (on the shelf and held or sold at once); then a shelf below zero; else a wrong answer
/// (a hold released early or late, too many per batch, units lost).
pub fn classify(b: &Broken) -> VerdictCode {
    if b.got_error && !matches!(b.expected, Expected::Error(_)) {
        return counter::classify(b);
    }
    let total = |found: bool| -> Option<i64> {
        b.checked
            .iter()
            .map(|(k, want, got)| units(*k, if found { got } else { want }.as_deref()))
            .sum()
    };
    if let (Some(want), Some(found)) = (total(false), total(true))
        && found > want
    {
        return VerdictCode::SoldTwice;
    }
    let shelf_below_zero = b
        .checked
        .iter()
        .find(|(k, ..)| *k == STOCK)
        .and_then(|(_, _, found)| found.as_deref())
        .and_then(canonical)
        .is_some_and(|n| n < 0);
    if shelf_below_zero {
        VerdictCode::Oversold
    } else {
        VerdictCode::WrongAnswer
    }
}

/// The units a key counts: a counter's value, the sum of a hash's; `None` when it holds
/// something else than numbers.
fn units(key: usize, value: Option<&str>) -> Option<i64> {
    let value = value.filter(|v| *v != NOTHING);
    match (key, value) {
        (EXPIRIES, _) | (_, None) => Some(0),
        (HOLDS, Some(v)) => v
            .split(' ')
            .map(|field| field.rsplit_once('=').and_then(|(_, qty)| canonical(qty)))
            .sum(),
        (_, Some(v)) => canonical(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn the_book_holds_reaps_in_order_and_confirms_once() {
        let mut book = Book::new(&[Write::Set(0, "5".into())], true);
        let mut call = |words: &[&str]| {
            let a = args(words);
            book.shop_call(&a).unwrap_or_else(|| book.confirm(&a))
        };
        assert_eq!(call(&["hold", "2", "h2", "1000", "300"]), Expected::Int(1));
        assert_eq!(call(&["hold", "2", "h10", "1000", "300"]), Expected::Int(1));
        assert_eq!(call(&["hold", "2", "h3", "1000", "100"]), Expected::Int(0));
        // Due at 1300 exactly, one per batch, "h10" before "h2" as a sorted set has them.
        assert_eq!(call(&["reap", "1299", "5"]), Expected::Int(0));
        assert_eq!(call(&["reap", "1300", "1"]), Expected::Int(1));
        assert_eq!(call(&["h10", "2", "1100"]), Expected::Int(0));
        assert_eq!(call(&["h2", "2", "1300"]), Expected::Int(-1));
        assert_eq!(call(&["h2", "2", "1299"]), Expected::Int(1));
        assert_eq!(call(&["h2", "2", "1299"]), Expected::Int(0));
        assert_eq!(
            book.checked(),
            vec![
                (STOCK, Some("3".into())),
                (HOLDS, None),
                (SOLD, Some("2".into())),
                (EXPIRIES, None),
            ]
        );
    }

    #[test]
    fn a_hash_compares_in_any_order_and_units_add_up() {
        assert_eq!(
            normalize(HOLDS, Some("h2=1 h10=3".into())),
            normalize(HOLDS, Some("h10=3 h2=1".into()))
        );
        assert_eq!(normalize(EXPIRIES, None), Some("nothing".into()));
        assert_eq!(units(HOLDS, Some("h10=3 h2=1")), Some(4));
        assert_eq!(units(HOLDS, Some("h1=x")), None);
        assert_eq!(units(EXPIRIES, Some("a zset")), Some(0));
        assert_eq!(units(STOCK, Some("nothing")), Some(0));
    }
}
