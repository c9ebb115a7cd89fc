//! The checkout's knobs in the settings form, each with one line on what it does. Ranges come
//! from `hello.limits.checkout`; the outage is offered only where the server may pause its
//! own Redis (`hello.outage_allowed`), and says so where it may not.

use leptos::prelude::*;
use oversold_protocol::limits::{CHECKOUT_LIMITS, CheckoutLimits, Range};
use oversold_protocol::{FailMode, Scenario};

use crate::components::controls::{Field, Knob};
use crate::model::checkout::clock::{real_ms, real_span, shop_span};
use crate::model::checkout::knobs::{CheckoutKnobs as Form, customers_range, percent_range};
use crate::model::controls::Knobs;
use crate::session::Session;

/// The checkout part of the form; nothing in the race scenario.
#[component]
pub fn CheckoutKnobs() -> impl IntoView {
    let session = expect_context::<Session>();
    let knobs = session.knobs;
    // A Memo: the page changes with every frame, the limits only with `hello`.
    let limits = Memo::new(move |_| {
        session.page.with(|p| {
            p.hello.as_ref().map_or((CHECKOUT_LIMITS, false), |h| {
                (h.limits.checkout, h.outage_allowed)
            })
        })
    });
    let form = FormFields { knobs, limits };
    let shown = move || knobs.with(|k| k.scenario == Scenario::Checkout);

    view! {
        <Show when=shown>
            <h3 class="knob-group">"Checkout"</h3>
            <ClockKnobs form/>
            <MishapKnobs form/>
            <CustomerKnobs form/>
            <FailModeSwitch knobs/>
            <label class="check">
                <input
                    type="checkbox"
                    data-testid="no-wait-expiry"
                    prop:checked=move || knobs.with(|k| k.checkout.no_wait_expiry)
                    on:change=move |ev| knobs.update(|k| k.checkout.no_wait_expiry = event_target_checked(&ev))
                />
                " End when the last buyer is done (what is still held stays held)"
            </label>
            <OutageKnobs form/>
            {move || knobs.with(|k| k.problem()).map(|why| view! {
                <p class="knob-problem" data-testid="knob-problem" role="alert">{format!("The server would refuse this: {why}.")}</p>
            })}
        </Show>
    }
}

/// The form and the checkout's limits (with whether the outage is offered), from which each
/// knob below takes its field.
#[derive(Clone, Copy)]
struct FormFields {
    knobs: RwSignal<Knobs>,
    limits: Memo<(CheckoutLimits, bool)>,
}

impl FormFields {
    /// The field that `get` reads and `set` writes, in the range `range` picks from the limits.
    fn field(
        self,
        get: fn(&Form) -> u32,
        set: fn(&mut Form, u32),
        range: fn(&CheckoutLimits) -> Range,
    ) -> Field {
        let Self { knobs, limits } = self;
        Field {
            value: Signal::derive(move || knobs.with(|k| get(&k.checkout))),
            set: Callback::new(move |v: u32| knobs.update(|k| set(&mut k.checkout, v))),
            range: Signal::derive(move || range(&limits.get().0)),
        }
    }
}

/// Hold, time scale and payment time: the shop's clock, each hint also in the room's time.
#[component]
fn ClockKnobs(form: FormFields) -> impl IntoView {
    let ttl = form.field(
        |k| k.hold_ttl_ms,
        |k, v| k.hold_ttl_ms = v,
        |l| l.hold_ttl_ms,
    );
    let scale = form.field(|k| k.time_scale, |k, v| k.time_scale = v, |l| l.time_scale);
    let pay = form.field(|k| k.pay_ms, |k, v| k.pay_ms = v, |l| l.pay_ms);
    let scale_now = move || scale.value.get();
    let ttl_hint = Signal::derive(move || {
        format!(
            "A reservation is held this long on the shop clock, then expires and a reaper returns it: {} in the room.",
            real_span(real_ms(ttl.value.get().into(), scale_now()))
        )
    });
    let pay_hint = Signal::derive(move || {
        format!(
            "Each buyer takes a seeded while to pay, up to twice this ({} in the room at most).",
            real_span(real_ms(2 * u64::from(pay.value.get()), scale_now()))
        )
    });
    let scale_hint = Signal::derive(move || {
        format!(
            "Shop time runs this many times faster than the room's: {} of shop time is one real second.",
            shop_span(u64::from(scale_now()) * 1_000)
        )
    });
    view! {
        <Knob label="Hold" hint=ttl_hint testid="hold-ttl-input" value=ttl.value on_change=ttl.set range=ttl.range unit="shop ms"/>
        <Knob label="Time scale" hint=scale_hint testid="time-scale-input" value=scale.value on_change=scale.set range=scale.range unit="×"/>
        <Knob label="Payment time" hint=pay_hint testid="pay-input" value=pay.value on_change=pay.set range=pay.range unit="shop ms"/>
    }
}

/// What goes wrong for some buyers, in percent: they walk away, their card is declined, their
/// app server crashes, or their client resends.
#[component]
fn MishapKnobs(form: FormFields) -> impl IntoView {
    let abandon = form.field(
        |k| k.abandon_pct,
        |k, v| k.abandon_pct = v,
        |l| percent_range(l.abandon_fraction),
    );
    let fail = form.field(
        |k| k.pay_fail_pct,
        |k, v| k.pay_fail_pct = v,
        |l| percent_range(l.pay_fail_fraction),
    );
    let crash = form.field(
        |k| k.crash_pct,
        |k, v| k.crash_pct = v,
        |l| percent_range(l.crash_fraction),
    );
    let retry = form.field(
        |k| k.retry_pct,
        |k, v| k.retry_pct = v,
        |l| percent_range(l.retry_fraction),
    );
    view! {
        <Knob
            label="Walk away"
            hint="Buyers who reserve, then leave: the app releases their units."
            testid="abandon-input"
            value=abandon.value
            on_change=abandon.set
            range=abandon.range
            unit="%"
        />
        <Knob
            label="Card declined"
            hint="Buyers whose payment fails: the app releases their units."
            testid="pay-fail-input"
            value=fail.value
            on_change=fail.set
            range=fail.range
            unit="%"
        />
        <Knob
            label="App server crash"
            hint="Buyers whose app server dies right after reserving: nobody gives their units back."
            testid="crash-input"
            value=crash.value
            on_change=crash.set
            range=crash.range
            unit="%"
        />
        <Knob
            label="Resend"
            hint="Buyers whose client times out and sends the same request again."
            testid="retry-input"
            value=retry.value
            on_change=retry.set
            range=retry.range
            unit="%"
        />
    }
}

/// How many distinct customers the buyers are, and how much one customer may hold or buy.
#[component]
fn CustomerKnobs(form: FormFields) -> impl IntoView {
    let FormFields { knobs, limits } = form;
    // Customers depend on the crowd: at most one per buyer, half of them unless set.
    let customers_of = move || {
        let (l, buyers) = (limits.get().0, knobs.with(|k| k.buyers));
        customers_range(&l, buyers)
    };
    let customers = Signal::derive(move || {
        knobs
            .with(|k| k.checkout.customers)
            .unwrap_or(customers_of().default)
    });
    let set_customers =
        Callback::new(move |v: u32| knobs.update(|k| k.checkout.customers = Some(v)));
    let limit = form.field(
        |k| k.per_customer_limit,
        |k, v| k.per_customer_limit = v,
        |l| l.per_customer_limit,
    );
    view! {
        <Knob
            label="Customers"
            hint="Distinct customers: fewer than buyers means bots placing several orders."
            testid="customers-input"
            value=customers
            on_change=set_customers
            range=Signal::derive(customers_of)
        />
        <Knob
            label="Per-customer limit"
            hint="Most units one customer may hold or have bought."
            testid="limit-input"
            value=limit.value
            on_change=limit.set
            range=limit.range
        />
    }
}

/// Fail closed or fail open: what the app does with an order while Redis is unreachable.
#[component]
fn FailModeSwitch(knobs: RwSignal<Knobs>) -> impl IntoView {
    let mode = move || knobs.with(|k| k.checkout.fail_mode);
    let set_mode = move |m: FailMode| knobs.update(|k| k.checkout.fail_mode = m);
    view! {
        <div class="knob">
            <div class="knob-head"><label>"While Redis is unreachable"</label></div>
            <div class="fail-mode" role="group" aria-label="Fail mode">
                <button class="filter" class:on=move || mode() == FailMode::Closed data-testid="fail-closed" on:click=move |_| set_mode(FailMode::Closed)>
                    "Fail closed"
                </button>
                <button class="filter" class:on=move || mode() == FailMode::Open data-testid="fail-open" on:click=move |_| set_mode(FailMode::Open)>
                    "Fail open"
                </button>
            </div>
            <p class="hint">
                "Closed refuses the order (nothing oversold, sales lost); open takes a backorder (no sale lost, maybe more promised than the stock)."
            </p>
        </div>
    }
}

/// When the server pauses its own Redis and for how long, where it may; otherwise why not.
#[component]
fn OutageKnobs(form: FormFields) -> impl IntoView {
    let at = form.field(
        |k| k.outage_at_ms,
        |k, v| k.outage_at_ms = v,
        |l| l.outage_at_ms,
    );
    let outage = form.field(|k| k.outage_ms, |k, v| k.outage_ms = v, |l| l.outage_ms);
    view! {
        <Show
            when=move || form.limits.get().1
            fallback=|| view! {
                <p class="hint outage-note" data-testid="outage-note">
                    "Outage: not offered. Pausing Redis stalls every client of it, so this server only pauses a redis-server it started itself, and this one it did not (it answers outage_not_allowed). Serve with --private-redis to compare fail closed with fail open."
                </p>
            }
        >
            <Knob
                label="Outage at"
                hint="When the server pauses its own Redis (CLIENT PAUSE), on the shop clock."
                testid="outage-at-input"
                value=at.value
                on_change=at.set
                range=at.range
                unit="shop ms"
            />
            <Knob
                label="Outage length"
                hint="How long Redis stays paused; 0: no outage."
                testid="outage-input"
                value=outage.value
                on_change=outage.set
                range=outage.range
                unit="shop ms"
            />
        </Show>
    }
}
