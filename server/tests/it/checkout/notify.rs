//! `holds_notify` against the reaper, on real Redis servers: expired holds given back by a
//! listener on Redis's `expired` keyspace events lose the releases published while its
//! subscriber restarts, and come back late, when Redis gets round to removing the key; the
//! reaper (`holds`) loses none on the same seeds.
//!
//! Each `holds_notify` run starts a `redis-server` of its own (`notify-keyspace-events Ex`);
//! the `holds` runs use the test's Redis. Both are held to `check_checkout`, which accepts a
//! leak only as exactly the units of the releases nobody heard.

use futures_util::StreamExt;
use oversold_protocol::{RunConfig, RunRequest, RunSummary, Scenario};

use super::{heavy, run};
use crate::common::TestRedis;
use crate::common::checks::check_checkout;

/// Seeds per strategy.
const SEEDS: u64 = 10;

/// A checkout with every knob at its default (the shop clock at 100×: a hold lasts 3 s).
fn defaults(name: &str, seed: u64) -> RunConfig {
    RunRequest {
        scenario: Some(Scenario::Checkout),
        seed: Some(seed),
        ..RunRequest::for_strategy(name)
    }
    .validate(0)
    .unwrap()
}

/// Run `name` on seeds `0..SEEDS`, five at a time; every run must keep its checker (never
/// oversold, every unit accounted for).
async fn runs(
    redis: &TestRedis,
    name: &str,
    config: fn(&str, u64) -> RunConfig,
) -> Vec<RunSummary> {
    let Some(backends) = redis.backends_with_postgres().await else {
        return Vec::new();
    };
    let configs: Vec<RunConfig> = (0..SEEDS).map(|seed| config(name, seed)).collect();
    let reports: Vec<_> = futures_util::stream::iter(configs.iter().enumerate())
        .map(|(i, config)| {
            let backends = &backends;
            let id = format!("notify-{name}-{}-{i}", std::process::id());
            async move { (config, run(backends, config, &id).await) }
        })
        .buffer_unordered(5)
        .collect()
        .await;
    let mut summaries = Vec::new();
    for (config, report) in reports {
        if let Err(e) = check_checkout(config, &report, true, true) {
            panic!("{name}: {e}");
        }
        summaries.push(report.summary);
    }
    summaries
}

fn lost(s: &RunSummary) -> u64 {
    s.checkout.as_ref().unwrap().notify.releases_lost
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holds_notify_loses_releases_in_nearly_every_default_run_and_the_reaper_none() {
    let _turn = heavy().await;
    let redis = TestRedis::start();
    let notify = runs(&redis, "holds_notify", defaults).await;
    if notify.is_empty() {
        return; // no PostgreSQL, and not in CI: said by backends_with_postgres
    }
    let reaper = runs(&redis, "holds", defaults).await;
    for s in &notify {
        let c = s.checkout.as_ref().unwrap();
        println!(
            "holds_notify: {} releases heard (late p50 {} µs, max {} µs), {} lost ({} units, \
             leaked {}) while the listener was down {} ms; oversold {}",
            c.notify.releases,
            c.notify.release_late_p50_us,
            c.notify.release_late_max_us,
            c.notify.releases_lost,
            c.notify.units_lost,
            c.leaked_units,
            c.notify.listener_down_ms,
            s.oversold_units
        );
        // The restart really happened, and for as long as it says: in every run that had a
        // hold to expire. A run whose buyers all settled their own holds gives the listener
        // nothing to hear, and may end (drained: nothing unsettled) before the restart's
        // moment, a hold's life after the first hold (seen in CI: down 1 ms, nothing heard,
        // nothing lost). The count below still wants nearly every run to lose releases.
        if c.notify.releases + c.notify.releases_lost > 0 {
            assert!(c.notify.listener_down_ms >= 1_900, "{:?}", c.notify);
        }
        assert_eq!(c.leaked_units, c.notify.units_lost as i64);
    }
    let losing = notify.iter().filter(|s| lost(s) > 0).count() as u64;
    println!("holds_notify lost releases in {losing} of {SEEDS} default runs");
    assert!(
        losing * 10 >= SEEDS * 9,
        "holds_notify lost releases in only {losing} of {SEEDS} default runs"
    );
    for s in &reaper {
        let c = s.checkout.as_ref().unwrap();
        assert_eq!((lost(s), c.leaked_units), (0, 0), "the reaper lost {c:?}");
        assert_eq!(c.notify, Default::default(), "the reaper has no listener");
    }
}

/// Fifty buyers over four real seconds, each with a unit, three in ten of whose app servers
/// crash: their holds fall due from 3 s to 7 s, so the listener, back by 5 s, hears most of
/// the later ones.
fn spread(name: &str, seed: u64) -> RunConfig {
    RunRequest {
        scenario: Some(Scenario::Checkout),
        seed: Some(seed),
        stock: Some(50),
        arrival_spread_ms: Some(4_000),
        crash_fraction: Some(0.3),
        ..RunRequest::for_strategy(name)
    }
    .validate(0)
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holds_notify_releases_come_late_by_as_much_as_redis_takes_to_remove_the_key() {
    let _turn = heavy().await;
    let redis = TestRedis::start();
    let notify = runs(&redis, "holds_notify", spread).await;
    if notify.is_empty() {
        return;
    }
    let reaper = runs(&redis, "holds", spread).await;
    for (n, r) in notify.iter().zip(&reaper) {
        let (n, r) = (
            n.checkout.as_ref().unwrap().notify,
            r.checkout.as_ref().unwrap().reaper,
        );
        println!(
            "over a 4 s spread: holds_notify heard {}, late p50 {} µs, max {} µs, {} lost; \
             holds' reaper late p50 {} µs, max {} µs",
            n.releases,
            n.release_late_p50_us,
            n.release_late_max_us,
            n.releases_lost,
            r.late_p50_us,
            r.late_max_us
        );
        assert!(n.releases > 0, "no release was heard: {n:?}");
        assert!(
            n.release_late_p50_us > 0 && n.release_late_max_us >= n.release_late_p50_us,
            "{n:?}"
        );
        // The reaper is measured too: it ticks every 100 ms here, so it is late by a tick and
        // a call, plus whatever a loaded two-core machine adds to a timer (seen: 175 ms).
        assert!(r.late_max_us > 0 && r.late_max_us < 1_000_000, "{r:?}");
    }
}

#[tokio::test]
async fn holds_notify_runs_from_the_command_line_and_its_json_has_the_listener() {
    // The binary settles in PostgreSQL: without one, it is skipped (as `wire`'s CLI test is).
    if crate::common::postgres().await.is_none() {
        return;
    }
    let redis = TestRedis::start();
    let args = [
        "run",
        "--scenario",
        "checkout",
        "--strategy",
        "holds_notify",
    ];
    let s = super::wire::oversold(&redis, &[&args[..], &["--seed", "3", "--json"]].concat());
    let n = |v: &serde_json::Value| v.as_i64().unwrap_or_else(|| panic!("not a number in {s}"));
    let notify = &s["notify"];
    // As in the test above: the restart is there in every run with a hold to expire. On a
    // loaded machine the buyer whose app server crashes may reach Redis after the stock is
    // gone, and then the run ends before the restart's moment (seen in CI).
    if n(&notify["releases"]) + n(&notify["releases_lost"]) > 0 {
        assert!(n(&notify["listener_down_ms"]) >= 1_900, "{s}");
    }
    for field in [
        "releases",
        "releases_lost",
        "release_late_p50_us",
        "release_late_max_us",
    ] {
        n(&notify[field]);
    }
    // The stranded units are the leak, and the books add up.
    assert_eq!(n(&s["leaked_units"]), n(&notify["units_lost"]), "{s}");
    assert_eq!(
        n(&s["stock"]),
        n(&s["final_stock"])
            + n(&s["confirmed_units"])
            + n(&s["held_units"])
            + n(&s["leaked_units"]),
        "{s}"
    );
    assert_eq!(n(&s["oversold_units"]), 0, "{s}");
}
