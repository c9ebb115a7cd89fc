//! The Redis tape: the run's commands in the order Redis ran them, rebuilt from its replies
//! (`oversold_protocol::tape`), drawn in one canvas, with a caption counted from the tape. While
//! step-through mode is open it draws the step log instead, in the same picture.
//!
//! Like the race timeline: one `<canvas>`, never a node per command. New outcomes (or a step, a
//! resize, a theme) only ask for a frame; the strip and the drawing happen once in that frame.
//! What to draw is decided by `model::tape_view` (plain Rust, tested on the host); this file
//! measures the canvas, paints the scene and maps its paints to the theme's colours. A tape
//! wider than the panel (a phone, a long race) scrolls sideways, like a tape.

use std::borrow::Cow;

use leptos::ev;
use leptos::html::{Canvas, Div};
use leptos::prelude::*;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::components::frames::FrameRequests;
use crate::components::timeline::paint;
use crate::model::page::PageState;
use crate::model::tape_view::scene::{Paint, scene};
use crate::model::tape_view::strip::{CellKind, Strip};
use crate::model::tape_view::{cache, caption, from_step, from_tape};
use crate::model::theme::{Palette, Theme};
use crate::model::view::View;
use crate::model::view::canvas_zoom;
use crate::session::Session;

#[wasm_bindgen]
extern "C" {
    /// `performance.now()`: to measure the tape's build and drawing (reported on the canvas as
    /// `data-build-ms` and `data-draw-ms`, so a browser test can read them).
    #[wasm_bindgen(js_namespace = performance)]
    fn now() -> f64;
}

/// The tape panel: legend, the canvas, the caption and the notes on what is not drawn.
#[component]
pub fn Tape() -> impl IntoView {
    let session = expect_context::<Session>();
    cache::set_clock(now);
    let drawing = Drawing::new(session);
    drawing.follow_changes();

    // The caption follows every batch: its numbers are the tape caption's (the run's Redis
    // tape, built once per batch and shared with the timeline), or in step mode the state's,
    // the counters' own. Derived, not memoised: the tape is cached, the words are cheap.
    let summary = move || session.page.with(caption_of);
    let text = move || summary().0;
    let tone = move || summary().1;
    let said = move || {
        drawing
            .notes
            .get()
            .into_iter()
            .map(|n| view! { <li>{n}</li> })
            .collect_view()
    };

    view! {
        <section class="panel tape" data-testid="tape" data-mode=move || session.page.with(mode) aria-label="The Redis tape">
            <div class="panel-head">
                <h2>
                    "The Redis tape "
                    <span class="muted tape-sub">"what Redis's one thread ran, in order, from its replies alone"</span>
                </h2>
            </div>
            <Legend/>
            <div class="tape-scroll" node_ref=drawing.scroller>
                <canvas
                    node_ref=drawing.canvas
                    class="tape-canvas"
                    role="img"
                    aria-label=text
                    style:width=move || format!("{}px", drawing.shown_w.get())
                    style:height=move || format!("{}px", drawing.shown_h.get())
                ></canvas>
            </div>
            <p class="tape-caption" data-testid="tape-caption" data-tone=tone aria-live="polite">
                {text}
            </p>
            <ul class="tape-notes muted" data-testid="tape-notes">{said}</ul>
        </section>
    }
}

/// What the panel is showing: `step` (the step log), `run` (a run's tape) or `idle`.
fn mode(p: &PageState) -> &'static str {
    match (&p.step, &p.run) {
        (Some(_), _) => "step",
        (None, Some(_)) => "run",
        (None, None) => "idle",
    }
}

/// The canvas, what it is drawn from, and the bookkeeping that draws it at most once a frame
/// however many batches land before that frame.
#[derive(Clone, Copy)]
struct Drawing {
    session: Session,
    canvas: NodeRef<Canvas>,
    /// The box that scrolls sideways when the tape is wider than the panel.
    scroller: NodeRef<Div>,
    /// The picture's size in CSS px (wider than the panel when the tape scrolls).
    shown_w: RwSignal<f64>,
    shown_h: RwSignal<f64>,
    /// What the tape does not draw, one line each.
    notes: RwSignal<Vec<String>>,
    /// The latest strip.
    strip: StoredValue<Option<Strip>>,
    /// At most one frame at a time, and whether it must rebuild.
    frames: FrameRequests,
}

impl Drawing {
    /// Nothing drawn yet: the first frame builds the strip.
    fn new(session: Session) -> Self {
        Self {
            session,
            canvas: NodeRef::new(),
            scroller: NodeRef::new(),
            shown_w: RwSignal::new(0.0_f64),
            shown_h: RwSignal::new(0.0_f64),
            notes: RwSignal::new(Vec::<String>::new()),
            strip: StoredValue::new(None::<Strip>),
            frames: FrameRequests::default(),
        }
    }

    /// Ask for one frame, unless one is asked for already; `rebuild` makes it rebuild the
    /// strip too.
    fn request(self, rebuild: bool) {
        self.frames.request(rebuild, move || self.frame());
    }

    /// The frame: rebuild the strip if it is stale, paint it at the panel's width, and report
    /// how long that took on the canvas.
    fn frame(self) {
        self.frames.served();
        let (Some(el), Some(wrap)) = (self.canvas.get_untracked(), self.scroller.get_untracked())
        else {
            return;
        };
        let t0 = now();
        if self.frames.take_stale() {
            let (fresh, said) = self.session.page.with_untracked(strip_of);
            self.strip.set_value(fresh);
            self.notes.set(said);
        }
        let width = f64::from(wrap.client_width());
        if width <= 0.0 {
            return; // not laid out (hidden): nothing to measure against
        }
        // On stage the picture is laid out narrower and painted larger, so its smallest label
        // reaches 16 px on a 1080-line projector (`view::canvas_zoom`).
        let view = self.session.view.get_untracked();
        let lines = window()
            .inner_height()
            .ok()
            .and_then(|h| h.as_f64())
            .unwrap_or(0.0);
        let laid_out = |w: f64| self.strip.with_value(|s| s.as_ref().map(|s| scene(s, w)));
        let mut picture = laid_out(width).unwrap_or_default();
        let zoom = picture
            .smallest_label()
            .map_or(1.0, |px| canvas_zoom(view, lines, px));
        if zoom > 1.0 {
            picture = laid_out(width / zoom).unwrap_or_default();
        }
        let palette = self.session.theme.get_untracked().palette();
        paint(&el, &picture, zoom, |p| colour(p, palette));
        let smallest = picture.smallest_label().unwrap_or(0.0) * zoom;
        let _ = el.set_attribute("data-smallest-label-px", &format!("{smallest:.1}"));
        let drawn = now() - t0;
        let built = self.session.page.with_untracked(|p| p.tape_build_ms());
        let _ = el.set_attribute("data-draw-ms", &format!("{drawn:.2}"));
        if let Some(ms) = built {
            let _ = el.set_attribute("data-build-ms", &format!("{ms:.2}"));
        }
        let (shown_w, shown_h) = (picture.width * zoom, picture.height * zoom);
        if shown_w != self.shown_w.get_untracked() {
            self.shown_w.set(shown_w);
        }
        if shown_h != self.shown_h.get_untracked() {
            self.shown_h.set(shown_h);
        }
    }

    /// Ask for a rebuild whenever what the picture depends on changes, and for a redraw
    /// whenever the window is resized.
    fn follow_changes(self) {
        let session = self.session;
        // What the picture depends on: a run changes by new outcomes or a new id, a step
        // session by a click. Syncing with the outside world (the canvas) is what an Effect is
        // for; it keeps the last key and asks for a rebuild only when it changed, so other page
        // changes (a notice, a chip) do not rebuild the strip.
        // The view is in the key too: switching to the stage view changes the panel's width,
        // and the strip must be refitted to it, not left at the old width until the next run.
        Effect::new(move |last: Option<(TapeKey, Theme, View)>| {
            let key = session.page.with(tape_key);
            let now = (key, session.theme.get(), session.view.get());
            if last.as_ref() != Some(&now) {
                self.request(true);
            }
            now
        });
        let resize = window_event_listener(ev::resize, move |_| self.request(false));
        on_cleanup(move || resize.remove());
    }
}

/// The strip to draw, and the notes on what it leaves out: the step log while step mode is
/// open, else the run's tape (if its strategy says how its replies order it).
fn strip_of(p: &PageState) -> (Option<Strip>, Vec<String>) {
    if let Some(state) = &p.step {
        let log = p.step_log().unwrap_or_default();
        let exact = "Exact: each command went through alone, on a click, so this is Redis's order.";
        return (Some(from_step::strip(state, &log)), vec![exact.to_string()]);
    }
    match (&p.run, p.run_tape()) {
        (Some(r), Some(rt)) => {
            let s = from_tape::strip(&rt, r.config.race.app_servers);
            let said = caption::notes(&rt, &s);
            (Some(s), said)
        }
        _ => (None, Vec::new()),
    }
}

/// What the tape was drawn from: the run (id, outcomes) and the step session (id, progress).
type TapeKey = (Option<(String, usize)>, Option<(String, usize)>);

/// The [`TapeKey`] of the page as it is now.
fn tape_key(p: &PageState) -> TapeKey {
    let run = p.run.as_ref().map(|r| (r.run_id.clone(), r.rows.len()));
    let step = p.step.as_ref().map(|s| {
        let done = s.buyers.iter().filter(|b| b.outcome.is_some()).count();
        (s.run_id.clone(), s.log.len() * 8 + done)
    });
    (run, step)
}

/// The caption and its tone (`bad` once units that did not exist were sold).
fn caption_of(p: &PageState) -> (String, &'static str) {
    let tone = |bad: bool| if bad { "bad" } else { "good" };
    if let Some(s) = &p.step {
        let bad = s.units_sold > u64::from(s.config.race.stock);
        return (from_step::caption(s), tone(bad));
    }
    match (&p.run, p.run_tape()) {
        (Some(r), Some(rt)) => (
            caption::caption(&rt, r.is_running()),
            // Acknowledged sales that Redis lost are as bad as units that never existed, and so
            // are buyers refused by an evicted counter while units were unsold.
            tone(
                rt.caption.oversold_units > 0
                    || rt.tape.breaks.iter().any(|b| b.lost_units > 0)
                    || (rt.tape.breaks.iter().any(|b| b.evicted) && rt.caption.refused > 0),
            ),
        ),
        (Some(r), None) if r.at_scale() => (r.at_scale_caption(), "idle"),
        (Some(_), None) => (
            "This strategy did not say how its replies order it, so there is no tape to draw.".to_string(),
            "idle",
        ),
        (None, _) => (
            "Run a strategy: its commands appear here in the order Redis ran them, rebuilt from its replies alone.".to_string(),
            "idle",
        ),
    }
}

/// What the marks mean, drawn with the canvas's own colours (tape.css). A tape whose counter
/// had several lives (Redis came back mid-run) adds what only it draws.
#[component]
fn Legend() -> impl IntoView {
    let session = expect_context::<Session>();
    let breaks = move |evicted: bool| {
        session.page.with(|p| {
            p.step.is_none()
                && p.run_tape()
                    .is_some_and(|rt| rt.tape.breaks.iter().any(|b| b.evicted == evicted))
        })
    };
    // A restart or a promotion (Redis came back with less), or an eviction (the key went).
    let came_back = move || breaks(false);
    let evicted = move || breaks(true);
    view! {
        <p class="tape-legend" aria-hidden="true">
            <span class="tk tk-read">"read"</span>
            <span class="tk tk-stale">"stale read"</span>
            <span class="tk tk-sale">"sale"</span>
            <span class="tk tk-phantom">
                {move || if came_back() { "unit sold a second time" } else { "unit that did not exist" }}
            </span>
            <Show when=came_back>
                <span class="tk tk-lost">"acknowledged, then lost"</span>
                <span class="tk tk-break">"Redis came back"</span>
            </Show>
            <Show when=evicted>
                <span class="tk tk-break">"Redis evicted the counter"</span>
            </Show>
            <span class="tk tk-refused">"refused"</span>
            <span class="tk tk-link">"read → its write"</span>
            <span class="tk tk-shade">"same slot, order unknown"</span>
            <span class="tk tk-approx">"place partly known"</span>
        </p>
    }
}

/// A scene's paint in the theme's canvas palette (`model::theme`).
fn colour(paint: Paint, p: &Palette) -> Cow<'static, str> {
    Cow::Borrowed(match paint {
        Paint::Ground | Paint::OnMark => p.ground,
        Paint::Guide => p.grid,
        Paint::AfterOut => p.after_out,
        Paint::Unordered => p.rule,
        Paint::Fold | Paint::Approx | Paint::Link | Paint::Muted => p.muted,
        Paint::Gap => p.unknown,
        Paint::LinkStale | Paint::CounterNeg => p.oversold,
        Paint::Marker => p.marker,
        Paint::Break => p.unknown,
        Paint::Cell(kind) => match kind {
            CellKind::Read => p.read,
            CellKind::StaleRead | CellKind::Phantom | CellKind::Overwrite => p.oversold,
            CellKind::RefusedRead | CellKind::Refused => p.sold_out,
            CellKind::Sale => p.reserved,
            CellKind::Lost => p.error,
            CellKind::Overshoot | CellKind::Nil => p.error,
            CellKind::Undo => p.unknown,
            CellKind::Other => p.muted,
        },
    })
}
