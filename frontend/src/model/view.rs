//! The page's two layouts (the normal page, and the stage view for projectors), and the
//! localStorage keys under which the page remembers its layout and its theme.

/// Where the view is remembered.
pub const VIEW_KEY: &str = "oversold.view";
/// Where the theme ([`super::theme::Theme`]) is remembered.
pub const THEME_KEY: &str = "oversold.theme";

/// The normal page, or one screen for a projector: the featured buttons, the counters, the
/// grid and the tape, in type big enough for the back of a room.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    /// Every panel, one under another.
    #[default]
    Normal,
    /// One screen, no scrolling.
    Stage,
}

impl View {
    /// The value of `<body data-view=…>` and of the remembered setting.
    pub fn id(self) -> &'static str {
        match self {
            View::Normal => "normal",
            View::Stage => "stage",
        }
    }

    /// Parse a remembered setting; anything unknown is the normal page.
    pub fn from_id(id: &str) -> View {
        match id {
            "stage" => View::Stage,
            _ => View::Normal,
        }
    }

    /// The other one.
    pub fn toggled(self) -> View {
        match self {
            View::Normal => View::Stage,
            View::Stage => View::Normal,
        }
    }
}

/// From this many CSS px wide a room's spectator screen is laid out as the stage view is (one
/// screen: the code and QR code, the counters, the grid, the tape); narrower, a phone, its
/// panels stack as on the normal page. A projector is 1024 px wide at the least (XGA).
pub const SPECTATOR_STAGE_MIN_PX: f64 = 1024.0;

/// The layout of a room's spectator screen on a window `window_width` CSS px wide. It follows
/// the window, and is never remembered (the lab in the same browser keeps its own).
pub fn spectator_view(window_width: f64) -> View {
    if window_width >= SPECTATOR_STAGE_MIN_PX {
        View::Stage
    } else {
        View::Normal
    }
}

/// The smallest label a canvas may show on a 1080-line projector, CSS px: readable from the
/// back of a room.
pub const STAGE_LABEL_PX: f64 = 16.0;

/// How much to enlarge a canvas whose smallest label is `smallest_px`, in `view`, on a window
/// `window_height` CSS px tall. The stage view scales with the screen: at 1080 lines and up the
/// smallest label reaches [`STAGE_LABEL_PX`]; below, proportionally less, never below 1 (a
/// 720-line projector has less room, and its pixels are bigger). The normal page is never
/// enlarged.
pub fn canvas_zoom(view: View, window_height: f64, smallest_px: f64) -> f64 {
    if view != View::Stage || smallest_px <= 0.0 || smallest_px >= STAGE_LABEL_PX {
        return 1.0;
    }
    let full = STAGE_LABEL_PX / smallest_px;
    (full * window_height / 1080.0).clamp(1.0, full)
}

/// How far to scroll the window (CSS px, down positive) to keep a group on screen while
/// stepping through: the element on top (the counter) whole, its top `margin` px below the
/// window's top (`top` is where it is now), and then as much of what follows it (the buyers,
/// the tape, the click's line: `bottoms`, their bottom edges) as the window's `height` allows.
/// The least scroll that does it; 0 when all of it is on screen already. The top wins: the
/// window never scrolls it away to show more below (a phone shows the counter and the buyers,
/// and the story under them as far as it fits).
pub fn group_scroll(top: f64, bottoms: &[f64], height: f64, margin: f64) -> f64 {
    if top < 0.0 {
        return top - margin;
    }
    let below = bottoms
        .iter()
        .map(|b| b - height + margin)
        .fold(0.0_f64, f64::max);
    below.min(top - margin).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stage_enlarges_its_canvases_to_sixteen_px_labels_at_1080_lines() {
        let z = canvas_zoom(View::Stage, 1080.0, 11.0);
        assert!((11.0 * z - 16.0).abs() < 1e-9, "{z}");
        assert_eq!(canvas_zoom(View::Stage, 2160.0, 11.0), 16.0 / 11.0);
        // Fewer lines: proportionally less (900: 1.21), never shrunk (720: 0.97 becomes 1).
        assert!(
            (canvas_zoom(View::Stage, 900.0, 11.0) - 16.0 / 11.0 * 900.0 / 1080.0).abs() < 1e-9
        );
        assert_eq!(canvas_zoom(View::Stage, 720.0, 11.0), 1.0);
        assert_eq!(canvas_zoom(View::Stage, 400.0, 11.0), 1.0);
        assert_eq!(canvas_zoom(View::Normal, 1080.0, 11.0), 1.0);
        assert_eq!(canvas_zoom(View::Stage, 1080.0, 18.0), 1.0);
        assert_eq!(canvas_zoom(View::Stage, 1080.0, 0.0), 1.0);
    }

    #[test]
    fn a_spectator_screen_is_a_stage_on_a_projector_and_a_stack_on_a_phone() {
        for width in [1024.0, 1280.0, 1440.0, 1920.0, 3840.0] {
            assert_eq!(spectator_view(width), View::Stage, "{width}");
        }
        for width in [0.0, 390.0, 844.0, 1023.0] {
            assert_eq!(spectator_view(width), View::Normal, "{width}");
        }
    }

    #[test]
    fn stepping_scrolls_the_least_that_keeps_the_counter_and_then_the_rest_on_screen() {
        // All on screen: no scroll.
        assert_eq!(group_scroll(100.0, &[500.0, 700.0], 720.0, 12.0), 0.0);
        // The tape's bottom is 80 px below the window: down by 92, the counter stays on screen.
        assert_eq!(group_scroll(300.0, &[500.0, 800.0], 720.0, 12.0), 92.0);
        // Too much below: the counter is brought to the top and no further.
        assert_eq!(group_scroll(300.0, &[2000.0], 720.0, 12.0), 288.0);
        // The counter is above the window: back up to it, whatever is below.
        assert_eq!(group_scroll(-50.0, &[900.0], 720.0, 12.0), -62.0);
        // Below the window altogether: up until the last of the group is on screen.
        assert_eq!(group_scroll(1000.0, &[1300.0], 720.0, 12.0), 592.0);
        // Nothing below it, the counter already in the top margin: no scroll.
        assert_eq!(group_scroll(5.0, &[], 720.0, 12.0), 0.0);
    }

    #[test]
    fn views_round_trip() {
        for v in [View::Normal, View::Stage] {
            assert_eq!(View::from_id(v.id()), v);
            assert_eq!(v.toggled().toggled(), v);
        }
        assert_eq!(View::from_id(""), View::Normal);
        assert_ne!(VIEW_KEY, THEME_KEY);
    }
}
