//! Step-through mode, "you are the scheduler": two to four buyers stand ready, and each click
//! (or key 1–4) sends one buyer's next real Redis command. The counter above follows the real
//! key, the tape panel draws the log as it grows, the lines under the buttons tell every click
//! (who sent what, what Redis answered, what it means), and once every buyer is done a nudge
//! says which order of clicks to try next (all read from the state in `model::step`).
//!
//! The open panel is a few dozen nodes drawn afresh from one [`StepView`] on every answer: one
//! reactive closure instead of a signal per node keeps the page small, and nothing on screen
//! can lag the state.

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::model::step::buyers::Button;
use crate::model::step::keys::{self, Press};
use crate::model::step::narrate::Told;
use crate::model::step::view::StepView;
use crate::session::{Link, Session};
use crate::socket::Socket;

/// The buyer counts step-through offers (the server's limits: 2 to 4).
const BUYER_CHOICES: [u32; 3] = [2, 3, 4];

/// The step-through panel: the way in when closed; the controls, the buyers and the story
/// when open.
#[component]
pub fn StepThrough() -> impl IntoView {
    let session = expect_context::<Session>();
    let socket = expect_context::<Socket>();
    let log_len = move || session.page.with(|p| p.step.as_ref().map(|s| s.log.len()));
    // Syncing with the outside world (the window's scroll): once the panel opens and after
    // each answer, the counter (the real key), the buyers and the tape are brought on screen
    // together, and under them what the click added (its line, or the nudge once every buyer
    // is done) as far as it fits, after the panel has been redrawn (the next frame).
    Effect::new(move |_| {
        if log_len().is_some() {
            crate::web::next_frame(Box::new(|| {
                crate::web::keep_group_in_view(
                    ".stage .counters",
                    &[
                        ".step-buyers",
                        ".tape-canvas",
                        ".step-story li.latest",
                        ".step-nudge",
                    ],
                );
            }));
        }
    });
    // Derived, not memoised: while step mode is open the page changes with each answer, and
    // redrawing a few dozen nodes costs less than the code a Memo of the view would add.
    // The open panel is a chunk of its own (`components::lazy`), loaded when it first opens.
    let is_open = Memo::new(move |_| {
        session
            .page
            .with(|p| p.step.is_some() && p.step_log().is_some())
    });
    let body = move || {
        if is_open.get() {
            // Keys stay in the main wasm: the chunk must not be the only user of a closure
            // type wasm-bindgen describes (scripts/split-lab.sh).
            view! {
                {crate::components::lazy::when_loaded(crate::components::lazy::step_open)}
                <Keys/>
            }
            .into_any()
        } else {
            closed_panel(session, socket).into_any()
        }
    };
    view! {
        <section
            class="panel step-through"
            data-testid="step-panel"
            data-open=move || log_len().is_some().to_string()
            data-log-len=move || log_len().unwrap_or(0)
            aria-label="Step through a race"
        >
            {body}
        </section>
    }
}

/// The way in: one unit, two buyers, the first strategy the server features.
fn closed_panel(session: Session, socket: Socket) -> impl IntoView {
    let first = session.page.with(StepView::first);
    let ready = session.link.get() == Link::Open && first.is_some();
    view! {
        <div class="panel-head">
            <h2>"You are the scheduler"</h2>
            <button
                class="step-enter"
                data-testid="step-mode"
                disabled=!ready
                on:click=move |_| {
                    if let Some(name) = &first {
                        socket.step_open(name, Some(1), Some(2));
                    }
                }
            >
                "Step through it yourself"
            </button>
        </div>
        <p class="muted step-intro">
            "Two buyers, one unit. You decide whose command Redis runs next: every click sends one real command to the real Redis, and the tape below draws it."
        </p>
    }
}

/// The open panel, drawn afresh from the page's [`StepView`] on every answer.
pub fn open() -> impl IntoView {
    let session = expect_context::<Session>();
    let socket = expect_context::<Socket>();
    move || {
        session
            .page
            .with(StepView::of)
            .map(|v| open_panel(v, socket))
    }
}

/// The open panel, drawn from `v`.
fn open_panel(v: StepView, socket: Socket) -> impl IntoView {
    let reopen = Reopen {
        strategy: v.strategy.clone(),
        stock: v.stock,
        buyers: v.buyers,
        socket,
    };
    view! {
        <div class="panel-head">
            <h2>"You are the scheduler"</h2>
            <button class="step-leave" data-testid="step-close" on:click=move |_| socket.step_close()>
                "Leave step-through"
            </button>
        </div>
        <div class="step-controls">
            {strategy_choice(v.choices, v.strategy, reopen.clone())}
            {stock_box(v.stock, v.max_stock, reopen.clone())}
            {buyer_counts(v.buyers, reopen)}
            <button class="step-reset" data-testid="step-reset" on:click=move |_| socket.step_reset()>
                "Reset"
            </button>
        </div>
        <div class="step-buyers">{v.buttons.into_iter().map(|b| buyer_button(b, socket)).collect_view()}</div>
        {told(v.told)}
        {v.nudge.map(|l| view! {
            <p class="step-nudge" data-testid="step-nudge" data-tone=l.tone.as_str() role="status">{l.text}</p>
        })}
        <p class="muted step-hint">
            "Keys " <kbd>"1"</kbd> "–" <kbd>"4"</kbd>
            " press the buttons. The stock counter above is the real key, read after every command."
        </p>
    }
}

/// Every click in one line, the latest marked: who, the call and its answer, what it means.
fn told(lines: Vec<Told>) -> impl IntoView {
    let last = lines.len().checked_sub(1);
    view! {
        <ol class="step-story" data-testid="step-story" aria-live="polite">
            {lines
                .into_iter()
                .map(|t| {
                    let latest = Some(t.at) == last;
                    view! {
                        <li data-tone=t.tone.as_str() data-testid="step-line" data-buyer=t.buyer class:latest=latest>
                            <code class="sl-said">{format!("#{} {}", t.buyer, t.said)}</code>
                            " "
                            <span class="sl-text">{t.text}</span>
                        </li>
                    }
                })
                .collect_view()}
        </ol>
    }
}

/// Opens a fresh step session with one knob changed and the others kept.
#[derive(Clone)]
struct Reopen {
    strategy: String,
    stock: u32,
    buyers: u32,
    socket: Socket,
}

impl Reopen {
    /// Open a session with the knobs given here and the current ones for the rest.
    fn send(&self, s: Option<String>, k: Option<u32>, b: Option<u32>) {
        let name = s.unwrap_or_else(|| self.strategy.clone());
        self.socket.step_open(
            &name,
            Some(k.unwrap_or(self.stock)),
            Some(b.unwrap_or(self.buyers)),
        );
    }
}

/// The strategy to step, among the `choices`; `current` is selected.
fn strategy_choice(
    choices: Vec<(String, String, bool)>,
    current: String,
    reopen: Reopen,
) -> impl IntoView {
    let options = choices
        .into_iter()
        .map(|(name, label, available)| {
            let selected = name == current;
            view! { <option value=name selected=selected disabled=!available>{label}</option> }
        })
        .collect_view();
    view! {
        <label class="step-knob">
            <span>"Strategy"</span>
            <select
                data-testid="step-strategy"
                on:change=move |ev| reopen.send(Some(event_target_value(&ev)), None, None)
            >
                {options}
            </select>
        </label>
    }
}

/// The units in stock, up to `max_stock`.
fn stock_box(stock: u32, max_stock: u32, reopen: Reopen) -> impl IntoView {
    view! {
        <label class="step-knob">
            <span>"Stock"</span>
            <input
                type="number"
                min="0"
                max=max_stock
                value=stock
                data-testid="step-stock"
                on:change=move |ev| {
                    if let Ok(k) = event_target_value(&ev).trim().parse::<u32>() {
                        reopen.send(None, Some(k.min(max_stock)), None);
                    }
                }
            />
        </label>
    }
}

/// One button per buyer count on offer; `buyers` is pressed.
fn buyer_counts(buyers: u32, reopen: Reopen) -> impl IntoView {
    let counts = BUYER_CHOICES
        .into_iter()
        .map(|n| {
            let reopen = reopen.clone();
            view! {
                <button
                    class=if n == buyers { "filter on" } else { "filter" }
                    aria-pressed=(n == buyers).to_string()
                    data-testid=format!("step-buyers-{n}")
                    on:click=move |_| reopen.send(None, None, Some(n))
                >
                    {n}
                </button>
            }
        })
        .collect_view();
    view! {
        <div class="step-knob" role="group" aria-label="Buyers">
            <span>"Buyers"</span>
            <div class="filters">{counts}</div>
        </div>
    }
}

/// One buyer's button: who, its next command (or how it ended), and how many it sent.
fn buyer_button(b: Button, socket: Socket) -> impl IntoView {
    let n = b.buyer;
    let done = b.ended.is_some() || b.next.is_none();
    let (what, line) = match (b.ended, b.next) {
        (Some(ended), _) => ("done", ended),
        (None, Some(next)) => ("next", next),
        (None, None) => ("next", "…".to_string()),
    };
    let sent = match b.sent {
        0 => "nothing sent yet".to_string(),
        1 => "1 command sent".to_string(),
        n => format!("{n} commands sent"),
    };
    view! {
        <button
            class="step-buyer"
            data-tone=b.tone
            data-testid=format!("step-buyer-{n}")
            disabled=done
            on:click=move |_| socket.step(n)
        >
            <span class="sb-who">{format!("Buyer {n}")} <kbd>{n}</kbd></span>
            <span class="sb-what">{what}</span>
            <code class="sb-line">{line}</code>
            <span class="sb-sent">{sent}</span>
        </button>
    }
}

/// Keys 1–4 press the buttons while step mode is open (not while typing in a field). Listening
/// to the window is syncing with the outside world; the listener lives as long as the open
/// panel does.
#[component]
fn Keys() -> impl IntoView {
    let session = expect_context::<Session>();
    let socket = expect_context::<Socket>();
    let handle = window_event_listener(ev::keydown, move |ev| {
        let typing = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok())
            .is_some_and(|el| keys::takes_typing(&el.tag_name()) || el.is_content_editable());
        let key = ev.key();
        let press = Press {
            key: &key,
            modifier: ev.ctrl_key() || ev.alt_key() || ev.meta_key(),
            typing,
            repeat: ev.repeat(),
        };
        // Which buyers can still move; a done buyer's key does nothing, like its button.
        let ready: Vec<bool> = session.page.with_untracked(|p| {
            p.step.as_ref().map_or_else(Vec::new, |s| {
                s.buyers
                    .iter()
                    .map(|b| b.outcome.is_none() && b.next.is_some())
                    .collect()
            })
        });
        if let Some(n) = keys::buyer_for(press, ready.len()) {
            ev.prevent_default();
            if ready[(n - 1) as usize] {
                socket.step(n);
            }
        }
    });
    on_cleanup(move || handle.remove());
}
