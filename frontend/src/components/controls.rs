//! The knobs of the next run, each with a one-line explanation. Ranges come from `hello.limits`.
//! In the checkout scenario the checkout's own knobs follow (`checkout::knobs`).

use leptos::prelude::*;
use oversold_protocol::limits::{LIMITS, Limits, Range};

use crate::components::checkout::knobs::CheckoutKnobs;
use crate::model::checkout::clock::shop_span;
use crate::model::controls::{Knobs, SLIDER_STEPS, parse_clamped, slider_position, slider_value};
use crate::model::text::{millis, thousands};
use crate::session::Session;

/// The form. Changes apply to the next run; a run in flight keeps the config it started with.
#[component]
pub fn Controls() -> impl IntoView {
    let session = expect_context::<Session>();
    // A Memo: the page state changes with every outcomes frame, the limits only with `hello`,
    // and six knobs redraw their ranges from them.
    let limits = Memo::new(move |_| {
        session
            .page
            .with(|p| p.hello.as_ref().map_or(LIMITS, |h| h.limits))
    });
    let knobs = session.knobs;
    // A getter and a setter for one field of the knobs, as a slider/number pair wants them.
    let field =
        move |get: fn(&Knobs) -> u32, set: fn(&mut Knobs, u32), range: fn(&Limits) -> Range| {
            (
                Signal::derive(move || knobs.with(get)),
                Callback::new(move |v: u32| knobs.update(|k| set(k, v))),
                Signal::derive(move || range(&limits.get())),
            )
        };
    let (stock, set_stock, stock_range) = field(|k| k.stock, |k, v| k.stock = v, |l| l.stock);
    let (buyers, set_buyers, buyers_range) = field(|k| k.buyers, |k, v| k.buyers = v, |l| l.buyers);
    let (qty, set_qty, qty_range) = field(|k| k.qty, |k, v| k.qty = v, |l| l.qty);
    let (apps, set_apps, apps_range) = field(
        |k| k.app_servers,
        |k, v| k.app_servers = v,
        |l| l.app_servers,
    );
    let (spread, set_spread, spread_range) = field(
        |k| k.arrival_spread_ms,
        |k, v| k.arrival_spread_ms = v,
        |l| l.arrival_spread_ms,
    );
    let (race, set_race, race_range) = field(
        |k| k.race_window_ms,
        |k, v| k.race_window_ms = v,
        |l| l.race_window_ms,
    );
    let random = move || knobs.with(|k| k.random_qty);

    let qty_hint = Signal::derive(move || {
        let q = qty.get();
        if random() && q > 1 {
            format!("Each buyer orders a random 1 to {q} units (seeded, so runs repeat).")
        } else if q == 1 {
            "Each buyer orders exactly 1 unit.".to_string()
        } else {
            format!("Each buyer orders exactly {q} units.")
        }
    });

    view! {
        <section class="panel controls" aria-label="Run settings">
            <div class="panel-head">
                <h2>"Settings"</h2>
                // The scenario is a switch of its own, not a setting: Reset keeps it.
                <button
                    class="link"
                    on:click=move |_| knobs.update(|k| *k = Knobs { scenario: k.scenario, ..Knobs::defaults(&limits.get()) })
                >
                    "Reset"
                </button>
            </div>
            <Knob
                label="Units in stock"
                hint="How many units exist before the sale opens."
                testid="stock-input"
                value=stock
                on_change=set_stock
                range=stock_range
            />
            <Knob
                label="Simultaneous buyers"
                hint="Each buyer is a real task sending its own commands to Redis."
                testid="buyers-input"
                value=buyers
                on_change=set_buyers
                range=buyers_range
            />
            <Knob
                label="Units per order"
                hint=qty_hint
                testid="qty-input"
                value=qty
                on_change=set_qty
                range=qty_range
            />
            <label class="check">
                <input
                    type="checkbox"
                    data-testid="random-qty"
                    prop:checked=random
                    on:change=move |ev| knobs.update(|k| k.random_qty = event_target_checked(&ev))
                />
                " Random quantity: 1 to the number above"
            </label>
            <Knob
                label="App servers"
                hint="Separate Redis connections the buyers are spread over, like a fleet behind a load balancer."
                testid="app-servers-input"
                value=apps
                on_change=set_apps
                range=apps_range
            />
            <Knob
                label="Arrival spread"
                hint="Buyers arrive over this window; 0 means all at the same instant."
                testid="spread-input"
                value=spread
                on_change=set_spread
                range=spread_range
                unit="ms"
            />
            <Knob
                label="Race window"
                hint="App work between reading the stock and writing it. Wider window, more overselling."
                testid="race-input"
                value=race
                on_change=set_race
                range=race_range
                unit="ms"
            />
            <CheckoutKnobs/>
            <crate::components::carts::CartKnobs/>
        </section>
    }
}

/// A knob's value in its unit: `ms` (real milliseconds), `shop ms` (shop time: `5 min`),
/// `%`, `×` (a time scale), or none for counts.
fn show(v: u32, unit: &str) -> String {
    match unit {
        "ms" => millis(v),
        "shop ms" => shop_span(v.into()),
        "%" => format!("{v} %"),
        "×" => format!("×{}", thousands(v.into())),
        _ => thousands(v.into()),
    }
}

/// One numeric knob: a log-scale slider and a number box kept in step.
#[component]
pub fn Knob(
    /// What the knob sets.
    label: &'static str,
    /// One line on what it means for the run.
    #[prop(into)]
    hint: Signal<String>,
    /// Test hook on the number box.
    testid: &'static str,
    /// The current value.
    value: Signal<u32>,
    /// Called with a new value, already clamped into `range`.
    on_change: Callback<u32>,
    /// Accepted values.
    range: Signal<Range>,
    /// The value's unit (see [`show`]): `ms`, `shop ms`, `%`, `×`, or none for counts.
    #[prop(optional)]
    unit: &'static str,
) -> impl IntoView {
    let id = format!("knob-{testid}");
    let shown = move || show(value.get(), unit);
    let range_text = move || {
        let r = range.get();
        format!("{} to {}", show(r.min, unit), show(r.max, unit))
    };
    let typed = move |ev| {
        if let Some(v) = parse_clamped(&event_target_value(&ev), range.get_untracked()) {
            on_change.run(v);
        }
    };
    view! {
        <div class="knob">
            <div class="knob-head">
                <label for=id.clone()>{label}</label>
                <output class="knob-value">{shown}</output>
            </div>
            <div class="knob-inputs">
                <input
                    type="range"
                    min="0"
                    max=SLIDER_STEPS
                    aria-label=label
                    prop:value=move || slider_position(value.get(), range.get()).to_string()
                    on:input=move |ev| {
                        if let Ok(pos) = event_target_value(&ev).parse::<u32>() {
                            on_change.run(slider_value(pos, range.get_untracked()));
                        }
                    }
                />
                <input
                    id=id
                    type="number"
                    inputmode="numeric"
                    min=move || range.get().min
                    max=move || range.get().max
                    data-testid=testid
                    prop:value=move || value.get().to_string()
                    on:input=typed
                    on:change=typed
                />
            </div>
            <p class="hint">{move || hint.get()} <span class="range">" (" {range_text} ")"</span></p>
        </div>
    }
}
