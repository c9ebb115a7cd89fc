//! The verdict line under the grid: the latest run of each strategy, side by side, in words.

use leptos::prelude::*;

use crate::model::history::result_parts;
use crate::session::Session;

/// E.g. `Naive: 10 in stock, 34 sold (stock -24), 24 oversold | Atomic: exactly 10 sold, 0 oversold`,
/// each part red or green by whether that run went wrong.
#[component]
pub fn ResultLine() -> impl IntoView {
    let session = expect_context::<Session>();
    // One closure draws the line: its parts and whether there are many change together.
    move || {
        // The scenario the switch shows: its strategies' latest runs.
        let scenario = session.knobs.with(|k| k.scenario);
        let parts = session.page.with(|p| {
            let order: Vec<&str> = p.offered(scenario).iter().map(|s| &*s.about.name).collect();
            result_parts(&p.history, &order)
        });
        // Past two strategies (after a comparison) one line per strategy reads better than a
        // run-on.
        let class = if parts.len() > 2 {
            "result-line many"
        } else {
            "result-line"
        };
        let empty = parts.is_empty().then(|| {
            view! { <span class="muted">"Run a strategy or two: their verdicts line up here."</span> }
        });
        let parts = parts
            .into_iter()
            .enumerate()
            .map(|(i, (text, bad))| {
                view! {
                    {(i > 0).then(|| view! { <span class="sep">" | "</span> })}
                    <span class=if bad { "part bad" } else { "part good" }>{text}</span>
                }
            })
            .collect_view();
        view! {
            <p class=class data-testid="result-line" aria-live="polite">
                {empty}
                {parts}
            </p>
        }
    }
}
