//! The verdict line under the grid: the latest run of each strategy, side by side, in words.

use leptos::prelude::*;

use crate::model::history::result_parts;
use crate::session::Session;

/// E.g. `Naive: 10 in stock, 34 sold (stock -24), 24 oversold | Atomic: exactly 10 sold, 0 oversold`,
/// each part red or green by whether that run went wrong.
#[component]
pub fn ResultLine() -> impl IntoView {
    let session = expect_context::<Session>();
    let parts = move || {
        session.page.with(|p| {
            let order: Vec<&str> = p.strategies().iter().map(|s| &*s.about.name).collect();
            result_parts(&p.history, &order)
        })
    };
    // Past two strategies (after a comparison) one line per strategy reads better than a run-on.
    // (A closure, not inline: a `>` in an attribute would end the tag in `view!`.)
    let many = move || parts().len() > 2;
    view! {
        <p class="result-line" class:many=many data-testid="result-line" aria-live="polite">
            {move || {
                let parts = parts();
                if parts.is_empty() {
                    return view! { <span class="muted">"Run a strategy or two: their verdicts line up here."</span> }.into_any();
                }
                parts
                    .into_iter()
                    .enumerate()
                    .map(|(i, (text, bad))| {
                        view! {
                            {(i > 0).then(|| view! { <span class="sep">" | "</span> })}
                            <span class="part" class:bad=bad class:good=!bad>{text}</span>
                        }
                    })
                    .collect_view()
                    .into_any()
            }}
        </p>
    }
}
