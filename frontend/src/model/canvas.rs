//! A canvas picture as data: rectangles, arrowheads, line segments and labels in CSS px, each
//! filled with a panel's own paint (`P`). The race timeline and the Redis tape build one
//! [`Scene`] each, and one painter (`components/timeline.rs`, `paint`) draws either.
//!
//! Every shape of a kind and paint goes into one [`Shape`], so a picture of 10,000 buyers is a
//! few fills, not 10,000 calls across the wasm boundary.

/// A rectangle, CSS px.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    /// Left.
    pub x: f64,
    /// Top.
    pub y: f64,
    /// Width (0 for a hairline: the painter draws at least one device pixel).
    pub w: f64,
    /// Height (likewise).
    pub h: f64,
}

/// A rectangle at `x, y`, `w` by `h` CSS px.
pub fn rect(x: f64, y: f64, w: f64, h: f64) -> Rect {
    Rect { x, y, w, h }
}

/// A right-pointing arrowhead: its back edge at `x`, centred on `y`, `half` tall either way.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arrow {
    /// The back edge.
    pub x: f64,
    /// The centre line.
    pub y: f64,
    /// Half the back edge's height.
    pub half: f64,
}

impl Arrow {
    /// The tip's x: a little longer than tall, so it reads as "goes on".
    pub fn tip(&self) -> f64 {
        self.x + self.half * 1.4
    }
}

/// A straight line from `(x0, y0)` to `(x1, y1)`, CSS px.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// Start, x.
    pub x0: f64,
    /// Start, y.
    pub y0: f64,
    /// End, x.
    pub x1: f64,
    /// End, y.
    pub y1: f64,
}

/// Which point of a label sits at its `x`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// The label starts there (it lies to the right).
    Start,
    /// The label is centred there.
    Middle,
    /// The label ends there (it lies to the left).
    End,
}

/// Which part of a label sits at its `y`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Baseline {
    /// Its top (the label hangs below).
    Top,
    /// Its middle.
    Middle,
}

/// A line of text.
#[derive(Debug, Clone, PartialEq)]
pub struct Label<P> {
    /// What it says.
    pub text: String,
    /// Where its anchor point sits, CSS px.
    pub x: f64,
    /// Where its baseline sits, CSS px.
    pub y: f64,
    /// Which side of `x` it lies on.
    pub anchor: Anchor,
    /// How it hangs from `y`.
    pub baseline: Baseline,
    /// Font size, CSS px.
    pub size: f64,
    /// Bold or regular.
    pub bold: bool,
    /// Its colour.
    pub paint: P,
}

/// One thing to paint; every shape of a kind in one path.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape<P> {
    /// Rectangles, one fill.
    Rects(P, Vec<Rect>),
    /// Arrowheads, one fill.
    Arrows(P, Vec<Arrow>),
    /// Line segments `width` CSS px wide, one stroke.
    Lines(P, f64, Vec<Segment>),
    /// A label.
    Text(Label<P>),
}

/// Everything a canvas shows, in drawing order.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene<P> {
    /// Canvas width, CSS px.
    pub width: f64,
    /// Canvas height, CSS px (0: nothing to draw yet).
    pub height: f64,
    /// Shapes, back to front.
    pub shapes: Vec<Shape<P>>,
}

impl<P> Scene<P> {
    /// The smallest label's font size, CSS px (`None` when it has no label): what a projector
    /// must enlarge to be read from the back (`view::canvas_zoom`).
    pub fn smallest_label(&self) -> Option<f64> {
        self.shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Text(l) => Some(l.size),
                _ => None,
            })
            .min_by(f64::total_cmp)
    }
}

impl<P> Default for Scene<P> {
    fn default() -> Self {
        Self {
            width: 0.0,
            height: 0.0,
            shapes: Vec::new(),
        }
    }
}

impl<P: Copy + PartialEq> Scene<P> {
    /// An empty picture `width` by `height` CSS px.
    pub fn new(width: f64, height: f64) -> Self {
        Self {
            width,
            height,
            shapes: Vec::new(),
        }
    }

    /// Add rectangles filled with `paint` (nothing when there are none).
    pub fn rects(&mut self, paint: P, rects: Vec<Rect>) {
        if !rects.is_empty() {
            self.shapes.push(Shape::Rects(paint, rects));
        }
    }

    /// Add arrowheads filled with `paint` (nothing when there are none).
    pub fn arrows(&mut self, paint: P, arrows: Vec<Arrow>) {
        if !arrows.is_empty() {
            self.shapes.push(Shape::Arrows(paint, arrows));
        }
    }

    /// Add line segments `width` wide, stroked with `paint` (nothing when there are none).
    pub fn lines(&mut self, paint: P, width: f64, lines: Vec<Segment>) {
        if !lines.is_empty() {
            self.shapes.push(Shape::Lines(paint, width, lines));
        }
    }

    /// Add a label.
    pub fn text(&mut self, label: Label<P>) {
        self.shapes.push(Shape::Text(label));
    }

    /// Every rectangle filled with `paint`.
    pub fn rects_of(&self, paint: P) -> Vec<Rect> {
        self.shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Rects(p, r) if *p == paint => Some(r.iter().copied()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// Every arrowhead filled with `paint`.
    pub fn arrows_of(&self, paint: P) -> Vec<Arrow> {
        self.shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Arrows(p, a) if *p == paint => Some(a.iter().copied()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// Every line segment stroked with `paint`.
    pub fn lines_of(&self, paint: P) -> Vec<Segment> {
        self.shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Lines(p, _, l) if *p == paint => Some(l.iter().copied()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// Every label, in drawing order.
    pub fn labels(&self) -> Vec<&Label<P>> {
        self.shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Text(l) => Some(l),
                _ => None,
            })
            .collect()
    }
}
