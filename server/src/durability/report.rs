//! What `oversold run` and `oversold compare` print for a `durability` run: the sale's
//! counts, the crash (when, what Redis loaded, what acknowledged orders it lost), and the
//! setting's throughput in the burst before the sale.

use std::fmt::Write as _;

use oversold_protocol::{DurabilityTally, Persistence, RunConfig, RunSummary};

/// One run's table.
pub fn table(config: &RunConfig, s: &RunSummary, d: &DurabilityTally) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", config.describe());
    let snapshot = match d.snapshot_at_ms {
        Some(ms) => format!(", snapshot (BGSAVE) at {ms} ms"),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "  Redis of its own, persistence {}{snapshot}; kill -9 at {} ms, back after {} ms",
        d.persistence.as_str(),
        d.crash_at_ms,
        d.down_ms
    );
    let rows: [(&str, String); 12] = [
        ("stock", s.stock.to_string()),
        ("buyers", s.buyers.to_string()),
        ("units sold", s.units_sold.to_string()),
        ("final stock", s.final_stock.to_string()),
        ("oversold units", s.oversold_units.to_string()),
        ("refused (sold out)", s.rejected.to_string()),
        ("errors", s.errors.to_string()),
        ("unknown (in doubt)", s.unknown.to_string()),
        (
            "acknowledged pre-crash",
            d.acknowledged_before_crash.to_string(),
        ),
        ("stock Redis loaded", restored(d, "no stock key")),
        (
            "acknowledged, lost",
            format!("{} orders, {} units", d.acknowledged_lost, d.units_lost),
        ),
        (
            "burst (before sale)",
            format!(
                "{} reserves/s, p99 {} µs",
                d.burst_ops_per_s, d.burst_p99_us
            ),
        ),
    ];
    for (name, value) in rows {
        let _ = writeln!(out, "  {name:<24}{value:>28}");
    }
    let _ = writeln!(out, "  => {}", verdict(s, d));
    out
}

/// The counter the restarted Redis loaded, or `gone` when the key did not come back.
fn restored(d: &DurabilityTally, gone: &str) -> String {
    match d.restored_stock {
        Some(n) => n.to_string(),
        None => gone.into(),
    }
}

/// The run in one sentence.
fn verdict(s: &RunSummary, d: &DurabilityTally) -> String {
    if d.acknowledged_lost > 0 {
        let from = match d.persistence {
            Persistence::None => "nothing (no persistence)".to_string(),
            Persistence::Rdb => "the last snapshot".to_string(),
            other => other.as_str().to_string(),
        };
        let mut v = format!(
            "kill -9 mid-sale; Redis came back from {from} and {} acknowledged orders ({} units) were lost",
            d.acknowledged_lost, d.units_lost
        );
        if s.oversold_units > 0 {
            v += &format!(", then sold again: OVERSOLD by {}", s.oversold_units);
        }
        return v;
    }
    let note = match d.persistence {
        Persistence::AofEverysec => {
            " (a process crash; a power cut could still lose up to a second not yet fsynced)"
        }
        _ => "",
    };
    format!(
        "kill -9 mid-sale; Redis replayed its {} and kept all {} acknowledged orders{note}",
        match d.persistence {
            Persistence::None | Persistence::Rdb => "data",
            _ => "AOF",
        },
        d.acknowledged_before_crash
    )
}

/// The scoreboard: one line per setting, the crash's cost beside the setting's throughput.
pub fn scoreboard(results: &[(RunConfig, RunSummary)]) -> String {
    let mut out = String::new();
    if let Some((config, _)) = results.first() {
        let _ = writeln!(out, "{}", config.race.describe());
    }
    let _ = writeln!(
        out,
        "{:<14}{:>6}{:>7}{:>9}{:>8}{:>8}{:>10}{:>12}{:>10}{:>10}",
        "strategy",
        "sold",
        "final",
        "oversold",
        "crash",
        "acked",
        "loaded",
        "lost",
        "burst/s",
        "p99"
    );
    for (config, s) in results {
        let Some(d) = &s.durability else { continue };
        let _ = writeln!(
            out,
            "{:<14}{:>6}{:>7}{:>9}{:>8}{:>8}{:>10}{:>12}{:>10}{:>10}",
            config.strategy,
            s.units_sold,
            s.final_stock,
            s.oversold_units,
            format!("{} ms", d.crash_at_ms),
            d.acknowledged_before_crash,
            restored(d, "gone"),
            format!("{} units", d.units_lost),
            d.burst_ops_per_s,
            format!("{} µs", d.burst_p99_us),
        );
    }
    out
}
