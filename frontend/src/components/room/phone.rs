//! What a join URL opens on a phone: the room's race (counters, grid, a big Buy button while
//! a sale is open, this phone's own result). Light on purpose: only the counters and the grid
//! of the full page, nothing else mounted. Always a phone: the server serves a spectator's
//! screen (`?as=spectator`) the lab's page (`room::spectator`), never this one.

use std::time::Duration;

use leptos::prelude::*;
use oversold_protocol::RedisState;
use oversold_protocol::room::RoomRole;

use super::send;
use crate::components::{counters::Counters, inventory::Inventory, notices::Notices};
use crate::model::room::{RoomState, parse_seat};
use crate::model::tiles::MAX_TILES_PER_SECTION;
use crate::session::{Link, Session};
use crate::socket::Socket;
use crate::web;

/// The phone page for room `code`.
#[component]
pub fn RoomPage(
    /// The room code from the join URL.
    code: String,
) -> impl IntoView {
    let session = expect_context::<Session>();
    let socket = expect_context::<Socket>();
    join_on_every_connect(session, socket, &code);
    let room = session.room;
    let linked = move || session.link.get() == Link::Open;
    let redis_down = move || session.page.with(|p| p.redis == Some(RedisState::Down));
    // Buy first: on a slow phone the counters and the grid's hundreds of tiles are most of the
    // mount, and nobody needs them to press Buy. They come after the first paint, the grid's
    // tiles a frame's worth at a time, so no long task stands between a thumb and Buy.
    let painted = RwSignal::new(false);
    let tiles = RwSignal::new(0);
    after_first_paint(move || {
        painted.set(true);
        draw_by_frames(tiles);
    });
    view! {
        <main class="room-phone" data-testid="room-phone">
            <header class="room-phone-head">
                <h1 class="room-brand">"oversold"</h1>
                <span class="room-code" data-testid="room-code">{code}</span>
                <span class="muted" class:bad=move || !linked()>
                    {move || if linked() { "live" } else { "reconnecting…" }}
                </span>
            </header>
            <Notices/>
            <p class="muted" data-testid="room-presence">{move || presence_line(room)}</p>
            <p data-testid="room-sale">{move || sale_line(room)}</p>
            <Show when=redis_down>
                <p class="bad" data-testid="room-redis-down">
                    "Redis is down: the shop refuses orders (fails closed) until it is back."
                </p>
            </Show>
            <BuyButton/>
            <Show when=move || painted.get()>
                <Counters/>
                <Inventory drawn=tiles/>
            </Show>
        </main>
    }
}

/// Run `then` once the browser has painted the page as first mounted (the header, the sale
/// and Buy): an animation frame runs just before that paint, and a task queued from it just
/// after.
fn after_first_paint(then: impl FnOnce() + 'static) {
    request_animation_frame(move || set_timeout(then, Duration::ZERO));
}

/// Tiles per section a phone's grid adds each frame: a slow phone's frame stays short enough
/// that a press of Buy is answered between two of them.
const TILES_PER_FRAME: usize = 40;

/// Grow `tiles` (how many tiles the grid draws) by [`TILES_PER_FRAME`] each animation frame
/// until the largest section fits, then lift the cap.
fn draw_by_frames(tiles: RwSignal<usize>) {
    request_animation_frame(move || {
        let more = tiles.get_untracked() + TILES_PER_FRAME;
        if more >= MAX_TILES_PER_SECTION as usize {
            tiles.set(usize::MAX);
        } else {
            tiles.set(more);
            draw_by_frames(tiles);
        }
    });
}

/// Join room `code` as a phone whenever the socket opens, and keep the phone's seat in the
/// browser (per room) so a reload is the same buyer.
fn join_on_every_connect(session: Session, socket: Socket, code: &str) {
    // An Effect because joining is talking to the outside world: on every (re)connect the
    // server has forgotten this socket, so the page joins again. The phone's HTML joined on
    // the first connection already (phone.html), the same way.
    let kept = format!("oversold-seat-{code}");
    let join_code = code.to_string();
    let key = kept.clone();
    Effect::new(move |_| {
        if session.link.get() == Link::Open && !socket.joined_by_page() {
            let back = web::recall(&key).as_deref().and_then(parse_seat);
            send::join(&socket, session, &join_code, RoomRole::Phone, None, back);
        }
    });
    Effect::new(move |_| {
        if let Some(seat) = session.room.with(RoomState::seat) {
            web::remember(&kept, &seat);
        }
    });
}

/// `12 phones here · 40 clicks`.
fn presence_line(room: RwSignal<RoomState>) -> String {
    room.with(|r| {
        let p = r.presence;
        format!("{} phones here · {} clicks", p.phones, p.clicks)
    })
}

/// Where the sale stands: waiting for one, open (its stock and strategy), or over.
fn sale_line(room: RwSignal<RoomState>) -> String {
    room.with(|r| match &r.sale {
        None => "Waiting for the presenter to open a sale…".to_string(),
        Some(s) if s.open => format!(
            "Sale open: {} units, strategy {}",
            s.config.stock, s.config.strategy
        ),
        Some(s) => match &s.error {
            Some(why) => format!("Sale over, without a summary: {why}"),
            None => "Sale over.".to_string(),
        },
    })
}

/// The Buy button and, under it, what happened to this phone's click.
#[component]
fn BuyButton() -> impl IntoView {
    let session = expect_context::<Session>();
    let socket = expect_context::<Socket>();
    let room = session.room;
    let can_buy = move || room.with(|r| r.can_buy());
    let waiting = move || room.with(|r| r.waiting);
    let verdict = move || room.with(|r| r.verdict());
    let refusal = move || room.with(|r| r.refusal.clone());
    let buyer = move || room.with(RoomState::buyer_line);
    let why = move || room.with(RoomState::why);
    let bad = move || verdict().is_some_and(|v| !v.starts_with("you got"));
    view! {
        <button class="buy-button" data-testid="buy" disabled=move || !can_buy()
            on:click=move |_| send::buy(&socket, session)>
            {move || if waiting() { "Buying…" } else { "Buy" }}
        </button>
        <p class="buy-verdict" class:bad=bad data-testid="buy-verdict">
            {move || verdict().unwrap_or_default()}
        </p>
        <p class="buy-why" data-testid="buy-why">{move || why().unwrap_or_default()}</p>
        <p class="buy-buyer" data-testid="buy-buyer">{move || buyer().unwrap_or_default()}</p>
        <p class="muted" data-testid="buy-refusal">{move || refusal().unwrap_or_default()}</p>
    }
}
