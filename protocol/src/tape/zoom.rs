//! [`Tape::zoom`]: "zoom to the race". A 10,000-buyer tape is mostly refusals after the stock
//! ran out; the part worth drawing is from the start until the counter reached zero, plus
//! every slot where a stale read or a phantom unit shows. The rest is folded into counts.

use super::caption::{count, num};
use super::{CellAt, Command, Lane, Slot, SlotKind, Tape};
use crate::OutcomeResult;

/// The slots to draw, lane by lane, in order; and what was folded away between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zoom {
    /// In tape order: lane 0's parts, then lane 1's, and so on.
    pub parts: Vec<ZoomPart>,
}

/// A run of consecutive slots of one lane: drawn, or folded into counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoomPart {
    /// Draw slots `from..=to` of `lane`.
    Shown {
        /// Index into [`Tape::lanes`].
        lane: u32,
        /// First slot.
        from: u32,
        /// Last slot (inclusive).
        to: u32,
    },
    /// Slots `from..=to` of `lane`, not drawn: only their counts.
    Folded {
        /// Index into [`Tape::lanes`].
        lane: u32,
        /// First slot.
        from: u32,
        /// Last slot (inclusive).
        to: u32,
        /// Writes buyers were told they won.
        sales: u32,
        /// Refused buyers' deciding commands (a GET, a refused call, an overshoot).
        refusals: u32,
        /// Every other command (reads that led to a write, overshoots, undos...).
        other: u32,
    },
}

impl ZoomPart {
    /// One line for a folded part, e.g. "8,392 later refusals not shown"; `None` when shown.
    pub fn describe(&self) -> Option<String> {
        let ZoomPart::Folded {
            from,
            sales,
            refusals,
            other,
            ..
        } = *self
        else {
            return None;
        };
        let later = if from == 0 { "" } else { "later " };
        Some(if sales == 0 && other == 0 {
            format!(
                "{} not shown",
                count(
                    refusals.into(),
                    &format!("{later}refusal"),
                    &format!("{later}refusals")
                )
            )
        } else {
            format!(
                "{} not shown ({} sales, {} refusals)",
                count(
                    u64::from(sales + refusals + other),
                    &format!("{later}command"),
                    &format!("{later}commands")
                ),
                num(sales.into()),
                num(refusals.into())
            )
        })
    }
}

impl Tape {
    /// The race and its damage to draw; everything else folded into counts.
    pub fn zoom(&self) -> Zoom {
        let mut keep: Vec<Vec<bool>> = self.lanes.iter().map(race_of_each_life).collect();
        // Stale, phantom and lost writes are the story, wherever they landed; so are their
        // reads.
        for (at, cell) in self.cells() {
            if cell.is_stale() || cell.phantom_units > 0 || cell.lost {
                for CellAt { lane, slot, .. } in std::iter::once(at).chain(cell.partner) {
                    keep[lane as usize][slot as usize] = true;
                }
            }
        }
        let mut parts = Vec::new();
        for (l, (lane, keep)) in self.lanes.iter().zip(keep).enumerate() {
            let mut start = 0;
            while start < keep.len() {
                let end = start
                    + keep[start..]
                        .iter()
                        .take_while(|&&k| k == keep[start])
                        .count();
                let (lane_i, from, to) = (l as u32, start as u32, (end - 1) as u32);
                parts.push(if keep[start] {
                    ZoomPart::Shown {
                        lane: lane_i,
                        from,
                        to,
                    }
                } else {
                    fold(lane, lane_i, from, to)
                });
                start = end;
            }
        }
        Zoom { parts }
    }
}

/// Which slots of `lane` to draw: in each life of its counter, from the start until the
/// counter ran out (see [`ran_out`]); and every break between two lives.
fn race_of_each_life(lane: &Lane) -> Vec<bool> {
    let n = lane.slots.len();
    let mut keep = vec![false; n];
    let breaks = lane
        .slots
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kind == SlotKind::Break)
        .map(|(i, _)| i);
    let mut start = 0;
    for end in breaks.chain([n]) {
        let end_of_race = ran_out(&lane.slots[start..end]).map(|i| start + i);
        for (s, k) in keep.iter_mut().enumerate().take(end).skip(start) {
            *k = Some(s) <= end_of_race;
        }
        if end < n {
            keep[end] = true;
        }
        start = end + 1;
    }
    keep
}

/// The slot where the counter first reached zero or below; without one, the last write; with
/// no writes, `None` (nothing raced).
fn ran_out(slots: &[Slot]) -> Option<usize> {
    let writes = || {
        slots
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s.kind, SlotKind::Write | SlotKind::Gap))
    };
    writes()
        .find(|(_, s)| s.after.is_some_and(|a| a <= 0))
        .or_else(|| writes().next_back())
        .map(|(i, _)| i)
}

fn fold(lane: &Lane, lane_i: u32, from: u32, to: u32) -> ZoomPart {
    let (mut sales, mut refusals, mut other) = (0, 0, 0);
    for cell in lane.slots[from as usize..=to as usize]
        .iter()
        .flat_map(|s| &s.cells)
    {
        if cell.is_sale() {
            sales += 1;
        } else if cell.result == OutcomeResult::SoldOut && cell.command != Command::Undo {
            refusals += 1;
        } else {
            other += 1;
        }
    }
    ZoomPart::Folded {
        lane: lane_i,
        from,
        to,
        sales,
        refusals,
        other,
    }
}
