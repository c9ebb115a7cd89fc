//! The phone page (`/r/CODE`, and `?as=spectator` for a second screen), its own wasm: the
//! room's counters and grid and a big Buy button, nothing of the lab. The server paints
//! "Room CODE · joining…" and a disabled Buy in the HTML before this arrives (`#boot`); the
//! app takes its place once mounted.

use leptos::prelude::*;

use crate::components::room::{joined_by_url, phone::RoomPage};
use crate::session::Session;
use crate::socket::Socket;
use crate::sync;

/// The whole phone page.
#[component]
pub fn PhoneApp() -> impl IntoView {
    let session = Session::new();
    provide_context(session);
    sync::looks(session);
    provide_context(Socket::connect_for(session, Some("phone")));
    // The HTML's placeholder goes as the real page arrives.
    if let Some(boot) = document().get_element_by_id("boot") {
        boot.remove();
    }
    match joined_by_url() {
        Some((code, role)) => view! { <RoomPage code=code role=role/> }.into_any(),
        None => view! {
            <main class="room-phone">
                <h1>"oversold"</h1>
                <p>"This address names no room. Ask the presenter for the room's link, or open "
                    <a href="/">"the lab"</a>"."</p>
            </main>
        }
        .into_any(),
    }
}
