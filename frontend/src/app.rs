//! The page: creates the session and the socket, provides them as context, lays out the panels.
//! A room's address with `?as=spectator` (a projector's screen; the server serves this page for
//! it) mounts the room's spectator screen instead (`components/room/spectator.rs`), which
//! reuses these panels with a session and a socket of its own.
//!
//! One tree serves both layouts. The stage view (`<body data-view="stage">`, static/style.css)
//! re-flows the same panels into one screen and hides the rest, so nothing is drawn twice and
//! a run in flight keeps its state when the speaker switches. A checkout on screen swaps the
//! race's counters and grid for its own, adds its books, and hides the tape (a checkout has
//! none): `<main class="checkout">` tells the styles.

use leptos::prelude::*;
use oversold_protocol::room::RoomRole;

use crate::components::checkout::{self, scenario::ScenarioSwitch};
use crate::components::lazy;
use crate::components::room::presenter::RoomPanel;
use crate::components::{
    controls::Controls,
    counters::Counters,
    files::{FileButtons, use_drop_zone},
    header::Header,
    inventory::Inventory,
    notices::Notices,
    result::ResultLine,
    run_buttons::RunButtons,
    scoreboard::Scoreboard,
    shortcuts::Shortcuts,
    step::StepThrough,
};
use crate::session::Session;
use crate::socket::Socket;
use crate::sync;

/// The whole page: the lab, or a room's spectator screen when the address asks for one.
#[component]
pub fn App() -> impl IntoView {
    match crate::components::room::joined_by_url() {
        Some((_, RoomRole::Spectator)) => lazy::when_loaded(lazy::spectator).into_any(),
        _ => view! { <Lab/> }.into_any(),
    }
}

/// The lab. Panels find [`Session`] and [`Socket`] in context rather than in props, because
/// nearly all of them need both and threading them through would add noise, not clarity.
#[component]
fn Lab() -> impl IntoView {
    let session = Session::new();
    provide_context(session);
    // Before the socket: the address must be read before `hello` can arrive to check it.
    sync::start(session);
    provide_context(Socket::connect(session));
    use_drop_zone(session);
    FileButtons::provide();
    keep_what_started_on_screen(session);
    let step_open = move || session.page.with(|p| p.step.is_some());
    let checkout = move || checkout::on_screen(session);
    let cart = move || crate::components::carts::on_screen(session);
    // A "Redis fails" run's facts: their panel is a chunk, fetched for such a run only.
    let failed = move || {
        session.with_run(|r| {
            r.and_then(|r| r.summary())
                .is_some_and(crate::model::failures::has_facts)
        })
    };
    // What happened in a checkout stays on the page after the switch leaves the scenario.
    let checkout_seen = lazy::ever(checkout);
    // The last thing run was a comparison: the stage view shows its scoreboard.
    let compared = move || {
        session
            .page
            .with(|p| p.history.first().is_some_and(|e| e.compare.is_some()))
    };

    view! {
        <Header/>
        <Notices/>
        <Shortcuts/>
        <main class="layout" class:step-open=step_open class:checkout=checkout class:cart=cart class:compared=compared>
            <RoomPanel/>
            <div class="row row-stage">
                <section class="stage panel" aria-label="Run and results">
                    <ScenarioSwitch/>
                    <crate::components::presets::Presets/>
                    <RunButtons/>
                    <Show when=checkout fallback=move || view! {
                        <Show when=cart fallback=move || view! {
                            <Counters/>
                            <Show when=failed>{lazy::when_loaded(lazy::failure_facts)}</Show>
                            <Inventory/>
                        }>
                            {lazy::when_loaded(lazy::cart_panels)}
                        </Show>
                    }>
                        {lazy::when_loaded(lazy::checkout_panels)}
                    </Show>
                    <ResultLine/>
                </section>
                <Controls/>
                {lazy::when_loaded(lazy::history)}
            </div>
            <Show when=move || checkout_seen.get()>{lazy::when_loaded(lazy::happened)}</Show>
            <StepThrough/>
            <Scoreboard/>
            {lazy::when_loaded(lazy::tape)}
            {lazy::when_loaded(lazy::timeline)}
            {lazy::when_loaded(lazy::audit)}
            {lazy::when_loaded(lazy::why)}
        </main>
        <footer class="footer">
            "oversold · real buyers, a real Redis, one counter · everything on this page comes from the server you are looking at"
        </footer>
    }
}

/// Whatever a click (or a key) starts comes into view: a live run's counters and grid. The
/// buttons sit high on the page and the counters below the fold at 1280×720, so without this a
/// click seemed to do nothing. The stage view is one screen already. (Step-through mode keeps
/// its own group on screen: `components/step.rs`.)
fn keep_what_started_on_screen(session: Session) {
    let live = Memo::new(move |_| {
        session.page.with(|p| {
            p.run
                .as_ref()
                .filter(|r| r.is_running())
                .map(|r| r.run_id.clone())
        })
    });
    Effect::new(move |last: Option<Option<String>>| {
        let now = live.get();
        let normal = session.view.get_untracked() != crate::model::view::View::Stage;
        if let Some(last_run) = last
            && normal
            && now.is_some()
            && now != last_run
        {
            crate::web::bring_into_view(".stage .counters, .stage .carts");
        }
        now
    });
}
