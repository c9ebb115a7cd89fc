//! Saved runs in and out, with no server round trip: "save this run" downloads the run on
//! screen as a `SavedRun` file; a file dropped anywhere on the page (or picked, on a phone) is
//! checked (`model::saved::parse`) and shown like a finished run. This is what a speaker falls
//! back on when the venue's network, or the server's Redis, fails.

use leptos::ev;
use leptos::prelude::*;
use web_sys::{DragEvent, File, HtmlInputElement};

use crate::components::lazy;
use crate::model::saved::{self, MAX_FILE_BYTES};
use crate::session::Session;
use crate::web;

/// Check `text` and show it, or say what is wrong with it. The checker is in a chunk of its
/// own (`lazy::read_saved_file`), fetched the first time a file is opened.
fn load(session: Session, text: Result<String, String>) {
    let text = match text {
        Ok(text) => text,
        Err(why) => return session.notify("not_a_saved_run", &why),
    };
    leptos::task::spawn_local(async move {
        match lazy::read_saved_file(text).await {
            Ok(run) => session.page.update(|p| p.load_saved(run)),
            Err(why) => session.notify("not_a_saved_run", &why),
        }
    });
}

/// Read `file` and load it.
fn load_file(session: Session, file: &File) {
    web::read_text(file, MAX_FILE_BYTES, move |text| load(session, text));
}

/// "Save this run" and "Open a saved run…".
#[component]
pub fn RunFiles() -> impl IntoView {
    let session = expect_context::<Session>();
    let save = move |_| {
        if session
            .page
            .with_untracked(|p| p.run.as_ref().is_some_and(|r| r.at_scale()))
        {
            return session.notify(
                "nothing_to_save",
                "A race this large cannot be saved: its outcomes stay on the server, which sent the page only its totals.",
            );
        }
        let Some(run) = session.page.with_untracked(|p| p.saved_run()) else {
            return session.notify(
                "nothing_to_save",
                "Nothing to save yet: a run can be saved once it has finished.",
            );
        };
        // The writer is in a chunk of its own (`lazy::saved_file_text`); the download is
        // started here, in the main wasm, once it has written the text.
        leptos::task::spawn_local(async move {
            let name = saved::file_name(&run);
            let saved_ok = lazy::saved_file_text(run)
                .await
                .is_some_and(|json| web::download(&name, "application/json", &json).is_ok());
            if !saved_ok {
                session.notify("save_failed", "The browser would not save this run.");
            }
        });
    };
    let picked = move |ev: ev::Event| {
        let input: HtmlInputElement = event_target(&ev);
        if let Some(file) = input.files().and_then(|f| f.get(0)) {
            load_file(session, &file);
        }
        // The same file picked twice is still a change.
        input.set_value("");
    };
    view! {
        <div class="run-files">
            <button
                class="link"
                data-testid="save-run"
                title="Download the run on screen as a file (JSON) to show it again later, even offline"
                on:click=save
            >
                "Save this run"
            </button>
            <label class="link file-pick" title="Or drop a saved run anywhere on the page">
                "Open a saved run…"
                <input
                    type="file"
                    accept="application/json,.json"
                    data-testid="open-run"
                    on:change=picked
                />
            </label>
        </div>
    }
}

/// [`RunFiles`] as the main wasm builds them, for recent runs, which come in a lazily loaded
/// chunk (`components::lazy`): "save this run" failed at its first click from a chunk
/// ("function signature mismatch"), so the buttons are built here and the chunk only places
/// them.
#[derive(Clone)]
pub struct FileButtons(ViewFn);

impl FileButtons {
    /// Offer the buttons to the panels below (the lab calls this once).
    pub fn provide() {
        provide_context(FileButtons(ViewFn::from(|| view! { <RunFiles/> })));
    }

    /// The buttons, where a panel wants them (none where nothing provided them).
    pub fn view() -> impl IntoView {
        use_context::<FileButtons>().map(|buttons| buttons.0.run())
    }
}

/// Let a saved run be dropped anywhere on the page. While one is dragged over it,
/// `<body data-drop="on">` shows a veil saying where it will land (style.css draws it).
pub fn use_drop_zone(session: Session) {
    let veil = |on: bool| web::set_body_attribute("data-drop", if on { "on" } else { "off" });
    // Without `preventDefault` on `dragover` the browser would open the file instead.
    let over = window_event_listener(ev::dragover, move |ev: DragEvent| {
        if ev
            .data_transfer()
            .is_some_and(|d| d.types().includes(&"Files".into(), 0))
        {
            ev.prevent_default();
            veil(true);
        }
    });
    // `dragleave` with no related target: the pointer left the window.
    let leave = window_event_listener(ev::dragleave, move |ev: DragEvent| {
        if ev.related_target().is_none() {
            veil(false);
        }
    });
    let drop = window_event_listener(ev::drop, move |ev: DragEvent| {
        veil(false);
        let file = ev
            .data_transfer()
            .and_then(|d| d.files())
            .and_then(|f| f.get(0));
        if let Some(file) = file {
            ev.prevent_default();
            load_file(session, &file);
        }
    });
    on_cleanup(move || {
        over.remove();
        leave.remove();
        drop.remove();
    });
}
