//! Checks shared by the randomized race tests: configs, one outcome per buyer, serial replay.

use oversold::strategy::{self, Strategy};
use oversold_protocol::{BuyerOutcome, OutcomeResult, RunConfig, RunRequest};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The strategy called `name`.
pub fn strategy(name: &str) -> &'static Strategy {
    strategy::find(name).expect("strategy exists")
}

/// A random but reproducible config in the ranges the issue asks for.
pub fn random_config(rng: &mut ChaCha8Rng, strategy: &str) -> RunConfig {
    let (qty, max_qty) = match rng.random_range(0..3) {
        0 => (Some(1), None),
        1 => (Some(rng.random_range(1..=3)), None),
        _ => (None, Some(rng.random_range(2..=3))),
    };
    RunRequest {
        strategy: Some(strategy.into()),
        stock: Some(rng.random_range(0..=40)),
        buyers: Some(rng.random_range(1..=300)),
        qty,
        max_qty,
        app_servers: Some(rng.random_range(1..=32)),
        arrival_spread_ms: Some(if rng.random_bool(0.3) {
            rng.random_range(1..=20)
        } else {
            0
        }),
        race_window_ms: Some(0),
        seed: Some(rng.random()),
        ..Default::default()
    }
    .validate(0)
    .unwrap()
}

/// Replays the outcomes one at a time, ordered by the stock each buyer saw: every
/// reservation must start where the previous one left off, every refusal must have seen too
/// little stock. Succeeds only if some serial order of these buyers explains the run.
pub fn serial_replay(
    config: &RunConfig,
    outcomes: &[&BuyerOutcome],
    final_stock: i64,
) -> Result<(), String> {
    let mut ordered: Vec<&BuyerOutcome> = outcomes.to_vec();
    // Highest observed stock first. At one stock level there is at most one reservation
    // (it changes the level), so any refusal that saw the same level came before it.
    ordered.sort_by_key(|o| {
        (
            std::cmp::Reverse(o.observed_stock),
            o.result == OutcomeResult::Reserved,
        )
    });
    let mut shelf = i64::from(config.race.stock);
    for o in ordered {
        let seen = o
            .observed_stock
            .ok_or(format!("buyer {} reported no read", o.buyer))?;
        if seen != shelf {
            return Err(format!(
                "buyer {} saw {seen} but the shelf held {shelf}",
                o.buyer
            ));
        }
        let qty = i64::from(o.qty);
        if shelf >= qty {
            if o.result != OutcomeResult::Reserved {
                return Err(format!("buyer {} refused with enough stock", o.buyer));
            }
            shelf -= qty;
            if o.stock_after != Some(shelf) {
                return Err(format!(
                    "buyer {} reports stock_after {:?}, replay says {shelf}",
                    o.buyer, o.stock_after
                ));
            }
        } else if o.result != OutcomeResult::SoldOut {
            return Err(format!("buyer {} served with only {shelf} left", o.buyer));
        }
    }
    if shelf != final_stock {
        return Err(format!(
            "Redis holds {final_stock}, the serial replay ends at {shelf}"
        ));
    }
    Ok(())
}

/// The outcomes must be exactly what *some* one-at-a-time order of these buyers produces.
pub fn assert_serializable(config: &RunConfig, outcomes: &[BuyerOutcome], final_stock: i64) {
    let all: Vec<&BuyerOutcome> = outcomes.iter().collect();
    if let Err(e) = serial_replay(config, &all, final_stock) {
        panic!("not serializable: {e}; {config:?}");
    }
}

pub fn assert_one_outcome_per_buyer(config: &RunConfig, outcomes: &[BuyerOutcome]) {
    // Sorted, not deduplicated: a buyer reported twice must fail this, not vanish into a set.
    let mut ids: Vec<u32> = outcomes.iter().map(|o| o.buyer).collect();
    ids.sort_unstable();
    let expected: Vec<u32> = (1..=config.race.buyers).collect();
    assert_eq!(ids, expected, "one outcome per buyer, each buyer once");
}
