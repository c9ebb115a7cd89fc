//! The lab's parts that most visitors never open, each in a wasm chunk of its own that the
//! page fetches the first time the part is shown, and the panels under the controls (the tape,
//! the timeline, the audit, the words and the Lua) in one chunk fetched as soon as the page has
//! mounted, so the controls work before those have arrived. With the `split` feature (the lab's build:
//! frontend/index.html) each part is a Leptos `#[lazy]` function, and scripts/split-lab.sh cuts
//! the linked wasm at them (`wasm_split_cli`). Without it (tests, the workshop and phone pages)
//! each is a plain `async fn`: those pages never call them, and a `#[lazy]` function would be
//! kept alive there as an export. Until a chunk has arrived its part shows nothing; once loaded
//! it stays loaded.
//!
//! Besides views, a few tasks that run only when a visitor asks for them (`task!`: saving or
//! opening a run's file, reading a link) return their value from a chunk. Every frame is still
//! decoded and applied by the main wasm (`session`), so a part opened late shows what already
//! happened. A part must not be the only
//! user of a conversion wasm-bindgen describes per type (a number set as a DOM property, a
//! closure type): wasm-bindgen reads those descriptions from the main module, and fails when
//! one went to a chunk. The step panel's keys stay in the main wasm for that reason, the
//! room's number fields set strings, callbacks go through `web::next_frame` and `web::after`,
//! and the file buttons of recent runs are built by the main wasm (`files::FileButtons`:
//! "save this run" failed with "function signature mismatch" from a chunk).

use leptos::prelude::*;

/// The view `load` resolves to, once its chunk has arrived; nothing before.
pub fn when_loaded<F>(load: impl Fn() -> F + Send + Sync + 'static) -> impl IntoView
where
    F: Future<Output = AnyView> + Send + 'static,
{
    view! { <Suspense fallback=|| ()>{move || Suspend::new(load())}</Suspense> }
}

/// `pub async fn $name($arg: $ty) -> $out`, a split point of the lab's wasm with `split`, in
/// the chunk `$chunk` (the argument is optional): work done only when it is first asked for.
macro_rules! task {
    ($(#[$doc:meta])* $name:ident in $chunk:ident ($($arg:ident: $ty:ty)?) -> $out:ty => $body:expr) => {
        $(#[$doc])*
        #[cfg(feature = "split")]
        #[leptos::lazy($chunk)]
        pub fn $name($($arg: $ty)?) -> $out {
            $body
        }

        $(#[$doc])*
        #[cfg(not(feature = "split"))]
        pub async fn $name($($arg: $ty)?) -> $out {
            $body
        }
    };
}

/// `pub async fn $name() -> AnyView`: a [`task!`] that draws a part, in a chunk named after
/// the part, or in `$chunk` with the parts that name it too.
macro_rules! part {
    ($(#[$doc:meta])* $name:ident => $body:expr) => {
        part! { $(#[$doc])* $name in $name => $body }
    };
    // Parts that are always shown together share one chunk (`$chunk`): one fetch, and no
    // code of theirs split into small chunks that several of them share.
    ($(#[$doc:meta])* $name:ident in $chunk:ident => $body:expr) => {
        task! { $(#[$doc])* $name in $chunk () -> AnyView => $body.into_any() }
    };
}

part! {
    /// A checkout's counters, grid and books.
    checkout_panels => {
        use crate::components::checkout::{
            books::Books, counters::CheckoutCounters, grid::CheckoutGrid,
        };
        view! {
            <CheckoutCounters/>
            <CheckoutGrid/>
            <Books/>
        }
    }
}

part! {
    /// A checkout's knobs.
    checkout_knobs => view! { <crate::components::checkout::knobs::CheckoutKnobs/> }
}

part! {
    /// What happened in a checkout, in words.
    happened => view! { <crate::components::checkout::happened::Happened/> }
}

part! {
    /// What a "Redis fails" run's failure did, under the counters.
    failure_facts => view! { <crate::components::failures::FailureFacts/> }
}

part! {
    /// The keyboard shortcuts' list (`?`).
    shortcuts_help => crate::components::shortcuts::help()
}

part! {
    /// A cart or warehouse run's shelves.
    cart_panels => view! { <crate::components::carts::CartShelves/> }
}

part! {
    /// The open step-through panel.
    step_open => crate::components::step::open()
}

part! {
    /// A comparison's scoreboard.
    scoreboard => crate::components::scoreboard::board()
}

part! {
    /// A presenter's room: its code, the sale form, the chaos buttons.
    room_presenting => crate::components::room::presenter::presenting()
}

part! {
    /// The Redis tape: empty until a run, and drawn on a canvas.
    tape in after_first_paint => view! { <crate::components::tape::Tape/> }
}

part! {
    /// The timeline of every buyer's round trips.
    timeline in after_first_paint => view! { <crate::components::timeline::Timeline/> }
}

part! {
    /// The audit trail, one row per buyer.
    audit in after_first_paint => view! { <crate::components::audit::AuditTrail/> }
}

part! {
    /// Recent runs (their file buttons come from the main wasm: `files::FileButtons`).
    history in after_first_paint => view! { <crate::components::history::History/> }
}

part! {
    /// Why a strategy is safe or not: its words and its Lua.
    why in after_first_paint => view! {
        <div class="row row-why">
            <crate::components::explainer::Explainer/>
            <crate::components::script::ScriptSource/>
        </div>
    }
}

part! {
    /// A room's projector screen (`/r/CODE?as=spectator`): only that address mounts it, so the
    /// lab's own visitors never fetch it.
    spectator => {
        let code = crate::components::room::joined_by_url().map(|(code, _)| code);
        view! { <crate::components::room::spectator::SpectatorApp code=code.unwrap_or_default()/> }
    }
}

task! {
    /// A run as a saved file's text ("save this run"): the writer of a whole run (every
    /// outcome, the tally, the knobs, the strategy's words) runs only when a run is saved.
    saved_file_text in saved_files (run: oversold_protocol::SavedRun) -> Option<String> =>
        serde_json::to_string(&run).ok()
}

task! {
    /// A dropped or picked file's text, checked as a saved run (`model::saved::parse`).
    read_saved_file in saved_files (text: String) -> Result<oversold_protocol::SavedRun, String> =>
        crate::model::saved::parse(&text)
}

task! {
    /// A frame of one of `LATER_TYPES` (step-through's, a reconciliation's, a million-buyer
    /// run's progress, a room's), read by code fetched when the first one arrives
    /// (`Socket::receive` queues the frames behind it meanwhile).
    read_later in later_frames (text: String) -> Result<oversold_protocol::ServerMessage, String> =>
        oversold_protocol::ServerMessage::from_json_later(&text).map_err(|err| err.to_string())
}

task! {
    /// A link's knobs read against the server's greeting (`model::url::restore`), the form's
    /// values already fitted to this server: run once, by a page opened from a link.
    restore_link in link_reader (link: (String, Box<oversold_protocol::Hello>)) -> Option<crate::model::url::Restored> => {
        let (query, hello) = link;
        // Every scenario's strategies: a link may replay a run of any of them.
        let known = crate::model::strategies::every(&hello);
        crate::model::url::restore(&query, &hello.limits, &known).map(|mut restored| {
            // The form offers no outage this server would refuse; the link's replay still
            // asks for it, and the server's answer says why not.
            restored.knobs = restored.knobs.for_server(&hello);
            restored
        })
    }
}

/// True from the first time `now` is true on: a part that has been shown once stays (its
/// chunk is loaded, and it may keep showing what it showed, as the checkout's words do).
pub fn ever(now: impl Fn() -> bool + Send + Sync + 'static) -> Memo<bool> {
    Memo::new(move |was: Option<&bool>| was.copied().unwrap_or(false) || now())
}
