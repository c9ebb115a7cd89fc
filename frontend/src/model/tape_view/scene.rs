//! The tape's picture as data: a [`Strip`] laid out in CSS px. Redis's single thread is the
//! horizontal axis (one column per slot, left to right; slot order, not time), lanes are
//! stacked under each other, and every drawing decision (mark sizes, which lanes get a name,
//! which counters get printed, where the run-out marker's label goes) is made here, where a
//! host test can pin it. The component only paints the [`Scene`].

use super::strip::{Band, CellKind, Column, Strip};
use crate::model::canvas::{self, Anchor, Baseline, Label, Rect, Segment, rect};

/// What a shape is filled with; the component maps each to the theme's palette.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paint {
    /// A band's background.
    Ground,
    /// The faint line along each lane, so a buyer can be followed left to right.
    Guide,
    /// The tint over the columns after the stock ran out.
    AfterOut,
    /// The shade behind a slot's commands whose order among themselves is unknown.
    Unordered,
    /// The dotted line of a folded column.
    Fold,
    /// The dashes over a column whose place is only partly known.
    Approx,
    /// A drop no answered write explains (writes in doubt).
    Gap,
    /// A mark, by kind.
    Cell(CellKind),
    /// Text on a filled mark.
    OnMark,
    /// A read joined to its write.
    Link,
    /// A stale read joined to its write.
    LinkStale,
    /// The line where the stock ran out, and its label.
    Marker,
    /// Lane names, counters and notes.
    Muted,
    /// A counter below zero.
    CounterNeg,
    /// The divider where Redis came back with a counter of its own, and its words.
    Break,
}

/// The tape's picture.
pub type Scene = canvas::Scene<Paint>;

/// Marks in drawing order: the damage last, so it stays on top.
pub const KIND_ORDER: [CellKind; 12] = [
    CellKind::Other,
    CellKind::RefusedRead,
    CellKind::Refused,
    CellKind::Nil,
    CellKind::Read,
    CellKind::Undo,
    CellKind::Sale,
    CellKind::Overshoot,
    CellKind::StaleRead,
    CellKind::Overwrite,
    CellKind::Lost,
    CellKind::Phantom,
];

/// Room above the bands for the run-out label.
const TOP: f64 = 26.0;
/// Room above that for the words of a break (where Redis came back), when there is one.
const BREAK_ROW: f64 = 20.0;
/// The counter row under each band.
const COUNTER_ROW: f64 = 20.0;
/// Space between two bands.
const BAND_GAP: f64 = 12.0;
/// The axis note under everything.
const BOTTOM: f64 = 20.0;
/// Right margin.
const RIGHT: f64 = 12.0;
/// The narrowest a column gets before the picture grows wider than the panel (and scrolls).
pub const MIN_COLUMN: f64 = 4.0;
/// The widest a column gets: room for a label like `EVALSHA` over `→ [1, 1, 0]`.
const MAX_COLUMN: f64 = 124.0;
/// The tallest a lane gets (a step-through's two to four buyers, read from the back row).
const MAX_PITCH: f64 = 46.0;
/// Columns at least this wide, on lanes at least [`LABEL_PITCH`] tall, print each mark's text.
const LABEL_COLUMN: f64 = 70.0;
/// See [`LABEL_COLUMN`].
const LABEL_PITCH: f64 = 22.0;
/// Left of this fraction of the width, the run-out label goes right of its line.
const LABEL_RIGHT_OF_LINE_BELOW: f64 = 0.55;

/// Where things go, CSS px.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry {
    /// Picture width (at least the panel's; wider when the columns need it).
    pub width: f64,
    /// Picture height.
    pub height: f64,
    /// Left edge of the columns (the lane names sit left of it).
    pub left: f64,
    /// Column width.
    pub column: f64,
    /// Lane height.
    pub pitch: f64,
    /// True when marks print their text.
    pub labels: bool,
    /// Top edge of the first band (below the break's words and the run-out label).
    pub top: f64,
}

impl Geometry {
    /// Lay `strip` out in a panel `width` CSS px wide (`narrow` below 600 px).
    pub fn new(strip: &Strip, width: f64) -> Self {
        let width = width.max(200.0);
        let narrow = width < 600.0;
        let names = strip
            .bands
            .iter()
            .flat_map(|b| &b.lanes)
            .map(|n| n.chars().count())
            .max()
            .unwrap_or(0);
        let left = (names as f64 * 7.0 + 10.0).clamp(24.0, 78.0);
        let columns = strip.widest().max(1) as f64;
        let column = ((width - left - RIGHT) / columns).clamp(MIN_COLUMN, MAX_COLUMN);
        let lanes: usize = strip.bands.iter().map(|b| b.lanes.len().max(1)).sum();
        let budget = if narrow { 230.0 } else { 300.0 };
        let pitch = (budget / lanes.max(1) as f64).min(MAX_PITCH);
        let bands = strip.bands.len().max(1) as f64;
        let breaks = strip
            .bands
            .iter()
            .flat_map(|b| &b.columns)
            .any(|c| matches!(c, Column::Break { .. }));
        let top = TOP + if breaks { BREAK_ROW } else { 0.0 };
        let height =
            top + lanes as f64 * pitch + bands * COUNTER_ROW + (bands - 1.0) * BAND_GAP + BOTTOM;
        Self {
            width: width.max(left + columns * column + RIGHT),
            height,
            left,
            column,
            pitch,
            labels: column >= LABEL_COLUMN && pitch >= LABEL_PITCH,
            top,
        }
    }

    /// Left edge of column `c`.
    pub fn x(&self, c: u32) -> f64 {
        self.left + f64::from(c) * self.column
    }
}

/// The picture of `strip` in a panel `width` CSS px wide.
pub fn scene(strip: &Strip, width: f64) -> Scene {
    if strip.is_empty() {
        return Scene {
            width,
            ..Scene::default()
        };
    }
    let g = Geometry::new(strip, width);
    let mut s = Scene::new(g.width, g.height);
    let mut top = g.top;
    let mut marker: Option<(f64, f64, f64)> = None;
    for band in &strip.bands {
        let lanes = band.lanes.len().max(1) as f64;
        let bottom = top + lanes * g.pitch;
        if let Some(m) = draw_band(&mut s, &g, band, top, bottom) {
            marker = Some(m);
        }
        top = bottom + COUNTER_ROW + BAND_GAP;
    }
    // The run-out marker last, over everything, with its label on whichever side has room.
    if let Some((x, y0, y1)) = marker {
        s.rects(Paint::Marker, vec![rect(x - 1.0, y0, 2.0, y1 - y0)]);
        let (anchor, label_x) = if x < g.width * LABEL_RIGHT_OF_LINE_BELOW {
            (Anchor::Start, x + 6.0)
        } else {
            (Anchor::End, x - 6.0)
        };
        s.text(label(
            "stock ran out",
            label_x,
            g.top - TOP / 2.0,
            anchor,
            13.0,
            true,
            Paint::Marker,
        ));
    }
    s.text(label(
        "Redis's order, one slot per column →",
        g.left,
        g.height - BOTTOM / 2.0,
        Anchor::Start,
        11.0,
        false,
        Paint::Muted,
    ));
    s
}

/// One band from `top` to `bottom` (its lanes; the counter row hangs below). Returns where
/// the run-out marker goes (x, and its top and bottom), when it is in this band.
///
/// Painted back to front: the ground, the columns' shades, the links, the marks with their
/// text, the lane names, then the counter row.
fn draw_band(
    s: &mut Scene,
    g: &Geometry,
    band: &Band,
    top: f64,
    bottom: f64,
) -> Option<(f64, f64, f64)> {
    let area = Area { g, top, bottom };
    let out_x = draw_ground(s, &area, band);
    draw_columns(s, &area, band);
    draw_breaks(s, &area, band);
    draw_links(s, &area, band);
    draw_marks(s, &area, band);
    draw_lane_names(s, &area, band);
    draw_counters(s, &area, band);
    out_x.map(|x| (x, top - 8.0, bottom))
}

/// A band's place on the picture.
struct Area<'a> {
    g: &'a Geometry,
    top: f64,
    bottom: f64,
}

impl Area<'_> {
    /// The middle of lane `lane`.
    fn lane_y(&self, lane: u32) -> f64 {
        self.top + (f64::from(lane) + 0.5) * self.g.pitch
    }
}

/// The ground, the tint after the stock ran out, and a guide along each lane. Returns the
/// run-out x, when the stock ran out in this band.
fn draw_ground(s: &mut Scene, a: &Area, band: &Band) -> Option<f64> {
    let g = a.g;
    let right = g.x(band.columns.len() as u32);
    s.rects(
        Paint::Ground,
        vec![rect(g.left, a.top, right - g.left, a.bottom - a.top)],
    );
    let out_x = band.ran_out.map(|c| g.x(c + 1));
    if let Some(x) = out_x
        && right > x
    {
        s.rects(
            Paint::AfterOut,
            vec![rect(x, a.top, right - x, a.bottom - a.top)],
        );
    }
    // A guide along each lane, when lanes are tall enough to follow.
    if g.pitch >= 8.0 {
        let guides = (0..band.lanes.len() as u32)
            .map(|l| rect(g.left, a.lane_y(l), right - g.left, 0.0))
            .collect();
        s.rects(Paint::Guide, guides);
    }
    out_x
}

/// Columns: unordered shades, folds, approximate places, gaps.
fn draw_columns(s: &mut Scene, a: &Area, band: &Band) {
    let g = a.g;
    let (mut shades, mut folds, mut approx, mut gaps) = (vec![], vec![], vec![], vec![]);
    for (c, col) in band.columns.iter().enumerate() {
        let x = g.x(c as u32);
        match col {
            // Drawn by `draw_breaks`, with its words.
            Column::Break { .. } => {}
            Column::Folded { .. } => {
                let cx = x + g.column / 2.0;
                let mut y = a.top + 2.0;
                while y < a.bottom - 2.0 {
                    folds.push(rect(cx - 0.75, y, 1.5, 3.0));
                    y += 6.0;
                }
            }
            Column::Slot(slot) => {
                let lowest = slot.marks.iter().map(|m| m.lane).min();
                let highest = slot.marks.iter().map(|m| m.lane).max();
                if slot.commands > 1
                    && let (Some(first), Some(last)) = (lowest, highest)
                {
                    let y0 = a.lane_y(first) - g.pitch / 2.0 + 1.0;
                    let y1 = a.lane_y(last) + g.pitch / 2.0 - 1.0;
                    shades.push(rect(x + 1.0, y0, (g.column - 2.0).max(1.0), y1 - y0));
                }
                if slot.approx {
                    let w = (g.column - 2.0).max(1.0);
                    let mut dx = 0.0;
                    while dx < w {
                        approx.push(rect(x + 1.0 + dx, a.top - 4.0, (w - dx).min(3.0), 1.5));
                        dx += 6.0;
                    }
                }
                if slot.gap {
                    let cx = x + g.column / 2.0;
                    gaps.push(rect(cx - 1.0, a.top, 2.0, a.bottom - a.top));
                }
            }
        }
    }
    s.rects(Paint::Unordered, shades);
    s.rects(Paint::Fold, folds);
    s.rects(Paint::Approx, approx);
    s.rects(Paint::Gap, gaps);
}

/// Each break between two lives of the counter: a divider down the band, from the row of
/// its words above the bands (on whichever side of the line has room).
fn draw_breaks(s: &mut Scene, a: &Area, band: &Band) {
    let g = a.g;
    for (c, col) in band.columns.iter().enumerate() {
        let Column::Break { label: words, .. } = col else {
            continue;
        };
        let x = g.x(c as u32) + g.column / 2.0;
        let y0 = BREAK_ROW / 2.0;
        s.rects(Paint::Break, vec![rect(x - 1.5, y0, 3.0, a.bottom - y0)]);
        let (anchor, text_x) = if x < g.width * LABEL_RIGHT_OF_LINE_BELOW {
            (Anchor::Start, x + 6.0)
        } else {
            (Anchor::End, x - 6.0)
        };
        s.text(label(words, text_x, y0, anchor, 12.0, true, Paint::Break));
    }
}

/// Links under the marks: from a read's right edge to its write's left edge, so a line never
/// crosses a label.
fn draw_links(s: &mut Scene, a: &Area, band: &Band) {
    let g = a.g;
    let (mut fresh, mut stale) = (vec![], vec![]);
    let read_half = mark_rect(g, CellKind::Read, 0.0, 0.0).w / 2.0;
    let write_half = mark_rect(g, CellKind::Sale, 0.0, 0.0).w / 2.0;
    for l in &band.links {
        let x0 = g.x(l.from_column) + g.column / 2.0 + read_half;
        let x1 = g.x(l.to_column) + g.column / 2.0 - write_half;
        let seg = Segment {
            x0,
            y0: a.lane_y(l.from_lane),
            x1,
            y1: a.lane_y(l.to_lane),
        };
        if l.stale { &mut stale } else { &mut fresh }.push(seg);
    }
    let thin = (g.pitch * 0.12).clamp(1.0, 2.0);
    s.lines(Paint::Link, thin, fresh);
    s.lines(Paint::LinkStale, (thin * 1.4).min(2.5), stale);
}

/// Marks, one fill per kind; text on them when there is room.
fn draw_marks(s: &mut Scene, a: &Area, band: &Band) {
    let g = a.g;
    let mut texts = Vec::new();
    for kind in KIND_ORDER {
        let mut rects = Vec::new();
        let mut outline = Vec::new();
        for (c, col) in band.columns.iter().enumerate() {
            let Column::Slot(slot) = col else { continue };
            for m in slot.marks.iter().filter(|m| m.kind == kind) {
                let cx = g.x(c as u32) + g.column / 2.0;
                let cy = a.lane_y(m.lane);
                let r = mark_rect(g, kind, cx, cy);
                if g.labels && !kind.is_write() {
                    // Outlined: a labelled read or refusal stays visibly "changed nothing".
                    outline.extend(box_edges(r));
                } else {
                    rects.push(r);
                }
                let text = match (&m.label, m.count) {
                    (Some(t), 1) if g.labels => Some(t.clone()),
                    (_, n) if n > 1 && g.labels => Some(format!("×{n}")),
                    _ => None,
                };
                if let Some(t) = text {
                    texts.extend(mark_text(&t, kind, cx, cy, r.h));
                }
            }
        }
        s.rects(Paint::Cell(kind), rects);
        s.lines(Paint::Cell(kind), 2.0, outline);
    }
    for t in texts {
        s.text(t);
    }
}

/// The text on one mark: the command, then its reply when the mark is tall enough; bigger type
/// on the tall lanes of a step-through.
fn mark_text(t: &str, kind: CellKind, cx: f64, cy: f64, height: f64) -> Vec<Label<Paint>> {
    // On a filled mark, the ground colour; in an outline, the mark's colour, but never the dim
    // grey of a refusal (it must read from the back row).
    let paint = match kind {
        k if k.is_write() => Paint::OnMark,
        CellKind::RefusedRead | CellKind::Refused | CellKind::Other => Paint::Muted,
        k => Paint::Cell(k),
    };
    let lines: Vec<&str> = t.split('\n').collect();
    let shown = if height >= 24.0 { lines.len() } else { 1 };
    let size = if height >= 32.0 { 13.0 } else { 11.0 };
    let step = size + 2.5;
    let y0 = cy - step * (shown as f64 - 1.0) / 2.0;
    lines
        .iter()
        .take(shown)
        .enumerate()
        .map(|(k, line)| {
            let y = y0 + step * k as f64;
            label(line, cx, y, Anchor::Middle, size, k == 0, paint)
        })
        .collect()
}

/// Lane names in the gutter, as many as fit without touching.
fn draw_lane_names(s: &mut Scene, a: &Area, band: &Band) {
    let g = a.g;
    let every = (12.0 / g.pitch).ceil().max(1.0) as usize;
    for (i, name) in band.lanes.iter().enumerate().step_by(every) {
        s.text(label(
            name,
            g.left - 6.0,
            a.lane_y(i as u32),
            Anchor::End,
            if g.pitch >= 16.0 { 12.0 } else { 10.0 },
            false,
            Paint::Muted,
        ));
    }
}

/// The counter after each column, as many as fit; always the run-out column's and the last.
fn draw_counters(s: &mut Scene, a: &Area, band: &Band) {
    let g = a.g;
    let row_y = a.bottom + COUNTER_ROW / 2.0;
    let counters: Vec<(u32, i64)> = band
        .columns
        .iter()
        .enumerate()
        .filter_map(|(c, col)| match col {
            Column::Slot(slot) => slot.counter.map(|v| (c as u32, v)),
            // Where the counter came back (a missing key reads as 0).
            Column::Break { came_back_at, .. } => Some((c as u32, came_back_at.unwrap_or(0))),
            Column::Folded { .. } => None,
        })
        .collect();
    let breaks: Vec<u32> = band
        .columns
        .iter()
        .enumerate()
        .filter(|(_, col)| matches!(col, Column::Break { .. }))
        .map(|(c, _)| c as u32)
        .collect();
    let widest = counters
        .iter()
        .map(|(_, v)| v.to_string().len())
        .max()
        .unwrap_or(1) as f64;
    let room = widest * 7.0 + 6.0;
    let mut last_x = f64::NEG_INFINITY;
    let last = counters.last().map(|&(c, _)| c);
    for &(c, v) in &counters {
        let cx = g.x(c) + g.column / 2.0;
        let must = Some(c) == band.ran_out || Some(c) == last || breaks.contains(&c);
        if cx - last_x < room && !must {
            continue;
        }
        if cx - last_x < room && must {
            // Make room for the one that must show: drop the previous.
            if let Some(canvas::Shape::Text(_)) = s.shapes.last() {
                s.shapes.pop();
            }
        }
        let paint = if v < 0 {
            Paint::CounterNeg
        } else {
            Paint::Muted
        };
        // The last one may sit at the picture's right edge: end it there rather than clip it.
        let (x, anchor) = if cx + room / 2.0 > g.width {
            (g.width - 2.0, Anchor::End)
        } else {
            (cx, Anchor::Middle)
        };
        s.text(label(&v.to_string(), x, row_y, anchor, 11.0, v < 0, paint));
        last_x = cx;
    }
    if g.left >= 50.0 {
        s.text(label(
            "counter",
            g.left - 6.0,
            row_y,
            Anchor::End,
            10.0,
            false,
            Paint::Muted,
        ));
    }
}

/// A mark's rectangle around `(cx, cy)`: writes tall, everything else small.
fn mark_rect(g: &Geometry, kind: CellKind, cx: f64, cy: f64) -> Rect {
    let (w, h) = if g.labels {
        ((g.column - 8.0).max(2.0), (g.pitch * 0.8).min(36.0))
    } else if kind.is_write() {
        ((g.column * 0.7).clamp(1.5, 22.0), (g.pitch * 0.84).max(1.5))
    } else {
        let side = (g.column * 0.7).min(g.pitch * 0.56).clamp(1.5, 12.0);
        (side, side)
    };
    rect(cx - w / 2.0, cy - h / 2.0, w, h)
}

/// The four edges of `r`, inset by a line's half width.
fn box_edges(r: Rect) -> [Segment; 4] {
    let (x0, y0, x1, y1) = (r.x + 1.0, r.y + 1.0, r.x + r.w - 1.0, r.y + r.h - 1.0);
    let seg = |x0, y0, x1, y1| Segment { x0, y0, x1, y1 };
    [
        seg(x0 - 1.0, y0, x1 + 1.0, y0),
        seg(x1, y0, x1, y1),
        seg(x1 + 1.0, y1, x0 - 1.0, y1),
        seg(x0, y1, x0, y0),
    ]
}

fn label(
    text: &str,
    x: f64,
    y: f64,
    anchor: Anchor,
    size: f64,
    bold: bool,
    paint: Paint,
) -> Label<Paint> {
    Label {
        text: text.to_string(),
        x,
        y,
        anchor,
        baseline: Baseline::Middle,
        size,
        bold,
        paint,
    }
}
