//! The room messages, typed, through the page's one socket.

use oversold_protocol::ClientMessage;
use oversold_protocol::room::{ChaosAction, RoomRole, SaleConfig};

use leptos::prelude::*;

use crate::session::Session;
use crate::socket::Socket;

fn send(socket: &Socket, session: Session, msg: &ClientMessage) {
    if !socket.send(msg) {
        session.notify(
            "not_connected",
            "Not connected to the server yet; the page keeps retrying.",
        );
    }
}

/// Join `code` as `role`: with the presenter's token when coming back as the presenter, with
/// a kept seat (id and token) when a phone comes back.
pub fn join(
    socket: &Socket,
    session: Session,
    code: &str,
    role: RoomRole,
    token: Option<String>,
    back: Option<(u32, String)>,
) {
    let (participant_id, seat_token) = back.unzip();
    let msg = ClientMessage::JoinRoom {
        room: code.to_string(),
        role: Some(role),
        presenter_token: token,
        participant_id,
        seat_token,
    };
    send(socket, session, &msg);
}

/// Create a room; this page becomes its presenter.
pub fn create(socket: &Socket, session: Session) {
    send(socket, session, &ClientMessage::CreateRoom);
}

/// Press Buy.
pub fn buy(socket: &Socket, session: Session) {
    let mut request = None;
    session.room.update(|r| {
        if r.can_buy() {
            request = r.code.clone().map(|code| (code, r.next_request_id()));
        }
    });
    if let Some((room, request_id)) = request {
        send(socket, session, &ClientMessage::Buy { room, request_id });
        crate::socket::wait_for_answer(session);
    }
}

/// The presenter's room and token, if this page presents one.
fn presenting(session: Session) -> Option<(String, String)> {
    session
        .room
        .with_untracked(|r| Some((r.code.clone()?, r.token.clone()?)))
}

/// Open a sale with `config`.
pub fn open_sale(socket: &Socket, session: Session, config: SaleConfig) {
    if let Some((room, presenter_token)) = presenting(session) {
        let msg = ClientMessage::OpenSale {
            room,
            presenter_token,
            config,
        };
        send(socket, session, &msg);
    }
}

/// Close the open sale now.
pub fn close_sale(socket: &Socket, session: Session) {
    if let Some((room, presenter_token)) = presenting(session) {
        let msg = ClientMessage::CloseSale {
            room,
            presenter_token,
        };
        send(socket, session, &msg);
    }
}

/// Press a chaos button.
pub fn chaos(socket: &Socket, session: Session, action: ChaosAction) {
    if let Some((room, presenter_token)) = presenting(session) {
        let msg = ClientMessage::Chaos {
            room,
            presenter_token,
            action,
        };
        send(socket, session, &msg);
    }
}
