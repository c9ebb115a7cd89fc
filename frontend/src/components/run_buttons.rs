//! The run buttons (big ones for the strategies the server features, small ones for the rest,
//! one to race them all), the run's progress, its status hook for tests, and a cancel button
//! while it runs. Which strategies exist, and every word on their buttons, comes from `hello`.

use leptos::prelude::*;
use oversold_protocol::StrategyInfo;

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
    // A Memo: the page state changes with every outcomes frame, the lists only with `hello`.
    let names = Memo::new(move |_| {
        session.page.with(|p| {
            let (featured, others): (Vec<&StrategyInfo>, Vec<&StrategyInfo>) =
                p.strategies().iter().partition(|s| s.about.featured);
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
    // A Memo: five closures below read it, and the page state changes with every frame while
    // the strategy's entry changes only with `hello`.
    let info = Memo::new(move |_| {
        name.with_value(|name| {
            session
                .page
                .with(|p| strategies::find(p.strategies(), name).cloned())
        })
    });
    let info = move || info.get();
    let label = move || {
        info()
            .map(|s| s.about.label.into_owned())
            .unwrap_or_else(|| name.get_value())
    };
    let category = move || info().map(|s| s.about.category.as_str());
    let description = move || match info() {
        Some(StrategyInfo {
            available: false,
            unavailable_reason,
            ..
        }) => unavailable_reason.unwrap_or_else(|| "Not available on this server".into()),
        Some(s) => s.about.description.into_owned(),
        None => String::new(),
    };
    let is_unsafe = move || info().is_some_and(|s| s.about.unsafe_by_design);
    // Said on the button itself, not only in a tooltip: phones and projectors have no hover.
    let unavailable = move || {
        info().filter(|s| !s.available).map(|s| {
            s.unavailable_reason
                .unwrap_or_else(|| "Not available on this server".into())
        })
    };
    let disabled = move || {
        session.link.get() != Link::Open
            || session.page.with(PageState::busy)
            || !info().is_some_and(|s| s.available)
    };
    // (answered, total) while this button's run is in flight.
    let progress = move || {
        name.with_value(|name| {
            session.with_run(|r| {
                r.filter(|r| r.is_running() && &r.config.strategy == name)
                    .map(|r| (r.finished_buyers(), r.config.race.buyers))
            })
        })
    };
    let waiting = move || {
        name.with_value(|name| {
            session
                .page
                .with(|p| matches!(&p.pending, Some(Pending::Run(n)) if n == name))
        })
    };
    let class = if primary {
        "run primary"
    } else {
        "run secondary"
    };
    let on_click = move |_| name.with_value(|name| socket.start_run(name));
    view! {
        <button
            class=class
            class:unsafe=is_unsafe
            class:safe=move || !is_unsafe()
            class:active=move || progress().is_some() || waiting()
            class:unavailable=move || unavailable().is_some()
            data-testid=testid
            title=description
            disabled=disabled
            on:click=on_click
        >
            <span class="run-label">{label}</span>
            {move || category().map(|c| view! { <span class="cat-badge" data-category=c>{c}</span> })}
            {move || unavailable().map(|why| view! { <span class="run-why">{why}</span> })}
            {move || match (progress(), waiting()) {
                (Some((done, total)), _) => {
                    let pct = if total == 0 { 100 } else { done * 100 / total as usize };
                    view! {
                        <span class="run-progress">
                            {format!("{} / {} buyers", thousands(done as i64), thousands(total.into()))}
                        </span>
                        <span class="bar"><i style:width=format!("{pct}%")></i></span>
                    }
                        .into_any()
                }
                (None, true) => view! { <span class="run-progress">"Starting…"</span> }.into_any(),
                (None, false) if primary => view! { <span class="run-desc">{description}</span> }.into_any(),
                (None, false) => ().into_any(),
            }}
        </button>
    }
}

/// Race every available strategy, one after another with the same seed; shows which one is
/// racing (`3 / 7: watch`) while the comparison runs.
#[component]
fn CompareButton() -> impl IntoView {
    let session = expect_context::<Session>();
    let socket = expect_context::<Socket>();
    let available = move || {
        session
            .page
            .with(|p| p.strategies().iter().filter(|s| s.available).count())
    };
    let progress = move || {
        session.page.with(|p| {
            p.compare
                .as_ref()
                .filter(|c| c.is_running())
                .map(|c| (c.progress_text(), c.results.len(), c.strategies.len()))
        })
    };
    let waiting = move || session.page.with(|p| p.pending == Some(Pending::Compare));
    let disabled = move || {
        session.link.get() != Link::Open || session.page.with(PageState::busy) || available() < 2
    };
    let label = move || match available() {
        0 => "Compare every strategy".to_string(),
        n => format!("Compare all {n} strategies"),
    };
    view! {
        <div class="run-buttons compare-row">
            <button
                class="run compare"
                class:active=move || progress().is_some() || waiting()
                data-testid="run-compare"
                title="Race every available strategy with these settings and the same seed, one after another, then score them side by side."
                disabled=disabled
                on:click=move |_| socket.start_compare()
            >
                <span class="run-label">{label}</span>
                {move || match (progress(), waiting()) {
                    (Some((text, done, total)), _) => {
                        let pct = (done * 100).checked_div(total).unwrap_or(100);
                        view! {
                            <span class="run-progress" data-testid="compare-progress">{text}</span>
                            <span class="bar"><i style:width=format!("{pct}%")></i></span>
                        }
                            .into_any()
                    }
                    (None, true) => view! { <span class="run-progress">"Starting…"</span> }.into_any(),
                    (None, false) => {
                        view! { <span class="run-desc">"Same buyers, same seed, every strategy: then a scoreboard."</span> }
                            .into_any()
                    }
                }}
            </button>
        </div>
    }
}

/// `idle` / `running` / `finished` (or `interrupted`, `failed`) for the current run, with its id,
/// plus a cancel button while it runs.
#[component]
fn RunStatus() -> impl IntoView {
    let session = expect_context::<Session>();
    let socket = expect_context::<Socket>();
    let status = move || session.with_run(|r| r.map_or("idle", |r| r.phase.as_str()));
    let run_id = move || session.with_run(|r| r.map(|r| r.run_id.clone()).unwrap_or_default());
    let detail = move || {
        session.page.with(|p| match &p.run {
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
                _ => describe(r, &strategies::label(p.strategies(), &r.config.strategy)),
            },
        })
    };
    let comparing = move || {
        session.page.with(|p| {
            p.compare
                .as_ref()
                .filter(|c| c.is_running())
                .map(|c| format!("Comparing {} · ", c.progress_text()))
        })
    };
    // The seed is for reproducing a run, not for reading aloud: keep it in the tooltip.
    let seed = move || session.with_run(|r| r.map(|r| format!("seed {}", r.config.race.seed)));
    let running = move || session.with_run(|r| r.is_some_and(RunModel::is_running));
    view! {
        <div class="run-status-line">
            <span class="run-status" data-testid="run-status" data-run-id=run_id data-state=status>
                {status}
            </span>
            <span class="run-detail" title=seed>{comparing} {detail}</span>
            <Show when=move || running() || session.page.with(PageState::comparing)>
                <button class="cancel" data-testid="cancel-run" on:click=move |_| socket.cancel_run()>
                    "Cancel"
                </button>
            </Show>
        </div>
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
    format!(
        "{label} · {} buyers · {} in stock · {qty} · {} app servers{}{}",
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
