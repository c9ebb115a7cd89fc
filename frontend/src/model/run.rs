//! One run as the page sees it: its config, every buyer's outcome in arrival order, live tallies.
//!
//! The server streams outcomes in batches; [`RunModel::push_batch`] folds each batch in once,
//! so the UI holds one plain `Vec` and re-renders once per batch, never once per buyer.
//!
//! A race at scale (past `LIVE_OUTCOMES_MAX` buyers) sends no outcomes: the page keeps the
//! server's running totals ([`RunModel::progress`]) and the audit rows in view
//! ([`RunModel::audit_window`]), asked for a page at a time.

use oversold_protocol::at_scale::{AuditRows, RunProgress, streams_progress};
use oversold_protocol::{BuyerOutcome, OutcomeResult, RunConfig, RunSummary, Scenario};

use super::checkout::books::Live;

/// How an audit line is flagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mark {
    /// An accepted order whose units all existed.
    Reserved,
    /// An accepted order that took the running total of units sold past the initial stock:
    /// at least one of its units never existed.
    Oversold,
    /// The strategy saw too little stock and refused.
    SoldOut,
    /// The buyer's request failed before it could take effect; nothing was taken.
    Error,
    /// The write was sent but never answered: it may or may not have been applied, so its
    /// units are "in doubt" (never counted as sold).
    Unknown,
    /// The buyer stopped waiting for its turn (a lock, optimistic retries) and took nothing.
    GaveUp,
}

impl Mark {
    /// The short word shown in the audit trail and used as a CSS class.
    pub fn as_str(self) -> &'static str {
        match self {
            Mark::Reserved => "reserved",
            Mark::Oversold => "oversold",
            Mark::SoldOut => "sold out",
            Mark::Error => "error",
            Mark::Unknown => "in doubt",
            Mark::GaveUp => "gave up",
        }
    }

    /// True for an accepted order (its units count as sold, real or not).
    pub fn is_sale(self) -> bool {
        matches!(self, Mark::Reserved | Mark::Oversold)
    }
}

/// One buyer's line in the audit trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRow {
    /// 0-based position in arrival order (the order outcomes reached the page).
    pub seq: usize,
    /// What the server reported.
    pub outcome: BuyerOutcome,
    /// How the line is flagged.
    pub mark: Mark,
    /// Units of this order beyond the initial stock (0 unless `mark` is `Oversold`).
    pub phantom_units: u64,
}

/// An accepted order's place in the line of units sold, for finding who holds a given unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sale {
    /// The buyer number.
    pub buyer: u32,
    /// Index (0-based) of the first unit this order took, counting accepted orders in arrival order.
    pub first_unit: u64,
    /// Units in the order.
    pub qty: u32,
}

/// Where a run stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Phase {
    /// Outcomes are still arriving.
    Running,
    /// `run_finished` arrived; the summary holds the stock read back from Redis.
    Finished(RunSummary),
    /// The WebSocket dropped before `run_finished`; what we have is all we will get.
    Interrupted,
    /// `run_cancelled` arrived: buyers not yet started were skipped. The summary of those that
    /// ran, when the server could read the stock back.
    Cancelled(Option<RunSummary>),
    /// An `error` frame carrying this run's id ended it (`run_failed`, `redis_unavailable`, …).
    Failed(String),
}

impl Phase {
    /// The word shown in `run-status`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Phase::Running => "running",
            Phase::Finished(_) => "finished",
            Phase::Interrupted => "interrupted",
            Phase::Cancelled(_) => "cancelled",
            Phase::Failed(_) => "failed",
        }
    }
}

/// The numbers above the inventory grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    /// Units left: live, the value the latest accepted order wrote (a GET-then-SET run's
    /// counter stays up while sales pile on); Redis' own `final_stock` once finished.
    pub stock_remaining: i64,
    /// Units across accepted orders.
    pub units_sold: u64,
    /// Accepted orders.
    pub orders_accepted: u32,
    /// Units sold that never existed.
    pub oversold_units: u64,
    /// Orders refused as sold out.
    pub rejected: u32,
    /// Orders that failed.
    pub errors: u32,
    /// Orders sent but never answered (maybe applied).
    pub unknown: u32,
    /// Units across those unanswered orders: in doubt, not counted as sold.
    pub in_doubt_units: u64,
    /// Buyers that stopped waiting their turn and took nothing.
    pub gave_up: u32,
    /// Refusals that provably left units behind (an undersell); known once the run is over.
    pub false_sold_out: u32,
    /// Sales the counter forgot (writes that overwrote each other); known once Redis is read back.
    pub lost_updates: i64,
}

/// The page's copy of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunModel {
    /// The server's id for the run.
    pub run_id: String,
    /// The configuration with defaults filled in, as echoed in `run_started`.
    pub config: RunConfig,
    /// One line per buyer, in arrival order.
    pub rows: Vec<AuditRow>,
    /// Accepted orders, in arrival order (a subset of `rows`, kept for tile lookups).
    pub sales: Vec<Sale>,
    /// The tallies so far: added up from `rows` as they arrive, or, for a race at scale
    /// (which sends no outcomes), the server's own, added up the same way
    /// ([`RunProgress::add`]).
    pub tally: RunProgress,
    /// Where the run stands.
    pub phase: Phase,
    /// A checkout's live books and `reconcile` answers (empty in a race).
    pub checkout: Live,
    /// A race at scale: the audit rows the server sent last, for the window on screen.
    pub audit_window: AuditWindow,
}

/// The audit rows of a race at scale that the page holds: one page, in arrival order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditWindow {
    /// The position of `rows[0]` in the server's record.
    pub from: usize,
    /// The rows, flagged as the page flags its own.
    pub rows: Vec<AuditRow>,
}

impl AuditWindow {
    /// The rows of `range` when this page holds all of them.
    pub fn covers(&self, range: &std::ops::Range<usize>) -> bool {
        range.start >= self.from && range.end <= self.from + self.rows.len()
    }
}

/// How an outcome's line is flagged, given the units accepted orders took before it (in
/// arrival order) and the initial stock: the flag and the units of it that never existed.
pub fn mark(outcome: &BuyerOutcome, units_before: u64, stock: u64) -> (Mark, u64) {
    match outcome.result {
        OutcomeResult::Reserved => {
            let after = units_before + u64::from(outcome.qty);
            // Units numbered `stock..` never existed; count how many of ours are there.
            let phantom = after.saturating_sub(units_before.max(stock));
            if phantom > 0 {
                (Mark::Oversold, phantom)
            } else {
                (Mark::Reserved, 0)
            }
        }
        OutcomeResult::SoldOut => (Mark::SoldOut, 0),
        OutcomeResult::Error => (Mark::Error, 0),
        OutcomeResult::Unknown => (Mark::Unknown, 0),
        OutcomeResult::GaveUp => (Mark::GaveUp, 0),
    }
}

impl RunModel {
    /// A run that has just started: nothing sold yet.
    pub fn new(run_id: String, config: RunConfig) -> Self {
        Self {
            run_id,
            config,
            rows: Vec::new(),
            sales: Vec::new(),
            tally: RunProgress::default(),
            phase: Phase::Running,
            checkout: Live::default(),
            audit_window: AuditWindow::default(),
        }
    }

    /// True for a race at scale: totals and a paged audit instead of outcomes.
    pub fn at_scale(&self) -> bool {
        streams_progress(self.config.race.buyers)
    }

    /// What the tape and the timeline say instead of drawing a race at scale: one sentence,
    /// its count the same as the audit's.
    pub fn at_scale_caption(&self) -> String {
        use super::text::thousands;
        let so_far = if self.is_running() { " so far" } else { "" };
        format!(
            "{} buyers is past the {} the page draws one by one: the counters and the audit \
             (read from the server a page at a time) tell this race. {} of them answered{so_far}.",
            thousands(i64::from(self.config.race.buyers)),
            thousands(i64::from(oversold_protocol::at_scale::LIVE_OUTCOMES_MAX)),
            thousands(self.finished_buyers() as i64),
        )
    }

    /// The stock an order is held against when flagging it: a cart's units come off several
    /// shelves, each with its own stock, so no order is a phantom by the run's total (each
    /// shelf's own oversell is `model::carts`'s to show).
    fn stock_for_marks(&self) -> u64 {
        match super::carts::is_multi_key(&self.config) {
            true => u64::MAX,
            false => u64::from(self.config.race.stock),
        }
    }

    /// A page of a race at scale's audit, as the server sent it.
    pub fn audit_rows(&mut self, page: AuditRows) {
        let stock = self.stock_for_marks();
        let mut units = page.units_sold_before;
        let from = page.from as usize;
        let rows = page
            .outcomes
            .into_iter()
            .enumerate()
            .map(|(i, outcome)| {
                let (mark, phantom_units) = mark(&outcome, units, stock);
                if outcome.result == OutcomeResult::Reserved {
                    units += u64::from(outcome.qty);
                }
                AuditRow {
                    seq: from + i,
                    outcome,
                    mark,
                    phantom_units,
                }
            })
            .collect();
        self.audit_window = AuditWindow { from, rows };
    }

    /// True for a run of the checkout scenario.
    pub fn is_checkout(&self) -> bool {
        self.config.race.scenario() == Scenario::Checkout
    }

    /// Fold in one `outcomes` frame.
    pub fn push_batch(&mut self, outcomes: Vec<BuyerOutcome>) {
        let stock = self.stock_for_marks();
        self.rows.reserve(outcomes.len());
        for outcome in outcomes {
            let (mark, phantom_units) = mark(&outcome, self.tally.units_sold, stock);
            if outcome.result == OutcomeResult::Reserved {
                self.sales.push(Sale {
                    buyer: outcome.buyer,
                    first_unit: self.tally.units_sold,
                    qty: outcome.qty,
                });
            }
            self.tally.add(&outcome);
            self.rows.push(AuditRow {
                seq: self.rows.len(),
                outcome,
                mark,
                phantom_units,
            });
        }
    }

    /// A race at scale's running totals arrived: they stand in for the outcomes it does not
    /// send.
    pub fn progress(&mut self, progress: RunProgress) {
        self.tally = progress;
    }

    /// `run_finished` arrived. Only a running run can finish: a terminal frame ends it once.
    pub fn finish(&mut self, summary: RunSummary) {
        if self.is_running() {
            self.phase = Phase::Finished(summary);
        }
    }

    /// `run_cancelled` arrived.
    pub fn cancel(&mut self, summary: Option<RunSummary>) {
        if self.is_running() {
            self.phase = Phase::Cancelled(summary);
        }
    }

    /// The socket dropped mid-run. A run already over stays as it was.
    pub fn interrupt(&mut self) {
        if self.phase == Phase::Running {
            self.phase = Phase::Interrupted;
        }
    }

    /// An `error` frame carrying this run's id arrived.
    pub fn fail(&mut self, message: String) {
        if self.phase == Phase::Running {
            self.phase = Phase::Failed(message);
        }
    }

    /// True while outcomes may still arrive.
    pub fn is_running(&self) -> bool {
        self.phase == Phase::Running
    }

    /// Buyers that have answered so far.
    pub fn finished_buyers(&self) -> usize {
        self.tally.buyers_done as usize
    }

    /// The server's summary, once the run finished (or was cancelled with one).
    pub fn summary(&self) -> Option<&RunSummary> {
        match &self.phase {
            Phase::Finished(s) | Phase::Cancelled(Some(s)) => Some(s),
            _ => None,
        }
    }

    /// Live tallies while running; the server's summary (stock read back from Redis) after.
    pub fn counters(&self) -> Counters {
        let stock = u64::from(self.config.race.stock);
        match self.summary() {
            Some(s) => Counters {
                stock_remaining: s.final_stock,
                units_sold: s.units_sold,
                orders_accepted: s.orders_accepted,
                oversold_units: s.oversold_units,
                rejected: s.rejected,
                errors: s.errors,
                unknown: s.unknown,
                in_doubt_units: s.in_doubt_units,
                gave_up: s.gave_up,
                false_sold_out: s.false_sold_out,
                lost_updates: s.lost_updates,
            },
            None => {
                let t = &self.tally;
                Counters {
                    // Without a reported write (no order accepted yet), the arithmetic is all
                    // we have.
                    stock_remaining: t.last_write.map_or_else(
                        || i64::from(self.config.race.stock) - t.units_sold as i64,
                        |(_, written)| written,
                    ),
                    units_sold: t.units_sold,
                    orders_accepted: t.orders_accepted,
                    oversold_units: t.units_sold.saturating_sub(stock),
                    rejected: t.rejected,
                    errors: t.errors,
                    unknown: t.unknown,
                    in_doubt_units: t.in_doubt_units,
                    gave_up: t.gave_up,
                    // Only the server can tell, from the stock it reads back at the end.
                    false_sold_out: 0,
                    lost_updates: 0,
                }
            }
        }
    }

    /// Which buyer holds unit `unit` (0-based, in the order units were sold), if it is sold.
    pub fn buyer_for_unit(&self, unit: u64) -> Option<u32> {
        if unit >= self.tally.units_sold {
            return None;
        }
        // `sales` is sorted by `first_unit`; find the last order starting at or before `unit`.
        let i = self.sales.partition_point(|s| s.first_unit <= unit);
        self.sales.get(i.checked_sub(1)?).map(|s| s.buyer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixtures::{config, outcome, summary};

    #[test]
    fn marks_orders_past_the_stock_as_oversold_in_arrival_order() {
        let mut run = RunModel::new("r-1".into(), config(3, 6));
        run.push_batch(vec![
            outcome(4, 1, OutcomeResult::Reserved),
            outcome(2, 1, OutcomeResult::SoldOut),
            outcome(1, 1, OutcomeResult::Reserved),
        ]);
        run.push_batch(vec![
            outcome(6, 1, OutcomeResult::Reserved),
            outcome(3, 1, OutcomeResult::Reserved),
            outcome(5, 1, OutcomeResult::Error),
        ]);
        let marks: Vec<Mark> = run.rows.iter().map(|r| r.mark).collect();
        assert_eq!(
            marks,
            [
                Mark::Reserved,
                Mark::SoldOut,
                Mark::Reserved,
                Mark::Reserved,
                Mark::Oversold,
                Mark::Error
            ]
        );
        assert_eq!(
            run.rows.iter().map(|r| r.seq).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4, 5]
        );
        let c = run.counters();
        assert_eq!(
            c,
            Counters {
                stock_remaining: -1,
                units_sold: 4,
                orders_accepted: 4,
                oversold_units: 1,
                rejected: 1,
                errors: 1,
                lost_updates: 0,
                ..Counters::default()
            }
        );
    }

    #[test]
    fn unanswered_and_given_up_orders_are_counted_apart_from_sales() {
        let mut run = RunModel::new("r-1".into(), config(2, 5));
        run.push_batch(vec![
            outcome(1, 1, OutcomeResult::Reserved),
            outcome(2, 2, OutcomeResult::Unknown),
            outcome(3, 1, OutcomeResult::GaveUp),
            outcome(4, 1, OutcomeResult::Reserved),
            outcome(5, 1, OutcomeResult::Reserved),
        ]);
        let marks: Vec<&str> = run.rows.iter().map(|r| r.mark.as_str()).collect();
        // Units in doubt are not sold, so they do not push buyer 5 past the stock.
        assert_eq!(
            marks,
            ["reserved", "in doubt", "gave up", "reserved", "oversold"]
        );
        let live = run.counters();
        assert_eq!(
            (live.units_sold, live.oversold_units, live.unknown),
            (3, 1, 1)
        );
        assert_eq!(
            (live.in_doubt_units, live.gave_up, live.false_sold_out),
            (2, 1, 0)
        );
        // Only the server knows which refusals left units behind: the summary says.
        let mut done = summary(2, 3, -1);
        done.unknown = 1;
        done.in_doubt_units = 2;
        done.gave_up = 1;
        done.false_sold_out = 4;
        run.finish(done);
        let end = run.counters();
        assert_eq!(
            (end.in_doubt_units, end.gave_up, end.false_sold_out),
            (2, 1, 4)
        );
    }

    #[test]
    fn an_order_straddling_the_stock_counts_only_its_phantom_units() {
        let mut run = RunModel::new("r-1".into(), config(3, 3));
        run.push_batch(vec![
            outcome(1, 2, OutcomeResult::Reserved),
            outcome(2, 2, OutcomeResult::Reserved), // units 2 and 3: unit 3 never existed
            outcome(3, 2, OutcomeResult::Reserved), // units 4 and 5: both phantom
        ]);
        let phantom: Vec<u64> = run.rows.iter().map(|r| r.phantom_units).collect();
        assert_eq!(phantom, [0, 1, 2]);
        assert_eq!(run.rows[1].mark, Mark::Oversold);
        assert_eq!(run.counters().oversold_units, 3);
    }

    #[test]
    fn a_live_counter_shows_the_last_write_so_a_lost_update_stays_up() {
        // GET-then-SET: three buyers all read 10 and all write 9; the last answer wins.
        let mut run = RunModel::new("r-1".into(), config(10, 3));
        let mut batch: Vec<BuyerOutcome> = (1..=3)
            .map(|b| {
                let mut o = outcome(b, 1, OutcomeResult::Reserved);
                o.stock_after = Some(9);
                o.end_us = 100 + u64::from(b);
                o
            })
            .collect();
        // The answer that arrived first in the frame finished last.
        batch[0].end_us = 500;
        batch[0].stock_after = Some(8);
        run.push_batch(batch);
        assert_eq!(run.tally.last_write, Some((500, 8)));
        let c = run.counters();
        assert_eq!(
            (c.stock_remaining, c.units_sold, c.orders_accepted),
            (8, 3, 3)
        );
        let mut done = summary(10, 3, 9);
        done.lost_updates = 2;
        run.finish(done);
        assert_eq!(run.counters().lost_updates, 2);
        assert_eq!(run.counters().stock_remaining, 9);
    }

    #[test]
    fn finds_the_buyer_holding_each_unit() {
        let mut run = RunModel::new("r-1".into(), config(10, 3));
        run.push_batch(vec![
            outcome(7, 2, OutcomeResult::Reserved),
            outcome(8, 1, OutcomeResult::SoldOut),
            outcome(9, 3, OutcomeResult::Reserved),
        ]);
        let holders: Vec<Option<u32>> = (0..6).map(|u| run.buyer_for_unit(u)).collect();
        assert_eq!(holders, [Some(7), Some(7), Some(9), Some(9), Some(9), None]);
    }

    #[test]
    fn summary_replaces_live_numbers_and_interrupt_keeps_finished_runs() {
        let mut run = RunModel::new("r-1".into(), config(10, 50));
        run.push_batch(
            (1..=12)
                .map(|b| {
                    let mut o = outcome(b, 1, OutcomeResult::Reserved);
                    o.stock_after = Some(10 - i64::from(b));
                    o.end_us = u64::from(b) * 10;
                    o
                })
                .collect(),
        );
        assert_eq!(run.counters().stock_remaining, -2);
        assert_eq!(run.phase.as_str(), "running");
        // Redis is the authority at the end: a lost update shows up as a different final stock.
        run.finish(summary(10, 12, 0));
        assert_eq!(run.counters().stock_remaining, 0);
        assert_eq!(run.counters().oversold_units, 2);
        run.interrupt();
        assert_eq!(run.phase.as_str(), "finished");

        let mut cut = RunModel::new("r-2".into(), config(10, 50));
        cut.interrupt();
        assert_eq!(cut.phase, Phase::Interrupted);
        cut.fail("late".into());
        assert_eq!(cut.phase, Phase::Interrupted);
    }
}
