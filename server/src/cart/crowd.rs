//! Who orders what in a `cart` or `warehouses` run: each buyer's cart lines, or its
//! preferred warehouse and fallback order. Seeded, from a stream of its own, so the race's
//! plan (quantities, arrivals, app servers) is the one every scenario shares.

use oversold_protocol::{CartConfig, RaceConfig, WarehouseConfig};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::plan::{self, BuyerPlan};

/// Mixed into the seed so this stream never repeats the plan's.
const STREAM: u64 = 0xca47_5eed_0bad_f00d;

/// One buyer of a multi-key run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shopper {
    /// The race's plan for it: app server, arrival.
    pub plan: BuyerPlan,
    /// (shelf, qty) per line, in the order it takes them. A warehouse order lists every
    /// warehouse, preferred first then nearest first, each with the whole quantity.
    pub lines: Vec<(u32, u32)>,
}

/// The carts of a `cart` run: 1..=`max_lines` distinct SKUs each, in a seeded order, with a
/// quantity each (`qty`, or seeded `1..=max_qty`).
pub fn carts(race: &RaceConfig, cart: CartConfig) -> Vec<Shopper> {
    let mut rng = ChaCha8Rng::seed_from_u64(race.seed ^ STREAM);
    plan::plan(race)
        .into_iter()
        .map(|plan| {
            let mut skus: Vec<u32> = (0..cart.skus).collect();
            skus.shuffle(&mut rng);
            let n = rng.random_range(1..=cart.max_lines) as usize;
            let lines = skus[..n]
                .iter()
                .map(|&sku| {
                    let qty = match race.max_qty {
                        Some(max) => rng.random_range(1..=max),
                        None => race.qty,
                    };
                    (sku, qty)
                })
                .collect();
            Shopper { plan, lines }
        })
        .collect()
}

/// The orders of a `warehouses` run: a seeded preferred warehouse, then the others
/// nearest first (a seeded coin between two at the same distance).
pub fn warehouse_orders(race: &RaceConfig, w: WarehouseConfig) -> Vec<Shopper> {
    let mut rng = ChaCha8Rng::seed_from_u64(race.seed ^ STREAM);
    plan::plan(race)
        .into_iter()
        .map(|plan| {
            let preferred = rng.random_range(0..w.warehouses);
            let west_first = rng.random_bool(0.5);
            let order = nearest_first(preferred, w.warehouses, west_first);
            let lines = order.into_iter().map(|i| (i, plan.qty)).collect();
            Shopper { plan, lines }
        })
        .collect()
}

/// `preferred`, then every other warehouse by distance; of two at the same distance, the
/// western one first when `west_first`.
pub fn nearest_first(preferred: u32, count: u32, west_first: bool) -> Vec<u32> {
    let mut order: Vec<u32> = (0..count).collect();
    order.sort_by_key(|&i| {
        let west = i < preferred;
        (preferred.abs_diff(i), west != west_first)
    });
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use oversold_protocol::{RunRequest, Scenario};

    fn race(scenario: Scenario, seed: u64) -> RaceConfig {
        RunRequest {
            scenario: Some(scenario),
            buyers: Some(200),
            max_qty: Some(2),
            seed: Some(seed),
            ..Default::default()
        }
        .validate_compare(0)
        .unwrap()
    }

    #[test]
    fn nearest_first_walks_out_from_the_preferred() {
        assert_eq!(nearest_first(2, 5, true), vec![2, 1, 3, 0, 4]);
        assert_eq!(nearest_first(2, 5, false), vec![2, 3, 1, 4, 0]);
        assert_eq!(nearest_first(0, 3, true), vec![0, 1, 2]);
    }

    #[test]
    fn carts_are_seeded_distinct_and_in_range() {
        let r = race(Scenario::Cart, 7);
        let c = r.cart().unwrap();
        let a = carts(&r, c);
        assert_eq!(a, carts(&r, c));
        assert_ne!(a, carts(&race(Scenario::Cart, 8), c));
        for s in &a {
            assert!((1..=c.max_lines as usize).contains(&s.lines.len()));
            let mut skus: Vec<u32> = s.lines.iter().map(|l| l.0).collect();
            skus.sort();
            skus.dedup();
            assert_eq!(skus.len(), s.lines.len(), "distinct SKUs");
            assert!(
                s.lines
                    .iter()
                    .all(|&(sku, q)| sku < c.skus && (1..=2).contains(&q))
            );
        }
        assert!(a.iter().any(|s| s.lines.len() == 1) && a.iter().any(|s| s.lines.len() == 3));
    }

    #[test]
    fn warehouse_orders_list_every_warehouse_once() {
        let r = race(Scenario::Warehouses, 3);
        let w = r.warehouses().unwrap();
        let orders = warehouse_orders(&r, w);
        let mut preferred = [0; 3];
        for s in &orders {
            let mut seen: Vec<u32> = s.lines.iter().map(|l| l.0).collect();
            preferred[seen[0] as usize] += 1;
            seen.sort();
            assert_eq!(seen, vec![0, 1, 2]);
        }
        assert!(preferred.iter().all(|&n| n > 30), "{preferred:?}");
    }
}
