//! The inventory grid: one tile per unit in stock, red "phantom" tiles for units that never existed.
//!
//! A grid of 100,000 DOM nodes would freeze the page, so each section (real stock, phantom units)
//! switches to grouped tiles past [`MAX_TILES_PER_SECTION`]: one tile then stands for a round
//! number of units and shows how full it is. The two sections are scaled separately so ten real
//! units stay ten readable tiles even when thousands of phantom units pile up beside them.

use super::axis::step_at_least;

/// Most tiles drawn for one section before tiles start standing for several units.
pub const MAX_TILES_PER_SECTION: u64 = 200;

/// One tile on screen.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Tile {
    /// First unit (0-based, in the order units are sold) this tile stands for.
    pub first_unit: u64,
    /// How many units it stands for (1 unless the section is grouped).
    pub units: u64,
    /// How many of those units are sold.
    pub filled: u64,
    /// Who holds the unit, for a sold single-unit tile.
    pub buyer: Option<u32>,
    /// A unit beyond the initial stock: sold, but it never existed.
    pub phantom: bool,
    /// In a room's sale: its buyer is a phone in the audience, not a bot.
    pub phone: bool,
}

impl Grid {
    /// Mark the tiles whose buyer is a phone: in a room's sale, buyers past the bots
    /// (`bots`) are the audience's clicks.
    pub fn mark_phones(&mut self, bots: u32) {
        for t in self
            .stock
            .tiles
            .iter_mut()
            .chain(self.phantom.tiles.iter_mut())
        {
            t.phone = t.buyer.is_some_and(|b| b > bots);
        }
    }
}

impl Tile {
    /// The text inside the tile.
    pub fn label(&self) -> String {
        match (self.units, self.buyer) {
            (1, Some(buyer)) => format!("#{buyer}"),
            (1, None) => String::new(),
            _ if self.phantom => format!("+{}", self.filled),
            _ => format!("{}–{}", self.first_unit + 1, self.first_unit + self.units),
        }
    }

    /// How full the tile is, 0 to 100, for grouped tiles' fill bar.
    pub fn fill_percent(&self) -> u64 {
        (self.filled * 100).checked_div(self.units).unwrap_or(0)
    }
}

/// One run of tiles sharing a scale.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Section {
    /// The tiles, in unit order.
    pub tiles: Vec<Tile>,
    /// Units each full tile stands for.
    pub units_per_tile: u64,
    /// Units in the section.
    pub units: u64,
}

/// How large to draw tiles, so a handful fill the stage and hundreds still fit. Ordered from
/// largest to smallest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TileSize {
    /// Up to 30 tiles.
    Large,
    /// Up to 80 tiles.
    Medium,
    /// Up to 200 tiles.
    Small,
    /// More.
    Tiny,
}

impl TileSize {
    /// The size for a section of `tiles` tiles.
    pub fn for_count(tiles: usize) -> Self {
        match tiles {
            0..=30 => TileSize::Large,
            31..=80 => TileSize::Medium,
            81..=200 => TileSize::Small,
            _ => TileSize::Tiny,
        }
    }

    /// The CSS class for the grid.
    pub fn class(self) -> &'static str {
        match self {
            TileSize::Large => "tiles-l",
            TileSize::Medium => "tiles-m",
            TileSize::Small => "tiles-s",
            TileSize::Tiny => "tiles-xs",
        }
    }
}

/// Everything the grid draws.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grid {
    /// Units that existed.
    pub stock: Section,
    /// Units sold beyond the stock.
    pub phantom: Section,
    /// Tile size for the real units.
    pub stock_size: TileSize,
    /// Tile size for the phantom units: the size their count calls for, never larger than the stock's.
    pub phantom_size: TileSize,
}

/// The smallest of 1, 2, 5, 10, 20, 50, … units per tile that keeps `units` within `max_tiles`.
pub fn units_per_tile(units: u64, max_tiles: u64) -> u64 {
    // ⌈units / per⌉ ≤ max_tiles exactly when per ≥ ⌈units / max_tiles⌉.
    step_at_least(units.div_ceil(max_tiles.max(1)))
}

fn section(
    first: u64,
    units: u64,
    sold: u64,
    phantom: bool,
    holder: &dyn Fn(u64) -> Option<u32>,
) -> Section {
    let per = units_per_tile(units, MAX_TILES_PER_SECTION);
    let tiles = (0..units.div_ceil(per))
        .map(|i| {
            let start = first + i * per;
            let len = per.min(first + units - start);
            let filled = sold.saturating_sub(start).min(len);
            let buyer = if len == 1 && filled == 1 {
                holder(start)
            } else {
                None
            };
            Tile {
                first_unit: start,
                units: len,
                filled,
                buyer,
                phantom,
                phone: false,
            }
        })
        .collect();
    Section {
        tiles,
        units_per_tile: per,
        units,
    }
}

/// Lay out the grid for `stock` units with `units_sold` sold so far; `holder` names a unit's buyer.
pub fn layout(stock: u32, units_sold: u64, holder: impl Fn(u64) -> Option<u32>) -> Grid {
    let stock = u64::from(stock);
    let stock_section = section(0, stock, units_sold, false, &holder);
    let phantom_section = section(
        stock,
        units_sold.saturating_sub(stock),
        units_sold,
        true,
        &holder,
    );
    let stock_size = TileSize::for_count(stock_section.tiles.len());
    // Phantom tiles may shrink to fit their pile, but never grow past the real ones: the units
    // that existed stay the largest thing on the grid.
    let phantom_size = TileSize::for_count(phantom_section.tiles.len()).max(stock_size);
    Grid {
        stock: stock_section,
        phantom: phantom_section,
        stock_size,
        phantom_size,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_tile_per_unit_with_buyer_numbers_and_phantoms_after_the_stock() {
        // 3 in stock, 5 sold: buyers 10..14 in sale order.
        let grid = layout(3, 5, |u| Some(10 + u as u32));
        let labels: Vec<String> = grid.stock.tiles.iter().map(Tile::label).collect();
        assert_eq!(labels, ["#10", "#11", "#12"]);
        let phantom: Vec<(String, bool)> = grid
            .phantom
            .tiles
            .iter()
            .map(|t| (t.label(), t.phantom))
            .collect();
        assert_eq!(phantom, [("#13".into(), true), ("#14".into(), true)]);
        assert_eq!(
            (grid.stock_size, grid.phantom_size),
            (TileSize::Large, TileSize::Large)
        );
    }

    #[test]
    fn unsold_units_are_empty_tiles() {
        let grid = layout(4, 1, |_| Some(7));
        assert_eq!(
            grid.stock
                .tiles
                .iter()
                .map(|t| t.filled)
                .collect::<Vec<_>>(),
            [1, 0, 0, 0]
        );
        assert_eq!(grid.stock.tiles[1].label(), "");
        assert!(grid.phantom.tiles.is_empty());
    }

    #[test]
    fn picks_round_group_sizes() {
        assert_eq!(units_per_tile(0, 200), 1);
        assert_eq!(units_per_tile(200, 200), 1);
        assert_eq!(units_per_tile(201, 200), 2);
        assert_eq!(units_per_tile(1_000, 200), 5);
        assert_eq!(units_per_tile(2_001, 200), 20);
        assert_eq!(units_per_tile(100_000, 200), 500);
    }

    #[test]
    fn large_stock_groups_tiles_and_never_draws_more_than_the_cap() {
        let grid = layout(100_000, 1_000_000, |_| None);
        assert!(grid.stock.tiles.len() as u64 <= MAX_TILES_PER_SECTION);
        assert!(grid.phantom.tiles.len() as u64 <= MAX_TILES_PER_SECTION);
        assert_eq!(grid.stock.units_per_tile, 500);
        assert_eq!(grid.phantom.units, 900_000);
        assert_eq!(
            (grid.stock_size, grid.phantom_size),
            (TileSize::Small, TileSize::Small)
        );

        // A partly sold group shows its fill, and its range as the label.
        let grid = layout(1_000, 7, |_| None);
        let first = &grid.stock.tiles[0];
        assert_eq!(
            (first.units, first.filled, first.fill_percent()),
            (5, 5, 100)
        );
        assert_eq!(grid.stock.tiles[1].fill_percent(), 40);
        assert_eq!(first.label(), "1–5");
        assert_eq!(grid.stock_size, TileSize::Small);
    }

    #[test]
    fn small_stock_stays_single_tiles_beside_a_grouped_phantom_section() {
        let grid = layout(10, 5_010, |u| Some(u as u32 + 1));
        assert_eq!(grid.stock.tiles.len(), 10);
        assert_eq!(grid.stock.tiles[9].label(), "#10");
        assert_eq!(grid.phantom.units_per_tile, 50);
        assert_eq!(grid.phantom.tiles.len(), 100);
        assert_eq!(grid.phantom.tiles[0].label(), "+50");
        // Ten real units stay large; the pile of phantoms shrinks to fit.
        assert_eq!(
            (grid.stock_size, grid.phantom_size),
            (TileSize::Large, TileSize::Small)
        );
        // Phantoms never outgrow the real units.
        let grid = layout(150, 160, |_| None);
        assert_eq!(
            (grid.stock_size, grid.phantom_size),
            (TileSize::Small, TileSize::Small)
        );
    }
}
