//! What a run of a "Redis fails" scenario adds to its counters: the facts of the failure
//! (`BUSY` replies and what the watchdog did; the crash and what the restart lost), in the
//! words the page shows under the counters. One place for those words, read from the
//! summary's own tallies, so the facts and the counters cannot disagree.

use oversold_protocol::RunSummary;
use oversold_protocol::busy::SlowJobEnd;

use super::text::{count, millis, thousands};

/// One fact: what it is, its value, and whether it is a loss the lesson is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// E.g. `BUSY replies`.
    pub label: &'static str,
    /// E.g. `14`.
    pub value: String,
    /// A loss or a stall: drawn in the unsafe colour.
    pub bad: bool,
}

fn fact(label: &'static str, value: String, bad: bool) -> Fact {
    Fact { label, value, bad }
}

/// The facts of `summary`'s failure; empty for a scenario whose summary has none.
pub fn facts(summary: &RunSummary) -> Vec<Fact> {
    let mut out = Vec::new();
    if let Some(b) = &summary.busy {
        out.push(fact("BUSY replies", thousands(b.busy_replies.into()), b.busy_replies > 0));
        out.push(fact("Redis stalled", millis(clamp(b.stalled_ms)), b.stalled_ms > 0));
        let ended = match b.slow_job {
            SlowJobEnd::Finished => "finished by itself",
            SlowJobEnd::Killed => "stopped by SCRIPT KILL / FUNCTION KILL",
            SlowJobEnd::ShutDown => "unkillable: SHUTDOWN NOSAVE and a restart",
            SlowJobEnd::Failed => "failed",
        };
        out.push(fact("The slow job", ended.to_string(), b.slow_job == SlowJobEnd::ShutDown));
        out.push(lost(b.acknowledged_lost, b.units_lost));
    }
    if let Some(d) = &summary.durability {
        out.push(fact("Crashed (kill -9) at", millis(d.crash_at_ms), false));
        out.push(fact(
            "Acknowledged before the crash",
            count(d.acknowledged_before_crash.into(), "order"),
            false,
        ));
        let restored = d
            .restored_stock
            .map_or_else(|| "the stock key was gone".to_string(), |s| thousands(s));
        out.push(fact("Stock after the restart", restored, d.restored_stock.is_none()));
        out.push(lost(d.acknowledged_lost, d.units_lost));
        out.push(fact(
            "Reserves a second (this setting)",
            thousands(i64::try_from(d.burst_ops_per_s).unwrap_or(i64::MAX)),
            false,
        ));
    }
    out
}

/// Orders the buyers were told they got that the restarted Redis does not remember.
fn lost(orders: u32, units: u64) -> Fact {
    let value = if orders == 0 {
        "none".to_string()
    } else {
        format!("{} ({})", count(orders.into(), "order"), count(units, "unit"))
    };
    fact("Acknowledged, then lost", value, orders > 0)
}

fn clamp(ms: u64) -> u32 {
    u32::try_from(ms).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixtures::summary;
    use oversold_protocol::busy::BusyTally;

    #[test]
    fn a_race_has_no_failure_facts() {
        assert!(facts(&summary(10, 10, 0)).is_empty());
    }

    #[test]
    fn an_unkillable_script_reads_as_a_stall_a_restart_and_its_losses() {
        let mut s = summary(10, 12, -2);
        s.busy = Some(Box::new(BusyTally {
            busy_replies: 14,
            stalled_ms: 720,
            restarted: 1,
            acknowledged_lost: 3,
            units_lost: 3,
            slow_job: SlowJobEnd::ShutDown,
            ..BusyTally::default()
        }));
        let f = facts(&s);
        let get = |label: &str| f.iter().find(|x| x.label == label).unwrap().clone();
        assert_eq!(get("BUSY replies").value, "14");
        assert!(get("Redis stalled").bad);
        assert_eq!(get("The slow job").value, "unkillable: SHUTDOWN NOSAVE and a restart");
        assert_eq!(get("Acknowledged, then lost").value, "3 orders (3 units)");
        assert!(get("Acknowledged, then lost").bad);
    }
}
