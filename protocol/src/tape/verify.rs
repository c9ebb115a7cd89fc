//! [`Tape::verify`]: replay the tape from the starting stock, slot by slot, and check that the
//! order it claims explains every reply. The first reply it does not explain is returned.
//!
//! The builder only *sorted* replies; this replay does the arithmetic. A DECRBY placed after
//! a counter of 5 must answer `5 - qty`; a GET placed there must answer 5. If the builder was
//! handed a history no serial order can produce, this is where it shows.

use std::fmt;

use super::build::guarded;
use super::{Cell, CellAt, Command, Lane, Slot, SlotKind, Tape, TapeRule};
use crate::OutcomeResult;

/// A reply the tape's order does not explain (or an outcome that cannot be on a tape at all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Contradiction {
    /// The same buyer appears in two outcomes.
    DuplicateBuyer {
        /// The buyer.
        buyer: u32,
    },
    /// An outcome lacks a reply its result implies (a sale with no `stock_after`, a sharded
    /// answer with no bucket).
    MissingReply {
        /// The buyer.
        buyer: u32,
        /// What is missing.
        what: &'static str,
    },
    /// No write left the counter at the value this command saw (a GET of a value no write
    /// produced; an overshoot that saw more than was ever unsold).
    Unplaceable {
        /// The buyer.
        buyer: u32,
        /// Its command.
        command: Command,
        /// The value it reported.
        value: i64,
    },
    /// A reply that differs from what the counter must have answered at its slot.
    Mismatch {
        /// Where.
        at: CellAt,
        /// The buyer.
        buyer: u32,
        /// Its command.
        command: Command,
        /// What the replay says Redis answered there.
        expected: i64,
        /// What the buyer reported.
        got: i64,
    },
    /// A buyer's decision does not fit what it saw: it wrote with too little stock, or was
    /// refused with enough, or a decrement that "sold" went below zero.
    WrongDecision {
        /// The buyer.
        buyer: u32,
        /// The stock it saw.
        saw: i64,
        /// Units it wanted.
        qty: u32,
        /// How it ended.
        result: OutcomeResult,
    },
    /// A buyer's read sits at or after its own write.
    ReadAfterWrite {
        /// The buyer.
        buyer: u32,
    },
    /// The strategy promises nothing lands between a buyer's read and write, yet writes did.
    GuardBroken {
        /// The buyer.
        buyer: u32,
        /// Writes that landed in between.
        writes_between: u32,
    },
    /// The outcomes do not agree on a life of the counter (see
    /// [`Epoch`](crate::Epoch)): two say one life began at different values, a reply names
    /// no life in a run of several, or a tape of several counters has lives.
    LifeUnclear {
        /// The buyer.
        buyer: u32,
        /// What does not fit.
        why: &'static str,
    },
    /// A break between two lives does not start where the dead life's replay ended.
    BrokenBreak {
        /// The break's slot.
        at: CellAt,
        /// Where the replay left the counter.
        expected: i64,
        /// Where the break says the dead life left it.
        got: i64,
    },
    /// The counter dropped by more than the writes whose replies never came back can explain.
    UnexplainedDrop {
        /// Where.
        at: CellAt,
        /// Units the counter lost with no answered write to show for them.
        units: i64,
        /// Units the unanswered writes could account for.
        in_doubt: u64,
    },
}

impl fmt::Display for Contradiction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Contradiction::DuplicateBuyer { buyer } => {
                write!(f, "buyer #{buyer} is reported twice")
            }
            Contradiction::MissingReply { buyer, what } => {
                write!(f, "buyer #{buyer} does not report {what}")
            }
            Contradiction::Unplaceable {
                buyer,
                command,
                value,
            } => write!(
                f,
                "buyer #{buyer}'s {} saw {value}, a value no write left on the counter",
                command.noun()
            ),
            Contradiction::Mismatch {
                at,
                buyer,
                command,
                expected,
                got,
            } => write!(
                f,
                "buyer #{buyer}'s {} (lane {}, slot {}) reports {got}, but the counter there makes it {expected}",
                command.noun(),
                at.lane,
                at.slot
            ),
            Contradiction::WrongDecision {
                buyer,
                saw,
                qty,
                result,
            } => write!(
                f,
                "buyer #{buyer} saw {saw}, wanted {qty}, and ended {}: that is not what its strategy decides",
                result.as_str()
            ),
            Contradiction::ReadAfterWrite { buyer } => {
                write!(f, "buyer #{buyer}'s read lands after its own write")
            }
            Contradiction::GuardBroken {
                buyer,
                writes_between,
            } => write!(
                f,
                "{writes_between} writes landed between buyer #{buyer}'s read and its write, which its guard forbids"
            ),
            Contradiction::LifeUnclear { buyer, why } => write!(f, "buyer #{buyer}: {why}"),
            Contradiction::BrokenBreak { at, expected, got } => write!(
                f,
                "the break at lane {}, slot {} says the counter's life ended at {got}, but the replay left it at {expected}",
                at.lane, at.slot
            ),
            Contradiction::UnexplainedDrop {
                at,
                units,
                in_doubt,
            } => write!(
                f,
                "the counter dropped by {units} units at lane {}, slot {} with no answered write; only {in_doubt} units are in doubt",
                at.lane, at.slot
            ),
        }
    }
}

impl std::error::Error for Contradiction {}

impl Command {
    /// A short name for messages, e.g. `"read"`.
    pub fn noun(self) -> &'static str {
        match self {
            Command::Read => "read",
            Command::Decrement => "decrement",
            Command::Set => "SET",
            Command::Reserve => "reserve call",
            Command::Undo => "undo",
        }
    }
}

impl Tape {
    /// Replay the tape and return the first reply its order does not explain. `Ok` means
    /// Redis could have run these commands in this order and answered exactly what the buyers
    /// reported.
    pub fn verify(&self) -> Result<(), Contradiction> {
        if let Some(p) = self.problems.first() {
            return Err(p.clone());
        }
        let mut dropped = 0;
        for (l, lane) in self.lanes.iter().enumerate() {
            let l = l as u32;
            match self.rule {
                TapeRule::DecrementThenUndo => self.replay_undo_lane(l, lane)?,
                _ => self.replay_lane(l, lane, &mut dropped)?,
            }
        }
        for (at, c) in self.cells() {
            self.check_decision(at, c)?;
        }
        Ok(())
    }

    /// Every rule with an exact counter: it starts at the lane's initial value, reads must
    /// answer it, writes move it.
    fn replay_lane(&self, l: u32, lane: &Lane, dropped: &mut u64) -> Result<(), Contradiction> {
        let mut counter = lane.initial;
        for (s, slot) in lane.slots.iter().enumerate() {
            let at = |c: usize| CellAt {
                lane: l,
                slot: s as u32,
                cell: c as u32,
            };
            match slot.kind {
                SlotKind::Gap => {
                    counter = self.replay_gap(at(0), slot, counter, dropped)?;
                }
                // Redis came back: the next life is replayed from where it began.
                SlotKind::Break => {
                    if let Some(got) = slot.before.filter(|&v| v != counter) {
                        return Err(Contradiction::BrokenBreak {
                            at: at(0),
                            expected: counter,
                            got,
                        });
                    }
                    counter = slot.after.unwrap_or(counter);
                }
                SlotKind::Reads => {
                    for (i, c) in slot.cells.iter().enumerate() {
                        expect(at(i), c, counter, c.before)?;
                        expect(at(i), c, counter, c.after)?;
                    }
                }
                SlotKind::Write => {
                    for (i, c) in slot.cells.iter().enumerate() {
                        counter = self.replay_write(at(i), c, counter)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// One write: the counter after it, if its replies fit the counter before it.
    fn replay_write(&self, at: CellAt, c: &Cell, counter: i64) -> Result<i64, Contradiction> {
        let qty = i64::from(c.qty);
        match c.command {
            // SET replies OK; the value is the buyer's own arithmetic, checked with its read.
            Command::Set => Ok(c.after.unwrap_or(counter)),
            // DECRBY, EXEC, UPDATE: the reply is the counter after.
            Command::Decrement => {
                expect(at, c, counter - qty, c.after)?;
                Ok(counter - qty)
            }
            // A script reports both sides.
            _ => {
                expect(at, c, counter, c.before)?;
                expect(at, c, counter - qty, c.after)?;
                Ok(counter - qty)
            }
        }
    }

    /// A drop that only unanswered writes can explain; reads inside it saw a value in between.
    fn replay_gap(
        &self,
        at: CellAt,
        slot: &Slot,
        counter: i64,
        dropped: &mut u64,
    ) -> Result<i64, Contradiction> {
        let (from, to) = (
            slot.before.unwrap_or(counter),
            slot.after.unwrap_or(counter),
        );
        let units = from - to;
        *dropped += units.max(0) as u64;
        if from != counter || units <= 0 || *dropped > self.in_doubt_units {
            return Err(Contradiction::UnexplainedDrop {
                at,
                units,
                in_doubt: self.in_doubt_units,
            });
        }
        for (i, c) in slot.cells.iter().enumerate() {
            let v = c.before.unwrap_or(from);
            if !(to < v && v < from) {
                let at = CellAt {
                    cell: i as u32,
                    ..at
                };
                return Err(mismatch(at, c, from, v));
            }
        }
        Ok(to)
    }

    /// `decr_compensate`: the counter is the unsold stock minus overshoots not yet undone, so
    /// the replay follows the unsold stock and checks every reply against it.
    fn replay_undo_lane(&self, l: u32, lane: &Lane) -> Result<(), Contradiction> {
        // Units that can be out on loan at any moment: every overshoot, plus in-doubt writes.
        let on_loan: u64 = lane
            .slots
            .iter()
            .flat_map(|s| &s.cells)
            .filter(|c| c.command == Command::Decrement && c.result != OutcomeResult::Reserved)
            .map(|c| u64::from(c.qty))
            .sum::<u64>()
            + self.in_doubt_units;
        let mut unsold = lane.initial;
        for (s, slot) in lane.slots.iter().enumerate() {
            if slot.kind == SlotKind::Break {
                unsold = slot.after.unwrap_or(unsold);
            }
            for (i, c) in slot.cells.iter().enumerate() {
                let at = CellAt {
                    lane: l,
                    slot: s as u32,
                    cell: i as u32,
                };
                if c.command != Command::Decrement {
                    continue; // an undo: its reply is not reported
                }
                let before = c.before.unwrap_or(unsold);
                // The DECRBY's reply is `after`; `before` is reported beside it as after + qty.
                expect(at, c, before - i64::from(c.qty), c.after)?;
                if before > unsold {
                    return Err(mismatch(at, c, unsold, before));
                }
                if slot.kind == SlotKind::Write {
                    let short = (unsold - before) as u64;
                    if short > on_loan {
                        return Err(Contradiction::UnexplainedDrop {
                            at,
                            units: short as i64,
                            in_doubt: on_loan,
                        });
                    }
                    unsold -= i64::from(c.qty);
                }
            }
        }
        Ok(())
    }

    /// Does each buyer's decision fit what it saw, in the order the tape claims?
    fn check_decision(&self, at: CellAt, c: &Cell) -> Result<(), Contradiction> {
        let qty = i64::from(c.qty);
        let reserved = c.result == OutcomeResult::Reserved;
        let wrong = |saw: i64| Contradiction::WrongDecision {
            buyer: c.buyer,
            saw,
            qty: c.qty,
            result: c.result,
        };
        match (c.command, c.before) {
            (Command::Read, Some(saw)) => self.check_read(at, c, saw),
            // A script reserves exactly when the stock covers the order.
            (Command::Reserve, Some(saw)) if (saw >= qty) != reserved => Err(wrong(saw)),
            // A decrement-first sale must land at 0 or above; an overshoot below.
            (Command::Decrement, Some(saw))
                if self.rule == TapeRule::DecrementThenUndo
                    && (c.after.unwrap_or_default() >= 0) != reserved =>
            {
                Err(wrong(saw))
            }
            _ => Ok(()),
        }
    }

    /// A read in the app: it wrote only if the read covered the order, its write came after
    /// it, and (under a guard) nothing landed in between.
    fn check_read(&self, at: CellAt, c: &Cell, saw: i64) -> Result<(), Contradiction> {
        let qty = i64::from(c.qty);
        let wrong = Contradiction::WrongDecision {
            buyer: c.buyer,
            saw,
            qty: c.qty,
            result: c.result,
        };
        let Some((w_at, write)) = c.partner.and_then(|p| Some((p, self.cell(p)?))) else {
            // No write: a refusal must have seen too little.
            return match c.result {
                OutcomeResult::SoldOut if saw >= qty => Err(wrong),
                _ => Ok(()),
            };
        };
        if saw < qty {
            return Err(wrong);
        }
        if w_at.lane != at.lane || w_at.slot <= at.slot {
            return Err(Contradiction::ReadAfterWrite { buyer: c.buyer });
        }
        if guarded(self.rule) && c.writes_between != Some(0) {
            return Err(Contradiction::GuardBroken {
                buyer: c.buyer,
                writes_between: c.writes_between.unwrap_or(0),
            });
        }
        // SET writes the buyer's own arithmetic: what it read, minus its order.
        match write.after {
            Some(v) if write.command == Command::Set && v != saw - qty => {
                Err(mismatch(w_at, write, saw - qty, v))
            }
            _ => Ok(()),
        }
    }
}

/// `got` must be `Some(expected)`.
fn expect(at: CellAt, c: &Cell, expected: i64, got: Option<i64>) -> Result<(), Contradiction> {
    match got {
        Some(v) if v == expected => Ok(()),
        Some(v) => Err(mismatch(at, c, expected, v)),
        None => Err(Contradiction::MissingReply {
            buyer: c.buyer,
            what: "the reply its slot needs",
        }),
    }
}

fn mismatch(at: CellAt, c: &Cell, expected: i64, got: i64) -> Contradiction {
    Contradiction::Mismatch {
        at,
        buyer: c.buyer,
        command: c.command,
        expected,
        got,
    }
}
