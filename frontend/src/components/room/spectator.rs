//! A room's screen for a projector (`/r/CODE?as=spectator`): the room's code and QR code
//! large, the sale's counters, the grid and the Redis tape, on one screen. The lab's page draws
//! it (the server serves the lab for that address), so it reuses the lab's panels and the
//! phone's wasm stays small; it joins the room read-only and draws the sale from the very
//! frames the presenter's page draws it from (`sale_opened`, `outcomes`, `sale_closed`), so
//! its numbers are the presenter's.
//!
//! From [`model::view::SPECTATOR_STAGE_MIN_PX`](crate::model::view::SPECTATOR_STAGE_MIN_PX)
//! wide it is laid out as the stage view is (`<body data-view="stage">`, static/style.css,
//! `.layout.spectator`); narrower (a phone) its panels stack as on the normal page. That view
//! follows the window and is never remembered: the lab in the same browser keeps its own.

use leptos::ev;
use leptos::prelude::*;
use oversold_protocol::room::RoomRole;

use super::send;
use crate::components::header::{LinkChip, RedisChip};
use crate::components::toggles::{Switch, flip};
use crate::components::{
    counters::Counters, inventory::Inventory, notices::Notices, result::ResultLine,
};
use crate::model::room::RoomState;
use crate::model::strategies;
use crate::model::theme::Theme;
use crate::model::view::{THEME_KEY, spectator_view};
use crate::session::{Link, Session};
use crate::socket::Socket;
use crate::web;

/// The whole page for room `code`'s projector: its own session and socket (`page=spectator`:
/// a `hello` without the Lua sources), joined as a spectator on every (re)connect.
#[component]
pub fn SpectatorApp(
    /// The room code from the address.
    code: String,
) -> impl IntoView {
    let session = Session::new();
    provide_context(session);
    looks(session);
    let socket = Socket::connect_for(session, Some("spectator"));
    provide_context(socket);
    // An Effect because joining talks to the server: after a reconnect it has forgotten this
    // socket, so the screen joins again (and the sale is replayed to it from the stream).
    let join_code = code.clone();
    Effect::new(move |_| {
        if session.link.get() == Link::Open {
            send::join(
                &socket,
                session,
                &join_code,
                RoomRole::Spectator,
                None,
                None,
            );
        }
    });
    view! { <Spectator code/> }
}

/// The theme (remembered, as on the lab) and the layout (the stage's on a wide window, the
/// normal page's on a narrow one, following resizes, never remembered), kept on `<body>`.
fn looks(session: Session) {
    if let Some(id) = web::recall(THEME_KEY) {
        session.theme.set(Theme::from_id(&id));
    }
    let fit = move || {
        let width = window()
            .inner_width()
            .ok()
            .and_then(|w| w.as_f64())
            .unwrap_or(0.0);
        let view = spectator_view(width);
        if session.view.get_untracked() != view {
            session.view.set(view);
        }
    };
    fit();
    let resize = window_event_listener(ev::resize, move |_| fit());
    on_cleanup(move || resize.remove());
    Effect::new(move |_| {
        let theme = session.theme.get().id();
        web::set_body_attribute("data-theme", theme);
        web::set_body_attribute("data-view", session.view.get().id());
        web::remember(THEME_KEY, theme);
    });
}

/// The screen: a slim header, the room (QR code, code, join URL, head count, the sale, the
/// verdicts of its sales), the counters, the grid and the tape; before the first sale, an
/// invitation to join where the race will be.
#[component]
fn Spectator(code: String) -> impl IntoView {
    let session = expect_context::<Session>();
    let room = session.room;
    let origin = window().location().origin().unwrap_or_default();
    let join_url = format!("{origin}/r/{code}");
    // Shown without its scheme, and free to wrap before the room's path on a narrow column.
    let host = origin
        .split_once("://")
        .map_or(origin.as_str(), |(_, rest)| rest)
        .to_string();
    let pitch = move || {
        room.with(|r| {
            r.pitch()
                .unwrap_or_else(|| "Scan the code: your phone is a buyer.".to_string())
        })
    };
    let waiting = move || session.page.with(|p| p.run.is_none());
    view! {
        <header class="header spectator-head">
            <div class="brand">
                <h1>"oversold" <span class="subtitle">"the inventory race, live"</span></h1>
                <p class="pitch" data-testid="spectator-pitch">{pitch}</p>
            </div>
            <div class="chips">
                <button class="toggle" data-testid="theme-toggle"
                    aria-pressed=move || (session.theme.get() == Theme::Light).to_string()
                    title="Dark text on white: many projectors wash dark pages out"
                    on:click=flip(session, Switch::Theme)>"Light theme"</button>
                <LinkChip/>
                <RedisChip/>
            </div>
        </header>
        <Notices/>
        <main class="layout spectator" class:waiting=waiting data-testid="spectator">
            <section class="panel room-panel" aria-label="Join the room">
                <div class="room-head">
                    <img class="room-qr" data-testid="room-qr" alt=format!("QR code of the join URL, {join_url}")
                        src=format!("/qr/{code}.svg")/>
                    <div class="room-join">
                        <p class="room-code big" data-testid="room-code">{code.clone()}</p>
                        <p class="room-url" data-testid="room-url">{host}<wbr/>{format!("/r/{code}")}</p>
                        <p data-testid="room-presence">{move || presence_line(room)}</p>
                        <p data-testid="room-sale">{move || sale_line(session)}</p>
                    </div>
                </div>
                <ResultLine/>
            </section>
            <p class="spectator-waiting" data-testid="spectator-waiting">
                "Scan the code with your phone to join. When the sale opens, your Buy button is one of its buyers, and the race plays out here."
            </p>
            <section class="stage panel" aria-label="The sale">
                <Counters/>
                <Inventory/>
            </section>
            {crate::components::lazy::when_loaded(crate::components::lazy::tape)}
        </main>
    }
}

/// `12 phones here · 40 clicks`.
fn presence_line(room: RwSignal<RoomState>) -> String {
    room.with(|r| {
        let p = r.presence;
        let phones = crate::model::text::count(p.phones.into(), "phone");
        format!(
            "{phones} here · {}",
            crate::model::text::count(p.clicks.into(), "click")
        )
    })
}

/// Where the sale stands: waiting for one, open (its stock and strategy, in `hello`'s
/// words), or over.
fn sale_line(session: Session) -> String {
    session.room.with(|r| match &r.sale {
        None if r.code.is_none() => "Joining the room…".to_string(),
        None => "Waiting for the presenter to open a sale…".to_string(),
        Some(s) if s.open => format!(
            "Sale open: {} units, {}",
            crate::model::text::thousands(s.config.stock.into()),
            session
                .page
                .with(|p| strategies::short_label(p.known(), &s.config.strategy))
        ),
        Some(s) => match &s.error {
            Some(why) => format!("Sale over, without a summary: {why}"),
            None => "Sale over.".to_string(),
        },
    })
}
