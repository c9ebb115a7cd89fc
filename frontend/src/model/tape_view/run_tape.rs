//! [`RunTape`]: the Redis tape of the run on screen, built with `Tape::build` from the outcomes
//! received so far, with what both canvases read from it: the caption's numbers, the zoom, the
//! write that ran the stock out, and each buyer's app server, answer time and phantom units.
//!
//! The tape panel and the race timeline read the same `RunTape` (one build per batch, shared
//! through [`super::cache::TapeCache`]), so the numbers they print cannot disagree.

use oversold_protocol::tape::{Caption, CellAt, Command, SlotKind, Tape, Zoom};
use oversold_protocol::{BuyerOutcome, TapeRule};

/// What the page knows about one buyer beside its cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BuyerFacts {
    /// 0-based app server (Redis connection) it went through.
    pub app_server: u32,
    /// When its answer came back, µs after the gate: where it sits on the clock axis.
    pub end_us: u64,
    /// Units its write took that did not exist, where the tape knows the counter before it.
    pub phantom_units: u32,
}

/// A run's tape and what the page reads from it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunTape {
    /// The tape itself.
    pub tape: Tape,
    /// Its numbers and sentence ([`Tape::caption`]): units sold, oversold, sales, refusals...
    pub caption: Caption,
    /// What is worth drawing ([`Tape::zoom`]).
    pub zoom: Zoom,
    /// The counter after the last command, where the replies fix it ([`Tape::final_counter`]).
    pub final_counter: Option<i64>,
    /// The smallest order placed: once a write leaves fewer units than this, no order fits.
    pub min_qty: u32,
    /// The write that ran the stock out (see [`ran_out`]); `None` while some counter still
    /// covers the smallest order.
    pub ran_out: Option<CellAt>,
    /// Outcomes the tape was built from.
    pub outcomes: usize,
    /// Whether the tape can say which sale took units that did not exist: every rule whose
    /// writes report the counter before them (not `ReadThenSet` nor `SelectThenUpdate`, whose writes overwrite).
    pub knows_phantoms: bool,
    /// Indexed by buyer number (0 unused).
    facts: Vec<BuyerFacts>,
}

impl RunTape {
    /// Build the tape of `outcomes` (a run that started with `stock` units, under `rule`).
    pub fn build<'a>(
        stock: u32,
        rule: TapeRule,
        outcomes: impl IntoIterator<Item = &'a BuyerOutcome>,
    ) -> Self {
        let outcomes: Vec<BuyerOutcome> = outcomes.into_iter().cloned().collect();
        let tape = Tape::build(stock, rule, &outcomes);
        let top = outcomes.iter().map(|o| o.buyer).max().unwrap_or(0) as usize;
        let mut facts = vec![BuyerFacts::default(); top + 1];
        for o in &outcomes {
            let f = &mut facts[o.buyer as usize];
            f.app_server = o.app_server;
            f.end_us = o.end_us;
        }
        for (_, cell) in tape.cells() {
            if cell.is_sale() {
                facts[cell.buyer as usize].phantom_units = cell.phantom_units;
            }
        }
        let min_qty = outcomes.iter().map(|o| o.qty).min().unwrap_or(1).max(1);
        let ran_out = ran_out(&tape, min_qty, &facts);
        Self {
            caption: tape.caption(),
            zoom: tape.zoom(),
            final_counter: tape.final_counter(),
            min_qty,
            ran_out,
            outcomes: outcomes.len(),
            knows_phantoms: !rule.overwrites(),
            facts,
            tape,
        }
    }

    /// What the page knows about `buyer` (defaults for a buyer not on the tape).
    pub fn buyer(&self, buyer: u32) -> BuyerFacts {
        self.facts.get(buyer as usize).copied().unwrap_or_default()
    }

    /// When the stock ran out on the clock axis: the answer time of the write that ran it out
    /// (for a write slot of several SETs, the earliest answer among them: the counter got
    /// there no later than that).
    pub fn ran_out_us(&self) -> Option<u64> {
        let at = self.ran_out?;
        self.tape.lanes[at.lane as usize].slots[at.slot as usize]
            .cells
            .iter()
            .map(|c| self.buyer(c.buyer).end_us)
            .min()
    }

    /// One past the highest buyer number on the tape: the length of a table by buyer.
    pub fn buyers_len(&self) -> usize {
        self.facts.len()
    }

    /// True when the tape has a read of the stock in the app (check-then-write rules).
    pub fn has_reads(&self) -> bool {
        self.tape.cells().any(|(_, c)| c.command == Command::Read)
    }

    /// True when every order was for one unit.
    pub fn unit_orders(&self) -> bool {
        self.tape.cells().all(|(_, c)| c.qty == 1)
    }
}

/// The write that ran the stock out: on each counter, the first write that left it below the
/// smallest order (`min_qty`) in the counter's last life (a counter Redis brought back higher
/// had units again); across several counters (`sharded`'s buckets), the one whose answer
/// came last, since the stock is out only once every bucket is. `None` while a counter still
/// covers the smallest order.
fn ran_out(tape: &Tape, min_qty: u32, facts: &[BuyerFacts]) -> Option<CellAt> {
    let floor = i64::from(min_qty);
    let last_life = tape.breaks.last().map_or(0, |b| b.slot as usize + 1);
    let mut last: Option<(u64, CellAt)> = None;
    for (l, lane) in tape.lanes.iter().enumerate() {
        let found = lane
            .slots
            .iter()
            .enumerate()
            .skip(last_life)
            .find(|(_, s)| {
                s.kind == SlotKind::Write
                    && !s.cells.is_empty()
                    && s.after.is_some_and(|a| a < floor)
            });
        let (s, slot) = found?;
        let end = slot
            .cells
            .iter()
            .map(|c| facts.get(c.buyer as usize).map_or(0, |f| f.end_us))
            .min()
            .unwrap_or(0);
        let at = CellAt {
            lane: l as u32,
            slot: s as u32,
            cell: 0,
        };
        if last.is_none_or(|(e, _)| end >= e) {
            last = Some((end, at));
        }
    }
    // A tape with no counter at all (nothing answered yet) ran nothing out.
    last.map(|(_, at)| at)
}
