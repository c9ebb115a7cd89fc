//! Turning a run's outcomes into its [`RunSummary`]: counts, the oversell, latency percentiles.

use oversold_protocol::{BuyerOutcome, LatencySummary, OutcomeResult, RunConfig, RunSummary};

/// Tally `outcomes`. `final_stock` is what Redis holds after the run.
pub fn summarize(config: &RunConfig, outcomes: &[BuyerOutcome], final_stock: i64) -> RunSummary {
    let count = |r: OutcomeResult| outcomes.iter().filter(|o| o.result == r).count() as u32;
    let units = |r: OutcomeResult| -> u64 {
        outcomes
            .iter()
            .filter(|o| o.result == r)
            .map(|o| u64::from(o.qty))
            .sum()
    };
    let units_sold = units(OutcomeResult::Reserved);
    let stock = u64::from(config.race.stock);
    // What the counter should read if no write was lost and none in doubt landed; the units
    // it is short of that, up to the units in doubt, are in-doubt writes that did land.
    let expected_before_doubt = i64::from(config.race.stock) - units_sold as i64;
    let in_doubt_units = units(OutcomeResult::Unknown);
    let in_doubt_taken = u64::try_from(expected_before_doubt - final_stock)
        .unwrap_or(0)
        .min(in_doubt_units);
    // Units never come back during a race, so a refusal for `qty` while even the final stock
    // still held `qty` was refused with the units on the shelf.
    let false_sold_out = outcomes
        .iter()
        .filter(|o| o.result == OutcomeResult::SoldOut && i64::from(o.qty) <= final_stock)
        .count() as u32;
    let duration_us = outcomes.iter().map(|o| o.end_us).max().unwrap_or(0);
    let duration_ms = duration_us as f64 / 1_000.0;
    let throughput_per_s = if duration_us == 0 {
        0.0
    } else {
        outcomes.len() as f64 / (duration_us as f64 / 1e6)
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
        duration_ms,
        throughput_per_s,
        latency: latency(outcomes.iter().map(|o| o.latency_us).collect()),
        round_trips: outcomes.iter().map(|o| u64::from(o.round_trips)).sum(),
        retries: outcomes.iter().map(|o| u64::from(o.retries)).sum(),
        cancelled: outcomes.len() < config.race.buyers as usize,
        checkout: None,
        cart: None,
        busy: None,
        durability: None,
        eviction: None,
        failover: None,
    }
}

/// Nearest-rank percentiles: the value below which `p`% of samples fall, always a real sample.
pub fn latency(mut samples: Vec<u64>) -> LatencySummary {
    if samples.is_empty() {
        return LatencySummary::default();
    }
    samples.sort_unstable();
    let rank = |p: f64| {
        let idx = ((p / 100.0) * samples.len() as f64).ceil() as usize;
        samples[idx.clamp(1, samples.len()) - 1]
    };
    LatencySummary {
        p50_us: rank(50.0),
        p95_us: rank(95.0),
        p99_us: rank(99.0),
        max_us: *samples.last().expect("non-empty"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let l = latency((1..=100).collect());
        assert_eq!((l.p50_us, l.p95_us, l.p99_us, l.max_us), (50, 95, 99, 100));
        let l = latency(vec![7]);
        assert_eq!((l.p50_us, l.p99_us, l.max_us), (7, 7, 7));
        assert_eq!(latency(vec![]), LatencySummary::default());
    }
}
