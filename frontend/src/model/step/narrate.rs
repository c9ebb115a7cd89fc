//! Every click in one line: who sent what, what Redis answered, and what it means for the
//! race ("buyer 2 read 1: both buyers now believe 1 unit is left"). Read from the typed call
//! and reply of each logged command and from the counter around it ([`StepLog`]), never from
//! their text; where a click did something worth more (an oversell, a lost update, a `nil`),
//! its line is [`story::said`]'s.
//!
//! A read is said as of the moment it ran: who else holds a read not yet acted on, and what
//! they believe is left. A write says what it took and who still believes in a number the
//! counter no longer holds.

use oversold_protocol::{Category, StepState};

use super::log::{StepLog, read_value, verb};
use super::story::{self, Tone, join};
use crate::model::tape_view::strip::CellKind;
use crate::model::text::count;

/// One click, told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Told {
    /// The command of the log it is about (its index).
    pub at: usize,
    /// Who sent it.
    pub buyer: u32,
    /// The call and its answer, in the protocol's words: `GET stock → 1`.
    pub said: String,
    /// How it reads.
    pub tone: Tone,
    /// What it means for the race.
    pub text: String,
}

/// One line per command of `log`, oldest first. `category` is the strategy's, from `hello`.
pub fn narrate(state: &StepState, log: &StepLog, category: Option<Category>) -> Vec<Told> {
    (0..log.cells.len())
        .map(|at| {
            let c = &log.cells[at];
            let (tone, text) = match story::said(log, at, category) {
                Some(line) => (line.tone, line.text),
                None => (Tone::Info, plain(state, log, at, category)),
            };
            Told {
                at,
                buyer: c.buyer,
                said: format!("{} → {}", c.call, c.answer),
                tone,
                text,
            }
        })
        .collect()
}

/// The line for a command nothing went wrong with: a read, a take, or a command that only
/// prepares one (a WATCH, a lock).
fn plain(state: &StepState, log: &StepLog, at: usize, category: Option<Category>) -> String {
    let c = &log.cells[at];
    match c.kind {
        CellKind::Read | CellKind::StaleRead | CellKind::RefusedRead => read(state, log, at),
        CellKind::Sale => took(state, log, at),
        _ => other(log, at, category),
    }
}

/// Units in buyer `buyer`'s order.
fn qty(state: &StepState, log: &StepLog, buyer: u32) -> u32 {
    log.outcome(buyer)
        .map_or(state.config.race.qty.max(1), |o| o.qty)
}

/// `1 unit is left`, `2 units are left`.
fn left(v: i64) -> String {
    let n = count(v.unsigned_abs(), "unit");
    let n = if v < 0 { format!("-{n}") } else { n };
    format!("{n} {} left", if v == 1 { "is" } else { "are" })
}

/// Each buyer's read that it has not acted on yet, as of command `at`: `(buyer, value)` in
/// buyer order, for the buyers whose read showed enough for their order.
fn believers(state: &StepState, log: &StepLog, at: usize) -> Vec<(u32, i64)> {
    state
        .buyers
        .iter()
        .filter_map(|b| {
            let last = (0..=at).rev().find(|&i| log.cells[i].buyer == b.buyer)?;
            let c = &log.cells[last];
            let is_read = matches!(
                c.kind,
                CellKind::Read | CellKind::StaleRead | CellKind::RefusedRead
            );
            let v = read_value(&c.call, &c.answer).filter(|_| is_read)?;
            (v >= i64::from(qty(state, log, b.buyer))).then_some((b.buyer, v))
        })
        .collect()
}

/// A read: what the buyer saw, and who now believes what.
fn read(state: &StepState, log: &StepLog, at: usize) -> String {
    let c = &log.cells[at];
    let b = c.buyer;
    let v = read_value(&c.call, &c.answer).unwrap_or_default();
    let q = qty(state, log, b);
    if v < i64::from(q) {
        return if q == 1 || v <= 0 {
            format!("buyer {b} read {v}: nothing left for it, so it will not buy.")
        } else {
            format!("buyer {b} read {v}: fewer than the {q} it wants, so it will not buy.")
        };
    }
    let all = believers(state, log, at);
    let same: Vec<u32> = all.iter().filter(|x| x.1 == v).map(|x| x.0).collect();
    let others: Vec<&(u32, i64)> = all.iter().filter(|x| x.1 != v).collect();
    let head = format!("buyer {b} read {v}");
    let everyone = state.buyers.len();
    let mut text = match same.len() {
        0 | 1 => format!("{head}: it believes {}, so it will buy", left(v)),
        2 if everyone == 2 => format!("{head}: both buyers now believe {}", left(v)),
        n if n == everyone => format!("{head}: all {n} buyers now believe {}", left(v)),
        2 => format!(
            "{head}: buyers {} now both believe {}",
            join(&same),
            left(v)
        ),
        _ => format!("{head}: buyers {} now all believe {}", join(&same), left(v)),
    };
    for (o, ov) in others {
        text.push_str(&format!(", while buyer {o} still believes {}", left(*ov)));
    }
    text.push('.');
    text
}

/// A write that took units that existed: what it took, where the counter is, and who still
/// believes in more than it holds.
fn took(state: &StepState, log: &StepLog, at: usize) -> String {
    let c = &log.cells[at];
    let b = c.buyer;
    let taken = match (c.before, c.after) {
        (Some(x), Some(y)) => (x - y).unsigned_abs(),
        _ => u64::from(qty(state, log, b)),
    };
    let mut text = format!("buyer {b} took {}", count(taken, "unit"));
    let Some(now) = c.after else {
        text.push('.');
        return text;
    };
    text.push_str(&format!(": the counter is at {now}"));
    let stale: Vec<(u32, i64)> = believers(state, log, at)
        .into_iter()
        .filter(|&(o, v)| o != b && v > now)
        .collect();
    match stale.as_slice() {
        [] => {}
        [(o, v)] => text.push_str(&format!(
            ", but buyer {o} still believes {}: its read is stale",
            left(*v)
        )),
        many if many.iter().all(|x| x.1 == many[0].1) => {
            let who: Vec<u32> = many.iter().map(|x| x.0).collect();
            text.push_str(&format!(
                ", but buyers {} still believe {}: their reads are stale",
                join(&who),
                left(many[0].1)
            ));
        }
        many => {
            let who: Vec<u32> = many.iter().map(|x| x.0).collect();
            text.push_str(&format!(
                ", but buyers {} still believe in more: their reads are stale",
                join(&who)
            ));
        }
    }
    text.push('.');
    text
}

/// A command that moved nothing: a WATCH, a lock taken or let go, anything else.
fn other(log: &StepLog, at: usize, category: Option<Category>) -> String {
    let done_here = log.outcome(log.cells[at].buyer).is_some()
        && log.of(log.cells[at].buyer).last() == Some(at);
    let c = &log.cells[at];
    let b = c.buyer;
    let still = c
        .after
        .or(c.before)
        .map(|v| format!(" (the counter is still at {v})"))
        .unwrap_or_default();
    let word = verb(&c.call);
    // Whether this buyer has read or taken since its last `nil` (or since it started).
    let has_acted = (0..at)
        .rev()
        .filter(|&i| log.cells[i].buyer == b)
        .take_while(|&i| log.cells[i].kind != CellKind::Nil)
        .any(|i| {
            matches!(
                log.cells[i].kind,
                CellKind::Read
                    | CellKind::StaleRead
                    | CellKind::RefusedRead
                    | CellKind::Sale
                    | CellKind::Phantom
                    | CellKind::Overwrite
            )
        });
    let first_of_attempt = (0..at)
        .rev()
        .find(|&i| log.cells[i].buyer == b)
        .is_none_or(|i| log.cells[i].kind == CellKind::Nil);
    match category {
        Some(Category::Optimistic) if word == "WATCH" => format!(
            "buyer {b} watches the stock: if anyone writes it before buyer {b}'s EXEC, Redis will run none of its transaction{still}."
        ),
        Some(Category::Optimistic) if word == "UNWATCH" => {
            format!("buyer {b} lets go of its WATCH and stops{still}.")
        }
        Some(Category::Lock) if first_of_attempt => format!(
            "buyer {b} holds the lock now: until it lets go, the others' tries come back nil{still}."
        ),
        Some(Category::Lock) if has_acted || done_here => {
            format!("buyer {b} let go of the lock: the next buyer may take it{still}.")
        }
        _ => format!("buyer {b}'s {word} changed nothing{still}."),
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{lua_one_each, naive_oversell, watch_retry};
    use super::*;

    fn texts(state: &StepState, log: &StepLog, category: Category) -> Vec<String> {
        narrate(state, log, Some(category))
            .into_iter()
            .map(|t| format!("{} | {}", t.said, t.text))
            .collect()
    }

    #[test]
    fn every_click_of_the_classic_oversell_is_one_line() {
        let (s, t) = naive_oversell();
        let log = StepLog::read(&s, &t);
        assert_eq!(
            texts(&s, &log, Category::CheckThenWrite),
            [
                "GET stock → 1 | buyer 1 read 1: it believes 1 unit is left, so it will buy.",
                "GET stock → 1 | buyer 2 read 1: both buyers now believe 1 unit is left.",
                "DECRBY stock 1 → 0 | buyer 1 took 1 unit: the counter is at 0, but buyer 2 still believes 1 unit is left: its read is stale.",
                "DECRBY stock 1 → -1 | buyer 2 sold a unit that did not exist: buyers 1 and 2 both read 1 before either wrote.",
            ]
        );
        let told = narrate(&s, &log, Some(Category::CheckThenWrite));
        assert_eq!(told[3].tone, Tone::Bad);
        assert_eq!(
            told.iter().map(|t| t.buyer).collect::<Vec<_>>(),
            [1, 2, 1, 2]
        );
    }

    #[test]
    fn a_serial_session_reads_takes_then_finds_nothing() {
        let (s, t) = super::super::fixtures::naive_serial(1);
        let log = StepLog::read(&s, &t);
        assert_eq!(
            texts(&s, &log, Category::CheckThenWrite),
            [
                "GET stock → 1 | buyer 1 read 1: it believes 1 unit is left, so it will buy.",
                "DECRBY stock 1 → 0 | buyer 1 took 1 unit: the counter is at 0.",
                "GET stock → 0 | buyer 2 read 0: nothing left for it, so it will not buy.",
            ]
        );
    }

    #[test]
    fn a_watch_session_says_what_each_watch_read_and_exec_did() {
        let (s, t) = watch_retry();
        let log = StepLog::read(&s, &t);
        assert_eq!(
            texts(&s, &log, Category::Optimistic),
            [
                "WATCH stock → OK | buyer 1 watches the stock: if anyone writes it before buyer 1's EXEC, Redis will run none of its transaction (the counter is still at 1).",
                "WATCH stock → OK | buyer 2 watches the stock: if anyone writes it before buyer 2's EXEC, Redis will run none of its transaction (the counter is still at 1).",
                "GET stock → 1 | buyer 1 read 1: it believes 1 unit is left, so it will buy.",
                "GET stock → 1 | buyer 2 read 1: both buyers now believe 1 unit is left.",
                "MULTI · DECRBY stock 1 · EXEC → [0] | buyer 1 took 1 unit: the counter is at 0, but buyer 2 still believes 1 unit is left: its read is stale.",
                "MULTI · DECRBY stock 1 · EXEC → nil | buyer 2's MULTI · DECRBY stock 1 · EXEC came back nil: the stock changed after its WATCH, so Redis ran none of the transaction; it starts over.",
                "WATCH stock → OK | buyer 2 watches the stock: if anyone writes it before buyer 2's EXEC, Redis will run none of its transaction (the counter is still at 0).",
                "GET stock → 0 | buyer 2 read 0: nothing left for it, so it will not buy.",
                "UNWATCH → OK | buyer 2 lets go of its WATCH and stops (the counter is still at 0).",
            ]
        );
    }

    #[test]
    fn one_command_orders_keep_their_line() {
        let (s, t) = lua_one_each();
        let log = StepLog::read(&s, &t);
        let told = narrate(&s, &log, Some(Category::Atomic));
        assert_eq!(told[0].said, "EVALSHA reserve.lua 1 stock 1 → [1, 1, 0]");
        assert!(
            told[0]
                .text
                .starts_with("buyer 2 checked and took in one command")
        );
        assert!(told.iter().all(|t| t.tone == Tone::Good));
    }

    #[test]
    fn counts_are_said_as_counts() {
        assert_eq!(left(1), "1 unit is left");
        assert_eq!(left(0), "0 units are left");
        assert_eq!(left(3), "3 units are left");
    }
}
