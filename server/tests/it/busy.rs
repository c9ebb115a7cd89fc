//! The `busy_script` scenario on real processes: each run starts its own `redis-server`
//! (never the test's shared one), one slow client stalls it mid-sale, and the server's
//! watchdog ends the stall.
//!
//! Over ten seeded runs with the defaults per strategy: the read-only script draws `BUSY`
//! replies and is killed, losing nothing; the script and the function that wrote are
//! refused (`UNKILLABLE`), Redis is restarted, and acknowledged units are lost; the same
//! work in short steps draws no `BUSY`, no kill and no restart. The failure must show in
//! at least 9 of 10 runs, and the fix (and "nothing lost without a restart") in all of them.
//! The ledger holds in every run: the counter read back is what the orders explain once
//! the lost ones are taken out.

use std::process::Command;

use oversold::headless;
use oversold_protocol::{BusyTally, RunRequest, RunSummary, Scenario, SlowJobEnd};

use crate::common::TestRedis;

const SEEDS: u64 = 10;

/// Ten seeded default runs of `strategy`, each with its summary and its busy tally. The
/// shared Redis is left as it was: no key, still answering.
async fn ten_runs(strategy: &str) -> Vec<(RunSummary, BusyTally)> {
    let shared = TestRedis::start();
    let backends = shared.backends();
    let mut runs = Vec::new();
    for seed in 1..=SEEDS {
        let request = RunRequest {
            strategy: Some(strategy.into()),
            scenario: Some(Scenario::BusyScript),
            seed: Some(seed),
            ..RunRequest::default()
        };
        let (_, summary) = headless::run_once(&backends, &request)
            .await
            .unwrap_or_else(|e| panic!("{strategy} seed {seed}: {e}"));
        let busy = *summary.busy.clone().expect("a busy_script summary");
        eprintln!(
            "{strategy} seed {seed}: busy {} stalled {} ms killed {} refused {} restarted {} lost {} units ({} orders), sold {} final {} oversold {}",
            busy.busy_replies,
            busy.stalled_ms,
            busy.killed,
            busy.kill_refused,
            busy.restarted,
            busy.units_lost,
            busy.acknowledged_lost,
            summary.units_sold,
            summary.final_stock,
            summary.oversold_units
        );
        holds_the_ledger(strategy, seed, &summary, &busy);
        runs.push((summary, busy));
    }
    let mut raw = shared.raw().await;
    let keys: i64 = redis::cmd("DBSIZE").query_async(&mut raw).await.unwrap();
    assert_eq!(keys, 0, "the shared Redis was touched");
    runs
}

/// Every run, whatever happened: one outcome per buyer, and the counter read back is the
/// stock minus what was sold and not lost, minus any order in doubt that did land. (A
/// buyer whose request was on its way when `SHUTDOWN NOSAVE` closed its connection is in
/// doubt; only a restart can do that.)
fn holds_the_ledger(strategy: &str, seed: u64, s: &RunSummary, b: &BusyTally) {
    assert_eq!(
        s.orders_accepted + s.rejected + s.errors + s.unknown + s.gave_up,
        s.buyers,
        "{strategy} seed {seed}: one outcome per buyer"
    );
    if b.restarted == 0 {
        assert_eq!(s.in_doubt_units, 0, "{strategy} seed {seed}: {s:?}");
    }
    let kept = s.units_sold - b.units_lost;
    assert_eq!(
        s.final_stock + s.in_doubt_taken as i64,
        i64::from(s.stock) - kept as i64,
        "{strategy} seed {seed}: the counter is the stock minus the sales Redis kept"
    );
    assert_eq!(
        s.lost_updates, b.units_lost as i64,
        "{strategy} seed {seed}"
    );
    assert!(
        kept <= u64::from(s.stock),
        "{strategy} seed {seed}: Redis itself never sold past its own counter"
    );
    if b.restarted == 0 {
        assert_eq!(
            b.units_lost, 0,
            "{strategy} seed {seed}: lost without a restart"
        );
        assert_eq!(s.oversold_units, 0, "{strategy} seed {seed}");
    }
}

fn count(runs: &[(RunSummary, BusyTally)], f: impl Fn(&RunSummary, &BusyTally) -> bool) -> u64 {
    runs.iter().filter(|(s, b)| f(s, b)).count() as u64
}

#[tokio::test]
async fn a_long_read_only_script_draws_busy_and_is_killed_losing_nothing() {
    let runs = ten_runs("slow_read").await;
    let shown = count(&runs, |_, b| {
        b.busy_replies > 0 && b.killed == 1 && b.slow_job == SlowJobEnd::Killed
    });
    assert!(shown >= 9, "BUSY then SCRIPT KILL in {shown} of {SEEDS}");
    assert_eq!(
        count(&runs, |_, b| b.restarted == 0 && b.units_lost == 0),
        SEEDS
    );
    // Killed at the watchdog's patience, not left to run its 2.5 s.
    assert_eq!(count(&runs, |_, b| b.stalled_ms < 1_500), SEEDS);
}

#[tokio::test]
async fn a_script_that_wrote_is_unkillable_and_the_restart_loses_acknowledged_units() {
    let runs = ten_runs("slow_write").await;
    let shown = count(&runs, |_, b| {
        b.busy_replies > 0
            && b.kill_refused >= 1
            && b.restarted == 1
            && b.units_lost > 0
            && b.slow_job == SlowJobEnd::ShutDown
    });
    assert!(
        shown >= 9,
        "BUSY, UNKILLABLE, restart, units lost in {shown} of {SEEDS}"
    );
    assert_eq!(count(&runs, |_, b| b.killed == 0), SEEDS);
}

#[tokio::test]
async fn a_function_that_wrote_is_refused_by_function_kill_and_restarted_too() {
    let runs = ten_runs("slow_function").await;
    let shown = count(&runs, |_, b| {
        b.busy_replies > 0 && b.kill_refused >= 1 && b.restarted == 1 && b.units_lost > 0
    });
    assert!(
        shown >= 9,
        "BUSY, UNKILLABLE, restart, units lost in {shown} of {SEEDS}"
    );
}

#[tokio::test]
async fn the_same_work_in_short_steps_never_stalls_the_sale() {
    let runs = ten_runs("short_script").await;
    assert_eq!(
        count(&runs, |s, b| {
            b.busy_replies == 0
                && b.stalled_ms == 0
                && b.killed + b.kill_refused + b.restarted == 0
                && b.units_lost == 0
                && s.oversold_units == 0
                && s.errors == 0
                && b.slow_job == SlowJobEnd::Finished
        }),
        SEEDS
    );
}

#[test]
fn run_json_reports_the_busy_fields() {
    let shared = TestRedis::start();
    let out = Command::new(env!("CARGO_BIN_EXE_oversold"))
        .args([
            "run",
            "--scenario",
            "busy_script",
            "--strategy",
            "slow_write",
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
        "busy_replies",
        "stalled_ms",
        "killed",
        "kill_refused",
        "restarted",
        "acknowledged_lost",
        "units_lost",
    ] {
        assert!(s[field].is_u64(), "{field} in {s}");
    }
    assert_eq!(s["slow_job"], "shut_down", "{s}");
    assert_eq!(s["restarted"], 1, "{s}");
}
