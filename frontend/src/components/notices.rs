//! Error frames from the server, shown as notices the visitor can dismiss.

use leptos::prelude::*;

use crate::session::Session;

/// The stack of undismissed errors, newest last.
#[component]
pub fn Notices() -> impl IntoView {
    let session = expect_context::<Session>();
    view! {
        <div class="notices" aria-live="assertive">
            <For each=move || session.page.with(|p| p.notices.clone()) key=|n| n.id let:notice>
                <div class="notice" role="alert" data-testid="error-notice">
                    <div>
                        <strong class="notice-code">{notice.code.clone()}</strong>
                        <span>{notice.message.clone()}</span>
                    </div>
                    <button
                        class="dismiss"
                        aria-label="Dismiss"
                        on:click=move |_| session.dismiss(notice.id)
                    >
                        "×"
                    </button>
                </div>
            </For>
        </div>
    }
}
