//! What `oversold run` and `oversold compare` print for a `failover` run: the sale's counts,
//! then what the failover cost (acknowledged units lost, units sold twice, orders in doubt,
//! writes refused) and what the guard cost a confirmed order.

use std::fmt::Write as _;

use oversold_protocol::{FailoverTally, ReplicaGuard, RunConfig, RunSummary};

/// One run's table.
pub fn table(config: &RunConfig, s: &RunSummary, f: &FailoverTally) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", config.describe());
    let _ = writeln!(
        out,
        "  a primary and one replica of its own; guard: {}; replica stopped at {} ms, primary \
         killed at {} ms, replica promoted {} ms later",
        guard(f),
        f.replica_stopped_at_ms,
        f.primary_killed_at_ms,
        f.failover_ms
    );
    let rows: [(&str, String); 14] = [
        ("stock", s.stock.to_string()),
        ("buyers", s.buyers.to_string()),
        ("units confirmed", s.units_sold.to_string()),
        ("final stock", s.final_stock.to_string()),
        ("refused (sold out)", s.rejected.to_string()),
        ("refused (NOREPLICAS)", f.refused_writes.to_string()),
        (
            "other errors",
            (s.errors - f.refused_writes.min(s.errors)).to_string(),
        ),
        (
            "in doubt",
            format!("{} orders, {} units", s.unknown, s.in_doubt_units),
        ),
        ("WAIT timed out", f.wait_timed_out.to_string()),
        (
            "stock at the kill",
            format!(
                "primary {}, replica {}",
                f.primary_stock_at_kill, f.replica_stock_at_promotion
            ),
        ),
        (
            "acknowledged, lost",
            format!(
                "{} orders, {} units",
                f.acknowledged_lost_orders, f.acknowledged_lost
            ),
        ),
        ("sold twice", format!("{} units", f.sold_twice)),
        (
            "confirmed p50/p99",
            format!("{} / {} µs", f.confirm_p50_us, f.confirm_p99_us),
        ),
        (
            "latency p50/p99",
            format!("{} / {} µs", s.latency.p50_us, s.latency.p99_us),
        ),
    ];
    for (name, value) in rows {
        let _ = writeln!(out, "  {name:<22}{value:>26}");
    }
    let _ = writeln!(out, "  => {}", verdict(s, f));
    out
}

fn guard(f: &FailoverTally) -> String {
    match f.guard {
        ReplicaGuard::None => "none".into(),
        ReplicaGuard::Wait => format!("WAIT 1 {} after each reservation", f.wait_timeout_ms),
        ReplicaGuard::MinReplicas => format!(
            "min-replicas-to-write 1, min-replicas-max-lag {} s",
            f.min_replicas_max_lag_s
        ),
    }
}

/// The run in one sentence.
fn verdict(s: &RunSummary, f: &FailoverTally) -> String {
    if f.acknowledged_lost > 0 {
        let mut v = format!(
            "the primary confirmed {} units its replica never got, then died: lost in the failover",
            f.acknowledged_lost
        );
        if f.sold_twice > 0 {
            v += &format!(", and {} units sold twice", f.sold_twice);
        }
        return v;
    }
    let mut v = "no confirmed order was lost in the failover".to_string();
    if f.refused_writes > 0 {
        v += &format!(
            "; {} orders refused while the replica lagged (fail closed)",
            f.refused_writes
        );
    }
    if s.in_doubt_units > 0 {
        v += &format!("; {} units in doubt, not confirmed", s.in_doubt_units);
    }
    v
}

/// The scoreboard: one line per strategy.
pub fn scoreboard(results: &[(RunConfig, RunSummary)]) -> String {
    let mut out = String::new();
    if let Some((config, _)) = results.first() {
        let _ = writeln!(out, "{}", config.race.describe());
    }
    let _ = writeln!(
        out,
        "{:<14}{:>6}{:>7}{:>7}{:>7}{:>9}{:>9}{:>8}{:>9}{:>9}",
        "strategy",
        "sold",
        "final",
        "lost",
        "twice",
        "in doubt",
        "refused",
        "p50",
        "p99",
        "failover"
    );
    for (config, s) in results {
        let Some(f) = &s.failover else { continue };
        let _ = writeln!(
            out,
            "{:<14}{:>6}{:>7}{:>7}{:>7}{:>9}{:>9}{:>8}{:>9}{:>9}",
            config.strategy,
            s.units_sold,
            s.final_stock,
            f.acknowledged_lost,
            f.sold_twice,
            s.in_doubt_units,
            f.refused_writes,
            format!("{}µs", f.confirm_p50_us),
            format!("{}µs", f.confirm_p99_us),
            format!("{} ms", f.failover_ms),
        );
    }
    out
}
