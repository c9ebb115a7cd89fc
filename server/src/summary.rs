//! Turning a run's outcomes into its [`RunSummary`]: counts, the oversell, latency percentiles.
//!
//! [`Tally`] adds outcomes up as they arrive, so a race need not keep them: per buyer it
//! holds one latency (4 bytes, for exact percentiles), nothing else. [`summarize`] is the
//! same tally over outcomes a caller kept.

use oversold_protocol::{BuyerOutcome, LatencySummary, OutcomeResult, RunConfig, RunSummary};

/// Tally `outcomes`. `final_stock` is what Redis holds after the run.
pub fn summarize(config: &RunConfig, outcomes: &[BuyerOutcome], final_stock: i64) -> RunSummary {
    let mut tally = Tally::default();
    for o in outcomes {
        tally.add(o);
    }
    tally.summary(config, final_stock)
}

/// A race's outcomes added up as they come: what [`Tally::summary`] needs, and nothing else.
#[derive(Debug, Default)]
pub struct Tally {
    /// Outcomes added.
    buyers: usize,
    /// Orders and units per [`OutcomeResult`], indexed by [`slot`].
    orders: [u32; 5],
    units: [u64; 5],
    /// Refusals per quantity ordered: a refusal is a false sold-out when the final stock
    /// (known only at the end) still held its quantity. Indexed by quantity; as long as the
    /// largest order (at most `MAX_QTY` entries), not the crowd.
    refused_by_qty: Vec<u32>,
    /// Each buyer's latency, µs. `u32` holds 71 minutes; a buyer's deadline is seconds.
    latencies: Vec<u32>,
    last_end_us: u64,
    round_trips: u64,
    retries: u64,
}

/// Where a result is counted in [`Tally`]'s arrays.
fn slot(r: OutcomeResult) -> usize {
    match r {
        OutcomeResult::Reserved => 0,
        OutcomeResult::SoldOut => 1,
        OutcomeResult::Error => 2,
        OutcomeResult::Unknown => 3,
        OutcomeResult::GaveUp => 4,
    }
}

impl Tally {
    /// An empty tally with room for `buyers` latencies.
    pub fn with_capacity(buyers: usize) -> Self {
        Tally {
            latencies: Vec::with_capacity(buyers),
            ..Tally::default()
        }
    }

    /// Count one buyer's outcome.
    pub fn add(&mut self, o: &BuyerOutcome) {
        let i = slot(o.result);
        self.buyers += 1;
        self.orders[i] += 1;
        self.units[i] += u64::from(o.qty);
        if o.result == OutcomeResult::SoldOut {
            let q = o.qty as usize;
            if self.refused_by_qty.len() <= q {
                self.refused_by_qty.resize(q + 1, 0);
            }
            self.refused_by_qty[q] += 1;
        }
        self.latencies
            .push(u32::try_from(o.latency_us).unwrap_or(u32::MAX));
        self.last_end_us = self.last_end_us.max(o.end_us);
        self.round_trips += u64::from(o.round_trips);
        self.retries += u64::from(o.retries);
    }

    /// Outcomes counted so far.
    pub fn len(&self) -> usize {
        self.buyers
    }

    /// True before the first outcome.
    pub fn is_empty(&self) -> bool {
        self.buyers == 0
    }

    /// The summary. `final_stock` is what Redis holds after the run.
    pub fn summary(self, config: &RunConfig, final_stock: i64) -> RunSummary {
        let count = |r: OutcomeResult| self.orders[slot(r)];
        let units = |r: OutcomeResult| self.units[slot(r)];
        let units_sold = units(OutcomeResult::Reserved);
        let stock = u64::from(config.race.stock);
        // What the counter should read if no write was lost and none in doubt landed; the
        // units it is short of that, up to the units in doubt, are in-doubt writes that did
        // land.
        let expected_before_doubt = i64::from(config.race.stock) - units_sold as i64;
        let in_doubt_units = units(OutcomeResult::Unknown);
        let in_doubt_taken = u64::try_from(expected_before_doubt - final_stock)
            .unwrap_or(0)
            .min(in_doubt_units);
        // Units never come back during a race, so a refusal for `qty` while even the final
        // stock still held `qty` was refused with the units on the shelf.
        let false_sold_out = self
            .refused_by_qty
            .iter()
            .enumerate()
            .filter(|(qty, _)| (*qty as i64) <= final_stock)
            .map(|(_, n)| n)
            .sum();
        let duration_us = self.last_end_us;
        let throughput_per_s = if duration_us == 0 {
            0.0
        } else {
            self.buyers as f64 / (duration_us as f64 / 1e6)
        };
        RunSummary {
            strategy: config.strategy.clone(),
            stock: config.race.stock,
            buyers: config.race.buyers,
            orders_accepted: count(OutcomeResult::Reserved),
            units_sold,
            final_stock,
            oversold_units: units_sold.saturating_sub(stock),
            lost_updates: final_stock - (expected_before_doubt - in_doubt_taken as i64),
            rejected: count(OutcomeResult::SoldOut),
            errors: count(OutcomeResult::Error),
            unknown: count(OutcomeResult::Unknown),
            gave_up: count(OutcomeResult::GaveUp),
            in_doubt_units,
            in_doubt_taken,
            false_sold_out,
            duration_ms: duration_us as f64 / 1_000.0,
            throughput_per_s,
            latency: latency(self.latencies),
            round_trips: self.round_trips,
            retries: self.retries,
            cancelled: self.buyers < config.race.buyers as usize,
            checkout: None,
            cart: None,
            busy: None,
            durability: None,
            eviction: None,
            failover: None,
        }
    }
}

/// Nearest-rank percentiles: the value below which `p`% of samples fall, always a real sample.
pub fn latency<T: Copy + Ord + Into<u64>>(mut samples: Vec<T>) -> LatencySummary {
    if samples.is_empty() {
        return LatencySummary::default();
    }
    samples.sort_unstable();
    let rank = |p: f64| {
        let idx = ((p / 100.0) * samples.len() as f64).ceil() as usize;
        samples[idx.clamp(1, samples.len()) - 1].into()
    };
    LatencySummary {
        p50_us: rank(50.0),
        p95_us: rank(95.0),
        p99_us: rank(99.0),
        max_us: (*samples.last().expect("non-empty")).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let l = latency((1..=100u64).collect());
        assert_eq!((l.p50_us, l.p95_us, l.p99_us, l.max_us), (50, 95, 99, 100));
        let l = latency(vec![7u32]);
        assert_eq!((l.p50_us, l.p99_us, l.max_us), (7, 7, 7));
        assert_eq!(latency(Vec::<u64>::new()), LatencySummary::default());
    }
}
