//! The checkout's inventory grid: one tile per unit, each in the state the books put it in.
//!
//! Redis does not know *which* unit a buyer holds (units are a count), so the grid deals the
//! books' counts out in a fixed order: sold (in the ledger), settling (confirmed, its row on
//! its way), held, leaked, back on the shelf after a release or an expiry, then never
//! touched. Tiles past the stock are units promised that never existed (the counter below
//! zero), drawn as the race draws its phantoms. Labels come from the stories that ended:
//! who bought a sold unit, whose hold a held unit is in and how much of it is left on the
//! shop clock (crashed buyers' holds, whose expiry the page knows); a hold of a buyer still
//! paying has no story yet, so its tile shows no countdown. Past
//! [`crate::model::tiles::MAX_TILES_PER_SECTION`] tiles stand for several units each.

use oversold_protocol::{BuyerOutcome, CheckoutEnd, Stage, StepOutcome};

use super::books::Books;
use crate::model::tiles::{MAX_TILES_PER_SECTION, TileSize, units_per_tile};

/// Where a unit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnitState {
    /// Sold: a confirmed row in the ledger.
    Sold,
    /// Confirmed in Redis; its ledger row is on its way.
    Settling,
    /// In an active hold: reserved, not paid yet; it expires unless confirmed or released.
    Held,
    /// Off the shelf with no hold and no order: lost until a reconciliation.
    Leaked,
    /// Back on the shelf after a release or an expired hold.
    Released,
    /// On the shelf, never taken.
    Available,
}

impl UnitState {
    /// Every state, in the order the grid deals them (and the legend lists them).
    pub const ALL: [UnitState; 6] = [
        UnitState::Sold,
        UnitState::Settling,
        UnitState::Held,
        UnitState::Leaked,
        UnitState::Released,
        UnitState::Available,
    ];

    /// The word for the legend, a tile's title and its CSS class.
    pub fn as_str(self) -> &'static str {
        match self {
            UnitState::Sold => "sold",
            UnitState::Settling => "settling",
            UnitState::Held => "held",
            UnitState::Leaked => "leaked",
            UnitState::Released => "released",
            UnitState::Available => "available",
        }
    }
}

/// One tile.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnitTile {
    /// First unit (0-based) it stands for.
    pub first_unit: u64,
    /// Units it stands for (1 unless grouped).
    pub units: u64,
    /// The state of its (first) unit.
    pub state: UnitState,
    /// Past the stock: a unit promised that never existed.
    pub phantom: bool,
    /// Whose unit it is (the buyer that bought, holds or leaked it), when a story says.
    pub buyer: Option<u32>,
    /// A held unit's hold: the share of its life left, 0 to 100, when its expiry is known.
    pub left_pct: Option<u8>,
}

impl UnitTile {
    /// The text inside: `#12` for a unit with a known buyer, a range for a group.
    pub fn label(&self) -> String {
        match (self.units, self.buyer) {
            (1, Some(b)) => format!("#{b}"),
            (1, None) => String::new(),
            _ => format!("{}–{}", self.first_unit + 1, self.first_unit + self.units),
        }
    }

    /// The tooltip: `unit 3: held by #12, 40% of its hold left`.
    pub fn title(&self) -> String {
        let what = if self.units > 1 {
            format!(
                "units {}–{}: {} from here",
                self.first_unit + 1,
                self.first_unit + self.units,
                self.state.as_str()
            )
        } else {
            format!("unit {}: {}", self.first_unit + 1, self.state.as_str())
        };
        let who = self.buyer.map(|b| format!(" (#{b})")).unwrap_or_default();
        let left = self
            .left_pct
            .map(|p| format!(", {p}% of its hold left"))
            .unwrap_or_default();
        let never = if self.phantom { ", never existed" } else { "" };
        format!("{what}{who}{left}{never}")
    }
}

/// How many units are in each state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// In the ledger.
    pub sold: u64,
    /// Confirmed, row on its way.
    pub settling: u64,
    /// In active holds.
    pub held: u64,
    /// Lost until reconciled.
    pub leaked: u64,
    /// Back on the shelf.
    pub released: u64,
    /// Never taken.
    pub available: u64,
    /// Promised beyond the stock.
    pub oversold: u64,
}

impl Counts {
    /// The count for `state`.
    pub fn of(&self, state: UnitState) -> u64 {
        match state {
            UnitState::Sold => self.sold,
            UnitState::Settling => self.settling,
            UnitState::Held => self.held,
            UnitState::Leaked => self.leaked,
            UnitState::Released => self.released,
            UnitState::Available => self.available,
        }
    }
}

/// Everything the checkout grid draws.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitGrid {
    /// The units that existed.
    pub stock: Vec<UnitTile>,
    /// Units promised beyond the stock.
    pub phantom: Vec<UnitTile>,
    /// Units per tile in each section.
    pub per_tile: (u64, u64),
    /// Tile size for each section (phantoms never larger than the stock's).
    pub sizes: (TileSize, TileSize),
    /// Units per state.
    pub counts: Counts,
}

/// A hold whose expiry the page knows: a crashed buyer's (its story ended, the hold ticks on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct KnownHold {
    buyer: u32,
    expires_at: u64,
    qty: u32,
}

/// What the stories say about units: who bought, whose holds still tick, who leaked, and how
/// many units went back on the shelf.
#[derive(Debug, Default)]
struct Told {
    sold: Vec<(u32, u32)>,
    holds: Vec<KnownHold>,
    leaked: Vec<(u32, u32)>,
    returned: u64,
}

/// What the stories say; a crashed buyer's hold still ticks until the shop clock `now` passes its expiry.
fn told<'a>(outcomes: impl Iterator<Item = &'a BuyerOutcome>, now: u64) -> Told {
    let mut t = Told::default();
    for o in outcomes {
        let Some(s) = &o.checkout else { continue };
        let released = s
            .steps
            .iter()
            .any(|st| st.stage == Stage::Release && st.outcome == StepOutcome::Released);
        if released {
            t.returned += u64::from(o.qty);
        }
        match s.end {
            CheckoutEnd::Confirmed => t.sold.push((o.buyer, o.qty)),
            // Paid after the hold expired: the reaper gave the units back.
            CheckoutEnd::Expired => t.returned += u64::from(o.qty),
            CheckoutEnd::Crashed => match (s.hold_id.is_some(), s.expires_at_shop_ms) {
                (true, Some(at)) if at > now => t.holds.push(KnownHold {
                    buyer: o.buyer,
                    expires_at: at,
                    qty: o.qty,
                }),
                (true, _) => t.returned += u64::from(o.qty),
                (false, _) => t.leaked.push((o.buyer, o.qty)),
            },
            _ => {}
        }
    }
    t.holds.sort_by_key(|h| (h.expires_at, h.buyer));
    t
}

/// One entry per unit: `(buyer, share of hold left)`, from `(buyer, qty)` lists.
fn per_unit(list: &[(u32, u32)]) -> impl Iterator<Item = (Option<u32>, Option<u8>)> + '_ {
    list.iter()
        .flat_map(|&(b, q)| std::iter::repeat_n((Some(b), None), q as usize))
}

/// Lay the grid out from `books`, labelled from `outcomes`; `hold_ttl_ms` sizes the countdown
/// rings (the share of a hold left at the books' shop clock).
pub fn layout<'a>(
    books: &Books,
    outcomes: impl Iterator<Item = &'a BuyerOutcome>,
    hold_ttl_ms: u64,
) -> UnitGrid {
    let now = books.shop_ms;
    let t = told(outcomes, now);
    let counts = counts(books, t.returned);
    let stock = u64::from(books.stock);
    // Every unit the books account for, or the stock if that is more (the rest is on the shelf).
    let accounted: u64 = UnitState::ALL.iter().map(|&s| counts.of(s)).sum();
    let total = stock.max(accounted);
    let mut all = deal(&t, &counts, total, now, hold_ttl_ms);
    let phantom_units = all.split_off(stock.min(total) as usize);
    grid(&all, &phantom_units, stock, counts)
}

/// The books' counts per state; of the units on the shelf, those the stories say came back
/// (`returned`) count as released.
fn counts(books: &Books, returned: u64) -> Counts {
    let pos = |n: i64| u64::try_from(n).unwrap_or(0);
    let available = pos(books.available);
    let released = returned.min(available);
    Counts {
        sold: books.sold,
        settling: pos(books.settling),
        held: pos(books.held),
        leaked: pos(books.leaked),
        released,
        available: available - released,
        oversold: books.oversold(),
    }
}

/// `total` units, state by state in the order the grid deals them, each with whom it belongs
/// to when a story says (and, for a hold, how much of it is left).
fn deal(t: &Told, counts: &Counts, total: u64, now: u64, hold_ttl_ms: u64) -> Vec<Unit> {
    let none = || std::iter::repeat((None, None));
    per_unit(&t.sold)
        .chain(none())
        .take(counts.sold as usize)
        .map(|l| (UnitState::Sold, l))
        .chain(
            none()
                .take(counts.settling as usize)
                .map(|l| (UnitState::Settling, l)),
        )
        .chain(
            rings(&t.holds, now, hold_ttl_ms)
                .chain(none())
                .take(counts.held as usize)
                .map(|l| (UnitState::Held, l)),
        )
        .chain(
            per_unit(&t.leaked)
                .chain(none())
                .take(counts.leaked as usize)
                .map(|l| (UnitState::Leaked, l)),
        )
        .chain(
            none()
                .take(counts.released as usize)
                .map(|l| (UnitState::Released, l)),
        )
        .chain(none().map(|l| (UnitState::Available, l)))
        .take(total as usize)
        .collect()
}

/// One entry per held unit: its buyer, and the share of its hold left at the shop clock `now`.
fn rings(
    holds: &[KnownHold],
    now: u64,
    hold_ttl_ms: u64,
) -> impl Iterator<Item = (Option<u32>, Option<u8>)> + '_ {
    holds.iter().flat_map(move |h| {
        let left = (h.expires_at.saturating_sub(now) * 100)
            .checked_div(hold_ttl_ms)
            .unwrap_or(0)
            .min(100) as u8;
        std::iter::repeat_n((Some(h.buyer), Some(left)), h.qty as usize)
    })
}

/// The dealt units as tiles: the stock's, then the phantoms' after them, each section grouped
/// to stay under [`MAX_TILES_PER_SECTION`].
fn grid(all: &[Unit], phantom_units: &[Unit], stock: u64, counts: Counts) -> UnitGrid {
    let per_stock = units_per_tile(stock, MAX_TILES_PER_SECTION);
    let per_phantom = units_per_tile(phantom_units.len() as u64, MAX_TILES_PER_SECTION);
    let stock_tiles = tiles(all, 0, per_stock, false);
    let phantom_tiles = tiles(phantom_units, stock, per_phantom, true);
    let stock_size = TileSize::for_count(stock_tiles.len());
    UnitGrid {
        sizes: (
            stock_size,
            TileSize::for_count(phantom_tiles.len()).max(stock_size),
        ),
        stock: stock_tiles,
        phantom: phantom_tiles,
        per_tile: (per_stock, per_phantom),
        counts,
    }
}

type Unit = (UnitState, (Option<u32>, Option<u8>));

/// Tiles of `per` units each, numbered from unit `first`; only a tile of one unit is labelled.
fn tiles(units: &[Unit], first: u64, per: u64, phantom: bool) -> Vec<UnitTile> {
    units
        .chunks(per.max(1) as usize)
        .enumerate()
        .map(|(i, chunk)| {
            let (state, (buyer, left)) = chunk[0];
            let single = chunk.len() == 1;
            UnitTile {
                first_unit: first + i as u64 * per,
                units: chunk.len() as u64,
                state,
                phantom,
                buyer: buyer.filter(|_| single),
                left_pct: left.filter(|_| single),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::checkout::fixtures::{ending, reconciliation, story};
    use oversold_protocol::{Stage as S, StepOutcome as O};

    fn states(tiles: &[UnitTile]) -> Vec<&'static str> {
        tiles.iter().map(|t| t.state.as_str()).collect()
    }

    #[test]
    fn units_are_dealt_sold_settling_held_leaked_released_then_available() {
        let mut books = Books::live(&reconciliation(10, 4, 2, 2, 1));
        books.settling = 1;
        books.available = 3;
        let outcomes = [
            ending(7, CheckoutEnd::Confirmed),
            ending(8, CheckoutEnd::Abandoned),
            ending(9, CheckoutEnd::Confirmed),
        ];
        let g = layout(&books, outcomes.iter(), 300_000);
        assert_eq!(
            states(&g.stock),
            [
                "sold",
                "sold",
                "settling",
                "held",
                "held",
                "leaked",
                "released",
                "available",
                "available",
                "available"
            ]
        );
        let labels: Vec<String> = g.stock.iter().map(UnitTile::label).collect();
        assert_eq!(&labels[..3], ["#7", "#9", ""]);
        assert!(g.phantom.is_empty());
        assert_eq!(
            g.counts,
            Counts {
                sold: 2,
                settling: 1,
                held: 2,
                leaked: 1,
                released: 1,
                available: 2,
                oversold: 0
            }
        );
        assert_eq!(g.counts.of(UnitState::Released), 1);
    }

    #[test]
    fn a_crashed_buyers_hold_counts_down_on_the_shop_clock() {
        // The books' clock is at 1:40; a five-minute hold that expires at 4:10 has half left.
        let books = Books::live(&reconciliation(4, 2, 2, 0, 0));
        let mut crashed = ending(5, CheckoutEnd::Crashed);
        let s = crashed.checkout.as_mut().unwrap();
        s.hold_id = Some("h5.1".into());
        s.expires_at_shop_ms = Some(250_000);
        let g = layout(&books, [crashed.clone()].iter(), 300_000);
        let held: Vec<(Option<u32>, Option<u8>)> = g
            .stock
            .iter()
            .filter(|t| t.state == UnitState::Held)
            .map(|t| (t.buyer, t.left_pct))
            .collect();
        // One known hold; the other held unit belongs to a buyer still paying (no story yet).
        assert_eq!(held, [(Some(5), Some(50)), (None, None)]);
        assert_eq!(
            g.stock[0].title(),
            "unit 1: held (#5), 50% of its hold left"
        );
        // Once it has expired, the units are back on the shelf.
        let mut later = books;
        later.shop_ms = 260_000;
        later.held = 1;
        later.available = 3;
        let g = layout(&later, [crashed].iter(), 300_000);
        assert_eq!(g.counts.released, 1);
        assert_eq!(g.stock[0].left_pct, None);
    }

    #[test]
    fn an_oversell_draws_phantoms_and_a_crash_without_a_hold_leaks() {
        // Naive: 10 in stock, the counter at -3, 8 sold, 5 leaked.
        let books = Books::live(&reconciliation(10, -3, 0, 8, 5));
        let leaked = story(
            4,
            CheckoutEnd::Crashed,
            &[(S::Reserve, O::Taken), (S::Crash, O::Crashed)],
        );
        let g = layout(&books, [leaked].iter(), 300_000);
        assert_eq!(g.stock.len(), 10);
        assert_eq!(g.phantom.len(), 3);
        assert!(
            g.phantom
                .iter()
                .all(|t| t.phantom && t.state == UnitState::Leaked)
        );
        assert_eq!(g.counts.oversold, 3);
        let first_leak = g
            .stock
            .iter()
            .find(|t| t.state == UnitState::Leaked)
            .unwrap();
        assert_eq!(first_leak.buyer, Some(4));
        assert!(g.phantom[0].title().ends_with("never existed"));
    }

    #[test]
    fn a_big_stock_is_grouped_under_the_cap() {
        let books = Books::live(&reconciliation(1_000, 900, 50, 40, 10));
        let g = layout(&books, std::iter::empty(), 300_000);
        assert_eq!(g.per_tile.0, 5);
        assert_eq!(g.stock.len(), 200);
        assert_eq!(g.stock[0].label(), "1–5");
        assert_eq!(g.stock[0].title(), "units 1–5: sold from here");
        assert_eq!(g.sizes.0, TileSize::Small);
    }
}
