//! Outcomes in, [`Tape`] out: sort the writes by their replies, then hang every read between
//! the two writes around the value it saw.
//!
//! The builder is permissive on purpose: it places what the replies allow and records what
//! they do not (in [`Tape::unplaced`] and the problems list), so that [`Tape::verify`] is a
//! separate, strict replay rather than a restatement of the builder's own choices.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::{
    Break, BusyReply, Cell, CellAt, Command, Contradiction, Guard, Lane, Placement, Slot, SlotKind,
    Tape, TapeRule, deal,
};
use crate::{BuyerOutcome, OutcomeResult};

/// One life of the counter before it is laid out: where it began, its outcomes, and the
/// units its unanswered writes may have taken.
struct Life<'a> {
    began_at: Option<i64>,
    /// The counter was evicted, not rolled back (see [`crate::Epoch::evicted`]).
    evicted: bool,
    outcomes: Vec<&'a BuyerOutcome>,
    in_doubt: u64,
}

impl Life<'_> {
    fn new(began_at: Option<i64>) -> Self {
        Life {
            began_at,
            evicted: false,
            outcomes: Vec::new(),
            in_doubt: 0,
        }
    }
}

/// How a new life of the counter began: the value it came back at, and whether it came
/// back by an eviction rather than a restart or a promotion.
#[derive(Clone, Copy)]
struct Comeback {
    at: Option<i64>,
    evicted: bool,
}

/// One lane's cells before they are laid out: reads (they change nothing) and writes.
#[derive(Default)]
struct Pile {
    reads: Vec<Cell>,
    writes: Vec<Cell>,
}

impl Tape {
    /// Rebuild the order of a run's commands from its outcomes. `stock` is the run's stock
    /// and `rule` its strategy's [`TapeRule`]. Never fails: check the result with
    /// [`Tape::verify`].
    pub fn build(stock: u32, rule: TapeRule, outcomes: &[BuyerOutcome]) -> Tape {
        let mut tape = Tape {
            rule,
            stock,
            lanes: Vec::new(),
            unplaced: Vec::new(),
            in_doubt_units: 0,
            not_drawn: 0,
            breaks: Vec::new(),
            busy: Vec::new(),
            problems: Vec::new(),
        };
        if rule == TapeRule::Story {
            return tape; // a checkout has no tape: its stories are drawn instead
        }
        let outcomes = tape.first_outcome_per_buyer(outcomes);
        tape.in_doubt_units = outcomes
            .iter()
            .filter(|o| o.result == OutcomeResult::Unknown)
            .map(|o| u64::from(o.qty))
            .sum();
        if rule.not_drawn().is_some() {
            // Each retry is one attempt nobody reported; a buyer that gave up lost its last too.
            let gave_up = |o: &BuyerOutcome| u32::from(o.result == OutcomeResult::GaveUp);
            tape.not_drawn = outcomes.iter().map(|o| o.retries + gave_up(o)).sum();
        }
        let lives = outcomes.iter().any(|o| o.epoch.is_some_and(|e| e.n > 0));
        tape.busy = outcomes
            .iter()
            .filter(|o| o.answered_busy())
            .map(|o| BusyReply {
                buyer: o.buyer,
                qty: o.qty,
                epoch: o.epoch.filter(|_| lives).map(|e| e.n),
            })
            .collect();
        if lives {
            match rule {
                // Lives are of one counter: a bucket's own life is in no reply.
                TapeRule::AtomicPerBucket { .. } => {
                    tape.problems.push(Contradiction::LifeUnclear {
                        buyer: outcomes
                            .iter()
                            .find(|o| o.epoch.is_some())
                            .map_or(0, |o| o.buyer),
                        why: "a tape of several counters cannot follow one counter's lives",
                    })
                }
                _ => {
                    tape.lives(&outcomes);
                    tape.link_partners();
                    tape.sold_again();
                    return tape;
                }
            }
        }
        let initials = match rule {
            TapeRule::AtomicPerBucket { buckets } => deal(stock, buckets),
            _ => vec![i64::from(stock)],
        };
        let mut piles: Vec<Pile> = initials.iter().map(|_| Pile::default()).collect();
        for o in &outcomes {
            tape.sort_outcome(o, &mut piles);
        }
        for (i, (pile, initial)) in piles.into_iter().zip(initials).enumerate() {
            let slots = tape.lay_out(initial, pile, tape.in_doubt_units);
            let bucket = matches!(rule, TapeRule::AtomicPerBucket { .. }).then_some(i as u32);
            tape.lanes.push(Lane {
                bucket,
                initial,
                slots,
            });
        }
        tape.link_partners();
        tape
    }

    /// One lane's slots under this tape's rule, from `initial`; `in_doubt` is how many units
    /// unanswered writes may have taken here (a drop no answered write explains needs them).
    fn lay_out(&mut self, initial: i64, pile: Pile, in_doubt: u64) -> Vec<Slot> {
        match self.rule {
            TapeRule::ReadThenSet | TapeRule::SelectThenUpdate => self.by_value(initial, pile),
            TapeRule::DecrementThenUndo => self.sales_and_overshoots(initial, pile),
            _ => self.exact(initial, pile, in_doubt),
        }
    }

    /// A counter with several lives: each life laid out on its own from the value it began
    /// at, one after the other in the one lane, a [`SlotKind::Break`] between two. Within a
    /// life the replies order the commands as in any run; across lives, every command of
    /// one ran before every command of the next (Redis was gone in between).
    fn lives(&mut self, outcomes: &[&BuyerOutcome]) {
        let stock = i64::from(self.stock);
        let mut lives: BTreeMap<u32, Life> = BTreeMap::new();
        lives.insert(0, Life::new(Some(stock)));
        // Unanswered writes whose life is not known: they may have landed in any life.
        let mut anywhere = 0;
        for &o in outcomes {
            let Some(epoch) = o.epoch else {
                if o.observed_stock.is_some() || o.stock_after.is_some() {
                    self.problems.push(Contradiction::LifeUnclear {
                        buyer: o.buyer,
                        why: "its reply does not say which life of the counter gave it",
                    });
                } else if o.result == OutcomeResult::Unknown {
                    anywhere += u64::from(o.qty);
                    self.in_doubt(o, Command::Reserve);
                }
                continue;
            };
            let life = lives.entry(epoch.n).or_insert_with(|| Life {
                evicted: epoch.evicted,
                ..Life::new(epoch.began_at)
            });
            if life.began_at != epoch.began_at {
                self.problems.push(Contradiction::LifeUnclear {
                    buyer: o.buyer,
                    why: "it says its life of the counter began at another value than the others do",
                });
            }
            if o.result == OutcomeResult::Unknown {
                life.in_doubt += u64::from(o.qty);
            }
            life.outcomes.push(o);
        }
        let mut slots: Vec<Slot> = Vec::new();
        let mut dead: Option<(u32, Vec<&BuyerOutcome>, usize)> = None;
        for (n, life) in lives {
            // A key that did not come back reads as 0 (`reserve.lua` reads it so).
            let initial = life.began_at.unwrap_or(0);
            let mut pile = Pile::default();
            for &o in &life.outcomes {
                self.sort_outcome(o, std::slice::from_mut(&mut pile));
            }
            let own = self.lay_out(initial, pile, life.in_doubt + anywhere);
            if let Some((was, before, from)) = dead.take() {
                let came_back = Comeback {
                    at: life.began_at,
                    evicted: life.evicted,
                };
                self.mark_break(&mut slots, from, (n, was), &before, came_back);
            }
            dead = Some((n, life.outcomes, slots.len()));
            slots.extend(own);
        }
        self.lanes.push(Lane {
            bucket: None,
            initial: stock,
            slots,
        });
    }

    /// The end of life `was` (its outcomes `before`, its slots from `from` on) and the start
    /// of life `n` at `came_back_at`: mark the dead life's lost sales, count them, and add the
    /// [`SlotKind::Break`] slot.
    fn mark_break(
        &mut self,
        slots: &mut Vec<Slot>,
        from: usize,
        (n, was): (u32, u32),
        before: &[&BuyerOutcome],
        came_back: Comeback,
    ) {
        let came_back_at = came_back.at;
        // An evicted counter took no decrement back: every sale still happened, against a
        // counter that is now simply gone. Lost sales are a rollback's (a failover, a crash).
        let lost: HashSet<u32> = before
            .iter()
            .filter(|o| !came_back.evicted && o.lost_to(came_back_at))
            .map(|o| o.buyer)
            .collect();
        let mut confirmed_down_to: Option<i64> = None;
        for cell in slots[from..].iter_mut().flat_map(|s| &mut s.cells) {
            if cell.is_sale() {
                if let Some(a) = cell.after {
                    confirmed_down_to = Some(confirmed_down_to.map_or(a, |c| c.min(a)));
                }
                cell.lost = lost.contains(&cell.buyer);
            }
        }
        // Where the dead life left the counter: its last value, or where it began if it ran
        // nothing (the break before it, or the stock).
        let left_at = slots
            .iter()
            .rev()
            .find_map(|s| s.after)
            .unwrap_or(i64::from(self.stock));
        self.breaks.push(Break {
            epoch: n,
            slot: slots.len() as u32,
            confirmed_down_to,
            came_back_at,
            lost_orders: lost.len() as u32,
            lost_units: before
                .iter()
                .filter(|o| lost.contains(&o.buyer))
                .map(|o| u64::from(o.qty))
                .sum(),
            busy: self.busy.iter().filter(|b| b.epoch == Some(was)).count() as u32,
            evicted: came_back.evicted,
        });
        slots.push(Slot {
            kind: SlotKind::Break,
            before: Some(left_at),
            after: Some(came_back_at.unwrap_or(0)),
            cells: Vec::new(),
        });
    }

    /// In a later life, a sale of units the shelf no longer has: every unit of the stock was
    /// already sold (in this life or one before), so this one is sold a second time. Counted
    /// over the whole lane in order, so the total is the units sold beyond the stock.
    fn sold_again(&mut self) {
        let stock = u64::from(self.stock);
        let first_break = self.breaks.first().map(|b| b.slot as usize);
        let Some(lane) = self.lanes.first_mut() else {
            return;
        };
        let mut sold = 0u64;
        for (s, slot) in lane.slots.iter_mut().enumerate() {
            let later = first_break.is_some_and(|b| s > b);
            for cell in slot.cells.iter_mut().filter(|c| c.is_sale()) {
                let qty = u64::from(cell.qty);
                if later {
                    let beyond = (sold + qty).saturating_sub(stock).min(qty) as u32;
                    cell.phantom_units = cell.phantom_units.max(beyond);
                }
                sold += qty;
            }
        }
    }

    /// One outcome per buyer: a buyer reported twice is a contradiction, not two buyers.
    fn first_outcome_per_buyer<'a>(
        &mut self,
        outcomes: &'a [BuyerOutcome],
    ) -> Vec<&'a BuyerOutcome> {
        let mut seen = HashSet::with_capacity(outcomes.len());
        let mut kept = Vec::with_capacity(outcomes.len());
        for o in outcomes {
            if seen.insert(o.buyer) {
                kept.push(o);
            } else {
                self.problems
                    .push(Contradiction::DuplicateBuyer { buyer: o.buyer });
            }
        }
        kept
    }

    /// Turn one outcome into its cells, on the pile of the lane it touched.
    fn sort_outcome(&mut self, o: &BuyerOutcome, piles: &mut [Pile]) {
        let lane = match self.rule {
            TapeRule::AtomicPerBucket { .. } if o.observed_stock.is_some() => {
                match o.bucket.filter(|&b| (b as usize) < piles.len()) {
                    Some(b) => b as usize,
                    None => {
                        self.missing(o, "the bucket that answered");
                        return;
                    }
                }
            }
            _ => 0,
        };
        let pile = &mut piles[lane];
        match self.rule {
            TapeRule::ReadThenDecrement { .. } => self.read_then_write(o, pile, Command::Decrement),
            TapeRule::ReadThenSet | TapeRule::SelectThenUpdate => {
                self.read_then_write(o, pile, Command::Set)
            }
            TapeRule::AtomicCall { .. } | TapeRule::AtomicPerBucket { .. } => {
                self.atomic_call(o, pile)
            }
            TapeRule::DecrementThenUndo => self.decrement_then_undo(o, pile),
            // `build` returns before sorting anything under this rule.
            TapeRule::Story => {}
        }
    }

    /// A read (if the buyer got one back) and, if it was sold its units, the write.
    fn read_then_write(&mut self, o: &BuyerOutcome, pile: &mut Pile, write: Command) {
        // Under SET only a read of the starting stock is exactly placed: before every SET.
        let by_value = write == Command::Set && o.observed_stock != Some(i64::from(self.stock));
        if let Some(v) = o.observed_stock {
            let placement = if by_value {
                Placement::ByValue
            } else {
                Placement::Exact
            };
            pile.reads
                .push(cell(o, Command::Read, Some(v), Some(v), placement));
        }
        match (o.result, o.observed_stock, o.stock_after) {
            (OutcomeResult::Reserved, Some(_), Some(after)) => {
                let (before, placement) = match write {
                    // The counter only moves down, so the reply fixes the value before it.
                    Command::Decrement => (Some(after + i64::from(o.qty)), Placement::Exact),
                    // SET overwrites: what the counter held before it is not in any reply.
                    _ => (None, Placement::ByValue),
                };
                let mut w = cell(o, write, before, Some(after), placement);
                w.phantom_units = phantom(before, o.qty);
                pile.writes.push(w);
            }
            (OutcomeResult::Reserved, _, _) => self.missing(o, "the read and the write's reply"),
            // Sent, never answered: it may have landed anywhere after the read.
            (OutcomeResult::Unknown, Some(_), _) => self.in_doubt(o, write),
            _ => {}
        }
    }

    /// One script call: a sale with its before and after, or a refusal that saw `before`.
    fn atomic_call(&mut self, o: &BuyerOutcome, pile: &mut Pile) {
        match (o.result, o.observed_stock, o.stock_after) {
            (OutcomeResult::Reserved, Some(before), Some(after)) => {
                let mut w = cell(
                    o,
                    Command::Reserve,
                    Some(before),
                    Some(after),
                    Placement::Exact,
                );
                w.phantom_units = phantom(Some(before), o.qty);
                pile.writes.push(w);
            }
            (OutcomeResult::Reserved, _, _) => self.missing(o, "the call's before and after"),
            (result, seen, _) => {
                // A refusal changes nothing: it sits between writes like a read. (A sharded
                // buyer that failed on its second bucket reports its first bucket's refusal.)
                if let Some(v) = seen {
                    pile.reads.push(cell(
                        o,
                        Command::Reserve,
                        Some(v),
                        Some(v),
                        Placement::Exact,
                    ));
                }
                if result == OutcomeResult::Unknown {
                    self.in_doubt(o, Command::Reserve);
                }
            }
        }
    }

    /// A DECRBY whose reply decided: a sale at 0 or above, else an overshoot and its undo.
    fn decrement_then_undo(&mut self, o: &BuyerOutcome, pile: &mut Pile) {
        let qty = i64::from(o.qty);
        match (o.result, o.observed_stock, o.stock_after) {
            (OutcomeResult::Reserved, Some(before), Some(after)) => {
                // `before` is reported separately (as after + qty): verify holds the two together.
                let w = cell(
                    o,
                    Command::Decrement,
                    Some(before),
                    Some(after),
                    Placement::Exact,
                );
                pile.writes.push(w);
            }
            (OutcomeResult::Reserved, _, _) => self.missing(o, "the DECRBY's reply"),
            (OutcomeResult::SoldOut | OutcomeResult::Unknown, Some(before), _) => {
                // Its undo is added where the overshoot is placed.
                let over = Placement::NoLaterThan;
                let down = cell(
                    o,
                    Command::Decrement,
                    Some(before),
                    Some(before - qty),
                    over,
                );
                pile.reads.push(down);
            }
            (OutcomeResult::Unknown, None, _) => self.in_doubt(o, Command::Decrement),
            _ => {}
        }
    }

    fn missing(&mut self, o: &BuyerOutcome, what: &'static str) {
        self.problems.push(Contradiction::MissingReply {
            buyer: o.buyer,
            what,
        });
    }

    fn in_doubt(&mut self, o: &BuyerOutcome, command: Command) {
        let c = cell(o, command, None, None, Placement::NoLaterThan);
        self.unplaced.push(c);
    }

    /// Exact rules: sort the writes by their replies (high to low is Redis's order), then put
    /// each read right after the write that left the value it read.
    fn exact(&mut self, initial: i64, pile: Pile, in_doubt: u64) -> Vec<Slot> {
        let Pile { reads, mut writes } = pile;
        writes.sort_by_key(|w| (std::cmp::Reverse(w.after), w.buyer));
        let mut slots = Vec::with_capacity(2 * writes.len() + 1);
        // Where the reads of each value go: the slot index after which the counter held it.
        let mut reads_at: HashMap<i64, usize> = HashMap::with_capacity(writes.len() + 1);
        let mut gaps: Vec<usize> = Vec::new();
        slots.push(reads_slot(initial));
        reads_at.insert(initial, 0);
        let mut counter = initial;
        for w in writes {
            let before = w.before.unwrap_or(counter);
            // A drop no answered write explains: if some write is in doubt, it landed here.
            if before < counter && in_doubt > 0 {
                gaps.push(slots.len());
                slots.push(Slot {
                    kind: SlotKind::Gap,
                    before: Some(counter),
                    after: Some(before),
                    cells: Vec::new(),
                });
                // Reads of where the gap ended go after it, before the next write.
                reads_at.insert(before, slots.len());
                slots.push(reads_slot(before));
            }
            let after = w.after.unwrap_or(before);
            slots.push(Slot {
                kind: SlotKind::Write,
                before: Some(before),
                after: Some(after),
                cells: vec![w],
            });
            reads_at.insert(after, slots.len());
            slots.push(reads_slot(after));
            counter = after;
        }
        // Reads below where the last answered write left the counter: unanswered writes
        // landed after it (a WAIT that ran out leaves a sale with no reply), down to at least
        // the lowest value read.
        let lowest = reads.iter().filter_map(|r| r.before).min();
        if let Some(low) = lowest.filter(|&v| v < counter && in_doubt > 0) {
            gaps.push(slots.len());
            slots.push(Slot {
                kind: SlotKind::Gap,
                before: Some(counter),
                after: Some(low),
                cells: Vec::new(),
            });
            reads_at.insert(low, slots.len());
            slots.push(reads_slot(low));
        }
        for r in reads {
            let v = r.before.expect("reads carry their value");
            let at = reads_at.get(&v).copied().or_else(|| {
                // Within a gap: a value an unanswered write left behind.
                gaps.iter().copied().find(|&g| {
                    let s = &slots[g];
                    s.after < Some(v) && Some(v) < s.before
                })
            });
            match at {
                Some(i) => slots[i].cells.push(r),
                None => self.cannot_place(r),
            }
        }
        tidy(slots)
    }

    /// `naive_set`: group SETs by the value they wrote, high to low, each group followed by
    /// the reads of that value. A read of `v` follows *some* SET of `v`; which one is unknown.
    fn by_value(&mut self, initial: i64, pile: Pile) -> Vec<Slot> {
        // value -> (SETs of it, reads of it)
        let mut levels: BTreeMap<i64, (Vec<Cell>, Vec<Cell>)> = BTreeMap::new();
        levels.entry(initial).or_default();
        for w in pile.writes {
            let v = w.after.expect("a SET carries its value");
            levels.entry(v).or_default().0.push(w);
        }
        let mut orphans = Vec::new();
        for r in pile.reads {
            let v = r.before.expect("reads carry their value");
            match levels.get_mut(&v) {
                Some(level) => level.1.push(r),
                None => orphans.push(r),
            }
        }
        for r in orphans {
            self.cannot_place(r);
        }
        let mut slots = Vec::with_capacity(2 * levels.len());
        for (v, (sets, reads)) in levels.into_iter().rev() {
            if !sets.is_empty() {
                slots.push(Slot {
                    kind: SlotKind::Write,
                    before: None,
                    after: Some(v),
                    cells: sets,
                });
            }
            if !reads.is_empty() {
                slots.push(Slot {
                    cells: reads,
                    ..reads_slot(v)
                });
            }
        }
        tidy(slots)
    }

    /// `decr_compensate`: sales in the order of their replies; each overshoot at the latest
    /// point the values allow (while the stock not yet sold still covered what it saw).
    fn sales_and_overshoots(&mut self, initial: i64, pile: Pile) -> Vec<Slot> {
        let Pile {
            reads: overshoots,
            mut writes,
        } = pile;
        // Highest reply first. While each sale starts where the last one left off, this is
        // Redis's order (the highest reply can only have come first, and so on). After a gap
        // (an overshoot was pending, so the counter sat below the unsold stock) a later sale
        // can answer more than an earlier one; highest-first is then still an order that
        // explains every reply (earliest deadline first), just not provably the true one.
        writes.sort_by_key(|w| (std::cmp::Reverse(w.after), w.buyer));
        // The stock not yet sold: at the start, then after each sale.
        let mut unsold = vec![initial];
        let mut exact = true;
        for w in &mut writes {
            let now = *unsold.last().expect("starts with the initial stock");
            exact &= w.before == Some(now);
            if !exact {
                w.placement = Placement::Witness;
            }
            unsold.push(now - i64::from(w.qty));
        }
        let mut slots = vec![Slot {
            before: None,
            after: None,
            ..reads_slot(initial)
        }];
        for w in writes {
            slots.push(Slot {
                kind: SlotKind::Write,
                before: w.before,
                after: w.after,
                cells: vec![w],
            });
            // The counter here is the unsold stock minus overshoots not yet undone: unknown.
            slots.push(Slot {
                before: None,
                after: None,
                ..reads_slot(0)
            });
        }
        for c in overshoots {
            // The counter was `before` when the overshoot ran, and the counter is never above
            // the unsold stock: so it ran while the unsold stock was still `before` or more.
            let seen = c.before.expect("an overshoot carries what it saw");
            let fits = unsold.partition_point(|&u| u >= seen);
            if fits == 0 {
                self.cannot_place(c);
                continue;
            }
            // The undo's reply is not reported: only that it was sent (or, for an `unknown`
            // outcome, that it may never have landed). It ran after its DECRBY, no sooner.
            let undo = Cell {
                command: Command::Undo,
                before: None,
                after: None,
                placement: Placement::AfterPartner,
                ..c.clone()
            };
            // Interval k (after k sales) is slot 2k.
            slots[2 * (fits - 1)].cells.extend([c, undo]);
        }
        tidy(slots)
    }

    fn cannot_place(&mut self, c: Cell) {
        self.problems.push(Contradiction::Unplaceable {
            buyer: c.buyer,
            command: c.command,
            value: c.before.or(c.after).unwrap_or_default(),
        });
        self.unplaced.push(c);
    }

    /// Link each buyer's read to its write, and count the writes that landed in between.
    fn link_partners(&mut self) {
        let mut by_buyer: HashMap<u32, (Option<CellAt>, Option<CellAt>)> = HashMap::new();
        for (at, c) in self.cells() {
            let entry = by_buyer.entry(c.buyer).or_default();
            match c.command {
                Command::Read | Command::Undo => entry.0 = Some(at),
                Command::Decrement | Command::Set => entry.1 = Some(at),
                Command::Reserve => {}
            }
        }
        let counted = matches!(self.rule, TapeRule::ReadThenDecrement { .. });
        // writes_before[lane][s]: answered writes in slots 0..s, so "how many landed between
        // a read and its write" is one subtraction, not a walk over the slots between.
        let writes_before: Vec<Vec<u32>> = self
            .lanes
            .iter()
            .map(|lane| {
                let mut n = 0;
                let mut prefix = vec![0];
                for s in &lane.slots {
                    n += u32::from(s.kind == SlotKind::Write);
                    prefix.push(n);
                }
                prefix
            })
            .collect();
        for (read, write) in by_buyer.into_values() {
            let (Some(read), Some(write)) = (read, write) else {
                continue;
            };
            let between =
                (counted && read.lane == write.lane && read.slot < write.slot).then(|| {
                    let prefix = &writes_before[read.lane as usize];
                    prefix[write.slot as usize] - prefix[read.slot as usize + 1]
                });
            for (at, partner) in [(read, write), (write, read)] {
                let c = &mut self.lanes[at.lane as usize].slots[at.slot as usize].cells
                    [at.cell as usize];
                c.partner = Some(partner);
                c.writes_between = between;
            }
        }
    }
}

/// A cell for outcome `o`, not yet linked.
fn cell(
    o: &BuyerOutcome,
    command: Command,
    before: Option<i64>,
    after: Option<i64>,
    placement: Placement,
) -> Cell {
    Cell {
        buyer: o.buyer,
        qty: o.qty,
        command,
        before,
        after,
        result: o.result,
        placement,
        partner: None,
        writes_between: None,
        phantom_units: 0,
        lost: false,
    }
}

/// Units of a `qty` order that a counter holding `before` did not have.
fn phantom(before: Option<i64>, qty: u32) -> u32 {
    match before {
        Some(b) => (i64::from(qty) - b.clamp(0, i64::from(qty))) as u32,
        None => 0,
    }
}

fn reads_slot(value: i64) -> Slot {
    Slot {
        kind: SlotKind::Reads,
        before: Some(value),
        after: Some(value),
        cells: Vec::new(),
    }
}

/// Drop empty read slots and order each slot's cells by buyer, so equal runs give equal tapes.
fn tidy(slots: Vec<Slot>) -> Vec<Slot> {
    slots
        .into_iter()
        .filter(|s| s.kind != SlotKind::Reads || !s.cells.is_empty())
        .map(|mut s| {
            // Stable: an overshoot stays ahead of its own undo.
            s.cells.sort_by_key(|c| c.buyer);
            s
        })
        .collect()
}

/// A lock's, a WATCH's or a row lock's promise: nothing lands between read and write.
pub(super) fn guarded(rule: TapeRule) -> bool {
    matches!(
        rule,
        TapeRule::ReadThenDecrement {
            guard: Guard::Lock | Guard::Watch | Guard::RowLock
        }
    )
}
