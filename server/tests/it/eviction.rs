//! The `eviction` scenario on real processes: each run starts its own `redis-server` (never
//! the test's shared one) with a low `maxmemory` and the policy asked for; a page cache
//! fills that memory in the quiet spell between two waves of buyers.
//!
//! Over ten seeded default runs per policy and strategy: under `allkeys-lru` and
//! `volatile-lru` (every run key has a TTL, so it is evictable too) the counter is evicted,
//! and `lua`'s second wave hears "sold out" with units left, while `lua_strict` refuses them
//! with `STOCK_MISSING` and never reports a false sold-out; under `noeviction` nothing is
//! evicted and every write of the second wave is refused with `OOM`. The failure must show
//! in at least 9 of 10 runs, the fix in all of them, and no run ever oversells.

use std::process::Command;

use oversold::headless;
use oversold_protocol::{EvictionPolicy, EvictionTally, RunRequest, RunSummary, Scenario};

use crate::common::TestRedis;

const SEEDS: u64 = 10;

/// Ten seeded default runs of `strategy` under `policy`, each with its summary and tally.
/// The shared Redis is left as it was: no key, still answering.
async fn ten_runs(strategy: &str, policy: EvictionPolicy) -> Vec<(RunSummary, EvictionTally)> {
    let shared = TestRedis::start();
    let backends = shared.backends();
    let mut runs = Vec::new();
    for seed in 1..=SEEDS {
        let request = RunRequest {
            strategy: Some(strategy.into()),
            scenario: Some(Scenario::Eviction),
            policy: Some(policy),
            seed: Some(seed),
            ..RunRequest::default()
        };
        let (_, summary) = headless::run_once(&backends, &request)
            .await
            .unwrap_or_else(|e| panic!("{strategy} {policy} seed {seed}: {e}"));
        let e = *summary.eviction.clone().expect("an eviction summary");
        eprintln!(
            "{strategy} {policy} seed {seed}: sold {} unsold {} counter {} false_sold_out {} \
             STOCK_MISSING {} OOM {} evicted {} cache {}/{} oversold {} p50 {} µs p99 {} µs",
            summary.units_sold,
            e.units_unsold,
            if e.stock_key_evicted {
                "evicted".to_string()
            } else {
                summary.final_stock.to_string()
            },
            summary.false_sold_out,
            e.stock_missing_refusals,
            e.oom_refusals,
            e.evicted_keys,
            e.filler_writes,
            e.filler_refused,
            summary.oversold_units,
            summary.latency.p50_us,
            summary.latency.p99_us,
        );
        holds_the_ledger(strategy, seed, &summary, &e);
        assert_eq!(e.policy, policy);
        runs.push((summary, e));
    }
    let mut raw = shared.raw().await;
    let keys: i64 = redis::cmd("DBSIZE").query_async(&mut raw).await.unwrap();
    assert_eq!(keys, 0, "the shared Redis was touched");
    runs
}

/// Every run, whatever the policy: one outcome per buyer, nothing in doubt, never an
/// oversell; the counter, when Redis still has it, is the stock minus the units sold, and
/// when it was evicted it reads as 0 (the units that went with it are `units_unsold`, not lost
/// updates).
fn holds_the_ledger(strategy: &str, seed: u64, s: &RunSummary, e: &EvictionTally) {
    let run = format!("{strategy} {} seed {seed}", e.policy);
    assert_eq!(
        s.orders_accepted + s.rejected + s.errors + s.unknown + s.gave_up,
        s.buyers,
        "{run}: one outcome per buyer"
    );
    assert_eq!(s.unknown, 0, "{run}: {s:?}");
    assert_eq!(s.oversold_units, 0, "{run}: never oversold");
    assert_eq!(e.units_unsold, u64::from(s.stock) - s.units_sold, "{run}");
    assert_eq!(
        s.errors,
        e.stock_missing_refusals + e.oom_refusals,
        "{run}: every error is a coded refusal"
    );
    if e.stock_key_evicted {
        assert_eq!(s.final_stock, 0, "{run}");
        // Not a lost update: no write overwrote another; the key itself went.
        assert_eq!(s.lost_updates, 0, "{run}");
        assert!(e.evicted_keys > 0, "{run}");
    } else {
        assert_eq!(s.final_stock, e.units_unsold as i64, "{run}");
        assert_eq!(s.lost_updates, 0, "{run}");
    }
}

fn count(
    runs: &[(RunSummary, EvictionTally)],
    f: impl Fn(&RunSummary, &EvictionTally) -> bool,
) -> u64 {
    runs.iter().filter(|(s, e)| f(s, e)).count() as u64
}

/// `lua` under an evicting policy: the counter goes, the second wave hears "sold out" while
/// units are left.
async fn lua_sells_out_falsely(policy: EvictionPolicy) {
    let runs = ten_runs("lua", policy).await;
    let shown = count(&runs, |s, e| {
        e.stock_key_evicted && s.false_sold_out > 0 && e.units_unsold > 0
    });
    assert!(
        shown >= 9,
        "{policy}: false sold-outs in {shown} of {SEEDS}"
    );
    assert_eq!(count(&runs, |_, e| e.stock_missing_refusals == 0), SEEDS);
}

/// `lua_strict` under the same policy and seeds: the counter goes the same way, but no
/// buyer is ever told "sold out" with units left; they get `STOCK_MISSING` instead.
async fn lua_strict_refuses_with_a_code(policy: EvictionPolicy) {
    let runs = ten_runs("lua_strict", policy).await;
    assert_eq!(
        count(&runs, |s, _| s.false_sold_out == 0),
        SEEDS,
        "{policy}: a false sold-out"
    );
    let shown = count(&runs, |_, e| {
        e.stock_key_evicted && e.stock_missing_refusals > 0
    });
    assert!(shown >= 9, "{policy}: STOCK_MISSING in {shown} of {SEEDS}");
}

#[tokio::test]
async fn allkeys_lru_evicts_the_counter_and_lua_says_sold_out_with_units_left() {
    lua_sells_out_falsely(EvictionPolicy::AllkeysLru).await;
}

#[tokio::test]
async fn allkeys_lru_evicts_the_counter_and_lua_strict_refuses_with_stock_missing() {
    lua_strict_refuses_with_a_code(EvictionPolicy::AllkeysLru).await;
}

#[tokio::test]
async fn volatile_lru_evicts_the_counter_too_because_every_run_key_has_a_ttl() {
    lua_sells_out_falsely(EvictionPolicy::VolatileLru).await;
}

#[tokio::test]
async fn volatile_lru_and_lua_strict_refuse_with_stock_missing() {
    lua_strict_refuses_with_a_code(EvictionPolicy::VolatileLru).await;
}

#[tokio::test]
async fn noeviction_keeps_the_counter_and_refuses_writes_with_oom() {
    for strategy in ["lua", "lua_strict"] {
        let runs = ten_runs(strategy, EvictionPolicy::Noeviction).await;
        assert_eq!(
            count(&runs, |s, e| {
                !e.stock_key_evicted
                    && e.evicted_keys == 0
                    && s.false_sold_out == 0
                    && e.stock_missing_refusals == 0
            }),
            SEEDS,
            "{strategy}: noeviction evicted or sold out falsely"
        );
        let shown = count(&runs, |_, e| e.oom_refusals > 0 && e.filler_refused > 0);
        assert!(shown >= 9, "{strategy}: OOM refusals in {shown} of {SEEDS}");
    }
}

#[test]
fn run_json_reports_the_eviction_fields() {
    let shared = TestRedis::start();
    let out = Command::new(env!("CARGO_BIN_EXE_oversold"))
        .args([
            "run",
            "--scenario",
            "eviction",
            "--policy",
            "allkeys-lru",
            "--strategy",
            "lua_strict",
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
        "false_sold_out",
        "stock_missing_refusals",
        "oom_refusals",
        "evicted_keys",
        "oversold_units",
        "units_unsold",
        "maxmemory_bytes",
    ] {
        assert!(s[field].is_u64(), "{field} in {s}");
    }
    assert_eq!(s["policy"], "allkeys-lru", "{s}");
    assert_eq!(s["stock_key_evicted"], true, "{s}");
    assert_eq!(s["oversold_units"], 0, "{s}");
    // The flag is refused outside its scenario, in the same words as on the socket.
    let out = Command::new(env!("CARGO_BIN_EXE_oversold"))
        .args(["run", "--strategy", "lua", "--policy", "noeviction"])
        .env("REDIS_URL", shared.server.url())
        .env("NO_COLOR", "1")
        .env_remove("REDIS_CLUSTER")
        .output()
        .expect("the binary runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("policy belongs to the eviction scenario"),
        "{err}"
    );
}
