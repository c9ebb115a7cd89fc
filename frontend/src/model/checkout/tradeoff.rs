//! Fail closed or fail open: what a checkout with an outage traded, in numbers. Closed
//! refuses orders while Redis is unreachable (sales lost, nothing promised that is not
//! there); open takes backorders (no sale lost, and maybe more promised than the stock).

use oversold_protocol::{CheckoutConfig, FailMode, RunSummary};

use super::super::text::count;
use super::clock::{shop_clock, shop_span};

/// One run's side of the trade.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TradeOff {
    /// What the shop did while Redis was unreachable.
    pub mode: FailMode,
    /// How long Redis was paused, shop ms.
    pub outage_ms: u32,
    /// When, shop ms after the gate.
    pub outage_at_ms: u32,
    /// Orders refused while Redis was unreachable.
    pub refused: u32,
    /// Units taken as backorders.
    pub backorder_units: u64,
    /// Of the confirmed and backordered units, those beyond the stock.
    pub overage_units: u64,
}

impl TradeOff {
    /// The trade a run made; `None` unless it had an outage (and is a checkout).
    pub fn of(config: &CheckoutConfig, s: &RunSummary) -> Option<Self> {
        let t = s.checkout.as_deref()?;
        (config.outage_ms > 0).then_some(Self {
            mode: config.fail_mode,
            outage_ms: config.outage_ms,
            outage_at_ms: config.outage_at_ms,
            refused: t.refused_unreachable,
            backorder_units: t.backorder_units,
            overage_units: t.overage_units,
        })
    }

    /// The trade in one sentence.
    pub fn sentence(&self) -> String {
        let paused = format!(
            "Redis paused for {} at shop {}",
            shop_span(self.outage_ms.into()),
            shop_clock(self.outage_at_ms.into())
        );
        match self.mode {
            FailMode::Closed => format!(
                "Fail closed: {paused}; {} refused and asked to try again: sales lost, nothing promised that is not there.",
                count(self.refused.into(), "order")
            ),
            FailMode::Open => format!(
                "Fail open: {paused}; {} taken as backorders, {} beyond the stock: no sale lost, {} promised that are not there.",
                count(self.backorder_units, "unit"),
                self.overage_units,
                count(self.overage_units, "unit")
            ),
        }
    }
}

/// The latest run with an outage in each fail mode, `[closed, open]`, from finished runs
/// newest first (a summary, and its checkout config when the page kept it): the two sides of
/// the trade, side by side.
pub fn both_sides<'a>(
    runs: impl Iterator<Item = (&'a RunSummary, Option<&'a CheckoutConfig>)>,
) -> [Option<TradeOff>; 2] {
    let mut sides = [None, None];
    for (s, c) in runs {
        if let Some(t) = c.and_then(|c| TradeOff::of(c, s)) {
            let side = &mut sides[usize::from(t.mode == FailMode::Open)];
            if side.is_none() {
                *side = Some(t);
            }
        }
    }
    sides
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::checkout::fixtures::{checkout_config, tally_summary};

    #[test]
    fn only_an_outage_makes_a_trade() {
        let s = tally_summary(10, 6, 4, 0);
        let mut config = checkout_config(10, 50).race.checkout().unwrap().clone();
        assert_eq!(TradeOff::of(&config, &s), None);
        config.outage_ms = 60_000;
        config.outage_at_ms = 90_000;
        let mut s = s;
        s.checkout.as_deref_mut().unwrap().refused_unreachable = 7;
        let t = TradeOff::of(&config, &s).unwrap();
        assert_eq!(
            (t.mode, t.refused, t.backorder_units),
            (FailMode::Closed, 7, 0)
        );
        assert_eq!(
            t.sentence(),
            "Fail closed: Redis paused for 1 min at shop 1:30; 7 orders refused and asked to try again: sales lost, nothing promised that is not there."
        );
    }

    #[test]
    fn the_latest_run_of_each_mode_makes_the_two_sides() {
        let base = checkout_config(10, 50).race.checkout().unwrap().clone();
        let with = |mode, outage| CheckoutConfig {
            fail_mode: mode,
            outage_ms: outage,
            ..base.clone()
        };
        let mut refused = tally_summary(10, 6, 4, 0);
        refused.checkout.as_deref_mut().unwrap().refused_unreachable = 19;
        let mut open = tally_summary(10, 4, 6, 0);
        let t = open.checkout.as_deref_mut().unwrap();
        t.backorder_units = 12;
        t.overage_units = 8;
        let (new_closed, old_open, older_closed, no_outage) = (
            with(FailMode::Closed, 50_000),
            with(FailMode::Open, 50_000),
            with(FailMode::Closed, 10_000),
            with(FailMode::Open, 0),
        );
        let plain = tally_summary(10, 6, 4, 0);
        // Newest first: a run without an outage, then closed, open, an older closed.
        let runs = [
            (&plain, Some(&no_outage)),
            (&refused, Some(&new_closed)),
            (&plain, None),
            (&open, Some(&old_open)),
            (&plain, Some(&older_closed)),
        ];
        let [closed, open] = both_sides(runs.into_iter());
        assert_eq!(closed.map(|t| (t.refused, t.outage_ms)), Some((19, 50_000)));
        assert_eq!(
            open.map(|t| (t.backorder_units, t.overage_units)),
            Some((12, 8))
        );
        assert_eq!(both_sides(std::iter::empty()), [None, None]);
    }
}
