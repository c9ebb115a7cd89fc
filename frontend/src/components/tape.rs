//! The Redis tape: the run's commands in the order Redis ran them, rebuilt from its replies
//! (`oversold_protocol::tape`), drawn in one canvas, with a caption counted from the tape.
//!
//! (A placeholder panel for now; the drawing lands with the tape view.)

use leptos::prelude::*;

/// The tape panel.
#[component]
pub fn Tape() -> impl IntoView {
    view! {
        <section class="panel tape" data-testid="tape" aria-label="The Redis tape">
            <h2>"The Redis tape"</h2>
            <p class="muted" data-testid="tape-caption"></p>
        </section>
    }
}
