//! The audit trail: one line per buyer, filterable, virtualized so 10,000 lines stay smooth.
//!
//! Rows have a fixed height, so only the ~20 rows in view (plus a few either side) are in the
//! DOM; a spacer gives the scroll bar its full length. While the visitor sits at the bottom the
//! view follows new rows, like `tail -f`; scrolling up stops following.

use leptos::html::Div;
use leptos::prelude::*;

use crate::model::audit::{self, AuditFilter};
use crate::model::run::{AuditRow, Mark};
use crate::model::text::{micros, thousands};
use crate::session::Session;

/// Row height in px; must match `.audit-row` in style.css.
const ROW_HEIGHT: f64 = 30.0;
/// Rows drawn beyond each edge of the viewport.
const OVERSCAN: usize = 10;
/// The viewport height assumed until the first scroll event measures it.
const INITIAL_VIEWPORT: f64 = 420.0;

/// The filter bar, the column headings and the scrolling list.
#[component]
pub fn AuditTrail() -> impl IntoView {
    let session = expect_context::<Session>();
    let filter = RwSignal::new(AuditFilter::All);
    let scroll_top = RwSignal::new(0.0);
    let viewport = RwSignal::new(INITIAL_VIEWPORT);
    let follow = RwSignal::new(true);
    let scroller = NodeRef::<Div>::new();

    // A Memo: the count, the spacer and the window all need the filtered list, and scanning
    // 10,000 rows three times per batch would be waste.
    let indices = Memo::new(move |_| {
        let f = filter.get();
        session.with_run(|r| {
            r.map(|r| audit::filter_indices(&r.rows, f))
                .unwrap_or_default()
        })
    });
    let total = move || session.with_run(|r| r.map_or(0, |r| r.rows.len()));
    // The rare endings get a button once the run has some (or while their filter is on).
    let offered = move |f: AuditFilter| {
        filter.get() == f || session.with_run(|r| r.is_some_and(|r| f.shown(r.gave_up, r.unknown)))
    };
    let shown = move || indices.with(Vec::len);
    let range = move || {
        audit::visible_range(
            shown(),
            scroll_top.get(),
            viewport.get(),
            ROW_HEIGHT,
            OVERSCAN,
        )
    };
    let window = move || {
        let range = range();
        session.with_run(|r| {
            let Some(r) = r else { return Vec::new() };
            indices.with(|ix| {
                ix[range.clone()]
                    .iter()
                    .map(|&i| (r.run_id.clone(), r.rows[i].clone()))
                    .collect::<Vec<_>>()
            })
        })
    };

    // Syncing with the outside world (the DOM's scroll position) is what an Effect is for:
    // when new rows land and we are following, scroll to the bottom.
    Effect::new(move |_| {
        let _ = shown();
        if follow.get_untracked()
            && let Some(el) = scroller.get()
        {
            el.set_scroll_top(el.scroll_height());
        }
    });
    // A new run or a new filter resumes following, whatever the visitor scrolled to before.
    Effect::new(move |_| {
        let _ = filter.get();
        let _ = session.with_run(|r| r.map(|r| r.run_id.clone()));
        follow.set(true);
    });

    let on_scroll = move |_| {
        if let Some(el) = scroller.get() {
            let top = f64::from(el.scroll_top());
            let height = f64::from(el.client_height());
            scroll_top.set(top);
            viewport.set(height);
            follow.set(top + height >= f64::from(el.scroll_height()) - ROW_HEIGHT * 1.5);
        }
    };

    view! {
        <section class="panel audit" aria-label="Audit trail">
            <div class="panel-head">
                <h2>"Audit trail"</h2>
                <span class="muted">
                    <span data-testid="audit-count">{total}</span>
                    " buyers answered"
                    {move || (filter.get() != AuditFilter::All).then(|| format!(" · {} shown", thousands(shown() as i64)))}
                </span>
            </div>
            <div class="filters" role="group" aria-label="Filter by outcome">
                {AuditFilter::ALL
                    .map(|f| {
                        view! {
                            <Show when=move || offered(f)>
                                <button
                                    class="filter"
                                    class:on=move || filter.get() == f
                                    aria-pressed=move || (filter.get() == f).to_string()
                                    data-testid=format!("audit-filter-{}", f.id())
                                    on:click=move |_| filter.set(f)
                                >
                                    {f.label()}
                                </button>
                            </Show>
                        }
                    })}
            </div>
            <div class="audit-row audit-headings" aria-hidden="true">
                <span>"buyer"</span>
                <span class="c-app">"via"</span>
                <span class="c-num">"read"</span>
                <span>"did"</span>
                <span class="c-num">"left"</span>
                <span class="c-mark"></span>
            </div>
            <div class="audit-scroll" node_ref=scroller on:scroll=on_scroll>
                <div class="audit-spacer" style:height=move || format!("{}px", shown() as f64 * ROW_HEIGHT)>
                    <div
                        class="audit-window"
                        style:transform=move || format!("translateY({}px)", range().start as f64 * ROW_HEIGHT)
                    >
                        <For each=window key=|(id, row)| (id.clone(), row.seq) let:item>
                            <Row row=item.1/>
                        </For>
                    </div>
                </div>
                <Show when=move || total() == 0>
                    <p class="empty">"Run a strategy: each buyer's read, decision and result lands here."</p>
                </Show>
            </div>
        </section>
    }
}

/// One buyer's line.
#[component]
fn Row(
    /// The line to draw.
    row: AuditRow,
) -> impl IntoView {
    let o = &row.outcome;
    let read = o
        .observed_stock
        .map_or_else(|| "–".to_string(), |s| s.to_string());
    let left = o
        .stock_after
        .map_or_else(|| "–".to_string(), |s| s.to_string());
    let negative = o.stock_after.is_some_and(|s| s < 0);
    let effort = audit::effort(o);
    let mark = match row.mark {
        Mark::Reserved => "",
        other => other.as_str(),
    };
    let title = format!(
        "buyer #{} · {} · {} round trips, {} retries · {}",
        o.buyer,
        audit::describe(&row),
        o.round_trips,
        o.retries,
        micros(o.latency_us)
    );
    view! {
        <div class="audit-row" data-testid="audit-row" data-mark=row.mark.as_str() title=title>
            <span class="c-buyer">{format!("#{}", o.buyer)}</span>
            <span class="c-app">{format!("app {}", o.app_server + 1)}</span>
            <span class="c-num">{read}</span>
            <span class="c-did">
                {audit::describe(&row)}
                {effort.map(|e| view! { <span class="effort" data-testid="audit-effort">{e}</span> })}
            </span>
            <span class="c-num" class:neg=negative>{left}</span>
            <span class="c-mark">{mark}</span>
        </div>
    }
}
