//! The `failover` scenario on real processes: each run starts its own primary and replica
//! (never the test's shared Redis); mid-sale the replica is frozen and its link dropped, the
//! primary is killed, the replica promoted, and the sale goes on against it.
//!
//! Over ten seeded runs with the defaults per strategy: `lua` loses confirmed units in the
//! failover and sells them again; `lua_wait` never loses a confirmed unit (the orders whose
//! `WAIT` ran out are in doubt instead); `min_replicas` never loses one either, refusing
//! writes while the replica lags. The failure must show in at least 9 of 10 runs, each fix
//! in all of them. Every run keeps the ledger: the promoted replica has a prefix of what the
//! old primary did, and what it lacks is exactly what the old primary took after the link
//! dropped.

use std::process::Command;

use oversold::headless;
use oversold_protocol::{FailoverTally, OutcomeResult, RunRequest, RunSummary, Scenario};

use crate::common::TestRedis;

const SEEDS: u64 = 10;

/// Ten seeded default runs of `strategy`, each with its summary and failover tally. The
/// shared Redis is left as it was: no key, still answering.
async fn ten_runs(strategy: &str) -> Vec<(RunSummary, FailoverTally)> {
    let shared = TestRedis::start();
    let backends = shared.backends();
    let mut runs = Vec::new();
    for seed in 1..=SEEDS {
        let request = RunRequest {
            strategy: Some(strategy.into()),
            scenario: Some(Scenario::Failover),
            seed: Some(seed),
            ..RunRequest::default()
        };
        let (_, report) = headless::run_report(&backends, &request, oversold::run::Keep::Outcomes)
            .await
            .unwrap_or_else(|e| panic!("{strategy} seed {seed}: {e}"));
        let (outcomes, summary) = (report.outcomes, report.summary);
        let f = *summary.failover.clone().expect("a failover summary");
        eprintln!(
            "{strategy} seed {seed}: confirmed {} final {} lost {} units ({} orders) twice {} in doubt {} (WAIT ran out {}) refused {} primary {} replica {} failover {} ms p50 {} µs p99 {} µs",
            summary.units_sold,
            summary.final_stock,
            f.acknowledged_lost,
            f.acknowledged_lost_orders,
            f.sold_twice,
            summary.in_doubt_units,
            f.wait_timed_out,
            f.refused_writes,
            f.primary_stock_at_kill,
            f.replica_stock_at_promotion,
            f.failover_ms,
            f.confirm_p50_us,
            f.confirm_p99_us,
        );
        holds_the_ledger(strategy, seed, &summary, &f);
        let noreplicas = outcomes
            .iter()
            .filter(|o| o.result == OutcomeResult::Error)
            .filter(|o| {
                o.error
                    .as_deref()
                    .is_some_and(|e| e.starts_with("NOREPLICAS"))
            })
            .count() as u32;
        assert_eq!(noreplicas, f.refused_writes, "{strategy} seed {seed}");
        runs.push((summary, f));
    }
    let mut raw = shared.raw().await;
    let keys: i64 = redis::cmd("DBSIZE").query_async(&mut raw).await.unwrap();
    assert_eq!(keys, 0, "the shared Redis was touched");
    runs
}

/// Every run, whatever the strategy: one outcome per buyer; the replica holds a prefix of
/// the old primary's history (its counter no lower); the confirmed units it lacks are at
/// most what the old primary took after the link dropped; a unit is sold twice only if one
/// was lost; the promoted replica never sells past its own counter.
fn holds_the_ledger(strategy: &str, seed: u64, s: &RunSummary, f: &FailoverTally) {
    assert_eq!(
        s.orders_accepted + s.rejected + s.errors + s.unknown + s.gave_up,
        s.buyers,
        "{strategy} seed {seed}: one outcome per buyer"
    );
    let only_on_the_old_primary = f.replica_stock_at_promotion - f.primary_stock_at_kill;
    assert!(
        only_on_the_old_primary >= 0,
        "{strategy} seed {seed}: the replica is ahead of its primary: {f:?}"
    );
    assert!(
        f.acknowledged_lost as i64 <= only_on_the_old_primary,
        "{strategy} seed {seed}: lost more than the old primary alone had: {f:?}"
    );
    assert!(
        f.sold_twice <= f.acknowledged_lost,
        "{strategy} seed {seed}: sold twice without a loss: {f:?}"
    );
    assert_eq!(
        f.sold_twice,
        s.units_sold.saturating_sub(u64::from(s.stock)),
        "{strategy} seed {seed}"
    );
    assert!(s.final_stock >= 0, "{strategy} seed {seed}: {s:?}");
    assert!(
        s.final_stock <= f.replica_stock_at_promotion,
        "{strategy} seed {seed}"
    );
}

fn count(
    runs: &[(RunSummary, FailoverTally)],
    f: impl Fn(&RunSummary, &FailoverTally) -> bool,
) -> u64 {
    runs.iter().filter(|(s, t)| f(s, t)).count() as u64
}

#[tokio::test]
async fn lua_loses_confirmed_units_in_the_failover_and_sells_them_twice() {
    let runs = ten_runs("lua").await;
    let shown = count(&runs, |_, f| f.acknowledged_lost > 0 && f.sold_twice > 0);
    assert!(
        shown >= 9,
        "confirmed units lost and sold twice in {shown} of {SEEDS}"
    );
    // Nothing guards it: nothing is refused, nothing waits.
    assert_eq!(
        count(&runs, |_, f| f.refused_writes == 0 && f.wait_timed_out == 0),
        SEEDS
    );
}

#[tokio::test]
async fn lua_wait_never_loses_a_confirmed_unit_and_leaves_the_rest_in_doubt() {
    let runs = ten_runs("lua_wait").await;
    assert_eq!(
        count(&runs, |s, f| f.acknowledged_lost == 0
            && f.sold_twice == 0
            && s.units_sold <= u64::from(s.stock)),
        SEEDS
    );
    // Orders taken while the replica lagged are in doubt, not confirmed.
    let shown = count(&runs, |s, f| f.wait_timed_out > 0 && s.in_doubt_units > 0);
    assert!(shown >= 9, "WAIT ran out in {shown} of {SEEDS}");
}

#[tokio::test]
async fn min_replicas_refuses_writes_while_the_replica_lags_and_loses_none() {
    let runs = ten_runs("min_replicas").await;
    assert_eq!(
        count(&runs, |s, f| f.acknowledged_lost == 0
            && f.sold_twice == 0
            && s.units_sold <= u64::from(s.stock)
            // Nothing was taken on the old primary once its replica was gone.
            && f.primary_stock_at_kill == f.replica_stock_at_promotion),
        SEEDS
    );
    let shown = count(&runs, |_, f| f.refused_writes > 0);
    assert!(shown >= 9, "NOREPLICAS in {shown} of {SEEDS}");
}

fn run_json(strategy: &str, seed: u64) -> serde_json::Value {
    let shared = TestRedis::start();
    let out = Command::new(env!("CARGO_BIN_EXE_oversold"))
        .args([
            "run",
            "--scenario",
            "failover",
            "--strategy",
            strategy,
            "--seed",
            &seed.to_string(),
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
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn run_json_reports_the_failover_fields() {
    let lua = run_json("lua", 3);
    for field in [
        "acknowledged_lost",
        "sold_twice",
        "in_doubt_units",
        "refused_writes",
        "wait_timed_out",
        "failover_ms",
        "confirm_p50_us",
        "confirm_p99_us",
    ] {
        assert!(lua[field].is_u64(), "{field} in {lua}");
    }
    assert!(lua["acknowledged_lost"].as_u64() > Some(0), "{lua}");
    assert_eq!(lua["guard"], "none", "{lua}");
    let wait = run_json("lua_wait", 3);
    assert_eq!(wait["acknowledged_lost"], 0, "{wait}");
    assert_eq!(wait["guard"], "wait", "{wait}");
}
