//! The binary: `run --json` of a cart and a warehouse race has the fields the issue names,
//! `compare` races the scenario's strategies, and a bad knob exits before Redis is touched.

use std::process::{Command, Output};

use crate::common::TestRedis;

fn oversold(redis: &TestRedis, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oversold"))
        .args(args)
        .env("REDIS_URL", redis.server.url())
        .env("NO_COLOR", "1")
        .env_remove("REDIS_CLUSTER")
        .output()
        .expect("the binary runs")
}

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is the summary as JSON")
}

#[test]
fn run_json_has_the_per_shelf_ledger_and_the_multi_key_counts() {
    let redis = TestRedis::start();
    let args = [
        "run",
        "--scenario",
        "cart",
        "--strategy",
        "naive_cart",
        "--skus",
        "4",
    ];
    let s = json(&oversold(
        &redis,
        &[&args[..], &["--max-lines", "2", "--seed", "9", "--json"]].concat(),
    ));
    for field in [
        "partial_carts",
        "stranded_units",
        "compensations",
        "fallback_orders",
        "false_sold_out",
    ] {
        assert!(s[field].is_u64(), "{field} in {s}");
    }
    let skus = s["per_sku"].as_array().expect("per_sku");
    assert_eq!(skus.len(), 4);
    assert!(s.get("per_warehouse").is_none());
    let sum: u64 = skus
        .iter()
        .map(|l| l["oversold_units"].as_u64().unwrap())
        .sum();
    assert_eq!(s["oversold_units"].as_u64(), Some(sum));
    for l in skus {
        let n = |f: &str| l[f].as_i64().unwrap();
        assert_eq!(
            n("stock"),
            n("final_stock") + n("units_sold") + n("stranded_units"),
            "{l}"
        );
    }
    let w = json(&oversold(
        &redis,
        &[
            "run",
            "--scenario",
            "warehouses",
            "--strategy",
            "warehouse_script",
            "--warehouses",
            "4",
            "--split",
            "--json",
        ],
    ));
    assert_eq!(w["per_warehouse"].as_array().map(Vec::len), Some(4));
    assert_eq!(w["oversold_units"], 0);
}

#[test]
fn compare_races_the_scenarios_strategies_and_bad_knobs_exit_early() {
    let redis = TestRedis::start();
    let out = oversold(
        &redis,
        &["compare", "--scenario", "warehouses", "--seed", "4"],
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        table.contains("naive_warehouse") && table.contains("warehouse_script"),
        "{table}"
    );
    assert!(!table.contains("saga"), "{table}");
    let out = oversold(
        &redis,
        &[
            "run",
            "--scenario",
            "cart",
            "--strategy",
            "saga",
            "--skus",
            "2",
            "--max-lines",
            "3",
        ],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("max_lines = 3") && err.contains("skus = 2"),
        "{err}"
    );
    let out = oversold(&redis, &["run", "--strategy", "lua", "--warehouses", "3"]);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("warehouses belongs to the warehouses scenario")
    );
}
