//! [`Tape::caption`]: the tape's story in numbers and one sentence, counted from its cells.
//!
//! Every number here is a count over the tape, never an estimate from a clock, so it agrees
//! with the run's summary: `units_sold`, `oversold_units` and `stock` are the summary's own
//! (tests hold them together for every rule).

use std::collections::HashMap;

use super::{Command, Guard, Placement, Tape, TapeRule};
use crate::OutcomeResult;

/// What a tape shows, as numbers and a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caption {
    /// Units in stock before the run.
    pub stock: u32,
    /// Units across the writes buyers were told they won (the summary's `units_sold`).
    pub units_sold: u64,
    /// `units_sold - stock`, or 0 (the summary's `oversold_units`).
    pub oversold_units: u64,
    /// Writes buyers were told they won.
    pub sales: u32,
    /// Buyers on the tape that were refused for lack of stock.
    pub refused: u32,
    /// Reads that showed enough stock for the buyer's order (check-then-write rules).
    pub passed_check: u32,
    /// Sales whose read had gone stale: another write landed between read and write.
    pub stale_sales: u32,
    /// Sales whose write took units the counter no longer held.
    pub phantom_sales: u32,
    /// Units across those writes that did not exist.
    pub phantom_units: u64,
    /// `naive_set`: sales computed from a value another sale was also computed from.
    pub shared_read_sales: u32,
    /// `naive_set`: of those, how many can never show on the counter (at most one sale per
    /// value read can be on the chain of SETs the final counter comes from).
    pub lost_sales_at_least: u32,
    /// `decr_compensate`: DECRBYs that went below zero and were undone.
    pub overshoots: u32,
    /// Commands the outcomes count but do not describe (see [`TapeRule::not_drawn`]).
    pub not_drawn: u32,
    /// Times Redis came back with a counter of its own (a promoted replica, a restart): the
    /// tape's [`Break`](super::Break)s.
    pub breaks: u32,
    /// Acknowledged sales a counter that came back does not have (a failover's or a crash's
    /// `acknowledged_lost` orders).
    pub lost_orders: u32,
    /// Units across those sales.
    pub lost_units: u64,
    /// Units sold in a later life of the counter when every unit of the stock was already
    /// sold: sold a second time (a failover's `sold_twice`).
    pub sold_twice: u64,
    /// Buyers Redis answered `BUSY` (a `busy_script` run's `busy_replies`).
    pub busy: u32,
    /// The sentence a page or the CLI prints under the tape.
    pub sentence: String,
}

impl Tape {
    /// Count the tape and say what it shows.
    pub fn caption(&self) -> Caption {
        let mut c = self.count();
        c.sentence = self.sentence(&c);
        c
    }

    fn count(&self) -> Caption {
        let mut c = Caption {
            stock: self.stock,
            units_sold: 0,
            oversold_units: 0,
            sales: 0,
            refused: 0,
            passed_check: 0,
            stale_sales: 0,
            phantom_sales: 0,
            phantom_units: 0,
            shared_read_sales: 0,
            lost_sales_at_least: 0,
            overshoots: 0,
            not_drawn: self.not_drawn,
            breaks: self.breaks.len() as u32,
            lost_orders: self.breaks.iter().map(|b| b.lost_orders).sum(),
            lost_units: self.breaks.iter().map(|b| b.lost_units).sum(),
            sold_twice: 0,
            busy: self.busy.len() as u32,
            sentence: String::new(),
        };
        // Phantom units after the first break are units sold a second time.
        let later = self.breaks.first().map(|b| b.slot);
        for (at, cell) in self.cells() {
            if later.is_some_and(|b| at.slot > b) {
                c.sold_twice += u64::from(cell.phantom_units);
            }
        }
        // naive_set: how many sales were computed from each value read.
        let mut sales_per_read: HashMap<i64, u32> = HashMap::new();
        for (_, cell) in self.cells() {
            let qty = u64::from(cell.qty);
            if cell.is_sale() {
                c.sales += 1;
                c.units_sold += qty;
                c.stale_sales += u32::from(cell.is_stale());
                c.phantom_sales += u32::from(cell.phantom_units > 0);
                c.phantom_units += u64::from(cell.phantom_units);
                if cell.command == Command::Set {
                    let read = cell.partner.and_then(|p| self.cell(p));
                    if let Some(v) = read.and_then(|r| r.before) {
                        *sales_per_read.entry(v).or_default() += 1;
                    }
                }
            }
            let decides = matches!(
                cell.command,
                Command::Read | Command::Reserve | Command::Decrement
            );
            if decides && cell.result == OutcomeResult::SoldOut {
                c.refused += 1;
            }
            if cell.command == Command::Read && cell.before >= Some(i64::from(cell.qty)) {
                c.passed_check += 1;
            }
            if cell.command == Command::Decrement
                && self.rule == TapeRule::DecrementThenUndo
                && !cell.is_sale()
            {
                c.overshoots += 1;
            }
        }
        for n in sales_per_read.into_values().filter(|&n| n > 1) {
            c.shared_read_sales += n;
            c.lost_sales_at_least += n - 1;
        }
        c.oversold_units = c.units_sold.saturating_sub(u64::from(self.stock));
        c
    }

    fn sentence(&self, c: &Caption) -> String {
        let existed = format!("only {} existed", count(c.stock.into(), "unit", "units"));
        let sold = format!(
            "{} of {}",
            num(c.units_sold),
            count(c.stock.into(), "unit", "units")
        );
        let mut s = match self.rule {
            TapeRule::ReadThenDecrement {
                guard: Guard::Unguarded,
            } => self.race_sentence(c, &existed),
            TapeRule::ReadThenDecrement { guard } => {
                let held = match guard {
                    Guard::Lock => "the lock held",
                    Guard::Watch => "WATCH let only unchanged reads commit",
                    _ => "the row lock held",
                };
                format!(
                    "{} read and decremented with no write in between ({held}): {sold} sold, {}; {} read too little and {} refused",
                    count(c.sales.into(), "buyer", "buyers"),
                    phantom_clause(c),
                    num(c.refused.into()),
                    were(c.refused)
                )
            }
            TapeRule::ReadThenSet | TapeRule::SelectThenUpdate => {
                let with = if self.rule.in_sql() { "UPDATE" } else { "SET" };
                let mut s = format!(
                    "{} read the stock and wrote back their own subtraction with {with}: {} sold, {existed}",
                    count(c.sales.into(), "buyer", "buyers"),
                    count(c.units_sold, "unit", "units"),
                );
                if c.shared_read_sales == 0 {
                    s += "; no two sales were computed from the same read";
                } else {
                    s += &format!(
                        "; {} of those sales were computed from a value another sale also read, so at least {} can never show on the counter",
                        num(c.shared_read_sales.into()),
                        num(c.lost_sales_at_least.into())
                    );
                }
                s
            }
            TapeRule::AtomicCall { .. } => format!(
                "{} took {sold}, each at one exact point in Redis's order, {}; {} found too little stock and changed nothing",
                count(c.sales.into(), "call", "calls"),
                phantom_clause(c),
                num(c.refused.into())
            ),
            TapeRule::AtomicPerBucket { buckets } => format!(
                "{} took {sold} across {buckets} buckets, exactly ordered within each bucket, {}; {} found the last bucket they tried too short",
                count(c.sales.into(), "call", "calls"),
                phantom_clause(c),
                count(c.refused.into(), "buyer", "buyers")
            ),
            TapeRule::DecrementThenUndo => {
                let witness = self.cells().any(|(_, c)| c.placement == Placement::Witness);
                let order = if witness {
                    "in an order that explains every reply (pending overshoots hide the exact one)"
                } else {
                    "in exact order"
                };
                format!(
                    "{} stayed at 0 or above and sold {sold}, {order}; {} went below 0 and {} undone with INCRBY (each drawn at the latest point it can have run; undo replies are not reported)",
                    count(c.sales.into(), "DECRBY", "DECRBYs"),
                    num(c.overshoots.into()),
                    were(c.overshoots)
                )
            }
            TapeRule::Story => {
                "no tape: these steps touch several keys each, and their replies do not order them"
                    .to_string()
            }
        };
        if let (Some(what), n @ 1..) = (self.rule.not_drawn(), c.not_drawn) {
            s += &format!("; {} {what} not drawn", num(n.into()));
        }
        // BUSY replies no break accounts for: the life they were in did not end.
        let unplaced_busy = c.busy - self.breaks.iter().map(|b| b.busy).sum::<u32>();
        if unplaced_busy > 0 {
            s += &format!(
                "; {} BUSY while a script held Redis (nothing taken; no reply says where in the order)",
                got(unplaced_busy)
            );
        }
        match self.lives_sentence(c) {
            Some(lives) => format!("{s}. {lives}."),
            None => s + ".",
        }
    }

    /// What each break cost, in one sentence: where Redis came back, what it had confirmed
    /// before, the acknowledged sales it lost, and the units sold a second time. `None` for
    /// a counter with one life.
    fn lives_sentence(&self, c: &Caption) -> Option<String> {
        let last = self.breaks.len().checked_sub(1)?;
        let clauses: Vec<String> = self
            .breaks
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let mut s = String::new();
                if b.busy > 0 {
                    s += &format!(
                        "{} BUSY while a script held Redis (nothing taken), then ",
                        got(b.busy)
                    );
                }
                if b.evicted {
                    return self.eviction_clause(b);
                }
                s += &match b.came_back_at {
                    Some(v) => format!("Redis came back at {v}"),
                    None => "Redis came back without the counter (read as 0)".to_string(),
                };
                s += &match b.confirmed_down_to {
                    Some(v) => format!(" after confirming down to {v}: "),
                    None => " before confirming any sale: ".to_string(),
                };
                s += &match (b.lost_orders, b.lost_units) {
                    (0, _) => "no acknowledged sale was lost".to_string(),
                    (n, u) if u == u64::from(n) => format!(
                        "{} {} lost",
                        count(
                            n.into(),
                            "acknowledged decrement",
                            "acknowledged decrements"
                        ),
                        were(n)
                    ),
                    (n, u) => format!(
                        "{} ({}) {} lost",
                        count(
                            n.into(),
                            "acknowledged decrement",
                            "acknowledged decrements"
                        ),
                        count(u, "unit", "units"),
                        were(n)
                    ),
                };
                if i == last && (c.sold_twice > 0 || c.lost_orders > 0) {
                    s += &match c.sold_twice {
                        0 => ", and no unit was sold a second time".to_string(),
                        n => format!(
                            ", and {} {} sold a second time",
                            count(n, "unit", "units"),
                            if n == 1 { "was" } else { "were" }
                        ),
                    };
                }
                s
            })
            .collect();
        Some(clauses.join("; "))
    }

    /// An eviction, in one clause: where the counter stood when Redis deleted it, and the
    /// buyers refused after it (a missing key reads as 0), all while units were unsold.
    fn eviction_clause(&self, b: &super::Break) -> String {
        let refused_after = self
            .lanes
            .first()
            .map(|lane| {
                lane.slots
                    .iter()
                    .skip(b.slot as usize + 1)
                    .flat_map(|slot| &slot.cells)
                    .filter(|cell| cell.result == OutcomeResult::SoldOut)
                    .count() as u32
            })
            .unwrap_or(0);
        let evicted = match b.confirmed_down_to {
            Some(v) => format!("Redis evicted the counter at {v}"),
            None => "Redis evicted the counter before any sale".to_string(),
        };
        format!(
            "{evicted} to free memory; a missing key reads as 0, so {} {} told \"sold out\" with units unsold",
            count(refused_after.into(), "buyer", "buyers"),
            were(refused_after)
        )
    }

    /// `naive`: how many read enough, how many existed, how many wrote on a counter that was
    /// already too low.
    fn race_sentence(&self, c: &Caption, existed: &str) -> String {
        let unit_orders = self.cells().all(|(_, cell)| cell.qty == 1);
        let (covered, reached) = if unit_orders {
            (
                "read a stock of 1 or more",
                "decremented a counter that had already reached 0 by the time their DECRBY ran",
            )
        } else {
            (
                "read a stock that covered their order",
                "decremented a counter that no longer held their order by the time their DECRBY ran",
            )
        };
        let readers = count(c.passed_check.into(), "buyer", "buyers");
        if c.phantom_sales == 0 {
            return format!(
                "{readers} {covered} and every DECRBY still found its units: {} of {} sold; {} of those sales wrote on a stale read",
                num(c.units_sold),
                count(c.stock.into(), "unit", "units"),
                num(c.stale_sales.into())
            );
        }
        let mut s = format!(
            "{readers} {covered}; {existed}; {} {reached}",
            num(c.phantom_sales.into())
        );
        if !unit_orders {
            s += &format!(
                " ({} that did not exist)",
                count(c.oversold_units, "unit", "units")
            );
        }
        s
    }
}

/// "none of them beyond the stock", or how many were.
fn phantom_clause(c: &Caption) -> String {
    match c.phantom_sales {
        0 => "none of them beyond the stock".to_string(),
        n => format!("{} of them beyond the stock", num(n.into())),
    }
}

/// "1 buyer got", "12 buyers got".
fn got(n: u32) -> String {
    format!("{} got", count(n.into(), "buyer", "buyers"))
}

fn were(n: u32) -> &'static str {
    if n == 1 { "was" } else { "were" }
}

/// `n` and the right noun: "1 buyer", "8,392 buyers".
pub(super) fn count(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", num(n), if n == 1 { one } else { many })
}

/// A number with thousands separators: 8392 -> "8,392".
pub(super) fn num(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}
