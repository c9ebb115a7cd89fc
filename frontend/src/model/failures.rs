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

/// Whether `summary` is a "Redis fails" run's, with facts to show (the lab fetches their
/// panel, a chunk, only then).
pub fn has_facts(summary: &RunSummary) -> bool {
    summary.busy.is_some()
        || summary.durability.is_some()
        || summary.eviction.is_some()
        || summary.failover.is_some()
}

/// The facts of `summary`'s failure; empty for a scenario whose summary has none.
pub fn facts(summary: &RunSummary) -> Vec<Fact> {
    let mut out = Vec::new();
    if let Some(b) = &summary.busy {
        out.push(fact(
            "BUSY replies",
            thousands(b.busy_replies.into()),
            b.busy_replies > 0,
        ));
        out.push(fact(
            "Redis stalled",
            millis(clamp(b.stalled_ms)),
            b.stalled_ms > 0,
        ));
        let ended = match b.slow_job {
            SlowJobEnd::Finished => "finished by itself",
            SlowJobEnd::Killed => "stopped by SCRIPT KILL / FUNCTION KILL",
            SlowJobEnd::ShutDown => "unkillable: SHUTDOWN NOSAVE and a restart",
            SlowJobEnd::Failed => "failed",
        };
        out.push(fact(
            "The slow job",
            ended.to_string(),
            b.slow_job == SlowJobEnd::ShutDown,
        ));
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
            .map_or_else(|| "the stock key was gone".to_string(), thousands);
        out.push(fact(
            "Stock after the restart",
            restored,
            d.restored_stock.is_none(),
        ));
        out.push(lost(d.acknowledged_lost, d.units_lost));
        out.push(fact(
            "Reserves a second (this setting)",
            thousands(i64::try_from(d.burst_ops_per_s).unwrap_or(i64::MAX)),
            false,
        ));
    }
    if let Some(e) = &summary.eviction {
        out.push(fact(
            "maxmemory-policy",
            e.policy.as_str().to_string(),
            false,
        ));
        let counter = if e.stock_key_evicted {
            "evicted"
        } else {
            "kept"
        };
        out.push(fact(
            "The stock counter",
            counter.to_string(),
            e.stock_key_evicted,
        ));
        out.push(fact(
            "Keys evicted",
            thousands(clamp_i(e.evicted_keys)),
            e.evicted_keys > 0,
        ));
        out.push(fact(
            "Told \"sold out\" with units left",
            thousands(summary.false_sold_out.into()),
            summary.false_sold_out > 0,
        ));
        out.push(fact(
            "Refused STOCK_MISSING",
            thousands(e.stock_missing_refusals.into()),
            false,
        ));
        out.push(fact(
            "Refused OOM",
            thousands(e.oom_refusals.into()),
            e.oom_refusals > 0,
        ));
    }
    if let Some(f) = &summary.failover {
        out.push(fact(
            "Replica fell behind at",
            millis(f.replica_stopped_at_ms),
            false,
        ));
        out.push(fact(
            "Primary killed at",
            millis(f.primary_killed_at_ms),
            false,
        ));
        out.push(fact(
            "Confirmed, then lost",
            count(f.acknowledged_lost, "unit"),
            f.acknowledged_lost > 0,
        ));
        out.push(fact(
            "Sold twice",
            count(f.sold_twice, "unit"),
            f.sold_twice > 0,
        ));
        out.push(fact(
            "Refused (NOREPLICAS)",
            thousands(f.refused_writes.into()),
            false,
        ));
        out.push(fact(
            "WAIT ran out",
            thousands(f.wait_timed_out.into()),
            false,
        ));
        out.push(fact("Sale paused", millis(clamp(f.failover_ms)), false));
    }
    out
}

fn clamp_i(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Orders the buyers were told they got that the restarted Redis does not remember.
fn lost(orders: u32, units: u64) -> Fact {
    let value = if orders == 0 {
        "none".to_string()
    } else {
        format!(
            "{} ({})",
            count(orders.into(), "order"),
            count(units, "unit")
        )
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
        assert!(!has_facts(&summary(10, 10, 0)));
    }

    #[test]
    fn an_unkillable_script_reads_as_a_stall_a_restart_and_its_losses() {
        let mut s = summary(10, 12, -2);
        s.busy = Some(Box::new(BusyTally {
            busy_replies: 14,
            stalled_ms: 720,
            killed: 0,
            kill_refused: 1,
            restarted: 1,
            acknowledged_lost: 3,
            units_lost: 3,
            slow_job: SlowJobEnd::ShutDown,
            slow_job_ms: 2_500,
            slow_job_at_ms: 200,
            busy_threshold_ms: 100,
            watchdog_ms: 500,
        }));
        let f = facts(&s);
        assert!(has_facts(&s) && !f.is_empty());
        let get = |label: &str| f.iter().find(|x| x.label == label).unwrap().clone();
        assert_eq!(get("BUSY replies").value, "14");
        assert!(get("Redis stalled").bad);
        assert_eq!(
            get("The slow job").value,
            "unkillable: SHUTDOWN NOSAVE and a restart"
        );
        assert_eq!(get("Acknowledged, then lost").value, "3 orders (3 units)");
        assert!(get("Acknowledged, then lost").bad);
    }
}
