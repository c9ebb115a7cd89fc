//! The table of recent runs, newest first, to compare strategies and settings. A finished run
//! reopens on a click (grid, counters, audit, timeline and tape come back); saved runs go out
//! and come in here too.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::Element;

use crate::components::files::FileButtons;
use crate::model::history::{HistoryEntry, MAX_KEPT_OUTCOMES, verdict};
use crate::model::text::{micros, thousands};
use crate::model::verdict::kind;
use crate::session::Session;

/// A row as drawn: the run, and where it stands now.
#[derive(Clone, PartialEq)]
struct Row {
    entry: HistoryEntry,
    /// It is the run on screen.
    current: bool,
    /// Its outcomes are kept, so it can come back.
    reopenable: bool,
    /// Its outcomes were dropped to stay under the cap.
    dropped: bool,
}

/// The last few finished runs, newest first.
#[component]
pub fn History() -> impl IntoView {
    let session = expect_context::<Session>();
    // Each row's state is part of its key, so a row is redrawn (plain, without closures of
    // its own) when it becomes the one on screen or loses its outcomes: eight rows at most.
    let rows = move || {
        session.page.with(|p| {
            let current = p.run.as_ref().map(|r| r.run_id.as_str());
            let busy = p.busy();
            p.history
                .iter()
                .map(|e| Row {
                    entry: e.clone(),
                    current: current == Some(e.run_id.as_str()),
                    reopenable: !busy && p.kept.get(&e.run_id).is_some(),
                    dropped: p.kept.was_dropped(&e.run_id),
                })
                .collect::<Vec<_>>()
        })
    };
    // One listener for the whole table: the clicked row names its run.
    let reopen = move |ev: leptos::ev::MouseEvent| {
        let row = ev
            .target()
            .map(|t| t.unchecked_into::<Element>())
            .and_then(|el| el.closest("button[data-run-id]").ok().flatten());
        if let Some(id) = row.and_then(|b| b.get_attribute("data-run-id")) {
            session.page.update(|p| {
                p.reopen(&id);
            });
        }
    };
    view! {
        <section class="panel history" aria-label="Recent runs">
            <div class="panel-head">
                <h2>"Recent runs"</h2>
                {FileButtons::view()}
            </div>
            <p class="muted">
                "Finished runs land here, newest first: click one to bring it back. Drop a saved run anywhere on the page to show it."
            </p>
            <div class="table-wrap">
                <table class="runs">
                    <thead>
                        <tr>
                            <th>"strategy"</th>
                            <th class="n">"stock"</th>
                            <th class="n wide-only">"buyers"</th>
                            <th class="n" title="Orders accepted">"orders"</th>
                            <th class="n">"sold"</th>
                            <th class="n">"final"</th>
                            <th class="n">"oversold"</th>
                            <th class="n" title="Sales the counter forgot: writes that overwrote each other">"lost"</th>
                            <th class="n wide-only">"time"</th>
                        </tr>
                    </thead>
                    <tbody on:click=reopen>
                        <For each=rows key=|r| (r.entry.run_id.clone(), r.current, r.reopenable, r.dropped) let:row>
                            <HistoryRow row=row/>
                        </For>
                    </tbody>
                </table>
            </div>
        </section>
    }
}

/// One finished run; its first cell is the button that reopens it.
#[component]
fn HistoryRow(
    /// The run to show, and where it stands.
    row: Row,
) -> impl IntoView {
    let Row {
        entry,
        current,
        reopenable,
        dropped,
    } = row;
    let s = &entry.summary;
    let bad = kind(s).is_bad();
    // Computed here: a `>` inside an attribute would end the tag in `view!`.
    let too_many_orders = s.orders_accepted > s.stock;
    let negative = s.final_stock < 0;
    let lost = s.lost_updates != 0;
    let note = dropped.then(|| {
        format!(
            "outcomes dropped: the page keeps {}",
            thousands(MAX_KEPT_OUTCOMES as i64)
        )
    });
    view! {
        <tr class:bad=bad class:current=current class:from-compare=entry.compare.is_some() title=verdict(&entry) data-testid="history-row">
            <td>
                <button
                    class="reopen"
                    data-testid="history-open"
                    data-run-id=entry.run_id.clone()
                    disabled=!reopenable
                    aria-current=current.then_some("true")
                >
                    {entry.short_label.clone()}
                    {s.cancelled.then_some(" (cancelled)")}
                </button>
                {note.map(|n| view! { <span class="dropped" data-testid="history-dropped">{n}</span> })}
            </td>
            <td class="n">{thousands(s.stock.into())}</td>
            <td class="n wide-only">{thousands(s.buyers.into())}</td>
            <td class="n" class:neg=too_many_orders>{thousands(s.orders_accepted.into())}</td>
            <td class="n">{thousands(s.units_sold as i64)}</td>
            <td class="n" class:neg=negative>{thousands(s.final_stock)}</td>
            <td class="n oversold">{thousands(s.oversold_units as i64)}</td>
            <td class="n" class:neg=lost>{thousands(s.lost_updates.abs())}</td>
            <td class="n wide-only">{micros((s.duration_ms * 1_000.0) as u64)}</td>
        </tr>
    }
}
