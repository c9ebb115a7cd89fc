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
    // While step-through mode is open the counters are its own (the stock is the real key,
    // read after every command); before any run, the stock the form would start with.
    let tally = move || {
        session.page.with(|p| match (&p.step, &p.run) {
            (Some(s), _) => step::tally::counters(s),
            (None, Some(r)) => r.counters(),
            (None, None) => Tally {
                stock_remaining: session.knobs.with(|k| i64::from(k.stock)),
                ..Tally::default()
            },
        })
    };
    let stock = move || {
        session.page.with(|p| match (&p.step, &p.run) {
            (Some(s), _) => s.config.race.stock,
            (None, Some(r)) => r.config.race.stock,
            (None, None) => session.knobs.with(|k| k.stock),
        })
    };
    let source = move || {
        session.page.with(|p| match (&p.step, &p.run) {
            (Some(_), _) => "step-through: the real key, after every command",
            (None, Some(r)) if r.summary().is_some() => "read back from Redis",
            (None, Some(r)) if r.is_running() => "live: the last write seen",
            (None, Some(_)) => "from outcomes received",
            (None, None) => "before any run",
        })
    };
    let errors = move || tally().errors;
    let gave_up = move || tally().gave_up;
    let in_doubt = move || tally().in_doubt_units;
    let false_sold_out = move || tally().false_sold_out;
    // The counter can look healthy after a lost update: say what it should have read.
    let should_be = move || {
        session.page.with(|p| {
            p.run
                .as_ref()
                .filter(|_| p.step.is_none())
                .and_then(|r| r.summary())
                .filter(|s| s.lost_updates != 0)
                .map(|s| format!("should read {}", verdict::expected_stock(s)))
        })
    };
    // The verdict is about the run; step-through mode has its own lines in its panel.
    let verdict = move || {
        session.page.with(|p| {
            let run = p.run.as_ref().filter(|_| p.step.is_none());
            run.and_then(|r| r.summary()).map(|s| {
                let who = strategies::short_label(p.known(), &s.strategy);
                (verdict::sentence(s, &who), verdict::kind(s))
            })
        })
    };
    view! {
        <div class="counters">
            <div class="stock-counter" class:negative=move || tally().stock_remaining < 0>
                <span class="caption">"Current stock"</span>
                <span class="stock-figure">
                    <span class="big" data-testid="stock-remaining">{move || tally().stock_remaining}</span>
                    <span class="of">" / " {stock}</span>
                </span>
                <span class="caption small">{source}</span>
                {move || should_be().map(|t| view! { <span class="should-be">{t}</span> })}
            </div>
            <Stat label="Units sold" testid="units-sold" value=Signal::derive(move || tally().units_sold as i64) tone="neutral"/>
            <Stat
                label="Orders accepted"
                testid="orders-accepted"
                value=Signal::derive(move || tally().orders_accepted.into())
                tone="neutral"
            />
            <Stat
                label="Oversold units"
                testid="oversold-units"
                value=Signal::derive(move || tally().oversold_units as i64)
                tone="bad"
            />
            <Stat
                label="Lost updates"
                testid="lost-updates"
                value=Signal::derive(move || tally().lost_updates.abs())
                tone="bad"
            />
            <Stat label="Rejected (sold out)" testid="rejected" value=Signal::derive(move || tally().rejected.into()) tone="warn"/>
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
        </div>
        {move || {
            verdict()
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
            <span class="num" data-testid=testid>{move || value.get()}</span>
            <span class="caption">{label}</span>
        </div>
    }
}
