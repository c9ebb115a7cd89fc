//! Draw a canvas at most once per animation frame, however many batches ask before it.

use leptos::prelude::*;

/// A canvas's frame bookkeeping: whether a frame is already asked for, and whether that
/// frame must rebuild the picture (new data) or only repaint it (a resize).
#[derive(Clone, Copy)]
pub struct FrameRequests {
    /// The next frame must rebuild, not only repaint.
    stale: StoredValue<bool>,
    /// A frame is already asked for.
    queued: StoredValue<bool>,
}

impl Default for FrameRequests {
    /// Nothing drawn yet: the first frame rebuilds.
    fn default() -> Self {
        Self {
            stale: StoredValue::new(true),
            queued: StoredValue::new(false),
        }
    }
}

impl FrameRequests {
    /// Run `frame` at the next animation frame, unless one is asked for already; `rebuild`
    /// makes that frame rebuild too.
    pub fn request(self, rebuild: bool, frame: impl FnOnce() + 'static) {
        if rebuild {
            self.stale.set_value(true);
        }
        if !self.queued.get_value() {
            self.queued.set_value(true);
            crate::web::next_frame(Box::new(frame));
        }
    }

    /// First thing in a frame: the request is served, and the next change asks again.
    pub fn served(self) {
        self.queued.set_value(false);
    }

    /// Whether this frame must rebuild; the picture counts as rebuilt from here on.
    pub fn take_stale(self) -> bool {
        let stale = self.stale.get_value();
        if stale {
            self.stale.set_value(false);
        }
        stale
    }
}
