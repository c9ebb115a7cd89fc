//! The audit trail: one line per buyer, filterable, virtualized so 10,000 lines stay smooth.
//!
//! Rows have a fixed height, so only the ~20 rows in view (plus a few either side) are in the
//! DOM; a spacer gives the scroll bar its full length. While the visitor sits at the bottom the
//! view follows new rows, like `tail -f`; scrolling up stops following.
//!
//! In a checkout each line is the buyer's whole story (`model::checkout::story`), and the
//! filters are by how stories ended, each with its count.
//!
//! A race at scale (a million buyers) sends no outcomes: the list is as long as the buyers
//! that answered, and the rows in view are asked of the server a page at a time ([`Pager`]).
//! Its filters are off: they would need the whole record on the page.

use std::ops::Range;

use leptos::html::Div;
use leptos::prelude::*;

use crate::components::room::presenter::ChaosNotes;
use crate::model::audit::{self, AuditFilter};
use crate::model::checkout::story::{self, StoryFilter};
use crate::model::run::{AuditRow, Mark};
use crate::model::text::{micros, thousands};
use crate::session::Session;
use crate::socket::Socket;
use oversold_protocol::ClientMessage;
use oversold_protocol::at_scale::{LIVE_OUTCOMES_MAX, MAX_AUDIT_PAGE};

/// Least time between two `audit_page` requests, ms: four a second at most, well within the
/// socket's budget of ten frames a second however fast the visitor scrolls.
const PAGE_EVERY_MS: u64 = 250;

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
    let story_filter = RwSignal::new(StoryFilter::All);
    let checkout = move || showing_checkout(session);
    let list = List::new(session, filter, story_filter);
    list.follow_new_rows(filter, story_filter);
    list.page_from_the_server(Pager::new(expect_context::<Socket>()));
    let filtered =
        move || filter.get() != AuditFilter::All || story_filter.get() != StoryFilter::All;

    view! {
        <section class="panel audit" class:checkout=checkout aria-label="Audit trail">
            <div class="panel-head">
                <h2>"Audit trail"</h2>
                <span class="muted">
                    <span data-testid="audit-count">{move || answered(session)}</span>
                    " buyers answered"
                    {move || filtered().then(|| format!(" · {} shown", thousands(list.shown() as i64)))}
                </span>
            </div>
            <StoryFilters session story_filter/>
            <OutcomeFilters session filter/>
            <Show when=move || at_scale(session)>
                <p class="muted at-scale-note" data-testid="audit-at-scale">
                    {format!(
                        "More than {} buyers: the server keeps this audit and sends the lines in view as you scroll (filters are off).",
                        thousands(i64::from(LIVE_OUTCOMES_MAX)),
                    )}
                </p>
            </Show>
            <ChaosNotes/>
            <Headings session/>
            <Scroller list/>
        </section>
    }
}

/// True while the run on screen is a checkout (its lines are stories).
fn showing_checkout(session: Session) -> bool {
    session.with_run(|r| r.is_some_and(|r| r.is_checkout()))
}

/// How many buyers of the run on screen have answered.
fn answered(session: Session) -> usize {
    session.with_run(|r| r.map_or(0, |r| r.finished_buyers()))
}

/// True while the run on screen is a race at scale (its audit is on the server).
fn at_scale(session: Session) -> bool {
    session.with_run(|r| r.is_some_and(|r| r.at_scale()))
}

/// A checkout's filters, by how the stories ended, each with its count.
#[component]
fn StoryFilters(session: Session, story_filter: RwSignal<StoryFilter>) -> impl IntoView {
    // The buttons with their counts (one scan per batch).
    let story_filters = Memo::new(move |_| {
        session.with_run(|r| {
            r.filter(|r| r.is_checkout())
                .map(|r| story::filters(r.rows.iter().map(|row| &row.outcome)))
                .unwrap_or_default()
        })
    });
    view! {
        <Show when=move || showing_checkout(session)>
            // A few buttons, redrawn together when a count or the choice changes: a
            // plain list costs the wasm less than a keyed one.
            <div class="filters" role="group" aria-label="Filter by how the story ended">
                {move || {
                    let on = story_filter.get();
                    story_filters
                        .get()
                        .into_iter()
                        .map(|(f, n)| {
                            view! {
                                <button
                                    class="filter"
                                    class:on=on == f
                                    aria-pressed=(on == f).to_string()
                                    data-testid=format!("story-filter-{}", f.id())
                                    data-count=n
                                    on:click=move |_| story_filter.set(f)
                                >
                                    {f.label()}
                                    <span class="count">{n}</span>
                                </button>
                            }
                        })
                        .collect_view()
                }}
            </div>
        </Show>
    }
}

/// The race's filters, by outcome; hidden (not removed) during a checkout.
#[component]
fn OutcomeFilters(session: Session, filter: RwSignal<AuditFilter>) -> impl IntoView {
    // The rare endings get a button once the run has some (or while their filter is on).
    let offered = move |f: AuditFilter| {
        filter.get() == f
            || session.with_run(|r| r.is_some_and(|r| f.shown(r.tally.gave_up, r.tally.unknown)))
    };
    view! {
        <div class="filters" role="group" aria-label="Filter by outcome" class:hidden=move || showing_checkout(session) || at_scale(session)>
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
    }
}

/// The column headings, worded for a race or for a checkout's stories.
#[component]
fn Headings(session: Session) -> impl IntoView {
    let checkout = move || showing_checkout(session);
    view! {
        <div class="audit-row audit-headings" aria-hidden="true">
            <span>"buyer"</span>
            <span class="c-app">{move || if checkout() { "cust." } else { "via" }}</span>
            <span class="c-num">{move || if checkout() { "ended" } else { "read" }}</span>
            <span>{move || if checkout() { "story" } else { "did" }}</span>
            <span class="c-num">{move || if checkout() { "" } else { "left" }}</span>
            <span class="c-mark"></span>
        </div>
    }
}

/// One line of the window: the run's id, a finished checkout's end on the shop clock, the row.
type Line = (String, Option<u64>, AuditRow);

/// The rows the filters let through, and the scroll state that picks the few of them in the
/// DOM.
#[derive(Clone, Copy)]
struct List {
    session: Session,
    /// Indices of the rows shown, in a Memo: the count, the spacer and the window all need
    /// the filtered list, and scanning 10,000 rows three times per batch would be waste.
    indices: Memo<Vec<usize>>,
    scroll_top: RwSignal<f64>,
    viewport: RwSignal<f64>,
    /// The view sits at the bottom and follows new rows.
    follow: RwSignal<bool>,
    scroller: NodeRef<Div>,
}

impl List {
    /// The run's rows through `filter` (a race) or `story_filter` (a checkout), scrolled to the
    /// top.
    fn new(
        session: Session,
        filter: RwSignal<AuditFilter>,
        story_filter: RwSignal<StoryFilter>,
    ) -> Self {
        let indices = Memo::new(move |_| {
            let (f, sf) = (filter.get(), story_filter.get());
            session.with_run(|r| match r {
                Some(r) if r.is_checkout() => (0..r.rows.len())
                    .filter(|&i| sf.matches(&r.rows[i].outcome))
                    .collect(),
                Some(r) => audit::filter_indices(&r.rows, f),
                None => Vec::new(),
            })
        });
        Self {
            session,
            indices,
            scroll_top: RwSignal::new(0.0),
            viewport: RwSignal::new(INITIAL_VIEWPORT),
            follow: RwSignal::new(true),
            scroller: NodeRef::new(),
        }
    }

    /// How many rows the filters let through (at scale: every buyer that answered).
    fn shown(self) -> usize {
        if at_scale(self.session) {
            return answered(self.session);
        }
        self.indices.with(Vec::len)
    }

    /// The rows shown, laid out in a scroll area a browser can draw (a million rows scroll
    /// proportionally).
    fn tall(self) -> audit::TallList {
        audit::TallList {
            total: self.shown(),
            row_height: ROW_HEIGHT,
            viewport: self.viewport.get(),
        }
    }

    /// Which of them are in the DOM: those in view, plus a few either side.
    fn range(self) -> Range<usize> {
        self.tall().range(self.scroll_top.get(), OVERSCAN)
    }

    /// The lines in the DOM.
    fn window(self) -> Vec<Line> {
        let range = self.range();
        self.session.with_run(|r| {
            let Some(r) = r else { return Vec::new() };
            if r.at_scale() {
                // The rows of the page the server sent that are in view (while a newer page
                // is on its way, what it has of them).
                let w = &r.audit_window;
                return w
                    .rows
                    .iter()
                    .filter(|row| range.contains(&row.seq))
                    .map(|row| (r.run_id.clone(), None, row.clone()))
                    .collect();
            }
            // A finished checkout's clock: its crashed buyers' holds have expired by then.
            let end = r
                .summary()
                .and_then(|s| s.checkout.as_deref())
                .map(|t| t.shop_ms);
            self.indices.with(|ix| {
                ix[range.clone()]
                    .iter()
                    .map(|&i| (r.run_id.clone(), end, r.rows[i].clone()))
                    .collect::<Vec<_>>()
            })
        })
    }

    /// Keep the view at the bottom while following, like `tail -f`.
    fn follow_new_rows(self, filter: RwSignal<AuditFilter>, story_filter: RwSignal<StoryFilter>) {
        // Syncing with the outside world (the DOM's scroll position) is what an Effect is for:
        // when new rows land and we are following, scroll to the bottom.
        // Only a change in the count: any other change of the page (a run's end, an audit page
        // arriving) between a visitor's scroll and its scroll event would pull the view back.
        let rows = Memo::new(move |_| self.shown());
        Effect::new(move |_| {
            // The list's height from the model, not `scroll_height()`: reading that after the
            // DOM changed forces a layout of the whole page, once per batch (the browser clamps
            // a scroll past the bottom to the bottom).
            let height = audit::TallList {
                total: rows.get(),
                row_height: ROW_HEIGHT,
                viewport: self.viewport.get_untracked(),
            }
            .height();
            if self.follow.get_untracked()
                && let Some(el) = self.scroller.get()
            {
                el.set_scroll_top(height.ceil() as i32);
            }
        });
        // A new run or a new filter resumes following, whatever the visitor scrolled to before.
        Effect::new(move |_| {
            let _ = (filter.get(), story_filter.get());
            let _ = self.session.with_run(|r| r.map(|r| r.run_id.clone()));
            self.follow.set(true);
        });
    }

    /// At scale, ask the server for the rows in view whenever the page lacks some of them.
    fn page_from_the_server(self, pager: Pager) {
        Effect::new(move |_| {
            let range = self.range();
            let wanted = self.session.with_run(|r| {
                let r = r.filter(|r| r.at_scale())?;
                let range = range.start..range.end.min(r.finished_buyers());
                (!range.is_empty() && !r.audit_window.covers(&range))
                    .then(|| (r.run_id.clone(), range))
            });
            pager.want(wanted);
        });
    }

    /// A scroll measures the viewport, and follows again only at the bottom.
    fn on_scroll(self) {
        if let Some(el) = self.scroller.get() {
            let top = f64::from(el.scroll_top());
            let height = f64::from(el.client_height());
            self.scroll_top.set(top);
            self.viewport.set(height);
            self.follow
                .set(top + height >= f64::from(el.scroll_height()) - ROW_HEIGHT * 1.5);
        }
    }
}

/// Sends `audit_page` for the rows a race at scale's list wants, no more often than every
/// [`PAGE_EVERY_MS`]: a want that comes sooner waits, and only the latest one is sent.
#[derive(Clone, Copy)]
struct Pager {
    socket: Socket,
    wanted: StoredValue<Option<(String, Range<usize>)>>,
    cooling: StoredValue<bool>,
}

impl Pager {
    fn new(socket: Socket) -> Self {
        Self {
            socket,
            wanted: StoredValue::new(None),
            cooling: StoredValue::new(false),
        }
    }

    /// The rows the list lacks now (`None`: it lacks none).
    fn want(self, wanted: Option<(String, Range<usize>)>) {
        self.wanted.set_value(wanted);
        self.pump();
    }

    fn pump(self) {
        if self.cooling.get_value() {
            return;
        }
        let Some((run_id, range)) = self.wanted.try_update_value(Option::take).flatten() else {
            return;
        };
        let count = (range.len() as u32).min(MAX_AUDIT_PAGE);
        self.socket.send(&ClientMessage::AuditPage {
            run_id,
            from: range.start as u32,
            count,
        });
        self.cooling.set_value(true);
        crate::web::after(
            std::time::Duration::from_millis(PAGE_EVERY_MS),
            Box::new(move || {
                self.cooling.set_value(false);
                self.pump();
            }),
        );
    }
}

/// The scrolling list: a spacer as tall as every row shown, and the window of rows in view.
#[component]
fn Scroller(list: List) -> impl IntoView {
    view! {
        <div class="audit-scroll" tabindex="0" aria-label="Audit trail lines" node_ref=list.scroller on:scroll=move |_| list.on_scroll()>
            <div class="audit-spacer" style:height=move || format!("{}px", list.tall().height())>
                <div
                    class="audit-window"
                    style:transform=move || {
                        let top = list.tall().row_px(list.range().start, list.scroll_top.get());
                        format!("translateY({top}px)")
                    }
                >
                    <For each=move || list.window() key=|(id, end, row)| (id.clone(), end.is_some(), row.seq) let:item>
                        {if item.2.outcome.checkout.is_some() {
                            view! { <StoryRow row=item.2 now=item.1/> }.into_any()
                        } else {
                            view! { <Row row=item.2/> }.into_any()
                        }}
                    </For>
                </div>
            </div>
            <Show when=move || answered(list.session) == 0>
                <p class="empty">"Run a strategy: each buyer's read, decision and result lands here."</p>
            </Show>
        </div>
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
        <div class="audit-row" data-testid="audit-row" data-seq=row.seq data-mark=row.mark.as_str() title=title>
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

/// One buyer's checkout: its customer, when its story ended on the shop clock, the story in
/// words, and how it ended.
#[component]
fn StoryRow(
    /// The line to draw (an outcome with a `checkout` story).
    row: AuditRow,
    /// The shop clock at the run's end, once it has ended (expired holds say so).
    now: Option<u64>,
) -> impl IntoView {
    let o = &row.outcome;
    let Some(s) = &o.checkout else {
        return ().into_any();
    };
    let text = story::describe(o, now);
    let end = s.end;
    let title = format!(
        "buyer #{} · customer {} · request {} · {}",
        o.buyer, s.customer, s.request_id, text
    );
    view! {
        <div
            class="audit-row story"
            data-testid="audit-row"
            data-mark=row.mark.as_str()
            data-end=end.as_str()
            data-fate=story::fate_id(s.fate)
            data-resent=s.retried.to_string()
            title=title
        >
            <span class="c-buyer">{format!("#{}", o.buyer)}</span>
            <span class="c-app">{format!("c{}", s.customer)}</span>
            <span class="c-num">{crate::model::checkout::clock::shop_clock(story::ended_at(s))}</span>
            <span class="c-did">{text}</span>
            <span class="c-num"></span>
            <span class="c-mark">{story::end_word(end)}</span>
        </div>
    }
    .into_any()
}
