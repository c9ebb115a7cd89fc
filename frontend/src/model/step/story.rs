//! What the visitor just made happen, in words, computed from the read log: an oversell
//! ("buyer 2 sold a unit that did not exist: buyers 1 and 2 both read 1 before either wrote"),
//! a lost update, an order done in one command that cannot be split, a command Redis answered
//! `nil`, an overshoot and its undo. The commands and replies quoted are the protocol's typed
//! ones, said in its words (their `Display`); the only words that depend on the strategy go by
//! its [`Category`] from `hello`.

use oversold_protocol::{Category, OutcomeResult};

use super::log::StepLog;
use crate::model::tape_view::strip::CellKind;

/// How a line reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Something went wrong: units that did not exist, a sale the counter forgot.
    Bad,
    /// The strategy did its job.
    Good,
    /// Worth knowing.
    Info,
}

impl Tone {
    /// A CSS hook: `bad`, `good`, `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tone::Bad => "bad",
            Tone::Good => "good",
            Tone::Info => "info",
        }
    }
}

/// One thing that happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The command of the log it is about (its index), for ordering and keys.
    pub at: usize,
    /// How it reads.
    pub tone: Tone,
    /// The sentence.
    pub text: String,
}

/// What command `at` of `log` made happen, when it is worth more than what it read or took:
/// a unit that did not exist, a lost update, a `nil`, an overshoot or its undo, an order done
/// in one command. `category` is the strategy's, from `hello` (`None` if the server did not
/// list it).
pub fn said(log: &StepLog, at: usize, category: Option<Category>) -> Option<Line> {
    let (tone, text) = what_happened(log, at, category)
        .or_else(|| one_command(log, at).map(|text| (Tone::Good, text)))?;
    Some(Line { at, tone, text })
}

/// What command `i` of the log did, when it is worth a line: a unit that did not exist, a lost
/// update, a `nil`, an overshoot, an undo.
fn what_happened(log: &StepLog, i: usize, category: Option<Category>) -> Option<(Tone, String)> {
    let c = &log.cells[i];
    let who = format!("buyer {}", c.buyer);
    let line = match c.kind {
        CellKind::Phantom => (
            Tone::Bad,
            format!("{who} {}: {}.", phantom(log, i), why_phantom(log, i)),
        ),
        CellKind::Overwrite => (Tone::Bad, lost_update(log, i)),
        CellKind::Nil => (
            Tone::Info,
            format!("{who}'s {} came back nil: {}", c.call, why_nil(category)),
        ),
        CellKind::Overshoot => (
            Tone::Info,
            format!(
                "{who}'s {} took the counter below zero ({}): not a sale; it has to put the units back.",
                c.call,
                c.after.unwrap_or_default()
            ),
        ),
        CellKind::Undo => (
            Tone::Info,
            format!(
                "{who} put units back ({} → {}): the counter is at {} again.",
                c.call,
                c.answer,
                c.after.unwrap_or_default()
            ),
        ),
        _ => return None,
    };
    Some(line)
}

/// A write that overwrote a newer value: what the counter shows, what it should, and how many
/// sold units it forgot.
fn lost_update(log: &StepLog, i: usize) -> String {
    let c = &log.cells[i];
    let b = c.before.unwrap_or_default();
    let q = log.outcome(c.buyer).map_or(log.qty, |o| o.qty);
    format!(
        "buyer {}'s write left the counter at {} instead of {}: it wrote back a value computed from a read that had gone stale, so {} the counter no longer shows (a lost update).",
        c.buyer,
        c.after.unwrap_or_default(),
        b - i64::from(q),
        units(c.lost_units, "sold unit")
    )
}

/// A buyer done after one command (command `i`): the check and the write were one step, so
/// nothing could run between them. Not a plain read that found too little (a `GET` → 0 that
/// ends a check-then-write buyer is a read, said as one).
fn one_command(log: &StepLog, i: usize) -> Option<String> {
    let c = &log.cells[i];
    if log.of(c.buyer).count() != 1 || c.kind == CellKind::RefusedRead {
        return None;
    }
    let who = format!("buyer {}", c.buyer);
    match log.outcome(c.buyer)?.result {
        OutcomeResult::Reserved => Some(format!(
            "{who} checked and took in one command ({} → {}): the check and the write cannot be split, so nothing can run between them.",
            c.call, c.answer
        )),
        OutcomeResult::SoldOut => Some(format!(
            "{who}'s one command ({} → {}) found too little stock and changed nothing: no read to go stale.",
            c.call, c.answer
        )),
        _ => None,
    }
}

/// `sold a unit that did not exist`, `sold 3 units, 2 of which did not exist`.
fn phantom(log: &StepLog, w: usize) -> String {
    let c = &log.cells[w];
    let q = log.outcome(c.buyer).map_or(log.qty, |o| o.qty);
    match (c.phantom_units, q) {
        (1, 1) => "sold a unit that did not exist".to_string(),
        (p, q) if p == q => format!("sold {q} units that did not exist"),
        (p, q) => format!("sold {q} units, {p} of which did not exist"),
    }
}

/// Why: who read what before whose write. When every buyer involved read the same value
/// before any of them wrote: `buyers 1 and 2 both read 1 before either wrote`.
fn why_phantom(log: &StepLog, w: usize) -> String {
    let c = &log.cells[w];
    let Some(r) = c.read else {
        return format!(
            "the counter held {} when it ran",
            c.before.unwrap_or_default()
        );
    };
    let v = &log.cells[r].answer;
    // The others whose writes landed between this buyer's read and its write.
    let mut group: Vec<(u32, Option<usize>, usize)> = vec![(c.buyer, Some(r), w)];
    for &x in &c.writes_between {
        group.push((log.cells[x].buyer, log.cells[x].read, x));
    }
    let first_write = group.iter().map(|g| g.2).min().unwrap_or(w);
    let all_read_first = group
        .iter()
        .all(|&(_, read, _)| read.is_some_and(|r| r < first_write && log.cells[r].answer == *v));
    // In buyer order, once each (no sort: a handful of buyers).
    let top = group.iter().map(|g| g.0).max().unwrap_or(0);
    let buyers: Vec<u32> = (1..=top)
        .filter(|b| group.iter().any(|g| g.0 == *b))
        .collect();
    if all_read_first && buyers.len() > 1 {
        let names = join(&buyers);
        return if buyers.len() == 2 {
            format!("buyers {names} both read {v} before either wrote")
        } else {
            format!("buyers {names} all read {v} before any of them wrote")
        };
    }
    let others: Vec<u32> = buyers.into_iter().filter(|&b| b != c.buyer).collect();
    match others.as_slice() {
        [] => format!(
            "it read {v}, and the counter held {} when its write ran",
            c.before.unwrap_or_default()
        ),
        [one] => format!("it read {v}, then buyer {one}'s write landed before its own"),
        many => format!(
            "it read {v}, then buyers {}' writes landed before its own",
            join(many)
        ),
    }
}

/// Why a `nil`, by the strategy's category.
fn why_nil(category: Option<Category>) -> &'static str {
    match category {
        Some(Category::Optimistic) => {
            "the stock changed after its WATCH, so Redis ran none of the transaction; it starts over."
        }
        Some(Category::Lock) => "another buyer holds the lock, so it waits and asks again.",
        _ => "Redis refused it, and nothing changed.",
    }
}

/// `1 and 2`, `1, 2 and 3`.
pub(super) fn join(buyers: &[u32]) -> String {
    match buyers {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!(
            "{} and {last}",
            init.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `1 sold unit`, `2 sold units`.
fn units(n: u32, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{lua_one_each, naive_oversell};
    use super::*;

    /// Every line worth saying about `log`, in order.
    fn story(log: &StepLog, category: Option<Category>) -> Vec<Line> {
        (0..log.cells.len())
            .filter_map(|at| said(log, at, category))
            .collect()
    }

    #[test]
    fn the_classic_oversell_is_said_with_who_read_what() {
        let (s, t) = naive_oversell();
        let lines = story(&StepLog::read(&s, &t), Some(Category::CheckThenWrite));
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].tone, Tone::Bad);
        assert_eq!(
            lines[0].text,
            "buyer 2 sold a unit that did not exist: buyers 1 and 2 both read 1 before either wrote."
        );
    }

    #[test]
    fn one_command_orders_say_they_cannot_be_split() {
        let (s, t) = lua_one_each();
        let lines = story(&StepLog::read(&s, &t), Some(Category::Atomic));
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "buyer 2 checked and took in one command (EVALSHA reserve.lua 1 stock 1 → [1, 1, 0]): the check and the write cannot be split, so nothing can run between them.",
                "buyer 1's one command (EVALSHA reserve.lua 1 stock 1 → [0, 0, 0]) found too little stock and changed nothing: no read to go stale."
            ]
        );
        assert!(lines.iter().all(|l| l.tone == Tone::Good));
    }

    #[test]
    fn typed_replies_are_narrated_in_the_words_the_page_always_used() {
        use super::super::fixtures::{overshoot_and_undo, watch_retry};
        // A discarded EXEC: the typed nil of a typed transaction.
        let (s, t) = watch_retry();
        let lines = story(&StepLog::read(&s, &t), Some(Category::Optimistic));
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "buyer 2's MULTI · DECRBY stock 1 · EXEC came back nil: the stock changed after its WATCH, so Redis ran none of the transaction; it starts over."
            ]
        );
        // Integer replies: below zero, then put back.
        let (s, t) = overshoot_and_undo();
        let lines = story(&StepLog::read(&s, &t), Some(Category::Atomic));
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "buyer 1 checked and took in one command (DECRBY stock 1 → 0): the check and the write cannot be split, so nothing can run between them.",
                "buyer 2's DECRBY stock 1 took the counter below zero (-1): not a sale; it has to put the units back.",
                "buyer 2 put units back (INCRBY stock 1 → 0): the counter is at 0 again."
            ]
        );
    }

    #[test]
    fn nil_is_explained_by_category() {
        assert!(why_nil(Some(Category::Optimistic)).contains("WATCH"));
        assert!(why_nil(Some(Category::Lock)).contains("holds the lock"));
        assert_eq!(why_nil(None), "Redis refused it, and nothing changed.");
        assert_eq!(join(&[1, 2, 3]), "1, 2 and 3");
    }
}
