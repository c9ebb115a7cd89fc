//! What `oversold run` and `oversold compare` print for a `busy_script` run: the sale's
//! counts, then what the stall cost (BUSY replies, its length, kills, restarts, units lost).

use std::fmt::Write as _;

use oversold_protocol::{BusyTally, RunConfig, RunSummary};

/// One run's table.
pub fn table(config: &RunConfig, s: &RunSummary, b: &BusyTally) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", config.describe());
    let _ = writeln!(
        out,
        "  Redis of its own: busy-reply-threshold {} ms, watchdog after {} ms; slow job {} ms at {} ms",
        b.busy_threshold_ms, b.watchdog_ms, b.slow_job_ms, b.slow_job_at_ms
    );
    let rows: [(&str, String); 15] = [
        ("stock", s.stock.to_string()),
        ("buyers", s.buyers.to_string()),
        ("units sold", s.units_sold.to_string()),
        ("final stock", s.final_stock.to_string()),
        ("oversold units", s.oversold_units.to_string()),
        ("refused (sold out)", s.rejected.to_string()),
        ("BUSY replies", b.busy_replies.to_string()),
        (
            "other errors",
            (s.errors - b.busy_replies.min(s.errors)).to_string(),
        ),
        ("unknown (in doubt)", s.unknown.to_string()),
        ("stalled", format!("{} ms", b.stalled_ms)),
        ("slow job", b.slow_job.as_str().to_string()),
        (
            "killed / refused",
            format!("{} / {}", b.killed, b.kill_refused),
        ),
        ("restarted", b.restarted.to_string()),
        (
            "acknowledged, lost",
            format!("{} orders, {} units", b.acknowledged_lost, b.units_lost),
        ),
        (
            "latency p50/p99",
            format!("{} / {} µs", s.latency.p50_us, s.latency.p99_us),
        ),
    ];
    for (name, value) in rows {
        let _ = writeln!(out, "  {name:<22}{value:>22}");
    }
    let _ = writeln!(out, "  => {}", verdict(s, b));
    out
}

/// The run in one sentence.
fn verdict(s: &RunSummary, b: &BusyTally) -> String {
    if b.restarted > 0 {
        let mut v = format!(
            "the job had written, so it was UNKILLABLE; SHUTDOWN NOSAVE restarted Redis from its \
             snapshot and {} acknowledged units were lost",
            b.units_lost
        );
        if s.oversold_units > 0 {
            v += &format!(", then sold again: OVERSOLD by {}", s.oversold_units);
        }
        return v;
    }
    if b.killed > 0 {
        return format!(
            "{} buyers got BUSY during a {} ms stall; the job was killed and nothing was lost",
            b.busy_replies, b.stalled_ms
        );
    }
    match b.busy_replies {
        0 => "no buyer got BUSY and nothing needed killing".into(),
        n => format!("{n} buyers got BUSY"),
    }
}

/// The scoreboard: one line per strategy.
pub fn scoreboard(results: &[(RunConfig, RunSummary)]) -> String {
    let mut out = String::new();
    if let Some((config, _)) = results.first() {
        let _ = writeln!(out, "{}", config.race.describe());
    }
    let _ = writeln!(
        out,
        "{:<15}{:>6}{:>7}{:>9}{:>6}{:>9}{:>7}{:>8}{:>10}{:>6}{:>10}",
        "strategy",
        "sold",
        "final",
        "oversold",
        "BUSY",
        "stalled",
        "killed",
        "restart",
        "lost",
        "p99",
        "slow job"
    );
    for (config, s) in results {
        let Some(b) = &s.busy else { continue };
        let _ = writeln!(
            out,
            "{:<15}{:>6}{:>7}{:>9}{:>6}{:>9}{:>7}{:>8}{:>10}{:>6}{:>10}",
            config.strategy,
            s.units_sold,
            s.final_stock,
            s.oversold_units,
            b.busy_replies,
            format!("{} ms", b.stalled_ms),
            b.killed,
            b.restarted,
            format!("{} units", b.units_lost),
            format!("{}ms", s.latency.p99_us / 1000),
            b.slow_job.as_str(),
        );
    }
    out
}
