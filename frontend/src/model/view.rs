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

#[cfg(test)]
mod tests {
    use super::*;

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
