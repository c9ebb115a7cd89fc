//! The fault suite: every Redis strategy in `REGISTRY` raced while another connection stalls,
//! flushes or kills Redis, each run held to what its strategy promises under that fault.
//!
//! # Layout
//! - [`expectations`]: the faults, the table of what each strategy must keep under each one
//!   (read it first: it is the documentation), and the one checker, with tests proving it can
//!   fail.
//! - [`inject`]: a run on a redis-server of its own, and the fault injected from the test's
//!   own connection 100 ms after the first buyer answered.
//! - [`defects`]: one test per defect found by this suite, named after it.
//! - this file: one test per fault (a column of the table), racing every strategy at once, each
//!   on its own redis-server; the plain lock's exclusion under `DEBUG SLEEP`, measured; and a
//!   naive run the checker must call out.
//!
//! Every scenario prints one line (strategy, fault, sold, final, in doubt, unknown, errors,
//! ms): run with `-- faults --nocapture` to read the figures.

mod defects;
mod expectations;
mod inject;

use std::time::Duration;

use oversold::strategy::REGISTRY;
use oversold_protocol::{OutcomeResult, RunRequest};
use tokio::task::JoinSet;

use crate::common::checks::strategy;
use expectations::{DEBUG_SLEEP, Ended, Expect, Fault, check, check_against, report_line};
use inject::{Running, injector, observe, private_redis};

/// Race every Redis strategy under `fault`, concurrently, and hold each to its row.
async fn every_redis_strategy_under(fault: Fault) {
    let mut scenarios = JoinSet::new();
    for s in REGISTRY.iter().copied() {
        if s.uses_redis() {
            scenarios.spawn(observe(s, fault));
        } else {
            println!(
                "{:<16} {:<24} not a Redis strategy: skipped",
                s.name(),
                fault.label()
            );
        }
    }
    let mut observed = scenarios.join_all().await;
    observed.sort_by_key(|o| REGISTRY.iter().position(|s| s.name() == o.strategy));
    let mut failures = Vec::new();
    for o in &observed {
        let verdict = check(o);
        let line = report_line(o, &verdict);
        println!("{line}");
        if !verdict.violations.is_empty() {
            failures.push(line);
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_pause_shorter_than_the_response_timeout() {
    every_redis_strategy_under(Fault::PauseWrite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_pause_longer_than_the_response_timeout() {
    every_redis_strategy_under(Fault::PauseAll).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_debug_sleep_past_the_lock_lease() {
    every_redis_strategy_under(Fault::DebugSleep).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dense_script_flush() {
    every_redis_strategy_under(Fault::ScriptFlush).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dense_function_flush() {
    every_redis_strategy_under(Fault::FunctionFlush).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_app_server_connection() {
    every_redis_strategy_under(Fault::KillAppServer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_and_restart_mid_run() {
    every_redis_strategy_under(Fault::KillRestart).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_and_restart_in_a_quiet_moment() {
    every_redis_strategy_under(Fault::QuietRestart).await;
}

/// How often the plain lock loses exclusion when Redis stalls past its lease. Documented to be
/// possible, so it is measured and printed, never required (each trial is a `MayBreak` row:
/// it must still end with one outcome per buyer).
///
/// Exclusion is lost when the stall catches a holder between taking the lock and its GET:
/// when Redis wakes the lease has expired, a waiter takes the lock, and both read the same
/// stock. That oversells only if the two orders together exceed what is left, so the stall
/// is aimed at the last few units: 6 units, orders of 1 to 3, stalled 0 to 35 ms after the
/// first sale.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_lock_under_debug_sleep_measured() {
    const TRIALS: u64 = 8;
    let lock = strategy("lock");
    let mut trials = JoinSet::new();
    for trial in 0..TRIALS {
        trials.spawn(async move {
            let redis = private_redis().await;
            let config = RunRequest {
                strategy: Some("lock".into()),
                stock: Some(6),
                buyers: Some(200),
                max_qty: Some(3),
                app_servers: Some(8),
                arrival_spread_ms: Some(300),
                race_window_ms: Some(5),
                seed: Some(trial),
                ..Default::default()
            }
            .validate(0)
            .unwrap();
            let mut run = Running::start(&redis, lock, &config, &format!("lock-sleep-{trial}"));
            run.first_outcome().await;
            // Stagger the stall over the trials, so it catches holders in different steps.
            tokio::time::sleep(Duration::from_millis(5 * trial)).await;
            let injected = std::time::Instant::now();
            let mut conn = injector(&redis).await;
            let _: () = redis::cmd("DEBUG")
                .arg("SLEEP")
                .arg(DEBUG_SLEEP.as_secs_f64())
                .query_async(&mut conn)
                .await
                .expect("DEBUG SLEEP");
            let started = run.started;
            let (ended, outcomes, at) = run.end().await;
            expectations::Observed {
                strategy: "lock".into(),
                fault: Fault::DebugSleep,
                config,
                ended,
                outcomes,
                elapsed: at - started,
                fault_to_end: at - injected,
                next_run: None,
            }
        });
    }
    let (mut lost, mut oversold_runs, mut failures) = (0, 0, Vec::new());
    for o in trials.join_all().await {
        let v = check(&o);
        println!("{}", report_line(&o, &v));
        lost += u32::from(v.lost_exclusion);
        oversold_runs += u32::from(v.oversold > 0);
        if !v.violations.is_empty() {
            failures.push(report_line(&o, &v));
        }
    }
    println!(
        "lock under DEBUG SLEEP {} s: lost exclusion in {lost}/{TRIALS} trials, oversold in \
         {oversold_runs}/{TRIALS}",
        DEBUG_SLEEP.as_secs_f64()
    );
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// The checker is not a rubber stamp: a real `naive` run, no fault at all, held to the atomic
/// row, is called out for its oversell.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_checker_calls_out_a_naive_oversell() {
    let redis = private_redis().await;
    let config = RunRequest {
        strategy: Some("naive".into()),
        stock: Some(10),
        buyers: Some(100),
        race_window_ms: Some(20),
        seed: Some(7),
        ..Default::default()
    }
    .validate(0)
    .unwrap();
    let run = Running::start(&redis, strategy("naive"), &config, "naive-checked");
    let started = run.started;
    let (ended, outcomes, at) = run.end().await;
    let o = expectations::Observed {
        strategy: "naive".into(),
        fault: Fault::PauseWrite,
        config,
        ended,
        outcomes,
        elapsed: at - started,
        fault_to_end: Duration::ZERO,
        next_run: None,
    };
    let Ended::Summary(s) = &o.ended else {
        panic!("naive run failed: {:?}", o.ended)
    };
    let sold = o
        .outcomes
        .iter()
        .filter(|x| x.result == OutcomeResult::Reserved)
        .count();
    assert!(
        s.oversold_units > 0,
        "naive sold {sold} of 10: no oversell to catch"
    );
    let v = check_against(Expect::Safe, &o);
    println!("naive held to the atomic row: {}", report_line(&o, &v));
    assert!(
        v.violations.iter().any(|m| m.contains("oversold")),
        "the checker let an oversell through: {v:?}"
    );
    // Its own row asks only that it ends with one outcome per buyer.
    assert!(check(&o).violations.is_empty());
}
