//! The checkout scenario's panels: the scenario switch, its knobs, its counters, the grid of
//! unit states, the books (reconciliation, live and final), and what happened in words.
//! Everything they say about a strategy comes from `hello`; every number from the server's
//! frames, read through `model::checkout`.

use leptos::prelude::*;
use oversold_protocol::Scenario;

use crate::model::checkout::books::Books;
use crate::session::Session;

pub mod books;
pub mod counters;
pub mod grid;
pub mod happened;
pub mod knobs;
pub mod scenario;

/// True when the run panels show a checkout: the run on screen is one or, before any run,
/// the switch says checkout. Step-through mode (a race) keeps the race's panels.
pub fn on_screen(session: Session) -> bool {
    session.page.with(|p| {
        p.step.is_none()
            && match &p.run {
                Some(r) => r.is_checkout(),
                None => session.knobs.with(|k| k.scenario == Scenario::Checkout),
            }
    })
}

/// The books on screen, in a Memo: a run's (live, then final), or the form's untouched stock
/// before any run. Several panels read them; the page changes with every outcomes frame, the
/// books only with a `reconciliation` frame or the summary.
pub fn books(session: Session) -> Memo<Books> {
    Memo::new(move |_| {
        session.page.with(|p| {
            p.run
                .as_ref()
                .and_then(Books::of_run)
                .unwrap_or_else(|| Books::untouched(session.knobs.with(|k| k.stock)))
        })
    })
}
