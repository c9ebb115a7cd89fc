//! What to try next, once every buyer is done and nothing went wrong: the order of clicks
//! that breaks the strategy, or why none does.
//!
//! Which sentence goes by the strategy's [`Category`] and [`TapeRule`] from `hello` (reads
//! then writes in the app; one command; a WATCH; a lock); the commands it names are the
//! verbs this session's own log sent (`GET`, `DECRBY`, `SET`, `EXEC`, `SET NX`...), so the
//! page holds no strategy's commands of its own.

use oversold_protocol::{Category, CommandArg, RedisCall, StepState, StrategyAbout, TapeRule};

use super::log::{StepLog, verb};
use super::story::{Line, Tone};
use crate::model::tape_view::strip::CellKind;

/// The nudge for a finished session of the strategy `about` describes (`None` if the server
/// did not list it); `None` while a buyer is still going, or when the session already showed
/// what the strategy does wrong (an oversell, a lost update) or how its guard works (a `nil`).
pub fn nudge(state: &StepState, log: &StepLog, about: Option<&StrategyAbout>) -> Option<Line> {
    let done = !state.buyers.is_empty() && state.buyers.iter().all(|b| b.outcome.is_some());
    if !done || log.cells.is_empty() {
        return None;
    }
    let about = about?;
    let shown = |k: CellKind| log.cells.iter().any(|c| c.kind == k);
    if shown(CellKind::Phantom) || shown(CellKind::Overwrite) {
        return None;
    }
    let at = log.cells.len() - 1;
    let line = |tone, text| Some(Line { at, tone, text });
    let who = &about.short_label;
    let reads = first_verb(log, |k| {
        matches!(
            k,
            CellKind::Read | CellKind::StaleRead | CellKind::RefusedRead
        )
    });
    let writes = first_verb(log, |k| matches!(k, CellKind::Sale | CellKind::Overshoot));
    let buyers: Vec<u32> = state.buyers.iter().map(|b| b.buyer).collect();
    match about.category {
        Category::Atomic | Category::Sharded => line(
            Tone::Good,
            format!(
                "No order of clicks can break {who}: each buyer checks and takes in one command, so no other buyer's command can land between its check and its take."
            ),
        ),
        Category::CheckThenWrite => {
            let (Some(r), Some(w)) = (reads, writes) else {
                return line(
                    Tone::Info,
                    "Nothing went wrong this time. Now try: let every buyer read before any of them writes.".to_string(),
                );
            };
            let demand: u64 = log
                .outcomes
                .iter()
                .flatten()
                .map(|o| u64::from(o.qty))
                .sum();
            let stock = u64::from(state.config.race.stock);
            // A lost update (a SET of a stale value) needs no shortage; an oversell does.
            let needs_shortage = !matches!(
                about.tape,
                TapeRule::ReadThenSet | TapeRule::SelectThenUpdate
            );
            let plenty = needs_shortage && stock >= demand;
            let text = if shown(CellKind::StaleRead) && plenty {
                format!(
                    "A read went stale, yet nothing went wrong: {stock} in stock covers every order. Set the stock below {demand} and try the same clicks."
                )
            } else {
                let mut t = format!(
                    "Nothing went wrong: the buyers took turns, so every read was fresh. Now try: {}.",
                    interleaving(&buyers, &r, &w)
                );
                if plenty {
                    t.push_str(&format!(
                        " Set the stock below {demand} first: {stock} in stock covers every order."
                    ));
                }
                t
            };
            line(Tone::Info, text)
        }
        Category::Optimistic if !shown(CellKind::Nil) => {
            let (Some(r), Some(w)) = (reads, writes) else {
                return None;
            };
            line(
                Tone::Info,
                format!(
                    "No order of clicks oversells {who}, but one makes it retry. Now try: {}: the second {w} comes back nil, and that buyer starts over.",
                    interleaving(&buyers, &r, &w)
                ),
            )
        }
        Category::Lock if !shown(CellKind::Nil) => {
            let take = named(&log.cells[0].call);
            let [first, second, ..] = buyers.as_slice() else {
                return None;
            };
            line(
                Tone::Info,
                format!(
                    "No order of clicks oversells {who}: the lock makes the buyers take turns. Now try: buyer {first} {take}, then buyer {second} {take} before buyer {first} lets go: it comes back nil, and buyer {second} waits."
                ),
            )
        }
        _ => None,
    }
}

/// The first command of the log whose kind `is` picks, [`named`].
fn first_verb(log: &StepLog, is: impl Fn(CellKind) -> bool) -> Option<String> {
    log.cells
        .iter()
        .find(|c| is(c.kind))
        .map(|c| named(&c.call))
}

/// A call as a nudge names it: a script by its file (`acquire_fenced_lock.lua`: every script
/// is sent as `EVALSHA`, which says nothing), anything else by its [`verb`] (`GET`, `SET NX`).
fn named(call: &RedisCall) -> String {
    let script = call.single().and_then(|c| {
        c.args.iter().find_map(|a| match a {
            CommandArg::Script(file) => Some(file.clone()),
            _ => None,
        })
    });
    script.unwrap_or_else(|| verb(call))
}

/// `buyer 1 GET, buyer 2 GET, then both DECRBY`; `…, then each DECRBY` for more buyers.
fn interleaving(buyers: &[u32], read: &str, write: &str) -> String {
    let reads: Vec<String> = buyers.iter().map(|b| format!("buyer {b} {read}")).collect();
    let all = if buyers.len() == 2 { "both" } else { "each" };
    format!("{}, then {all} {write}", reads.join(", "))
}

#[cfg(test)]
mod tests {
    use oversold_protocol::{Guard, StrategyInfo};

    use super::super::fixtures::{lua_one_each, naive_oversell, naive_serial, watch_retry};
    use super::*;
    use crate::model::fixtures::info;

    fn about(name: &'static str, short: &'static str, category: Category) -> StrategyInfo {
        info(name, name, short, category, false, &[])
    }

    fn said(s: &StepState, t: &super::super::trail::StepTrail, a: &StrategyInfo) -> Option<String> {
        nudge(s, &StepLog::read(s, t), Some(&a.about)).map(|l| l.text)
    }

    #[test]
    fn a_serial_try_of_check_then_write_is_shown_the_interleaving_that_breaks_it() {
        let naive = about("naive", "Naive", Category::CheckThenWrite);
        let (s, t) = naive_serial(1);
        assert_eq!(
            said(&s, &t, &naive).as_deref(),
            Some(
                "Nothing went wrong: the buyers took turns, so every read was fresh. Now try: buyer 1 GET, buyer 2 GET, then both DECRBY."
            )
        );
        // Two units for two buyers: even that order cannot oversell, and the nudge says so.
        let (s, t) = naive_serial(2);
        assert_eq!(
            said(&s, &t, &naive).as_deref(),
            Some(
                "Nothing went wrong: the buyers took turns, so every read was fresh. Now try: buyer 1 GET, buyer 2 GET, then both DECRBY. Set the stock below 2 first: 2 in stock covers every order."
            )
        );
        // A lost update needs no shortage.
        let mut set = about("naive_set", "Naive SET", Category::CheckThenWrite);
        set.about.tape = TapeRule::ReadThenSet;
        assert!(!said(&s, &t, &set).unwrap().contains("Set the stock"));
        // Once it went wrong, the story says it all: no nudge.
        let (s, t) = naive_oversell();
        assert_eq!(said(&s, &t, &naive), None);
        // Nor while a buyer is still going.
        let (mut s, t) = naive_serial(1);
        s.buyers[1].outcome = None;
        assert_eq!(said(&s, &t, &naive), None);
    }

    #[test]
    fn atomic_strategies_are_told_no_order_breaks_them() {
        let lua = about("lua", "Atomic", Category::Atomic);
        let (s, t) = lua_one_each();
        assert_eq!(
            said(&s, &t, &lua).as_deref(),
            Some(
                "No order of clicks can break Atomic: each buyer checks and takes in one command, so no other buyer's command can land between its check and its take."
            )
        );
        assert_eq!(nudge(&s, &StepLog::read(&s, &t), None), None);
    }

    #[test]
    fn guarded_strategies_are_shown_the_order_that_exercises_their_guard() {
        let mut watch = about("watch", "WATCH", Category::Optimistic);
        watch.about.tape = TapeRule::ReadThenDecrement {
            guard: Guard::Watch,
        };
        // A session that already saw the nil needs no nudge.
        let (s, t) = watch_retry();
        assert_eq!(said(&s, &t, &watch), None);
        // The same verbs, in turns: a serial WATCH session.
        let (s, t) = naive_serial(1);
        assert_eq!(
            said(&s, &t, &watch).as_deref(),
            Some(
                "No order of clicks oversells WATCH, but one makes it retry. Now try: buyer 1 GET, buyer 2 GET, then both DECRBY: the second DECRBY comes back nil, and that buyer starts over."
            )
        );
        let lock = about("lock", "Lock", Category::Lock);
        assert_eq!(
            said(&s, &t, &lock).as_deref(),
            Some(
                "No order of clicks oversells Lock: the lock makes the buyers take turns. Now try: buyer 1 GET, then buyer 2 GET before buyer 1 lets go: it comes back nil, and buyer 2 waits."
            )
        );
    }

    #[test]
    fn a_script_is_named_by_its_file() {
        use oversold_protocol::RedisCommand;
        let lock: RedisCall = RedisCommand::new("EVALSHA")
            .script("acquire_fenced_lock.lua")
            .int(1)
            .key("lock")
            .into();
        assert_eq!(named(&lock), "acquire_fenced_lock.lua");
        assert_eq!(named(&super::super::fixtures::get()), "GET");
    }

    #[test]
    fn three_buyers_each_read_then_each_write() {
        assert_eq!(
            interleaving(&[1, 2, 3], "GET", "SET"),
            "buyer 1 GET, buyer 2 GET, buyer 3 GET, then each SET"
        );
    }
}
