//! The words under the tape: the numbers line (the counters' numbers, counted from the tape),
//! the tape's own sentence, and the notes on what is not drawn and how exact the order is.

use oversold_protocol::tape::ZoomPart;

use super::run_tape::RunTape;
use super::strip::{MAX_COLUMNS, Strip};
use crate::model::text::{count, thousands};

/// `7 of 10 units sold, 0 oversold; the counter ends at 3.`: only the tape caption's numbers
/// (and the tape's final counter), the same numbers the counters above show.
pub fn numbers(rt: &RunTape) -> String {
    let c = &rt.caption;
    let head = format!(
        "{} of {} sold, {} oversold",
        thousands(c.units_sold as i64),
        count(c.stock.into(), "unit"),
        thousands(c.oversold_units as i64)
    );
    match rt.final_counter {
        Some(v) => format!("{head}; the counter ends at {}.", thousands(v)),
        // ReadThenSet (which SET landed last is in no reply) or writes in doubt.
        None if rt.tape.in_doubt_units > 0 => format!(
            "{head}; {} in doubt (sent, never answered), so the replies do not fix where the counter ends.",
            count(rt.tape.in_doubt_units, "unit")
        ),
        None => format!(
            "{head}; which write landed last is in no reply, so the tape cannot say where the counter ends."
        ),
    }
}

/// The caption under the tape: the numbers, then the tape's sentence.
pub fn caption(rt: &RunTape, running: bool) -> String {
    if rt.outcomes == 0 {
        return if running {
            "Waiting for the first answers…".to_string()
        } else {
            "Run a strategy: its commands appear here in the order Redis ran them, rebuilt from its replies.".to_string()
        };
    }
    let so_far = if running { "So far: " } else { "" };
    format!("{so_far}{} {}", numbers(rt), rt.caption.sentence)
}

/// What the picture leaves out, and how exact its order is: one sentence each.
pub fn notes(rt: &RunTape, strip: &Strip) -> Vec<String> {
    let mut notes = Vec::new();
    let folded: Vec<&ZoomPart> = rt
        .zoom
        .parts
        .iter()
        .filter(|p| matches!(p, ZoomPart::Folded { .. }))
        .collect();
    match folded.as_slice() {
        [] => {}
        [one] => notes.extend(
            one.describe()
                .map(|d| format!("{d} (the dotted column).", d = capital(&d))),
        ),
        many => {
            let (mut sales, mut refusals, mut other) = (0u64, 0u64, 0u64);
            for p in many {
                if let ZoomPart::Folded {
                    sales: s,
                    refusals: r,
                    other: o,
                    ..
                } = p
                {
                    sales += u64::from(*s);
                    refusals += u64::from(*r);
                    other += u64::from(*o);
                }
            }
            let stretches = many.len();
            notes.push(if sales == 0 && other == 0 {
                format!(
                    "{} not shown, in {stretches} dotted columns between the slots that are.",
                    capital(&count(refusals, "later refusal"))
                )
            } else {
                format!(
                    "{} not shown ({} sales, {} refusals), in {stretches} dotted columns.",
                    capital(&count(sales + refusals + other, "command")),
                    thousands(sales as i64),
                    thousands(refusals as i64)
                )
            });
        }
    }
    if strip.cut_columns > 0 {
        notes.push(format!(
            "{} past the first {MAX_COLUMNS} columns folded into the last one.",
            capital(&count(strip.cut_columns.into(), "more slot"))
        ));
    }
    if !rt.tape.unplaced.is_empty() {
        notes.push(format!(
            "{} not on the tape: no reply places {}.",
            capital(&count(rt.tape.unplaced.len() as u64, "command")),
            if rt.tape.unplaced.len() == 1 {
                "it"
            } else {
                "them"
            }
        ));
    }
    notes.push(rt.tape.rule.limits().to_string());
    notes
}

/// `later refusal` → `Later refusal` (ASCII only: the page carries no Unicode case tables).
fn capital(s: &str) -> String {
    let mut out = s.to_string();
    if let Some(first) = out.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    out
}
