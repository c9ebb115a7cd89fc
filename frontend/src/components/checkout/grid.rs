//! The checkout's inventory grid: one tile per unit in the state the books put it in (sold,
//! held with a countdown ring on the shop clock, leaked, back on the shelf, available), and
//! the units promised beyond the stock as phantoms. The dealing is `model::checkout::units`.

use leptos::prelude::*;

use crate::model::checkout::units::{self, UnitGrid, UnitState, UnitTile};
use crate::model::text::thousands;
use crate::session::Session;

/// The grid with its legend.
#[component]
pub fn CheckoutGrid() -> impl IntoView {
    let session = expect_context::<Session>();
    let books = super::books(session);
    // A Memo: the legend, both sections and their captions read one layout, rebuilt once
    // per change of the books or the outcomes.
    let grid = Memo::new(move |_| -> UnitGrid {
        let b = books.get();
        session.with_run(|r| {
            let ttl = r
                .and_then(|r| r.config.race.checkout())
                .map_or(0, |c| u64::from(c.hold_ttl_ms));
            let rows = r.map(|r| r.rows.as_slice()).unwrap_or_default();
            units::layout(&b, rows.iter().map(|row| &row.outcome), ttl)
        })
    });
    let caption = move || {
        grid.with(|g| {
            let per = g.per_tile.0;
            let stock = books.with(|b| b.stock);
            let mut text = format!("({} units in stock", thousands(stock.into()));
            if per > 1 {
                text.push_str(&format!(" · one tile = {per} units"));
            }
            text.push(')');
            text
        })
    };
    let size = move || grid.with(|g| format!("tiles units {}", g.sizes.0.class()));
    let phantom_size = move || grid.with(|g| format!("tiles units phantoms {}", g.sizes.1.class()));
    let oversold = move || grid.with(|g| g.counts.oversold);
    view! {
        <div class="inventory checkout-grid">
            <h2 class="section-title">"Inventory " <span class="muted">{caption}</span></h2>
            <ul class="unit-legend" aria-label="Unit states">
                {UnitState::ALL
                    .map(|s| {
                        view! {
                            <li data-state=s.as_str()>
                                <i></i>
                                {s.as_str()}
                                " "
                                <b data-testid=format!("units-{}", s.as_str())>{move || grid.with(|g| g.counts.of(s))}</b>
                            </li>
                        }
                    })}
                <li data-state="oversold">
                    <i></i>
                    "oversold "
                    <b data-testid="units-oversold">{oversold}</b>
                </li>
            </ul>
            <Tiles class=Signal::derive(size) testid="unit-grid" tiles=Signal::derive(move || grid.with(|g| g.stock.clone()))/>
            <Show when=move || oversold() != 0>
                <h2 class="section-title phantom-title">
                    "Promised, never existed "
                    <span>{move || format!("({} units below zero)", thousands(oversold() as i64))}</span>
                </h2>
                <Tiles
                    class=Signal::derive(phantom_size)
                    testid="unit-phantoms"
                    tiles=Signal::derive(move || grid.with(|g| g.phantom.clone()))
                />
            </Show>
        </div>
    }
}

/// One section of tiles. One component for both sections, so the keyed list is compiled
/// once (each `<For>` is its own copy of the diffing code in the wasm).
#[component]
fn Tiles(
    /// The grid's classes (tile size).
    class: Signal<String>,
    /// The test hook.
    testid: &'static str,
    /// The tiles, in unit order.
    tiles: Signal<Vec<UnitTile>>,
) -> impl IntoView {
    view! {
        <div class=class data-testid=testid>
            <For each=move || tiles.get() key=|t| t.clone() let:tile>
                <UnitView tile=tile/>
            </For>
        </div>
    }
}

/// One unit (or group of units); a held one with a known expiry carries its countdown ring.
#[component]
fn UnitView(
    /// What to draw.
    tile: UnitTile,
) -> impl IntoView {
    // Computed here: a `>` inside an attribute would end the tag in `view!`.
    let group = tile.units > 1;
    let ring = tile.left_pct.map(|left| {
        // Through the CSSOM (`style:`), which the page's CSP allows; a style attribute it blocks.
        let arc = format!("conic-gradient(var(--held) {left}%, var(--wash-3) 0)");
        view! { <i class="ring" style:background=arc></i> }
    });
    view! {
        <div
            class="tile unit"
            class:phantom=tile.phantom
            class:group=group
            data-state=tile.state.as_str()
            data-testid="unit"
            title=tile.title()
        >
            {ring}
            <span>{tile.label()}</span>
        </div>
    }
}
