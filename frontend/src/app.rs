//! The page: creates the session and the socket, provides them as context, lays out the panels.

use leptos::prelude::*;

use crate::components::{
    audit::AuditTrail, controls::Controls, counters::Counters, explainer::Explainer,
    header::Header, history::History, inventory::Inventory, notices::Notices, result::ResultLine,
    run_buttons::RunButtons, scoreboard::Scoreboard, script::ScriptSource, step::StepThrough,
    tape::Tape, timeline::Timeline,
};
use crate::session::Session;
use crate::socket::Socket;

/// The whole page. Panels find [`Session`] and [`Socket`] in context rather than in props,
/// because nearly all of them need both and threading them through would add noise, not clarity.
#[component]
pub fn App() -> impl IntoView {
    let session = Session::new();
    provide_context(session);
    provide_context(Socket::connect(session));

    view! {
        <Header/>
        <Notices/>
        <main class="layout">
            <div class="row row-stage">
                <section class="stage panel" aria-label="Run and results">
                    <RunButtons/>
                    <Counters/>
                    <Inventory/>
                    <ResultLine/>
                </section>
                <Controls/>
                <History/>
            </div>
            <StepThrough/>
            <Scoreboard/>
            <Tape/>
            <Timeline/>
            <AuditTrail/>
            <div class="row row-why">
                <Explainer/>
                <ScriptSource/>
            </div>
        </main>
        <footer class="footer">
            "oversold · real buyers, a real Redis, one counter · everything on this page comes from the server you are looking at"
        </footer>
    }
}
