//! Where things go on the canvas, in CSS px: the plot's edges, the row pitch, bar thickness and
//! how many tick intervals fit the width.

use crate::model::axis::Axis;

/// Where things go on the canvas, in CSS px.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry {
    /// Canvas width.
    pub width: f64,
    /// Canvas height.
    pub height: f64,
    /// Left edge of the plot (room for app-server labels when grouped).
    pub left: f64,
    /// Right edge of the plot.
    pub right: f64,
    /// Top edge of the plot (room for the "stock ran out" label above).
    pub top: f64,
    /// Distance between rows (below 1 px for big runs: rows then share pixels).
    pub pitch: f64,
    /// Bar thickness, before rounding to at least one device pixel.
    pub thickness: f64,
    /// Tick intervals that fit the width.
    pub max_ticks: u32,
}

/// Space above the plot for the marker's label.
const TOP: f64 = 24.0;
/// Space below the plot for the tick labels.
const BOTTOM: f64 = 24.0;
/// Left gutter for app-server labels when grouped.
const GROUP_GUTTER: f64 = 50.0;
/// Gutters otherwise: just enough that the first and last tick labels stay on the canvas.
const EDGE: f64 = 10.0;
/// The tallest a row gets.
const MAX_PITCH: f64 = 14.0;

impl Geometry {
    /// Lay out a canvas `width` CSS px wide for `rows` buyers.
    pub fn new(width: f64, rows: u32, grouped: bool) -> Self {
        let width = width.max(160.0);
        let narrow = width < 600.0;
        let max_plot = if narrow { 240.0 } else { 320.0 };
        let rows_f = f64::from(rows.max(1));
        let plot = (rows_f * MAX_PITCH).min(max_plot);
        let pitch = plot / rows_f;
        let left = if grouped { GROUP_GUTTER } else { EDGE + 6.0 };
        let right = width - EDGE - 12.0;
        Self {
            width,
            height: TOP + plot + BOTTOM,
            left,
            right,
            top: TOP,
            pitch,
            thickness: (pitch * 0.7).min(9.0),
            max_ticks: ((right - left) / if narrow { 70.0 } else { 95.0 })
                .floor()
                .max(2.0) as u32,
        }
    }

    /// Bottom edge of the plot.
    pub fn bottom(&self) -> f64 {
        self.height - BOTTOM
    }

    /// x for a time on `axis`.
    pub fn x(&self, axis: &Axis, us: u64) -> f64 {
        self.left + axis.frac(us) * (self.right - self.left)
    }

    /// The vertical centre of `row`.
    pub fn y(&self, row: u32) -> f64 {
        self.top + (f64::from(row) + 0.5) * self.pitch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_fits_a_phone_and_ten_thousand_rows() {
        let phone = Geometry::new(340.0, 50, false);
        assert!(phone.right <= 340.0 && phone.left >= 0.0);
        assert!(phone.height <= 240.0 + 48.0);
        assert!(phone.max_ticks >= 2);
        let wide = Geometry::new(1_300.0, 10_000, true);
        assert_eq!(wide.height, 24.0 + 320.0 + 24.0);
        assert!(wide.pitch < 0.05, "rows share pixels: {}", wide.pitch);
        assert_eq!(wide.left, 50.0);
        // Few rows: each stays a readable height, not stretched to fill.
        let few = Geometry::new(1_300.0, 3, false);
        assert_eq!(few.pitch, 14.0);
        assert_eq!(few.bottom() - few.top, few.pitch * 3.0);
        let axis = Axis::covering(1_000, 5);
        assert_eq!(wide.x(&axis, 0), wide.left);
        assert_eq!(wide.x(&axis, 1_000), wide.right);
        assert_eq!(wide.y(0), 24.0 + wide.pitch / 2.0);
    }
}
