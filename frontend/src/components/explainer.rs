//! Why the selected (or last-run) strategy does or does not oversell: plain words and one
//! interleaving of two buyers. A row of chips picks another strategy to read about.

use leptos::prelude::*;

use crate::model::explain::{self, Explanation};
use crate::model::page::PageState;
use crate::session::Session;

/// The explanation panel. It follows the run on screen until the visitor picks a strategy.
#[component]
pub fn Explainer() -> impl IntoView {
    let session = expect_context::<Session>();
    // Chips for what the server offers, falling back to every explanation before `hello`.
    let chips = move || {
        let listed: Vec<(String, String, bool)> = session.page.with(|p| {
            p.strategies()
                .iter()
                .map(|s| {
                    (
                        s.about.name.to_string(),
                        s.about.short_label.to_string(),
                        s.about.unsafe_by_design,
                    )
                })
                .collect()
        });
        if listed.is_empty() {
            explain::ALL
                .iter()
                .map(|e| (e.strategy.to_string(), e.strategy.to_string(), false))
                .collect()
        } else {
            listed
        }
    };
    let explained = move || session.page.with(PageState::explained).unwrap_or_default();
    let current = move || explain::explain(&explained());
    view! {
        <section class="panel explainer" aria-label="Why it happens" data-testid="explainer">
            <div class="tabs" role="tablist" aria-label="Strategy to explain">
                <For each=chips key=|c| c.0.clone() let:chip>
                    {
                        let (name, label, is_unsafe) = chip;
                        let name = StoredValue::new(name);
                        let on = move || name.with_value(|n| *n == explained());
                        view! {
                            <button
                                class="filter"
                                class:unsafe-chip=is_unsafe
                                role="tab"
                                class:on=on
                                aria-selected=move || on().to_string()
                                data-testid=format!("explain-{}", name.get_value())
                                on:click=move |_| session.page.update(|p| p.focus = Some(name.get_value()))
                            >
                                {label}
                            </button>
                        }
                    }
                </For>
            </div>
            {move || match current() {
                Some(e) => view! { <Explained e=e/> }.into_any(),
                None => view! { <p class="muted">"No explanation for this strategy yet."</p> }.into_any(),
            }}
        </section>
    }
}

/// One strategy's text and timeline.
#[component]
fn Explained(
    /// What to show.
    e: &'static Explanation,
) -> impl IntoView {
    view! {
        <h2 data-testid="explainer-title">{e.title}</h2>
        <p>{e.how}</p>
        <p>{e.why}</p>
        <ol class="timeline" aria-label="Two buyers interleaving, one unit left">
            {e.steps
                .iter()
                .map(|s| {
                    view! {
                        <li data-tone=s.tone>
                            <span class="who">{s.who}</span>
                            <code>{s.cmd}</code>
                            <span class="note">{s.note}</span>
                        </li>
                    }
                })
                .collect_view()}
        </ol>
        <p class="muted">{e.cost}</p>
    }
}
