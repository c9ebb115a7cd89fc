//! The keyboard shortcuts (see `model::shortcuts` for the table) and the `?` list of them.
//!
//! One `keydown` listener on the window, set up once: the keys act like the buttons they stand
//! for, and do nothing where the button would be disabled (a run in flight, no connection).

use leptos::ev;
use leptos::prelude::*;
use oversold_protocol::{Scenario, StrategyInfo};
use wasm_bindgen::JsCast;
use web_sys::{Element, KeyboardEvent};

use crate::components::toggles::{Switch, flip};
use crate::model::controls::Knobs;
use crate::model::page::PageState;
use crate::model::shortcuts::{self, Action};
use crate::session::{Link, Session};
use crate::socket::Socket;
use crate::web;

/// The key listener, and the list it opens.
#[component]
pub fn Shortcuts() -> impl IntoView {
    let session = expect_context::<Session>();
    let socket = expect_context::<Socket>();
    let handle = window_event_listener(ev::keydown, move |ev: KeyboardEvent| {
        // A held key repeats; a run per repeat would be a surprise on stage.
        if ev.repeat() {
            return;
        }
        let modifier = ev.ctrl_key() || ev.alt_key() || ev.meta_key();
        let Some(action) = shortcuts::action(&ev.key(), modifier, typing(&ev)) else {
            return;
        };
        if action != Action::Close {
            ev.prevent_default();
        }
        act(session, socket, action);
    });
    on_cleanup(move || handle.remove());

    // Drawn only while open: a click anywhere on it (or Escape, or `?`) closes it. It is a
    // chunk (`lazy::shortcuts_help`), fetched the first time `?` is pressed.
    move || {
        session
            .help
            .get()
            .then(|| crate::components::lazy::when_loaded(crate::components::lazy::shortcuts_help))
    }
}

/// The `?` list: every key and what it does here. The rows are plain markup from
/// `model::shortcuts::list_html`, set once as it opens.
pub fn help() -> impl IntoView {
    let session = expect_context::<Session>();
    let rows = session.page.with_untracked(|p| {
        let scenario = session.knobs.with_untracked(|k| k.scenario);
        shortcuts::list_html(p.offered(scenario), p.strategies())
    });
    view! {
        <div class="overlay" on:click=flip(session, Switch::Help)>
            <div
                class="overlay-card"
                role="dialog"
                aria-modal="true"
                aria-label="Keyboard shortcuts"
                data-testid="shortcuts-overlay"
            >
                <h2>"Keyboard shortcuts"</h2>
                <dl class="keys" inner_html=rows></dl>
                <p class="muted keys-note">
                    "In step-through mode, keys 1 to 4 move the buyers. No key does anything while you type in a field or hold Ctrl, Alt or ⌘. Escape or a click closes this list."
                </p>
            </div>
        </div>
    }
}

fn typing(ev: &KeyboardEvent) -> bool {
    ev.target().is_some_and(|t| {
        let tag = t.unchecked_into::<Element>().tag_name();
        matches!(tag.as_str(), "INPUT" | "TEXTAREA" | "SELECT")
    })
}

/// Do what `action` stands for, where the matching button would be enabled.
fn act(session: Session, socket: Socket, action: Action) {
    let open = session.link.get_untracked() == Link::Open;
    let busy = session.page.with_untracked(PageState::busy);
    // N and L run the scenario on screen; step-through races only.
    let scenario = session.knobs.with_untracked(|k| k.scenario);
    let pick = |which: fn(&[StrategyInfo]) -> Option<&StrategyInfo>, scenario: Scenario| {
        session.page.with_untracked(|p| {
            which(p.offered(scenario))
                .filter(|s| s.available)
                .map(|s| s.about.name.to_string())
        })
    };
    match action {
        Action::RunUnsafe | Action::RunSafe => {
            let name = if action == Action::RunUnsafe {
                pick(|i| shortcuts::featured_pair(i).0, scenario)
            } else {
                pick(|i| shortcuts::featured_pair(i).1, scenario)
            };
            if let Some(name) = name.filter(|_| open && !busy) {
                socket.start_run(&name);
            }
        }
        Action::Compare => {
            if open && !busy {
                socket.start_compare();
            }
        }
        Action::Step => {
            if let Some(name) = pick(shortcuts::step_strategy, Scenario::Race) {
                socket.step_open(&name, None, None);
            }
        }
        Action::Reset => reset(session),
        Action::FullScreen => web::toggle_fullscreen(),
        Action::Help => session.help.update(|h| *h = !*h),
        Action::Close => session.help.set(false),
    }
}

/// R: the form back to the server's defaults, the run on screen and the address cleared.
/// Recent runs stay. Not while a run is in flight: its frames would have nowhere to go.
fn reset(session: Session) {
    if session.page.with_untracked(PageState::busy) {
        session.notify(
            "busy",
            "A run is in flight: R resets once it has finished (or cancel it first).",
        );
        return;
    }
    session.page.update(|p| {
        p.clear_run();
    });
    let defaults = session.page.with_untracked(|p| {
        p.hello
            .as_ref()
            .map_or_else(Knobs::default, |h| Knobs::defaults(&h.limits))
    });
    session.knobs.set(defaults);
    session.from_link.set(None);
    web::set_query("");
}
