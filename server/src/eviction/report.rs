//! What `oversold run` and `oversold compare` print for an `eviction` run: the sale's
//! counts, then what the memory pressure cost (the counter, refusals, evictions, units
//! left unsold).

use std::fmt::Write as _;

use oversold_protocol::{EvictionTally, RunConfig, RunSummary};

/// One run's table.
pub fn table(config: &RunConfig, s: &RunSummary, e: &EvictionTally) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", config.describe());
    let _ = writeln!(
        out,
        "  Redis of its own: maxmemory {} KiB, maxmemory-policy {}; a page cache writes at {} ms, in a {} ms lull",
        e.maxmemory_bytes / 1024,
        e.policy,
        e.filler_at_ms,
        e.lull_ms
    );
    let rows: [(&str, String); 14] = [
        ("stock", s.stock.to_string()),
        ("buyers", s.buyers.to_string()),
        ("units sold", s.units_sold.to_string()),
        ("units unsold", e.units_unsold.to_string()),
        (
            "final stock",
            if e.stock_key_evicted {
                "evicted (reads as 0)".into()
            } else {
                s.final_stock.to_string()
            },
        ),
        ("oversold units", s.oversold_units.to_string()),
        ("refused (sold out)", s.rejected.to_string()),
        ("false sold-outs", s.false_sold_out.to_string()),
        ("STOCK_MISSING", e.stock_missing_refusals.to_string()),
        ("OOM refusals", e.oom_refusals.to_string()),
        ("unknown (in doubt)", s.unknown.to_string()),
        ("evicted keys", e.evicted_keys.to_string()),
        (
            "cache writes / OOM",
            format!("{} / {}", e.filler_writes, e.filler_refused),
        ),
        (
            "latency p50/p99",
            format!("{} / {} µs", s.latency.p50_us, s.latency.p99_us),
        ),
    ];
    for (name, value) in rows {
        let _ = writeln!(out, "  {name:<22}{value:>22}");
    }
    let _ = writeln!(out, "  => {}", verdict(s, e));
    out
}

/// The run in one sentence.
fn verdict(s: &RunSummary, e: &EvictionTally) -> String {
    let mut v = if e.oom_refusals > 0 {
        format!(
            "memory full and {} evicts nothing: {} buyers refused with OOM, nothing written",
            e.policy, e.oom_refusals
        )
    } else if e.stock_missing_refusals > 0 {
        format!(
            "{} evicted the counter; {} buyers refused with STOCK_MISSING (a reason, not a sold-out)",
            e.policy, e.stock_missing_refusals
        )
    } else if s.false_sold_out > 0 {
        format!(
            "{} evicted the counter; {} buyers were told \"sold out\" with {} units left",
            e.policy, s.false_sold_out, e.units_unsold
        )
    } else if e.stock_key_evicted {
        format!("{} evicted the counter, but nobody came after", e.policy)
    } else {
        "the counter survived the memory pressure".into()
    };
    if s.oversold_units > 0 {
        v += &format!("; OVERSOLD by {}", s.oversold_units);
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
        "{:<12}{:>14}{:>6}{:>8}{:>9}{:>11}{:>9}{:>6}{:>9}{:>9}{:>7}",
        "strategy",
        "policy",
        "sold",
        "unsold",
        "oversold",
        "false s/o",
        "MISSING",
        "OOM",
        "evicted",
        "counter",
        "p99"
    );
    for (config, s) in results {
        let Some(e) = &s.eviction else { continue };
        let _ = writeln!(
            out,
            "{:<12}{:>14}{:>6}{:>8}{:>9}{:>11}{:>9}{:>6}{:>9}{:>9}{:>7}",
            config.strategy,
            e.policy.as_str(),
            s.units_sold,
            e.units_unsold,
            s.oversold_units,
            s.false_sold_out,
            e.stock_missing_refusals,
            e.oom_refusals,
            e.evicted_keys,
            if e.stock_key_evicted {
                "gone".to_string()
            } else {
                s.final_stock.to_string()
            },
            format!("{}ms", s.latency.p99_us / 1000),
        );
    }
    out
}
