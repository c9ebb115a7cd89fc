//! A checkout's live numbers, where the race shows its counter: units available (going
//! negative when the shop promised more than it had), held, sold in the ledger, leaked and
//! oversold, with both clocks. From the latest `reconciliation` frame, then the summary.

use leptos::prelude::*;

use crate::model::checkout::books::Source;
use crate::model::checkout::clock;
use crate::session::Session;

/// The big available counter and the tallies beside it.
#[component]
pub fn CheckoutCounters() -> impl IntoView {
    let session = expect_context::<Session>();
    let books = super::books(session);
    let scale = move || {
        session.with_run(|r| {
            r.and_then(|r| r.config.race.checkout.as_ref())
                .map(|c| c.time_scale)
        })
    };
    let source = move || {
        let running = session.with_run(|r| r.is_some_and(|r| r.is_running()));
        match (books.with(|b| b.source), running) {
            (Source::Final, _) => "read back at the end: Redis and the ledger",
            (Source::Live, true) => "live: Redis and the ledger, reconciled 4 times a second",
            (Source::Live, false) => "before any checkout",
        }
    };
    let clocks = move || {
        let (shop, real) = books.with(|b| (b.shop_ms, b.real_ms));
        scale().map(|s| clock::both(shop, real, s))
    };
    view! {
        <div class="counters checkout-counters">
            <div class="stock-counter" class:negative=move || books.with(|b| b.available < 0)>
                <span class="caption">"Available"</span>
                <span class="stock-figure">
                    <span class="big" data-testid="checkout-available">{move || books.with(|b| b.available)}</span>
                    <span class="of">" / " {move || books.with(|b| b.stock)}</span>
                </span>
                <span class="caption small">{source}</span>
                {move || clocks().map(|c| view! { <span class="clocks" data-testid="clocks">{c}</span> })}
            </div>
            <Stat label="Held" testid="checkout-held" value=Signal::derive(move || books.with(|b| b.held)) tone="held"/>
            <Stat label="Sold (ledger)" testid="checkout-sold" value=Signal::derive(move || books.with(|b| b.sold as i64)) tone="neutral"/>
            <Stat label="Leaked" testid="checkout-leaked" value=Signal::derive(move || books.with(|b| b.leaked)) tone="bad"/>
            <Stat
                label="Oversold units"
                testid="checkout-oversold"
                value=Signal::derive(move || books.with(|b| b.oversold() as i64))
                tone="bad"
            />
        </div>
    }
}

/// One tally, drawn like the race's.
#[component]
fn Stat(
    /// What is counted.
    label: &'static str,
    /// The test hook on the bare number.
    testid: &'static str,
    /// The count.
    value: Signal<i64>,
    /// `bad` turns red once above zero, `held` amber; `neutral` never changes colour.
    tone: &'static str,
) -> impl IntoView {
    view! {
        <div class="stat" data-tone=tone class:lit=move || value.get() != 0>
            <span class="num" data-testid=testid>{move || value.get()}</span>
            <span class="caption">{label}</span>
        </div>
    }
}
