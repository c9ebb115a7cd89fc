//! The title bar, with the workshop's link, the view switches and the WebSocket and Redis
//! status on the right.

use leptos::prelude::*;
use oversold_protocol::{RedisState, Scenario};

use crate::components::toggles::Toggles;
use crate::model::text::{millis, thousands};
use crate::model::{carts, strategies};
use crate::session::{Link, Session};

/// Title, one-line pitch, the view switches, and connection chips.
#[component]
pub fn Header() -> impl IntoView {
    let session = expect_context::<Session>();
    // The claim names the strategies the server features, so it cannot outlive them.
    let claim = move || {
        let scenario = session.knobs.with(|k| k.scenario);
        session
            .page
            .with(|p| strategies::pitch(p.offered(scenario)))
    };
    let pitch = move || {
        // A room's sale races its own stock and crowd, not the form's.
        if let Some(room) = session.room.with(|r| r.pitch()) {
            return room;
        }
        let k = session.knobs.get();
        let what = match k.scenario {
            Scenario::Race => "one Redis counter.",
            Scenario::Checkout => "reserve, pay, then confirm or give back: do the books add up?",
            Scenario::Cart => "carts of several SKUs, all or nothing.",
            Scenario::Warehouses => "one SKU in several warehouses, nearest first.",
            Scenario::BusyScript => {
                "one long script mid-sale: who waits, and what a restart loses?"
            }
            Scenario::Durability => "Redis killed mid-sale: what does each persistence keep?",
            Scenario::Eviction => "a Redis out of memory mid-sale: what does its policy delete?",
            Scenario::Failover => "the primary dies before its replica caught up: what survives?",
        };
        let mut text = format!(
            "{} buyers, {}, {what}",
            thousands(k.buyers.into()),
            carts::stock_phrase(k.scenario, k.stock, k.cart.skus, k.cart.warehouses),
        );
        if let Some(claim) = claim() {
            text.push(' ');
            text.push_str(&claim);
        }
        text
    };
    view! {
        <header class="header">
            <div class="brand">
                <h1>"oversold" <span class="subtitle">"the inventory race, live"</span></h1>
                <p class="pitch">{pitch}</p>
            </div>
            <div class="chips">
                // The workshop is a page of its own (its own wasm, loaded only when opened).
                <a class="toggle ws-link" href="/?view=workshop" data-testid="workshop-link">"Workshop"</a>
                <Toggles/>
                <LinkChip/>
                <RedisChip/>
            </div>
        </header>
    }
}

/// WebSocket state: connected, connecting, or reconnecting with the wait shown.
#[component]
pub(crate) fn LinkChip() -> impl IntoView {
    let session = expect_context::<Session>();
    // One closure redraws the chip in place: its state and its words change together.
    move || {
        let (state, text) = match session.link.get() {
            Link::Open => ("connected", "Server connected".to_string()),
            Link::Connecting => ("connecting", "Connecting…".to_string()),
            Link::Reconnecting { delay_ms, attempt } => (
                "reconnecting",
                format!("Reconnecting (try {attempt}, next in {})", millis(delay_ms)),
            ),
        };
        view! {
            <span class="chip" data-state=state data-testid="connection-status" role="status">
                <i class="dot"></i>
                {text}
            </span>
        }
    }
}

/// Redis state as the server last reported it.
#[component]
pub(crate) fn RedisChip() -> impl IntoView {
    let session = expect_context::<Session>();
    move || {
        let (state, text) = match (session.link.get(), session.page.with(|p| p.redis)) {
            // Behind a dead socket we do not know; saying "up" would be a guess.
            (Link::Open, Some(RedisState::Up)) => ("up", "Redis up"),
            (Link::Open, Some(RedisState::Down)) => ("down", "Redis down"),
            _ => ("unknown", "Redis ?"),
        };
        view! {
            <span class="chip" data-state=state data-testid="redis-status" role="status">
                <i class="dot"></i>
                {text}
            </span>
        }
    }
}
