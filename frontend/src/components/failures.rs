//! Under the counters, for a run of a "Redis fails" scenario: what the failure did (the facts
//! of `model::failures`), the losses in the unsafe colour.

use leptos::prelude::*;

use crate::model::failures::facts;
use crate::session::Session;

/// The facts of the run on screen's failure; nothing for other scenarios, or before its
/// summary.
#[component]
pub fn FailureFacts() -> impl IntoView {
    let session = expect_context::<Session>();
    let list =
        move || session.with_run(|r| r.and_then(|r| r.summary()).map(facts).unwrap_or_default());
    view! {
        <Show when=move || !list().is_empty()>
            <dl class="failure-facts" data-testid="failure-facts">
                {move || {
                    list()
                        .into_iter()
                        .map(|f| view! {
                            <div class:bad=f.bad>
                                <dt>{f.label}</dt>
                                <dd>{f.value}</dd>
                            </div>
                        })
                        .collect_view()
                }}
            </dl>
        </Show>
    }
}
