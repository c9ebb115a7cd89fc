//! The race timeline: every buyer as a bar from arrival to answer on one time axis, a tick where
//! its read of the stock came back, and a line where the real stock ran out.
//!
//! A big crowd's run lasts far longer than its race (2 s against 40 ms for 10,000 buyers), so
//! when the run lasts more than 4× the moment the stock ran out, the axis zooms to the race
//! (see `model::timeline::Race::zoom_end_us`): later arrivals are counted in a note instead of
//! drawn, and bars that run on past the edge end in an arrow. A toggle shows the whole run.
//!
//! One `<canvas>`, never one node per buyer. A batch of outcomes (or a resize, or a toggle)
//! only asks for a frame; the layout and the drawing happen once in that frame, however many
//! batches landed before it. What to draw is decided by `model::timeline::scene` (plain Rust,
//! tested on the host); this file measures the canvas, paints the scene's shapes and maps its
//! paints to colours. The canvas is sized in device pixels, so lines stay crisp on a projector
//! or a phone.

use std::borrow::Cow;

use leptos::ev;
use leptos::html::Canvas;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use crate::components::frames::FrameRequests;
use crate::model::canvas::{self, Anchor, Arrow, Baseline, Rect};
use crate::model::checkout::story;
use crate::model::page::PageState;
use crate::model::run::{Mark, RunModel};
use crate::model::theme::Palette;
use crate::model::timeline::scene::Paint;
use crate::model::timeline::{self, Hidden, RowOrder, Scene, Timeline as Layout};
use crate::session::Session;

/// The page's font stack (style.css `--sans`), for labels on the canvas.
const FONT: &str = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";

/// The panel: legend, order toggle, the canvas and the one-line reading of it.
#[component]
pub fn Timeline() -> impl IntoView {
    let session = expect_context::<Session>();
    let order = RwSignal::new(RowOrder::Arrival);
    // Zoom to the race when the run is long enough to need it (the toggle only shows then).
    let zoom = RwSignal::new(true);
    let canvas = NodeRef::<Canvas>::new();
    let height = RwSignal::new(0.0_f64);
    Drawing::new(session, canvas, order, zoom, height).follow_changes();

    // The caption follows every batch without waiting for a frame. Its numbers are the run's
    // Redis tape's (`PageState::run_tape`, built once per batch and shared with the tape
    // panel), so the two views print the same numbers. With it: the zoom window, when the run
    // is long enough for one, and who arrived after it.
    let reading = Memo::new(move |_| session.page.with(Reading::of));
    let caption = move || reading.with(|s| s.caption.clone());
    let note = move || {
        reading.with(|s| {
            s.window
                .filter(|_| zoom.get())
                .map(|(end, last, h)| timeline::zoom_note(&h, end, last))
        })
    };

    view! {
        <section class="panel race-timeline" data-testid="timeline" aria-label="Race timeline">
            <div class="panel-head">
                <h2>"Race timeline"</h2>
                <OrderAndZoom order zoom reading/>
            </div>
            <Legend session/>
            <canvas
                node_ref=canvas
                class="tl-canvas"
                role="img"
                aria-label=caption
                style:height=move || format!("{}px", height.get())
            ></canvas>
            {move || {
                note()
                    .map(|text| {
                        view! {
                            <p class="tl-note muted" data-testid="timeline-hidden">
                                {text}
                            </p>
                        }
                    })
            }}
            <p class="tl-caption" data-testid="timeline-caption" data-tone=move || tone(session) aria-live="polite">
                {caption}
            </p>
        </section>
    }
}

/// The canvas, what it is drawn from, and the bookkeeping that draws it at most once a frame
/// however many batches land before that frame.
#[derive(Clone, Copy)]
struct Drawing {
    session: Session,
    canvas: NodeRef<Canvas>,
    order: RwSignal<RowOrder>,
    zoom: RwSignal<bool>,
    /// The picture's height in CSS px, which the canvas's style follows.
    height: RwSignal<f64>,
    /// The latest layout.
    layout: StoredValue<Layout>,
    /// At most one frame at a time, and whether it must rebuild.
    frames: FrameRequests,
}

impl Drawing {
    /// Nothing drawn yet: the first frame builds the layout.
    fn new(
        session: Session,
        canvas: NodeRef<Canvas>,
        order: RwSignal<RowOrder>,
        zoom: RwSignal<bool>,
        height: RwSignal<f64>,
    ) -> Self {
        Self {
            session,
            canvas,
            order,
            zoom,
            height,
            layout: StoredValue::new(Layout::default()),
            frames: FrameRequests::default(),
        }
    }

    /// Ask for one frame, unless one is asked for already; `rebuild` makes it rebuild the
    /// layout too.
    fn request(self, rebuild: bool) {
        self.frames.request(rebuild, move || self.frame());
    }

    /// The frame: rebuild the layout if it is stale, then paint it at the canvas's width.
    fn frame(self) {
        let session = self.session;
        self.frames.served();
        let Some(el) = self.canvas.get_untracked() else {
            return;
        };
        let order = self.order.get_untracked();
        if self.frames.take_stale() {
            let fresh = session.page.with_untracked(|p| match &p.run {
                Some(r) => {
                    let tape = p.run_tape();
                    let zoom = self.zoom.get_untracked();
                    Layout::new(&r.rows, r.config.race.stock, order, zoom, tape.as_deref())
                }
                None => Layout::default(),
            });
            self.layout.set_value(fresh);
        }
        let width = f64::from(el.client_width());
        if width <= 0.0 {
            return; // not laid out (hidden): nothing to measure against
        }
        // A room's chaos presses, where they happened on this sale's clock.
        let marks = session.page.with_untracked(|p| {
            let run = p.run.as_ref().map(|r| r.run_id.as_str());
            session.room.with_untracked(|r| r.chaos_marks(run))
        });
        let picture = self
            .layout
            .with_value(|t| timeline::scene_marked(t, width, order, &marks));
        let palette = session.theme.get_untracked().palette();
        paint_timeline(&el, &picture, palette);
        if picture.height != self.height.get_untracked() {
            self.height.set(picture.height);
        }
    }

    /// Ask for a frame whenever what the picture depends on changes, and for a redraw (no
    /// rebuild) whenever the window is resized.
    fn follow_changes(self) {
        let session = self.session;
        // What the picture depends on, in a Memo so that other page changes (a notice, a chip
        // in the why panel) do not re-sort 10,000 rows: a run only changes by new rows or a
        // new id.
        let run_key =
            Memo::new(move |_| session.with_run(|r| r.map(|r| (r.run_id.clone(), r.rows.len()))));
        // Syncing with the outside world (the canvas) is what an Effect is for: any change to
        // the run (a batch, a new run), the order or the zoom asks for one frame, later.
        // Read the Memo, not just `track()` it: a Memo is lazy, and one nobody has read has no
        // sources yet, so tracking it alone never wakes the Effect (the canvas stayed blank).
        Effect::new(move |_| {
            let _ = run_key.get();
            session.room.with(|r| r.chaos.len());
            self.order.track();
            self.zoom.track();
            session.theme.track();
            // The stage view changes the panel's width: refit.
            session.view.track();
            self.request(true);
        });
        let resize = window_event_listener(ev::resize, move |_| self.request(false));
        on_cleanup(move || resize.remove());
    }
}

/// The zoom window: where the axis ends, where the run's last bar ends, and who is not drawn.
type ZoomWindow = (u64, u64, Hidden);

/// The one-line reading of the run under the canvas, and the zoom window when the run is long
/// enough for one.
#[derive(Clone, PartialEq)]
struct Reading {
    caption: String,
    window: Option<ZoomWindow>,
}

impl Reading {
    /// The reading of the run on screen (or of no run yet).
    fn of(p: &PageState) -> Self {
        let (caption, window) = match &p.run {
            // A checkout has no tape, and its bars are stories: its own sentence, no zoom.
            Some(r) if r.is_checkout() => (
                story::timeline_caption(r.rows.iter().map(|row| &row.outcome), r.is_running()),
                None,
            ),
            // No bar per buyer: the totals and the audit tell it.
            Some(r) if r.at_scale() => (r.at_scale_caption(), None),
            // Several shelves, no tape: what became of the orders.
            Some(r) if crate::model::carts::is_multi_key(&r.config) => {
                (crate::model::carts::timeline_caption(r), None)
            }
            Some(r) => {
                let tape = p.run_tape();
                let race = timeline::race(&r.rows, r.config.race.stock, tape.as_deref());
                let window = race.zoom_end_us().map(|end| {
                    let hidden = timeline::hidden(&r.rows, end, tape.as_deref());
                    (end, race.last_end_us, hidden)
                });
                (timeline::caption(&race, RunModel::is_running(r)), window)
            }
            None => (timeline::caption(&timeline::Race::default(), false), None),
        };
        Self { caption, window }
    }
}

/// The caption's tone: red once any order took a unit past the stock (the same count that
/// marks rows oversold).
fn tone(session: Session) -> &'static str {
    session.with_run(|r| {
        r.map_or("idle", |r| {
            if r.tally.units_sold > u64::from(r.config.race.stock) {
                "bad"
            } else {
                "good"
            }
        })
    })
}

/// The buttons that order the rows, and the zoom toggle while the run is long enough for it.
#[component]
fn OrderAndZoom(
    order: RwSignal<RowOrder>,
    zoom: RwSignal<bool>,
    reading: Memo<Reading>,
) -> impl IntoView {
    let zoomable = move || reading.with(|s| s.window.is_some());
    view! {
        <div class="filters tl-order" role="group" aria-label="Order the rows and zoom">
            {RowOrder::ALL
                .map(|o| {
                    view! {
                        <button
                            class="filter"
                            class:on=move || order.get() == o
                            aria-pressed=move || (order.get() == o).to_string()
                            data-testid=format!("timeline-order-{}", o.id())
                            on:click=move |_| order.set(o)
                        >
                            {o.label()}
                        </button>
                    }
                })}
            <Show when=zoomable>
                <button
                    class="filter tl-zoom"
                    class:on=move || zoom.get()
                    aria-pressed=move || zoom.get().to_string()
                    title="Zoom the time axis to the race; press again for the whole run"
                    data-testid="timeline-zoom"
                    on:click=move |_| zoom.update(|z| *z = !*z)
                >
                    "zoom to the race"
                </button>
            </Show>
        </div>
    }
}

/// What the bars, ticks and lines mean; the rarer endings join only when the run has some.
#[component]
fn Legend(session: Session) -> impl IntoView {
    let rare = move || {
        session.with_run(|r| {
            r.map_or((false, false), |r| {
                (r.tally.gave_up > 0, r.tally.unknown > 0)
            })
        })
    };
    view! {
        <p class="tl-legend" aria-hidden="true">
            <span class="lg lg-reserved">"reserved"</span>
            <span class="lg lg-oversold">"oversold"</span>
            <span class="lg lg-soldout">"sold out"</span>
            <span class="lg lg-error">"error"</span>
            <Show when=move || rare().0>
                <span class="lg lg-gaveup">"gave up"</span>
            </Show>
            <Show when=move || rare().1>
                <span class="lg lg-unknown">"in doubt"</span>
            </Show>
            <span class="lg lg-read">"read came back"</span>
            <span class="lg lg-out">"stock ran out"</span>
            <span class="muted tl-axis-note">"one row per buyer · time since the gate opened"</span>
        </p>
    }
}

/// Paint the timeline's `scene` into `el` in `palette`'s colours.
fn paint_timeline(el: &HtmlCanvasElement, scene: &Scene, palette: &Palette) {
    paint(el, scene, 1.0, |p| colour(p, palette));
}

/// Paint `scene` into `el`, each paint in the colour `colour` gives it, sized in device pixels
/// and enlarged `zoom` times (the stage view's, `view::canvas_zoom`); nothing here decides
/// what to draw. Shared with the tape panel (`components/tape.rs`): one painter, so both
/// canvases snap to device pixels the same way.
pub(crate) fn paint<P: Copy>(
    el: &HtmlCanvasElement,
    scene: &canvas::Scene<P>,
    zoom: f64,
    colour: impl Fn(P) -> Cow<'static, str>,
) {
    if scene.height <= 0.0 {
        el.set_width(0);
        el.set_height(0);
        return;
    }
    let dpr = window().device_pixel_ratio().max(1.0) * zoom.max(1.0);
    // Setting the size clears the canvas; everything is drawn fresh each frame.
    el.set_width((scene.width * dpr).round() as u32);
    el.set_height((scene.height * dpr).round() as u32);
    let Some(ctx) = el
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
    else {
        return;
    };
    let p = Painter { ctx: &ctx, dpr };
    for shape in &scene.shapes {
        match shape {
            canvas::Shape::Rects(paint, rects) => p.rects(&colour(*paint), rects),
            canvas::Shape::Arrows(paint, arrows) => p.arrows(&colour(*paint), arrows),
            canvas::Shape::Lines(paint, width, lines) => p.lines(&colour(*paint), *width, lines),
            canvas::Shape::Text(label) => p.text(label, &colour(label.paint)),
        }
    }
}

/// A scene's paint in the theme's canvas palette (`model::theme`).
fn colour(paint: Paint, p: &Palette) -> Cow<'static, str> {
    Cow::Borrowed(match paint {
        Paint::Ground | Paint::Halo => p.ground,
        Paint::AfterOut => p.after_out,
        Paint::Grid => p.grid,
        Paint::GroupRule => p.rule,
        Paint::Bar(Mark::Reserved) => p.reserved,
        Paint::Bar(Mark::Oversold) => p.oversold,
        Paint::Bar(Mark::SoldOut) => p.sold_out,
        Paint::Bar(Mark::Error) => p.error,
        Paint::Bar(Mark::Unknown) => p.unknown,
        Paint::Bar(Mark::GaveUp) => p.gave_up,
        Paint::Read => p.read,
        Paint::Marker => p.marker,
        Paint::Muted => p.muted,
        // The ground colour, `tenths` opaque.
        Paint::Fade(tenths) => {
            return Cow::Owned(format!(
                "rgba({}, {:.1})",
                p.ground_rgb,
                f64::from(tenths) / 10.0
            ));
        }
    })
}

/// Draws in CSS px onto a canvas sized in device px, snapping every edge to a device pixel.
struct Painter<'a> {
    ctx: &'a CanvasRenderingContext2d,
    dpr: f64,
}

impl Painter<'_> {
    /// Fill `rects` in one path. Each is at least one device pixel each way, so a bar or a row
    /// thinner than a pixel still shows.
    fn rects(&self, colour: &str, rects: &[Rect]) {
        let d = self.dpr;
        self.ctx.set_fill_style_str(colour);
        self.ctx.begin_path();
        for r in rects {
            let (x0, y0) = ((r.x * d).round(), (r.y * d).round());
            let w = ((r.x + r.w) * d).round().max(x0 + 1.0) - x0;
            let h = ((r.y + r.h) * d).round().max(y0 + 1.0) - y0;
            self.ctx.rect(x0, y0, w, h);
        }
        self.ctx.fill();
    }

    /// Fill `arrows` in one path.
    fn arrows(&self, colour: &str, arrows: &[Arrow]) {
        let d = self.dpr;
        self.ctx.set_fill_style_str(colour);
        self.ctx.begin_path();
        for a in arrows {
            self.ctx.move_to(a.x * d, (a.y - a.half) * d);
            self.ctx.line_to(a.tip() * d, a.y * d);
            self.ctx.line_to(a.x * d, (a.y + a.half) * d);
            self.ctx.close_path();
        }
        self.ctx.fill();
    }

    /// Stroke `lines`, `width` CSS px wide, in one path.
    fn lines(&self, colour: &str, width: f64, lines: &[canvas::Segment]) {
        let d = self.dpr;
        self.ctx.set_stroke_style_str(colour);
        self.ctx.set_line_width((width * d).max(1.0));
        self.ctx.begin_path();
        for l in lines {
            self.ctx.move_to(l.x0 * d, l.y0 * d);
            self.ctx.line_to(l.x1 * d, l.y1 * d);
        }
        self.ctx.stroke();
    }

    /// One label in `colour`, anchored and hung as the scene says.
    fn text<P>(&self, l: &canvas::Label<P>, colour: &str) {
        let weight = if l.bold { "700 " } else { "" };
        let px = (l.size * self.dpr).round();
        self.ctx.set_font(&format!("{weight}{px}px {FONT}"));
        self.ctx.set_fill_style_str(colour);
        self.ctx.set_text_align(match l.anchor {
            Anchor::Start => "left",
            Anchor::Middle => "center",
            Anchor::End => "right",
        });
        self.ctx.set_text_baseline(match l.baseline {
            Baseline::Top => "top",
            Baseline::Middle => "middle",
        });
        let _ = self.ctx.fill_text(&l.text, l.x * self.dpr, l.y * self.dpr);
    }
}
