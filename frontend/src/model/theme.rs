//! The page's two themes, and the colours a canvas paints with in each.
//!
//! CSS carries the colours of everything else (`static/style.css`, `body[data-theme=light]`);
//! a canvas cannot read CSS variables cheaply once per shape, so the canvas palettes live here,
//! next to each other, where a test can check that they differ where they must.

/// Dark (the default, for screens) or light (high contrast, for projectors that wash out
/// dark pages).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Theme {
    /// Light text on a near-black ground.
    #[default]
    Dark,
    /// Dark text on white, saturated colours.
    Light,
}

impl Theme {
    /// The value of `<body data-theme=…>` and of the remembered setting.
    pub fn id(self) -> &'static str {
        match self {
            Theme::Dark => "dark",
            Theme::Light => "light",
        }
    }

    /// Parse a remembered setting; anything unknown is the default.
    pub fn from_id(id: &str) -> Theme {
        match id {
            "light" => Theme::Light,
            _ => Theme::Dark,
        }
    }

    /// The other one.
    pub fn toggled(self) -> Theme {
        match self {
            Theme::Dark => Theme::Light,
            Theme::Light => Theme::Dark,
        }
    }

    /// The canvas colours for this theme.
    pub fn palette(self) -> &'static Palette {
        match self {
            Theme::Dark => &DARK,
            Theme::Light => &LIGHT,
        }
    }
}

/// Canvas colours, as CSS colour strings.
#[derive(Debug, PartialEq, Eq)]
pub struct Palette {
    /// The plot's ground (also what a fade fades towards).
    pub ground: &'static str,
    /// The ground as `r, g, b`, for fades.
    pub ground_rgb: &'static str,
    /// A tint over what came after the stock ran out.
    pub after_out: &'static str,
    /// Grid lines.
    pub grid: &'static str,
    /// Rules between groups.
    pub rule: &'static str,
    /// Sold units that existed.
    pub reserved: &'static str,
    /// Units that did not exist.
    pub oversold: &'static str,
    /// Refused for lack of stock.
    pub sold_out: &'static str,
    /// Failed, took nothing.
    pub error: &'static str,
    /// Sent, never answered.
    pub unknown: &'static str,
    /// Stopped waiting its turn.
    pub gave_up: &'static str,
    /// A read coming back.
    pub read: &'static str,
    /// Markers and strong labels.
    pub marker: &'static str,
    /// Quiet labels.
    pub muted: &'static str,
}

/// The dark theme's canvas (the colours of `static/style.css`'s `:root`).
pub const DARK: Palette = Palette {
    ground: "#0a0c11",
    ground_rgb: "10, 12, 17",
    after_out: "rgba(255, 95, 95, 0.045)",
    grid: "rgba(255, 255, 255, 0.07)",
    rule: "rgba(255, 255, 255, 0.16)",
    reserved: "#3ddc97",
    oversold: "#ff5f5f",
    sold_out: "#4c5568",
    error: "#ffb84d",
    unknown: "#c792ff",
    gave_up: "#b59a6a",
    read: "#7ab0ff",
    marker: "#eef1f7",
    muted: "#9aa5ba",
};

/// The light theme's canvas: white ground, darker and more saturated marks, so a projector
/// that washes colours out still shows red as red. The hues are static/style.css's
/// `body[data-theme=light]` ones, so the legend's swatches match the bars.
pub const LIGHT: Palette = Palette {
    ground: "#ffffff",
    ground_rgb: "255, 255, 255",
    after_out: "rgba(194, 16, 26, 0.06)",
    grid: "rgba(0, 0, 0, 0.10)",
    rule: "rgba(0, 0, 0, 0.25)",
    reserved: "#06703f",
    oversold: "#c2101a",
    sold_out: "#8a93a6",
    error: "#8a4d00",
    unknown: "#6222b8",
    gave_up: "#7a6030",
    read: "#1b54c4",
    marker: "#0b0d12",
    muted: "#3d4657",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn themes_round_trip_and_differ() {
        for t in [Theme::Dark, Theme::Light] {
            assert_eq!(Theme::from_id(t.id()), t);
            assert_eq!(t.toggled().toggled(), t);
        }
        assert_eq!(Theme::from_id("sepia"), Theme::Dark);
        assert_ne!(DARK.ground, LIGHT.ground);
        assert_ne!(DARK.marker, LIGHT.marker);
    }
}
