//! The `durability` scenario on real processes: each run starts its own `redis-server` with
//! one persistence setting (never the test's shared one), sends it `SIGKILL` mid-sale, and
//! restarts it from its directory: its snapshot file or its AOF files, or nothing.
//!
//! Over ten seeded runs with the defaults per setting: `none` loses every order
//! acknowledged before the crash (the stock key itself is gone); `rdb` loses those after
//! its mid-sale snapshot and keeps those before; `aof_always` loses nothing, in every run.
//! `aof_everysec` is measured and its losses (if a slow `fsync` ever postponed a write)
//! checked the same way. In every run the tally's count of lost orders agrees with what the
//! restarted Redis loaded, and the counter at the end is what the orders after the restart
//! explain.

use std::process::Command;

use oversold::headless;
use oversold_protocol::{DurabilityTally, Persistence, RunRequest, RunSummary, Scenario};

use crate::common::TestRedis;

const SEEDS: u64 = 10;

/// Ten seeded default runs of `strategy`, each with its summary and its tally. The shared
/// Redis is left as it was: no key, still answering.
async fn ten_runs(strategy: &str) -> Vec<(RunSummary, DurabilityTally)> {
    let shared = TestRedis::start();
    let backends = shared.backends();
    let mut runs = Vec::new();
    for seed in 1..=SEEDS {
        let request = RunRequest {
            strategy: Some(strategy.into()),
            scenario: Some(Scenario::Durability),
            seed: Some(seed),
            ..RunRequest::default()
        };
        let (_, summary) = headless::run_once(&backends, &request)
            .await
            .unwrap_or_else(|e| panic!("{strategy} seed {seed}: {e}"));
        let d = *summary.durability.clone().expect("a durability summary");
        eprintln!(
            "{strategy} seed {seed}: crash at {} ms (snapshot {:?}), down {} ms, acked before {} loaded {:?} lost {} units ({} orders); sold {} final {} oversold {} unknown {}; burst {}/s p99 {} µs",
            d.crash_at_ms,
            d.snapshot_at_ms,
            d.down_ms,
            d.acknowledged_before_crash,
            d.restored_stock,
            d.units_lost,
            d.acknowledged_lost,
            summary.units_sold,
            summary.final_stock,
            summary.oversold_units,
            summary.unknown,
            d.burst_ops_per_s,
            d.burst_p99_us,
        );
        holds_the_ledger(strategy, seed, &summary, &d);
        runs.push((summary, d));
    }
    let mut raw = shared.raw().await;
    let keys: i64 = redis::cmd("DBSIZE").query_async(&mut raw).await.unwrap();
    assert_eq!(keys, 0, "the shared Redis was touched");
    runs
}

/// Every run: one outcome per buyer, a crash that happened, a lost count that agrees with
/// the stock Redis loaded, and a final counter the orders after the restart explain. The
/// defaults order one unit each, so orders and units are the same count.
fn holds_the_ledger(strategy: &str, seed: u64, s: &RunSummary, d: &DurabilityTally) {
    let at = format!("{strategy} seed {seed}: {s:?} {d:?}");
    assert_eq!(
        s.orders_accepted + s.rejected + s.errors + s.unknown + s.gave_up,
        s.buyers,
        "{at}: one outcome per buyer"
    );
    assert!(d.crash_at_ms > 0 && d.acknowledged_before_crash > 0, "{at}");
    assert_eq!(s.orders_accepted as u64, s.units_sold, "{at}: qty 1 each");
    let stock = i64::from(s.stock);
    // What the restarted Redis kept of the sale: the stock minus the counter it loaded (a
    // missing key kept nothing, and reads as 0 afterwards, as reserve.lua reads it).
    let kept = d.restored_stock.map_or(0, |r| stock - r);
    let loaded = d.restored_stock.unwrap_or(0);
    let acked = i64::from(d.acknowledged_before_crash);
    let lost = d.units_lost as i64;
    let in_doubt = s.in_doubt_units as i64;
    // Independent of the tally's per-order rule: Redis kept every acknowledged order but
    // the lost ones, plus perhaps some whose answer died with the process.
    assert!(
        acked - lost <= kept && kept <= acked - lost + in_doubt,
        "{at}: the lost count disagrees with what Redis loaded"
    );
    assert_eq!(d.acknowledged_lost as i64, lost, "{at}");
    // After the restart, the counter falls by exactly what was sold on it (and what in
    // doubt landed).
    let sold_after = s.units_sold as i64 - acked;
    assert!(
        s.final_stock <= loaded - sold_after && loaded - sold_after - in_doubt <= s.final_stock,
        "{at}: the counter after the restart"
    );
    assert!(
        s.final_stock >= 0,
        "{at}: Redis never sold past its own counter"
    );
    assert!(d.burst_ops_per_s > 0 && d.down_ms > 0, "{at}");
}

fn count(
    runs: &[(RunSummary, DurabilityTally)],
    f: impl Fn(&RunSummary, &DurabilityTally) -> bool,
) -> u64 {
    runs.iter().filter(|(s, d)| f(s, d)).count() as u64
}

#[tokio::test]
async fn without_persistence_a_crash_loses_every_acknowledged_order() {
    let runs = ten_runs("none").await;
    let shown = count(&runs, |_, d| {
        d.restored_stock.is_none()
            && d.units_lost > 0
            && d.acknowledged_lost == d.acknowledged_before_crash
    });
    assert!(shown >= 9, "everything lost in {shown} of {SEEDS}");
    assert_eq!(
        count(&runs, |_, d| d.persistence == Persistence::None),
        SEEDS
    );
}

#[tokio::test]
async fn with_snapshots_a_crash_loses_what_came_after_the_last_one() {
    let runs = ten_runs("rdb").await;
    let shown = count(&runs, |s, d| {
        d.units_lost > 0
            && d.restored_stock.is_some_and(|r| r < i64::from(s.stock))
            && d.acknowledged_lost < d.acknowledged_before_crash
            && d.snapshot_at_ms.is_some_and(|at| at < d.crash_at_ms)
    });
    assert!(
        shown >= 9,
        "kept up to the snapshot, lost after it, in {shown} of {SEEDS}"
    );
    // The lost units come back on sale: with the default crowd, the shop oversells.
    let oversold = count(&runs, |s, _| s.oversold_units > 0);
    assert!(
        oversold >= 9,
        "oversold after the restart in {oversold} of {SEEDS}"
    );
}

#[tokio::test]
async fn with_aof_always_a_crash_loses_nothing_acknowledged() {
    let runs = ten_runs("aof_always").await;
    assert_eq!(
        count(&runs, |s, d| d.units_lost == 0
            && d.restored_stock.is_some()
            && s.oversold_units == 0),
        SEEDS
    );
}

#[tokio::test]
async fn with_aof_everysec_a_process_crash_is_measured_the_same_way() {
    // What everysec risks is a machine crash, which a SIGKILL is not. A kill can still find
    // writes Redis postponed while a slow background fsync ran (it replies before writing
    // them, for up to 2 s): if that happens, the ledger above counts them like any loss.
    let runs = ten_runs("aof_everysec").await;
    let kept = count(&runs, |_, d| {
        d.units_lost == 0 && d.restored_stock.is_some()
    });
    assert!(kept >= 9, "nothing lost in {kept} of {SEEDS}");
}

#[test]
fn run_json_reports_the_durability_fields() {
    let shared = TestRedis::start();
    for (strategy, lost) in [("none", true), ("aof_always", false)] {
        let out = Command::new(env!("CARGO_BIN_EXE_oversold"))
            .args([
                "run",
                "--scenario",
                "durability",
                "--strategy",
                strategy,
                "--seed",
                "3",
                "--json",
            ])
            .env("REDIS_URL", shared.server.url())
            .env("NO_COLOR", "1")
            .env_remove("REDIS_CLUSTER")
            .output()
            .expect("the binary runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let s: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        for field in [
            "crash_at_ms",
            "down_ms",
            "acknowledged_before_crash",
            "acknowledged_lost",
            "units_lost",
            "burst_ops_per_s",
            "burst_p99_us",
        ] {
            assert!(s[field].is_u64(), "{field} in {s}");
        }
        assert_eq!(s["persistence"], strategy, "{s}");
        assert_eq!(s["acknowledged_lost"].as_u64().unwrap() > 0, lost, "{s}");
    }
}
