//! The comparison scoreboard: a headline, three bar charts (units sold against the stock line;
//! latency and throughput on log axes) and the full table, filling in race by race as a comparison runs.
//! A checkout comparison swaps the race's rarer columns for the checkout's: confirmed,
//! leaked, reserved twice, customers past the limit, overbooked; a cart or warehouse
//! comparison swaps them for partial carts, stranded units, undone lines and fallbacks.

use leptos::prelude::*;
use oversold_protocol::{CheckoutTally, RunSummary};

use crate::model::scoreboard::{ScoreRow, Scoreboard as Board, scoreboard, stock_pct};
use crate::model::text::{count, micros, per_second, ratio, thousands};
use crate::session::Session;

/// The panel; absent until the first comparison starts. What it shows is a chunk of its own
/// (`components::lazy`), loaded then.
#[component]
pub fn Scoreboard() -> impl IntoView {
    let session = expect_context::<Session>();
    let shown = move || session.page.with(|p| p.compare.is_some());
    view! {
        <Show when=shown>
            {crate::components::lazy::when_loaded(crate::components::lazy::scoreboard)}
        </Show>
    }
}

/// The panel itself, once a comparison has started.
pub fn board() -> impl IntoView {
    let session = expect_context::<Session>();
    // A Memo: the headline, both charts and the table all read the same board, and building it
    // once per change beats building it four times.
    let board = Memo::new(move |_| {
        session.page.with(|p| {
            p.compare
                .as_ref()
                .map(|c| (c.compare_id.clone(), scoreboard(&c.results, p.known())))
        })
    });
    let state = move || {
        session
            .page
            .with(|p| p.compare.as_ref().map_or("idle", |c| c.phase.as_str()))
    };
    let setup = move || {
        session.page.with(|p| {
            p.compare.as_ref().map(|c| {
                let k = &c.config;
                format!(
                    "{} buyers · {} in stock · one seed for all",
                    thousands(k.buyers.into()),
                    thousands(k.stock.into()),
                )
            })
        })
    };
    // The seed is for reproducing the comparison, not for reading aloud: a tooltip.
    let seed = move || {
        session.page.with(|p| {
            p.compare
                .as_ref()
                .map(|c| format!("seed {}", c.config.seed))
        })
    };
    let racing = move || {
        session.page.with(|p| {
            p.compare
                .as_ref()
                .filter(|c| c.is_running())
                .map(|c| format!("Racing {} …", c.progress_text()))
        })
    };
    view! {
        <Show when=move || board.with(Option::is_some)>
            <section class="panel scoreboard" data-testid="scoreboard" data-state=state aria-label="Scoreboard">
                <div class="panel-head">
                    <h2>"Scoreboard: every strategy, same buyers"</h2>
                    <span class="muted" title=seed>{setup}</span>
                </div>
                <p class="headline" aria-live="polite">
                    {move || racing().unwrap_or_else(|| board.with(|b| b.as_ref().map(|(_, b)| b.headline.clone()).unwrap_or_default()))}
                </p>
                <div class="charts">
                    <UnitsChart board=board/>
                    <LatencyChart board=board/>
                    <ThroughputChart board=board/>
                </div>
                <ScoreTable board=board/>
            </section>
        </Show>
    }
}

/// The board as the panels below read it: `(compare_id, board)`.
type BoardMemo = Memo<Option<(String, Board)>>;

/// Rows keyed by comparison, race count and strategy: a new race rescales every bar, so every
/// row must redraw then, and only then.
fn keyed_rows(board: BoardMemo) -> Vec<(String, ScoreRow)> {
    board.with(|b| {
        b.as_ref()
            .map(|(id, b)| {
                let n = b.rows.len();
                b.rows
                    .iter()
                    .map(|r| (format!("{id}/{n}/{}", r.strategy), r.clone()))
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// Units sold per strategy: green up to the stock line, red past it.
#[component]
fn UnitsChart(
    /// The scoreboard to draw.
    board: BoardMemo,
) -> impl IntoView {
    let max = move || board.with(|b| b.as_ref().map_or(1.0, |(_, b)| b.units_max));
    let stock = move || {
        board.with(|b| {
            b.as_ref()
                .and_then(|(_, b)| b.rows.first().map(|r| r.summary.stock))
                .unwrap_or(0)
        })
    };
    let line = move || board.with(|b| b.as_ref().map_or(0.0, |(_, b)| stock_pct(b)));
    view! {
        <figure class="chart" aria-label="Units sold against the stock">
            <figcaption>"Units sold · " <span class="legend-line">"stock"</span> " · " <span class="legend-red">"never existed"</span></figcaption>
            <For each=move || keyed_rows(board) key=|(k, _)| k.clone() let:item>
                {
                    let r = item.1;
                    let u = r.units;
                    let tone = bar_tone(&r);
                    view! {
                        <div class="bar-row units" data-tone=tone>
                            <span class="bar-label" title=r.strategy.clone()>{r.label.clone()}</span>
                            <span class="track">
                                <i class="seg real" style:width=format!("{:.2}%", u.real_pct)></i>
                                <i class="seg phantom" style:left=format!("{:.2}%", u.real_pct) style:width=format!("{:.2}%", u.phantom_pct)></i>
                                <b class="stock-line" style:left=format!("{:.2}%", u.stock_pct)></b>
                            </span>
                            <span class="bar-value">{thousands(r.summary.units_sold as i64)}</span>
                        </div>
                    }
                }
            </For>
            <div class="axis units">
                <span style:left="0%">"0"</span>
                <span class="axis-stock" style:left=move || format!("{:.2}%", line())>{move || format!("stock {}", thousands(stock().into()))}</span>
                <span style:left="100%">{move || thousands(max() as i64)}</span>
            </div>
        </figure>
    }
}

/// Median and 99th-percentile latency per strategy, on a log axis: a Lua call and a database
/// commit differ a hundredfold, and a linear axis would flatten every fast strategy to nothing.
#[component]
fn LatencyChart(
    /// The scoreboard to draw.
    board: BoardMemo,
) -> impl IntoView {
    let ticks = move || {
        board.with(|b| {
            b.as_ref()
                .map(|(_, b)| b.latency.ticks())
                .unwrap_or_default()
        })
    };
    view! {
        <figure class="chart" aria-label="Latency, log scale">
            <figcaption>"Latency (log scale) · " <span class="legend-p50">"p50"</span> " · " <span class="legend-p99">"p99"</span></figcaption>
            <For each=move || keyed_rows(board) key=|(k, _)| k.clone() let:item>
                {
                    let r = item.1;
                    let l = r.summary.latency;
                    view! {
                        <div class="bar-row latency" data-tone=bar_tone(&r)>
                            <span class="bar-label" title=r.strategy.clone()>{r.label.clone()}</span>
                            <span class="track">
                                <i class="seg p99" style:width=format!("{:.2}%", r.p99_pct)></i>
                                <i class="seg p50" style:width=format!("{:.2}%", r.p50_pct)></i>
                            </span>
                            <span class="bar-value">{micros(l.p50_us)} <span class="muted">{format!(" / {}", micros(l.p99_us))}</span></span>
                        </div>
                    }
                }
            </For>
            <div class="axis latency">
                {move || {
                    ticks()
                        .into_iter()
                        .map(|(v, at)| view! { <span style:left=format!("{at:.2}%")>{micros(v as u64)}</span> })
                        .collect_view()
                }}
            </div>
        </figure>
    }
}

/// Orders answered per second per strategy, on a log axis: the same crowd through each store,
/// so a row lock's figure and a Lua script's are measured in the same run.
#[component]
fn ThroughputChart(
    /// The scoreboard to draw.
    board: BoardMemo,
) -> impl IntoView {
    let ticks = move || {
        board.with(|b| {
            b.as_ref()
                .map(|(_, b)| b.throughput.ticks())
                .unwrap_or_default()
        })
    };
    view! {
        <figure class="chart throughput" aria-label="Throughput, log scale">
            <figcaption>"Throughput (log scale) · buyers answered per second"</figcaption>
            <For each=move || keyed_rows(board) key=|(k, _)| k.clone() let:item>
                {
                    let r = item.1;
                    view! {
                        <div class="bar-row throughput" data-tone=bar_tone(&r)>
                            <span class="bar-label" title=r.strategy.clone()>{r.label.clone()}</span>
                            <span class="track">
                                <i class="seg rate" style:width=format!("{:.2}%", r.throughput_pct)></i>
                            </span>
                            <span class="bar-value">{per_second(r.summary.throughput_per_s)}</span>
                        </div>
                    }
                }
            </For>
            <div class="axis throughput">
                {move || {
                    ticks()
                        .into_iter()
                        .map(|(v, at)| view! { <span style:left=format!("{at:.2}%")>{thousands(v as i64)}</span> })
                        .collect_view()
                }}
            </div>
        </figure>
    }
}

/// `bad` when the race sold what did not exist, `unsafe` when it is unsafe by design but got
/// lucky this time, `good` otherwise.
fn bar_tone(r: &ScoreRow) -> &'static str {
    if r.kind.is_bad() {
        "bad"
    } else if r.unsafe_by_design {
        "unsafe"
    } else {
        "good"
    }
}

/// Every number, one row per strategy. On a phone each row folds into a card.
#[component]
fn ScoreTable(
    /// The scoreboard to draw.
    board: BoardMemo,
) -> impl IntoView {
    let checkout = move || board.with(|b| b.as_ref().is_some_and(|(_, b)| b.checkout));
    let cart = move || board.with(|b| b.as_ref().is_some_and(|(_, b)| b.cart));
    view! {
        <div class="table-wrap">
            <table class="score">
                <thead>
                    <tr>
                        <th>"strategy"</th>
                        <th>"verdict"</th>
                        <th class="n">"sold / stock"</th>
                        <th class="n">"oversold"</th>
                        <th class="n">"final stock"</th>
                        <th class="n">"orders"</th>
                        {move || if checkout() {
                            view! {
                                <th class="n" title="Units in the ledger's confirmed rows">"confirmed"</th>
                                <th class="n" title="Units off the shelf in no hold and no order">"leaked"</th>
                                <th class="n" title="Units reserved a second time by a resent request">"reserved twice"</th>
                                <th class="n" title="Customers who got past the per-customer limit">"past limit"</th>
                                <th class="n" title="Confirmed and backordered units beyond the stock">"overbooked"</th>
                            }
                                .into_any()
                        } else if cart() {
                            view! {
                                <th class="n" title="Failed orders that still held some of their lines at the end">"partial carts"</th>
                                <th class="n" title="Units held by failed orders: off the shelf, sold to no one">"stranded"</th>
                                <th class="n" title="Lines a saga gave back after a later line was refused">"undone"</th>
                                <th class="n" title="Orders served by a warehouse other than the buyer's preferred one">"fallbacks"</th>
                            }
                                .into_any()
                        } else {
                            view! {
                                <th class="n">"lost updates"</th>
                                <th class="n" title="Buyers that stopped waiting their turn and took nothing">"gave up"</th>
                                <th class="n" title="Units of orders sent but never answered: maybe taken, never counted as sold">"in doubt"</th>
                            }
                                .into_any()
                        }}
                        <th class="n">"p50"</th>
                        <th class="n">"p99"</th>
                        // The race's cost per order; a checkout's table has no room for it.
                        {move || (!checkout()).then(|| view! {
                            <th class="n" title="Round trips per order: requests to the store divided by buyers">"trips / order"</th>
                            <th class="n">"retries"</th>
                        })}
                        <th class="n">"throughput"</th>
                    </tr>
                </thead>
                <tbody>
                    <For each=move || keyed_rows(board) key=|(k, _)| k.clone() let:item>
                        <ScoreLine row=item.1 checkout=checkout() cart=cart()/>
                    </For>
                </tbody>
            </table>
        </div>
    }
}

/// One strategy's numbers. Each cell carries its heading in `data-label` for the phone layout.
#[component]
fn ScoreLine(
    /// The row to draw.
    row: ScoreRow,
    /// A checkout comparison's row: the checkout's columns instead of the race's rarer ones.
    checkout: bool,
    /// A cart or warehouse comparison's row: the cart's columns instead of the race's rarer ones.
    cart: bool,
) -> impl IntoView {
    let s = &row.summary;
    // Computed here: a `>` inside an attribute would end the tag in `view!`.
    let oversold = s.oversold_units > 0;
    let negative = s.final_stock < 0;
    let too_many_orders = row.kind.is_bad() && s.orders_accepted > s.stock;
    view! {
        <tr
            data-testid="scoreboard-row"
            data-strategy=row.strategy.clone()
            data-tone=bar_tone(&row)
            data-oversold=s.oversold_units.to_string()
            data-lost-updates=s.lost_updates.to_string()
            data-gave-up=s.gave_up.to_string()
            data-in-doubt=s.in_doubt_units.to_string()
            data-false-sold-out=s.false_sold_out.to_string()
        >
            {who_cells(&row)}
            <td class="n" data-label="sold / stock">{format!("{} / {}", thousands(s.units_sold as i64), thousands(s.stock.into()))}</td>
            <td class="n" data-label="oversold" class:neg=oversold data-testid="scoreboard-oversold">
                {s.oversold_units.to_string()}
            </td>
            <td class="n" data-label="final stock" class:neg=negative>{thousands(s.final_stock)}</td>
            <td class="n" data-label="orders" class:neg=too_many_orders>{thousands(s.orders_accepted.into())}</td>
            {match s.checkout.as_deref().filter(|_| checkout) {
                Some(t) => checkout_cells(t).into_any(),
                None if cart => cart_cells(s).into_any(),
                None => rare_cells(s).into_any(),
            }}
            <td class="n" data-label="p50">{micros(s.latency.p50_us)}</td>
            <td class="n" data-label="p99">{micros(s.latency.p99_us)}</td>
            {(!checkout).then(|| view! {
                <td class="n" data-label="trips / order">{ratio(row.trips_per_order)}</td>
                <td class="n" data-label="retries">{thousands(s.retries as i64)}</td>
            })}
            <td class="n" data-label="throughput">{per_second(s.throughput_per_s)}</td>
        </tr>
    }
}

/// The row's first two cells: who raced (marked when unsafe by design), and the verdict, with
/// a note when it refused buyers while units remained.
fn who_cells(row: &ScoreRow) -> impl IntoView + use<> {
    let s = &row.summary;
    let refused_early = s.false_sold_out > 0;
    view! {
        <td class="who">
            {row.unsafe_by_design.then(|| view! { <span class="warn-mark" title="Unsafe by design">"⚠ "</span> })}
            {row.label.clone()}
            <small>{row.strategy.clone()}</small>
        </td>
        <td data-label="verdict">
            <span class="badge" data-kind=row.kind.as_str()>{row.kind.as_str()}</span>
            {refused_early.then(|| view! { <small class="verdict-note">{format!("refused {} while units remained", count(s.false_sold_out.into(), "buyer"))}</small> })}
        </td>
    }
}

/// A race row's rarer cells: lost updates, buyers who gave up, units in doubt.
fn rare_cells(s: &RunSummary) -> impl IntoView + use<> {
    let lost = s.lost_updates != 0;
    let gave_up = s.gave_up > 0;
    let in_doubt = s.in_doubt_units > 0;
    view! {
        <td class="n" data-label="lost updates" class:neg=lost>{thousands(s.lost_updates.abs())}</td>
        <td class="n" data-label="gave up" class:warn=gave_up>{thousands(s.gave_up.into())}</td>
        <td class="n" data-label="in doubt" class:warn=in_doubt>{thousands(s.in_doubt_units as i64)}</td>
    }
}

/// A checkout row's own cells: the ledger's confirmed units and the checkout's harms.
fn checkout_cells(t: &CheckoutTally) -> impl IntoView + use<> {
    let (leaked, twice, past, over) = (
        t.leaked_units != 0,
        t.duplicate_reservations > 0,
        t.limit_violations > 0,
        t.overage_units > 0,
    );
    view! {
        <td class="n" data-label="confirmed" data-testid="scoreboard-confirmed">{thousands(t.confirmed_units as i64)}</td>
        <td class="n" data-label="leaked" class:neg=leaked data-testid="scoreboard-leaked">{thousands(t.leaked_units)}</td>
        <td class="n" data-label="reserved twice" class:neg=twice>{thousands(t.duplicate_reservations as i64)}</td>
        <td class="n" data-label="past limit" class:neg=past>{thousands(t.limit_violations.into())}</td>
        <td class="n" data-label="overbooked" class:neg=over>{thousands(t.overage_units as i64)}</td>
    }
}

/// A cart or warehouse row's own cells: what became of the orders beyond the counters.
fn cart_cells(s: &RunSummary) -> impl IntoView + use<> {
    let t = s.cart.as_deref();
    let partial = t.map_or(0, |t| t.partial_carts);
    let stranded = t.map_or(0, |t| t.stranded_units);
    let undone = t.map_or(0, |t| t.compensations);
    let fallbacks = t.map_or(0, |t| t.fallback_orders);
    view! {
        <td class="n" data-label="partial carts" class:neg={partial > 0} data-testid="scoreboard-partial">{thousands(partial.into())}</td>
        <td class="n" data-label="stranded" class:neg={stranded > 0}>{thousands(stranded as i64)}</td>
        <td class="n" data-label="undone">{thousands(undone.into())}</td>
        <td class="n" data-label="fallbacks">{thousands(fallbacks.into())}</td>
    }
}
