//! "What happened": for each checkout strategy with a finished run, its latest run in plain
//! sentences (`model::checkout::happened`), the run on screen marked. The strategy's name is
//! `hello`'s; the sentences are the same templates for every strategy.

use leptos::prelude::*;
use oversold_protocol::Scenario;

use crate::model::checkout::happened::happened;
use crate::model::page::PageState;
use crate::model::strategies;
use crate::session::Session;

/// One strategy's paragraph: `(name, label, is the run on screen, sentences)`.
type Told = (String, String, bool, Vec<String>);

/// Every checkout strategy's latest run, in the server's order.
fn told(p: &PageState) -> Vec<Told> {
    let on_screen = p.run.as_ref().map(|r| r.run_id.as_str());
    p.offered(Scenario::Checkout)
        .iter()
        .filter_map(|info| {
            let name = &*info.about.name;
            // `history` is newest first.
            let entry = p
                .history
                .iter()
                .find(|e| e.strategy == name && e.summary.checkout.is_some())?;
            let kept = p.kept.get(&entry.run_id);
            let config = kept.and_then(|k| k.config.race.checkout());
            let outcomes = kept.map(|k| k.outcomes.as_slice()).unwrap_or_default();
            let label = strategies::short_label(p.known(), name);
            let lines = happened(&label, &entry.summary, config, outcomes.iter());
            Some((
                name.to_string(),
                label,
                on_screen == Some(entry.run_id.as_str()),
                lines,
            ))
        })
        .collect()
}

/// The panel; absent until a checkout run has finished.
#[component]
pub fn Happened() -> impl IntoView {
    let session = expect_context::<Session>();
    // A Memo: the page changes with every outcomes frame, this only when a run finishes.
    let all = Memo::new(move |_| session.page.with(told));
    view! {
        <Show when=move || all.with(|a| !a.is_empty())>
            <section class="panel happened" data-testid="happened" aria-label="What happened">
                <div class="panel-head">
                    <h2>"What happened"</h2>
                    <span class="muted">"each checkout strategy's latest run, in plain words"</span>
                </div>
                // Redrawn whole when a run finishes (the Memo changes only then): a plain
                // list costs the wasm less than a keyed one.
                <div class="happened-list">
                    {move || {
                        all.get()
                            .into_iter()
                            .map(|(name, label, current, lines)| {
                                view! {
                                    <article class="told" class:current=current data-testid="happened-strategy" data-strategy=name>
                                        <h3>{label}</h3>
                                        <ul>
                                            {lines
                                                .into_iter()
                                                .map(|line| view! { <li data-testid="happened-line">{line}</li> })
                                                .collect_view()}
                                        </ul>
                                    </article>
                                }
                            })
                            .collect_view()
                    }}
                </div>
            </section>
        </Show>
    }
}
