//! The reconciliation panel: `stock = available + held + sold + leaked`, live from the
//! `reconciliation` frames, the variance in red when units are unaccounted for; a button
//! that runs the correction (`reconcile`) and what it fixed; after the run, the summary's
//! closing books, which ledger settled the orders, and (after an outage) what the fail mode
//! traded.
//!
//! One closure draws the panel from one snapshot of the run ([`Shown`]): its numbers change
//! together, a few times a second, and one closure costs the wasm less than one per number.

use leptos::prelude::*;

use crate::model::checkout::books::{Books as Numbers, Source, ledger_label, report_sentence};
use crate::model::checkout::clock;
use crate::model::checkout::tradeoff::{TradeOff, both_sides};
use crate::model::page::PageState;
use crate::model::text::count;
use crate::session::Session;
use crate::socket::Socket;

/// What the panel shows, read once per change.
#[derive(Debug, Clone, PartialEq)]
struct Shown {
    books: Numbers,
    time_scale: u32,
    running: bool,
    /// The latest `reconciled` answer: what it fixed, in units and in words.
    report: Option<(i64, String)>,
    /// Once the run is over: the summary's closing line, its ledger, the fail mode's trade.
    closing: Option<Closing>,
    /// After a run with an outage: the latest outage run of each fail mode, side by side.
    sides: Option<[Option<TradeOff>; 2]>,
}

/// The summary's closing line, the ledger that settled the orders, and (after an outage) what
/// the fail mode traded, in words.
type Closing = (String, oversold_protocol::LedgerKind, Option<String>);

impl Shown {
    /// The panel's snapshot of page `p`, around the `books` on screen.
    fn of(p: &PageState, books: Numbers) -> Self {
        let r = p.run.as_ref();
        let checkout = r.and_then(|r| r.config.race.checkout());
        let closing = r.and_then(|r| {
            let s = r.summary()?;
            let t = s.checkout.as_deref()?;
            let line = format!(
                "stock {} = final stock {} + confirmed {} + held {} + leaked {}",
                s.stock, s.final_stock, t.confirmed_units, t.held_units, t.leaked_units
            );
            let trade = checkout
                .and_then(|c| TradeOff::of(c, s))
                .map(|t| t.sentence());
            Some((line, t.ledger, trade))
        });
        // The other mode's latest outage, from the runs the page kept (newest first).
        let sides = closing.as_ref().filter(|c| c.2.is_some()).map(|_| {
            both_sides(p.history.iter().map(|e| {
                let kept = p.kept.get(&e.run_id);
                (&e.summary, kept.and_then(|k| k.config.race.checkout()))
            }))
        });
        Shown {
            books,
            time_scale: checkout.map_or(1, |c| c.time_scale),
            running: r.is_some_and(|r| r.is_running()),
            report: r
                .and_then(|r| r.checkout.reports.last())
                .map(|rep| (rep.fixed, report_sentence(rep))),
            closing,
            sides,
        }
    }
}

/// The panel; it follows the run on screen (or the form's stock before any run).
#[component]
pub fn Books() -> impl IntoView {
    let session = expect_context::<Session>();
    let socket = expect_context::<Socket>();
    let books = super::books(session);
    let shown = Memo::new(move |_| {
        let books = books.get();
        session.page.with(|p| Shown::of(p, books))
    });
    move || panel(shown.get(), session, socket)
}

/// The whole panel, drawn from one snapshot.
fn panel(shown: Shown, session: Session, socket: Socket) -> impl IntoView {
    let Shown {
        books: b,
        time_scale,
        running,
        report,
        closing,
        sides,
    } = shown;
    let source = match b.source {
        Source::Live => "live",
        Source::Final => "final",
    };
    view! {
        <section class="books" data-testid="books" data-source=source data-adds-up=b.adds_up().to_string() aria-label="Reconciliation">
            <div class="panel-head">
                <h2>"Reconciliation"</h2>
                <span class="clocks" data-testid="books-clocks">{clock::both(b.shop_ms, b.real_ms, time_scale)}</span>
            </div>
            {equation(b)}
            {variance(b)}
            {(b.backorders > 0).then(|| view! {
                <p class="hint">{format!("Backorders: {} taken while Redis was unreachable, never on the shelf.", count(b.backorders, "unit"))}</p>
            })}
            <div class="reconcile-row">
                <button class="run-again" data-testid="reconcile" disabled=!running on:click=move |_| socket.reconcile()>
                    "Reconcile now"
                </button>
                <span class="hint">"available = stock − sold − held, in one script: what a nightly job would put right."</span>
            </div>
            {report.map(|(fixed, text)| view! {
                <p class="reconciled" data-testid="reconciled" data-fixed=fixed.to_string()>{text}</p>
            })}
            {closing.map(|closing| closing_lines(closing, session))}
            {sides.map(trade_table)}
        </section>
    }
}

/// `stock = available + held + sold (+ settling) + leaked`, each term with its number.
fn equation(b: Numbers) -> impl IntoView {
    let holds = b.holds.map(|h| format!(" ({})", count(h.into(), "hold")));
    view! {
        <p class="equation">
            <span class="term"><b data-testid="books-stock">{b.stock}</b> " in stock"</span>
            " = "
            <span class="term"><b data-testid="books-available">{b.available}</b> " available"</span>
            " + "
            <span class="term"><b data-testid="books-held">{b.held}</b> " held"</span>
            <span class="muted">{holds}</span>
            " + "
            <span class="term"><b data-testid="books-sold">{b.sold}</b> " sold"</span>
            {(b.settling != 0).then(|| view! { " + " <span class="term"><b>{b.settling}</b> " settling"</span> })}
            " + "
            <span class="term leaked" class:bad=b.variance() != 0><b data-testid="books-leaked">{b.leaked}</b> " leaked"</span>
        </p>
    }
}

/// The variance, and in words where the missing units went.
fn variance(b: Numbers) -> impl IntoView {
    let (variance, oversold) = (b.variance(), b.oversold());
    let said = match (variance, oversold) {
        (0, 0) => " · every unit is on the shelf, held or sold.".to_string(),
        (v, 0) => format!(
            " · {} off the shelf, in no hold and no order.",
            count(v.unsigned_abs(), "unit")
        ),
        (v, o) => format!(
            " · {} unaccounted, and {} promised beyond the stock (available below zero).",
            count(v.unsigned_abs(), "unit"),
            count(o, "unit")
        ),
    };
    view! {
        <p class="variance" class:bad=!b.adds_up()>
            "Variance: "
            <b data-testid="books-variance">{variance}</b>
            {said}
            <span hidden data-testid="books-oversold">{oversold}</span>
        </p>
    }
}

/// Once the run is over: the summary's closing line, its ledger (the server's note on it as the
/// tooltip), and the fail mode's trade.
fn closing_lines((line, ledger, trade): Closing, session: Session) -> impl IntoView {
    let ledger_note = session
        .page
        .with_untracked(|p| p.hello.as_ref().map(|h| h.ledger.note.clone()))
        .unwrap_or_default();
    view! {
        <div class="closing" data-testid="books-final">
            <p><span class="muted">"The summary: "</span><code>{line}</code></p>
            <p data-testid="books-ledger" data-ledger=ledger.as_str() title=ledger_note>
                <span class="muted">"Ledger: "</span>
                <b>{ledger_label(ledger)}</b>
            </p>
            {trade.map(|t| view! { <p class="tradeoff" data-testid="tradeoff">{t}</p> })}
        </div>
    }
}

/// Fail closed against fail open, each side's latest run with an outage: what was refused,
/// what was taken as backorders, and how far beyond the stock the shop promised.
fn trade_table(sides: [Option<TradeOff>; 2]) -> impl IntoView {
    let row = |name: &'static str, side: Option<TradeOff>| {
        let cells = side.map_or_else(
            || {
                [
                    "–".to_string(),
                    "–".into(),
                    "–".into(),
                    "run one to compare".into(),
                ]
            },
            |t| {
                [
                    t.refused.to_string(),
                    t.backorder_units.to_string(),
                    t.overage_units.to_string(),
                    format!(
                        "Redis paused {} at shop {}",
                        clock::shop_span(t.outage_ms.into()),
                        clock::shop_clock(t.outage_at_ms.into())
                    ),
                ]
            },
        );
        let [refused, backorders, over, when] = cells;
        view! {
            <tr data-testid=format!("trade-{name}")>
                <th>{format!("fail {name}")}</th>
                <td class="n" data-testid="trade-refused">{refused}</td>
                <td class="n" data-testid="trade-backorders">{backorders}</td>
                <td class="n" data-testid="trade-overbooked">{over}</td>
                <td class="muted">{when}</td>
            </tr>
        }
    };
    let [closed, open] = sides;
    view! {
        <div class="table-wrap">
        <table class="runs trade" data-testid="trade-table">
            <thead>
                <tr>
                    <th>"while Redis was unreachable"</th>
                    <th class="n">"orders refused"</th>
                    <th class="n">"backorder units"</th>
                    <th class="n">"beyond the stock"</th>
                    <th></th>
                </tr>
            </thead>
            <tbody>{row("closed", closed)} {row("open", open)}</tbody>
        </table>
        </div>
    }
}
