//! The reconciliation panel: `stock = available + held + sold + leaked`, live from the
//! `reconciliation` frames, the variance in red when units are unaccounted for; a button
//! that runs the correction (`reconcile`) and what it fixed; after the run, the summary's
//! closing books, which ledger settled the orders, and (after an outage) what the fail mode
//! traded.

use leptos::prelude::*;

use crate::model::checkout::books::{Source, ledger_label, report_sentence};
use crate::model::checkout::clock;
use crate::model::checkout::tradeoff::TradeOff;
use crate::model::run::RunModel;
use crate::model::text::count;
use crate::session::Session;
use crate::socket::Socket;

/// The panel; it follows the run on screen (or the form's stock before any run).
#[component]
pub fn Books() -> impl IntoView {
    let session = expect_context::<Session>();
    let socket = expect_context::<Socket>();
    let books = super::books(session);
    let running = move || session.with_run(|r| r.is_some_and(RunModel::is_running));
    let scale = move || {
        session.with_run(|r| {
            r.and_then(|r| r.config.race.checkout.as_ref())
                .map_or(1, |c| c.time_scale)
        })
    };
    let term = |testid: &'static str, value: Signal<i64>, what: &'static str| {
        view! {
            <span class="term" data-term=what>
                <b data-testid=testid>{move || value.get()}</b>
                " "
                {what}
            </span>
        }
    };
    let num = move |f: fn(&crate::model::checkout::books::Books) -> i64| {
        Signal::derive(move || books.with(f))
    };
    let variance = move || books.with(|b| b.variance());
    let oversold = move || books.with(|b| b.oversold());
    let adds_up = move || books.with(|b| b.adds_up());
    let source = move || match books.with(|b| b.source) {
        Source::Live => "live",
        Source::Final => "final",
    };
    let holds = move || {
        books
            .with(|b| b.holds)
            .map(|h| format!(" ({})", count(h.into(), "hold")))
    };
    let settling = move || books.with(|b| b.settling);
    let backorders = move || books.with(|b| b.backorders);
    // The latest `reconciled` answer, and the summary's closing line once the run is over.
    let report = move || {
        session.with_run(|r| {
            r.and_then(|r| r.checkout.reports.last().copied())
                .map(|rep| (rep.fixed, report_sentence(&rep)))
        })
    };
    let closing = move || {
        session.with_run(|r| {
            let r = r?;
            let s = r.summary()?;
            let t = s.checkout.as_deref()?;
            let trade = r
                .config
                .race
                .checkout
                .as_ref()
                .and_then(|c| TradeOff::of(c, s))
                .map(|t| t.sentence());
            Some((
                format!(
                    "stock {} = final stock {} + confirmed {} + held {} + leaked {}",
                    s.stock, s.final_stock, t.confirmed_units, t.held_units, t.leaked_units
                ),
                t.ledger,
                trade,
            ))
        })
    };
    let ledger_note = move || {
        session
            .page
            .with(|p| p.hello.as_ref().map(|h| h.ledger.note.clone()))
            .unwrap_or_default()
    };
    view! {
        <section class="books" data-testid="books" data-source=source data-adds-up=move || adds_up().to_string() aria-label="Reconciliation">
            <div class="panel-head">
                <h2>"Reconciliation"</h2>
                <span class="clocks" data-testid="books-clocks">
                    {move || books.with(|b| clock::both(b.shop_ms, b.real_ms, scale()))}
                </span>
            </div>
            <p class="equation" aria-live="polite">
                <span class="term stock"><b data-testid="books-stock">{move || books.with(|b| b.stock)}</b> " in stock"</span>
                " = "
                {term("books-available", num(|b| b.available), "available")}
                " + "
                {term("books-held", num(|b| b.held), "held")}
                <span class="muted">{holds}</span>
                " + "
                {term("books-sold", num(|b| b.sold as i64), "sold")}
                {move || (settling() != 0).then(|| view! { " + " <span class="term"><b>{settling()}</b> " settling"</span> })}
                " + "
                <span class="term leaked" class:bad=move || variance() != 0>
                    <b data-testid="books-leaked">{move || books.with(|b| b.leaked)}</b>
                    " leaked"
                </span>
            </p>
            <p class="variance" class:bad=move || !adds_up()>
                "Variance: "
                <b data-testid="books-variance">{variance}</b>
                {move || match (variance(), oversold()) {
                    (0, 0) => " · every unit is on the shelf, held or sold.".to_string(),
                    (v, 0) => format!(" · {} off the shelf, in no hold and no order.", count(v.unsigned_abs(), "unit")),
                    (v, o) => format!(
                        " · {} unaccounted, and {} promised beyond the stock (available below zero).",
                        count(v.unsigned_abs(), "unit"),
                        count(o, "unit")
                    ),
                }}
                <span hidden data-testid="books-oversold">{oversold}</span>
            </p>
            {move || (backorders() > 0).then(|| view! {
                <p class="hint">{format!("Backorders: {} taken while Redis was unreachable, never on the shelf.", count(backorders(), "unit"))}</p>
            })}
            <div class="reconcile-row">
                <button class="run-again" data-testid="reconcile" disabled=move || !running() on:click=move |_| socket.reconcile()>
                    "Reconcile now"
                </button>
                <span class="hint">"available = stock − sold − held, in one script: what a nightly job would put right."</span>
            </div>
            {move || report().map(|(fixed, text)| view! {
                <p class="reconciled" data-testid="reconciled" data-fixed=fixed.to_string()>{text}</p>
            })}
            {move || closing().map(|(line, ledger, trade)| view! {
                <div class="closing" data-testid="books-final">
                    <p><span class="muted">"The summary: "</span><code>{line}</code></p>
                    <p data-testid="books-ledger" data-ledger=ledger.as_str() title=ledger_note()>
                        <span class="muted">"Ledger: "</span>
                        <b>{ledger_label(ledger)}</b>
                    </p>
                    {trade.map(|t| view! { <p class="tradeoff" data-testid="tradeoff">{t}</p> })}
                </div>
            })}
        </section>
    }
}
