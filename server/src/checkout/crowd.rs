//! Who each buyer is and what it will do: its customer (bots included), its fate after
//! reserving, whether its client resends, and how long it pays. Seeded.
//!
//! The race's schedule ([`crate::plan`]) stays exactly as it is, so a checkout and a race
//! with one seed face the same arrivals and quantities; the checkout's draws come from a
//! second random stream of the same seed. Fractions become exact counts (10% of 50 buyers
//! is 5 crashes, never 3 or 8), dealt out by a seeded shuffle.

use std::time::Duration;

use oversold_protocol::{CheckoutConfig, Fate, RaceConfig};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::plan::{BuyerPlan, plan};

/// Keeps the checkout's random stream apart from the race's.
const SALT: u64 = 0xc4ec_0a7f_00d5_eed5;
/// The longest a client waits before it resends (real time): short, so both copies race.
const MAX_RESEND_AFTER_US: u64 = 2_000;

/// One buyer of a checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shopper {
    /// Arrival, quantity, app server: the race's plan.
    pub plan: BuyerPlan,
    /// Its customer, 1-based.
    pub customer: u32,
    /// What it does after reserving.
    pub fate: Fate,
    /// True when its client resends the reserve request.
    pub resends: bool,
    /// How long after the first request the resend goes out.
    pub resend_after: Duration,
    /// How long it pays (or browses before walking away), shop ms.
    pub pay_ms: u64,
}

/// The whole crowd of a checkout run with these knobs.
pub fn crowd(race: &RaceConfig, knobs: &CheckoutConfig) -> Vec<Shopper> {
    let buyers = race.buyers as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(race.seed ^ SALT);
    let customers = customers(buyers, knobs.customers, &mut rng);
    let fates = fates(buyers, knobs, &mut rng);
    let resends = chosen(buyers, share(knobs.retry_fraction, buyers), &mut rng);
    plan(race)
        .into_iter()
        .enumerate()
        .map(|(i, plan)| Shopper {
            plan,
            customer: customers[i],
            fate: fates[i],
            resends: resends[i],
            resend_after: Duration::from_micros(rng.random_range(0..MAX_RESEND_AFTER_US)),
            // Two uniform draws: around pay_ms on average, never more than twice it.
            pay_ms: {
                let pay = u64::from(knobs.pay_ms);
                rng.random_range(0..=pay) + rng.random_range(0..=pay)
            },
        })
        .collect()
}

/// `fraction` of `n`, rounded to the nearest whole buyer.
fn share(fraction: f64, n: usize) -> usize {
    ((fraction * n as f64).round() as usize).min(n)
}

/// Every customer places one order; the orders left over belong to the bots, a tenth of
/// the customers (at least one), dealt at random among them. Shuffled, so bots' orders are
/// spread through the crowd.
fn customers(buyers: usize, customers: u32, rng: &mut ChaCha8Rng) -> Vec<u32> {
    let customers = (customers.max(1) as usize).min(buyers.max(1));
    let bots = customers.div_ceil(10);
    let mut who: Vec<u32> = (1..=customers as u32).collect();
    while who.len() < buyers {
        who.push(rng.random_range(1..=bots as u32));
    }
    who.truncate(buyers);
    who.shuffle(rng);
    who
}

/// Exact counts of each fate, shuffled; everyone else pays.
fn fates(buyers: usize, knobs: &CheckoutConfig, rng: &mut ChaCha8Rng) -> Vec<Fate> {
    let mut fates = Vec::with_capacity(buyers);
    for (fate, fraction) in [
        (Fate::Crash, knobs.crash_fraction),
        (Fate::Abandon, knobs.abandon_fraction),
        (Fate::PayFail, knobs.pay_fail_fraction),
    ] {
        let n = share(fraction, buyers).min(buyers - fates.len());
        fates.extend(std::iter::repeat_n(fate, n));
    }
    fates.resize(buyers, Fate::Pay);
    fates.shuffle(rng);
    fates
}

/// `n` of `buyers` picked at random.
fn chosen(buyers: usize, n: usize, rng: &mut ChaCha8Rng) -> Vec<bool> {
    let mut picked = vec![false; buyers];
    picked[..n].fill(true);
    picked.shuffle(rng);
    picked
}

#[cfg(test)]
mod tests {
    use super::*;
    use oversold_protocol::{RunRequest, Scenario};
    use std::collections::BTreeMap;

    fn race(seed: u64, f: impl FnOnce(&mut RunRequest)) -> RaceConfig {
        let mut r = RunRequest {
            scenario: Some(Scenario::Checkout),
            buyers: Some(100),
            seed: Some(seed),
            ..Default::default()
        };
        f(&mut r);
        r.validate_compare(0).unwrap()
    }

    /// The crowd of a checkout race config.
    fn crowd_of(race: &RaceConfig) -> Vec<Shopper> {
        crowd(race, race.checkout().unwrap())
    }

    #[test]
    fn same_seed_same_crowd_and_fates() {
        let a = crowd_of(&race(3, |_| {}));
        assert_eq!(a, crowd_of(&race(3, |_| {})));
        assert_ne!(a, crowd_of(&race(4, |_| {})));
        // The race's schedule is untouched by the checkout's draws.
        let plans: Vec<BuyerPlan> = a.iter().map(|s| s.plan).collect();
        assert_eq!(plans, plan(&race(3, |_| {})));
    }

    #[test]
    fn fractions_are_exact_counts() {
        let c = crowd_of(&race(9, |r| {
            r.crash_fraction = Some(0.1);
            r.abandon_fraction = Some(0.25);
            r.pay_fail_fraction = Some(0.05);
            r.retry_fraction = Some(0.3);
        }));
        let count = |f: Fate| c.iter().filter(|s| s.fate == f).count();
        assert_eq!(
            (
                count(Fate::Crash),
                count(Fate::Abandon),
                count(Fate::PayFail),
                count(Fate::Pay)
            ),
            (10, 25, 5, 60)
        );
        assert_eq!(c.iter().filter(|s| s.resends).count(), 30);
        assert!(c.iter().all(|s| s.pay_ms <= 120_000));
    }

    #[test]
    fn fewer_customers_than_buyers_makes_bots() {
        let c = crowd_of(&race(5, |r| r.customers = Some(40)));
        let mut orders: BTreeMap<u32, usize> = BTreeMap::new();
        for s in &c {
            *orders.entry(s.customer).or_default() += 1;
        }
        assert_eq!(orders.len(), 40, "every customer orders");
        // 60 extra orders over ceil(40 / 10) = 4 bots.
        let bots: Vec<_> = orders.iter().filter(|(_, n)| **n > 1).collect();
        assert!(
            bots.len() <= 4 && bots.iter().all(|(c, _)| **c <= 4),
            "{bots:?}"
        );
        assert_eq!(orders.values().sum::<usize>(), 100);
        let everyone = crowd_of(&race(5, |r| r.customers = Some(100)));
        assert!(
            everyone
                .iter()
                .all(|s| s.customer >= 1 && s.customer <= 100)
        );
    }
}
