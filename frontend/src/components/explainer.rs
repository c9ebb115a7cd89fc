//! Why the selected (or last-run) strategy does or does not oversell: plain words and one
//! interleaving of two buyers, exactly as the server's `hello` describes the strategy. A row of
//! chips picks another strategy to read about.

use leptos::prelude::*;
use oversold_protocol::{Category, Explanation};

use crate::model::strategies;
use crate::session::Session;

/// One chip: name, short label, unsafe by design, category.
type Chip = (String, String, bool, Category);

/// The explanation panel. It follows the run on screen until the visitor picks a strategy.
#[component]
pub fn Explainer() -> impl IntoView {
    let session = expect_context::<Session>();
    // The strategies of the scenario the switch shows.
    let scenario = move || session.knobs.with(|k| k.scenario);
    let chips = move || {
        let scenario = scenario();
        session.page.with(|p| {
            p.offered(scenario)
                .iter()
                .map(|s| {
                    let a = &s.about;
                    let chip: Chip = (
                        a.name.to_string(),
                        a.short_label.to_string(),
                        a.unsafe_by_design,
                        a.category,
                    );
                    chip
                })
                .collect::<Vec<_>>()
        })
    };
    let explained = move || {
        let scenario = scenario();
        session.page.with(|p| p.explained_in(scenario))
    };
    // A Memo: the page state changes with every outcomes frame, the panel's text only when
    // another strategy is explained, and rebuilding its paragraphs each frame would be waste.
    let current = Memo::new(move |_| {
        let scenario = scenario();
        session.page.with(|p| {
            let name = p.explained_in(scenario)?;
            strategies::find(p.known(), &name)
                .map(|s| (s.about.explanation.clone(), s.about.category))
        })
    });
    view! {
        <section class="panel explainer" aria-label="Why it happens" data-testid="explainer">
            <div class="tabs" role="tablist" aria-label="Strategy to explain">
                <For each=chips key=|c: &Chip| c.0.clone() let:chip>
                    {
                        let (name, label, is_unsafe, category) = chip;
                        let name = StoredValue::new(name);
                        let on = move || name.with_value(|n| explained().as_ref() == Some(n));
                        view! {
                            <button
                                class="filter"
                                class:unsafe-chip=is_unsafe
                                role="tab"
                                class:on=on
                                aria-selected=move || on().to_string()
                                title=category.badge()
                                data-testid=format!("explain-{}", name.get_value())
                                on:click=move |_| session.page.update(|p| p.focus = Some(name.get_value()))
                            >
                                {label}
                            </button>
                        }
                    }
                </For>
            </div>
            {move || match current.get() {
                Some((e, category)) => view! { <Explained e=e category=category/> }.into_any(),
                None => {
                    view! { <p class="muted">"Each strategy's explanation arrives with the server's hello."</p> }
                        .into_any()
                }
            }}
        </section>
    }
}

/// One strategy's text and its two-buyer interleaving.
#[component]
fn Explained(
    /// What the server says about the strategy.
    e: Explanation,
    /// Its family, shown as a badge beside the title.
    category: Category,
) -> impl IntoView {
    view! {
        <h2 data-testid="explainer-title">
            {e.title.to_string()}
            " "
            <span class="cat-badge" data-category=category.badge()>{category.badge()}</span>
        </h2>
        <p>{e.how.to_string()}</p>
        <p>{e.why.to_string()}</p>
        <ol class="timeline" aria-label="Two buyers interleaving, one unit left">
            {e
                .steps
                .iter()
                .map(|s| {
                    view! {
                        <li data-tone=s.tone.as_str()>
                            <span class="who">{s.who.to_string()}</span>
                            <code>{s.command.to_string()}</code>
                            <span class="note">{s.note.to_string()}</span>
                        </li>
                    }
                })
                .collect_view()}
        </ol>
        <p class="muted">{e.cost.to_string()}</p>
    }
}
