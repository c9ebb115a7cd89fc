//! The switch between the race (the click), the checkout (what comes after it), carts and
//! warehouses, and the scenarios where Redis itself fails (a busy script, a crash, an eviction,
//! a failover). It only changes what the run buttons and the form offer; the run on screen
//! stays until the next.

use leptos::prelude::*;
use oversold_protocol::Scenario;

use crate::session::Session;

/// Two big toggles, shown once the server offers checkout strategies.
#[component]
pub fn ScenarioSwitch() -> impl IntoView {
    let session = expect_context::<Session>();
    let offered = move || {
        session
            .page
            .with(|p| !p.offered(Scenario::Checkout).is_empty())
    };
    let carts = move || session.page.with(|p| !p.offered(Scenario::Cart).is_empty());
    let fails = move || {
        session
            .page
            .with(|p| !p.offered(Scenario::Failover).is_empty())
    };
    let choice = move |scenario: Scenario, title: &'static str, what: &'static str| {
        let on = move || session.knobs.with(|k| k.scenario == scenario);
        view! {
            <button
                class="scenario"
                aria-pressed=move || on().to_string()
                data-testid=format!("scenario-{scenario}")
                on:click=move |_| {
                    session.knobs.update(|k| k.enter(scenario));
                    // The why panel follows the scenario again, not a chip of the other one.
                    session.page.update(|p| p.focus = None);
                }
            >
                <b>{title}</b>
                <span>{what}</span>
            </button>
        }
    };
    view! {
        <Show when=offered>
            <div class="scenario-switch" role="group" aria-label="Scenario">
                {choice(Scenario::Race, "The race", "Buyers race for the stock: the story ends at the click.")}
                {choice(
                    Scenario::Checkout,
                    "The checkout",
                    "Reserve, pay, confirm or give back: holds expire, a ledger settles, the books must add up.",
                )}
                <Show when=carts>
                    {choice(Scenario::Cart, "Carts", "Several SKUs per order, all or nothing: where one key's script stops being enough.")}
                    {choice(Scenario::Warehouses, "Warehouses", "One SKU in several warehouses: the preferred one, then the nearest.")}
                </Show>
            </div>
        </Show>
        // When Redis itself fails: each on Redis processes the run starts for itself.
        <Show when=fails>
            <div class="scenario-switch fails" role="group" aria-label="When Redis itself fails">
                {choice(Scenario::BusyScript, "A busy script", "One long script holds Redis: BUSY for everyone, then SCRIPT KILL, or a restart.")}
                {choice(Scenario::Durability, "A crash", "kill -9 mid-sale, restarted from disk: what each persistence setting keeps.")}
                {choice(Scenario::Eviction, "Out of memory", "maxmemory mid-sale: the policy evicts the stock, or refuses every write.")}
                {choice(Scenario::Failover, "A failover", "The primary dies before its replica caught up: confirmed sales vanish.")}
            </div>
        </Show>
    }
}
