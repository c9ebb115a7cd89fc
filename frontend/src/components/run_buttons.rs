//! The run buttons (big ones for the strategies the server features, small ones for the rest,
//! one to race them all), the run's progress, its status hook for tests, and a cancel button
//! while it runs. Which strategies exist, and every word on their buttons, comes from `hello`:
//! its race strategies, or its checkout strategies when the scenario switch says checkout.

use leptos::prelude::*;
use oversold_protocol::StrategyInfo;

use crate::components::replay;
use crate::model::checkout::clock::{real_ms, real_span, shop_span};
use crate::model::page::{PageState, Pending};
use crate::model::run::{Phase, RunModel};
use crate::model::strategies;
use crate::model::text::{millis, thousands};
use crate::session::{Link, Session};
use crate::socket::Socket;

/// How many big buttons to hold a place for until `hello` says which strategies are featured.
const PLACEHOLDERS: usize = 2;

/// Every run button, plus the status line under them.
#[component]
pub fn RunButtons() -> impl IntoView {
    let session = expect_context::<Session>();
    // A Memo: the page state changes with every outcomes frame, the lists only with `hello`
    // (and the scenario switch).
    let names = Memo::new(move |_| {
        let scenario = session.knobs.with(|k| k.scenario);
        session.page.with(|p| {
            let (featured, others): (Vec<&StrategyInfo>, Vec<&StrategyInfo>) =
                p.offered(scenario).iter().partition(|s| s.about.featured);
            let names = |list: Vec<&StrategyInfo>| -> Vec<String> {
                list.iter().map(|s| s.about.name.to_string()).collect()
            };
            (names(featured), names(others))
        })
    });
    let greeted = move || session.page.with(|p| p.hello.is_some());
    let featured = move || names.with(|n| n.0.clone());
    let others = move || names.with(|n| n.1.clone());
    view! {
        <div class="run-buttons">
            <Show when=greeted fallback=|| (0..PLACEHOLDERS).map(|_| view! { <Placeholder/> }).collect_view()>
                <For each=featured key=|name: &String| name.clone() let:name>
                    <RunButton name=name primary=true/>
                </For>
            </Show>
        </div>
        <CompareButton/>
        <Show when=move || names.with(|n| !n.1.is_empty())>
            <div class="run-buttons more">
                <span class="more-label">"More strategies:"</span>
                <For each=others key=|name: &String| name.clone() let:name>
                    <RunButton name=name primary=false/>
                </For>
            </div>
        </Show>
        <RunStatus/>
    }
}

/// A big button's place, held until `hello` says which strategies the server features.
#[component]
fn Placeholder() -> impl IntoView {
    view! {
        <button class="run primary placeholder" disabled=true data-testid="run-placeholder">
            <span class="run-label">"Connecting…"</span>
        </button>
    }
}

/// One strategy's button. It shows its own run's progress while that run is in flight.
///
/// Two closures draw it: one for its state (class, tooltip, disabled) and one for what it
/// says. Each reads the strategy's entry through a Memo (it changes only with `hello`), and
/// rebuilding a button in place is cheaper, in wasm bytes too, than a closure per attribute.
#[component]
fn RunButton(
    /// Strategy name sent in `start_run`, as `hello` listed it; also names the test hook
    /// `run-<name>`.
    #[prop(into)]
    name: String,
    /// Big featured button, or a small one for the other strategies.
    primary: bool,
) -> impl IntoView {
    let session = expect_context::<Session>();
    let socket = expect_context::<Socket>();
    let testid = format!("run-{name}");
    // Stored, so the closures below capture only `Copy` handles and can be shared freely.
    let name = StoredValue::new(name);
    let info = Memo::new(move |_| {
        name.with_value(|name| {
            session
                .page
                .with(|p| strategies::find(p.known(), name).cloned())
        })
    });
    let progress = move || run_progress(session, name);
    let state = Memo::new(move |_| {
        let info = info.get();
        let busy = session.link.get() != Link::Open || session.page.with(PageState::busy);
        button_state(info.as_ref(), primary, busy, progress().is_some())
    });
    let inside = move || button_face(info.get(), name, primary, progress());
    let on_click = move |_| name.with_value(|name| socket.start_run(name));
    view! {
        <button
            class=move || state.with(|s| s.0.clone())
            data-testid=testid
            title=move || state.with(|s| s.1.clone())
            disabled=move || state.with(|s| s.2)
            on:click=on_click
        >
            {inside}
        </button>
    }
}

/// (answered, total) while `name`'s run is in flight; `Some((0, 0))` while it waits for the
/// server to start it.
fn run_progress(session: Session, name: StoredValue<String>) -> Option<(usize, usize)> {
    name.with_value(|name| {
        session.page.with(|p| match (&p.run, &p.pending) {
            (Some(r), _) if r.is_running() && &r.config.strategy == name => {
                Some((r.finished_buyers(), r.config.race.buyers as usize))
            }
            (_, Some(Pending::Run(n))) if n == name => Some((0, 0)),
            _ => None,
        })
    })
}

/// Why the strategy cannot run here, if it cannot. Said on the button itself, not only in a
/// tooltip: phones and projectors have no hover.
fn unavailable_reason(s: &StrategyInfo) -> Option<String> {
    (!s.available).then(|| {
        s.unavailable_reason
            .clone()
            .unwrap_or_else(|| "Not available on this server".into())
    })
}

/// A run button's class, tooltip and whether it is disabled, for strategy `info` (unknown
/// until `hello`), while the page is `busy` or not and its own run `active` or not.
fn button_state(
    info: Option<&StrategyInfo>,
    primary: bool,
    busy: bool,
    active: bool,
) -> (String, String, bool) {
    let mut class = String::from(if primary {
        "run primary"
    } else {
        "run secondary"
    });
    let is_unsafe = info.is_some_and(|s| s.about.unsafe_by_design);
    class.push_str(if is_unsafe { " unsafe" } else { " safe" });
    if active {
        class.push_str(" active");
    }
    let why = info.and_then(unavailable_reason);
    if why.is_some() {
        class.push_str(" unavailable");
    }
    let title = why.or_else(|| info.map(|s| s.about.description.to_string()));
    let disabled = busy || !info.is_some_and(|s| s.available);
    (class, title.unwrap_or_default(), disabled)
}

/// What a run button says: the strategy's label and category, why it cannot run, its run's
/// progress, or (on a big button) what the strategy does.
fn button_face(
    info: Option<StrategyInfo>,
    name: StoredValue<String>,
    primary: bool,
    progress: Option<(usize, usize)>,
) -> impl IntoView {
    let label = info
        .as_ref()
        .map_or_else(|| name.get_value(), |s| s.about.label.to_string());
    let category = info.as_ref().map(|s| s.about.category.badge());
    let why = info.as_ref().and_then(unavailable_reason);
    let description = info.as_ref().map(|s| s.about.description.to_string());
    let (text, pct, desc) = match progress {
        Some((_, 0)) => (Some("Starting…".to_string()), None, None),
        Some((done, total)) => (
            Some(format!(
                "{} / {} buyers",
                thousands(done as i64),
                thousands(total as i64)
            )),
            Some(done * 100 / total),
            None,
        ),
        None => (None, None, description.filter(|_| primary && why.is_none())),
    };
    view! {
        <span class="run-label">{label}</span>
        {category.map(|c| view! { <span class="cat-badge" data-category=c>{c}</span> })}
        {why.map(|why| view! { <span class="run-why">{why}</span> })}
        {text.map(|t| view! { <span class="run-progress">{t}</span> })}
        {pct.map(|pct| view! { <span class="bar"><i style:width=format!("{pct}%")></i></span> })}
        {desc.map(|d| view! { <span class="run-desc">{d}</span> })}
    }
}

/// Race every available strategy, one after another with the same seed; shows which one is
/// racing (`3 / 7: watch`) while the comparison runs. Drawn like [`RunButton`]: one closure
/// for its state, one for what it says.
#[component]
fn CompareButton() -> impl IntoView {
    let session = expect_context::<Session>();
    let socket = expect_context::<Socket>();
    // (available strategies, progress text and percent while racing, waiting to start)
    let state = Memo::new(move |_| {
        let open = session.link.get() == Link::Open;
        let scenario = session.knobs.with(|k| k.scenario);
        session.page.with(|p| {
            let available = p.offered(scenario).iter().filter(|s| s.available).count();
            let progress = p.compare.as_ref().filter(|c| c.is_running()).map(|c| {
                let pct = (c.results.len() * 100)
                    .checked_div(c.strategies.len())
                    .unwrap_or(100);
                (c.progress_text(), pct)
            });
            let waiting = p.pending == Some(Pending::Compare);
            let disabled = !open || p.busy() || available < 2;
            (available, progress, waiting, disabled)
        })
    });
    let inside = move || {
        let (available, progress, waiting, _) = state.get();
        let label = match available {
            0 => "Compare every strategy".to_string(),
            n => format!("Compare all {n} strategies"),
        };
        let (text, pct, desc) = match (progress, waiting) {
            (Some((text, pct)), _) => (Some(text), Some(pct), None),
            (None, true) => (Some("Starting…".to_string()), None, None),
            (None, false) => (
                None,
                None,
                Some("Same buyers, same seed, every strategy: then a scoreboard."),
            ),
        };
        view! {
            <span class="run-label">{label}</span>
            {text.map(|t| view! { <span class="run-progress" data-testid="compare-progress">{t}</span> })}
            {pct.map(|pct| view! { <span class="bar"><i style:width=format!("{pct}%")></i></span> })}
            {desc.map(|d| view! { <span class="run-desc">{d}</span> })}
        }
    };
    view! {
        <div class="run-buttons compare-row">
            <button
                class=move || state.with(|s| if s.1.is_some() || s.2 { "run compare active" } else { "run compare" })
                data-testid="run-compare"
                title="Race every available strategy with these settings and the same seed, one after another, then score them side by side."
                disabled=move || state.with(|s| s.3)
                on:click=move |_| socket.start_compare()
            >
                {inside}
            </button>
        </div>
    }
}

/// `idle` / `running` / `finished` (or `interrupted`, `failed`) for the current run, with its id,
/// plus a cancel button while it runs, and "run it again" once it is over (`replay::bar`).
/// One closure draws both, in place.
#[component]
fn RunStatus() -> impl IntoView {
    let session = expect_context::<Session>();
    let socket = expect_context::<Socket>();
    move || {
        let linked = session.from_link.get();
        let open = session.link.get() == Link::Open;
        session.page.with(|p| {
            let status = p.run.as_ref().map_or("idle", |r| r.phase.as_str());
            let run_id = p.run.as_ref().map(|r| r.run_id.clone()).unwrap_or_default();
            let detail = match &p.run {
                None => "Pick a strategy to send the buyers in.".to_string(),
                Some(r) => match &r.phase {
                    Phase::Interrupted => format!(
                        "The connection dropped mid-run: these are the {} of {} outcomes that arrived.",
                        thousands(r.finished_buyers() as i64),
                        thousands(r.config.race.buyers.into())
                    ),
                    Phase::Failed(why) => format!("The run failed: {why}"),
                    Phase::Cancelled(_) => format!(
                        "Cancelled after {} of {} buyers answered; the rest were skipped.",
                        thousands(r.finished_buyers() as i64),
                        thousands(r.config.race.buyers.into())
                    ),
                    _ => describe(r, &strategies::label(p.known_for(Some(r.config.race.scenario())), &r.config.strategy)),
                },
            };
            let comparing = p
                .compare
                .as_ref()
                .filter(|c| c.is_running())
                .map(|c| format!("Comparing {} · ", c.progress_text()));
            // The seed is for reproducing a run, not for reading aloud: keep it in the tooltip.
            let seed = p.run.as_ref().map(|r| format!("seed {}", r.config.race.seed));
            let cancel = p.run.as_ref().is_some_and(RunModel::is_running) || p.comparing();
            view! {
                <div class="run-status-line">
                    <span class="run-status" data-testid="run-status" data-run-id=run_id data-state=status>
                        {status}
                    </span>
                    <span class="run-detail" title=seed>{comparing} {detail}</span>
                    {cancel.then(|| view! {
                        <button class="cancel" data-testid="cancel-run" on:click=move |_| socket.cancel_run()>
                            "Cancel"
                        </button>
                    })}
                </div>
                {replay::bar(p, linked, open, socket)}
            }
        })
    }
}

/// One line about the current run: its button label, then `50 buyers · 10 in stock · …`.
fn describe(run: &RunModel, label: &str) -> String {
    let c = &run.config.race;
    let qty = match c.max_qty {
        Some(m) => format!("1 to {m} units each"),
        None if c.qty == 1 => "1 unit each".to_string(),
        None => format!("{} units each", c.qty),
    };
    // A checkout: its clock and its hold, in shop time and in the room's.
    let checkout = c.checkout().map_or_else(String::new, |k| {
        format!(
            " · hold {} (×{}: {} real)",
            shop_span(k.hold_ttl_ms.into()),
            thousands(k.time_scale.into()),
            real_span(real_ms(k.hold_ttl_ms.into(), k.time_scale))
        )
    });
    format!(
        "{label} · {} buyers · {} in stock · {qty} · {} app servers{}{}{checkout}",
        thousands(c.buyers.into()),
        thousands(c.stock.into()),
        c.app_servers,
        if c.race_window_ms > 0 {
            format!(" · race window {}", millis(c.race_window_ms))
        } else {
            String::new()
        },
        if c.arrival_spread_ms > 0 {
            format!(" · spread {}", millis(c.arrival_spread_ms))
        } else {
            String::new()
        },
    )
}
