//! The header's switches: the stage view, the light theme, and the shortcuts' list. Each is a
//! pressed-or-not button; `crate::sync` applies and remembers the first two.

use leptos::ev::MouseEvent;
use leptos::prelude::*;

use crate::model::theme::Theme;
use crate::model::view::View;
use crate::session::Session;

/// What a switch flips.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    /// The normal page or the stage view.
    Stage,
    /// Dark or light.
    Theme,
    /// The shortcuts' list, open or closed.
    Help,
}

/// A click handler that flips `which`. One closure type for every switch (and the list's own
/// "click to close"), so the wasm carries one copy of the handler's plumbing, not one each.
pub fn flip(session: Session, which: Switch) -> impl Fn(MouseEvent) + Clone + 'static {
    move |_| match which {
        Switch::Stage => session.view.update(|v| *v = v.toggled()),
        Switch::Theme => session.theme.update(|t| *t = t.toggled()),
        Switch::Help => session.help.update(|h| *h = !*h),
    }
}

/// Stage view, light theme, and `?`.
#[component]
pub fn Toggles() -> impl IntoView {
    let session = expect_context::<Session>();
    let pressed = move || {
        (
            (session.view.get() == View::Stage).to_string(),
            (session.theme.get() == Theme::Light).to_string(),
        )
    };
    view! {
        <div class="toggles" role="group" aria-label="How the page looks">
            <button
                class="toggle"
                data-testid="view-stage"
                aria-pressed=move || pressed().0
                title="One screen for a projector: the two big buttons, the counters, the grid and the tape, in big type"
                on:click=flip(session, Switch::Stage)
            >
                "Stage view"
            </button>
            <button
                class="toggle"
                data-testid="theme-toggle"
                aria-pressed=move || pressed().1
                title="Dark text on white: many projectors wash dark pages out"
                on:click=flip(session, Switch::Theme)
            >
                "Light theme"
            </button>
            <button
                class="toggle"
                data-testid="shortcuts-button"
                aria-label="Keyboard shortcuts"
                title="Keyboard shortcuts (?)"
                on:click=flip(session, Switch::Help)
            >
                "?"
            </button>
        </div>
    }
}
