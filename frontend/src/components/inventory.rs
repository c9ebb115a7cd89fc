//! The inventory grid: tiles fill with buyer numbers as units sell; red tiles for units that never existed.

use leptos::prelude::*;

use crate::model::text::thousands;
use crate::model::tiles::{self, Grid, Section, Tile};
use crate::session::Session;

/// Real stock first, then (only when something was oversold) the phantom units.
#[component]
pub fn Inventory(
    /// How many tiles of each section to draw, all of them when not given: a slow phone draws
    /// its grid a few tiles a frame, so no long task of hundreds of tiles holds up its Buy.
    #[prop(optional, into)]
    drawn: Option<Signal<usize>>,
) -> impl IntoView {
    let session = expect_context::<Session>();
    let drawn = move || drawn.map_or(usize::MAX, |d| d.get());
    // A Memo because several parts of the view read the same layout, and laying out hundreds of
    // tiles once per batch is enough.
    let grid = Memo::new(move |_| -> Grid {
        // In a room's sale the phones' tiles are marked apart from the bots'.
        let sale_bots = session.room.with(|room| {
            let sale = room.sale.as_ref()?;
            session.with_run(|r| {
                r.filter(|r| r.run_id == sale.sale_id)
                    .map(|_| sale.config.bots)
            })
        });
        let mut grid = session.with_run(|r| match r {
            // The counters' units sold (the server's, once it has summed up), so the grid and
            // the "Units sold" counter never disagree.
            Some(r) => tiles::layout(r.config.race.stock, r.counters().units_sold, |u| {
                r.buyer_for_unit(u)
            }),
            None => tiles::layout(session.knobs.with(|k| k.stock), 0, |_| None),
        });
        if let Some(bots) = sale_bots {
            grid.mark_phones(bots);
        }
        grid
    });
    let stock_size = move || grid.with(|g| g.stock_size.class());
    let phantom_size = move || grid.with(|g| g.phantom_size.class());
    let stock_caption = move || grid.with(|g| caption(&g.stock, "units in stock"));
    let phantom_caption =
        move || grid.with(|g| caption(&g.phantom, "units sold that never existed"));
    let has_phantoms = move || grid.with(|g| g.phantom.units > 0);
    let phones = move || {
        grid.with(|g| {
            g.stock
                .tiles
                .iter()
                .chain(&g.phantom.tiles)
                .any(|t| t.phone)
        })
    };
    view! {
        <div class="inventory">
            <h2 class="section-title">"Inventory " <span class="muted">{stock_caption}</span>
                <Show when=phones><span class="muted legend-phone" data-testid="legend-phone">"a phone in the room"</span></Show>
            </h2>
            <div class=move || format!("tiles {}", stock_size()) data-testid="inventory-grid">
                <For each=move || grid.with(|g| g.stock.tiles[..drawn().min(g.stock.tiles.len())].to_vec()) key=|t| t.clone() let:tile>
                    <TileView tile=tile/>
                </For>
                <Show when=move || grid.with(|g| g.stock.units == 0)>
                    <span class="muted">"Nothing in stock: every order should be refused."</span>
                </Show>
            </div>
            <Show when=has_phantoms>
                <h2 class="section-title phantom-title">"Phantom units " <span>{phantom_caption}</span></h2>
                <div class=move || format!("tiles phantoms {}", phantom_size()) data-testid="phantom-grid">
                    <For each=move || grid.with(|g| g.phantom.tiles[..drawn().min(g.phantom.tiles.len())].to_vec()) key=|t| t.clone() let:tile>
                        <TileView tile=tile/>
                    </For>
                </div>
            </Show>
        </div>
    }
}

/// E.g. `10 units in stock` or `5,000 units sold that never existed · one tile = 50 units`.
fn caption(section: &Section, what: &str) -> String {
    let mut text = format!("({} {what}", thousands(section.units as i64));
    if section.units_per_tile > 1 {
        text.push_str(&format!(
            " · one tile = {} units",
            thousands(section.units_per_tile as i64)
        ));
    }
    text.push(')');
    text
}

/// One tile: a unit (empty or with its buyer's number), or a group of units with a fill bar.
#[component]
fn TileView(
    /// What to draw.
    tile: Tile,
) -> impl IntoView {
    let grouped = tile.units > 1;
    let sold = tile.filled == tile.units;
    let title = if grouped {
        format!(
            "units {}–{}: {} of {} sold",
            tile.first_unit + 1,
            tile.first_unit + tile.units,
            tile.filled,
            tile.units
        )
    } else {
        match tile.buyer {
            Some(b) if tile.phone => format!("unit {} → buyer #{b}, a phone", tile.first_unit + 1),
            Some(b) => format!("unit {} → buyer #{b}", tile.first_unit + 1),
            None => format!("unit {}: still in stock", tile.first_unit + 1),
        }
    };
    let fill = tile.fill_percent();
    view! {
        <div class="tile" class:sold=sold class:phantom=tile.phantom class:group=grouped class:phone=tile.phone title=title>
            {grouped.then(|| view! { <i class="fill" style:height=format!("{fill}%")></i> })}
            <span>{tile.label()}</span>
        </div>
    }
}
