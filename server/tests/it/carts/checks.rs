//! The checker every `cart` and `warehouses` run goes through.

use std::collections::HashSet;

use oversold::backends::Backends;
use oversold::run::RunReport;
use oversold::strategy::cart;
use oversold_protocol::{CartTally, LineEnd, OutcomeResult, RunConfig, RunRequest, Scenario};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio_util::sync::CancellationToken;

/// A seeded random `scenario` config: 0 to 30 units, 1 to 150 buyers, 1 to 16 app servers,
/// spreads, quantities, 1 to 8 SKUs and lines, 2 to 8 warehouses, split or not.
pub fn random_config(rng: &mut ChaCha8Rng, scenario: Scenario, strategy: &str) -> RunConfig {
    let skus = rng.random_range(1..=8);
    let request = RunRequest {
        strategy: Some(strategy.into()),
        scenario: Some(scenario),
        stock: Some(rng.random_range(0..=30)),
        buyers: Some(rng.random_range(1..=150)),
        app_servers: Some(rng.random_range(1..=16)),
        arrival_spread_ms: Some(*[0, 0, 5, 20].get(rng.random_range(0..4)).unwrap()),
        max_qty: rng.random_bool(0.5).then(|| rng.random_range(1..=3)),
        seed: Some(rng.random()),
        skus: (scenario == Scenario::Cart).then_some(skus),
        max_lines: (scenario == Scenario::Cart).then(|| rng.random_range(1..=skus)),
        warehouses: (scenario == Scenario::Warehouses).then(|| rng.random_range(2..=8)),
        split: (scenario == Scenario::Warehouses).then(|| rng.random_bool(0.5)),
        ..Default::default()
    };
    request.validate(0).unwrap()
}

/// The defaults of `scenario` for `strategy`, with `seed`.
pub fn default_config(scenario: Scenario, strategy: &str, seed: u64) -> RunConfig {
    RunRequest {
        strategy: Some(strategy.into()),
        scenario: Some(scenario),
        seed: Some(seed),
        ..Default::default()
    }
    .validate(0)
    .unwrap()
}

/// Run `config` on `backends`.
pub async fn run(backends: &Backends, config: &RunConfig, id: &str) -> RunReport {
    let strategy = cart::find(&config.strategy).expect("a cart strategy");
    oversold::cart::run(
        backends,
        strategy,
        config,
        id,
        None,
        CancellationToken::new(),
    )
    .await
    .unwrap_or_else(|e| panic!("{}: {e}", config.describe()))
}

/// What a checked run showed.
#[derive(Debug, Default, Clone, Copy)]
pub struct Seen {
    pub oversold: u64,
    pub partial: u32,
}

/// Every check that holds for every strategy (safe or not) when nothing fails; and with
/// `safe`, no shelf oversold and (unless `partial_ok`) no partial cart.
pub fn check(config: &RunConfig, report: &RunReport, safe: bool) -> Seen {
    let what = config.describe();
    let s = &report.summary;
    let tally: &CartTally = s.cart.as_deref().expect("a cart tally");
    // One outcome per buyer, no errors.
    let buyers: HashSet<u32> = report.outcomes.iter().map(|o| o.buyer).collect();
    assert_eq!(buyers.len(), config.race.buyers as usize, "{what}");
    assert_eq!(report.outcomes.len(), config.race.buyers as usize, "{what}");
    assert_eq!((s.errors, s.unknown), (0, 0), "{what}");
    // Every order's lines agree with its result; recount each shelf from the lines alone.
    let shelves = tally.shelves();
    let mut sold = vec![0u64; shelves.len()];
    let mut stranded = vec![0u64; shelves.len()];
    let mut compensated_lines = 0;
    for o in &report.outcomes {
        let c = o.cart.as_deref().expect("a cart story");
        let taken: u32 = c.lines.iter().map(|l| l.taken).sum();
        match o.result {
            OutcomeResult::Reserved => {
                assert!(!c.partial, "{what}: {o:?}");
                assert_eq!(
                    taken, o.qty,
                    "{what}: an accepted order took its quantity: {o:?}"
                );
                for l in &c.lines {
                    assert!(matches!(l.end, LineEnd::Taken | LineEnd::Skipped), "{o:?}");
                    sold[l.shelf as usize] += u64::from(l.taken);
                }
            }
            OutcomeResult::SoldOut => {
                let held: Vec<_> = c
                    .lines
                    .iter()
                    .filter(|l| l.end == LineEnd::Stranded)
                    .collect();
                assert_eq!(c.partial, !held.is_empty(), "{what}: {o:?}");
                for l in &c.lines {
                    assert_ne!(
                        l.end,
                        LineEnd::Taken,
                        "{what}: a refused order owns a line: {o:?}"
                    );
                    if l.end == LineEnd::Stranded {
                        stranded[l.shelf as usize] += u64::from(l.taken);
                    }
                }
                compensated_lines += c
                    .lines
                    .iter()
                    .filter(|l| l.end == LineEnd::Compensated)
                    .count() as u32;
                assert!(
                    c.lines.iter().any(|l| l.end == LineEnd::SoldOut),
                    "{what}: {o:?}"
                );
            }
            other => panic!("{what}: {other:?}: {o:?}"),
        }
    }
    assert_eq!(compensated_lines, tally.compensations, "{what}");
    // Each shelf: the counter Redis holds is what the orders' lines explain, exactly.
    // A compensation applied twice, or lost, shows here.
    for (i, l) in shelves.iter().enumerate() {
        assert_eq!(
            (l.units_sold, l.stranded_units),
            (sold[i], stranded[i]),
            "{what}: {l:?}"
        );
        assert_eq!(
            i64::from(l.stock) - l.final_stock,
            (sold[i] + stranded[i]) as i64,
            "{what}: shelf {} does not add up: {l:?}",
            l.name
        );
        assert_eq!(l.oversold_units, u64::try_from(-l.final_stock).unwrap_or(0));
    }
    assert_eq!(
        s.oversold_units,
        shelves.iter().map(|l| l.oversold_units).sum::<u64>()
    );
    assert_eq!(tally.stranded_units, stranded.iter().sum::<u64>(), "{what}");
    assert_eq!(s.lost_updates, 0, "{what}");
    if safe {
        for l in shelves {
            assert!(l.final_stock >= 0, "{what}: {} oversold: {l:?}", l.name);
        }
        assert_eq!(s.oversold_units, 0, "{what}");
    }
    Seen {
        oversold: s.oversold_units,
        partial: tally.partial_carts,
    }
}

/// The checks that hold only for the all-or-nothing strategies (`cart_script`,
/// `cart_script_untagged`, `saga` once finished, `warehouse_script`): no partial cart, no
/// stranded unit.
pub fn check_all_or_nothing(config: &RunConfig, report: &RunReport) {
    let seen = check(config, report, true);
    let tally = report.summary.cart.as_deref().unwrap();
    assert_eq!(
        (seen.partial, tally.stranded_units),
        (0, 0),
        "{}",
        config.describe()
    );
}

/// A fresh rng for `seed`.
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}
