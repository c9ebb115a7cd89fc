//! The audit trail's filter and its virtual window: which rows exist, and which few are drawn.
//!
//! With 10,000 buyers the trail cannot be 10,000 DOM rows. Rows have one fixed height, so the
//! rows on screen follow from the scroll offset alone: [`visible_range`] is that arithmetic.

use std::ops::Range;

use oversold_protocol::BuyerOutcome;

use super::run::{AuditRow, Mark};

/// Which lines the trail shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AuditFilter {
    /// Every buyer.
    #[default]
    All,
    /// Every accepted order, oversold or not.
    Reserved,
    /// Only accepted orders that took units which never existed.
    Oversold,
    /// Only refusals.
    SoldOut,
    /// Only buyers that stopped waiting their turn.
    GaveUp,
    /// Only orders never answered (maybe applied).
    Unknown,
    /// Only failures.
    Error,
}

impl AuditFilter {
    /// The filter buttons, in display order.
    pub const ALL: [AuditFilter; 7] = [
        AuditFilter::All,
        AuditFilter::Reserved,
        AuditFilter::Oversold,
        AuditFilter::SoldOut,
        AuditFilter::GaveUp,
        AuditFilter::Unknown,
        AuditFilter::Error,
    ];

    /// The button label.
    pub fn label(self) -> &'static str {
        match self {
            AuditFilter::All => "All",
            AuditFilter::Reserved => "Reserved",
            AuditFilter::Oversold => "Oversold",
            AuditFilter::SoldOut => "Sold out",
            AuditFilter::GaveUp => "Gave up",
            AuditFilter::Unknown => "In doubt",
            AuditFilter::Error => "Error",
        }
    }

    /// The test hook's suffix: `audit-filter-sold-out`, `audit-filter-in-doubt`, …
    pub fn id(self) -> String {
        self.label().to_lowercase().replace(' ', "-")
    }

    /// Whether the button is worth showing: the rare endings (gave up, in doubt) only get one
    /// when the run has some, so the usual row of buttons stays short on a phone.
    pub fn shown(self, gave_up: u32, unknown: u32) -> bool {
        match self {
            AuditFilter::GaveUp => gave_up > 0,
            AuditFilter::Unknown => unknown > 0,
            _ => true,
        }
    }

    /// Whether `row` passes.
    pub fn matches(self, row: &AuditRow) -> bool {
        match self {
            AuditFilter::All => true,
            AuditFilter::Reserved => matches!(row.mark, Mark::Reserved | Mark::Oversold),
            AuditFilter::Oversold => row.mark == Mark::Oversold,
            AuditFilter::SoldOut => row.mark == Mark::SoldOut,
            AuditFilter::GaveUp => row.mark == Mark::GaveUp,
            AuditFilter::Unknown => row.mark == Mark::Unknown,
            AuditFilter::Error => row.mark == Mark::Error,
        }
    }
}

/// Positions (into `rows`) of the rows that pass `filter`, in arrival order.
pub fn filter_indices(rows: &[AuditRow], filter: AuditFilter) -> Vec<usize> {
    match filter {
        // The common case needs no scan.
        AuditFilter::All => (0..rows.len()).collect(),
        _ => rows
            .iter()
            .enumerate()
            .filter(|(_, r)| filter.matches(r))
            .map(|(i, _)| i)
            .collect(),
    }
}

/// The slice of `total` fixed-height rows to draw for a viewport scrolled to `scroll_top`,
/// with `overscan` extra rows on each side so fast scrolling does not flash blank space.
pub fn visible_range(
    total: usize,
    scroll_top: f64,
    viewport: f64,
    row_height: f64,
    overscan: usize,
) -> Range<usize> {
    if total == 0 || row_height <= 0.0 {
        return 0..0;
    }
    let first = (scroll_top.max(0.0) / row_height).floor() as usize;
    let shown = (viewport.max(0.0) / row_height).ceil() as usize + 1;
    let start = first.saturating_sub(overscan).min(total);
    let end = first
        .saturating_add(shown)
        .saturating_add(overscan)
        .min(total);
    start..end.max(start)
}

/// Tallest scroll area a list makes, px. Browsers stop laying out an element somewhere past
/// 16 million px (Firefox) or 33 million (Chromium), and a million rows of 30 px are 30
/// million: past this height the scroll bar moves through the rows proportionally instead.
pub const MAX_SCROLL_PX: f64 = 8_000_000.0;

/// A list of `total` rows of `row_height` px in a scroll area of at most [`MAX_SCROLL_PX`],
/// seen through a viewport `viewport` px tall.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TallList {
    /// Rows in the list.
    pub total: usize,
    /// Each row's height, px.
    pub row_height: f64,
    /// The viewport's height, px.
    pub viewport: f64,
}

impl TallList {
    /// The rows' full height, px.
    fn full(&self) -> f64 {
        self.total as f64 * self.row_height
    }

    /// The scroll area's height, px.
    pub fn height(&self) -> f64 {
        self.full().min(MAX_SCROLL_PX)
    }

    /// The row (fractional) at the top of the viewport when scrolled to `scroll_top`: the
    /// same fraction of the way through the rows as `scroll_top` is through the scroll area.
    pub fn top_row(&self, scroll_top: f64) -> f64 {
        let top = scroll_top.max(0.0);
        if self.full() <= MAX_SCROLL_PX || self.row_height <= 0.0 {
            return top / self.row_height.max(f64::MIN_POSITIVE);
        }
        let travel = (self.height() - self.viewport).max(1.0);
        let rows_travel = (self.full() - self.viewport).max(0.0) / self.row_height;
        (top / travel).min(1.0) * rows_travel
    }

    /// Where row `row` is drawn, px from the top of the scroll area, when scrolled to
    /// `scroll_top` (`row * row_height` while the list fits).
    pub fn row_px(&self, row: usize, scroll_top: f64) -> f64 {
        scroll_top.max(0.0) + (row as f64 - self.top_row(scroll_top)) * self.row_height
    }

    /// The rows to draw, as [`visible_range`] picks them.
    pub fn range(&self, scroll_top: f64, overscan: usize) -> Range<usize> {
        let top = self.top_row(scroll_top) * self.row_height;
        visible_range(self.total, top, self.viewport, self.row_height, overscan)
    }
}

/// One audit line as words: what the buyer read and what it did.
pub fn describe(row: &AuditRow) -> String {
    let o = &row.outcome;
    let units = if o.qty == 1 {
        "1 unit".to_string()
    } else {
        format!("{} units", o.qty)
    };
    match row.mark {
        Mark::Reserved => format!("took {units}"),
        Mark::Oversold if row.phantom_units == u64::from(o.qty) => {
            format!("took {units} that never existed")
        }
        Mark::Oversold => format!("took {units}, {} never existed", row.phantom_units),
        Mark::SoldOut => format!("wanted {units}, refused"),
        Mark::Error => format!(
            "failed: {}",
            o.error.as_deref().unwrap_or("no reason given")
        ),
        Mark::Unknown => format!(
            "ordered {units}, never answered: in doubt ({})",
            o.error.as_deref().unwrap_or("no reason given")
        ),
        Mark::GaveUp => format!(
            "gave up waiting, took nothing ({})",
            o.error.as_deref().unwrap_or("no reason given")
        ),
    }
}

/// The extra work a buyer did, when it did any: `2 retries · 9 round trips`. Strategies that
/// retry (WATCH, the lock) pay for contention here; the rest answer `None`.
pub fn effort(o: &BuyerOutcome) -> Option<String> {
    if o.retries == 0 {
        return None;
    }
    let retries = if o.retries == 1 {
        "1 retry".to_string()
    } else {
        format!("{} retries", o.retries)
    };
    Some(format!("{retries} · {} round trips", o.round_trips))
}

#[cfg(test)]
mod tall_tests {
    use super::*;

    #[test]
    fn a_short_list_scrolls_row_for_pixel_and_a_million_rows_fit_the_area() {
        let short = TallList {
            total: 10_000,
            row_height: 30.0,
            viewport: 420.0,
        };
        assert_eq!(short.height(), 300_000.0);
        assert_eq!(short.top_row(3_000.0), 100.0);
        assert_eq!(short.row_px(100, 3_000.0), 3_000.0);
        assert_eq!(short.range(3_000.0, 10), 90..125);

        let tall = TallList {
            total: 1_000_000,
            ..short
        };
        assert_eq!(tall.height(), MAX_SCROLL_PX);
        assert_eq!(tall.top_row(0.0), 0.0);
        // At the bottom, the last row's bottom edge meets the viewport's.
        let bottom = MAX_SCROLL_PX - 420.0;
        assert_eq!(tall.range(bottom, 0).end, 1_000_000);
        let last = tall.row_px(999_999, bottom);
        assert!((last + 30.0 - MAX_SCROLL_PX).abs() < 1e-6, "{last}");
        // Halfway down the bar is halfway through the rows, drawn where the viewport is.
        let half = bottom / 2.0;
        let top = tall.top_row(half);
        assert!((top - (1_000_000.0 - 14.0) / 2.0).abs() < 1.0, "{top}");
        let at = tall.row_px(top.floor() as usize, half);
        assert!(at <= half && at > half - 30.0, "{at} vs {half}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixtures::{config, outcome};
    use crate::model::run::RunModel;
    use oversold_protocol::OutcomeResult;

    fn sample() -> RunModel {
        let mut run = RunModel::new("r".into(), config(1, 7));
        let mut unknown = outcome(6, 3, OutcomeResult::Unknown);
        unknown.error = Some("timed out".into());
        let mut gave_up = outcome(7, 1, OutcomeResult::GaveUp);
        gave_up.error = Some("lock busy for 2 s".into());
        run.push_batch(vec![
            outcome(1, 1, OutcomeResult::Reserved),
            outcome(2, 1, OutcomeResult::Reserved),
            outcome(3, 1, OutcomeResult::SoldOut),
            outcome(4, 1, OutcomeResult::Error),
            outcome(5, 2, OutcomeResult::Reserved),
            unknown,
            gave_up,
        ]);
        run
    }

    #[test]
    fn filters_by_outcome() {
        let run = sample();
        let pick = |f| filter_indices(&run.rows, f);
        assert_eq!(pick(AuditFilter::All), [0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(pick(AuditFilter::Reserved), [0, 1, 4]);
        assert_eq!(pick(AuditFilter::Oversold), [1, 4]);
        assert_eq!(pick(AuditFilter::SoldOut), [2]);
        assert_eq!(pick(AuditFilter::Error), [3]);
        assert_eq!(pick(AuditFilter::Unknown), [5]);
        assert_eq!(pick(AuditFilter::GaveUp), [6]);
        // Units in doubt are not sold: they do not push later orders into "oversold".
        assert_eq!((run.tally.units_sold, run.tally.in_doubt_units), (4, 3));
    }

    #[test]
    fn the_rare_endings_get_a_button_only_when_they_happened() {
        let ids: Vec<String> = AuditFilter::ALL
            .iter()
            .filter(|f| f.shown(0, 0))
            .map(|f| f.id())
            .collect();
        assert_eq!(ids, ["all", "reserved", "oversold", "sold-out", "error"]);
        assert!(AuditFilter::GaveUp.shown(1, 0) && !AuditFilter::Unknown.shown(1, 0));
        assert_eq!(AuditFilter::Unknown.id(), "in-doubt");
        assert_eq!(AuditFilter::GaveUp.id(), "gave-up");
    }

    #[test]
    fn describes_each_kind_of_line() {
        let run = sample();
        let words: Vec<String> = run.rows.iter().map(describe).collect();
        assert_eq!(
            words,
            [
                "took 1 unit",
                "took 1 unit that never existed",
                "wanted 1 unit, refused",
                "failed: no reason given",
                "took 2 units that never existed",
                "ordered 3 units, never answered: in doubt (timed out)",
                "gave up waiting, took nothing (lock busy for 2 s)",
            ]
        );
    }

    #[test]
    fn says_how_hard_a_buyer_had_to_try() {
        let mut o = outcome(1, 1, OutcomeResult::Reserved);
        assert_eq!(effort(&o), None);
        o.retries = 1;
        o.round_trips = 5;
        assert_eq!(effort(&o).as_deref(), Some("1 retry · 5 round trips"));
        o.retries = 4;
        o.round_trips = 13;
        assert_eq!(effort(&o).as_deref(), Some("4 retries · 13 round trips"));
    }

    #[test]
    fn window_covers_the_viewport_plus_overscan() {
        // 28 px rows, 280 px viewport scrolled to row 100.
        assert_eq!(visible_range(10_000, 2_800.0, 280.0, 28.0, 5), 95..116);
        // At the top, nothing before row 0.
        assert_eq!(visible_range(10_000, 0.0, 280.0, 28.0, 5), 0..16);
        // Near the end, clipped to the rows that exist.
        assert_eq!(visible_range(50, 1_260.0, 280.0, 28.0, 5), 40..50);
        // Scrolled past the end (the filter just shrank the list): still a valid empty-or-tail range.
        let r = visible_range(3, 9_999.0, 280.0, 28.0, 5);
        assert!(r.start <= r.end && r.end <= 3);
        assert_eq!(visible_range(0, 0.0, 280.0, 28.0, 5), 0..0);
    }
}
