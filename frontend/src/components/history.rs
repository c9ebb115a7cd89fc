//! The verdict line comparing the latest run of each strategy, and the table of recent runs.

use leptos::prelude::*;

use crate::model::history::{HistoryEntry, result_line, verdict};
use crate::model::text::thousands;
use crate::session::Session;

/// Result line plus the last few runs, newest first.
#[component]
pub fn History() -> impl IntoView {
    let session = expect_context::<Session>();
    let line = move || {
        let order: Vec<String> = session.strategies().into_iter().map(|s| s.name).collect();
        session.history.with(|h| result_line(h, &order))
    };
    view! {
        <section class="panel history" aria-label="Results">
            <div class="panel-head">
                <h2>"Results"</h2>
            </div>
            <p class="result-line" data-testid="result-line">
                {move || {
                    let l = line();
                    if l.is_empty() { "Run both strategies to compare them here.".to_string() } else { l }
                }}
            </p>
            <div class="table-wrap">
                <table class="runs">
                    <thead>
                        <tr>
                            <th>"strategy"</th>
                            <th class="n">"stock"</th>
                            <th class="n">"buyers"</th>
                            <th class="n">"sold"</th>
                            <th class="n">"final"</th>
                            <th class="n">"oversold"</th>
                            <th class="n">"time"</th>
                        </tr>
                    </thead>
                    <tbody>
                        <For each=move || session.history.get() key=|e| e.run_id.clone() let:entry>
                            <HistoryRow entry=entry/>
                        </For>
                    </tbody>
                </table>
            </div>
        </section>
    }
}

/// One finished run.
#[component]
fn HistoryRow(
    /// The run to show.
    entry: HistoryEntry,
) -> impl IntoView {
    let s = &entry.summary;
    let bad = s.oversold_units > 0 || s.lost_updates != 0;
    view! {
        <tr class:bad=bad title=verdict(&entry) data-testid="history-row">
            <td>{entry.short_label.clone()} {s.cancelled.then_some(" (cancelled)")}</td>
            <td class="n">{thousands(s.stock.into())}</td>
            <td class="n">{thousands(s.buyers.into())}</td>
            <td class="n">{thousands(s.units_sold as i64)}</td>
            <td class="n" class:neg=s.final_stock < 0>{thousands(s.final_stock)}</td>
            <td class="n oversold">{thousands(s.oversold_units as i64)}</td>
            <td class="n">{format!("{:.0} ms", s.duration_ms)}</td>
        </tr>
    }
}
