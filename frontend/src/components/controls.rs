//! The knobs of the next run, each with a one-line explanation. Ranges come from `hello.limits`.
//! In the checkout scenario the checkout's own knobs follow (`checkout::knobs`).

use leptos::prelude::*;
use oversold_protocol::limits::{LIMITS, Limits, Range};
use oversold_protocol::{EvictionPolicy, Scenario};

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
    let form = FormFields {
        knobs: session.knobs,
        limits,
    };
    view! {
        <section class="panel controls" aria-label="Run settings">
            <div class="panel-head">
                <h2>"Settings"</h2>
                // The scenario is a switch of its own, not a setting: Reset keeps it.
                <button
                    class="link"
                    on:click=move |_| form.knobs.update(|k| *k = Knobs { scenario: k.scenario, ..Knobs::defaults(&limits.get()) })
                >
                    "Reset"
                </button>
            </div>
            <CrowdKnobs form/>
            <ServerKnobs form/>
            <Show when=move || session.knobs.with(|k| k.scenario == Scenario::Checkout)>
                {crate::components::lazy::when_loaded(crate::components::lazy::checkout_knobs)}
            </Show>
            <crate::components::carts::CartKnobs/>
            <EvictionPolicyKnob/>
        </section>
    }
}

/// Eviction's one knob: the `maxmemory-policy` of the run's own Redis, and what Redis does
/// under it when memory is full (the protocol's sentence). Shown only in that scenario.
#[component]
fn EvictionPolicyKnob() -> impl IntoView {
    let session = expect_context::<Session>();
    let shown = move || session.knobs.with(|k| k.scenario == Scenario::Eviction);
    let policy = move || session.knobs.with(|k| k.policy);
    let picked = move |ev| {
        if let Ok(p) = event_target_value(&ev).parse::<EvictionPolicy>() {
            session.knobs.update(|k| k.policy = p);
        }
    };
    view! {
        <Show when=shown>
            <div class="knob">
                <div class="knob-head">
                    <label for="knob-policy-input">"Redis's maxmemory-policy"</label>
                </div>
                <select id="knob-policy-input" data-testid="policy-input" on:change=picked>
                    {EvictionPolicy::ALL
                        .map(|p| view! { <option value=p.as_str() selected=move || policy() == p>{p.as_str()}</option> })
                        .collect_view()}
                </select>
                <p class="hint">{move || policy().describe()}</p>
            </div>
        </Show>
    }
}

/// The form and the limits from `hello`, from which each knob below takes its field.
#[derive(Clone, Copy)]
struct FormFields {
    knobs: RwSignal<Knobs>,
    limits: Memo<Limits>,
}

/// One field of a form as a [`Knob`] wants it: its value, its setter, its range. The
/// checkout's knobs (`checkout::knobs`) take theirs the same way.
#[derive(Clone, Copy)]
pub(crate) struct Field {
    pub(crate) value: Signal<u32>,
    pub(crate) set: Callback<u32>,
    pub(crate) range: Signal<Range>,
}

impl FormFields {
    /// The field that `get` reads and `set` writes, in the range `range` picks from the limits.
    fn field(
        self,
        get: fn(&Knobs) -> u32,
        set: fn(&mut Knobs, u32),
        range: fn(&Limits) -> Range,
    ) -> Field {
        let Self { knobs, limits } = self;
        Field {
            value: Signal::derive(move || knobs.with(get)),
            set: Callback::new(move |v: u32| knobs.update(|k| set(k, v))),
            range: Signal::derive(move || range(&limits.get())),
        }
    }
}

/// The crowd: units in stock, buyers, and how many units each orders (fixed or random).
#[component]
fn CrowdKnobs(form: FormFields) -> impl IntoView {
    let knobs = form.knobs;
    let stock = form.field(|k| k.stock, |k, v| k.stock = v, |l| l.stock);
    let buyers = form.field(|k| k.buyers, |k, v| k.buyers = v, |l| l.buyers);
    let qty = form.field(|k| k.qty, |k, v| k.qty = v, |l| l.qty);
    let random = move || knobs.with(|k| k.random_qty);
    let qty_hint = Signal::derive(move || {
        let q = qty.value.get();
        if random() && q > 1 {
            format!("Each buyer orders a random 1 to {q} units (seeded, so runs repeat).")
        } else if q == 1 {
            "Each buyer orders exactly 1 unit.".to_string()
        } else {
            format!("Each buyer orders exactly {q} units.")
        }
    });
    view! {
        <Knob
            label="Units in stock"
            hint="How many units exist before the sale opens."
            testid="stock-input"
            value=stock.value
            on_change=stock.set
            range=stock.range
        />
        <Knob
            label="Simultaneous buyers"
            hint="Each buyer is a real task sending its own commands to Redis."
            testid="buyers-input"
            value=buyers.value
            on_change=buyers.set
            range=buyers.range
        />
        <Knob
            label="Units per order"
            hint=qty_hint
            testid="qty-input"
            value=qty.value
            on_change=qty.set
            range=qty.range
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
    }
}

/// The app's side: how many app servers, how the arrivals spread, how wide the race window.
#[component]
fn ServerKnobs(form: FormFields) -> impl IntoView {
    let apps = form.field(
        |k| k.app_servers,
        |k, v| k.app_servers = v,
        |l| l.app_servers,
    );
    let spread = form.field(
        |k| k.arrival_spread_ms,
        |k, v| k.arrival_spread_ms = v,
        |l| l.arrival_spread_ms,
    );
    let race = form.field(
        |k| k.race_window_ms,
        |k, v| k.race_window_ms = v,
        |l| l.race_window_ms,
    );
    view! {
        <Knob
            label="App servers"
            hint="Separate Redis connections the buyers are spread over, like a fleet behind a load balancer."
            testid="app-servers-input"
            value=apps.value
            on_change=apps.set
            range=apps.range
        />
        <Knob
            label="Arrival spread"
            hint="Buyers arrive over this window; 0 means all at the same instant."
            testid="spread-input"
            value=spread.value
            on_change=spread.set
            range=spread.range
            unit="ms"
        />
        <Knob
            label="Race window"
            hint="App work between reading the stock and writing it. Wider window, more overselling."
            testid="race-input"
            value=race.value
            on_change=race.set
            range=race.range
            unit="ms"
        />
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
