//! What `oversold run` and `oversold compare` print for a `cart` or `warehouses` run: the
//! counts, the per-shelf ledger (which must add up), and the scoreboard.

use std::fmt::Write as _;

use oversold_protocol::{CartTally, RunConfig, RunSummary};

/// One run's table: the counts, then one ledger line per shelf.
pub fn table(config: &RunConfig, s: &RunSummary, c: &CartTally) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", config.describe());
    let rows: [(&str, String); 11] = [
        ("buyers", s.buyers.to_string()),
        ("orders accepted", s.orders_accepted.to_string()),
        ("refused (sold out)", s.rejected.to_string()),
        ("refused, units left", s.false_sold_out.to_string()),
        ("partial carts", c.partial_carts.to_string()),
        ("stranded units", c.stranded_units.to_string()),
        ("compensations", c.compensations.to_string()),
        ("fallback orders", c.fallback_orders.to_string()),
        (
            "longest doomed hold",
            format!("{} µs", c.longest_doomed_hold_us),
        ),
        ("errors / unknown", format!("{} / {}", s.errors, s.unknown)),
        ("round trips", s.round_trips.to_string()),
    ];
    for (name, value) in rows {
        let _ = writeln!(out, "  {name:<22}{value:>14}");
    }
    let _ = writeln!(
        out,
        "  {:<10}{:>7}{:>7}{:>10}{:>7}{:>10}",
        "shelf", "stock", "sold", "stranded", "final", "oversold"
    );
    let mut adds_up = true;
    for l in c.shelves() {
        adds_up &= l.unexplained() == 0;
        let _ = writeln!(
            out,
            "  {:<10}{:>7}{:>7}{:>10}{:>7}{:>10}{}",
            l.name,
            l.stock,
            l.units_sold,
            l.stranded_units,
            l.final_stock,
            l.oversold_units,
            l.node
                .as_deref()
                .map(|n| format!("  on {n}"))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(
        out,
        "  stock = final + sold + stranded on every shelf: {}",
        if adds_up {
            "yes"
        } else {
            "NO (units in doubt or lost)"
        }
    );
    if let Some(why) = &c.would_fail_on_cluster {
        let _ = writeln!(out, "  on a Redis Cluster: {why}");
    }
    let verdict = match (s.oversold_units, c.partial_carts) {
        (0, 0) => "no oversell, no partial cart".to_string(),
        (0, p) => format!(
            "no oversell; {p} PARTIAL carts stranded {} units",
            c.stranded_units
        ),
        (o, p) => format!("OVERSOLD by {o} units; {p} partial carts"),
    };
    let _ = writeln!(out, "  => {verdict}");
    out
}

/// The scoreboard of a comparison of multi-key strategies.
pub fn scoreboard(results: &[(RunConfig, RunSummary)]) -> String {
    let mut out = String::new();
    if let Some((config, _)) = results.first() {
        let _ = writeln!(out, "{}", config.race.describe());
    }
    let _ = writeln!(
        out,
        "{:<22}{:>9}{:>10}{:>9}{:>10}{:>7}{:>10}{:>10}{:>9}",
        "strategy",
        "accepted",
        "oversold",
        "partial",
        "stranded",
        "undo",
        "fallback",
        "refused+",
        "p99 µs"
    );
    for (config, s) in results {
        let Some(c) = &s.cart else { continue };
        let _ = writeln!(
            out,
            "{:<22}{:>9}{:>10}{:>9}{:>10}{:>7}{:>10}{:>10}{:>9}",
            config.strategy,
            s.orders_accepted,
            s.oversold_units,
            c.partial_carts,
            c.stranded_units,
            c.compensations,
            c.fallback_orders,
            s.false_sold_out,
            s.latency.p99_us,
        );
    }
    out
}
