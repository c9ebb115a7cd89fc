//! The workshop page (`/?view=workshop&exercise=ID`, its own wasm): a title bar and the
//! workshop view, on the same socket protocol as the lab. The server serves it for that
//! address; the lab's bundle carries none of it, and it carries none of the lab's panels.

use leptos::prelude::*;

use crate::components::header::{LinkChip, RedisChip};
use crate::components::notices::Notices;
use crate::components::toggles::Toggles;
use crate::components::workshop;
use crate::session::Session;
use crate::socket::Socket;
use crate::sync;

/// The whole workshop page. Its frames (`hello`'s exercises, verdicts, a check's error) go to
/// the workshop first ([`workshop::frame`]); the rest to the session as on the lab.
#[component]
pub fn WorkshopApp() -> impl IntoView {
    let session = Session::with_tap(workshop::frame);
    provide_context(session);
    sync::looks(session);
    let socket = Socket::connect_workshop(session);
    provide_context(socket);
    workshop::start(session, socket);
    view! {
        <header class="header">
            <div class="brand">
                <h1>"oversold" <span class="subtitle">"the workshop"</span></h1>
                <p class="pitch">"Write the script; the lab races it on a Redis of its own."</p>
            </div>
            <div class="chips">
                <a class="toggle ws-link" href="/" data-testid="race-link">"Back to the race"</a>
                <Toggles/>
                <LinkChip/>
                <RedisChip/>
            </div>
        </header>
        <Notices/>
        <section id="workshop" class="workshop" aria-labelledby="ws-heading"></section>
    }
}
