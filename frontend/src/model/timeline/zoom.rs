//! Zooming to the race: a big crowd's run lasts far longer than its race (2 s against 40 ms for
//! 10,000 buyers), so the axis can stop at a few times the run-out moment. The buyers that
//! arrive after that edge are counted, not drawn, and the note under the picture names them.

use super::rows::mark;
use crate::model::run::{AuditRow, Mark};
use crate::model::tape_view::RunTape;
use crate::model::text::{micros, thousands};

/// The run must last this many times the run-out moment before the race gets a zoom. (The
/// moment is the answer of the write the Redis tape says ran the stock out: an upper bound,
/// often later than the first refusals, so the race takes more of the run than it seems.)
pub const ZOOM_WORTH: u64 = 4;
/// A zoomed axis runs to this many times the run-out moment.
pub const ZOOM_SPAN: u64 = 3;

/// The buyers a zoomed picture leaves out: those that arrived at or after its right edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hidden {
    /// Buyers not shown.
    pub buyers: u32,
    /// Of those, refused as sold out.
    pub refused: u32,
    /// Of those, oversold.
    pub oversold: u32,
    /// Of those, reserved a real unit.
    pub reserved: u32,
    /// Of those, failed.
    pub errors: u32,
    /// Of those, never answered (in doubt).
    pub unknown: u32,
    /// Of those, gave up waiting.
    pub gave_up: u32,
}

impl Hidden {
    pub(super) fn add(&mut self, mark: Mark) {
        self.buyers += 1;
        match mark {
            Mark::Reserved => self.reserved += 1,
            Mark::Oversold => self.oversold += 1,
            Mark::SoldOut => self.refused += 1,
            Mark::Error => self.errors += 1,
            Mark::Unknown => self.unknown += 1,
            Mark::GaveUp => self.gave_up += 1,
        }
    }
}

/// Count the buyers that arrived at or after `end_us` (one pass, no sort), coloured as their
/// bars would be (see [`mark`]).
pub fn hidden(rows: &[AuditRow], end_us: u64, tape: Option<&RunTape>) -> Hidden {
    let mut h = Hidden::default();
    for r in rows.iter().filter(|r| r.outcome.start_us >= end_us) {
        h.add(mark(r, tape));
    }
    h
}

/// The line under a zoomed picture: what the axis covers and who is left out.
pub fn zoom_note(h: &Hidden, end_us: u64, last_end_us: u64) -> String {
    let span = format!(
        "Zoomed to the first {} of a {} run",
        micros(end_us),
        micros(last_end_us)
    );
    if h.buyers == 0 {
        return format!("{span}; bars that go on past the edge end in an arrow.");
    }
    let later = if h.buyers == 1 {
        "1 later buyer".to_string()
    } else {
        format!("{} later buyers", thousands(h.buyers.into()))
    };
    let parts: Vec<String> = [
        (h.refused, "refused"),
        (h.oversold, "oversold"),
        (h.reserved, "reserved"),
        (h.gave_up, "gave up"),
        (h.unknown, "in doubt"),
        (h.errors, "failed"),
    ]
    .into_iter()
    .filter(|&(n, _)| n > 0)
    .map(|(n, what)| format!("{} {what}", thousands(n.into())))
    .collect();
    let what = match parts.as_slice() {
        [only] => {
            let word = only.split_once(' ').map_or("", |x| x.1);
            if h.buyers > 1 {
                format!("all {word}")
            } else {
                word.to_string()
            }
        }
        _ => parts.join(", "),
    };
    format!("{span}; {later} ({what}) not shown.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_zoom_note_names_what_the_later_buyers_got() {
        let mixed = Hidden {
            buyers: 9_200,
            refused: 9_150,
            oversold: 50,
            ..Hidden::default()
        };
        assert_eq!(
            zoom_note(&mixed, 114_000, 2_210_000),
            "Zoomed to the first 114 ms of a 2.21 s run; 9,200 later buyers (9,150 refused, 50 oversold) not shown."
        );
        let one = Hidden {
            buyers: 1,
            errors: 1,
            ..Hidden::default()
        };
        assert_eq!(
            zoom_note(&one, 450, 5_000),
            "Zoomed to the first 450 µs of a 5 ms run; 1 later buyer (failed) not shown."
        );
        assert!(zoom_note(&Hidden::default(), 450, 5_000).ends_with("end in an arrow."));
    }
}
