//! The workshop view (`?view=workshop&exercise=ID`): the exercises with this browser's
//! progress, the one on screen (story, contract, hints), an editor for the student's Lua, Check,
//! and the judge's verdict with its counterexample's tape. Everything it shows comes from
//! `model::workshop` as markup the model builds (and tests); this file puts it on the page and
//! passes clicks, keys and files in.
//!
//! The workshop is a page of its own (`workshop_app`, its own wasm), so the lab's bundle does
//! not carry it. Why markup and not Leptos views: every page has a gzipped size budget, and as
//! typed views, with a reactive attribute per changing button and serde for the saved file, this
//! view cost about 34 KB; as it is, about 12 KB. `workshop_app` places one empty
//! `<section id="workshop">`; one Effect fills it with a fixed skeleton ([`SKELETON`]) and then
//! keeps each region's markup and each button's state in step with the model, comparing with
//! what it drew last, so a key press in the editor redraws only the editor's two layers; and one
//! listener on the document takes the view's clicks, keys and input. The Effect syncs markup
//! Leptos does not own, which is what Effects are for.
//!
//! The buttons whose state changes (Check, the hint, Step, Show all, the exercise on screen)
//! are never redrawn for it, so they keep the keyboard's focus; a busy or spent one is
//! `aria-disabled`, not `disabled`, which would drop the focus.

use std::time::Duration;

use leptos::prelude::*;
use oversold_protocol::room::RoomRole;
use oversold_protocol::{ClientMessage, ServerMessage};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, Event, FileReader, HtmlDocument, HtmlInputElement, KeyboardEvent, js_sys};

use crate::components::room::presenter::PRESENTING_KEY;
use crate::components::room::send;
use crate::model::workshop::challenge::{self, Challenge};
use crate::model::workshop::{
    self as model, Action, BOOK_KEY, Book, CheckRequest, Controls, EditorKey, FILE_NAME, Fields,
    GIVE_UP_MS,
};
use crate::session::{Link, Session};
use crate::socket::Socket;
use crate::web;

/// Read the progress this browser kept and whether the address opens the workshop; then keep
/// the page in step with the state ([`sync`], [`draw`]) and listen for the view's events.
pub fn start(session: Session, socket: Socket) {
    if let Some(book) = web::recall(BOOK_KEY).and_then(|t| Book::from_fields(read(&t)).ok()) {
        change(session, Action::Load(book));
    }
    // This page is the workshop, whatever its address says; the address may name an exercise,
    // and a room whose challenge this page takes part in (or presents).
    let query = web::query();
    if let Some(c) = Challenge::from_query(&query) {
        session.workshop.update(|w| w.challenge = Some(c.clone()));
        join_room(session, socket, &c);
    }
    change(session, Action::Open(model::from_query(&query).flatten()));
    // One Effect for the outside world and the view, each comparing with what it last wrote.
    Effect::new(move |last: Option<(Synced, Option<Drawn>)>| {
        let (synced, drawn) = last.map_or((None, None), |(s, d)| (Some(s), d));
        (sync(session, synced), draw(session, drawn))
    });
    // One handler for the three kinds of event, for the page's lifetime (the page is never
    // unmounted), so it is leaked on purpose rather than kept. `Fn`, not `FnMut`: a Tab's
    // `execCommand` fires `input` while its `keydown` is still being handled, and only an
    // `Fn` closure may be called again from inside itself.
    let handler = Closure::<dyn Fn(Event)>::new(move |ev: Event| act(session, socket, &ev));
    for kind in ["click", "keydown", "input"] {
        let _ = document().add_event_listener_with_callback(kind, handler.as_ref().unchecked_ref());
    }
    handler.forget();
}

/// The workshop page's [`crate::session::Tap`]: a verdict, or the `error` that answers a check in
/// flight (shown in the verdict region, not as a notice), stay here; `hello`'s exercises are
/// kept here and the rest of it goes on. `None` when the frame was the workshop's.
pub fn frame(session: &Session, msg: ServerMessage) -> Option<ServerMessage> {
    match msg {
        ServerMessage::SolutionVerdict(verdict) => {
            session.workshop.update(|w| w.verdict(verdict));
            None
        }
        ServerMessage::Error(err)
            if session.workshop.with_untracked(|w| w.checking().is_some()) =>
        {
            let mut ours = false;
            session.workshop.update(|w| ours = w.error(&err));
            (!ours).then_some(ServerMessage::Error(err))
        }
        ServerMessage::ChallengeOpened(_)
        | ServerMessage::ChallengeEntry(_)
        | ServerMessage::ChallengeTape(_) => {
            session.workshop.update(|w| w.challenge_frame(&msg));
            None
        }
        ServerMessage::Hello(mut hello) => {
            let exercises = std::mem::take(&mut hello.exercises);
            session.workshop.update(|w| w.set_exercises(exercises));
            Some(ServerMessage::Hello(hello))
        }
        other => Some(other),
    }
}

/// What [`sync`] last wrote: the book's text and the address.
type Synced = (String, String);

/// Keep localStorage and the address in step with the state, writing only what changed since
/// `last`.
fn sync(session: Session, last: Option<Synced>) -> Synced {
    let (book, query) = session.workshop.with(|w| {
        // Nothing is written for a visitor who never touched an exercise.
        let book = if w.book.exercises.is_empty() {
            String::new()
        } else {
            w.book.to_json()
        };
        (book, w.query())
    });
    let first = last.is_none();
    let (last_book, last_query) = last.unwrap_or_default();
    if book != last_book && !book.is_empty() {
        web::remember(BOOK_KEY, &book);
    }
    if first {
        web::set_body_attribute("data-workshop", "on");
    }
    if query != last_query {
        web::set_query(&query);
    }
    (book, query)
}

/// The view's markup, set once; the regions with an `id` are filled from the model, and the
/// elements with a `data-act` are what the click listener acts on.
const SKELETON: &str = r#"<div class="ws-intro"><h2 id="ws-heading">Workshop: write the script yourself</h2><p class="muted">Write the Lua script Redis runs in one step. Check races it against crowds of buyers on the server's own Redis and shows the shortest tape that breaks it. Your work stays in this browser; Export takes it elsewhere.</p></div><section class="panel ws-room" id="ws-room" hidden aria-labelledby="ws-room-title"><div id="ws-room-head"></div><div class="ws-room-act"><span id="ws-room-present" hidden><button class="ws-check" data-act="open-challenge" id="ws-open">Open this exercise for the room</button></span><span id="ws-room-take" hidden><label>Nickname <input id="ws-nick" maxlength="24" autocomplete="nickname" spellcheck="false"></label><button class="ws-check" data-act="submit" id="ws-submit">Submit to the room</button></span><span class="muted" role="status" id="ws-room-note"></span></div><div id="ws-board" aria-live="polite"></div><div id="ws-shown"></div></section><div class="ws-grid"><div class="ws-side"><nav class="panel ws-list" aria-label="Exercises"><div class="panel-head"><h2>Exercises</h2></div><ol class="ws-exercises" id="ws-list"></ol><div class="run-files"><button class="link" data-act="export">Export</button><label class="link file-pick">Import…<input type="file" accept=".json,application/json" data-act="import"></label></div><p class="muted ws-note" role="status" id="ws-note"></p></nav><article class="panel ws-task" aria-labelledby="ws-title"><div id="ws-task"></div><button class="link" id="ws-hint" data-act="hint"></button></article></div><div class="ws-main"><div class="panel ws-editor"><div class="panel-head"><h2><label for="ws-source">Your script</label></h2><span class="muted ws-keys" id="ws-keys">Tab indents; Escape then Tab (or Shift+Tab) leaves the editor.</span></div><div class="ws-code"><pre class="ws-gutter" id="ws-gutter" aria-hidden="true"></pre><div class="ws-layers"><pre class="ws-copy" id="ws-copy" aria-hidden="true"></pre><textarea class="ws-source" id="ws-source" spellcheck="false" autocapitalize="off" autocomplete="off" wrap="off" aria-describedby="ws-keys"></textarea></div></div><div class="ws-actions"><button class="ws-check" id="ws-check" data-act="check">Check</button><button class="link" data-act="reset">Reset to starter</button></div></div><section class="panel ws-verdict" aria-label="Verdict"><div id="ws-summary" aria-live="polite"></div><div id="ws-details"></div><div class="ws-steps" id="ws-steps" hidden><button class="link" id="ws-step" data-act="step">Step: next call</button><button class="link" id="ws-all" data-act="all">Show all</button></div></section></div></div>"#;

/// The regions filled from the model, in the order of [`Drawn::regions`].
const REGIONS: [&str; 12] = [
    "ws-room-head",
    "ws-room-note",
    "ws-board",
    "ws-shown",
    "ws-list",
    "ws-task",
    "ws-hint",
    "ws-note",
    "ws-gutter",
    "ws-copy",
    "ws-summary",
    "ws-details",
];

/// What the view last showed: each region's markup, the buttons' state, and which text the
/// editor was given.
#[derive(Clone, PartialEq)]
struct Drawn {
    regions: [String; 12],
    controls: Controls,
    loaded: u32,
    /// In a room: presenting (`true`) or taking part.
    room: Option<bool>,
    /// The exercise on screen, marked in the list (`aria-current`) without drawing it again,
    /// so the keyboard's place in the list survives a choice.
    current: String,
}

/// Draw what changed since `last` (everything, the first time, skeleton included).
fn draw(session: Session, last: Option<Drawn>) -> Option<Drawn> {
    // `app.rs` placed the section; until it is on the page there is nothing to draw into.
    let root = by_id("workshop")?;
    let origin = window().location().origin().unwrap_or_default();
    let now = session.workshop.with(|w| {
        let text = w.draft();
        let c = w.challenge.as_ref();
        Drawn {
            regions: [
                c.map(|c| challenge::head_html(c, &origin))
                    .unwrap_or_default(),
                model::room_note_html(w),
                c.map(challenge::board_html).unwrap_or_default(),
                c.map(challenge::shown_html).unwrap_or_default(),
                model::list_html(w),
                model::task_html(w),
                model::hint_button(w).0.to_string(),
                model::note_html(w),
                model::gutter(text),
                model::layer(text),
                model::summary_html(w),
                model::details_html(w),
            ],
            controls: model::controls(w),
            room: c.map(|c| c.presenter),
            loaded: w.loaded,
            current: w.current().map(|e| e.id.clone()).unwrap_or_default(),
        }
    });
    let last = last.as_ref();
    if last.is_none() {
        root.set_inner_html(SKELETON);
    }
    for (i, id) in REGIONS.iter().enumerate() {
        if last.is_none_or(|l| l.regions[i] != now.regions[i])
            && let Some(el) = by_id(id)
        {
            el.set_inner_html(&now.regions[i]);
        }
    }
    let list_drawn = last.is_none_or(|l| l.regions[4] != now.regions[4]);
    if list_drawn || last.is_none_or(|l| l.current != now.current) {
        if let Some(l) = last {
            flag(&format!("ws-ex-{}", l.current), "aria-current", false);
        }
        flag(&format!("ws-ex-{}", now.current), "aria-current", true);
    }
    let c = now.controls;
    if last.is_none_or(|l| l.controls != c) {
        flag("ws-check", "aria-disabled", c.checking);
        if let Some(check) = by_id("ws-check") {
            check.set_text_content(Some(if c.checking { "checking…" } else { "Check" }));
        }
        flag("ws-hint", "aria-disabled", !c.more_hints);
        flag("ws-steps", "hidden", !c.tape);
        flag("ws-step", "aria-disabled", c.tape_done);
        flag("ws-all", "aria-disabled", c.tape_done);
        flag("ws-submit", "aria-disabled", c.checking);
    }
    if last.is_none_or(|l| l.room != now.room) {
        flag("ws-room", "hidden", now.room.is_none());
        flag("ws-room-present", "hidden", now.room != Some(true));
        flag("ws-room-take", "hidden", now.room != Some(false));
    }
    // The editor's text is replaced only from outside (another exercise, Reset, Import):
    // while the student types, the textarea holds the text and the model follows it.
    if last.is_none_or(|l| l.loaded != now.loaded)
        && let Some(ta) = by_id("ws-source")
    {
        let text = session.workshop.with_untracked(|w| w.draft().to_string());
        ta.unchecked_into::<HtmlInputElement>().set_value(&text);
    }
    Some(now)
}

/// The element `id`.
fn by_id(id: &str) -> Option<Element> {
    document().get_element_by_id(id)
}

/// Set `attr` on element `id` when `on`, remove it otherwise.
fn flag(id: &str, attr: &str, on: bool) {
    if let Some(el) = by_id(id) {
        let _ = if on {
            el.set_attribute(attr, "true")
        } else {
            el.remove_attribute(attr)
        };
    }
}

/// Make one change to the state: every change goes through here and `Workshop::act`, so the
/// page carries one update of the workshop's signal, not one per kind of change.
fn change(session: Session, action: Action) -> Option<CheckRequest> {
    let mut request = None;
    session.workshop.update(|w| request = w.act(action));
    request
}

/// One event anywhere on the page: the view's clicks, the editor's keys and text, a picked
/// file.
///
/// The editor is a `<textarea>`, read and written through `HtmlInputElement`'s bindings, as
/// Leptos's own `event_target_value` does: they reach `value` by name, which both elements
/// have, and the page already carries them.
fn act(session: Session, socket: Socket, ev: &Event) {
    let Some(target) = ev.target().and_then(|t| t.dyn_into::<Element>().ok()) else {
        return;
    };
    let editor = target.id() == "ws-source";
    let action = match ev.type_().as_str() {
        "click" if room_click(session, socket, &target) => return,
        "click" => match click(session, &target) {
            Some(action) => action,
            None => return,
        },
        "keydown" if editor => {
            editor_key(ev.unchecked_ref(), &target);
            return;
        }
        "input" if editor => Action::Edit(target.unchecked_ref::<HtmlInputElement>().value()),
        "input" if target.get_attribute("data-act").as_deref() == Some("import") => {
            return import(session, target.unchecked_ref());
        }
        _ => return,
    };
    let Some(req) = change(session, action) else {
        return;
    };
    // Check (or Submit): one frame; no answer within GIVE_UP_MS frees the button.
    let seq = req.seq;
    let msg = match req.to_room {
        Some((room, nickname)) => ClientMessage::SubmitChallenge {
            room,
            nickname,
            source: req.source,
        },
        None => ClientMessage::CheckSolution {
            exercise: req.exercise,
            source: req.source,
        },
    };
    if !socket.send(&msg) {
        change(session, Action::NotSent);
        return;
    }
    // The verdict region says "Checking…" now: on a narrow screen it is below the editor.
    web::bring_into_view("#ws-summary");
    set_timeout(
        move || {
            change(session, Action::GiveUp(seq));
        },
        Duration::from_millis(GIVE_UP_MS.into()),
    );
}

/// What a click on something with a `data-act` (or an exercise in the list) asks for.
fn click(session: Session, target: &Element) -> Option<Action> {
    let el = target
        .closest("[data-act],[data-exercise]")
        .ok()
        .flatten()?;
    if let Some(id) = el.get_attribute("data-exercise") {
        return Some(Action::Choose(id));
    }
    Some(match el.get_attribute("data-act")?.as_str() {
        "check" => Action::Check,
        "submit" => Action::Submit(
            by_id("ws-nick")
                .map(|el| el.unchecked_into::<HtmlInputElement>().value())
                .unwrap_or_default(),
        ),
        "reset" => Action::Reset,
        "hint" => Action::Hint,
        "step" => Action::Step(false),
        "all" => Action::Step(true),
        "export" => Action::Note(export(session)),
        _ => return None,
    })
}

/// The presenter's room buttons: open the exercise on screen for the room, or put a
/// submission's tape on every screen. True when the click was one of them.
fn room_click(session: Session, socket: Socket, target: &Element) -> bool {
    let Some(el) = target.closest("[data-act]").ok().flatten() else {
        return false;
    };
    let act = el.get_attribute("data-act").unwrap_or_default();
    if act != "open-challenge" && act != "show" {
        return false;
    }
    let Some((room, presenter_token)) = session
        .room
        .with_untracked(|r| Some((r.code.clone()?, r.token.clone()?)))
    else {
        return true;
    };
    let msg = if act == "show" {
        let Some(participant) = el
            .get_attribute("data-participant")
            .and_then(|p| p.parse().ok())
        else {
            return true;
        };
        ClientMessage::ShowCounterexample {
            room,
            presenter_token,
            participant,
        }
    } else {
        let Some(exercise) = session
            .workshop
            .with_untracked(|w| w.current().map(|e| e.id.clone()))
        else {
            return true;
        };
        ClientMessage::OpenChallenge {
            room,
            presenter_token,
            exercise,
        }
    };
    if !socket.send(&msg) {
        session.notify(
            "not_connected",
            "Not connected to the server yet; the page keeps retrying.",
        );
    }
    true
}

/// In a room (the address names one): join it whenever the socket opens: as its presenter with
/// the token this browser kept when it created the room (the lab's room panel), otherwise as a
/// participant, keeping the seat across reconnects. Asked to present without the token, it
/// watches (a spectator sees the board and the tapes).
fn join_room(session: Session, socket: Socket, c: &Challenge) {
    let (code, wanted) = (c.room.clone(), c.presenter);
    let mut presenter = false;
    if c.presenter {
        let kept =
            web::recall(PRESENTING_KEY).filter(|k| k.split(' ').next() == Some(code.as_str()));
        presenter = kept.is_some_and(|k| {
            let mut ok = false;
            session.room.update(|r| ok = r.resume_presenting(&k));
            ok
        });
        if !presenter {
            session.workshop.update(|w| {
                w.room_note = Some(format!(
                    "This browser did not create room {code}: open the challenge from the lab's room panel to present it. Showing the board."
                ));
            });
        }
    }
    Effect::new(move |_| {
        if session.link.get() != Link::Open {
            return;
        }
        let (token, back) = session.room.with_untracked(|r| {
            let back = r
                .participant_id
                .zip(r.seat_token.clone())
                .filter(|_| !presenter);
            (r.token.clone().filter(|_| presenter), back)
        });
        let role = match (presenter, wanted) {
            (true, _) => RoomRole::Presenter,
            (false, true) => RoomRole::Spectator,
            (false, false) => RoomRole::Phone,
        };
        send::join(&socket, session, &code, role, token, back);
    });
}

/// Export: the book as a file; the sentence for the note.
fn export(session: Session) -> String {
    let json = session.workshop.with_untracked(|w| w.book.to_json());
    match web::download(FILE_NAME, "application/json", &json) {
        Ok(()) => "Your scripts and progress are in the file the browser saved.",
        Err(_) => "The browser would not save the file.",
    }
    .to_string()
}

/// Import: the picked file, read (within `MAX_BOOK_BYTES`) and merged. Read with a
/// `FileReader` of its own rather than `web::read_text`, whose generic callback would bring a
/// second copy of that function into the wasm. The reader's callback is leaked: an import is
/// one click, and a callback that frees itself costs more.
fn import(session: Session, input: &HtmlInputElement) {
    let picked = input.files().and_then(|f| f.get(0));
    // The same file picked twice is still a change.
    input.set_value("");
    let Some(file) = picked else { return };
    if let Some(why) = model::too_big(file.size() as usize) {
        change(session, Action::Import(Err(why)));
        return;
    }
    let Ok(reader) = FileReader::new() else {
        return;
    };
    let done = {
        let reader = reader.clone();
        Closure::<dyn FnMut()>::new(move || {
            let text = reader.result().ok().and_then(|v| v.as_string());
            let file = text
                .map(|t| read(&t))
                .ok_or_else(|| "The browser could not read this file.".to_string());
            change(session, Action::Import(file));
        })
    };
    reader.set_onloadend(Some(done.as_ref().unchecked_ref()));
    done.forget();
    let _ = reader.read_as_text(&file);
}

/// A workshop file's fields (`model::workshop::Fields`), read by the browser's own JSON
/// parser; `None` when the text is not JSON, or not an object.
fn read(text: &str) -> Option<Fields> {
    let file = js_sys::JSON::parse(text).ok()?;
    // A string field of `obj`, if it has one (`Reflect.get` refuses what is not an object).
    let field = |obj: &JsValue, name: &str| {
        js_sys::Reflect::get(obj, &JsValue::from_str(name))
            .ok()
            .and_then(|v| v.as_string())
    };
    let list = js_sys::Reflect::get(&file, &JsValue::from_str("exercises")).ok()?;
    let exercises = list
        .dyn_into::<js_sys::Array>()
        .ok()
        .map_or_else(Vec::new, |a| {
            a.iter()
                .map(|e| [field(&e, "id"), field(&e, "progress"), field(&e, "script")])
                .collect()
        });
    Some(Fields {
        format: field(&file, "format"),
        exercises,
    })
}

/// A key in the editor: Tab types two spaces, through the browser's own editing (so Undo
/// still works, and the `input` event follows); Escape lets the next Tab leave the editor.
fn editor_key(ev: &KeyboardEvent, editor: &Element) {
    let modifier = ev.ctrl_key() || ev.alt_key() || ev.meta_key();
    let armed = editor.get_attribute("data-armed").is_some();
    let key = model::editor_key(&ev.key(), ev.shift_key(), modifier, armed);
    let _ = if key == EditorKey::Arm {
        editor.set_attribute("data-armed", "")
    } else {
        editor.remove_attribute("data-armed")
    };
    // Where the browser cannot type for us, Tab keeps its own meaning.
    if key == EditorKey::Indent
        && document()
            .unchecked_into::<HtmlDocument>()
            .exec_command_with_show_ui_and_value("insertText", false, "  ")
            .unwrap_or(false)
    {
        ev.prevent_default();
    }
}
