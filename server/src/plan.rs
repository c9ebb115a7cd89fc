//! The seeded schedule of a run: who buys how much, through which app server, and when.
//!
//! Pure and deterministic: the same config (and seed) always gives the same plan,
//! so a run can be replayed and every strategy can face the exact same crowd.

use std::time::{Duration, Instant};

use oversold_protocol::{BuyerOutcome, OutcomeResult, RaceConfig};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One buyer's part in the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuyerPlan {
    /// 1-based buyer number.
    pub buyer: u32,
    /// 0-based app server (connection) index.
    pub app_server: u32,
    /// Units this buyer orders.
    pub qty: u32,
    /// When the buyer arrives, after the start gate opens.
    pub arrival: Duration,
    /// A seeded random number of the buyer's own, for strategies that choose at random
    /// (which bucket to try first). Derived from the seed and the buyer number alone, so it
    /// does not shift anyone's quantity or arrival.
    pub ticket: u64,
}

/// What one buyer's single call came to: the fields of its outcome the call decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallAnswer {
    /// How it ended.
    pub result: OutcomeResult,
    /// The stock the call saw before deciding.
    pub observed: Option<i64>,
    /// The stock after its write, when it wrote.
    pub after: Option<i64>,
    /// Why, when it failed or is in doubt.
    pub error: Option<String>,
    /// Requests sent.
    pub round_trips: u32,
}

impl BuyerPlan {
    /// This buyer's outcome for one call sent at `start` and answered at `end`, placed on the
    /// run's clock (µs after `opened`): what the scenarios on a Redis of their own report.
    pub fn outcome(
        &self,
        answer: CallAnswer,
        opened: Instant,
        start: Instant,
        end: Instant,
    ) -> BuyerOutcome {
        let us = |t: Instant| t.saturating_duration_since(opened).as_micros() as u64;
        BuyerOutcome {
            buyer: self.buyer,
            app_server: self.app_server,
            qty: self.qty,
            observed_stock: answer.observed,
            result: answer.result,
            error: answer.error,
            stock_after: answer.after,
            latency_us: end.duration_since(start).as_micros() as u64,
            start_us: us(start),
            end_us: us(end),
            read_us: None,
            round_trips: answer.round_trips,
            retries: 0,
            bucket: None,
            node: None,
            checkout: None,
            cart: None,
            epoch: None,
        }
    }
}

/// Build the plan. Buyers are dealt to app servers round-robin, as a load balancer would.
pub fn plan(config: &RaceConfig) -> Vec<BuyerPlan> {
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let spread_us = u64::from(config.arrival_spread_ms) * 1_000;
    (0..config.buyers)
        .map(|i| {
            let qty = match config.max_qty {
                Some(max) => rng.random_range(1..=max),
                None => config.qty,
            };
            let arrival = if spread_us == 0 {
                0
            } else {
                rng.random_range(0..spread_us)
            };
            BuyerPlan {
                buyer: i + 1,
                app_server: i % config.app_servers,
                qty,
                arrival: Duration::from_micros(arrival),
                ticket: splitmix64(config.seed ^ u64::from(i + 1).wrapping_mul(GOLDEN)),
            }
        })
        .collect()
}

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// One step of SplitMix64: a fast, well-mixed hash of a 64-bit number.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(GOLDEN);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oversold_protocol::RunRequest;

    fn config(max_qty: Option<u32>, spread: u32, seed: u64) -> RaceConfig {
        RunRequest {
            buyers: Some(200),
            max_qty,
            arrival_spread_ms: Some(spread),
            seed: Some(seed),
            ..Default::default()
        }
        .validate_compare(0)
        .unwrap()
    }

    #[test]
    fn same_seed_same_plan_different_seed_different_plan() {
        let a = plan(&config(Some(3), 100, 42));
        assert_eq!(a, plan(&config(Some(3), 100, 42)));
        assert_ne!(a, plan(&config(Some(3), 100, 43)));
    }

    #[test]
    fn quantities_and_arrivals_stay_in_range() {
        let p = plan(&config(Some(2), 50, 9));
        assert_eq!(p.len(), 200);
        assert!(p.iter().all(|b| (1..=2).contains(&b.qty)));
        assert!(p.iter().any(|b| b.qty == 2) && p.iter().any(|b| b.qty == 1));
        assert!(p.iter().all(|b| b.arrival < Duration::from_millis(50)));
        assert!(p.iter().all(|b| b.app_server < 8));
        assert_eq!(p[9].app_server, 1);
    }

    #[test]
    fn zero_spread_means_everyone_at_once() {
        assert!(
            plan(&config(None, 0, 1))
                .iter()
                .all(|b| b.arrival.is_zero() && b.qty == 1)
        );
    }
}
