//! The race timeline: every buyer as a bar from arrival to answer on one time axis, a tick where
//! its read of the stock came back, and a line where the real stock ran out.
//!
//! A big crowd's run lasts far longer than its race (2 s against 40 ms for 10,000 buyers), so
//! when the run lasts more than 8× the moment the stock ran out, the axis zooms to the race
//! (see `model::timeline::Race::zoom_end_us`): later arrivals are counted in a note instead of
//! drawn, and bars that run on past the edge end in an arrow. A toggle shows the whole run.
//!
//! One `<canvas>`, never one node per buyer. A batch of outcomes (or a resize, or a toggle)
//! only asks for a frame; the layout and the drawing happen once in that frame, however many
//! batches landed before it. The canvas is sized in device pixels, so lines stay crisp on a
//! projector or a phone.

use leptos::ev;
use leptos::html::Canvas;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use crate::model::run::{Mark, RunModel};
use crate::model::text::micros;
use crate::model::timeline::{self, Geometry, Hidden, RowOrder, TimeAxis, Timeline as Layout};
use crate::session::Session;

// The palette of style.css (`--green`, `--red`, …); a canvas cannot read CSS variables cheaply.
const GREEN: &str = "#3ddc97";
const RED: &str = "#ff5f5f";
const GREY: &str = "#4c5568";
const AMBER: &str = "#ffb84d";
const VIOLET: &str = "#c792ff";
const SAND: &str = "#b59a6a";
const BLUE: &str = "#7ab0ff";
const TEXT: &str = "#eef1f7";
const MUTED: &str = "#9aa5ba";
const BG: &str = "#0a0c11";
const GRID: &str = "rgba(255, 255, 255, 0.07)";
const AFTER: &str = "rgba(255, 95, 95, 0.045)";
/// Bar colours, in drawing order: the rarer, more important colours last, so they stay on top
/// when thousands of rows share a pixel.
const LAYERS: [(Mark, &str); 6] = [
    (Mark::SoldOut, GREY),
    (Mark::GaveUp, SAND),
    (Mark::Error, AMBER),
    (Mark::Unknown, VIOLET),
    (Mark::Reserved, GREEN),
    (Mark::Oversold, RED),
];
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
    // The latest layout, and whether the next frame must rebuild it (new outcomes, new order)
    // or only redraw it (a resize).
    let layout = StoredValue::new(Layout::default());
    let stale = StoredValue::new(true);
    let queued = StoredValue::new(false);

    let frame = move || {
        queued.set_value(false);
        let Some(el) = canvas.get_untracked() else {
            return;
        };
        let order = order.get_untracked();
        if stale.get_value() {
            stale.set_value(false);
            let fresh = session.page.with_untracked(|p| match &p.run {
                Some(r) => Layout::new(&r.rows, r.config.race.stock, order, zoom.get_untracked()),
                None => Layout::default(),
            });
            layout.set_value(fresh);
        }
        layout.with_value(|t| {
            if let Some(h) = draw(&el, t, order)
                && h != height.get_untracked()
            {
                height.set(h);
            }
        });
    };
    let request = move |rebuild: bool| {
        if rebuild {
            stale.set_value(true);
        }
        if !queued.get_value() {
            queued.set_value(true);
            request_animation_frame(frame);
        }
    };

    // Any change to the run (a batch, a new run), the order or the zoom: one frame, later.
    Effect::new(move |_| {
        session.page.track();
        order.track();
        zoom.track();
        request(true);
    });
    let resize = window_event_listener(ev::resize, move |_| request(false));
    on_cleanup(move || resize.remove());

    // The caption is cheap (a couple of passes, no sort), so it follows every batch without
    // waiting for a frame. With it: the zoom window, when the run is long enough for one, and
    // who arrived after it.
    let summary = Memo::new(move |_| {
        session.with_run(|r| match r {
            Some(r) => {
                let race = timeline::race(&r.rows, r.config.race.stock);
                let window = race
                    .zoom_end_us()
                    .map(|end| (end, race.last_end_us, timeline::hidden(&r.rows, end)));
                (timeline::caption(&race, RunModel::is_running(r)), window)
            }
            None => (
                timeline::caption(&timeline::Race::default(), false),
                None::<(u64, u64, Hidden)>,
            ),
        })
    });
    let caption = move || summary.with(|s| s.0.clone());
    let zoomable = move || summary.with(|s| s.1.is_some());
    let note = move || {
        summary.with(|s| {
            s.1.filter(|_| zoom.get())
                .map(|(end, last, h)| timeline::zoom_note(&h, end, last))
        })
    };
    let tone = move || {
        session.with_run(|r| {
            r.map_or("idle", |r| {
                if r.rows.iter().any(|x| x.mark == Mark::Oversold) {
                    "bad"
                } else {
                    "good"
                }
            })
        })
    };

    // The rarer endings join the legend only when the run has some.
    let rare =
        move || session.with_run(|r| r.map_or((false, false), |r| (r.gave_up > 0, r.unknown > 0)));

    view! {
        <section class="panel race-timeline" data-testid="timeline" aria-label="Race timeline">
            <div class="panel-head">
                <h2>"Race timeline"</h2>
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
            </div>
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
            <p class="tl-caption" data-testid="timeline-caption" data-tone=tone aria-live="polite">
                {caption}
            </p>
        </section>
    }
}

/// Draw `t` into `el` at its current CSS width; returns the CSS height it needs.
fn draw(el: &HtmlCanvasElement, t: &Layout, order: RowOrder) -> Option<f64> {
    let width = f64::from(el.client_width());
    if width <= 0.0 {
        return None; // not laid out (hidden): nothing to measure against
    }
    if t.bars.is_empty() {
        // No run yet (or no answers yet): no axis to draw; the caption says what will come.
        el.set_width(0);
        el.set_height(0);
        return Some(0.0);
    }
    let dpr = window().device_pixel_ratio().max(1.0);
    let g = Geometry::new(width, t.rows(), order == RowOrder::AppServer);
    // Setting the size clears the canvas; everything below is drawn fresh each frame.
    el.set_width((g.width * dpr).round() as u32);
    el.set_height((g.height * dpr).round() as u32);
    let ctx = el
        .get_context("2d")
        .ok()
        .flatten()?
        .dyn_into::<CanvasRenderingContext2d>()
        .ok()?;
    let p = Painter { ctx: &ctx, dpr };
    let axis = match t.window_end_us {
        Some(end) => TimeAxis::window(end, g.max_ticks),
        None => TimeAxis::new(t.last_end_us, g.max_ticks),
    };
    let (top, bottom) = (g.top, g.bottom());

    // Plot ground, then the part after the stock ran out, tinted.
    p.fill(BG, &[(g.left, top, g.right - g.left, bottom - top)]);
    let out_x = t.race.stock_out_us.map(|us| g.x(&axis, us));
    if let Some(x) = out_x {
        p.fill(AFTER, &[(x, top, g.right - x, bottom - top)]);
    }

    // Grid and tick labels.
    p.font(12.0, false);
    ctx.set_fill_style_str(MUTED);
    ctx.set_text_align("center");
    ctx.set_text_baseline("top");
    let ticks: Vec<_> = axis.ticks().map(|us| g.x(&axis, us)).collect();
    p.fill(
        GRID,
        &ticks
            .iter()
            .map(|&x| (x, top, 0.0, bottom - top))
            .collect::<Vec<_>>(),
    );
    ctx.set_fill_style_str(MUTED);
    for (us, &x) in axis.ticks().zip(&ticks) {
        let _ = ctx.fill_text(&axis.label(us), x * dpr, (bottom + 6.0) * dpr);
    }

    // App-server groups: a rule between them and a label in the gutter where there is room.
    if order == RowOrder::AppServer {
        let rules: Vec<_> = t
            .groups
            .iter()
            .skip(1)
            .map(|gr| {
                let y = top + f64::from(gr.first_row) * g.pitch;
                (0.0, y, g.right, 0.0)
            })
            .collect();
        p.fill("rgba(255, 255, 255, 0.16)", &rules);
        p.font(11.0, false);
        ctx.set_fill_style_str(MUTED);
        ctx.set_text_align("left");
        ctx.set_text_baseline("middle");
        for gr in &t.groups {
            let h = f64::from(gr.rows) * g.pitch;
            if h >= 12.0 {
                let y = top + f64::from(gr.first_row) * g.pitch + h / 2.0;
                let _ = ctx.fill_text(&format!("app {}", gr.app_server + 1), 4.0 * dpr, y * dpr);
            }
        }
    }

    // Bars, one path per colour; the rarer, more important colours last so they stay on top
    // when thousands of rows share a pixel.
    for (mark, colour) in LAYERS {
        let rects: Vec<_> = t
            .bars
            .iter()
            .filter(|b| b.mark == mark)
            .map(|b| {
                let x0 = g.x(&axis, b.start_us);
                let x1 = g.x(&axis, b.end_us);
                (x0, g.y(b.row) - g.thickness / 2.0, x1 - x0, g.thickness)
            })
            .collect();
        p.fill(colour, &rects);
    }

    // Zoomed: bars that go on past the right edge fade out there and end in an arrow, in their
    // colour, in the gutter (a sliver per row when rows are too thin for a triangle).
    if t.window_end_us.is_some() {
        const FADE: f64 = 16.0;
        for i in 0..8 {
            let alpha = f64::from(i + 1) * 0.1;
            let x = g.right - FADE + f64::from(i) * FADE / 8.0;
            p.fill(
                &format!("rgba(10, 12, 17, {alpha:.2})"),
                &[(x, top, FADE / 8.0, bottom - top)],
            );
        }
        let clipped = |mark: Mark| {
            t.bars
                .iter()
                .filter(move |b| b.mark == mark && b.end_us > axis.end_us)
        };
        for (mark, colour) in LAYERS {
            if g.thickness >= 4.0 {
                ctx.set_fill_style_str(colour);
                ctx.begin_path();
                for b in clipped(mark) {
                    let (y, h) = (g.y(b.row), g.thickness.min(9.0) / 2.0);
                    ctx.move_to((g.right + 2.0) * dpr, (y - h) * dpr);
                    ctx.line_to((g.right + 2.0 + h * 1.4) * dpr, y * dpr);
                    ctx.line_to((g.right + 2.0) * dpr, (y + h) * dpr);
                    ctx.close_path();
                }
                ctx.fill();
            } else {
                let rects: Vec<_> = clipped(mark)
                    .map(|b| {
                        (
                            g.right + 2.0,
                            g.y(b.row) - g.thickness / 2.0,
                            5.0,
                            g.thickness,
                        )
                    })
                    .collect();
                p.fill(colour, &rects);
            }
        }
    }

    // Reads: an upright tick as tall as the row, cut out of its bar by a dark edge so it shows
    // on red and green alike. Dense runs (rows under two pixels) skip the edge: it would
    // blacken the picture.
    let tick_h = g.pitch.max(1.0);
    let ticks: Vec<_> = t
        .bars
        .iter()
        .filter_map(|b| {
            let read = b.read_us.filter(|&us| us <= axis.end_us)?;
            Some((g.x(&axis, read), g.y(b.row) - tick_h / 2.0))
        })
        .collect();
    if g.pitch >= 2.0 {
        let halo: Vec<_> = ticks
            .iter()
            .map(|&(x, y)| (x - 2.5, y, 5.0, tick_h))
            .collect();
        p.fill(BG, &halo);
    }
    let reads: Vec<_> = ticks
        .iter()
        .map(|&(x, y)| (x - 1.5, y, 3.0, tick_h))
        .collect();
    p.fill(BLUE, &reads);

    // The moment the real stock ran out, with its label on whichever side has room.
    if let (Some(x), Some(us)) = (out_x, t.race.stock_out_us) {
        p.fill(TEXT, &[(x - 1.0, top - 6.0, 2.0, bottom - top + 6.0)]);
        p.font(13.0, true);
        ctx.set_fill_style_str(TEXT);
        ctx.set_text_baseline("middle");
        let label = format!("stock ran out · {}", micros(us));
        if x < g.width * 0.55 {
            ctx.set_text_align("left");
            let _ = ctx.fill_text(&label, (x + 6.0) * dpr, (top - 12.0) * dpr);
        } else {
            ctx.set_text_align("right");
            let _ = ctx.fill_text(&label, (x - 6.0) * dpr, (top - 12.0) * dpr);
        }
    }
    Some(g.height)
}

/// Draws in CSS px onto a canvas sized in device px, snapping every edge to a device pixel.
struct Painter<'a> {
    ctx: &'a CanvasRenderingContext2d,
    dpr: f64,
}

impl Painter<'_> {
    /// Fill `rects` (x, y, w, h in CSS px) in one path. Each is at least one device pixel each way,
    /// so a bar or a row thinner than a pixel still shows.
    fn fill(&self, colour: &str, rects: &[(f64, f64, f64, f64)]) {
        if rects.is_empty() {
            return;
        }
        let d = self.dpr;
        self.ctx.set_fill_style_str(colour);
        self.ctx.begin_path();
        for &(x, y, w, h) in rects {
            let (x0, y0) = ((x * d).round(), (y * d).round());
            let w = ((x + w) * d).round().max(x0 + 1.0) - x0;
            let h = ((y + h) * d).round().max(y0 + 1.0) - y0;
            self.ctx.rect(x0, y0, w, h);
        }
        self.ctx.fill();
    }

    /// Set the font, `px` CSS px tall.
    fn font(&self, px: f64, bold: bool) {
        let weight = if bold { "700 " } else { "" };
        self.ctx
            .set_font(&format!("{weight}{}px {FONT}", (px * self.dpr).round()));
    }
}
