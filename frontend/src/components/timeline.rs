//! The race timeline: every buyer as a bar from arrival to answer on one time axis, a tick where
//! its read of the stock came back, and a line where the real stock ran out.
//!
//! One `<canvas>`, never one node per buyer. A batch of outcomes (or a resize, or the toggle)
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
use crate::model::timeline::{self, Geometry, RowOrder, TimeAxis, Timeline as Layout};
use crate::session::Session;

// The palette of style.css (`--green`, `--red`, …); a canvas cannot read CSS variables cheaply.
const GREEN: &str = "#3ddc97";
const RED: &str = "#ff5f5f";
const GREY: &str = "#4c5568";
const AMBER: &str = "#ffb84d";
const BLUE: &str = "#7ab0ff";
const TEXT: &str = "#eef1f7";
const MUTED: &str = "#9aa5ba";
const BG: &str = "#0a0c11";
const GRID: &str = "rgba(255, 255, 255, 0.07)";
const AFTER: &str = "rgba(255, 95, 95, 0.045)";
const FONT: &str = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";

/// The panel: legend, order toggle, the canvas and the one-line reading of it.
#[component]
pub fn Timeline() -> impl IntoView {
    let session = expect_context::<Session>();
    let order = RwSignal::new(RowOrder::Arrival);
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
            let fresh = session.run.with_untracked(|r| match r {
                Some(r) => Layout::new(&r.rows, r.config.stock, order),
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

    // Any change to the run (a batch, a new run) or to the order: one frame, later.
    Effect::new(move |_| {
        session.run.track();
        order.track();
        request(true);
    });
    let resize = window_event_listener(ev::resize, move |_| request(false));
    on_cleanup(move || resize.remove());

    // The caption is cheap (one pass, no sort), so it follows every batch without waiting for a frame.
    let caption = Memo::new(move |_| {
        session.run.with(|r| match r {
            Some(r) => timeline::caption(
                &timeline::race(&r.rows, r.config.stock),
                RunModel::is_running(r),
            ),
            None => timeline::caption(&timeline::Race::default(), false),
        })
    });
    let tone = move || {
        session.run.with(|r| {
            r.as_ref().map_or("idle", |r| {
                if r.rows.iter().any(|x| x.mark == Mark::Oversold) {
                    "bad"
                } else {
                    "good"
                }
            })
        })
    };

    view! {
        <section class="panel race-timeline" data-testid="timeline" aria-label="Race timeline">
            <div class="panel-head">
                <h2>"Race timeline"</h2>
                <div class="filters tl-order" role="group" aria-label="Order the rows">
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
                </div>
            </div>
            <p class="tl-legend" aria-hidden="true">
                <span class="lg lg-reserved">"reserved"</span>
                <span class="lg lg-oversold">"oversold"</span>
                <span class="lg lg-soldout">"sold out"</span>
                <span class="lg lg-error">"error"</span>
                <span class="lg lg-read">"read came back"</span>
                <span class="lg lg-out">"stock ran out"</span>
                <span class="muted tl-axis-note">"one row per buyer · time since the gate opened"</span>
            </p>
            <canvas
                node_ref=canvas
                class="tl-canvas"
                role="img"
                aria-label=move || caption.get()
                style:height=move || format!("{}px", height.get())
            ></canvas>
            <p class="tl-caption" data-testid="timeline-caption" data-tone=tone aria-live="polite">
                {move || caption.get()}
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
    let axis = TimeAxis::new(t.last_end_us, g.max_ticks);
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
    for (mark, colour) in [
        (Mark::SoldOut, GREY),
        (Mark::Error, AMBER),
        (Mark::Reserved, GREEN),
        (Mark::Oversold, RED),
    ] {
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

    // Reads: an upright tick as tall as the row, cut out of its bar by a dark edge so it shows
    // on red and green alike. Dense runs (rows under two pixels) skip the edge: it would
    // blacken the picture.
    let tick_h = g.pitch.max(1.0);
    let ticks: Vec<_> = t
        .bars
        .iter()
        .filter_map(|b| Some((g.x(&axis, b.read_us?), g.y(b.row) - tick_h / 2.0)))
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
