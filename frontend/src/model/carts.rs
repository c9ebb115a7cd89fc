//! The `cart` and `warehouses` runs on the page: one row of tiles per shelf (a SKU, or a
//! warehouse), the per-shelf ledger, the partial carts and stranded units, and the
//! CROSSSLOT lesson. Plain Rust over the run's frames: the shelves come from the config
//! (the protocol's catalogue), the numbers from the outcomes while it runs and from the
//! summary once it has one, so the page's numbers are the server's.

use oversold_protocol::cart::{catalogue, warehouses};
use oversold_protocol::{Knobs, LineEnd, OutcomeResult, RunConfig, Scenario};

use super::run::{Phase, RunModel};
use super::text::{count, thousands};

/// Most tiles one shelf's row draws; beyond that a tile stands for several units.
const MAX_TILES: u64 = 120;

/// What one tile of a shelf shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TileState {
    /// Sold to this buyer (a one-unit tile), or sold (a group).
    Sold(Option<u32>),
    /// Taken by an order that failed, and never given back.
    Stranded,
    /// Still on the shelf.
    Free,
    /// Taken beyond the stock: a unit that never existed.
    Phantom,
}

/// One shelf's row and ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShelfRow {
    /// `phone`, `north`...
    pub name: String,
    /// Units before the run.
    pub stock: u32,
    /// Units in accepted orders.
    pub sold: u64,
    /// Units stuck in failed orders.
    pub stranded: u64,
    /// The counter now: read back by the server once the run is over, else what the lines
    /// so far leave.
    pub remaining: i64,
    /// Units taken that never existed.
    pub oversold: u64,
    /// On a cluster, the node serving it, and its colour index among the run's nodes.
    pub node: Option<(String, usize)>,
    /// The tiles, in order: sold, stranded, free, then phantom.
    pub tiles: Vec<(TileState, u64)>,
    /// Units one tile stands for.
    pub per_tile: u64,
}

impl ShelfRow {
    /// `stock = remaining + sold + stranded`, as the ledger must.
    pub fn adds_up(&self) -> bool {
        i64::from(self.stock) == self.remaining + self.sold as i64 + self.stranded as i64
    }
}

/// A multi-key run, as the page draws it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CartView {
    /// True for warehouses, false for SKUs.
    pub warehouses: bool,
    /// A warehouse run that may split an order over warehouses.
    pub split: bool,
    /// One row per shelf.
    pub rows: Vec<ShelfRow>,
    /// Orders that failed holding units.
    pub partial: u32,
    /// Units they hold.
    pub stranded: u64,
    /// Lines given back by a saga.
    pub compensations: u32,
    /// Warehouse orders served by a fallback.
    pub fallbacks: u32,
    /// The longest time a doomed cart held units, µs.
    pub longest_hold_us: u64,
    /// Refusals while the units were there (the summary's).
    pub refused_with_units: u32,
    /// True once the numbers are the server's summary.
    pub final_numbers: bool,
    /// The server's note that a cluster would refuse this run (CROSSSLOT).
    pub would_fail_on_cluster: Option<String>,
    /// The server's CROSSSLOT refusal, when the run failed with one.
    pub crossslot: Option<String>,
}

/// The shelves a config names: name and stock each.
pub fn shelves(config: &RunConfig) -> Vec<(&'static str, u32)> {
    let race = &config.race;
    match race.knobs {
        Knobs::Cart(c) => catalogue(c.skus, race.stock),
        Knobs::Warehouses(w) => warehouses(w.warehouses, race.stock),
        Knobs::Race
        | Knobs::Checkout(_)
        | Knobs::BusyScript
        | Knobs::Durability
        | Knobs::Eviction(_)
        | Knobs::Failover => Vec::new(),
    }
}

/// The stock a run of `scenario` would put on its shelves, from the form's `stock` and shelf
/// knobs, as the header says it: a cart run stocks every SKU of the catalogue from it (10 is
/// `45 in stock over 3 SKUs`), a warehouse run splits it (`10 in stock over 3 warehouses`);
/// any other scenario has one shelf (`10 in stock`). The numbers are the protocol's own
/// catalogue, so they are the shelves' the run will show.
pub fn stock_phrase(scenario: Scenario, stock: u32, skus: u32, warehouses: u32) -> String {
    let (shelves, noun) = match scenario {
        Scenario::Cart => (catalogue(skus, stock), "SKU"),
        Scenario::Warehouses => (self::warehouses(warehouses, stock), "warehouse"),
        _ => return format!("{} in stock", thousands(stock.into())),
    };
    let total: u64 = shelves.iter().map(|s| u64::from(s.1)).sum();
    format!(
        "{} in stock over {}",
        thousands(total as i64),
        count(shelves.len() as u64, noun)
    )
}

/// True for a run of the `cart` or `warehouses` scenario.
pub fn is_multi_key(config: &RunConfig) -> bool {
    matches!(
        config.race.scenario(),
        Scenario::Cart | Scenario::Warehouses
    )
}

/// What the outcomes so far say, per shelf and in all.
struct Live {
    sold: Vec<u64>,
    stranded: Vec<u64>,
    /// The first buyers of each shelf's sold units, in order (at most a row's worth).
    buyers: Vec<Vec<u32>>,
    nodes: Vec<Option<String>>,
    partial: u32,
    compensations: u32,
    fallbacks: u32,
    hold: u64,
}

impl Live {
    fn of(run: &RunModel, shelves: usize) -> Self {
        let mut live = Live {
            sold: vec![0; shelves],
            stranded: vec![0; shelves],
            buyers: vec![Vec::new(); shelves],
            nodes: vec![None; shelves],
            partial: 0,
            compensations: 0,
            fallbacks: 0,
            hold: 0,
        };
        for row in &run.rows {
            let o = &row.outcome;
            let Some(c) = o.cart.as_deref() else { continue };
            live.partial += u32::from(c.partial);
            live.compensations += c.compensations;
            live.fallbacks += u32::from(c.fallback);
            live.hold = live.hold.max(c.doomed_hold_us.unwrap_or(0));
            for l in c.lines.iter().filter(|l| (l.shelf as usize) < shelves) {
                live.line(o.buyer, o.result == OutcomeResult::Reserved, l);
            }
        }
        live
    }

    fn line(&mut self, buyer: u32, accepted: bool, l: &oversold_protocol::CartLine) {
        let i = l.shelf as usize;
        if self.nodes[i].is_none() {
            self.nodes[i] = l.node.clone();
        }
        match l.end {
            LineEnd::Taken if accepted => {
                self.sold[i] += u64::from(l.taken);
                // Only a row of one-unit tiles names buyers, and it has at most MAX_TILES
                // of them: a big run's million units are not listed.
                let room = (MAX_TILES as usize).saturating_sub(self.buyers[i].len());
                let named = (l.taken as usize).min(room);
                self.buyers[i].extend(std::iter::repeat_n(buyer, named));
            }
            LineEnd::Taken | LineEnd::Stranded => self.stranded[i] += u64::from(l.taken),
            _ => {}
        }
    }

    /// One row per shelf from the outcomes so far.
    fn rows(&self, specs: &[(&str, u32)]) -> Vec<ShelfRow> {
        specs
            .iter()
            .enumerate()
            .map(|(i, &(name, stock))| {
                let remaining = i64::from(stock) - (self.sold[i] + self.stranded[i]) as i64;
                ShelfRow {
                    name: name.to_string(),
                    stock,
                    sold: self.sold[i],
                    stranded: self.stranded[i],
                    remaining,
                    oversold: u64::try_from(-remaining).unwrap_or(0),
                    node: self.nodes[i].clone().map(|n| (n, 0)),
                    tiles: Vec::new(),
                    per_tile: 1,
                }
            })
            .collect()
    }
}

/// The run drawn as shelves; `None` for a run of another scenario. While it runs, the
/// numbers are the outcomes'; once it has a summary, the summary's (Redis read back).
pub fn view(run: &RunModel) -> Option<CartView> {
    if !is_multi_key(&run.config) {
        return None;
    }
    let specs = shelves(&run.config);
    let live = Live::of(run, specs.len());
    let mut rows = live.rows(&specs);
    let summary = run
        .summary()
        .and_then(|s| s.cart.as_deref().map(|c| (s, c)));
    if let Some((_, tally)) = summary {
        for (row, l) in rows.iter_mut().zip(tally.shelves()) {
            row.sold = l.units_sold;
            row.stranded = l.stranded_units;
            row.remaining = l.final_stock;
            row.oversold = l.oversold_units;
            if let Some(node) = &l.node {
                row.node = Some((node.clone(), 0));
            }
        }
    }
    colour_nodes(&mut rows);
    for (row, who) in rows.iter_mut().zip(&live.buyers) {
        lay_tiles(row, who);
    }
    let crossslot = match &run.phase {
        Phase::Failed(m) if m.contains("CROSSSLOT") => Some(m.clone()),
        _ => None,
    };
    Some(CartView {
        warehouses: run.config.race.scenario() == Scenario::Warehouses,
        split: matches!(run.config.race.knobs, Knobs::Warehouses(w) if w.split),
        rows,
        partial: summary.map_or(live.partial, |(_, t)| t.partial_carts),
        stranded: summary.map_or(live.stranded.iter().sum(), |(_, t)| t.stranded_units),
        compensations: summary.map_or(live.compensations, |(_, t)| t.compensations),
        fallbacks: summary.map_or(live.fallbacks, |(_, t)| t.fallback_orders),
        longest_hold_us: summary.map_or(live.hold, |(_, t)| t.longest_doomed_hold_us),
        refused_with_units: summary.map_or(0, |(s, _)| s.false_sold_out),
        final_numbers: summary.is_some(),
        would_fail_on_cluster: summary.and_then(|(_, t)| t.would_fail_on_cluster.clone()),
        crossslot,
    })
}

/// One number under the shelves, with what it counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// Its test hook, e.g. `partial-carts`.
    pub id: &'static str,
    /// The number.
    pub n: u64,
    /// What it counts, after the number: ` partial carts (…)`.
    pub what: String,
    /// Drawn as something that went wrong.
    pub bad: bool,
}

impl CartView {
    /// The facts this scenario can have, each once. A cart run: partial carts, stranded units,
    /// a saga's compensations, refusals while units were there. A warehouse run: orders served
    /// by a fallback and refusals; a partial order and stranded units only where an order may
    /// be split over warehouses (or where one happened anyway), and never a cart or a
    /// compensation, which no warehouse strategy has.
    pub fn facts(&self) -> Vec<Fact> {
        let hold = (self.longest_hold_us > 0).then(|| {
            format!(
                " · a doomed {} held units up to {} µs",
                if self.warehouses { "order" } else { "cart" },
                thousands(self.longest_hold_us as i64)
            )
        });
        let refused = Fact {
            id: "refused-with-units",
            n: self.refused_with_units.into(),
            what: format!(
                " refused while the units were there{}",
                hold.unwrap_or_default()
            ),
            bad: false,
        };
        let stranded = Fact {
            id: "stranded-units",
            n: self.stranded,
            what: " units stranded in them".into(),
            bad: self.stranded > 0,
        };
        if !self.warehouses {
            return vec![
                Fact {
                    id: "partial-carts",
                    n: self.partial.into(),
                    what: " partial carts (failed orders still holding units)".into(),
                    bad: self.partial > 0,
                },
                stranded,
                Fact {
                    id: "compensations",
                    n: self.compensations.into(),
                    what: " lines given back by compensation".into(),
                    bad: false,
                },
                refused,
            ];
        }
        let mut facts = Vec::new();
        if self.split || self.partial > 0 || self.stranded > 0 {
            facts.push(Fact {
                id: "partial-carts",
                n: self.partial.into(),
                what: " partial orders (split orders that failed still holding units)".into(),
                bad: self.partial > 0,
            });
            facts.push(stranded);
        }
        if self.compensations > 0 {
            facts.push(Fact {
                id: "compensations",
                n: self.compensations.into(),
                what: " lines given back by compensation".into(),
                bad: false,
            });
        }
        facts.push(Fact {
            id: "fallback-orders",
            n: self.fallbacks.into(),
            what: " orders served by a fallback warehouse".into(),
            bad: false,
        });
        facts.push(refused);
        facts
    }
}

/// The race timeline's sentence for a cart or warehouse run: its bars are orders, and what
/// matters is how many were taken whole and how many failed holding units.
pub fn timeline_caption(run: &RunModel) -> String {
    let whole = run.tally.orders_accepted;
    let partial = run
        .rows
        .iter()
        .filter(|r| r.outcome.cart.as_deref().is_some_and(|c| c.partial))
        .count();
    let so_far = if run.is_running() { " so far" } else { "" };
    format!(
        "{whole} of {} orders taken whole{so_far}; {partial} failed holding units.",
        run.rows.len()
    )
}

/// One colour per distinct node, in the order of their names.
fn colour_nodes(rows: &mut [ShelfRow]) {
    let mut names: Vec<String> = rows
        .iter()
        .filter_map(|r| r.node.clone())
        .map(|n| n.0)
        .collect();
    names.sort();
    names.dedup();
    for row in rows {
        if let Some((name, index)) = &mut row.node {
            *index = names.iter().position(|n| n == name).unwrap_or(0);
        }
    }
}

/// The row's tiles: sold (with the buyer on a one-unit tile), stranded, free, phantom.
fn lay_tiles(row: &mut ShelfRow, buyers: &[u32]) {
    let free = u64::try_from(row.remaining).unwrap_or(0);
    let total = row.sold + row.stranded + free;
    row.per_tile = total.div_ceil(MAX_TILES).max(1);
    let per = row.per_tile;
    let mut tiles = Vec::new();
    let push = |tiles: &mut Vec<(TileState, u64)>, state: TileState, units: u64| {
        let mut left = units;
        while left > 0 {
            let n = left.min(per);
            tiles.push((state, n));
            left -= n;
        }
    };
    // Units taken beyond the stock are the last ones taken: the phantoms.
    let real_sold = row.sold.min(u64::from(row.stock));
    if per == 1 {
        for unit in 0..real_sold {
            tiles.push((TileState::Sold(buyers.get(unit as usize).copied()), 1));
        }
    } else {
        push(&mut tiles, TileState::Sold(None), real_sold);
    }
    let room = u64::from(row.stock) - real_sold;
    push(&mut tiles, TileState::Stranded, row.stranded.min(room));
    push(&mut tiles, TileState::Free, free);
    push(&mut tiles, TileState::Phantom, row.oversold);
    row.tiles = tiles;
}

#[cfg(test)]
mod tests {
    use super::*;
    use oversold_protocol::{BuyerOutcome, CartLine, CartStory, RunRequest};

    fn config(scenario: Scenario) -> RunConfig {
        RunRequest {
            strategy: Some("naive_cart".into()),
            scenario: Some(scenario),
            seed: Some(1),
            ..Default::default()
        }
        .validate(0)
        .unwrap()
    }

    fn outcome(buyer: u32, result: OutcomeResult, lines: &[(u32, u32, LineEnd)]) -> BuyerOutcome {
        let lines: Vec<CartLine> = lines
            .iter()
            .map(|&(shelf, taken, end)| CartLine {
                shelf,
                qty: 1,
                taken,
                observed: None,
                end,
                node: Some(format!("n{shelf}")),
            })
            .collect();
        BuyerOutcome {
            buyer,
            app_server: 0,
            qty: lines.len() as u32,
            observed_stock: None,
            result,
            error: None,
            stock_after: None,
            latency_us: 1,
            start_us: 0,
            end_us: 1,
            read_us: None,
            round_trips: 1,
            retries: 0,
            bucket: None,
            node: None,
            checkout: None,
            cart: Some(Box::new(CartStory {
                partial: lines.iter().any(|l| l.end == LineEnd::Stranded),
                lines,
                compensations: 0,
                fallback: false,
                doomed_hold_us: None,
            })),
            epoch: None,
        }
    }

    #[test]
    fn live_rows_count_sold_and_stranded_per_shelf_and_add_up() {
        let mut run = RunModel::new("r-1".into(), config(Scenario::Cart));
        run.push_batch(vec![
            outcome(
                4,
                OutcomeResult::Reserved,
                &[(0, 1, LineEnd::Taken), (2, 1, LineEnd::Taken)],
            ),
            outcome(
                7,
                OutcomeResult::SoldOut,
                &[(0, 1, LineEnd::Stranded), (1, 0, LineEnd::SoldOut)],
            ),
        ]);
        let v = view(&run).unwrap();
        assert_eq!(v.rows.len(), 3);
        let phone = &v.rows[0];
        assert_eq!(
            (phone.name.as_str(), phone.stock, phone.sold, phone.stranded),
            ("phone", 10, 1, 1)
        );
        assert_eq!(phone.remaining, 8);
        assert!(v.rows.iter().all(ShelfRow::adds_up));
        assert_eq!(phone.tiles[0], (TileState::Sold(Some(4)), 1));
        assert_eq!(phone.tiles[1], (TileState::Stranded, 1));
        assert_eq!(phone.tiles.len(), 10);
        assert_eq!((v.partial, v.stranded), (1, 1));
        assert_eq!(phone.node, Some(("n0".into(), 0)));
        assert_eq!(v.rows[2].node, Some(("n2".into(), 2)));
        assert!(!v.final_numbers && v.crossslot.is_none());
        let said: Vec<String> = v
            .facts()
            .iter()
            .map(|f| format!("{}{}", f.n, f.what))
            .collect();
        assert_eq!(
            said,
            [
                "1 partial carts (failed orders still holding units)",
                "1 units stranded in them",
                "0 lines given back by compensation",
                "0 refused while the units were there",
            ]
        );
        // No order is a phantom by the run's total stock; the audit marks none oversold.
        assert!(run.rows.iter().all(|r| r.phantom_units == 0));
        assert_eq!(
            timeline_caption(&run),
            "1 of 2 orders taken whole so far; 1 failed holding units."
        );
    }

    #[test]
    fn an_oversold_shelf_shows_phantoms_and_a_crossslot_failure_is_kept() {
        let mut c = config(Scenario::Warehouses);
        c.race.stock = 2; // harbour 1, west 1, north 0
        let mut run = RunModel::new("r-2".into(), c);
        run.push_batch(vec![
            outcome(1, OutcomeResult::Reserved, &[(0, 1, LineEnd::Taken)]),
            outcome(2, OutcomeResult::Reserved, &[(0, 1, LineEnd::Taken)]),
        ]);
        let v = view(&run).unwrap();
        assert!(v.warehouses);
        let harbour = &v.rows[0];
        assert_eq!(
            (
                harbour.stock,
                harbour.sold,
                harbour.remaining,
                harbour.oversold
            ),
            (1, 2, -1, 1)
        );
        assert_eq!(
            harbour.tiles,
            vec![(TileState::Sold(Some(1)), 1), (TileState::Phantom, 1)]
        );
        // Warehouses without splitting: no carts, no partial orders, no compensations.
        let ids: Vec<&str> = v.facts().iter().map(|f| f.id).collect();
        assert_eq!(ids, ["fallback-orders", "refused-with-units"]);
        let mut split = v.clone();
        split.split = true;
        let said: Vec<String> = split
            .facts()
            .iter()
            .map(|f| format!("{}{}", f.n, f.what))
            .collect();
        assert_eq!(
            said,
            [
                "0 partial orders (split orders that failed still holding units)",
                "0 units stranded in them",
                "0 orders served by a fallback warehouse",
                "0 refused while the units were there",
            ]
        );
        run.fail("Redis refused the run: ... CROSSSLOT ...".into());
        assert!(view(&run).unwrap().crossslot.is_some());
        assert!(
            view(&RunModel::new(
                "r".into(),
                RunRequest::for_strategy("lua").validate(0).unwrap()
            ))
            .is_none()
        );
    }

    #[test]
    fn the_header_counts_the_units_the_shelves_will_hold() {
        assert_eq!(
            stock_phrase(Scenario::Cart, 10, 3, 3),
            "45 in stock over 3 SKUs"
        );
        let run = RunModel::new("r-4".into(), config(Scenario::Cart));
        let shelved: u32 = view(&run).unwrap().rows.iter().map(|r| r.stock).sum();
        assert_eq!(
            shelved, 45,
            "the rows the run draws hold what the header says"
        );
        assert_eq!(
            stock_phrase(Scenario::Warehouses, 10, 3, 3),
            "10 in stock over 3 warehouses"
        );
        assert_eq!(
            stock_phrase(Scenario::Cart, 1000, 1, 3),
            "1,000 in stock over 1 SKU"
        );
        assert_eq!(stock_phrase(Scenario::Race, 10, 3, 3), "10 in stock");
    }

    #[test]
    fn a_big_shelf_groups_units_per_tile() {
        let mut c = config(Scenario::Cart);
        c.race.stock = 1000;
        let run = RunModel::new("r-3".into(), c);
        let v = view(&run).unwrap();
        let case = &v.rows[1];
        assert_eq!((case.stock, case.per_tile), (2000, 17));
        assert!(case.tiles.len() as u64 <= MAX_TILES);
        assert_eq!(case.tiles.iter().map(|t| t.1).sum::<u64>(), 2000);
    }
}
