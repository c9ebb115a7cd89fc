//! The live numbers: stock left (going negative when oversold), units sold, orders, oversold,
//! lost updates, rejected; the rarer endings (errors, gave up, units in doubt, refusals while
//! units remained) when they happen; and, once a run is over, its verdict in one sentence.
//!
//! One source of truth: every number here and every number in the verdict comes from the same
//! [`Tally`] (live from the outcomes, then the server's summary), so they cannot disagree.
//! While step-through mode is open they are its numbers instead: the stock is the real key.

use leptos::prelude::*;

use crate::model::run::Counters as Tally;
use crate::model::step;
use crate::model::strategies;
use crate::model::verdict;
use crate::session::Session;

/// The big stock counter and the tallies beside it.
///
/// While a run is in flight the numbers are computed from the outcomes received so far; once
/// `run_finished` arrives they switch to the server's summary, whose final stock Redis reported.
#[component]
pub fn Counters() -> impl IntoView {
    let session = expect_context::<Session>();
    view! {
        <div class="counters">
            <StockCounter session/>
            <Tallies session/>
            <RareTallies session/>
        </div>
        {move || {
            run_verdict(session)
                .map(|(text, kind)| {
                    view! {
                        <p class="run-verdict" data-testid="run-verdict" data-kind=kind.as_str() class:bad=kind.is_bad()>
                            <span class="badge">{kind.as_str()}</span>
                            {text}
                        </p>
                    }
                })
        }}
    }
}

/// The numbers on screen. While step-through mode is open the counters are its own (the stock
/// is the real key, read after every command); before any run, the stock the form would start
/// with.
fn tally(session: Session) -> Tally {
    session.page.with(|p| match (&p.step, &p.run) {
        (Some(s), _) => step::tally::counters(s),
        (None, Some(r)) => r.counters(),
        (None, None) => Tally {
            stock_remaining: session.knobs.with(|k| i64::from(k.stock)),
            ..Tally::default()
        },
    })
}

/// The stock the counted run (or step session, or the form) started with.
fn stock(session: Session) -> u32 {
    session.page.with(|p| match (&p.step, &p.run) {
        (Some(s), _) => s.config.race.stock,
        (None, Some(r)) => r.config.race.stock,
        (None, None) => session.knobs.with(|k| k.stock),
    })
}

/// Where the stock figure comes from, in a few words.
fn source(session: Session) -> &'static str {
    session.page.with(|p| match (&p.step, &p.run) {
        (Some(_), _) => "step-through: the real key, after every command",
        (None, Some(r)) if r.summary().is_some() => "read back from Redis",
        (None, Some(r)) if r.is_running() => "live: the last write seen",
        (None, Some(_)) => "from outcomes received",
        (None, None) => "before any run",
    })
}

/// The counter can look healthy after a lost update: what it should have read.
fn should_be(session: Session) -> Option<String> {
    session.page.with(|p| {
        p.run
            .as_ref()
            .filter(|_| p.step.is_none())
            .and_then(|r| r.summary())
            .filter(|s| s.lost_updates != 0)
            .map(|s| format!("should read {}", verdict::expected_stock(s)))
    })
}

/// The finished run's verdict in one sentence, and its kind. The verdict is about the run;
/// step-through mode has its own lines in its panel.
fn run_verdict(session: Session) -> Option<(String, verdict::Kind)> {
    session.page.with(|p| {
        let run = p.run.as_ref().filter(|_| p.step.is_none());
        run.and_then(|r| Some((r, r.summary()?))).map(|(r, s)| {
            let who =
                strategies::short_label(p.known_for(Some(r.config.race.scenario())), &s.strategy);
            (verdict::sentence(s, &who), verdict::kind(s))
        })
    })
}

/// The stock left out of the stock it started with (red below zero), where that figure comes
/// from, and what it should read after a lost update.
#[component]
fn StockCounter(session: Session) -> impl IntoView {
    view! {
        <div class="stock-counter" class:negative=move || tally(session).stock_remaining < 0>
            <span class="caption">"Current stock"</span>
            <span class="stock-figure">
                <span class="big" data-testid="stock-remaining" data-len=move || tally(session).stock_remaining.to_string().len()>{move || tally(session).stock_remaining}</span>
                <span class="of">" / " {move || stock(session)}</span>
            </span>
            <span class="caption small">{move || source(session)}</span>
            {move || should_be(session).map(|t| view! { <span class="should-be">{t}</span> })}
        </div>
    }
}

/// The tallies every run has: sold, accepted, oversold, lost updates, rejected.
#[component]
fn Tallies(session: Session) -> impl IntoView {
    view! {
        <Stat label="Units sold" testid="units-sold" value=Signal::derive(move || tally(session).units_sold as i64) tone="neutral"/>
        <Stat
            label="Orders accepted"
            testid="orders-accepted"
            value=Signal::derive(move || tally(session).orders_accepted.into())
            tone="neutral"
        />
        <Stat
            label="Oversold units"
            testid="oversold-units"
            value=Signal::derive(move || tally(session).oversold_units as i64)
            tone="bad"
        />
        <Stat
            label="Lost updates"
            testid="lost-updates"
            value=Signal::derive(move || tally(session).lost_updates.abs())
            tone="bad"
        />
        <Stat label="Rejected (sold out)" testid="rejected" value=Signal::derive(move || tally(session).rejected.into()) tone="warn"/>
    }
}

/// The rarer endings, each shown only once it happened: errors, gave up, units in doubt,
/// refusals while units remained.
#[component]
fn RareTallies(session: Session) -> impl IntoView {
    let errors = move || tally(session).errors;
    let gave_up = move || tally(session).gave_up;
    let in_doubt = move || tally(session).in_doubt_units;
    let false_sold_out = move || tally(session).false_sold_out;
    view! {
        <Show when=move || errors() != 0>
            <Stat label="Errors" testid="errors" value=Signal::derive(move || errors().into()) tone="bad"/>
        </Show>
        <Show when=move || gave_up() != 0>
            <Stat
                label="Gave up waiting"
                testid="counter-gave-up"
                value=Signal::derive(move || gave_up().into())
                tone="warn"
            />
        </Show>
        // Units, not orders: what may or may not have left the shelf.
        <Show when=move || in_doubt() != 0>
            <Stat
                label="Units in doubt (no answer)"
                testid="counter-in-doubt"
                value=Signal::derive(move || in_doubt() as i64)
                tone="warn"
            />
        </Show>
        <Show when=move || false_sold_out() != 0>
            <Stat
                label="Refused while units remained"
                testid="counter-false-sold-out"
                value=Signal::derive(move || false_sold_out().into())
                tone="warn"
            />
        </Show>
    }
}

/// One tally.
#[component]
fn Stat(
    /// What is counted.
    label: &'static str,
    /// The test hook; the element carrying it holds the bare number and nothing else.
    testid: &'static str,
    /// The count.
    value: Signal<i64>,
    /// `bad` turns red and `warn` amber once the count is above zero; `neutral` never does.
    tone: &'static str,
) -> impl IntoView {
    view! {
        <div class="stat" data-tone=tone class:lit=move || value.get() != 0>
            // How many characters the number has, for the stage's type to fit its box.
            <span class="num" data-testid=testid data-len=move || value.get().to_string().len()>{move || value.get()}</span>
            <span class="caption">{label}</span>
        </div>
    }
}
