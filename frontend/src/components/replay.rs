//! "Run it again": the same strategy, knobs and seed as the run on screen, or as the link the
//! page was opened with, so the same crowd races again. The line under it says what a seed
//! does not fix: the interleaving is up to the network and Redis.
//!
//! Drawn by the run status line's closure (`run_buttons::RunStatus`): both change exactly when
//! a run starts or ends, and one closure costs the wasm less than two.

use leptos::prelude::*;
use oversold_protocol::RunConfig;

use crate::model::page::PageState;
use crate::model::strategies;
use crate::socket::Socket;

/// The replay button and its two lines; `None` while a run is in flight, or with nothing to
/// replay. `linked` is the run the address asked for, `open` whether the socket is.
pub fn bar(
    p: &PageState,
    linked: Option<RunConfig>,
    open: bool,
    socket: Socket,
) -> Option<impl IntoView + use<>> {
    // The run on screen once it is over; before any run, the link's.
    let (config, from_link) = match &p.run {
        Some(r) if r.is_running() => return None,
        Some(r) => (r.config.clone(), false),
        None => (linked?, true),
    };
    let known = p.known_for(Some(config.race.scenario()));
    let info = strategies::find(known, &config.strategy);
    let disabled = !open || p.busy() || !info.is_some_and(|s| s.available);
    let r = &config.race;
    // The status line above already describes the run on screen; a link's run needs its words.
    let what = if from_link {
        format!(
            "From the link: {} · {} buyers · {} in stock · seed {}:",
            strategies::short_label(known, &config.strategy),
            r.buyers,
            r.stock,
            r.seed
        )
    } else {
        format!("Seed {}:", r.seed)
    };
    Some(view! {
        <div class="replay" data-testid="replay">
            <button
                class="run-again"
                data-testid="run-again"
                disabled=disabled
                on:click=move |_| socket.replay(&config)
            >
                "Run it again"
            </button>
            <p class="replay-text">
                <span class="replay-what" data-testid="replay-what">{what}</span>
                <span class="replay-note" data-testid="replay-note">
                    " the same crowd; the interleaving is still up to the network and Redis."
                </span>
            </p>
        </div>
    })
}
