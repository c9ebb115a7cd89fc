//! Rooms on the page: the phone view a join URL opens ([`phone`], the phone's own wasm), the
//! projector's screen `?as=spectator` opens ([`spectator`], the lab's wasm), and the
//! presenter's panel on the normal page ([`presenter`]). All send through [`send`], typed.

pub mod phone;
pub mod presenter;
pub mod send;
pub mod spectator;

use leptos::prelude::*;
use oversold_protocol::room::RoomRole;

/// The room a join URL names (`/r/CODE`), and as whom to join (`?as=spectator` for a second
/// projector; a phone otherwise). Read once, at start.
pub fn joined_by_url() -> Option<(String, RoomRole)> {
    let code = room_in_url()?;
    let spectator = window()
        .location()
        .search()
        .is_ok_and(|q| q.contains("as=spectator"));
    let role = if spectator {
        RoomRole::Spectator
    } else {
        RoomRole::Phone
    };
    Some((code, role))
}

/// The room a join URL names (`/r/CODE`), whatever its query. Read once, at start.
pub fn room_in_url() -> Option<String> {
    crate::model::room::code_in_path(&window().location().pathname().ok()?)
}
