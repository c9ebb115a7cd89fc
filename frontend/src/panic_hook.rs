//! A panic shows itself on the page: a banner saying what broke and to reload, instead of a page
//! that silently stops answering with the reason only in the console.
//!
//! The release build aborts on panic (smaller wasm), so nothing runs after a panic but this hook:
//! it must not panic itself, and it writes to the DOM directly, since Leptos may be mid-update.

use std::any::Any;
use std::panic::{self, PanicHookInfo};

/// The banner's id: a second panic rewrites the first banner instead of stacking another.
const BANNER_ID: &str = "panic-banner";

/// Show every panic from now on. Call once, before mounting, so a panic while mounting shows too.
pub fn install() {
    panic::set_hook(Box::new(|info: &PanicHookInfo<'_>| {
        let message = payload_text(info.payload());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}:{}", l.file(), l.line(), l.column()))
            .unwrap_or_default();
        // The console keeps where it happened, for whoever opens the developer tools.
        web_sys::console::error_1(&format!("panicked{at}: {message}").into());
        show(&banner_text(&message));
    }));
}

/// What the visitor reads.
pub fn banner_text(message: &str) -> String {
    let message = message.trim().trim_end_matches('.');
    format!("The page hit a bug: {message}. Reload to start over.")
}

/// The text a panic carried: `panic!("…")` carries a `&str` or a `String`; anything else is
/// unusual enough to say so.
pub fn payload_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Put `text` in the banner at the top of the page, creating it the first time.
fn show(text: &str) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let banner = match document.get_element_by_id(BANNER_ID) {
        Some(banner) => banner,
        None => {
            let (Ok(banner), Some(body)) = (document.create_element("div"), document.body()) else {
                return;
            };
            banner.set_id(BANNER_ID);
            banner.set_class_name("panic-banner");
            let _ = banner.set_attribute("role", "alert");
            let _ = banner.set_attribute("data-testid", "panic-banner");
            if body.prepend_with_node_1(&banner).is_err() {
                return;
            }
            banner
        }
    };
    banner.set_text_content(Some(text));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banner_says_what_broke_and_what_to_do() {
        assert_eq!(
            banner_text("index out of bounds: the len is 3 but the index is 7"),
            "The page hit a bug: index out of bounds: the len is 3 but the index is 7. Reload to start over."
        );
        // No doubled full stop when the message brings its own.
        assert_eq!(
            banner_text("the socket vanished."),
            "The page hit a bug: the socket vanished. Reload to start over."
        );
    }

    #[test]
    fn reads_both_kinds_of_panic_payload() {
        let literal: Box<dyn Any + Send> = Box::new("boom");
        let formatted: Box<dyn Any + Send> = Box::new(format!("boom {}", 7));
        let other: Box<dyn Any + Send> = Box::new(42_u8);
        assert_eq!(payload_text(&*literal), "boom");
        assert_eq!(payload_text(&*formatted), "boom 7");
        assert_eq!(payload_text(&*other), "a panic without a message");
    }
}
