//! The comparison scoreboard: one row per strategy with its verdict, and the scales its two
//! charts share (units sold against the stock line, latency on a log axis). A checkout
//! comparison's board says so ([`Scoreboard::checkout`]): its table shows the checkout's
//! columns, and its headline names leaks, double reservations and limits broken.

use oversold_protocol::{RunSummary, StrategyInfo};

use super::axis::Axis;
use super::chart::{LogScale, UnitsBar, pct, units_bar};
use super::text::{count, per_second};
use super::verdict::{Kind, kind};

/// The units axis ends on a round tick with at most this many intervals (34 sold: 0 to 40).
const UNITS_INTERVALS: u32 = 5;

/// One strategy's line on the scoreboard.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreRow {
    /// Strategy name, e.g. `watch`.
    pub strategy: String,
    /// Short label for prose and the chart, e.g. `WATCH / MULTI / EXEC`.
    pub label: String,
    /// Whether the server calls it unsafe by design (coloured as a warning whatever happened).
    pub unsafe_by_design: bool,
    /// How the race ended.
    pub kind: Kind,
    /// The server's tally.
    pub summary: RunSummary,
    /// Redis (or PostgreSQL) requests per order: `round_trips / buyers`.
    pub trips_per_order: f64,
    /// The units chart's bar.
    pub units: UnitsBar,
    /// Where p50 and p99 sit on the latency axis, % of the track.
    pub p50_pct: f64,
    /// See `p50_pct`.
    pub p99_pct: f64,
    /// Where its orders per second sit on the throughput axis, % of the track.
    pub throughput_pct: f64,
}

/// Everything the scoreboard panel draws.
#[derive(Debug, Clone, PartialEq)]
pub struct Scoreboard {
    /// One row per race, in racing order.
    pub rows: Vec<ScoreRow>,
    /// Right end of the units axis.
    pub units_max: f64,
    /// The latency axis: ticks at powers of ten, in µs.
    pub latency: LogScale,
    /// The throughput axis: ticks at powers of ten, in orders a second. A log axis, because
    /// a database's row lock and a Lua script differ by tens of times.
    pub throughput: LogScale,
    /// The sentence above the table.
    pub headline: String,
    /// True for a checkout comparison (its summaries carry the checkout's tally).
    pub checkout: bool,
    /// True for a cart or warehouse comparison (its summaries carry the cart tally).
    pub cart: bool,
}

/// Build the scoreboard from the summaries (in racing order) and the strategies `hello` listed.
pub fn scoreboard(summaries: &[RunSummary], infos: &[StrategyInfo]) -> Scoreboard {
    let most = summaries
        .iter()
        .map(|s| s.units_sold.max(u64::from(s.stock)))
        .max()
        .unwrap_or(0);
    let units_max = Axis::covering(most, UNITS_INTERVALS).end as f64;
    let latency = LogScale::covering(
        summaries
            .iter()
            .flat_map(|s| [s.latency.p50_us as f64, s.latency.p99_us as f64]),
    );
    let throughput = LogScale::covering(summaries.iter().map(|s| s.throughput_per_s));
    let rows: Vec<ScoreRow> = summaries
        .iter()
        .map(|s| {
            let info = infos.iter().find(|i| i.about.name == s.strategy);
            ScoreRow {
                strategy: s.strategy.clone(),
                label: info.map_or_else(|| s.strategy.clone(), |i| i.about.short_label.to_string()),
                unsafe_by_design: info.is_some_and(|i| i.about.unsafe_by_design),
                kind: kind(s),
                summary: s.clone(),
                trips_per_order: if s.buyers == 0 {
                    0.0
                } else {
                    s.round_trips as f64 / f64::from(s.buyers)
                },
                units: units_bar(s.stock, s.units_sold, units_max),
                p50_pct: latency.pct(s.latency.p50_us as f64),
                p99_pct: latency.pct(s.latency.p99_us as f64),
                throughput_pct: throughput.pct(s.throughput_per_s),
            }
        })
        .collect();
    let headline = headline(&rows);
    Scoreboard {
        checkout: summaries.iter().any(|s| s.checkout.is_some()),
        cart: summaries.iter().any(|s| s.cart.is_some()),
        rows,
        units_max,
        latency,
        throughput,
        headline,
    }
}

/// E.g. `Naive oversold 24 units and Lost update took 50 orders for 10 units (its counter still
/// says 8 left); the other 5 sold only what existed. Fastest of those: Atomic, 12,345/s.`
pub fn headline(rows: &[ScoreRow]) -> String {
    if rows.is_empty() {
        return "No race finished.".to_string();
    }
    let bad: Vec<String> = rows.iter().filter_map(failure).collect();
    let good = rows.len() - bad.len();
    let mut text = verdicts(&bad, good);
    // Safe is not the same as complete: say who turned buyers away with units on the shelf,
    // and who left units in doubt.
    for r in rows {
        text.push_str(&caveats(r));
    }
    if let Some(f) = fastest_safe(rows).filter(|_| good > 1) {
        text.push_str(&format!(
            " Fastest of those: {}, {}.",
            f.label,
            per_second(f.summary.throughput_per_s)
        ));
    }
    text
}

/// What went wrong in one race, in a clause (`Naive oversold 24 units`); `None` when nothing did.
fn failure(r: &ScoreRow) -> Option<String> {
    match r.kind {
        Kind::LostUpdate => Some(format!(
            "{} took {} orders for {} units (its counter still says {} left)",
            r.label, r.summary.orders_accepted, r.summary.stock, r.summary.final_stock
        )),
        Kind::Oversold => Some(format!(
            "{} oversold {} units",
            r.label, r.summary.oversold_units
        )),
        Kind::Leaked => Some(format!(
            "{} leaked {}",
            r.label,
            count(
                r.summary
                    .checkout
                    .as_ref()
                    .map_or(0, |t| t.leaked_units.unsigned_abs()),
                "unit"
            )
        )),
        _ => None,
    }
}

/// The headline's first sentence: the failures joined, then how many others sold only what
/// existed.
fn verdicts(bad: &[String], good: usize) -> String {
    match (bad.len(), good) {
        (0, _) => "Every strategy sold only what existed.".to_string(),
        (_, 0) => format!("{}.", join(bad)),
        (_, 1) => format!("{}; the other one sold only what existed.", join(bad)),
        (_, n) => format!("{}; the other {n} sold only what existed.", join(bad)),
    }
}

/// The fastest race that ended well and ran to the end.
fn fastest_safe(rows: &[ScoreRow]) -> Option<&ScoreRow> {
    rows.iter()
        .filter(|r| !r.kind.is_bad() && !r.summary.cancelled)
        .max_by(|a, b| {
            a.summary
                .throughput_per_s
                .total_cmp(&b.summary.throughput_per_s)
        })
}

/// One race's harms short of overselling, each a sentence with a leading space (empty when
/// none): buyers refused while units remained, units in doubt, then the cart's and the
/// checkout's own.
fn caveats(r: &ScoreRow) -> String {
    let s = &r.summary;
    let mut text = String::new();
    if s.false_sold_out > 0 {
        text.push_str(&format!(
            " {} refused {} while units remained.",
            r.label,
            count(s.false_sold_out.into(), "buyer")
        ));
    }
    if s.in_doubt_units > 0 {
        text.push_str(&format!(
            " {} left {} in doubt.",
            r.label,
            count(s.in_doubt_units, "unit")
        ));
    }
    text.push_str(&cart_caveats(r));
    text.push_str(&checkout_caveats(r));
    text
}

/// A cart comparison: who failed orders that kept their units, and who gave them back.
fn cart_caveats(r: &ScoreRow) -> String {
    let mut text = String::new();
    let Some(t) = r.summary.cart.as_deref() else {
        return text;
    };
    if t.partial_carts > 0 {
        text.push_str(&format!(
            " {} left {} holding {}.",
            r.label,
            count(t.partial_carts.into(), "partial cart"),
            count(t.stranded_units, "unit")
        ));
    }
    if t.compensations > 0 {
        text.push_str(&format!(
            " {} gave {} back.",
            r.label,
            count(t.compensations.into(), "line")
        ));
    }
    text
}

/// A checkout comparison: who reserved a unit twice, and who let a customer past the limit.
fn checkout_caveats(r: &ScoreRow) -> String {
    let mut text = String::new();
    let Some(t) = r.summary.checkout.as_deref() else {
        return text;
    };
    if t.duplicate_reservations > 0 {
        text.push_str(&format!(
            " {} reserved {} twice.",
            r.label,
            count(t.duplicate_reservations, "unit")
        ));
    }
    if t.limit_violations > 0 {
        text.push_str(&format!(
            " {} let {} past the limit.",
            r.label,
            count(t.limit_violations.into(), "customer")
        ));
    }
    text
}

/// `a`, `a and b`, `a, b and c`.
fn join(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The stock line's position on the units axis (every race shares the stock).
pub fn stock_pct(board: &Scoreboard) -> f64 {
    board
        .rows
        .first()
        .map_or(0.0, |r| pct(f64::from(r.summary.stock), board.units_max))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixtures::{strategies, summary};
    use oversold_protocol::LatencySummary;

    fn race(name: &str, sold: u64, final_stock: i64, lost: i64, p50: u64, p99: u64) -> RunSummary {
        let mut s = summary(10, sold, final_stock);
        s.strategy = name.into();
        s.lost_updates = lost;
        s.latency = LatencySummary {
            p50_us: p50,
            p95_us: p99,
            p99_us: p99,
            max_us: p99,
        };
        s
    }

    fn sample() -> Scoreboard {
        let infos = strategies();
        let mut lua = race("lua", 10, 0, 0, 200, 900);
        lua.throughput_per_s = 9_000.0;
        let mut watch = race("watch", 10, 0, 0, 2_000, 40_000);
        watch.round_trips = 175;
        watch.throughput_per_s = 1_500.0;
        let races = [
            race("naive", 34, -24, 0, 300, 1_200),
            race("naive_set", 50, 8, 48, 300, 1_100),
            lua,
            watch,
        ];
        scoreboard(&races, &infos)
    }

    #[test]
    fn one_row_per_race_with_its_verdict_and_cost() {
        let b = sample();
        let kinds: Vec<Kind> = b.rows.iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            [Kind::Oversold, Kind::LostUpdate, Kind::Exact, Kind::Exact]
        );
        assert_eq!(b.rows[1].label, "Lost update");
        assert!(b.rows[0].unsafe_by_design && !b.rows[2].unsafe_by_design);
        // 175 round trips over 50 buyers.
        assert_eq!(b.rows[3].trips_per_order, 3.5);
    }

    #[test]
    fn charts_share_one_axis() {
        let b = sample();
        // 50 units sold at most: the axis ends at 50 and the stock line sits at 20%.
        assert_eq!(b.units_max, 50.0);
        assert_eq!(stock_pct(&b), 20.0);
        assert_eq!(b.rows[1].units.real_pct, 20.0);
        assert!((b.rows[1].units.phantom_pct - 80.0).abs() < 1e-9);
        // Latency from 200 µs to 40 ms: 100 µs .. 100 ms.
        let ticks: Vec<f64> = b.latency.ticks().into_iter().map(|(v, _)| v).collect();
        assert_eq!(ticks, [100.0, 1_000.0, 10_000.0, 100_000.0]);
        assert!(b.rows[2].p50_pct < b.rows[3].p50_pct);
    }

    #[test]
    fn headline_names_the_failures_and_the_fastest_safe_one() {
        assert_eq!(
            sample().headline,
            "Naive oversold 24 units and Lost update took 50 orders for 10 units (its counter still says 8 left); \
             the other 2 sold only what existed. Fastest of those: Atomic, 9,000/s."
        );
        assert_eq!(headline(&[]), "No race finished.");
        let mut sharded = race("sharded", 7, 3, 0, 300, 900);
        sharded.false_sold_out = 12;
        sharded.in_doubt_units = 1;
        assert_eq!(
            scoreboard(&[sharded], &strategies()).headline,
            "Every strategy sold only what existed. Sharded refused 12 buyers while units remained. \
             Sharded left 1 unit in doubt."
        );
        assert!(!sample().checkout);
        assert!(!sample().cart);
        let only_lua = scoreboard(&[race("lua", 10, 0, 0, 1, 2)], &[]);
        assert_eq!(only_lua.headline, "Every strategy sold only what existed.");
        assert_eq!(only_lua.rows[0].label, "lua");
    }

    #[test]
    fn a_checkout_board_names_leaks_doubles_and_broken_limits() {
        use crate::model::checkout::fixtures::{checkout_strategies, tally_summary};
        let named = |name: &str, s: RunSummary| RunSummary {
            strategy: name.into(),
            ..s
        };
        let mut atomic = named("atomic_no_holds", tally_summary(10, 3, 5, 2));
        atomic
            .checkout
            .as_deref_mut()
            .unwrap()
            .duplicate_reservations = 2;
        let mut limit = named("holds", tally_summary(10, 6, 4, 0));
        limit.checkout.as_deref_mut().unwrap().limit_violations = 1;
        let b = scoreboard(
            &[
                named("naive_checkout", tally_summary(10, -30, 25, 15)),
                atomic,
                limit,
            ],
            &checkout_strategies(),
        );
        assert!(b.checkout);
        assert_eq!(
            b.headline,
            "Naive checkout oversold 30 units and Atomic, no holds leaked 2 units; the other one sold only what existed. \
             Atomic, no holds reserved 2 units twice. Holds let 1 customer past the limit."
        );
    }

    #[test]
    fn a_cart_board_names_partial_carts_and_undone_lines() {
        use oversold_protocol::CartTally;
        let cart = |name: &str, partial: u32, stranded: u64, undone: u32| RunSummary {
            strategy: name.into(),
            cart: Some(Box::new(CartTally {
                partial_carts: partial,
                stranded_units: stranded,
                compensations: undone,
                ..Default::default()
            })),
            ..race("lua", 10, 0, 0, 300, 1_000)
        };
        let b = scoreboard(
            &[cart("per_line", 3, 4, 0), cart("saga", 0, 0, 5)],
            &strategies(),
        );
        assert_eq!(
            b.headline,
            "Every strategy sold only what existed. per_line left 3 partial carts holding 4 units. \
             saga gave 5 lines back. Fastest of those: saga, 4,000/s."
        );
    }
}
