//! A checkout's live numbers, where the race shows its counter: units available (going
//! negative when the shop promised more than it had), held, sold in the ledger, leaked and
//! oversold, with both clocks. From the latest `reconciliation` frame, then the summary.
//! One closure draws them from one snapshot: they change together.

use leptos::prelude::*;

use crate::model::checkout::books::Source;
use crate::model::checkout::clock;
use crate::session::Session;

/// The big available counter and the tallies beside it.
#[component]
pub fn CheckoutCounters() -> impl IntoView {
    let session = expect_context::<Session>();
    let books = super::books(session);
    let context = Memo::new(move |_| {
        session.with_run(|r| {
            (
                r.is_some_and(|r| r.is_running()),
                r.and_then(|r| r.config.race.checkout())
                    .map(|c| c.time_scale),
            )
        })
    });
    move || {
        let b = books.get();
        let (running, scale) = context.get();
        let source = match (b.source, running) {
            (Source::Final, _) => "read back at the end: Redis and the ledger",
            (Source::Live, true) => "live: Redis and the ledger, reconciled 4 times a second",
            (Source::Live, false) => "before any checkout",
        };
        let clocks = scale.map(|s| {
            view! { <span class="clocks" data-testid="clocks">{clock::both(b.shop_ms, b.real_ms, s)}</span> }
        });
        view! {
            <div class="counters checkout-counters">
                <div class="stock-counter" class:negative=b.available < 0>
                    <span class="caption">"Available"</span>
                    <span class="stock-figure">
                        <span class="big" data-testid="checkout-available">{b.available}</span>
                        <span class="of">" / " {b.stock}</span>
                    </span>
                    <span class="caption small">{source}</span>
                    {clocks}
                </div>
                {stat("Held", "checkout-held", b.held, "held")}
                {stat("Sold (ledger)", "checkout-sold", b.sold as i64, "neutral")}
                {stat("Leaked", "checkout-leaked", b.leaked, "bad")}
                {stat("Oversold units", "checkout-oversold", b.oversold() as i64, "bad")}
            </div>
        }
    }
}

/// One tally, drawn like the race's: `bad` turns red once above zero, `held` blue.
fn stat(
    label: &'static str,
    testid: &'static str,
    value: i64,
    tone: &'static str,
) -> impl IntoView {
    view! {
        <div class="stat" data-tone=tone class:lit=value != 0>
            <span class="num" data-testid=testid>{value}</span>
            <span class="caption">{label}</span>
        </div>
    }
}
