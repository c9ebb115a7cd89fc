//! The shelf's books: where every unit of the stock is, live (from `reconciliation` frames)
//! and at the end (from the summary), and what a `reconcile` put right.
//!
//! `stock = available + held + sold + settling + leaked`. The server computes `leaked` as
//! whatever is left, so the sum always holds; what does not add up is the *variance*: units
//! that left the shelf and are neither held nor sold (`leaked`), and units promised beyond
//! the stock (a negative `available`). Both are zero for a strategy whose books are right.

use oversold_protocol::{LedgerKind, ReconcileReport, Reconciliation, RunSummary};

use crate::model::run::RunModel;

/// Where the numbers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The latest `reconciliation` frame of a run in flight.
    Live,
    /// The run's summary: Redis and the ledger read back at its end.
    Final,
}

/// Every unit of the stock, at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Books {
    /// Units on the shelf before the run.
    pub stock: u32,
    /// The available counter (negative: promised beyond the stock).
    pub available: i64,
    /// Units in active holds.
    pub held: i64,
    /// Active holds, when known (live frames count them; the summary does not).
    pub holds: Option<u32>,
    /// Units in the ledger's confirmed rows.
    pub sold: u64,
    /// Units confirmed in Redis whose ledger row is on its way.
    pub settling: i64,
    /// Units that left the shelf and are nowhere: not available, not held, not sold.
    pub leaked: i64,
    /// Units in backorder rows (fail-open during an outage): promised, never on the shelf.
    pub backorders: u64,
    /// The shop clock, ms after the gate.
    pub shop_ms: u64,
    /// The real clock, ms after the gate.
    pub real_ms: u64,
    /// Live or final.
    pub source: Source,
}

impl Books {
    /// The books a `reconciliation` frame states.
    pub fn live(r: &Reconciliation) -> Self {
        Self {
            stock: r.stock,
            available: r.available,
            held: r.held,
            holds: Some(r.holds),
            sold: r.sold,
            settling: r.settling,
            leaked: r.leaked,
            backorders: r.backorders,
            shop_ms: r.shop_ms,
            real_ms: r.real_ms,
            source: Source::Live,
        }
    }

    /// The books a checkout's summary states: `stock == final_stock + confirmed_units +
    /// held_units + leaked_units`. `None` for a race's summary.
    pub fn closing(s: &RunSummary) -> Option<Self> {
        let t = s.checkout.as_deref()?;
        Some(Self {
            stock: s.stock,
            available: s.final_stock,
            held: t.held_units as i64,
            holds: None,
            sold: t.confirmed_units,
            settling: 0,
            leaked: t.leaked_units,
            backorders: t.backorder_units,
            shop_ms: t.shop_ms,
            real_ms: t.real_ms,
            source: Source::Final,
        })
    }

    /// The shelf before anything happened: every unit available (a checkout that has not
    /// sent its first numbers yet, or the form's stock before any run).
    pub fn untouched(stock: u32) -> Self {
        Self {
            stock,
            available: stock.into(),
            held: 0,
            holds: Some(0),
            sold: 0,
            settling: 0,
            leaked: 0,
            backorders: 0,
            shop_ms: 0,
            real_ms: 0,
            source: Source::Live,
        }
    }

    /// The books of a checkout run: the summary's once it has one, else the latest live
    /// frame, else the untouched shelf. `None` for a race.
    pub fn of_run(run: &RunModel) -> Option<Self> {
        if !run.is_checkout() {
            return None;
        }
        Some(
            run.summary()
                .and_then(Self::closing)
                .or_else(|| run.checkout.latest.as_ref().map(Self::live))
                .unwrap_or_else(|| Self::untouched(run.config.race.stock)),
        )
    }

    /// The right-hand side: `available + held + sold + settling + leaked` (equal to the stock).
    pub fn total(&self) -> i64 {
        self.available + self.held + self.sold as i64 + self.settling + self.leaked
    }

    /// Units the books cannot place: left the shelf, neither held nor sold.
    pub fn variance(&self) -> i64 {
        self.leaked
    }

    /// Units promised beyond the stock: the available counter below zero.
    pub fn oversold(&self) -> u64 {
        u64::try_from(-self.available).unwrap_or(0)
    }

    /// True when every unit is where it should be: nothing leaked, nothing oversold.
    pub fn adds_up(&self) -> bool {
        self.variance() == 0 && self.oversold() == 0
    }

    /// The equation in words: `10 = 4 available + 3 held + 2 sold + 1 leaked` (`settling`
    /// only when there is some).
    pub fn equation(&self) -> String {
        let mut text = format!(
            "{} = {} available + {} held + {} sold",
            self.stock, self.available, self.held, self.sold
        );
        if self.settling != 0 {
            text.push_str(&format!(" + {} settling", self.settling));
        }
        text.push_str(&format!(" + {} leaked", self.leaked));
        text
    }
}

/// A checkout run's live state beyond its outcomes: the latest books, and what each
/// `reconcile` answered. Kept on the run it belongs to ([`crate::model::run::RunModel`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Live {
    /// The latest `reconciliation` frame.
    pub latest: Option<Reconciliation>,
    /// Every `reconciled` answer, oldest first.
    pub reports: Vec<ReconcileReport>,
    /// `reconciliation` frames received (a test hook: the numbers moved).
    pub frames: u32,
}

impl Live {
    /// A `reconciliation` frame arrived. Frames arrive in order; an older one (by the real
    /// clock) never replaces a newer one.
    pub fn observe(&mut self, r: Reconciliation) {
        self.frames += 1;
        if self.latest.is_none_or(|l| r.real_ms >= l.real_ms) {
            self.latest = Some(r);
        }
    }

    /// A `reconciled` answer arrived: its `after` is the freshest view of the shelf.
    pub fn reconciled(&mut self, report: ReconcileReport) {
        self.observe(report.after);
        self.reports.push(report);
    }
}

/// What a `reconcile` did, in one sentence: `Reconciled at shop 2:10: available 3 → 5, 2
/// units put back (sold 4, held 1).`
pub fn report_sentence(r: &ReconcileReport) -> String {
    let what = match r.fixed {
        0 => "nothing to fix".to_string(),
        n if n > 0 => format!("{} put back", units(n)),
        n => format!("{} taken off", units(-n)),
    };
    format!(
        "Reconciled at shop {}: available {} → {}, {what} (sold {}, held {}).",
        super::clock::shop_clock(r.after.shop_ms),
        r.available_before,
        r.available_after,
        r.sold,
        r.held
    )
}

/// Where the orders were settled, in words.
pub fn ledger_label(kind: LedgerKind) -> &'static str {
    match kind {
        LedgerKind::Postgres => "PostgreSQL",
        LedgerKind::Redis => "the Redis fallback (no PostgreSQL)",
    }
}

fn units(n: i64) -> String {
    super::super::text::count(n.unsigned_abs(), "unit")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::checkout::fixtures::{reconciliation, tally_summary};

    #[test]
    fn live_books_add_up_only_without_leaks_or_oversell() {
        let r = reconciliation(10, 4, 3, 2, 1);
        let b = Books::live(&r);
        assert_eq!(b.total(), 10);
        assert_eq!((b.variance(), b.oversold(), b.adds_up()), (1, 0, false));
        assert_eq!(
            b.equation(),
            "10 = 4 available + 3 held + 2 sold + 1 leaked"
        );
        let ok = Books::live(&reconciliation(10, 6, 0, 4, 0));
        assert!(ok.adds_up());
        // Naive: the counter went below zero; the sales never existed.
        let naive = Books::live(&reconciliation(10, -30, 0, 25, 15));
        assert_eq!(
            (naive.total(), naive.oversold(), naive.variance()),
            (10, 30, 15)
        );
        assert!(!naive.adds_up());
    }

    #[test]
    fn the_summary_states_the_closing_books() {
        let s = tally_summary(10, 6, 4, 0);
        let b = Books::closing(&s).unwrap();
        assert_eq!(
            (b.source, b.total(), b.adds_up()),
            (Source::Final, 10, true)
        );
        assert_eq!(
            Books::closing(&crate::model::fixtures::summary(10, 10, 0)),
            None
        );
        let mut settling = b;
        settling.settling = 2;
        settling.available -= 2;
        assert_eq!(
            settling.equation(),
            "10 = 4 available + 0 held + 4 sold + 2 settling + 0 leaked"
        );
    }

    #[test]
    fn a_runs_books_are_live_until_its_summary_and_none_for_a_race() {
        use crate::model::checkout::fixtures::checkout_config;
        let mut run = RunModel::new("r".into(), checkout_config(10, 50));
        assert_eq!(Books::of_run(&run), Some(Books::untouched(10)));
        run.checkout.observe(reconciliation(10, 4, 3, 2, 1));
        assert_eq!(
            Books::of_run(&run).map(|b| (b.source, b.held)),
            Some((Source::Live, 3))
        );
        run.finish(tally_summary(10, 6, 4, 0));
        assert_eq!(
            Books::of_run(&run).map(|b| (b.source, b.sold)),
            Some((Source::Final, 4))
        );
        let race = RunModel::new("r".into(), crate::model::fixtures::config(10, 50));
        assert_eq!(Books::of_run(&race), None);
    }

    #[test]
    fn live_keeps_the_newest_frame_and_every_report() {
        let mut live = Live::default();
        let mut late = reconciliation(10, 4, 3, 2, 1);
        late.real_ms = 500;
        let mut early = reconciliation(10, 9, 1, 0, 0);
        early.real_ms = 250;
        live.observe(late);
        live.observe(early);
        assert_eq!((live.latest, live.frames), (Some(late), 2));
        let mut after = reconciliation(10, 5, 3, 2, 0);
        after.real_ms = 600;
        after.shop_ms = 130_000;
        let report = ReconcileReport {
            available_before: 4,
            available_after: 5,
            fixed: 1,
            sold: 2,
            held: 3,
            after,
        };
        live.reconciled(report);
        assert_eq!(live.latest, Some(after));
        assert_eq!(
            report_sentence(&live.reports[0]),
            "Reconciled at shop 2:10: available 4 → 5, 1 unit put back (sold 2, held 3)."
        );
        let none = ReconcileReport { fixed: 0, ..report };
        assert!(report_sentence(&none).contains("nothing to fix"));
        let back = ReconcileReport {
            fixed: -2,
            ..report
        };
        assert!(report_sentence(&back).contains("2 units taken off"));
    }
}
