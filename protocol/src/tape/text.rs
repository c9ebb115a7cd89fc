//! The tape as text, one line per cell: what `oversold run --tape N` prints.
//!
//! ```text
//! #7  GET stock -> 1
//! #12 GET stock -> 1
//! #7  DECRBY stock 1 -> 0
//! #12 DECRBY stock 1 -> -1  (stale read: 1 sale landed since its GET; sold a unit that did not exist)
//! ```

use super::caption::count;
use super::{Cell, Command, Guard, Placement, ScriptCall, Slot, SlotKind, Tape, TapeRule};
use crate::OutcomeResult;

impl Tape {
    /// Every line, in tape order: lane by lane, slot by slot (a gap gets a line of its own),
    /// then the cells that could not be placed.
    pub fn lines(&self) -> impl Iterator<Item = String> + '_ {
        let width = self.buyer_width();
        let placed = self.lanes.iter().flat_map(move |lane| {
            lane.slots.iter().flat_map(move |slot| {
                let gap = (slot.kind == SlotKind::Gap).then(|| gap_line(slot, width));
                gap.into_iter().chain(
                    slot.cells
                        .iter()
                        .map(move |c| self.line(lane.bucket, Some(slot), c, width)),
                )
            })
        });
        let unplaced = self
            .unplaced
            .iter()
            .map(move |c| self.line(None, None, c, width));
        placed.chain(unplaced)
    }

    /// `#7` padded so commands line up: as wide as the biggest buyer number, plus a space.
    fn buyer_width(&self) -> usize {
        let biggest = self
            .cells()
            .map(|(_, c)| c.buyer)
            .chain(self.unplaced.iter().map(|c| c.buyer))
            .max()
            .unwrap_or(0);
        biggest.to_string().len() + 2
    }

    /// One cell's line; `slot` is `None` for a cell the tape could not place.
    fn line(&self, bucket: Option<u32>, slot: Option<&Slot>, c: &Cell, width: usize) -> String {
        let who = format!("#{}", c.buyer);
        let mut line = format!("{who:<width$}{}", self.command(bucket, c));
        let notes = self.notes(slot, c);
        if !notes.is_empty() {
            line += &format!("  ({})", notes.join("; "));
        }
        line
    }

    /// The command as the buyer sent it, with Redis's reply.
    fn command(&self, bucket: Option<u32>, c: &Cell) -> String {
        let q = c.qty;
        let reply = |v: Option<i64>| v.map_or("no reply".to_string(), |v| v.to_string());
        let guard = match self.rule {
            TapeRule::ReadThenDecrement { guard } => guard,
            _ => Guard::Unguarded,
        };
        match c.command {
            Command::Read => match guard {
                _ if self.rule == TapeRule::SelectThenUpdate => {
                    format!("SELECT stock -> {}", reply(c.before))
                }
                Guard::Watch => format!("WATCH stock · GET stock -> {}", reply(c.before)),
                Guard::RowLock => format!("SELECT stock FOR UPDATE -> {}", reply(c.before)),
                _ => format!("GET stock -> {}", reply(c.before)),
            },
            Command::Decrement => match guard {
                Guard::Watch => format!("MULTI · DECRBY stock {q} · EXEC -> [{}]", reply(c.after)),
                Guard::RowLock => format!("UPDATE stock = stock - {q} -> {}", reply(c.after)),
                _ => format!("DECRBY stock {q} -> {}", reply(c.after)),
            },
            Command::Set if self.rule.in_sql() => {
                format!("UPDATE SET stock = {} -> 1 row", reply(c.after))
            }
            Command::Set => format!("SET stock {} -> OK", reply(c.after)),
            Command::Undo => format!("INCRBY stock {q} -> (not reported)"),
            Command::Reserve => {
                let key = bucket.map_or("stock".to_string(), |b| format!("bucket:{b}"));
                let call = match self.rule {
                    TapeRule::AtomicCall {
                        call: ScriptCall::Fcall,
                    } => format!("FCALL oversold_v2_reserve 1 {key} {q}"),
                    _ => format!("EVALSHA reserve {key} {q}"),
                };
                match (c.before, c.after) {
                    (Some(b), Some(a)) => {
                        let won = u8::from(c.result == OutcomeResult::Reserved && a != b);
                        format!("{call} -> {{{won}, {b}, {a}}}")
                    }
                    _ => format!("{call} -> no reply"),
                }
            }
        }
    }

    /// What the reader should notice about this cell.
    fn notes(&self, slot: Option<&Slot>, c: &Cell) -> Vec<String> {
        let Some(slot) = slot else {
            return vec![if c.result == OutcomeResult::Unknown {
                "never answered: in doubt, not placed".to_string()
            } else {
                "no order explains this reply".to_string()
            }];
        };
        let mut notes = Vec::new();
        let write = matches!(c.command, Command::Decrement | Command::Set);
        if write && c.is_stale() {
            let n = c.writes_between.unwrap_or(0);
            let read = if self.rule.in_sql() { "SELECT" } else { "GET" };
            notes.push(format!(
                "stale read: {} landed since its {read}",
                count(n.into(), "sale", "sales")
            ));
        }
        if c.phantom_units > 0 {
            notes.push(match (c.phantom_units, c.qty) {
                (1, 1) => "sold a unit that did not exist".to_string(),
                (p, q) if p == q => format!("sold {q} units that did not exist"),
                (p, q) => format!("{p} of its {q} units did not exist"),
            });
        }
        if c.command == Command::Set {
            let sets = slot.cells.len();
            notes.push(match sets {
                1 => "placed by value".to_string(),
                n if self.rule.in_sql() => {
                    format!("placed by value: one of {n} UPDATEs to this value")
                }
                n => format!("placed by value: one of {n} SETs of this value"),
            });
        }
        if c.placement == Placement::NoLaterThan && c.command == Command::Decrement {
            notes.push("below 0, not a sale; ran no later than here".to_string());
        }
        if c.command == Command::Undo {
            notes.push(match c.result {
                OutcomeResult::Unknown => "the undo; it may never have landed".to_string(),
                _ => "the undo, some time after its DECRBY".to_string(),
            });
        }
        notes
    }
}

fn gap_line(slot: &Slot, width: usize) -> String {
    let units = slot.before.unwrap_or(0) - slot.after.unwrap_or(0);
    format!(
        "{:<width$}(the counter fell by {} with no answered write: writes in doubt landed here)",
        "--",
        count(units.max(0) as u64, "unit", "units")
    )
}
