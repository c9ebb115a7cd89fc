//! A run's tape as a [`Strip`]: the zoom's shown slots become columns and its folded parts a
//! narrow column each; lanes are buyers while few enough buyers are drawn, app servers (or
//! groups of them) beyond that, and `sharded` gets one band per bucket.

use std::collections::HashMap;

use oversold_protocol::tape::{
    Cell, Command, Guard, Placement, ScriptCall, Slot, SlotKind, ZoomPart,
};
use oversold_protocol::{OutcomeResult, TapeRule};

use super::run_tape::RunTape;
use super::strip::{Band, CellKind, Column, LaneUnit, Link, MAX_COLUMNS, Mark, SlotColumn, Strip};

/// Up to this many buyers drawn, each gets a lane of its own; past it lanes are app servers.
pub const MAX_BUYER_LANES: usize = 64;
/// The most lanes app servers get; more app servers share lanes.
pub const MAX_APP_LANES: u32 = 16;

/// One column of one band, before marks: a slot of the tape lane, or a fold.
#[derive(Debug, Clone, Copy)]
enum Part {
    Slot(u32),
    Fold(u32),
}

/// The strip of `rt`, a run over `app_servers` connections.
pub fn strip(rt: &RunTape, app_servers: u32) -> Strip {
    let tape = &rt.tape;
    let mut cut_columns = 0;
    // Each tape lane's columns, in order.
    let mut parts: Vec<Vec<Part>> = vec![Vec::new(); tape.lanes.len()];
    for p in &rt.zoom.parts {
        match *p {
            ZoomPart::Shown { lane, from, to } => {
                parts[lane as usize].extend((from..=to).map(Part::Slot));
            }
            ZoomPart::Folded {
                lane,
                sales,
                refusals,
                other,
                ..
            } => parts[lane as usize].push(Part::Fold(sales + refusals + other)),
        }
    }
    for (l, cols) in parts.iter_mut().enumerate() {
        if cols.len() > MAX_COLUMNS {
            let rest = cols.split_off(MAX_COLUMNS - 1);
            let slots = &tape.lanes[l].slots;
            let mut commands = 0;
            for p in rest {
                match p {
                    Part::Slot(s) => {
                        cut_columns += 1;
                        commands += slots[s as usize].cells.len() as u32;
                    }
                    Part::Fold(n) => commands += n,
                }
            }
            cols.push(Part::Fold(commands));
        }
    }

    let lanes = Lanes::choose(rt, &parts, app_servers);
    // naive_set: how many sales were computed from each value read (see `shared`).
    let shared = shared_reads(rt);
    let bands = parts
        .iter()
        .enumerate()
        .map(|(l, cols)| band(rt, l, cols, &lanes, &shared))
        .collect();
    Strip {
        bands,
        unit: lanes.unit,
        cut_columns,
    }
}

/// Which lane each cell goes in, and the lanes' names.
struct Lanes {
    unit: LaneUnit,
    /// Buyer lanes: the lane of each buyer, by buyer number.
    by_buyer: Vec<u32>,
    /// App-server lanes: app servers per lane.
    per_lane: u32,
    names: Vec<String>,
}

impl Lanes {
    /// Buckets for `sharded`; else a lane per buyer while few enough buyers are drawn; else
    /// app servers, grouped when there are more than [`MAX_APP_LANES`].
    fn choose(rt: &RunTape, parts: &[Vec<Part>], app_servers: u32) -> Lanes {
        if rt.tape.lanes.len() > 1 {
            return Lanes {
                unit: LaneUnit::Bucket,
                by_buyer: Vec::new(),
                per_lane: 1,
                names: Vec::new(),
            };
        }
        let order = staircase(rt, parts.first().map_or(&[][..], Vec::as_slice));
        if order.len() <= MAX_BUYER_LANES {
            return Lanes::buyers(rt, &order);
        }
        Lanes::app_servers(app_servers)
    }

    /// A lane per buyer, in `order` (see [`staircase`]).
    fn buyers(rt: &RunTape, order: &[(u32, u32, u32)]) -> Lanes {
        let mut by_buyer = vec![0; rt.buyers_len()];
        for (lane, &(_, _, b)) in order.iter().enumerate() {
            by_buyer[b as usize] = lane as u32;
        }
        Lanes {
            unit: LaneUnit::Buyer,
            names: order.iter().map(|(_, _, b)| format!("#{b}")).collect(),
            by_buyer,
            per_lane: 1,
        }
    }

    /// A lane per app server, or per group of them so there are at most [`MAX_APP_LANES`].
    fn app_servers(app_servers: u32) -> Lanes {
        let n = app_servers.max(1);
        let per_lane = n.div_ceil(MAX_APP_LANES);
        let lanes = n.div_ceil(per_lane);
        let names = (0..lanes)
            .map(|i| {
                let (a, b) = (i * per_lane + 1, ((i + 1) * per_lane).min(n));
                if a == b {
                    format!("app {a}")
                } else {
                    format!("apps {a}–{b}")
                }
            })
            .collect();
        Lanes {
            unit: if per_lane == 1 {
                LaneUnit::AppServer
            } else {
                LaneUnit::AppServers(per_lane)
            },
            by_buyer: Vec::new(),
            per_lane,
            names,
        }
    }

    /// The lane of `cell` in its band.
    fn of(&self, rt: &RunTape, cell: &Cell) -> u32 {
        match self.unit {
            LaneUnit::Bucket => 0,
            LaneUnit::Buyer => self.by_buyer.get(cell.buyer as usize).copied().unwrap_or(0),
            LaneUnit::AppServer | LaneUnit::AppServers(_) => {
                let lanes = self.names.len().max(1) as u32;
                (rt.buyer(cell.buyer).app_server / self.per_lane).min(lanes - 1)
            }
        }
    }
}

/// The drawn buyers of the only tape lane (its columns `cols`) as `(first column, write slot,
/// buyer)`, sorted; it stops past [`MAX_BUYER_LANES`], as then lanes are app servers.
fn staircase(rt: &RunTape, cols: &[Part]) -> Vec<(u32, u32, u32)> {
    // Buyers in the order they first show up, then by where they wrote: the race reads
    // as a staircase, top left to bottom right. (No sort, no hash map: the page stays
    // small, and a tape with few enough buyers for a lane each is short.)
    let mut seen = vec![false; rt.buyers_len()];
    let mut order: Vec<(u32, u32, u32)> = Vec::new();
    let Some(lane) = rt.tape.lanes.first() else {
        return order;
    };
    let slots = &lane.slots;
    'columns: for (col, p) in cols.iter().enumerate() {
        let Part::Slot(s) = *p else { continue };
        for c in &slots[s as usize].cells {
            let b = c.buyer as usize;
            if b < seen.len() && !seen[b] {
                seen[b] = true;
                let wrote = c.partner.map_or(s, |p| p.slot).max(s);
                order.push((col as u32, wrote, c.buyer));
                if order.len() > MAX_BUYER_LANES {
                    break 'columns;
                }
            }
        }
    }
    if order.len() <= MAX_BUYER_LANES {
        insertion_sort(&mut order);
    }
    order
}

/// Sort a few dozen lanes in place (at most [`MAX_BUYER_LANES`] + 1 of them).
fn insertion_sort(v: &mut [(u32, u32, u32)]) {
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 && v[j - 1] > v[j] {
            v.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// How many sales were computed from each value read (`naive_set`'s SETs). Where more than
/// one was, at most one can show on the counter, so their reads are as good as stale. (The
/// same map type the tape's caption counts with, so the page carries its code once.)
fn shared_reads(rt: &RunTape) -> HashMap<i64, u32> {
    let mut sales_per_read: HashMap<i64, u32> = HashMap::new();
    for (_, c) in rt.tape.cells() {
        if c.is_sale() && c.command == Command::Set {
            let read = c.partner.and_then(|p| rt.tape.cell(p));
            if let Some(v) = read.and_then(|r| r.before) {
                *sales_per_read.entry(v).or_default() += 1;
            }
        }
    }
    sales_per_read
}

/// True when more than one sale was computed from a read of `v`.
fn shared(shared: &HashMap<i64, u32>, v: Option<i64>) -> bool {
    v.and_then(|v| shared.get(&v)).is_some_and(|&n| n > 1)
}

/// One band: tape lane `l`'s columns.
fn band(
    rt: &RunTape,
    l: usize,
    cols: &[Part],
    lanes: &Lanes,
    shared_values: &HashMap<i64, u32>,
) -> Band {
    let lane = &rt.tape.lanes[l];
    // slot -> column, for the links.
    let mut column_of: Vec<u32> = vec![u32::MAX; lane.slots.len()];
    let mut columns = Vec::with_capacity(cols.len());
    for (col, p) in cols.iter().enumerate() {
        columns.push(match *p {
            Part::Fold(commands) => Column::Folded { commands },
            Part::Slot(s) if lane.slots[s as usize].kind == SlotKind::Break => {
                column_of[s as usize] = col as u32;
                break_column(rt, s)
            }
            Part::Slot(s) => {
                column_of[s as usize] = col as u32;
                Column::Slot(slot_column(
                    rt,
                    &lane.slots[s as usize],
                    lanes,
                    shared_values,
                ))
            }
        });
    }
    let ran_out = rt
        .ran_out
        .filter(|at| at.lane as usize == l)
        .map(|at| column_of[at.slot as usize])
        .filter(|&c| c != u32::MAX);
    Band {
        label: lane.bucket.map(|b| format!("bucket {}", b + 1)),
        lanes: match lanes.unit {
            LaneUnit::Bucket => vec![format!("bucket {}", lane.bucket.unwrap_or(0) + 1)],
            _ => lanes.names.clone(),
        },
        initial: Some(lane.initial),
        columns,
        links: links(rt, l, &column_of, lanes, shared_values),
        ran_out,
    }
}

/// The divider where Redis came back at slot `s`: the value, and the tape's own counts of
/// what the life before lost (the numbers the caption says).
fn break_column(rt: &RunTape, s: u32) -> Column {
    let Some(b) = rt.tape.breaks.iter().find(|b| b.slot == s) else {
        return Column::Folded { commands: 0 };
    };
    if b.evicted {
        // Nothing came back and nothing was taken back: the key is gone.
        return Column::Break {
            came_back_at: None,
            label: "Redis evicted the counter · a missing key reads as 0".to_string(),
        };
    }
    let mut label = match b.came_back_at {
        Some(v) => format!("Redis came back at {v}"),
        None => "Redis came back without the counter".to_string(),
    };
    label += &match b.lost_orders {
        0 => " · nothing acknowledged lost".to_string(),
        1 => " · 1 acknowledged sale lost".to_string(),
        n => format!(" · {n} acknowledged sales lost"),
    };
    if b.busy > 0 {
        label += &format!(" · {} BUSY before", b.busy);
    }
    Column::Break {
        came_back_at: b.came_back_at,
        label,
    }
}

/// One shown slot as a column: a mark per lane its cells fall in, and the counter beside it.
fn slot_column(
    rt: &RunTape,
    slot: &Slot,
    lanes: &Lanes,
    shared_values: &HashMap<i64, u32>,
) -> SlotColumn {
    let mut marks: Vec<Mark> = Vec::new();
    for c in &slot.cells {
        add_mark(&mut marks, rt, c, lanes, shared_values);
    }
    SlotColumn {
        marks,
        commands: slot.cells.len() as u32,
        approx: slot.cells.iter().any(|c| c.placement != Placement::Exact),
        counter: match slot.kind {
            SlotKind::Reads => slot.before.or(slot.after),
            SlotKind::Write | SlotKind::Gap | SlotKind::Break => slot.after,
        },
        gap: slot.kind == SlotKind::Gap,
    }
}

/// Put cell `c` on its lane's mark: a new mark with its label, or one more on a mark already
/// there (which then loses its label and shows the worst kind among its cells).
fn add_mark(
    marks: &mut Vec<Mark>,
    rt: &RunTape,
    c: &Cell,
    lanes: &Lanes,
    shared_values: &HashMap<i64, u32>,
) {
    let kind = kind(c, shared_values);
    let at = lanes.of(rt, c);
    match marks.iter_mut().find(|m| m.lane == at) {
        Some(m) => {
            m.count += 1;
            m.label = None;
            if kind.rank() > m.kind.rank() {
                m.kind = kind;
            }
        }
        None => marks.push(Mark {
            lane: at,
            kind,
            count: 1,
            label: Some(label(rt.tape.rule, c)),
        }),
    }
}

/// Each drawn write of tape lane `l` joined to its drawn read (`column_of`: slot -> column,
/// `u32::MAX` where not drawn); one line per pair of marks (lanes of app servers share marks),
/// stale if any write it stands for is.
fn links(
    rt: &RunTape,
    l: usize,
    column_of: &[u32],
    lanes: &Lanes,
    shared_values: &HashMap<i64, u32>,
) -> Vec<Link> {
    // Keyed by the four numbers packed in one i64: the tape's own map type, so the page
    // carries no second hash map.
    let mut seen: HashMap<i64, usize> = HashMap::new();
    let mut links: Vec<Link> = Vec::new();
    for (at, c) in rt.tape.cells().filter(|(at, _)| at.lane as usize == l) {
        if !matches!(c.command, Command::Decrement | Command::Set) {
            continue;
        }
        let Some(read) = c.partner else { continue };
        let (from, to) = (column_of[read.slot as usize], column_of[at.slot as usize]);
        if from == u32::MAX || to == u32::MAX {
            continue;
        }
        let read_cell = rt.tape.cell(read);
        let stale = c.is_stale()
            || (c.command == Command::Set
                && shared(shared_values, read_cell.and_then(|r| r.before)));
        let from_lane = read_cell.map_or(0, |r| lanes.of(rt, r));
        let to_lane = lanes.of(rt, c);
        let key = [from, from_lane, to, to_lane]
            .iter()
            .fold(0i64, |k, &x| (k << 16) | i64::from(x & 0xffff));
        match seen.get(&key) {
            Some(&i) => links[i].stale |= stale,
            None => {
                seen.insert(key, links.len());
                links.push(Link {
                    from_column: from,
                    from_lane,
                    to_column: to,
                    to_lane,
                    stale,
                });
            }
        }
    }
    links
}

/// What a cell is, as drawn.
fn kind(c: &Cell, shared_values: &HashMap<i64, u32>) -> CellKind {
    match c.command {
        Command::Read if c.result == OutcomeResult::SoldOut => CellKind::RefusedRead,
        Command::Read => {
            // Under SET, a value several sales were computed from: all but one are lost.
            let shared_read =
                c.result == OutcomeResult::Reserved && shared(shared_values, c.before);
            if c.is_stale() || shared_read {
                CellKind::StaleRead
            } else {
                CellKind::Read
            }
        }
        Command::Decrement | Command::Set | Command::Reserve if c.is_sale() => {
            if c.phantom_units > 0 {
                CellKind::Phantom
            } else if c.lost {
                CellKind::Lost
            } else {
                CellKind::Sale
            }
        }
        Command::Reserve => CellKind::Refused,
        // A decrement that is not a sale went below zero and was undone (`decr_compensate`).
        Command::Decrement | Command::Set => CellKind::Overshoot,
        Command::Undo => CellKind::Undo,
    }
}

/// The command and its reply in two short lines, for a mark with room for text:
/// `GET` over `→ 1`, `DECRBY` over `→ -1`.
fn label(rule: TapeRule, c: &Cell) -> String {
    let v = |x: Option<i64>| x.map_or_else(|| "?".to_string(), |x| x.to_string());
    let guard = match rule {
        TapeRule::ReadThenDecrement { guard } => guard,
        _ => Guard::Unguarded,
    };
    let (verb, reply) = match c.command {
        Command::Read if rule.in_sql() => ("SELECT", v(c.before)),
        Command::Read => ("GET", v(c.before)),
        Command::Decrement if guard == Guard::Watch => ("EXEC", v(c.after)),
        Command::Decrement if guard == Guard::RowLock => ("UPDATE", v(c.after)),
        Command::Decrement => ("DECRBY", v(c.after)),
        Command::Set if rule.in_sql() => ("UPDATE", format!("{} (1 row)", v(c.after))),
        Command::Set => ("SET", format!("{} OK", v(c.after))),
        Command::Undo => ("INCRBY", "?".to_string()),
        Command::Reserve => {
            let call = match rule {
                TapeRule::AtomicCall {
                    call: ScriptCall::Fcall,
                } => "FCALL",
                _ => "EVALSHA",
            };
            let got = if c.is_sale() {
                v(c.after)
            } else {
                "refused".to_string()
            };
            (call, got)
        }
    };
    format!("{verb}\n→ {reply}")
}
