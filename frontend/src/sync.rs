//! Keeps the outside world in step with the session: `<body data-theme>` and `data-view`,
//! what localStorage remembers, and the address bar. Effects, because each one syncs a signal
//! with something Leptos does not own.

use leptos::prelude::*;

use crate::model::theme::Theme;
use crate::model::url;
use crate::model::view::{THEME_KEY, VIEW_KEY, View};
use crate::session::Session;
use crate::web;

/// Read what the browser remembers and what the address asks for, then keep both in step.
pub fn start(session: Session) {
    looks(session);
    // Checked once `hello` brings the limits and strategies (`Session::apply`).
    let query = web::query();
    if !query.is_empty() {
        session.link_query.set_value(Some(query));
    }
    address(session);
}

/// The theme and the view (normal or stage), remembered and kept on `<body>`; every page has
/// them.
pub fn looks(session: Session) {
    if let Some(id) = web::recall(THEME_KEY) {
        session.theme.set(Theme::from_id(&id));
    }
    if let Some(id) = web::recall(VIEW_KEY) {
        session.view.set(View::from_id(&id));
    }
    Effect::new(move |_| {
        for (attribute, key, id) in [
            ("data-theme", THEME_KEY, session.theme.get().id()),
            ("data-view", VIEW_KEY, session.view.get().id()),
        ] {
            web::set_body_attribute(attribute, id);
            web::remember(key, id);
        }
    });
}

/// The address follows the run on screen.
fn address(session: Session) {
    // It follows follows the run on screen (live, reopened or loaded) from the moment it
    // starts, so copying it shares that crowd. Before any run the address stays as it was
    // opened: it may be the link being restored. Outcome frames wake this too (they change the
    // page, not the config), so the address is only written when its text changes.
    Effect::new(move |_| {
        let Some((run_id, query)) =
            session.with_run(|r| r.map(|r| (r.run_id.clone(), url::encode(&r.config))))
        else {
            return;
        };
        // A room's sale is no link to share (its crowd is the room's phones, and a join URL
        // must stay the room's): the address is left alone.
        if session
            .room
            .with(|r| r.sale.as_ref().is_some_and(|s| s.sale_id == run_id))
        {
            return;
        }
        if web::query().strip_prefix('?') != Some(query.as_str()) {
            web::set_query(&query);
        }
    });
}
