//! One run as the page sees it: its config, every buyer's outcome in arrival order, live tallies.
//!
//! The server streams outcomes in batches; [`RunModel::push_batch`] folds each batch in once,
//! so the UI holds one plain `Vec` and re-renders once per batch, never once per buyer.

use oversold_protocol::{BuyerOutcome, OutcomeResult, RunConfig, RunSummary};

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
    /// The buyer's request failed.
    Error,
}

impl Mark {
    /// The short word shown in the audit trail and used as a CSS class.
    pub fn as_str(self) -> &'static str {
        match self {
            Mark::Reserved => "reserved",
            Mark::Oversold => "oversold",
            Mark::SoldOut => "sold out",
            Mark::Error => "error",
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
    /// The server reported `run_failed`.
    Failed(String),
}

impl Phase {
    /// The word shown in `run-status`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Phase::Running => "running",
            Phase::Finished(_) => "finished",
            Phase::Interrupted => "interrupted",
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
    /// Units across accepted orders so far.
    pub units_sold: u64,
    /// Accepted orders so far.
    pub orders_accepted: u32,
    /// Sold-out answers so far.
    pub rejected: u32,
    /// Failed buyers so far.
    pub errors: u32,
    /// `(end_us, stock_after)` of the accepted order that answered last: the counter as last written.
    pub last_write: Option<(u64, i64)>,
    /// Where the run stands.
    pub phase: Phase,
}

impl RunModel {
    /// A run that has just started: nothing sold yet.
    pub fn new(run_id: String, config: RunConfig) -> Self {
        Self {
            run_id,
            config,
            rows: Vec::new(),
            sales: Vec::new(),
            units_sold: 0,
            orders_accepted: 0,
            rejected: 0,
            errors: 0,
            last_write: None,
            phase: Phase::Running,
        }
    }

    /// Fold in one `outcomes` frame.
    pub fn push_batch(&mut self, outcomes: Vec<BuyerOutcome>) {
        let stock = u64::from(self.config.stock);
        self.rows.reserve(outcomes.len());
        for outcome in outcomes {
            let (mark, phantom_units) = match outcome.result {
                OutcomeResult::Reserved => {
                    let before = self.units_sold;
                    let after = before + u64::from(outcome.qty);
                    self.sales.push(Sale {
                        buyer: outcome.buyer,
                        first_unit: before,
                        qty: outcome.qty,
                    });
                    self.units_sold = after;
                    self.orders_accepted += 1;
                    if let Some(written) = outcome.stock_after
                        && self.last_write.is_none_or(|(t, _)| outcome.end_us >= t)
                    {
                        self.last_write = Some((outcome.end_us, written));
                    }
                    // Units numbered `stock..` never existed; count how many of ours are there.
                    let phantom = after.saturating_sub(before.max(stock));
                    if phantom > 0 {
                        (Mark::Oversold, phantom)
                    } else {
                        (Mark::Reserved, 0)
                    }
                }
                OutcomeResult::SoldOut => {
                    self.rejected += 1;
                    (Mark::SoldOut, 0)
                }
                OutcomeResult::Error => {
                    self.errors += 1;
                    (Mark::Error, 0)
                }
            };
            self.rows.push(AuditRow {
                seq: self.rows.len(),
                outcome,
                mark,
                phantom_units,
            });
        }
    }

    /// `run_finished` arrived.
    pub fn finish(&mut self, summary: RunSummary) {
        self.phase = Phase::Finished(summary);
    }

    /// The socket dropped mid-run. A run already over stays as it was.
    pub fn interrupt(&mut self) {
        if self.phase == Phase::Running {
            self.phase = Phase::Interrupted;
        }
    }

    /// The server reported `run_failed` for this run.
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
        self.rows.len()
    }

    /// The summary, once the run finished.
    pub fn summary(&self) -> Option<&RunSummary> {
        match &self.phase {
            Phase::Finished(s) => Some(s),
            _ => None,
        }
    }

    /// Live tallies while running; the server's summary (stock read back from Redis) after.
    pub fn counters(&self) -> Counters {
        let stock = u64::from(self.config.stock);
        match self.summary() {
            Some(s) => Counters {
                stock_remaining: s.final_stock,
                units_sold: s.units_sold,
                orders_accepted: s.orders_accepted,
                oversold_units: s.oversold_units,
                rejected: s.rejected,
                errors: s.errors,
                lost_updates: s.lost_updates,
            },
            None => Counters {
                // Without a reported write (no order accepted yet), the arithmetic is all we have.
                stock_remaining: self.last_write.map_or_else(
                    || i64::from(self.config.stock) - self.units_sold as i64,
                    |(_, written)| written,
                ),
                units_sold: self.units_sold,
                orders_accepted: self.orders_accepted,
                oversold_units: self.units_sold.saturating_sub(stock),
                rejected: self.rejected,
                errors: self.errors,
                lost_updates: 0,
            },
        }
    }

    /// Which buyer holds unit `unit` (0-based, in the order units were sold), if it is sold.
    pub fn buyer_for_unit(&self, unit: u64) -> Option<u32> {
        if unit >= self.units_sold {
            return None;
        }
        // `sales` is sorted by `first_unit`; find the last order starting at or before `unit`.
        let i = self.sales.partition_point(|s| s.first_unit <= unit);
        self.sales.get(i.checked_sub(1)?).map(|s| s.buyer)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use oversold_protocol::LatencySummary;

    pub(crate) fn config(stock: u32, buyers: u32) -> RunConfig {
        RunConfig {
            strategy: "naive".into(),
            stock,
            buyers,
            qty: 1,
            max_qty: None,
            app_servers: 8,
            arrival_spread_ms: 0,
            race_window_ms: 0,
            seed: 7,
        }
    }

    pub(crate) fn outcome(buyer: u32, qty: u32, result: OutcomeResult) -> BuyerOutcome {
        BuyerOutcome {
            buyer,
            app_server: buyer % 8,
            qty,
            observed_stock: Some(5),
            result,
            error: None,
            stock_after: None,
            latency_us: 100,
            start_us: 0,
            end_us: 100,
            read_us: None,
            round_trips: 2,
            retries: 0,
            bucket: None,
        }
    }

    pub(crate) fn summary(stock: u32, units_sold: u64, final_stock: i64) -> RunSummary {
        RunSummary {
            strategy: "naive".into(),
            stock,
            buyers: 50,
            orders_accepted: units_sold as u32,
            units_sold,
            final_stock,
            oversold_units: units_sold.saturating_sub(u64::from(stock)),
            lost_updates: 0,
            rejected: 0,
            errors: 0,
            duration_ms: 12.0,
            throughput_per_s: 4000.0,
            latency: LatencySummary::default(),
            round_trips: 100,
            retries: 0,
            cancelled: false,
        }
    }

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
            }
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
        assert_eq!(run.last_write, Some((500, 8)));
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
