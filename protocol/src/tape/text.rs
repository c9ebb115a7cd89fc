//! The tape as text, one line per cell: what `oversold run --tape N` prints.
//!
//! ```text
//! #7  GET stock -> 1
//! #12 GET stock -> 1
//! #7  DECRBY stock 1 -> 0
//! #12 DECRBY stock 1 -> -1  (stale read: 1 sale landed since its GET; sold a unit that did not exist)
//! ```

use super::caption::count;
use super::{
    BusyReply, Cell, Command, Guard, Placement, ScriptCall, Slot, SlotKind, Tape, TapeRule,
};
use crate::OutcomeResult;

impl Tape {
    /// Every line, in tape order: lane by lane, slot by slot (a gap gets a line of its own),
    /// then the cells that could not be placed.
    /// A break gets a line of its own, after the `BUSY` answers of the life it ends; `BUSY`
    /// answers of a life that did not end come after the placed cells.
    pub fn lines(&self) -> impl Iterator<Item = String> + '_ {
        let width = self.buyer_width();
        let placed = self.lanes.iter().flat_map(move |lane| {
            lane.slots.iter().enumerate().flat_map(move |(s, slot)| {
                let head = match slot.kind {
                    SlotKind::Gap => vec![gap_line(slot, width)],
                    SlotKind::Break => self.break_lines(s, width),
                    _ => Vec::new(),
                };
                head.into_iter().chain(
                    slot.cells
                        .iter()
                        .map(move |c| self.line(lane.bucket, Some((s, slot)), c, width)),
                )
            })
        });
        let ended = self.ended_lives();
        let busy = self
            .busy
            .iter()
            .filter(move |b| !b.epoch.is_some_and(|e| ended.contains(&e)))
            .map(move |b| self.busy_line(b, width));
        let unplaced = self
            .unplaced
            .iter()
            .map(move |c| self.line(None, None, c, width));
        placed.chain(busy).chain(unplaced)
    }

    /// The lives that ended in a break, in order: the one before each break.
    fn ended_lives(&self) -> Vec<u32> {
        let mut lives = vec![0];
        lives.extend(self.breaks.iter().map(|b| b.epoch));
        lives.pop();
        lives
    }

    /// The break at slot `s`: the dead life's `BUSY` answers, then where Redis came back.
    fn break_lines(&self, s: usize, width: usize) -> Vec<String> {
        let Some(i) = self.breaks.iter().position(|b| b.slot as usize == s) else {
            return Vec::new();
        };
        let b = &self.breaks[i];
        let dead = self.ended_lives()[i];
        let mut lines: Vec<String> = self
            .busy
            .iter()
            .filter(|r| r.epoch == Some(dead))
            .map(|r| self.busy_line(r, width))
            .collect();
        let back = match b.came_back_at {
            _ if b.evicted => "Redis evicted the counter (a missing key reads as 0)".to_string(),
            Some(v) => format!("Redis came back at {v}"),
            None => "Redis came back without the counter (read as 0)".to_string(),
        };
        let before = match b.confirmed_down_to {
            Some(v) => format!("the life before had confirmed down to {v}"),
            None => "the life before had confirmed no sale".to_string(),
        };
        let lost = match (b.lost_orders, b.lost_units) {
            (0, _) => "nothing acknowledged lost".to_string(),
            (n, u) if u == u64::from(n) => {
                format!(
                    "{} lost",
                    count(n.into(), "acknowledged sale", "acknowledged sales")
                )
            }
            (n, u) => format!(
                "{} ({}) lost",
                count(n.into(), "acknowledged sale", "acknowledged sales"),
                count(u, "unit", "units")
            ),
        };
        lines.push(format!(
            "{:<width$}({back}: life {} of the counter; {before}: {lost})",
            "==", b.epoch
        ));
        lines
    }

    /// A buyer Redis answered `BUSY`.
    fn busy_line(&self, b: &BusyReply, width: usize) -> String {
        let who = format!("#{}", b.buyer);
        format!(
            "{who:<width$}{} -> BUSY  (a script held Redis: nothing taken, no reply places it)",
            self.call(None, b.qty)
        )
    }

    /// A reserve call as sent, without its reply.
    fn call(&self, bucket: Option<u32>, q: u32) -> String {
        let key = bucket.map_or("stock".to_string(), |b| format!("bucket:{b}"));
        match self.rule {
            TapeRule::AtomicCall {
                call: ScriptCall::Fcall,
            } => format!("FCALL oversold_v2_reserve 1 {key} {q}"),
            _ => format!("EVALSHA reserve {key} {q}"),
        }
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
    fn line(
        &self,
        bucket: Option<u32>,
        slot: Option<(usize, &Slot)>,
        c: &Cell,
        width: usize,
    ) -> String {
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
                let call = self.call(bucket, q);
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
    fn notes(&self, slot: Option<(usize, &Slot)>, c: &Cell) -> Vec<String> {
        let Some((s, slot)) = slot else {
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
        // In a later life of the counter, a unit beyond the stock was sold before, in a
        // life Redis forgot.
        let later = self.breaks.first().is_some_and(|b| s > b.slot as usize);
        if c.phantom_units > 0 && later {
            notes.push(match (c.phantom_units, c.qty) {
                (1, 1) => "sold a second time: every unit was already sold".to_string(),
                (p, q) if p == q => format!("{q} units sold a second time"),
                (p, q) => format!("{p} of its {q} units sold a second time"),
            });
        } else if c.phantom_units > 0 {
            notes.push(match (c.phantom_units, c.qty) {
                (1, 1) => "sold a unit that did not exist".to_string(),
                (p, q) if p == q => format!("sold {q} units that did not exist"),
                (p, q) => format!("{p} of its {q} units did not exist"),
            });
        }
        if c.lost {
            notes.push(
                "acknowledged, then lost: the counter that came back does not have it".to_string(),
            );
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
