//! The phone page (`/r/CODE`), its own wasm: the room's counters and grid and a big Buy
//! button, nothing of the lab (a spectator's screen, `?as=spectator`, is the lab's page). The server paints
//! "Room CODE · joining…" and a disabled Buy in the HTML before this arrives (`#boot`); the
//! app takes its place once mounted.
//!
//! Its socket reads only the frames a phone shows ([`Frame`]), so this wasm carries no
//! decoder for the rest of the protocol; what it reads goes into the same session state, by
//! the same rules, as the full page's.

use leptos::prelude::*;

use crate::components::room::{phone::RoomPage, room_in_url};
use crate::model::phone::Frame;
use crate::session::Session;
use crate::socket::{Read, Socket};
use crate::sync;

/// The whole phone page.
#[component]
pub fn PhoneApp() -> impl IntoView {
    let session = Session::new();
    provide_context(session);
    sync::looks(session);
    provide_context(Socket::take_over(session, Some("phone"), read));
    // The HTML's placeholder goes as the real page arrives.
    if let Some(boot) = document().get_element_by_id("boot") {
        boot.remove();
    }
    match room_in_url() {
        Some(code) => view! { <RoomPage code=code/> }.into_any(),
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

/// One frame into the session: only the signals it changes are touched (a frame of the lab's
/// changes nothing, so nothing redraws).
fn read(session: &Session, text: &str) -> Result<Read, String> {
    let frame = Frame::decode(text)?;
    let hello = frame.is_hello();
    if frame.is_room_frame() {
        session.room.update(|r| frame.fold_room(r));
    }
    if frame.is_page_frame() {
        session.page.update(move |p| frame.fold_page(p));
    }
    Ok(Read::Done { hello })
}
