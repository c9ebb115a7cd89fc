//! The cart and warehouse scenarios' panels: a row of tiles per shelf with its ledger, the
//! partial carts and stranded units, fallbacks, node colours on a cluster, the CROSSSLOT
//! lesson; and their knobs. Every word about a strategy comes from `hello`; every number
//! from the run's frames, read through `model::carts`.

use leptos::prelude::*;
use oversold_protocol::Scenario;
use oversold_protocol::limits::{LIMITS, Range};

use crate::components::controls::Knob;
use crate::model::carts::{self, CartView, ShelfRow, TileState};
use crate::model::text::thousands;
use crate::session::Session;

/// True when the run panels show shelves: the run on screen is a cart or warehouse run or,
/// before any run, the switch says so. Step-through mode keeps the race's panels.
pub fn on_screen(session: Session) -> bool {
    session.page.with(|p| {
        p.step.is_none()
            && match &p.run {
                Some(r) => carts::is_multi_key(&r.config),
                None => session
                    .knobs
                    .with(|k| matches!(k.scenario, Scenario::Cart | Scenario::Warehouses)),
            }
    })
}

/// The shelves, their ledger, and what went wrong.
#[component]
pub fn CartShelves() -> impl IntoView {
    let session = expect_context::<Session>();
    // A Memo: every outcomes frame changes the page, and the rows are laid out once per frame
    // for the several parts that read them.
    let view = Memo::new(move |_| session.with_run(|r| r.and_then(carts::view)));
    let lesson = move || {
        session.page.with(|p| {
            let about = p.about("cart_script_untagged")?;
            Some((
                about.explanation.why.to_string(),
                about.explanation.cost.to_string(),
            ))
        })
    };
    view! {
        <div class="carts" data-testid="cart-shelves">
            {move || match view.get() {
                None => view! {
                    <p class="muted">"Pick a strategy above: each SKU (or warehouse) gets a row of tiles here."</p>
                }.into_any(),
                Some(v) => shelves(v, lesson()).into_any(),
            }}
        </div>
    }
}

fn shelves(v: CartView, lesson: Option<(String, String)>) -> impl IntoView {
    let what = if v.warehouses { "warehouse" } else { "SKU" };
    let numbers = if v.final_numbers {
        "read back from Redis"
    } else {
        "so far"
    };
    let crossslot = v.crossslot.clone().or(v.would_fail_on_cluster.clone());
    // Each scenario's own facts (model::carts): a number with its test hook, then what it
    // counts.
    let facts = v.facts();
    view! {
        <h2 class="section-title">{format!("One row per {what} ")}<span class="muted">{format!("({numbers})")}</span></h2>
        <ul class="cart-facts" data-testid="cart-facts">
            {facts.into_iter().map(|f| view! {
                <li class:bad=f.bad data-testid=f.id data-n=f.n><b>{thousands(f.n as i64)}</b>{f.what}</li>
            }).collect_view()}
        </ul>
        <p class="cart-legend">
            <span class="tile sold"></span>" sold (#buyer) "
            <span class="tile stranded"></span>" stranded in a failed order "
            <span class="tile phantom"></span>" taken, never existed "
            <span class="tile"></span>" on the shelf"
        </p>
        {v.rows.into_iter().map(shelf).collect_view()}
        {crossslot.map(|m| lesson_box(m, lesson))}
    }
}

/// One shelf: its name and node, its tiles, its ledger line.
fn shelf(row: ShelfRow) -> impl IntoView {
    let bad = !row.adds_up() || row.oversold > 0;
    let tiles = row.tiles.len();
    let ledger = format!(
        "stock {} = {} left + {} sold + {} stranded{}",
        thousands(row.stock.into()),
        thousands(row.remaining),
        thousands(row.sold as i64),
        thousands(row.stranded as i64),
        if row.oversold > 0 {
            format!(" · {} oversold", thousands(row.oversold as i64))
        } else {
            String::new()
        },
    );
    let per = (row.per_tile > 1).then(|| format!(" · one tile = {} units", row.per_tile));
    let node = row.node.clone().map(|(name, i)| {
        view! { <span class=format!("node-badge node-{}", i % 4)>{name}</span> }
    });
    let node_class = row
        .node
        .as_ref()
        .map_or(String::new(), |(_, i)| format!(" node-{}", i % 4));
    view! {
        <div
            class="shelf"
            data-testid="shelf"
            data-name=row.name.clone()
            data-stock=row.stock
            data-sold=row.sold
            data-stranded=row.stranded
            data-final=row.remaining
            data-oversold=row.oversold
            data-node=row.node.clone().map(|n| n.0)
        >
            <div class="shelf-head">
                <b>{row.name.clone()}</b>
                {node}
                <span class="ledger" class:bad=bad data-testid="shelf-ledger">{ledger}{per}</span>
            </div>
            <div class=format!("tiles shelf-tiles{node_class}") data-tiles=tiles>
                {row.tiles.into_iter().map(tile).collect_view()}
            </div>
        </div>
    }
}

fn tile((state, units): (TileState, u64)) -> impl IntoView {
    let (class, label) = match state {
        TileState::Sold(Some(b)) if units == 1 => ("tile sold", format!("#{b}")),
        TileState::Sold(_) => ("tile sold", units.to_string()),
        TileState::Stranded => ("tile stranded", String::new()),
        TileState::Free => ("tile", String::new()),
        TileState::Phantom => ("tile phantom", "!".to_string()),
    };
    view! { <span class=class>{label}</span> }
}

/// The CROSSSLOT lesson: what Redis said, why, the fix and its cost (the strategy's words).
fn lesson_box(message: String, lesson: Option<(String, String)>) -> impl IntoView {
    view! {
        <div class="lesson" data-testid="crossslot-lesson" role="note">
            <h3>"CROSSSLOT"</h3>
            <p class="lesson-said">{message}</p>
            {lesson.map(|(why, cost)| view! {
                <p><b>"Why, and the fix: "</b>{why}</p>
                <p><b>"The fix's cost: "</b>{cost}</p>
            })}
        </div>
    }
}

/// The cart or warehouse knobs, in their scenario.
#[component]
pub fn CartKnobs() -> impl IntoView {
    let session = expect_context::<Session>();
    let knobs = session.knobs;
    let limits = Memo::new(move |_| {
        session
            .page
            .with(|p| p.hello.as_ref().map_or(LIMITS.cart, |h| h.limits.cart))
    });
    let scenario = move || knobs.with(|k| k.scenario);
    let field = move |get: fn(&crate::model::controls::CartKnobs) -> u32,
                      set: fn(&mut crate::model::controls::CartKnobs, u32),
                      range: fn(&oversold_protocol::limits::CartLimits) -> Range| {
        (
            Signal::derive(move || knobs.with(|k| get(&k.cart))),
            Callback::new(move |v: u32| knobs.update(|k| set(&mut k.cart, v))),
            Signal::derive(move || range(&limits.get())),
        )
    };
    let (skus, set_skus, skus_range) = field(|c| c.skus, |c, v| c.skus = v, |l| l.skus);
    let (lines, set_lines, lines_range) =
        field(|c| c.max_lines, |c, v| c.max_lines = v, |l| l.skus);
    let (whs, set_whs, whs_range) =
        field(|c| c.warehouses, |c, v| c.warehouses = v, |l| l.warehouses);
    view! {
        <Show when=move || scenario() == Scenario::Cart>
            <Knob label="SKUs" hint="Products in the catalogue, each with its own stock: phone, case, charger, ..." testid="skus-input" value=skus on_change=set_skus range=skus_range/>
            <Knob label="Lines per cart" hint="Each cart holds 1 to this many different SKUs (at most the SKUs)." testid="max-lines-input" value=lines on_change=set_lines range=lines_range/>
        </Show>
        <Show when=move || scenario() == Scenario::Warehouses>
            <Knob label="Warehouses" hint="The stock is split over them; each buyer prefers one and falls back to the nearest." testid="warehouses-input" value=whs on_change=set_whs range=whs_range/>
            <label class="check">
                <input
                    type="checkbox"
                    data-testid="split-input"
                    prop:checked=move || knobs.with(|k| k.cart.split)
                    on:change=move |ev| knobs.update(|k| k.cart.split = event_target_checked(&ev))
                />
                " Split an order over warehouses when none can fill it alone"
            </label>
        </Show>
    }
}
