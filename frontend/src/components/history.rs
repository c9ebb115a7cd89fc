//! The table of recent runs, newest first, to compare strategies and settings.

use leptos::prelude::*;

use crate::model::history::{HistoryEntry, verdict};
use crate::model::text::thousands;
use crate::session::Session;

/// The last few finished runs, newest first.
#[component]
pub fn History() -> impl IntoView {
    let session = expect_context::<Session>();
    view! {
        <section class="panel history" aria-label="Recent runs">
            <div class="panel-head">
                <h2>"Recent runs"</h2>
            </div>
            <Show when=move || session.history.with(Vec::is_empty)>
                <p class="muted">"Finished runs land here, newest first."</p>
            </Show>
            <div class="table-wrap">
                <table class="runs">
                    <thead>
                        <tr>
                            <th>"strategy"</th>
                            <th class="n">"stock"</th>
                            <th class="n wide-only">"buyers"</th>
                            <th class="n">"sold"</th>
                            <th class="n">"final"</th>
                            <th class="n">"oversold"</th>
                            <th class="n wide-only">"time"</th>
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
            <td class="n wide-only">{thousands(s.buyers.into())}</td>
            <td class="n">{thousands(s.units_sold as i64)}</td>
            <td class="n" class:neg=s.final_stock < 0>{thousands(s.final_stock)}</td>
            <td class="n oversold">{thousands(s.oversold_units as i64)}</td>
            <td class="n wide-only">{format!("{:.0} ms", s.duration_ms)}</td>
        </tr>
    }
}
