//! The only module that touches the WebSocket or JSON: decodes frames into [`Session`] signals,
//! offers typed sends, and reconnects with backoff when the link drops.

use std::collections::VecDeque;
use std::time::Duration;

use leptos::prelude::*;
use oversold_protocol::{ClientMessage, LabFrame, ServerMessage};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::js_sys::{Array, Reflect};
use web_sys::{MessageEvent, WebSocket};

use crate::model::backoff::Backoff;
use crate::model::page::Pending;
use crate::model::room::{ANSWER_WAIT_MS, RoomState};
use crate::session::{Link, Session};

/// One live socket and the callbacks it calls.
struct Conn {
    ws: WebSocket,
    // Held here so the callbacks live exactly as long as the socket that calls them.
    _on_open: Closure<dyn FnMut()>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_close: Closure<dyn FnMut()>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        // Unhook first: a late event must not reach a callback that is about to be freed.
        self.ws.set_onopen(None);
        self.ws.set_onmessage(None);
        self.ws.set_onclose(None);
        let _ = self.ws.close();
    }
}

/// Reads one text frame into the session, or says it must be read later; `Err` says why it
/// could not be read.
pub type Reader = fn(&Session, &str) -> Result<Read, String>;

/// Starts reading a frame a [`Reader`] left for later (`Read::Later`), with code fetched when
/// first needed, frames after it queued behind it: the lab's [`read_later`]. A page without
/// one links none of that, nor the readers, nor the lab's session code they call.
pub type LaterReader = fn(Socket, String);

/// What a [`Reader`] did with a frame.
pub enum Read {
    /// Read into the session (or skipped).
    Done {
        /// It was the server's greeting: the server is really there, not just accepting
        /// sockets.
        hello: bool,
    },
    /// Its reader is code the lab fetches when the first such frame arrives
    /// (`lazy::read_later`): the socket reads it then, and queues every frame after it.
    Later,
}

/// What waits behind a frame being read later, in the order it happened.
enum Queued {
    /// A frame.
    Frame(String),
    /// The connection closed: said to the session after the frames before it.
    Closed { attempt: u32, delay_ms: u32 },
}

/// The page's handle on the server. `Copy`, so buttons can hold it.
#[derive(Clone, Copy)]
pub struct Socket {
    session: Session,
    conn: StoredValue<Option<Conn>, LocalStorage>,
    backoff: StoredValue<Backoff>,
    /// Which page this is (`/ws?page=…`), when not the lab: the server leaves out of `hello`
    /// what that page never shows (the Lua sources; for a phone, the exercises too).
    page: Option<&'static str>,
    /// How frames are read: every frame into [`Session::apply`], or a page's own reading.
    read: Reader,
    /// How a frame `read` left for later is read (the lab's); `None`: `read` never does.
    later: Option<LaterReader>,
    /// The page's HTML joined its room on the connection now open (see [`Self::joined_by_page`]).
    joined_by_page: StoredValue<bool>,
    /// While a frame's reader is being fetched: it and what came after it, in order.
    backlog: StoredValue<Option<VecDeque<Queued>>>,
}

impl Socket {
    /// Open the lab's socket now; it keeps itself open from then on.
    pub fn connect(session: Session) -> Self {
        Self::connect_for(session, None)
    }

    /// Open the socket of `page` (`"spectator"`; `None`: the lab): every frame but the
    /// workshop's, which the lab ignores (its wasm carries no reader for them).
    pub fn connect_for(session: Session, page: Option<&'static str>) -> Self {
        let socket = Self::new(session, page, read_in_lab, Some(read_later));
        socket.open();
        socket
    }

    /// The workshop page's socket: every frame.
    pub fn connect_workshop(session: Session) -> Self {
        Self::open_with(session, Some("workshop"), read_any)
    }

    fn open_with(session: Session, page: Option<&'static str>, read: Reader) -> Self {
        let socket = Self::new(session, page, read, None);
        socket.open();
        socket
    }

    /// The phone's socket: its frames read by `read` (the phone reads only the frames it
    /// shows, `model::phone`, so its wasm carries no decoder for the rest of the protocol),
    /// and the connection its HTML opened while the wasm was on its way
    /// (`window.oversoldSocket`, phone.html) taken over with the frames that came meanwhile;
    /// a fresh one when there is none.
    pub fn take_over(session: Session, page: Option<&'static str>, read: Reader) -> Self {
        let socket = Self::new(session, page, read, None);
        match early_socket(&ws_url(page)) {
            Some(early) => socket.adopt(early),
            None => socket.open(),
        }
        socket
    }

    fn new(
        session: Session,
        page: Option<&'static str>,
        read: Reader,
        later: Option<LaterReader>,
    ) -> Self {
        Self {
            session,
            conn: StoredValue::new_local(None),
            backoff: StoredValue::new(Backoff::page_default()),
            page,
            read,
            later,
            joined_by_page: StoredValue::new(false),
            backlog: StoredValue::new(None),
        }
    }

    /// True while the connection is the one the page's HTML opened and joined its room on
    /// (the phone's): the room is joined already, and joining again would replay the sale.
    pub fn joined_by_page(&self) -> bool {
        self.joined_by_page.get_value()
    }

    fn open(self) {
        // Replacing the old connection drops it; we are in a timer callback, not one of its own.
        self.conn.set_value(None);
        self.joined_by_page.set_value(false);
        match WebSocket::new(&ws_url(self.page)) {
            Ok(ws) => self.attach(ws),
            Err(_) => self.retry_later(),
        }
    }

    /// Take over a socket the page opened before the wasm ran: hooked up, said to be open if its
    /// `open` event has passed already, and the frames it buffered read in their order.
    fn adopt(self, early: Early) {
        let open = early.ws.ready_state() == WebSocket::OPEN;
        self.joined_by_page.set_value(early.joined);
        self.attach(early.ws);
        if open {
            self.session.link.set(Link::Open);
        }
        for (at, text) in early.frames.iter().enumerate() {
            if early.clicked_at == Some(at) {
                self.clicked_by_page();
            }
            self.receive(text);
        }
        if early.clicked_at.is_some_and(|at| at >= early.frames.len()) {
            self.clicked_by_page();
        }
    }

    /// The page's HTML sent Buy's first click before the app ran (phone.html): the app counts
    /// it and waits for its answer, as if its own button had sent it (`send::buy`).
    fn clicked_by_page(self) {
        self.session.room.update(RoomState::clicked_by_page);
        wait_for_answer(self.session);
    }

    /// Hook `ws` up: its events drive the link, its frames go to the page's reader.
    fn attach(self, ws: WebSocket) {
        let on_open = Closure::<dyn FnMut()>::new(move || self.session.link.set(Link::Open));
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
            if let Some(text) = ev.data().as_string() {
                self.receive(&text);
            }
        });
        // `error` is always followed by `close`, so `close` alone drives reconnecting.
        let on_close = Closure::<dyn FnMut()>::new(move || self.retry_later());
        ws.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        ws.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        ws.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        self.conn.set_value(Some(Conn {
            ws,
            _on_open: on_open,
            _on_message: on_message,
            _on_close: on_close,
        }));
    }

    /// One text frame, read into the session: now, or, behind a frame whose reader is being
    /// fetched, in its turn.
    fn receive(self, text: &str) {
        if self.queued(|| Queued::Frame(text.to_owned())) {
            return;
        }
        match (self.read)(&self.session, text) {
            Ok(Read::Done { hello }) => self.greeted(hello),
            Ok(Read::Later) => match self.later {
                Some(start) => start(self, text.to_owned()),
                None => self.unreadable("this page has no reader for it"),
            },
            Err(err) => self.unreadable(&err),
        }
    }

    /// Put `item` behind the frames waiting for a reader, if any wait: true if it was.
    fn queued(self, item: impl FnOnce() -> Queued) -> bool {
        let mut queued = false;
        self.backlog.update_value(|backlog| {
            if let Some(backlog) = backlog {
                backlog.push_back(item());
                queued = true;
            }
        });
        queued
    }

    /// Read the backlog in order, fetching the later frames' reader on the way, until it is
    /// empty; then frames are read as they come again. The lab's alone ([`read_later`]).
    async fn read_backlog(self) {
        loop {
            let mut next = None;
            self.backlog.update_value(|backlog| {
                next = backlog.as_mut().and_then(VecDeque::pop_front);
                if next.is_none() {
                    *backlog = None;
                }
            });
            let text = match next {
                None => return,
                Some(Queued::Closed { attempt, delay_ms }) => {
                    self.session.disconnected(attempt, delay_ms);
                    continue;
                }
                Some(Queued::Frame(text)) => text,
            };
            match (self.read)(&self.session, &text) {
                Ok(Read::Done { hello }) => self.greeted(hello),
                Ok(Read::Later) => match crate::components::lazy::read_later(text).await {
                    Ok(msg) => self.greeted(apply(&self.session, msg)),
                    Err(err) => self.unreadable(&err),
                },
                Err(err) => self.unreadable(&err),
            }
        }
    }

    /// A greeting means the server is really there, not just accepting sockets.
    fn greeted(self, hello: bool) {
        if hello {
            self.backoff.update_value(Backoff::reset);
        }
    }

    fn unreadable(self, err: &str) {
        self.session.notify(
            "unreadable_frame",
            &format!("The page could not read a server message: {err}"),
        );
    }

    fn retry_later(self) {
        let mut delay_ms = 0;
        let mut attempt = 0;
        self.backoff.update_value(|b| {
            delay_ms = b.next_delay_ms();
            attempt = b.attempts();
        });
        // Frames still waiting for their reader happened before the close.
        if !self.queued(|| Queued::Closed { attempt, delay_ms }) {
            self.session.disconnected(attempt, delay_ms);
        }
        // Through `web::after`: the socket is always in the main module, so this call keeps the
        // description of `after`'s callback type there for the lab's chunks that use it too.
        crate::web::after(
            Duration::from_millis(u64::from(delay_ms)),
            Box::new(move || self.open()),
        );
    }

    /// Send one frame; false when the socket is not open.
    pub fn send(&self, msg: &ClientMessage) -> bool {
        let Ok(text) = serde_json::to_string(msg) else {
            return false;
        };
        self.conn.with_value(|c| {
            c.as_ref().is_some_and(|c| {
                c.ws.ready_state() == WebSocket::OPEN && c.ws.send_with_str(&text).is_ok()
            })
        })
    }

    /// Ask for a run of `strategy` with the form's knobs, in the strategy's own scenario (a
    /// race strategy started from the keyboard while the form shows the checkout still races).
    pub fn start_run(&self, strategy: &str) {
        // The form's scenario when it has this strategy (names repeat: `lua` races, and fails
        // over), else the scenario that does.
        let current = self.session.knobs.with_untracked(|k| k.scenario);
        let scenario = self.session.page.with_untracked(|p| {
            let find = |list| crate::model::strategies::find(list, strategy);
            find(p.offered(current))
                .or_else(|| find(p.known()))
                .map(|s| s.about.scenario)
        });
        let mut knobs = self.session.knobs.get_untracked();
        if let Some(scenario) = scenario {
            knobs.scenario = scenario;
        }
        let config = knobs.run_request(strategy);
        if self.send(&ClientMessage::StartRun { config }) {
            self.session.asked(Pending::Run(strategy.to_string()));
        } else {
            self.session.notify(
                "not_connected",
                "Not connected to the server yet; the page keeps retrying.",
            );
        }
    }

    /// Race `config` again exactly: same strategy, knobs and seed, so the same crowd.
    pub fn replay(&self, config: &oversold_protocol::RunConfig) {
        let request = crate::model::controls::replay_request(config);
        if self.send(&ClientMessage::StartRun { config: request }) {
            self.session.asked(Pending::Run(config.strategy.clone()));
        } else {
            self.session.notify(
                "not_connected",
                "Not connected to the server yet; the page keeps retrying.",
            );
        }
    }

    /// Race every available strategy with the form's knobs, one after another, same seed.
    pub fn start_compare(&self) {
        let config = self.session.knobs.get_untracked().compare_request();
        if self.send(&ClientMessage::StartCompare { config }) {
            self.session.asked(Pending::Compare);
        } else {
            self.session.notify(
                "not_connected",
                "Not connected to the server yet; the page keeps retrying.",
            );
        }
    }

    /// Stop the run (or comparison) in flight.
    pub fn cancel_run(&self) {
        self.send(&ClientMessage::CancelRun);
    }

    /// Ask the checkout in flight to reconcile its shelf (answered by `reconciled`).
    pub fn reconcile(&self) {
        self.send_or_notify(&ClientMessage::Reconcile);
    }

    /// Open step-through mode on `strategy`: `stock` units, `buyers` (2 to 4) buyers; `None`
    /// for the classic case the server opens on (one unit, two buyers).
    pub fn step_open(&self, strategy: &str, stock: Option<u32>, buyers: Option<u32>) {
        let config = oversold_protocol::RunRequest {
            stock,
            buyers,
            ..oversold_protocol::RunRequest::for_strategy(strategy)
        };
        self.send_or_notify(&ClientMessage::StepOpen { config });
    }

    /// Let buyer `buyer` (1-based) send its next real Redis command.
    pub fn step(&self, buyer: u32) {
        self.send_or_notify(&ClientMessage::Step { buyer });
    }

    /// Start the step-through over with the same knobs.
    pub fn step_reset(&self) {
        self.send_or_notify(&ClientMessage::StepReset);
    }

    /// Leave step-through mode.
    pub fn step_close(&self) {
        self.send(&ClientMessage::StepClose);
    }

    fn send_or_notify(&self, msg: &ClientMessage) {
        if !self.send(msg) {
            self.session.notify(
                "not_connected",
                "Not connected to the server yet; the page keeps retrying.",
            );
        }
    }
}

/// A socket the page's HTML opened before the wasm arrived.
struct Early {
    ws: WebSocket,
    /// What came on it meanwhile, oldest first.
    frames: Vec<String>,
    /// The HTML joins its room on it (once it is open: its own `open` listener).
    joined: bool,
    /// The HTML sent Buy's first click after this many of `frames` had come.
    clicked_at: Option<usize>,
}

/// The click just counted gets its answer, or after [`ANSWER_WAIT_MS`] the Buy button is
/// freed with a word (`RoomState::no_answer`): every wait ends, even if the sale's server
/// stopped. For the app's own click (`send::buy`) and the HTML's (`Socket::adopt`).
pub fn wait_for_answer(session: Session) {
    let room = session.room;
    let click = room.with_untracked(|r| r.clicks_sent);
    set_timeout(
        move || room.update(|r| r.no_answer(click)),
        Duration::from_millis(u64::from(ANSWER_WAIT_MS)),
    );
}

/// The socket the page's HTML opened for `url` before the wasm arrived
/// (`window.oversoldSocket = {socket, frames, join}`, phone.html): taken once, and only while
/// it is still connecting or open.
fn early_socket(url: &str) -> Option<Early> {
    let window = window();
    let key = JsValue::from_str("oversoldSocket");
    let early = Reflect::get(&window, &key)
        .ok()
        .filter(JsValue::is_object)?;
    let _ = Reflect::delete_property(window.unchecked_ref::<web_sys::js_sys::Object>(), &key);
    let field = |name: &str| Reflect::get(&early, &name.into()).ok();
    let ws: WebSocket = field("socket")?.dyn_into().ok()?;
    let live = matches!(ws.ready_state(), WebSocket::CONNECTING | WebSocket::OPEN);
    if !live || ws.url() != url {
        let _ = ws.close();
        return None;
    }
    let frames = field("frames").and_then(|f| f.dyn_into::<Array>().ok());
    Some(Early {
        ws,
        frames: frames.map_or_else(Vec::new, |f| {
            f.iter().filter_map(|f| f.as_string()).collect()
        }),
        joined: field("join").is_some_and(|j| j.is_string()),
        clicked_at: field("clickedAt")
            .and_then(|at| at.as_f64())
            .filter(|at| *at >= 0.0)
            .map(|at| at as usize),
    })
}

/// Every frame, decoded whole, into [`Session::apply`]: the workshop's reading. `type` first
/// ([`ServerMessage::from_json`]): serde's own reader for the enum would add a second reader
/// of every frame's types to the wasm.
fn read_any(session: &Session, text: &str) -> Result<Read, String> {
    let msg = ServerMessage::from_json(text).map_err(|err| err.to_string())?;
    Ok(Read::Done {
        hello: apply(session, msg),
    })
}

/// The lab's reading: as [`read_any`] for the frames every run sends; the workshop's frames
/// skipped unread; the rest ([`oversold_protocol::LATER_TYPES`]) read later, by code the lab
/// fetches with the first of them, so its first download carries none of their readers.
fn read_in_lab(session: &Session, text: &str) -> Result<Read, String> {
    Ok(
        match ServerMessage::from_json_in_lab(text).map_err(|err| err.to_string())? {
            LabFrame::Read(msg) => Read::Done {
                hello: apply(session, msg),
            },
            LabFrame::Skipped => Read::Done { hello: false },
            LabFrame::Later => Read::Later,
        },
    )
}

/// The lab's [`LaterReader`]: `text` first in a backlog that [`Socket::read_backlog`] reads
/// in order, fetching the chunk with the readers of the frames a plain race never sends.
fn read_later(socket: Socket, text: String) {
    socket
        .backlog
        .set_value(Some(VecDeque::from([Queued::Frame(text)])));
    leptos::task::spawn_local(socket.read_backlog());
}

/// One decoded frame into the session; true for `hello`.
fn apply(session: &Session, msg: ServerMessage) -> bool {
    let hello = matches!(msg, ServerMessage::Hello(_));
    session.apply(msg);
    hello
}

/// `/ws` on whatever host served the page, so `trunk serve`'s proxy and the real server both
/// work; `?page=NAME` for a page that is not the lab.
fn ws_url(page: Option<&str>) -> String {
    let location = window().location();
    let scheme = if location.protocol().as_deref() == Ok("https:") {
        "wss:"
    } else {
        "ws:"
    };
    let host = location.host().unwrap_or_default();
    match page {
        Some(page) => format!("{scheme}//{host}/ws?page={page}"),
        None => format!("{scheme}//{host}/ws"),
    }
}
