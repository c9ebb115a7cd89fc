//! The page's reactive state: one signal around [`PageState`] (fed by the socket), the link's
//! state, the form's knobs, the theme and layout, and the run a shared address asks to replay.
//!
//! Every rule about server frames lives in [`PageState::apply`], plain Rust tested on the host;
//! this wrapper only routes frames into it. One update per frame is cheap enough: 10,000 buyers
//! arrive as a few dozen `outcomes` frames, and panels that build views from a slice of the
//! state put a `Memo` in front so they redraw only when their slice changes.

use leptos::prelude::*;
use oversold_protocol::{Hello, RunConfig, ServerMessage};

use crate::model::controls::Knobs;
use crate::model::page::{PageState, Pending};
use crate::model::presets;
use crate::model::room::RoomState;
use crate::model::run::RunModel;
use crate::model::theme::Theme;
use crate::model::view::View;
use crate::model::workshop::Workshop;

/// The WebSocket's state, as the header shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// The first attempt is under way.
    Connecting,
    /// Open; frames flow.
    Open,
    /// Closed; the next attempt starts after `delay_ms`.
    Reconnecting {
        /// Attempts since the link was last healthy.
        attempt: u32,
        /// Wait before the next attempt.
        delay_ms: u32,
    },
}

/// All page state. `Copy`: every field is an arena handle.
#[derive(Debug, Clone, Copy)]
pub struct Session {
    /// WebSocket state (kept apart from [`PageState`]: it changes on socket events, not frames).
    pub link: RwSignal<Link>,
    /// Everything the server said, and what the page asked for.
    pub page: RwSignal<PageState>,
    /// The form.
    pub knobs: RwSignal<Knobs>,
    /// Dark or light; the canvases paint in its palette.
    pub theme: RwSignal<Theme>,
    /// The normal page or the stage view.
    pub view: RwSignal<View>,
    /// The keyboard shortcuts' list is open.
    pub help: RwSignal<bool>,
    /// The run the page's address asked for (strategy, knobs and seed), offered for replay
    /// until a run takes the screen; `None` when the address named none, or named it wrongly.
    pub from_link: RwSignal<Option<RunConfig>>,
    /// The address's query, read at start and checked against the first `hello` (which holds
    /// the limits and strategies it must be checked against).
    pub link_query: StoredValue<Option<String>>,
    /// The preset the page's address named (`?preset=NAME`), its knobs already in the form;
    /// its button is marked until a preset is pressed.
    pub linked_preset: RwSignal<Option<String>>,
    /// What a room adds (code, role, head count, this phone's results, chaos); the sale's
    /// outcomes themselves go to [`PageState`] like any run's.
    pub room: RwSignal<RoomState>,
    /// The workshop: the exercises, this browser's scripts and progress, the check in flight
    /// and its verdict (its own frames, `solution_verdict` and a check's `error`, go only here).
    pub workshop: RwSignal<Workshop>,
    /// A page's own frames, taken before [`PageState`] sees them: the workshop page sets it
    /// ([`Session::with_tap`]); the lab has none, so it carries none of the workshop's code.
    tap: Option<Tap>,
}

/// Takes the frames a page handles itself and hands back the rest.
pub type Tap = fn(&Session, ServerMessage) -> Option<ServerMessage>;

impl Session {
    /// Fresh state: connecting, nothing run yet, default knobs.
    pub fn new() -> Self {
        Self {
            link: RwSignal::new(Link::Connecting),
            page: RwSignal::new(PageState::default()),
            knobs: RwSignal::new(Knobs::default()),
            theme: RwSignal::new(Theme::default()),
            view: RwSignal::new(View::default()),
            help: RwSignal::new(false),
            from_link: RwSignal::new(None),
            link_query: StoredValue::new(None),
            linked_preset: RwSignal::new(None),
            room: RwSignal::new(RoomState::default()),
            workshop: RwSignal::new(Workshop::default()),
            tap: None,
        }
    }

    /// The same, with `tap` taking its frames before the page's state does.
    pub fn with_tap(tap: Tap) -> Self {
        Self {
            tap: Some(tap),
            ..Self::new()
        }
    }

    /// Fold one server frame in.
    pub fn apply(&self, msg: ServerMessage) {
        let msg = match self.tap {
            Some(tap) => match tap(self, msg) {
                Some(msg) => msg,
                None => return,
            },
            None => msg,
        };
        // The form is not the server's state, but `hello` says which values it accepts.
        if let ServerMessage::Hello(hello) = &msg {
            self.knobs.update(|k| *k = k.for_server(hello));
            // An address is read once, against the first greeting's limits and strategies.
            let mut query = None;
            self.link_query.update_value(|q| query = q.take());
            // A preset's link: its knobs into the form, its button marked.
            if let Some(p) = query
                .as_deref()
                .and_then(|q| presets::named(q, &hello.presets))
            {
                self.knobs
                    .update(|k| *k = presets::apply(*k, &p.request).for_server(hello));
                self.linked_preset.set(Some(p.name.clone()));
            } else if let Some(query) = query {
                self.restore_link(query, hello.clone());
            }
        }
        if is_room_frame(&msg) {
            self.room.update(|r| r.apply(&msg));
        }
        self.page.update(|p| p.apply(msg));
    }

    /// A link's knobs into the form, its run offered for replay, and what it got wrong said.
    /// Read in a chunk of its own (`lazy::restore_link`): only a page opened from a link
    /// fetches the link reader.
    fn restore_link(&self, query: String, hello: Box<Hello>) {
        let session = *self;
        leptos::task::spawn_local(async move {
            let Some(restored) = crate::components::lazy::restore_link((query, hello)).await else {
                return;
            };
            session.knobs.set(restored.knobs);
            session.from_link.set(restored.replay);
            if !restored.problems.is_empty() {
                session.notify("bad_link", &restored.problems.join(" "));
            }
        });
    }

    /// Read the run on screen (tracked).
    pub fn with_run<T>(&self, f: impl FnOnce(Option<&RunModel>) -> T) -> T {
        self.page.with(|p| f(p.run.as_ref()))
    }

    /// A `start_run` or `start_compare` went out.
    pub fn asked(&self, pending: Pending) {
        self.page.update(|p| p.asked(pending));
    }

    /// The socket closed: a run in flight will get no more frames.
    pub fn disconnected(&self, attempt: u32, delay_ms: u32) {
        self.link.set(Link::Reconnecting { attempt, delay_ms });
        self.page.update(PageState::disconnected);
        self.workshop.update(Workshop::disconnected);
    }

    /// Show an error until dismissed.
    pub fn notify(&self, code: &str, message: &str) {
        self.page.update(|p| p.notify(code, message));
    }

    /// Remove one notice.
    pub fn dismiss(&self, id: u64) {
        self.page.update(|p| p.dismiss(id));
    }
}

/// Frames the room state reads (an error may answer a room action).
fn is_room_frame(msg: &ServerMessage) -> bool {
    matches!(
        msg,
        ServerMessage::RoomCreated { .. }
            | ServerMessage::RoomJoined { .. }
            | ServerMessage::RoomPresence { .. }
            | ServerMessage::SaleOpened(_)
            | ServerMessage::SaleClosed(_)
            | ServerMessage::BuyResult(_)
            | ServerMessage::ChaosApplied(_)
            | ServerMessage::Error(_)
    )
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}
