//! The race timeline's arithmetic: one row per buyer on a time axis since the start gate, the
//! moment the real stock ran out, and the sentence that says what the picture shows.
//!
//! Plain numbers only (µs, CSS px, row indices); the component turns them into canvas calls.
//! A 10,000-buyer run is one sort and a few passes over the rows, once per animation frame.

use super::run::{AuditRow, Mark};
use super::text::{count, micros, thousands};

/// How buyers are stacked on the y axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RowOrder {
    /// One row per buyer, by arrival time (then buyer number).
    #[default]
    Arrival,
    /// Grouped by app server (Redis connection), by arrival within each group.
    AppServer,
}

impl RowOrder {
    /// Both orders, for the toggle.
    pub const ALL: [RowOrder; 2] = [RowOrder::Arrival, RowOrder::AppServer];

    /// The toggle's label.
    pub fn label(self) -> &'static str {
        match self {
            RowOrder::Arrival => "by arrival",
            RowOrder::AppServer => "by app server",
        }
    }

    /// A short id for test hooks.
    pub fn id(self) -> &'static str {
        match self {
            RowOrder::Arrival => "arrival",
            RowOrder::AppServer => "app",
        }
    }
}

/// One buyer's bar: arrival to answer, with the moment its read of the stock came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bar {
    /// Row on the y axis, 0 at the top.
    pub row: u32,
    /// Arrival, µs after the gate.
    pub start_us: u64,
    /// Answer, µs after the gate.
    pub end_us: u64,
    /// When the app's read came back, for strategies that read before deciding.
    pub read_us: Option<u64>,
    /// Colour: reserved, oversold, sold out or error.
    pub mark: Mark,
}

/// A run of consecutive rows that went through one app server (only when grouping).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group {
    /// 0-based app server index.
    pub app_server: u32,
    /// First row of the group.
    pub first_row: u32,
    /// Rows in the group.
    pub rows: u32,
}

/// The numbers the caption is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Race {
    /// Units in stock before the run.
    pub stock: u32,
    /// When the real stock ran out (µs after the gate, see [`stock_out_us`]); `None` while units are left.
    pub stock_out_us: Option<u64>,
    /// Buyers whose read of the stock came back before `stock_out_us`.
    pub read_before: u32,
    /// Of those, buyers whose order went on to sell units that never existed.
    pub stale_oversold: u32,
    /// Orders that sold units that never existed (whatever they read).
    pub oversold_orders: u32,
    /// Buyers whose strategy read the stock in the app at all.
    pub readers: u32,
    /// Buyers refused as sold out.
    pub refused: u32,
    /// Units across accepted orders.
    pub units_sold: u64,
    /// Buyers answered so far.
    pub answered: u32,
    /// The latest answer, µs after the gate (how long the run has lasted so far).
    pub last_end_us: u64,
}

/// The run must last this many times the run-out moment before the race gets a zoom.
pub const ZOOM_WORTH: u64 = 8;
/// A zoomed axis runs to this many times the run-out moment.
pub const ZOOM_SPAN: u64 = 3;

impl Race {
    /// The right edge of the zoomed axis (µs), when the run lasted more than [`ZOOM_WORTH`] times
    /// the moment the stock ran out: [`ZOOM_SPAN`] times that moment. `None` when the whole run
    /// already reads well (or the stock never ran out, or there was none to race for).
    pub fn zoom_end_us(&self) -> Option<u64> {
        let out = self.stock_out_us.filter(|&t| t > 0)?;
        (self.last_end_us > out.saturating_mul(ZOOM_WORTH)).then(|| out.saturating_mul(ZOOM_SPAN))
    }
}

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
    fn add(&mut self, mark: Mark) {
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

/// Count the buyers that arrived at or after `end_us` (one pass, no sort).
pub fn hidden(rows: &[AuditRow], end_us: u64) -> Hidden {
    let mut h = Hidden::default();
    for r in rows.iter().filter(|r| r.outcome.start_us >= end_us) {
        h.add(r.mark);
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

/// Everything the panel draws, independent of pixels.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Timeline {
    /// One bar per buyer, in row order.
    pub bars: Vec<Bar>,
    /// App-server groups, top to bottom (empty unless grouped by app server).
    pub groups: Vec<Group>,
    /// The latest answer, µs after the gate (the data's right edge).
    pub last_end_us: u64,
    /// The race's numbers (over every buyer, shown or not).
    pub race: Race,
    /// The zoomed axis' right edge (µs), when zoomed; `None` for the whole run.
    pub window_end_us: Option<u64>,
    /// Buyers left out of a zoomed picture.
    pub hidden: Hidden,
}

impl Timeline {
    /// Lay out `rows` (audit rows, in the order they reached the page) of a run that started
    /// with `stock` units. With `zoom`, and a run long enough to need it ([`Race::zoom_end_us`]),
    /// only the buyers that arrived before the zoomed axis' right edge get a row.
    pub fn new(rows: &[AuditRow], stock: u32, order: RowOrder, zoom: bool) -> Self {
        let race = race(rows, stock);
        let window_end_us = race.zoom_end_us().filter(|_| zoom);
        let o = |i: usize| &rows[i].outcome;
        let mut hidden = Hidden::default();
        let mut idx: Vec<usize> = (0..rows.len())
            .filter(|&i| match window_end_us {
                Some(end) if o(i).start_us >= end => {
                    hidden.add(rows[i].mark);
                    false
                }
                _ => true,
            })
            .collect();
        match order {
            RowOrder::Arrival => idx.sort_unstable_by_key(|&i| (o(i).start_us, o(i).buyer)),
            RowOrder::AppServer => {
                idx.sort_unstable_by_key(|&i| (o(i).app_server, o(i).start_us, o(i).buyer))
            }
        }
        let mut groups: Vec<Group> = Vec::new();
        let bars: Vec<Bar> = idx
            .iter()
            .enumerate()
            .map(|(row, &i)| {
                let row = row as u32;
                let out = o(i);
                if order == RowOrder::AppServer {
                    match groups.last_mut() {
                        Some(g) if g.app_server == out.app_server => g.rows += 1,
                        _ => groups.push(Group {
                            app_server: out.app_server,
                            first_row: row,
                            rows: 1,
                        }),
                    }
                }
                Bar {
                    row,
                    start_us: out.start_us,
                    end_us: out.end_us.max(out.start_us),
                    read_us: out.read_us,
                    mark: rows[i].mark,
                }
            })
            .collect();
        let last_end_us = bars.iter().map(|b| b.end_us).max().unwrap_or(0);
        Self {
            bars,
            groups,
            last_end_us,
            race,
            window_end_us,
            hidden,
        }
    }

    /// Rows on the y axis (one per buyer).
    pub fn rows(&self) -> u32 {
        self.bars.len() as u32
    }
}

/// When the real stock ran out, µs after the gate; `None` while real units are left, `Some(0)`
/// when there were none.
///
/// Units are counted in the order answers reached the page (the count that marks audit lines
/// "oversold", so every red bar belongs after this moment), and the stock ran out no later than
/// the answer of the order that took the last real unit. An answer is only an upper bound on
/// when its write happened, though: a refusal that saw the counter at zero or below proves the
/// stock was already gone when that read came back, so the earliest such refusal can pull the
/// moment earlier. (Without it an atomic run would show refusals before the stock ran out.)
pub fn stock_out_us(rows: &[AuditRow], stock: u32) -> Option<u64> {
    if stock == 0 {
        return Some(0);
    }
    let stock = u64::from(stock);
    let mut sold = 0u64;
    let last_real = rows.iter().filter(|r| r.mark.is_sale()).find_map(|r| {
        sold += u64::from(r.outcome.qty);
        (sold >= stock).then_some(r.outcome.end_us)
    })?;
    let first_empty_read = rows
        .iter()
        .filter(|r| r.mark == Mark::SoldOut && r.outcome.observed_stock.is_some_and(|s| s <= 0))
        .map(|r| r.outcome.read_us.unwrap_or(r.outcome.end_us))
        .min();
    Some(first_empty_read.map_or(last_real, |t| t.min(last_real)))
}

/// Count what the caption says.
pub fn race(rows: &[AuditRow], stock: u32) -> Race {
    let out = stock_out_us(rows, stock);
    let mut r = Race {
        stock,
        stock_out_us: out,
        answered: rows.len() as u32,
        ..Race::default()
    };
    for row in rows {
        let o = &row.outcome;
        r.last_end_us = r.last_end_us.max(o.end_us.max(o.start_us));
        if row.mark.is_sale() {
            r.units_sold += u64::from(o.qty);
        }
        match row.mark {
            Mark::Oversold => r.oversold_orders += 1,
            Mark::SoldOut => r.refused += 1,
            _ => {}
        }
        let Some(read) = o.read_us else { continue };
        r.readers += 1;
        if out.is_some_and(|t| read < t) {
            r.read_before += 1;
            if row.mark == Mark::Oversold {
                r.stale_oversold += 1;
            }
        }
    }
    r
}

/// The one-line reading of the picture, in plain words with numbers.
pub fn caption(race: &Race, running: bool) -> String {
    if race.answered == 0 {
        return if running {
            "Waiting for the first answers…".to_string()
        } else {
            "Run a strategy: each buyer becomes a bar from arrival to answer, on one time axis."
                .to_string()
        };
    }
    let Some(out) = race.stock_out_us else {
        let so_far = if running { " so far" } else { "" };
        return format!(
            "The stock has not run out{so_far}: {} of {} units sold.",
            thousands(race.units_sold as i64),
            thousands(race.stock.into())
        );
    };
    if race.stock == 0 {
        return match race.oversold_orders {
            0 => "There was no stock at all, and every order was refused.".to_string(),
            n => format!(
                "There was no stock at all, yet {} sold units that did not exist.",
                count(n.into(), "buyer")
            ),
        };
    }
    let at = micros(out);
    if race.read_before > 0 {
        let lead = format!(
            "{} read the stock before it ran out at {at}",
            count(race.read_before.into(), "buyer")
        );
        return match race.stale_oversold {
            0 => format!("{lead}; none of them sold a unit that did not exist."),
            n if n == race.read_before => format!(
                "{lead}; all {} went on to sell units that did not exist.",
                thousands(n.into())
            ),
            n => format!(
                "{lead}; {} of them went on to sell units that did not exist.",
                thousands(n.into())
            ),
        };
    }
    let mut text = format!("The stock ran out at {at}");
    if race.oversold_orders > 0 {
        text.push_str(&format!(
            "; after it, {} still sold units that did not exist.",
            count(race.oversold_orders.into(), "buyer")
        ));
        return text;
    }
    if race.refused > 0 {
        text.push_str(&format!(
            "; {} were refused",
            count(race.refused.into(), "buyer")
        ));
    }
    if race.readers == 0 {
        text.push_str(". No app-side read to go stale: check and write were one atomic step.");
    } else {
        text.push('.');
    }
    text
}

/// A time axis from the gate (0) to a round number at or past the last answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeAxis {
    /// Right edge, µs (a whole number of `step_us`, at least one step).
    pub end_us: u64,
    /// Distance between ticks, µs (1, 2 or 5 × 10ⁿ).
    pub step_us: u64,
}

impl TimeAxis {
    /// An axis covering `0..=last_us` with at most `max_ticks` intervals.
    pub fn new(last_us: u64, max_ticks: u32) -> Self {
        let last = last_us.max(1);
        let want = last.div_ceil(u64::from(max_ticks.max(1)));
        let mut decade = 1u64;
        let step = loop {
            if let Some(m) = [1, 2, 5].into_iter().find(|&m| m * decade >= want) {
                break m * decade;
            }
            decade *= 10;
        };
        Self {
            end_us: last.div_ceil(step) * step,
            step_us: step,
        }
    }

    /// An axis covering exactly `0..=end_us` (a zoom window), ticks at round steps up to it:
    /// the right edge need not be a tick, so the step is the finest that leaves at most
    /// `max_ticks` whole intervals.
    pub fn window(end_us: u64, max_ticks: u32) -> Self {
        let end = end_us.max(1);
        let step = Self::new(end / u64::from(max_ticks.max(1) + 1) + 1, 1).step_us;
        Self {
            end_us: end,
            step_us: step,
        }
    }

    /// The ticks, left to right: 0, step, 2·step, … up to the end.
    pub fn ticks(&self) -> impl Iterator<Item = u64> + '_ {
        (0..=self.end_us / self.step_us).map(|i| i * self.step_us)
    }

    /// Fraction of the way across (0..=1) for a time.
    pub fn frac(&self, us: u64) -> f64 {
        (us as f64 / self.end_us.max(1) as f64).min(1.0)
    }

    /// A tick's label: milliseconds, or seconds once the axis reaches a second, with as many
    /// decimals as the step needs (`0.5 ms`, `35 ms`, `1.2 s`).
    pub fn label(&self, us: u64) -> String {
        if us == 0 {
            return "0".to_string();
        }
        let (unit, per, name) = if self.end_us >= 1_000_000 {
            (1_000_000, 1e6, "s")
        } else {
            (1_000, 1e3, "ms")
        };
        let decimals = match self.step_us {
            s if s >= unit => 0,
            s if s * 10 >= unit => 1,
            s if s * 100 >= unit => 2,
            _ => 3,
        };
        format!("{:.*} {name}", decimals, us as f64 / per)
    }
}

/// Where things go on the canvas, in CSS px.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry {
    /// Canvas width.
    pub width: f64,
    /// Canvas height.
    pub height: f64,
    /// Left edge of the plot (room for app-server labels when grouped).
    pub left: f64,
    /// Right edge of the plot.
    pub right: f64,
    /// Top edge of the plot (room for the "stock ran out" label above).
    pub top: f64,
    /// Distance between rows (below 1 px for big runs: rows then share pixels).
    pub pitch: f64,
    /// Bar thickness, before rounding to at least one device pixel.
    pub thickness: f64,
    /// Tick intervals that fit the width.
    pub max_ticks: u32,
}

/// Space above the plot for the marker's label.
const TOP: f64 = 24.0;
/// Space below the plot for the tick labels.
const BOTTOM: f64 = 24.0;
/// Left gutter for app-server labels when grouped.
const GROUP_GUTTER: f64 = 50.0;
/// Gutters otherwise: just enough that the first and last tick labels stay on the canvas.
const EDGE: f64 = 10.0;
/// The tallest a row gets.
const MAX_PITCH: f64 = 14.0;

impl Geometry {
    /// Lay out a canvas `width` CSS px wide for `rows` buyers.
    pub fn new(width: f64, rows: u32, grouped: bool) -> Self {
        let width = width.max(160.0);
        let narrow = width < 600.0;
        let max_plot = if narrow { 240.0 } else { 320.0 };
        let rows_f = f64::from(rows.max(1));
        let plot = (rows_f * MAX_PITCH).min(max_plot);
        let pitch = plot / rows_f;
        let left = if grouped { GROUP_GUTTER } else { EDGE + 6.0 };
        let right = width - EDGE - 12.0;
        Self {
            width,
            height: TOP + plot + BOTTOM,
            left,
            right,
            top: TOP,
            pitch,
            thickness: (pitch * 0.7).min(9.0),
            max_ticks: ((right - left) / if narrow { 70.0 } else { 95.0 })
                .floor()
                .max(2.0) as u32,
        }
    }

    /// Bottom edge of the plot.
    pub fn bottom(&self) -> f64 {
        self.height - BOTTOM
    }

    /// x for a time on `axis`.
    pub fn x(&self, axis: &TimeAxis, us: u64) -> f64 {
        self.left + axis.frac(us) * (self.right - self.left)
    }

    /// The vertical centre of `row`.
    pub fn y(&self, row: u32) -> f64 {
        self.top + (f64::from(row) + 0.5) * self.pitch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixtures::{config, outcome};
    use crate::model::run::RunModel;
    use oversold_protocol::{BuyerOutcome, OutcomeResult};

    /// A naive race: everyone arrives at 0 and reads at 100..; writes answer at 1000 + 10·b.
    fn naive_run(stock: u32, buyers: u32) -> RunModel {
        let mut run = RunModel::new("r-1".into(), config(stock, buyers));
        run.push_batch(
            (1..=buyers)
                .map(|b| {
                    let mut o = outcome(b, 1, OutcomeResult::Reserved);
                    o.start_us = u64::from(b % 3);
                    o.read_us = Some(100 + u64::from(b));
                    o.end_us = 1_000 + 10 * u64::from(b);
                    o.stock_after = Some(i64::from(stock) - i64::from(b));
                    o
                })
                .collect(),
        );
        run
    }

    /// An atomic run: no reads; the first `stock` buyers get a unit, the rest are refused.
    fn atomic_run(stock: u32, buyers: u32) -> RunModel {
        let mut run = RunModel::new("r-2".into(), config(stock, buyers));
        run.push_batch(
            (1..=buyers)
                .map(|b| {
                    let result = if b <= stock {
                        OutcomeResult::Reserved
                    } else {
                        OutcomeResult::SoldOut
                    };
                    let mut o = outcome(b, 1, result);
                    o.observed_stock = None;
                    o.start_us = 0;
                    o.end_us = 200 + 5 * u64::from(b);
                    o
                })
                .collect(),
        );
        run
    }

    #[test]
    fn the_stock_runs_out_with_the_order_that_took_the_last_real_unit() {
        let run = naive_run(10, 50);
        assert_eq!(stock_out_us(&run.rows, 10), Some(1_100));
        // A straddling order (units 9..11 of 10) takes the last real unit too.
        let mut big = RunModel::new("r".into(), config(10, 3));
        big.push_batch(
            [(1, 8, 300), (2, 3, 500), (3, 1, 700)]
                .map(|(b, qty, end)| BuyerOutcome {
                    end_us: end,
                    ..outcome(b, qty, OutcomeResult::Reserved)
                })
                .to_vec(),
        );
        assert_eq!(stock_out_us(&big.rows, 10), Some(500));
        // Sold-out and failed answers take nothing.
        let mut few = RunModel::new("r".into(), config(10, 2));
        few.push_batch(vec![
            outcome(1, 5, OutcomeResult::Reserved),
            outcome(2, 9, OutcomeResult::SoldOut),
            outcome(3, 9, OutcomeResult::Error),
        ]);
        assert_eq!(stock_out_us(&few.rows, 10), None);
        assert_eq!(stock_out_us(&few.rows, 0), Some(0));
    }

    #[test]
    fn a_refusal_that_saw_no_stock_pulls_the_moment_earlier() {
        // Atomic: the tenth sale's answer came back late (250 µs), but buyer 11 was refused at
        // 180 µs having seen 0 left: the stock was gone by then.
        let mut run = atomic_run(10, 12);
        for row in &mut run.rows[10..] {
            row.outcome.observed_stock = Some(0);
        }
        run.rows[10].outcome.end_us = 180;
        assert_eq!(stock_out_us(&run.rows, 10), Some(180));
        // A read-then-write refusal counts from when its read came back.
        run.rows[11].outcome.read_us = Some(120);
        run.rows[11].outcome.end_us = 400;
        assert_eq!(stock_out_us(&run.rows, 10), Some(120));
        // A refusal that saw stock left (too little for its order) proves nothing.
        run.rows[11].outcome.observed_stock = Some(1);
        assert_eq!(stock_out_us(&run.rows, 10), Some(180));
        // Nor does any refusal while real units are unsold.
        let mut early = atomic_run(10, 12);
        early.rows[0].mark = Mark::Error;
        assert_eq!(stock_out_us(&early.rows, 10), None);
    }

    #[test]
    fn naive_caption_counts_reads_before_the_stock_ran_out() {
        let run = naive_run(10, 50);
        let r = race(&run.rows, 10);
        // Every read (101..=150 µs) came back before the tenth sale answered at 1,100 µs.
        assert_eq!(
            (r.read_before, r.stale_oversold, r.oversold_orders),
            (50, 40, 40)
        );
        assert_eq!(
            caption(&r, false),
            "50 buyers read the stock before it ran out at 1.1 ms; \
             40 of them went on to sell units that did not exist."
        );
        // Reads after the line do not count as racing it.
        let mut late = naive_run(10, 12);
        late.rows[11].outcome.read_us = Some(5_000);
        let r = race(&late.rows, 10);
        assert_eq!((r.read_before, r.stale_oversold), (11, 1));
    }

    #[test]
    fn atomic_caption_claims_no_race() {
        let run = atomic_run(10, 50);
        let r = race(&run.rows, 10);
        assert_eq!((r.readers, r.read_before, r.refused), (0, 0, 40));
        let text = caption(&r, false);
        assert_eq!(
            text,
            "The stock ran out at 250 µs; 40 buyers were refused. \
             No app-side read to go stale: check and write were one atomic step."
        );
        assert!(!text.contains("read the stock before"));
    }

    #[test]
    fn captions_for_the_edges() {
        let empty = race(&[], 10);
        assert!(caption(&empty, false).starts_with("Run a strategy"));
        assert!(caption(&empty, true).starts_with("Waiting"));
        let few = atomic_run(100, 3);
        let r = race(&few.rows, 100);
        assert_eq!(r.stock_out_us, None);
        assert_eq!(
            caption(&r, true),
            "The stock has not run out so far: 3 of 100 units sold."
        );
        let none = naive_run(0, 4);
        let r = race(&none.rows, 0);
        assert_eq!(r.stock_out_us, Some(0));
        assert_eq!(
            caption(&r, false),
            "There was no stock at all, yet 4 buyers sold units that did not exist."
        );
        // A safe read-then-write strategy (WATCH, lock): reads raced, nothing oversold.
        let mut watch = naive_run(10, 12);
        for row in &mut watch.rows[10..] {
            row.mark = Mark::SoldOut;
        }
        let r = race(&watch.rows, 10);
        assert!(caption(&r, false).ends_with("; none of them sold a unit that did not exist."));
        // Every racer oversold: "all", not "12 of them".
        let mut all = naive_run(1, 3);
        all.rows[0].outcome.read_us = None;
        assert!(
            caption(&race(&all.rows, 1), false)
                .ends_with("; all 2 went on to sell units that did not exist.")
        );
    }

    #[test]
    fn rows_sort_by_arrival_or_group_by_app_server() {
        let run = naive_run(10, 9);
        let t = Timeline::new(&run.rows, 10, RowOrder::Arrival, true);
        // start_us = b % 3: buyers 3, 6, 9 at 0, then 1, 4, 7, then 2, 5, 8.
        let starts: Vec<u64> = t.bars.iter().map(|b| b.start_us).collect();
        assert_eq!(starts, [0, 0, 0, 1, 1, 1, 2, 2, 2]);
        assert!(t.groups.is_empty());
        assert_eq!(t.last_end_us, 1_090);
        assert_eq!(t.rows(), 9);

        let g = Timeline::new(&run.rows, 10, RowOrder::AppServer, true);
        // app_server = b % 8: buyers 8 (app 0), 1 and 9 (app 1), 2 .. 7.
        assert_eq!(g.groups.len(), 8);
        assert_eq!(
            g.groups[1],
            Group {
                app_server: 1,
                first_row: 1,
                rows: 2
            }
        );
        assert_eq!(g.groups.iter().map(|x| x.rows).sum::<u32>(), 9);
        assert!(g.bars.iter().enumerate().all(|(i, b)| b.row == i as u32));
    }

    /// A long tail: buyer b arrives at 10·b µs and is answered 50 µs later; atomic, so the
    /// stock runs out with the 10th sale (150 µs) and the other buyers are refused.
    fn long_tail(buyers: u32) -> RunModel {
        let mut run = atomic_run(10, buyers);
        for row in &mut run.rows {
            let b = u64::from(row.outcome.buyer);
            row.outcome.start_us = 10 * b;
            row.outcome.end_us = 10 * b + 50;
        }
        run
    }

    #[test]
    fn a_long_run_zooms_to_the_race_and_counts_who_it_leaves_out() {
        // 200 buyers: the run lasts 2,050 µs, more than 8 × 150: zoom to 3 × 150 = 450 µs.
        let run = long_tail(200);
        let r = race(&run.rows, 10);
        assert_eq!((r.stock_out_us, r.last_end_us), (Some(150), 2_050));
        assert_eq!(r.zoom_end_us(), Some(450));

        let t = Timeline::new(&run.rows, 10, RowOrder::Arrival, true);
        assert_eq!(t.window_end_us, Some(450));
        // Arrived before 450 µs: buyers 1..=44 (the 44th at 440 µs).
        assert_eq!(t.rows(), 44);
        assert!(t.bars.iter().all(|b| b.start_us < 450));
        assert_eq!(t.bars.iter().filter(|b| b.end_us > 450).count(), 4);
        assert_eq!(
            t.hidden,
            Hidden {
                buyers: 156,
                refused: 156,
                ..Hidden::default()
            }
        );
        assert_eq!(hidden(&run.rows, 450), t.hidden);
        // The caption's numbers still count every buyer.
        assert_eq!((t.race.answered, t.race.refused), (200, 190));
        assert_eq!(
            zoom_note(&t.hidden, 450, 2_050),
            "Zoomed to the first 450 µs of a 2.0 ms run; 156 later buyers (all refused) not shown."
        );

        // Grouped by app server: the shown buyers only, rows renumbered without gaps.
        let g = Timeline::new(&run.rows, 10, RowOrder::AppServer, true);
        assert_eq!(g.rows(), 44);
        assert_eq!(g.groups.iter().map(|x| x.rows).sum::<u32>(), 44);
        assert!(g.bars.iter().enumerate().all(|(i, b)| b.row == i as u32));

        // The whole run, on request: every buyer, nothing hidden.
        let w = Timeline::new(&run.rows, 10, RowOrder::Arrival, false);
        assert_eq!((w.rows(), w.window_end_us), (200, None));
        assert_eq!(w.hidden, Hidden::default());
    }

    #[test]
    fn a_short_run_or_no_race_keeps_the_whole_run() {
        // 100 buyers: 1,050 µs is under 8 × 150: the race already fills the picture.
        let short = long_tail(100);
        assert_eq!(race(&short.rows, 10).zoom_end_us(), None);
        let t = Timeline::new(&short.rows, 10, RowOrder::Arrival, true);
        assert_eq!((t.rows(), t.window_end_us), (100, None));
        // No stock at all (run-out at 0), or stock left: nothing to zoom to.
        let none = long_tail(200);
        assert_eq!(race(&none.rows, 0).zoom_end_us(), None);
        assert_eq!(race(&none.rows, 10_000).zoom_end_us(), None);
    }

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
            "Zoomed to the first 450 µs of a 5.0 ms run; 1 later buyer (failed) not shown."
        );
        assert!(zoom_note(&Hidden::default(), 450, 5_000).ends_with("end in an arrow."));
    }

    #[test]
    fn a_window_axis_ends_exactly_at_the_window() {
        let a = TimeAxis::window(114_000, 6);
        assert_eq!((a.step_us, a.end_us), (20_000, 114_000));
        assert_eq!(a.ticks().last(), Some(100_000));
        assert_eq!(a.frac(114_000), 1.0);
        assert_eq!(
            a.frac(2_000_000),
            1.0,
            "bars past the window stop at the edge"
        );
        assert_eq!(a.label(100_000), "100 ms");
        // A phone's four intervals: 0, 20, 40, 60, 80 ms, not 0 and 50 ms alone.
        let phone = TimeAxis::window(94_000, 4);
        assert_eq!(phone.step_us, 20_000);
        assert_eq!(phone.ticks().count(), 5);
        for (end, m) in [(1, 1), (7, 3), (999, 5), (1_000, 4), (123_456, 13)] {
            let w = TimeAxis::window(end, m);
            assert!(w.ticks().count() as u32 <= m + 1, "{end} {m}: {w:?}");
            assert!(w.step_us * u64::from(m + 1) > end, "{end} {m}: {w:?}");
        }
    }

    #[test]
    fn time_axis_ends_on_a_round_number() {
        let a = TimeAxis::new(1_234, 6);
        assert_eq!((a.step_us, a.end_us), (500, 1_500));
        assert_eq!(a.ticks().collect::<Vec<_>>(), [0, 500, 1_000, 1_500]);
        assert_eq!(a.label(500), "0.5 ms");
        assert_eq!(a.label(0), "0");
        assert!((a.frac(750) - 0.5).abs() < 1e-12);
        assert_eq!(a.frac(9_999), 1.0);

        let b = TimeAxis::new(38_700, 8);
        assert_eq!((b.step_us, b.end_us), (5_000, 40_000));
        assert_eq!(b.label(35_000), "35 ms");
        let c = TimeAxis::new(180, 4);
        assert_eq!((c.step_us, c.end_us), (50, 200));
        assert_eq!(c.label(150), "0.15 ms");
        let d = TimeAxis::new(12_400_000, 5);
        assert_eq!(d.step_us, 5_000_000);
        assert_eq!(d.label(10_000_000), "10 s");
        // Past a second, labels switch to seconds: "2.4 s", not "2400 ms".
        let e = TimeAxis::new(2_210_000, 12);
        assert_eq!((e.step_us, e.end_us), (200_000, 2_400_000));
        assert_eq!(e.label(2_400_000), "2.4 s");
        assert_eq!(e.label(200_000), "0.2 s");
        // Nothing answered yet: a unit axis, no division by zero.
        let z = TimeAxis::new(0, 5);
        assert_eq!((z.step_us, z.end_us), (1, 1));
    }

    #[test]
    fn geometry_fits_a_phone_and_ten_thousand_rows() {
        let phone = Geometry::new(340.0, 50, false);
        assert!(phone.right <= 340.0 && phone.left >= 0.0);
        assert!(phone.height <= 240.0 + 48.0);
        assert!(phone.max_ticks >= 2);
        let wide = Geometry::new(1_300.0, 10_000, true);
        assert_eq!(wide.height, 24.0 + 320.0 + 24.0);
        assert!(wide.pitch < 0.05, "rows share pixels: {}", wide.pitch);
        assert_eq!(wide.left, 50.0);
        // Few rows: each stays a readable height, not stretched to fill.
        let few = Geometry::new(1_300.0, 3, false);
        assert_eq!(few.pitch, 14.0);
        assert_eq!(few.bottom() - few.top, few.pitch * 3.0);
        let axis = TimeAxis::new(1_000, 5);
        assert_eq!(wide.x(&axis, 0), wide.left);
        assert_eq!(wide.x(&axis, 1_000), wide.right);
        assert_eq!(wide.y(0), 24.0 + wide.pitch / 2.0);
    }
}
