//! The Redis tape: what Redis's one command thread did, in order, rebuilt from its replies
//! alone. No clock is used.
//!
//! # The idea
//! Redis runs one command at a time. A run's outcomes carry the replies Redis gave each buyer,
//! and those replies are enough to put most commands back in the order Redis ran them:
//!
//! - A `DECRBY` answers the counter *after* it. The counter only moves down, so every answer
//!   is different, and sorting the answers from high to low *is* the order of the writes.
//! - A `GET` that answered `v` ran after the write that left `v` (or before every write, if
//!   `v` is the starting stock) and before the next write. Several GETs between the same two
//!   writes share one [`Slot`]: their order among themselves is unknown, and does not matter
//!   (a read changes nothing).
//! - A Lua script or a Function answers the stock before and after it, so it sits at one exact
//!   point of the same order; a refusal (before = after) sits between two writes like a GET.
//!
//! - When Redis forgets part of a run and comes back (a failover's promoted replica, a
//!   restart from disk or a snapshot), the same counter values are answered twice, by two
//!   *lives* of the counter. Each outcome says which life answered it (its
//!   [`Epoch`](crate::Epoch)); each life is ordered on its own from the value it began at,
//!   the lives one after the other, with a [`Break`] between two that says where Redis came
//!   back, the acknowledged sales it lost, and (in the caption) the units sold a second time.
//!
//! App-side clocks cannot do this: a buyer's clock says when *its* answer arrived, not when
//! Redis ran the command, and two buyers' clocks drift apart by more than a command takes.
//!
//! Each strategy says which reasoning applies to its replies with a [`TapeRule`] (in its
//! [`StrategyAbout`](crate::StrategyAbout)). Where the replies only allow a partial order
//! (`naive_set`'s SETs repeat values; `decr_compensate`'s undo replies are not reported;
//! WATCH's discarded attempts are not reported at all), the tape says so cell by cell with a
//! [`Placement`], and [`TapeRule::limits`] says it in a sentence.
//!
//! # Layout
//! - [`Tape::build`] (`tape/build.rs`): outcomes in, [`Tape`] out. It trusts nothing: what it
//!   cannot place goes to [`Tape::unplaced`], and what contradicts goes to
//!   [`Tape::problems`].
//! - [`Tape::verify`] (`tape/verify.rs`): replays the tape slot by slot and returns the first
//!   reply the claimed order does not explain. A tape that verifies is a proof that Redis
//!   could have run the commands in that order.
//! - [`Tape::caption`] (`tape/caption.rs`): the numbers and one sentence, counted from the
//!   tape's cells, so they agree with the run's counters.
//! - [`Tape::zoom`] (`tape/zoom.rs`): the slots worth drawing (the race, the stale writes)
//!   and the rest folded into counts.
//! - [`Tape::lines`] (`tape/text.rs`): one line per cell, as `oversold run --tape N` prints.
//!
//! ```text
//!  slot  buyer  command                  counter
//!   0    #3     GET stock -> 1            1        both read 1: one slot, order unknown
//!        #7     GET stock -> 1
//!   1    #7     DECRBY stock 1 -> 0       1 -> 0   #7 sold the last unit
//!   2    #3     DECRBY stock 1 -> -1      0 -> -1  stale read: 1 sale landed since its GET
//! ```

use serde::{Deserialize, Serialize};

use crate::wire_names::wire_names;

use crate::OutcomeResult;

mod build;
mod caption;
mod text;
mod verify;
mod zoom;

pub use caption::Caption;
pub use verify::Contradiction;
pub use zoom::{Zoom, ZoomPart};

/// How a strategy's replies put its commands in order. Each strategy declares one in its
/// [`StrategyAbout`](crate::StrategyAbout).
///
/// On the wire: `{"kind":"read_then_decrement","guard":"unguarded"}`, `{"kind":"read_then_set"}`,
/// `{"kind":"select_then_update"}`, `{"kind":"atomic_call","call":"evalsha"}`,
/// `{"kind":"atomic_per_bucket","buckets":4}`, `{"kind":"decrement_then_undo"}`.
///
/// Read by hand ([`TapeRule`]'s `Deserialize`, below): serde's reader for an internally tagged
/// enum copies the object into a buffer of its own first, and that machinery alone was a sixth
/// of the phone page's wasm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TapeRule {
    /// A read (`observed_stock`), a decision in the app, then a decrement whose reply is the
    /// counter after it (`stock_after`): `naive`, and the guarded `lock`, `watch` and
    /// `postgres`. Writes are exactly ordered; each read sits exactly between two writes.
    ReadThenDecrement {
        /// What, if anything, keeps other writes out from between a buyer's read and write.
        guard: Guard,
    },
    /// A read, then `SET` of `read - qty`: `naive_set`. SET answers `OK`, and the values
    /// written repeat, so the order is partial: writes are grouped by value.
    ReadThenSet,
    /// [`TapeRule::ReadThenSet`] in SQL: a plain `SELECT stock`, then `UPDATE ... SET stock =
    /// read - qty` in the same transaction: `postgres_naive`. The same partial order (writes
    /// grouped by the value they wrote), told in SQL.
    SelectThenUpdate,
    /// One script or function call that answers the stock before and after it: `lua`,
    /// `function` (and a fenced lock whose script reports the same). Exactly ordered.
    AtomicCall {
        /// How the call is sent, for the printed command.
        call: ScriptCall,
    },
    /// [`TapeRule::AtomicCall`] on one of `buckets` counters (the outcome's `bucket` says
    /// which): `sharded`. Exactly ordered within a bucket; buckets are not ordered against
    /// each other (their replies share no value).
    AtomicPerBucket {
        /// How many counters the stock is dealt over (see [`deal`]).
        buckets: u32,
    },
    /// `DECRBY` first (`stock_after` is its reply, `observed_stock` is `reply + qty`), and an
    /// `INCRBY` undo when it went below zero: `decr_compensate`. Sales are exactly ordered
    /// while each one starts where the last left off (always, with one unit per order); once
    /// an overshoot may have been pending, they are in an order that explains every reply
    /// ([`Placement::Witness`]). An overshoot is placed no later than a slot; the undo's reply
    /// is not reported.
    DecrementThenUndo,
    /// No tape: a strategy whose steps touch several keys each and whose replies do not order
    /// them against each other: the checkout and cart strategies (each buyer's `checkout` or
    /// `cart` story is drawn instead), and `sharded_sum`, whose check is a sum of reads of
    /// several buckets. [`Tape::build`] gives an empty tape.
    Story,
}

/// A [`TapeRule`] as it is written: `kind` and the variant's one field, read in one pass.
#[derive(Deserialize)]
struct TapeBody {
    kind: TapeKind,
    #[serde(default)]
    guard: Option<Guard>,
    #[serde(default)]
    call: Option<ScriptCall>,
    #[serde(default)]
    buckets: Option<u32>,
}

/// [`TapeRule`]'s variants, by their wire names.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum TapeKind {
    ReadThenDecrement,
    ReadThenSet,
    SelectThenUpdate,
    AtomicCall,
    AtomicPerBucket,
    DecrementThenUndo,
    Story,
}

impl<'de> Deserialize<'de> for TapeRule {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let body = TapeBody::deserialize(deserializer)?;
        let missing = |field: &'static str| serde::de::Error::missing_field(field);
        Ok(match body.kind {
            TapeKind::ReadThenDecrement => TapeRule::ReadThenDecrement {
                guard: body.guard.ok_or_else(|| missing("guard"))?,
            },
            TapeKind::ReadThenSet => TapeRule::ReadThenSet,
            TapeKind::SelectThenUpdate => TapeRule::SelectThenUpdate,
            TapeKind::AtomicCall => TapeRule::AtomicCall {
                call: body.call.ok_or_else(|| missing("call"))?,
            },
            TapeKind::AtomicPerBucket => TapeRule::AtomicPerBucket {
                buckets: body.buckets.ok_or_else(|| missing("buckets"))?,
            },
            TapeKind::DecrementThenUndo => TapeRule::DecrementThenUndo,
            TapeKind::Story => TapeRule::Story,
        })
    }
}

/// What keeps other writes out from between a buyer's read and its write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// Nothing: any number of writes can land in between (`naive`).
    Unguarded,
    /// A Redis lock: only the holder reads and writes (`lock`). Lock polls are not reported.
    Lock,
    /// WATCH/MULTI/EXEC: a commit proves no write landed since the WATCH (`watch`). Discarded
    /// attempts are not reported.
    Watch,
    /// A PostgreSQL row lock, `SELECT … FOR UPDATE` then `UPDATE` (`postgres`).
    RowLock,
}

wire_names! { Guard {
    Unguarded = "unguarded",
    Lock = "lock",
    Watch = "watch",
    RowLock = "row_lock",
} }

/// How an atomic call is sent, for the printed command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptCall {
    /// `EVALSHA reserve`.
    Evalsha,
    /// `FCALL oversold_v2_reserve`.
    Fcall,
}

wire_names! { ScriptCall {
    Evalsha = "evalsha",
    Fcall = "fcall",
} }

impl TapeRule {
    /// True when each write is an absolute value the app computed from its read (`SET`, or
    /// SQL's `UPDATE ... SET stock = v`): the values repeat, so the writes are ordered only
    /// by value, and the last one written is in no reply.
    pub fn overwrites(self) -> bool {
        matches!(self, TapeRule::ReadThenSet | TapeRule::SelectThenUpdate)
    }

    /// True when the commands are SQL statements (a `SELECT` reads), not Redis commands.
    pub fn in_sql(self) -> bool {
        matches!(
            self,
            TapeRule::SelectThenUpdate
                | TapeRule::ReadThenDecrement {
                    guard: Guard::RowLock
                }
        )
    }

    /// What the replies can and cannot order under this rule, in one or two sentences.
    pub fn limits(self) -> &'static str {
        match self {
            TapeRule::ReadThenDecrement {
                guard: Guard::Unguarded,
            } => {
                "Exact: every DECRBY reply is the counter after it, so the writes sort into Redis's order, \
                 and every GET sits between the two writes around the value it read."
            }
            TapeRule::ReadThenDecrement { guard: Guard::Lock } => {
                "Exact for reads and writes: the lock holder's GET and DECRBY are adjacent. Failed lock tries \
                 (SET NX) report nothing and are not drawn."
            }
            TapeRule::ReadThenDecrement {
                guard: Guard::Watch,
            } => {
                "Exact for the attempts that count: a committed read and its EXEC are adjacent (WATCH allows no \
                 write between them). Discarded attempts are not reported and are not drawn."
            }
            TapeRule::ReadThenDecrement {
                guard: Guard::RowLock,
            } => {
                "Exact: the row lock makes each buyer's SELECT … FOR UPDATE and UPDATE adjacent, and every \
                 UPDATE leaves a different stock."
            }
            TapeRule::ReadThenSet => {
                "Partial: SET answers OK and the values written repeat, so writes are grouped by the value \
                 they wrote (high to low), and a read of v follows some SET of v. The true order between \
                 groups may differ: a slow SET of a higher value can land after a lower one."
            }
            TapeRule::SelectThenUpdate => {
                "Partial: each UPDATE writes a number the app computed from its SELECT, and those numbers \
                 repeat, so writes are grouped by the value they wrote (high to low), and a SELECT of v \
                 follows some UPDATE to v. The true order between groups may differ."
            }
            TapeRule::AtomicCall { .. } => {
                "Exact: each call reports the stock before and after it, so it sits at one point of Redis's \
                 order; refusals sit between two sales like reads."
            }
            TapeRule::AtomicPerBucket { .. } => {
                "Exact within each bucket; the buckets share no value, so their order against each other is \
                 unknown. Each buyer's earlier refused probe is not reported and is not drawn."
            }
            TapeRule::DecrementThenUndo => {
                "Sales (DECRBY replies of 0 or more) are exactly ordered while each starts where the last left \
                 off; after an overshoot that may still have been pending, only an order that explains every \
                 reply is known. An overshoot below 0 is drawn at the latest point it can have run; its INCRBY \
                 undo is not reported and is drawn beside it."
            }
            TapeRule::Story => {
                "No tape: each step touches several keys (a checkout's counter, holds and ledger; a cart's \
                 shelves; every bucket a sharded sum reads), and the replies do not order those steps against \
                 each other. Where a buyer has a story (a checkout, a cart), it is drawn instead."
            }
        }
    }

    /// What the outcomes' `retries` (plus gave-up buyers) count under this rule: work Redis
    /// did that no reply describes, so the tape does not draw it. `None` when nothing is hidden.
    pub fn not_drawn(self) -> Option<&'static str> {
        match self {
            TapeRule::ReadThenDecrement { guard: Guard::Lock } => Some("failed lock tries"),
            TapeRule::ReadThenDecrement {
                guard: Guard::Watch,
            } => Some("discarded attempts"),
            TapeRule::AtomicPerBucket { .. } => Some("earlier refused probes"),
            _ => None,
        }
    }
}

/// How `stock` units are dealt over `buckets` counters: as evenly as they go, the remainder to
/// the first ones (10 over 4 is `[3, 3, 2, 2]`). The server deals them the same way (a test
/// holds the two together).
pub fn deal(stock: u32, buckets: u32) -> Vec<i64> {
    let n = buckets.max(1);
    (0..n)
        .map(|i| i64::from(stock / n + u32::from(i < stock % n)))
        .collect()
}

/// A run's commands, in the order Redis ran them as far as the replies tell.
#[derive(Debug, Clone, PartialEq)]
pub struct Tape {
    /// The rule the tape was built with.
    pub rule: TapeRule,
    /// Units in stock before the run.
    pub stock: u32,
    /// One lane per counter: one for every rule but [`TapeRule::AtomicPerBucket`].
    pub lanes: Vec<Lane>,
    /// Cells the replies could not place: a write that was never answered (in doubt), or a
    /// reply no order explains (then [`Tape::problems`] says why).
    pub unplaced: Vec<Cell>,
    /// Units across `unknown` outcomes: writes that may have landed with no reply.
    pub in_doubt_units: u64,
    /// Commands the outcomes count but do not describe (see [`TapeRule::not_drawn`]).
    pub not_drawn: u32,
    /// Where the counter's life ended and the next began (see [`Break`]), in order; empty
    /// when the counter had one life, as in every run where Redis kept what it answered.
    pub breaks: Vec<Break>,
    /// Buyers Redis answered `BUSY` (another client's script held it): nothing was taken,
    /// and no reply value places them, so they are listed apart, by the life they were in.
    pub busy: Vec<BusyReply>,
    problems: Vec<Contradiction>,
}

/// Where one life of the counter ended and the next began: Redis came back (a promoted
/// replica, a restart from disk) with a counter of its own. The slot at [`Break::slot`] of
/// the one lane is a [`SlotKind::Break`] from the dead life's last value to the new start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Break {
    /// The life that begins here: 1 for the first failure.
    pub epoch: u32,
    /// The [`SlotKind::Break`] slot's index in the lane.
    pub slot: u32,
    /// The lowest counter the dead life's sales acknowledged; `None` if it sold nothing.
    pub confirmed_down_to: Option<i64>,
    /// What the counter came back at; `None` when the key did not come back (it is then
    /// replayed from 0, as `reserve.lua` reads a missing key).
    pub came_back_at: Option<i64>,
    /// The dead life's acknowledged sales the new life does not have (see
    /// [`BuyerOutcome::lost_to`](crate::BuyerOutcome::lost_to)): their cells are [`Cell::lost`].
    pub lost_orders: u32,
    /// Units across those sales.
    pub lost_units: u64,
    /// Buyers of the dead life answered `BUSY` before it ended.
    pub busy: u32,
    /// The new life began because Redis evicted the counter (see
    /// [`Epoch::evicted`](crate::Epoch::evicted)): no sale is lost, the key is gone.
    pub evicted: bool,
}

/// A buyer Redis answered `BUSY`: nothing taken, no value to place it by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BusyReply {
    /// 1-based buyer number.
    pub buyer: u32,
    /// Units it ordered.
    pub qty: u32,
    /// The life it was answered in, in a run with several; `None` in a run with one.
    pub epoch: Option<u32>,
}

/// One counter's slots, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    /// The bucket this lane is, for [`TapeRule::AtomicPerBucket`]; `None` for the one counter.
    pub bucket: Option<u32>,
    /// The counter before the first command.
    pub initial: i64,
    /// What Redis did to this counter, in order.
    pub slots: Vec<Slot>,
}

/// A step of Redis's order: one write, or reads that ran between the same two writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    /// What kind of step.
    pub kind: SlotKind,
    /// The counter when the slot began, where known.
    pub before: Option<i64>,
    /// The counter when it ended, where known.
    pub after: Option<i64>,
    /// The commands in this slot. Their order within the slot is unknown and does not change
    /// the counter (reads, refusals; or SETs of one same value).
    pub cells: Vec<Cell>,
}

/// What a [`Slot`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotKind {
    /// Commands that leave the counter as it is (GETs, refused calls), and for
    /// [`TapeRule::DecrementThenUndo`] overshoots with their undos (down, then back up).
    Reads,
    /// One write (or, for [`TapeRule::ReadThenSet`], every SET of one value).
    Write,
    /// The counter dropped with no answered write to show for it: writes whose replies never
    /// came back (in doubt) must have landed here. `before - after` units.
    Gap,
    /// Redis came back with a counter of its own ([`Break`]): `before` is where the dead
    /// life left it, `after` where the new one starts. No cells.
    Break,
}

/// One command one buyer sent, with what Redis answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// 1-based buyer number.
    pub buyer: u32,
    /// Units the buyer ordered.
    pub qty: u32,
    /// What it sent.
    pub command: Command,
    /// The counter just before this command ran, where known (for a GET: its reply).
    pub before: Option<i64>,
    /// The counter just after, where known (for a DECRBY: its reply; for a SET: its value).
    pub after: Option<i64>,
    /// How the buyer's order ended.
    pub result: OutcomeResult,
    /// How exactly this cell is placed.
    pub placement: Placement,
    /// The same buyer's other cell: its write, for a read; its read, for a write.
    pub partner: Option<CellAt>,
    /// For a read and its write: how many other writes landed between them. `Some(0)` is a
    /// fresh read; `None` where the order cannot tell (or the buyer wrote nothing).
    pub writes_between: Option<u32>,
    /// Units this write took that did not exist (the counter held fewer than `qty`; in a
    /// later life of the counter, every unit was already sold: the unit is sold a second time).
    pub phantom_units: u32,
    /// An acknowledged sale the counter's next life does not have: Redis confirmed it, then
    /// came back without it (see [`Break`]).
    pub lost: bool,
}

/// What a [`Cell`] sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// Read the stock: `GET`, under WATCH or a lock, or PostgreSQL's `SELECT … FOR UPDATE`.
    Read,
    /// Take the units and answer the counter after: `DECRBY`, `EXEC` or `UPDATE`.
    Decrement,
    /// Write an absolute value: `SET`.
    Set,
    /// One atomic check-and-take call (script or function); a refusal changes nothing.
    Reserve,
    /// `decr_compensate`'s undo: `INCRBY`, whose reply is not reported.
    Undo,
}

/// How exactly a [`Cell`] is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// In its slot, and its slot is in Redis's true order.
    Exact,
    /// At its slot or earlier: the latest point the values allow (`decr_compensate`'s
    /// overshoots and undos).
    NoLaterThan,
    /// Grouped by value (`naive_set`): the true order against other groups may differ.
    ByValue,
    /// Only known to come after its partner: drawn beside it (`decr_compensate`'s undo,
    /// whose reply is not reported).
    AfterPartner,
    /// In an order that explains every reply, but maybe not the only one: `decr_compensate`'s
    /// sales once an overshoot may have been pending (the counter then sat below the unsold
    /// stock, and a later sale can answer a higher number than an earlier one).
    Witness,
}

/// Where a cell is: lane, slot, and index within the slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CellAt {
    /// Index into [`Tape::lanes`].
    pub lane: u32,
    /// Index into [`Lane::slots`].
    pub slot: u32,
    /// Index into [`Slot::cells`].
    pub cell: u32,
}

impl Cell {
    /// True when this cell changed the counter for good: a write the buyer was told it won.
    pub fn is_sale(&self) -> bool {
        self.result == OutcomeResult::Reserved
            && matches!(
                self.command,
                Command::Decrement | Command::Set | Command::Reserve
            )
    }

    /// True when this read (or write) went stale: another write landed between the buyer's
    /// read and its own write.
    pub fn is_stale(&self) -> bool {
        self.writes_between.is_some_and(|n| n > 0)
    }
}

impl Tape {
    /// Contradictions found while building: replies no order explains, duplicated buyers.
    /// [`Tape::verify`] returns the first of these before it replays anything.
    pub fn problems(&self) -> &[Contradiction] {
        &self.problems
    }

    /// The cell at `at`, if there is one.
    pub fn cell(&self, at: CellAt) -> Option<&Cell> {
        self.lanes
            .get(at.lane as usize)?
            .slots
            .get(at.slot as usize)?
            .cells
            .get(at.cell as usize)
    }

    /// Every placed cell with its address, lane by lane, slot by slot.
    pub fn cells(&self) -> impl Iterator<Item = (CellAt, &Cell)> {
        self.lanes.iter().enumerate().flat_map(|(l, lane)| {
            lane.slots.iter().enumerate().flat_map(move |(s, slot)| {
                slot.cells.iter().enumerate().map(move |(c, cell)| {
                    let at = CellAt {
                        lane: l as u32,
                        slot: s as u32,
                        cell: c as u32,
                    };
                    (at, cell)
                })
            })
        })
    }

    /// The counter(s) after the last command, summed over lanes, where the replies fix it:
    /// `None` when the rule [overwrites](TapeRule::overwrites) (which write landed last is
    /// unknown) and whenever a
    /// write is in doubt. Comparable with the summary's `final_stock`.
    pub fn final_counter(&self) -> Option<i64> {
        if self.in_doubt_units > 0 || self.rule.overwrites() {
            return None;
        }
        let mut total = 0;
        for lane in &self.lanes {
            total += match self.rule {
                // Undos put every overshoot back: the counter ends at the unsold stock.
                TapeRule::DecrementThenUndo => {
                    let sold: i64 = lane
                        .slots
                        .iter()
                        .flat_map(|s| &s.cells)
                        .filter(|c| c.is_sale())
                        .map(|c| i64::from(c.qty))
                        .sum();
                    lane.initial - sold
                }
                _ => lane
                    .slots
                    .iter()
                    .rev()
                    .find_map(|s| s.after)
                    .unwrap_or(lane.initial),
            };
        }
        Some(total)
    }
}

#[cfg(test)]
mod tests;
