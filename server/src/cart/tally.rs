//! The summary of a `cart` or `warehouses` run: the race's counts over whole orders, plus
//! partial carts, stranded units, compensations, fallbacks, and one ledger per shelf.
//!
//! A shelf's ledger adds up when `stock = final_stock + units_sold + stranded_units`. A
//! shelf's `units_sold` counts the lines of accepted orders; a line in doubt (`unknown`)
//! counts in neither, so a run with doubts may leave a shelf short by those units.

use oversold_protocol::{
    BuyerOutcome, CartTally, LineEnd, OutcomeResult, RunConfig, RunSummary, ShelfLedger,
};

use super::Shelves;
use crate::store::shelves::ShelfKind;

/// Tally `outcomes`; `finals` is each counter read back. `untagged_on_single` marks a run
/// a cluster would have refused.
pub fn summarize(
    config: &RunConfig,
    outcomes: &[BuyerOutcome],
    shelves: &Shelves,
    finals: &[i64],
    untagged_on_single: bool,
) -> RunSummary {
    let ledgers = ledgers(outcomes, shelves, finals);
    let stock: u32 = shelves.specs.iter().map(|s| s.1).sum();
    let final_stock: i64 = finals.iter().sum();
    // Summed over the whole run, the race's formulas hold for all the shelves at once.
    let mut race_config = config.clone();
    race_config.race.stock = stock;
    let mut summary = crate::summary::summarize(&race_config, outcomes, final_stock);
    summary.oversold_units = ledgers.iter().map(|l| l.oversold_units).sum();
    // Stranded units left the shelves for a reason the ledger names: not lost. What no
    // ledger line explains is in doubt (up to the units in doubt), or lost.
    let unexplained: i64 = ledgers.iter().map(ShelfLedger::unexplained).sum();
    summary.in_doubt_taken = u64::try_from(unexplained)
        .unwrap_or(0)
        .min(summary.in_doubt_units);
    summary.lost_updates = summary.in_doubt_taken as i64 - unexplained;
    let split = config.race.warehouses().is_some_and(|w| w.split);
    summary.false_sold_out = false_sold_out(outcomes, (shelves.kind, split), finals);
    let stories = || outcomes.iter().filter_map(|o| o.cart.as_ref());
    let tally = CartTally {
        partial_carts: stories().filter(|c| c.partial).count() as u32,
        stranded_units: ledgers.iter().map(|l| l.stranded_units).sum(),
        compensations: stories().map(|c| c.compensations).sum(),
        fallback_orders: stories().filter(|c| c.fallback).count() as u32,
        longest_doomed_hold_us: stories()
            .filter_map(|c| c.doomed_hold_us)
            .max()
            .unwrap_or(0),
        would_fail_on_cluster: untagged_on_single.then(|| {
            "these keys share no hash tag: it ran because a single Redis has no slots, and a \
             Redis Cluster would refuse every cart of two or more SKUs with CROSSSLOT"
                .to_string()
        }),
        per_sku: (shelves.kind == ShelfKind::Sku).then(|| ledgers.clone()),
        per_warehouse: (shelves.kind == ShelfKind::Warehouse).then_some(ledgers),
    };
    summary.cart = Some(Box::new(tally));
    summary
}

/// One ledger per shelf, from the lines of every order.
fn ledgers(outcomes: &[BuyerOutcome], shelves: &Shelves, finals: &[i64]) -> Vec<ShelfLedger> {
    let mut sold = vec![0u64; shelves.specs.len()];
    let mut stranded = vec![0u64; shelves.specs.len()];
    for o in outcomes {
        let Some(cart) = &o.cart else { continue };
        for line in &cart.lines {
            let i = line.shelf as usize;
            match line.end {
                LineEnd::Taken if o.result == OutcomeResult::Reserved => {
                    sold[i] += u64::from(line.taken);
                }
                // A failed order whose line is still taken strands it too.
                LineEnd::Taken | LineEnd::Stranded => stranded[i] += u64::from(line.taken),
                _ => {}
            }
        }
    }
    shelves
        .specs
        .iter()
        .enumerate()
        .map(|(i, &(name, stock))| ShelfLedger {
            name: name.to_string(),
            stock,
            units_sold: sold[i],
            final_stock: finals[i],
            oversold_units: u64::try_from(-finals[i]).unwrap_or(0),
            stranded_units: stranded[i],
            node: shelves.nodes.get(i).cloned().flatten(),
        })
        .collect()
}

/// Refusals with the units still there at the end: a cart every line of which its shelf
/// still held; a warehouse order some warehouse alone could have filled (or, with a split,
/// all of them together).
fn false_sold_out(
    outcomes: &[BuyerOutcome],
    (kind, split): (ShelfKind, bool),
    finals: &[i64],
) -> u32 {
    let has = |shelf: u32, qty: u32| {
        finals
            .get(shelf as usize)
            .is_some_and(|&f| f >= i64::from(qty))
    };
    let together: i64 = finals.iter().map(|&f| f.max(0)).sum();
    outcomes
        .iter()
        .filter(|o| o.result == OutcomeResult::SoldOut)
        .filter_map(|o| o.cart.as_ref().map(|c| (o.qty, c)))
        .filter(|(qty, c)| match kind {
            ShelfKind::Sku => c.lines.iter().all(|l| has(l.shelf, l.qty)),
            ShelfKind::Warehouse if split => together >= i64::from(*qty),
            ShelfKind::Warehouse => c.lines.iter().any(|l| has(l.shelf, *qty)),
        })
        .count() as u32
}
