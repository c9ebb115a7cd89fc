//! The table of recent runs, newest first, to compare strategies and settings.

use leptos::prelude::*;

use crate::model::history::{HistoryEntry, verdict};
use crate::model::text::{micros, thousands};
use crate::model::verdict::kind;
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
            <Show when=move || session.page.with(|p| p.history.is_empty())>
                <p class="muted">"Finished runs land here, newest first."</p>
            </Show>
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
                    <tbody>
                        <For each=move || session.page.with(|p| p.history.clone()) key=|e| e.run_id.clone() let:entry>
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
    let bad = kind(s).is_bad();
    // Computed here: a `>` inside an attribute would end the tag in `view!`.
    let too_many_orders = s.orders_accepted > s.stock;
    let negative = s.final_stock < 0;
    let lost = s.lost_updates != 0;
    view! {
        <tr class:bad=bad title=verdict(&entry) data-testid="history-row">
            <td>{entry.short_label.clone()} {s.cancelled.then_some(" (cancelled)")}</td>
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
