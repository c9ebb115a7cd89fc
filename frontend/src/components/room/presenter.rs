//! The presenter's panel on the normal page: start a room, show its code and QR code (large
//! on the stage view), the head count, the sale's knobs, Open and Close, the chaos buttons
//! (only when the server owns its Redis) and what each one did. The sale itself fills the
//! page's usual grid, counters, timeline and audit trail.

use leptos::ev;
use leptos::prelude::*;
use oversold_protocol::Scenario;
use oversold_protocol::room::{DEFAULT_SALE_APP_WORK_MS, RoomRole, SaleConfig};

use super::send;
use crate::model::room::{RoomState, chaos_buttons};
use crate::model::text::{count, micros};
use crate::session::{Link, Session};
use crate::socket::Socket;
use crate::web;

/// Where the browser keeps the room it presents.
pub const PRESENTING_KEY: &str = "oversold-presenting";

/// The panel.
#[component]
pub fn RoomPanel() -> impl IntoView {
    let session = expect_context::<Session>();
    let socket = expect_context::<Socket>();
    let room = session.room;
    // The room this browser presented, kept so a reload takes it back (the socket joins as
    // its presenter below; an expired one is dropped when the server says so).
    if let Some(kept) = web::recall(PRESENTING_KEY) {
        room.update(|r| {
            r.resume_presenting(&kept);
        });
    }
    Effect::new(move |_| {
        let kept = room.with(RoomState::presenting).unwrap_or_default();
        web::remember(PRESENTING_KEY, &kept);
    });
    // An Effect because it talks to the server: after a reconnect the presenter's new
    // socket joins again with the token, so sales can be opened and closed as before.
    Effect::new(move |_| {
        if session.link.get() == Link::Open {
            let back = room.with_untracked(|r| Some((r.code.clone()?, r.token.clone()?)));
            if let Some((code, token)) = back {
                send::join(
                    &socket,
                    session,
                    &code,
                    RoomRole::Presenter,
                    Some(token),
                    None,
                );
            }
        }
    });
    let presenting = move || room.with(|r| r.token.is_some());
    view! {
        <section class="panel room-panel" aria-label="Room" data-testid="room-panel">
            <Show when=presenting fallback=move || view! {
                <div class="room-start">
                    <button data-testid="create-room" on:click=move |_| send::create(&socket, session)>
                        "Start a room"
                    </button>
                    <span class="muted">" The audience's phones become the buyers."</span>
                </div>
            }>
                {crate::components::lazy::when_loaded(crate::components::lazy::room_presenting)}
            </Show>
        </section>
    }
}

/// A room being presented: code, QR code and head count, the sale form, the chaos buttons.
/// A chunk of its own (`components::lazy`), loaded when a room is started or taken back.
pub fn presenting() -> impl IntoView {
    view! {
        <RoomHead/>
        <SaleForm/>
        <ChaosButtons/>
    }
}

/// Code, QR code, join URL, head count.
#[component]
fn RoomHead() -> impl IntoView {
    let room = expect_context::<Session>().room;
    let code = move || room.with(|r| r.code.clone().unwrap_or_default());
    // After a reload the join URL is this page's origin and the code (what the server builds).
    let url = move || {
        room.with(|r| {
            r.join_url.clone().unwrap_or_else(|| {
                let origin = window().location().origin().unwrap_or_default();
                format!("{origin}/r/{}", r.code.clone().unwrap_or_default())
            })
        })
    };
    let presence = move || {
        room.with(|r| {
            let p = r.presence;
            format!(
                "{} phones · {} watching · {} clicks",
                p.phones, p.watchers, p.clicks
            )
        })
    };
    view! {
        <div class="room-head">
            <img class="room-qr" data-testid="room-qr" alt="QR code of the join URL"
                src=move || format!("/qr/{}.svg", code())/>
            <div>
                <div class="room-code big" data-testid="room-code">{code}</div>
                <a class="room-url" data-testid="room-url" href=url target="_blank">{url}</a>
                " · "
                <a class="room-url" href=move || format!("{}?as=spectator", url()) target="_blank">
                    "spectator view"
                </a>
                " · "
                // The workshop page presents the room's challenge (its own wasm, loaded then).
                <a class="room-url" data-testid="room-challenge"
                    href=move || format!("/?view=workshop&room={}&as=presenter", code())
                    target="_blank">"workshop challenge"</a>
                <p data-testid="room-presence">{presence}</p>
            </div>
        </div>
    }
}

/// The sale's knobs, Open and Close, and how the last sale ended.
#[component]
fn SaleForm() -> impl IntoView {
    let session = expect_context::<Session>();
    let socket = expect_context::<Socket>();
    let room = session.room;
    let knobs = SaleKnobs::new();
    let open = move || room.with(|r| r.sale.as_ref().is_some_and(|s| s.open));
    let start = move |_| send::open_sale(&socket, session, knobs.config());
    view! {
        <div class="room-sale">
            <StrategySelect session strategy=knobs.strategy/>
            <SaleNumbers knobs/>
            <button data-testid="open-sale" disabled=open on:click=start>"Open sale"</button>
            <button data-testid="close-sale" disabled=move || !open() on:click=move |_| send::close_sale(&socket, session)>"Close sale"</button>
            <span class="muted" data-testid="sale-ended">{move || last_sale(room)}</span>
        </div>
    }
}

/// The next sale's knobs as the presenter sets them, read only when the sale opens.
#[derive(Clone, Copy)]
struct SaleKnobs {
    strategy: RwSignal<String>,
    stock: RwSignal<u32>,
    bots: RwSignal<u32>,
    seconds: RwSignal<u32>,
    /// The race window: app work between reading the stock and writing it, in ms.
    app_work: RwSignal<u32>,
    repeat: RwSignal<bool>,
}

impl SaleKnobs {
    /// A naive sale of 10 units for 30 s, no bots, one buy per phone.
    fn new() -> Self {
        Self {
            strategy: RwSignal::new("naive".to_string()),
            stock: RwSignal::new(10u32),
            bots: RwSignal::new(0u32),
            seconds: RwSignal::new(30u32),
            app_work: RwSignal::new(DEFAULT_SALE_APP_WORK_MS),
            repeat: RwSignal::new(false),
        }
    }

    /// The `open_sale` these knobs ask for (on 4 app servers).
    fn config(self) -> SaleConfig {
        SaleConfig {
            strategy: self.strategy.get_untracked(),
            stock: self.stock.get_untracked(),
            bots: self.bots.get_untracked(),
            duration_ms: self.seconds.get_untracked().saturating_mul(1000),
            app_servers: 4,
            race_window_ms: self.app_work.get_untracked(),
            allow_repeat: self.repeat.get_untracked(),
        }
    }
}

/// How the last sale ended (empty while one is open, or before any).
fn last_sale(room: RwSignal<RoomState>) -> String {
    room.with(|r| match &r.sale {
        Some(s) if !s.open => match &s.error {
            Some(why) => format!("Last sale ended without a summary: {why}"),
            None => format!(
                "Last sale: {} oversold, {}",
                s.oversold.unwrap_or(0),
                count(s.reloads, "script reload")
            ),
        },
        _ => String::new(),
    })
}

/// The race strategies a sale can run, as `(name, short label)`: those available, bar postgres.
fn sale_strategies(session: Session) -> Vec<(String, String)> {
    session.page.with(|p| {
        p.known()
            .iter()
            .filter(|s| {
                s.available && s.about.scenario == Scenario::Race && s.about.name != "postgres"
            })
            .map(|s| (s.about.name.to_string(), s.about.short_label.to_string()))
            .collect::<Vec<_>>()
    })
}

/// The sale's strategy, picked from [`sale_strategies`].
#[component]
fn StrategySelect(session: Session, strategy: RwSignal<String>) -> impl IntoView {
    view! {
        <select data-testid="sale-strategy" aria-label="Sale strategy" on:change=move |ev| strategy.set(event_target_value(&ev))>
            {move || {
                sale_strategies(session)
                    .into_iter()
                    .map(|(name, label)| {
                        let selected = name == strategy.get_untracked();
                        view! { <option value=name selected=selected>{label}</option> }
                    })
                    .collect_view()
            }}
        </select>
    }
}

/// The sale's numbers (stock, bots, seconds, race window) and whether a phone may buy again.
#[component]
fn SaleNumbers(knobs: SaleKnobs) -> impl IntoView {
    let SaleKnobs {
        stock,
        bots,
        seconds,
        app_work,
        repeat,
        ..
    } = knobs;
    view! {
        <label>"Stock "<input type="number" min="1" data-testid="sale-stock" prop:value=move || stock.get().to_string() on:change=set_number(stock)/></label>
        <label>"Bots "<input type="number" min="0" data-testid="sale-bots" prop:value=move || bots.get().to_string() on:change=set_number(bots)/></label>
        <label>"Seconds "<input type="number" min="1" data-testid="sale-seconds" prop:value=move || seconds.get().to_string() on:change=set_number(seconds)/></label>
        <label title="App work between a buyer reading the stock and writing it. Taps land tens of ms apart, so the naive race needs a wide window to show.">
            "Race window ms "<input type="number" min="0" data-testid="sale-race-window" prop:value=move || app_work.get().to_string() on:change=set_number(app_work)/>
        </label>
        <label><input type="checkbox" prop:checked=move || repeat.get() on:change=move |ev| repeat.set(event_target_checked(&ev))/>" repeat buys"</label>
    }
}

/// A number input's change handler: `signal` takes the new value when it parses (else keeps
/// its own).
fn set_number(signal: RwSignal<u32>) -> impl Fn(ev::Event) + 'static {
    move |ev| {
        if let Ok(n) = event_target_value(&ev).parse() {
            signal.set(n);
        }
    }
}

/// The chaos buttons the server listed in `hello` (its words, its order) and what each press
/// did, placed on the sale's clock.
#[component]
fn ChaosButtons() -> impl IntoView {
    let session = expect_context::<Session>();
    let socket = expect_context::<Socket>();
    // A Memo: the page changes on every frame, and redrawing the buttons then would replace
    // one under the presenter's click; the list itself changes only with a new `hello`.
    let buttons = Memo::new(move |_| {
        session
            .page
            .with(|p| p.hello.as_ref().map(chaos_buttons).unwrap_or_default())
    });
    let allowed = move || buttons.with(|b| !b.is_empty());
    let log = move || {
        session.room.with(|r| {
            r.chaos
                .iter()
                .rev()
                .map(|c| {
                    let at = c.at_us.map(micros).unwrap_or_else(|| "no sale".into());
                    format!("{at}: {}", c.detail)
                })
                .collect::<Vec<_>>()
        })
    };
    view! {
        <Show when=allowed fallback=|| view! {
            <p class="muted">"Chaos buttons appear when the server runs its own Redis (--private-redis)."</p>
        }>
            <div class="room-chaos">
                {move || buttons
                    .get()
                    .into_iter()
                    .map(|c| {
                        let action = c.action;
                        view! {
                            <button data-testid=format!("chaos-{}", action.as_str())
                                title=c.description
                                on:click=move |_| send::chaos(&socket, session, action)>{c.label}</button>
                        }
                    })
                    .collect_view()}
            </div>
            // A plain list (redrawn whole, at most 20 lines) costs the wasm less than a keyed one.
            <ul class="room-chaos-log" data-testid="chaos-log">
                {move || log().into_iter().map(|line| view! { <li>{line}</li> }).collect_view()}
            </ul>
        </Show>
    }
}

/// In the audit trail: the chaos pressed during the run on screen, at its moment on the run's
/// clock, between the buyers' lines' filters and the lines themselves.
#[component]
pub fn ChaosNotes() -> impl IntoView {
    let session = expect_context::<Session>();
    let notes = move || {
        session.page.with(|p| {
            let run = p.run.as_ref().map(|r| r.run_id.as_str());
            session.room.with(|r| {
                r.chaos
                    .iter()
                    .filter(|c| c.sale_id.as_deref().is_some_and(|id| Some(id) == run))
                    .map(|c| {
                        let at = c.at_us.map(micros).unwrap_or_default();
                        format!("chaos at {at}: {}", c.detail)
                    })
                    .collect::<Vec<_>>()
            })
        })
    };
    view! {
        <ul class="room-chaos-log" data-testid="audit-chaos">
            {move || notes().into_iter().map(|line| view! { <li>{line}</li> }).collect_view()}
        </ul>
    }
}
