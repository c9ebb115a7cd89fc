//! The browser beyond the socket: the address bar, localStorage, `<body>` attributes, full
//! screen, and files in and out. Thin wrappers that fail quietly: a browser that refuses
//! storage (private mode) or full screen (a locked-down kiosk) still shows the page.

use std::rc::Rc;
use std::time::Duration;

use leptos::prelude::{document, request_animation_frame, set_timeout, window};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Blob, BlobPropertyBag, File, FileReader, HtmlAnchorElement, Url, js_sys};

/// Run `f` at the next animation frame. One callback type for every caller: Leptos wraps each
/// callback type in a closure that wasm-bindgen describes once per type, and the lab's lazily
/// loaded chunks (`components::lazy`) must not hold the only description of one, so every
/// part of the lab asks through here and the description stays in the main module.
pub fn next_frame(f: Box<dyn FnOnce()>) {
    request_animation_frame(f);
}

/// Run `f` once after `delay`; one callback type for every caller, as [`next_frame`].
pub fn after(delay: Duration, f: Box<dyn FnOnce()>) {
    set_timeout(f, delay);
}

/// The address's query string, with its `?` (empty when there is none).
pub fn query() -> String {
    window().location().search().unwrap_or_default()
}

/// Replace the address's query with `query` (none when empty), without a reload or a new
/// history entry: the back button still leaves the page.
pub fn set_query(query: &str) {
    let Ok(history) = window().history() else {
        return;
    };
    let path = window()
        .location()
        .pathname()
        .unwrap_or_else(|_| "/".into());
    let url = if query.is_empty() {
        path
    } else {
        format!("{path}?{query}")
    };
    let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&url));
}

fn storage() -> Option<web_sys::Storage> {
    window().local_storage().ok().flatten()
}

/// A value this browser remembers for the page, if any.
pub fn recall(key: &str) -> Option<String> {
    storage()?.get_item(key).ok().flatten()
}

/// Remember `value` under `key` across visits.
pub fn remember(key: &str, value: &str) {
    if let Some(s) = storage() {
        let _ = s.set_item(key, value);
    }
}

/// Set an attribute on `<body>` (the stylesheet keys its themes and layouts on them).
pub fn set_body_attribute(name: &str, value: &str) {
    if let Some(body) = document().body() {
        let _ = body.set_attribute(name, value);
    }
}

/// Bring the first element matching `selector` to the top of the window when any of it is
/// outside it: what a click started must be on screen. Nothing on the stage view, which is one
/// screen already.
pub fn bring_into_view(selector: &str) {
    let doc = document();
    let Ok(Some(el)) = doc.query_selector(selector) else {
        return;
    };
    let height = window()
        .inner_height()
        .ok()
        .and_then(|h| h.as_f64())
        .unwrap_or(0.0);
    let rect = el.get_bounding_client_rect();
    if rect.top() < 0.0 || rect.top() > height * 0.5 {
        el.scroll_into_view_with_bool(true);
    }
}

/// While stepping through: scroll the window the least that keeps the first element matching
/// `top` whole on screen and, under it, as much as fits of the first element matching each of
/// `below` (`model::view::group_scroll`). Nothing on the stage view, which is one screen
/// already.
pub fn keep_group_in_view(top: &str, below: &[&str]) {
    let doc = document();
    let stage = doc
        .body()
        .and_then(|b| b.get_attribute("data-view"))
        .is_some_and(|v| v == "stage");
    let Ok(Some(first)) = doc.query_selector(top) else {
        return;
    };
    if stage {
        return;
    }
    let win = window();
    let height = win
        .inner_height()
        .ok()
        .and_then(|h| h.as_f64())
        .unwrap_or(0.0);
    let bottoms: Vec<f64> = below
        .iter()
        .filter_map(|s| doc.query_selector(s).ok().flatten())
        .map(|el| el.get_bounding_client_rect())
        .filter(|r| r.height() > 0.0)
        .map(|r| r.bottom())
        .collect();
    let top = first.get_bounding_client_rect().top();
    let by = crate::model::view::group_scroll(top, &bottoms, height, 12.0);
    if by != 0.0 {
        win.scroll_by_with_x_and_y(0.0, by);
    }
}

/// Full screen on (the whole page) or off.
pub fn toggle_fullscreen() {
    let doc = document();
    if doc.fullscreen_element().is_some() {
        doc.exit_fullscreen();
    } else if let Some(root) = doc.document_element() {
        let _ = root.request_fullscreen();
    }
}

/// Offer `text` as a download named `file_name`, from memory (a Blob): no server involved.
pub fn download(file_name: &str, mime: &str, text: &str) -> Result<(), JsValue> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let options = BlobPropertyBag::new();
    options.set_type(mime);
    let blob = Blob::new_with_str_sequence_and_options(&parts, &options)?;
    let url = Url::create_object_url_with_blob(&blob)?;
    let a: HtmlAnchorElement = document().create_element("a")?.unchecked_into();
    a.set_href(&url);
    a.set_download(file_name);
    a.click();
    // Revoking at once can cancel the download in some browsers; a minute is plenty.
    after(
        Duration::from_secs(60),
        Box::new(move || {
            let _ = Url::revoke_object_url(&url);
        }),
    );
    Ok(())
}

/// Read `file` as text, then call `done` once with its text or a sentence saying why not.
/// Files past `max_bytes` are refused before reading.
pub fn read_text(file: &File, max_bytes: usize, done: impl Fn(Result<String, String>) + 'static) {
    if file.size() > max_bytes as f64 {
        done(Err(format!(
            "This file is over {} MB; a saved run is smaller.",
            max_bytes / (1024 * 1024)
        )));
        return;
    }
    let Ok(reader) = FileReader::new() else {
        return done(Err("This browser cannot read files.".into()));
    };
    let done = Rc::new(done);
    let on_end = {
        let (reader, done) = (reader.clone(), done.clone());
        // `loadend` fires exactly once, after success or failure, so the closure frees itself.
        Closure::once_into_js(
            move || match reader.result().ok().and_then(|v| v.as_string()) {
                Some(text) => done(Ok(text)),
                None => done(Err("The browser could not read this file.".into())),
            },
        )
    };
    reader.set_onloadend(Some(on_end.unchecked_ref()));
    if reader.read_as_text(file).is_err() {
        reader.set_onloadend(None);
        done(Err("The browser could not read this file.".into()));
    }
}
