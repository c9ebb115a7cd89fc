//! Step-through mode, "you are the scheduler": two to four buyers stand ready, and each click
//! (or key 1–4) sends one buyer's next real Redis command.
//!
//! (A placeholder panel for now; the controls land with the step-through view.)

use leptos::prelude::*;

/// The step-through panel.
#[component]
pub fn StepThrough() -> impl IntoView {
    view! { <section class="panel step-through" data-testid="step-panel" aria-label="Step through a race"></section> }
}
