//! The picture as data: every rectangle, arrowhead and label the canvas draws, in drawing order,
//! in CSS px. The component only paints a [`Scene`]; every drawing decision (which bars end in
//! an arrow, where the edge fades, whether read ticks get a dark halo, which side of the run-out
//! line its label sits on) is made here, where a host test can pin it.

use super::geometry::Geometry;
use super::rows::{RowOrder, Timeline};
use super::time_axis::{tick_label, time_axis};
use crate::model::axis::Axis;
use crate::model::canvas::{self, rect};
pub use crate::model::canvas::{Anchor, Arrow, Baseline, Rect};
use crate::model::run::Mark;
use crate::model::text::micros;

/// Bars in drawing order: the rarer, more important colours last, so they stay on top when
/// thousands of rows share a pixel.
pub const BAR_ORDER: [Mark; 6] = [
    Mark::SoldOut,
    Mark::GaveUp,
    Mark::Error,
    Mark::Unknown,
    Mark::Reserved,
    Mark::Oversold,
];

/// Width of the fade at a zoomed right edge, CSS px.
const FADE: f64 = 16.0;
/// Strips the fade is made of, each a tenth more opaque than the last.
const FADE_STRIPS: u8 = 8;
/// Bars at least this thick end in a triangle past a zoomed edge; thinner ones in a sliver.
const ARROW_MIN_THICKNESS: f64 = 4.0;
/// Rows at least this far apart get a dark edge around each read tick, so it shows on red and
/// green alike. Denser runs skip it: it would blacken the picture.
const HALO_MIN_PITCH: f64 = 2.0;
/// An app-server group gets its label only when it is at least this tall.
const GROUP_LABEL_MIN: f64 = 12.0;
/// Left of this fraction of the width, the run-out label goes to the right of its line.
const LABEL_RIGHT_OF_LINE_BELOW: f64 = 0.55;

/// What a shape is filled with. The painter maps each to a colour of the page's palette.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paint {
    /// The plot's background.
    Ground,
    /// The tint over the time after the stock ran out.
    AfterOut,
    /// Grid lines at the ticks.
    Grid,
    /// The rule between two app-server groups.
    GroupRule,
    /// A buyer's bar (or its arrow past a zoomed edge), by how it ended.
    Bar(Mark),
    /// One strip of the fade at a zoomed edge: the ground colour at this many tenths opacity.
    Fade(u8),
    /// The dark edge that cuts a read tick out of its bar.
    Halo,
    /// A read tick: when the app's read of the stock came back.
    Read,
    /// The line where the real stock ran out, and its label.
    Marker,
    /// Axis and group labels.
    Muted,
}

/// The timeline's picture: shapes in [`Paint`]s (the shared types live in `model::canvas`).
pub type Scene = canvas::Scene<Paint>;
/// A shape of the timeline's picture.
pub type Shape = canvas::Shape<Paint>;
/// A label of the timeline's picture.
pub type Label = canvas::Label<Paint>;

/// The picture of `t` on a canvas `width` CSS px wide, rows in `order`: drawn in layers, back
/// to front, each its own function below.
pub fn scene(t: &Timeline, width: f64, order: RowOrder) -> Scene {
    if t.bars.is_empty() {
        // No run yet (or no answers yet): no axis to draw; the caption says what will come.
        return Scene {
            width,
            ..Scene::default()
        };
    }
    let g = Geometry::new(width, t.rows(), order == RowOrder::AppServer);
    let axis = time_axis(t, g.max_ticks);
    let mut s = Scene::new(g.width, g.height);
    let out_x = t.race.stock_out_us.map(|us| g.x(&axis, us));
    ground(&mut s, &g, out_x);
    grid(&mut s, &g, &axis);
    if order == RowOrder::AppServer {
        groups(&mut s, &g, t);
    }
    bars(&mut s, &g, &axis, t);
    if t.window_end_us.is_some() {
        zoomed_edge(&mut s, &g, &axis, t);
    }
    reads(&mut s, &g, &axis, t);
    if let (Some(x), Some(us)) = (out_x, t.race.stock_out_us) {
        stock_out(&mut s, &g, x, us);
    }
    s
}

/// Plot ground, then the part after the stock ran out, tinted.
fn ground(s: &mut Scene, g: &Geometry, out_x: Option<f64>) {
    let (top, plot) = (g.top, g.bottom() - g.top);
    s.rects(
        Paint::Ground,
        vec![rect(g.left, top, g.right - g.left, plot)],
    );
    if let Some(x) = out_x {
        s.rects(Paint::AfterOut, vec![rect(x, top, g.right - x, plot)]);
    }
}

/// Grid lines and tick labels.
fn grid(s: &mut Scene, g: &Geometry, axis: &Axis) {
    let (top, bottom) = (g.top, g.bottom());
    let plot = bottom - top;
    let ticks: Vec<(u64, f64)> = axis.ticks().map(|us| (us, g.x(axis, us))).collect();
    s.rects(
        Paint::Grid,
        ticks
            .iter()
            .map(|&(_, x)| rect(x, top, 0.0, plot))
            .collect(),
    );
    for &(us, x) in &ticks {
        s.text(Label {
            text: tick_label(axis, us),
            x,
            y: bottom + 6.0,
            anchor: Anchor::Middle,
            baseline: Baseline::Top,
            size: 12.0,
            bold: false,
            paint: Paint::Muted,
        });
    }
}

/// App-server groups: a rule between them, and a label in the gutter where there is room.
fn groups(s: &mut Scene, g: &Geometry, t: &Timeline) {
    let top = g.top;
    let rules = t.groups.iter().skip(1).map(|gr| {
        let y = top + f64::from(gr.first_row) * g.pitch;
        rect(0.0, y, g.right, 0.0)
    });
    s.rects(Paint::GroupRule, rules.collect());
    for gr in &t.groups {
        let h = f64::from(gr.rows) * g.pitch;
        if h >= GROUP_LABEL_MIN {
            s.text(Label {
                text: format!("app {}", gr.app_server + 1),
                x: 4.0,
                y: top + f64::from(gr.first_row) * g.pitch + h / 2.0,
                anchor: Anchor::Start,
                baseline: Baseline::Middle,
                size: 11.0,
                bold: false,
                paint: Paint::Muted,
            });
        }
    }
}

/// Bars, one fill per colour.
fn bars(s: &mut Scene, g: &Geometry, axis: &Axis, t: &Timeline) {
    for mark in BAR_ORDER {
        let bars = t.bars.iter().filter(|b| b.mark == mark).map(|b| {
            let (x0, x1) = (g.x(axis, b.start_us), g.x(axis, b.end_us));
            rect(x0, g.y(b.row) - g.thickness / 2.0, x1 - x0, g.thickness)
        });
        s.rects(Paint::Bar(mark), bars.collect());
    }
}

/// Zoomed: the plot fades out at its right edge, and bars that go on past it end in an arrow
/// in their colour, in the gutter (a sliver per row when rows are too thin for a triangle).
fn zoomed_edge(s: &mut Scene, g: &Geometry, axis: &Axis, t: &Timeline) {
    let (top, plot) = (g.top, g.bottom() - g.top);
    let strip = FADE / f64::from(FADE_STRIPS);
    for i in 0..FADE_STRIPS {
        let x = g.right - FADE + f64::from(i) * strip;
        s.rects(Paint::Fade(i + 1), vec![rect(x, top, strip, plot)]);
    }
    let x = g.right + 2.0;
    for mark in BAR_ORDER {
        let clipped = t
            .bars
            .iter()
            .filter(|b| b.mark == mark && b.end_us > axis.end);
        if g.thickness >= ARROW_MIN_THICKNESS {
            let half = g.thickness.min(9.0) / 2.0;
            let arrows: Vec<Arrow> = clipped
                .map(|b| Arrow {
                    x,
                    y: g.y(b.row),
                    half,
                })
                .collect();
            s.arrows(Paint::Bar(mark), arrows);
        } else {
            let slivers =
                clipped.map(|b| rect(x, g.y(b.row) - g.thickness / 2.0, 5.0, g.thickness));
            s.rects(Paint::Bar(mark), slivers.collect());
        }
    }
}

/// Reads: an upright tick as tall as the row, cut out of its bar by a halo where rows allow.
fn reads(s: &mut Scene, g: &Geometry, axis: &Axis, t: &Timeline) {
    let tick_h = g.pitch.max(1.0);
    let reads: Vec<(f64, f64)> = t
        .bars
        .iter()
        .filter_map(|b| {
            let read = b.read_us.filter(|&us| us <= axis.end)?;
            Some((g.x(axis, read), g.y(b.row) - tick_h / 2.0))
        })
        .collect();
    if g.pitch >= HALO_MIN_PITCH {
        let halos = reads.iter().map(|&(x, y)| rect(x - 2.5, y, 5.0, tick_h));
        s.rects(Paint::Halo, halos.collect());
    }
    let ticks = reads.iter().map(|&(x, y)| rect(x - 1.5, y, 3.0, tick_h));
    s.rects(Paint::Read, ticks.collect());
}

/// The moment the real stock ran out (at `x`, `us` after the gate), its label on whichever
/// side has room.
fn stock_out(s: &mut Scene, g: &Geometry, x: f64, us: u64) {
    let (top, plot) = (g.top, g.bottom() - g.top);
    s.rects(
        Paint::Marker,
        vec![rect(x - 1.0, top - 6.0, 2.0, plot + 6.0)],
    );
    let (anchor, label_x) = if x < g.width * LABEL_RIGHT_OF_LINE_BELOW {
        (Anchor::Start, x + 6.0)
    } else {
        (Anchor::End, x - 6.0)
    };
    s.text(Label {
        text: format!("stock ran out · {}", micros(us)),
        x: label_x,
        y: top - 12.0,
        anchor,
        baseline: Baseline::Middle,
        size: 13.0,
        bold: true,
        paint: Paint::Marker,
    });
}

/// [`scene`], with moments marked on its axis: a thin line and a short label each (a room's
/// chaos buttons, placed when they were pressed, in µs after the gate). A mark past the
/// axis' right edge is left out: it happened after what the picture shows.
pub fn scene_marked(t: &Timeline, width: f64, order: RowOrder, marks: &[(u64, String)]) -> Scene {
    let mut s = scene(t, width, order);
    if t.bars.is_empty() || marks.is_empty() {
        return s;
    }
    let g = Geometry::new(width, t.rows(), order == RowOrder::AppServer);
    let axis = time_axis(t, g.max_ticks);
    let (top, plot) = (g.top, g.bottom() - g.top);
    for (us, text) in marks {
        let x = g.x(&axis, *us);
        if !(g.left..=g.right).contains(&x) {
            continue;
        }
        s.rects(Paint::Marker, vec![rect(x - 1.0, top, 2.0, plot)]);
        s.text(Label {
            text: text.clone(),
            x: x + 4.0,
            y: top + 10.0,
            anchor: Anchor::Start,
            baseline: Baseline::Middle,
            size: 12.0,
            bold: true,
            paint: Paint::Marker,
        });
    }
    s
}

#[cfg(test)]
mod tests;
