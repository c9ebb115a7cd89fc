//! Redis killed under a checkout, or only slow: a killed Redis ends the run within seconds
//! (no more arrivals, the reaper stopped, the error says the store was lost); a paused one
//! is reported as slow (reservations timed out, in doubt), and the run goes on.

use std::time::{Duration, Instant};

use oversold::checkout;
use oversold::plan::plan;
use oversold::run::{Event, RunError, RunReport, Watchers};
use oversold::strategy::checkout::{CheckoutStrategy, REGISTRY};
use oversold_protocol::{
    CheckoutEnd, FailMode, OutcomeResult, RunConfig, RunRequest, Stage, StepOutcome,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{fast, strategy};
use crate::common::TestRedis;
use crate::common::checks::check_checkout;
use crate::common::registry::each;

/// How soon after the kill the run must have failed. Generous: the run notices at the next
/// request (a broken connection fails at once) and probes for at most a second.
const ENDS_WITHIN: Duration = Duration::from_secs(8);
/// Past this the run counts as hung (the old code took the whole arrival spread plus the
/// drain: about 25 s with these knobs).
const HANG: Duration = Duration::from_secs(90);
/// When the kill comes, after the first story has ended.
const KILL_AFTER: Duration = Duration::from_millis(1_500);

/// Three hundred buyers spread over twenty real seconds: a kill finds most of them still
/// to come, so a run that played them all out would show.
fn long_spread(name: &str) -> RunConfig {
    RunRequest {
        stock: Some(150),
        buyers: Some(300),
        arrival_spread_ms: Some(20_000),
        time_scale: Some(100),
        seed: Some(16),
        ..fast(name)
    }
    .validate(0)
    .unwrap()
}

/// What a killed-Redis run came to, as the test measured it.
struct Killed {
    ended: Result<(), RunError>,
    /// From the kill to the run's end.
    after_kill: Duration,
    /// The kill, measured from the start gate.
    kill_at: Duration,
    /// Stories told (outcomes sent) before the run ended.
    stories: usize,
    /// Tasks still alive on this runtime once the run had returned.
    tasks_left: usize,
}

/// Run `s` with [`long_spread`] on a Redis of its own, SIGKILL that Redis [`KILL_AFTER`]
/// the first story ended, and wait for the run.
async fn kill_mid_run(s: &'static CheckoutStrategy) -> Killed {
    let mut redis = TestRedis::start();
    let config = long_spread(s.name());
    let (events, mut seen) = mpsc::unbounded_channel();
    let backends = redis.backends();
    let run_id = format!("lost-{}", s.name());
    let run = tokio::spawn(async move {
        let watchers = Watchers {
            events: Some(events),
            control: None,
            ..Watchers::default()
        };
        checkout::run(
            &backends,
            s,
            &config,
            &run_id,
            watchers,
            CancellationToken::new(),
        )
        .await
        .map(|_| ())
    });
    // The first story: its end (µs after the gate) dates the gate on this clock.
    let first = loop {
        let e = tokio::time::timeout(Duration::from_secs(10), seen.recv())
            .await
            .expect("a first story within 10 s")
            .expect("the run sends events");
        if let Event::Outcome(o) = e {
            break o;
        }
    };
    let gate = Instant::now() - Duration::from_micros(first.end_us);
    tokio::time::sleep(KILL_AFTER).await;
    let killed = Instant::now();
    tokio::task::block_in_place(|| redis.kill());
    let ended = tokio::time::timeout(HANG, run)
        .await
        .unwrap_or_else(|_| panic!("{}: no end within {HANG:?} of the kill", s.name()))
        .expect("the run did not panic");
    let after_kill = killed.elapsed();
    let mut stories = 1;
    while let Ok(e) = seen.try_recv() {
        stories += usize::from(matches!(e, Event::Outcome(_)));
    }
    Killed {
        ended,
        after_kill,
        kill_at: killed - gate,
        stories,
        tasks_left: alive_tasks_settled().await,
    }
}

/// Tasks alive on this runtime, once dropped connections' own tasks have had a moment to
/// notice (a redis connection's driver ends when its socket does).
async fn alive_tasks_settled() -> usize {
    let metrics = tokio::runtime::Handle::current().metrics();
    for _ in 0..50 {
        if metrics.num_alive_tasks() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    metrics.num_alive_tasks()
}

/// One strategy that keeps holds (its run has a reaper) and one that does not, from the
/// registry.
fn with_and_without_holds() -> [&'static CheckoutStrategy; 2] {
    let first = |holds: bool| {
        *REGISTRY
            .iter()
            .find(|s| s.buyer.keeps_holds() == holds)
            .expect("the registry has both kinds")
    };
    [first(true), first(false)]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkout_a_killed_redis_ends_the_run_within_seconds() {
    let checks = with_and_without_holds()
        .map(|s| (s.name().to_string(), ends_soon_after_the_kill(s)))
        .into();
    each("killed under a checkout", checks).await;
}

/// The run of `s` fails as Redis lost within [`ENDS_WITHIN`] of the kill, with no buyer
/// released after it noticed and no task left behind.
async fn ends_soon_after_the_kill(s: &'static CheckoutStrategy) {
    let k = kill_mid_run(s).await;
    let config = long_spread(s.name());
    // Buyers due by the kill, plus a second for the run to notice: nobody later may arrive.
    let due = plan(&config.race)
        .iter()
        .filter(|b| b.arrival <= k.kill_at + Duration::from_secs(1))
        .count();
    println!(
        "{}: Redis SIGKILLed {:.1} s after the gate; the run ended {:.2} s later with {:?}; \
         {} of {} stories told ({} buyers due by a second after the kill); {} tasks left",
        s.name(),
        k.kill_at.as_secs_f64(),
        k.after_kill.as_secs_f64(),
        k.ended.as_ref().map_err(ToString::to_string),
        k.stories,
        config.race.buyers,
        due,
        k.tasks_left
    );
    let Err(RunError::StoreLost { why, ran, .. }) = &k.ended else {
        panic!("the run must fail as Redis lost: {:?}", k.ended);
    };
    assert!(why.contains("Redis"), "{why}");
    assert!(
        k.after_kill < ENDS_WITHIN,
        "ended {:?} after the kill",
        k.after_kill
    );
    assert!(
        *ran <= due && k.stories <= due,
        "{ran} ran, {} stories, yet only {due} were due before the run could stop",
        k.stories
    );
    assert_eq!(k.tasks_left, 0, "tasks outlived the run");
}

/// Thirty buyers in a fifth of a second, half of whose app servers crash after reserving:
/// their holds last ten real seconds, so the run is left waiting for the reaper alone.
fn long_drain() -> RunConfig {
    RunRequest {
        stock: Some(50),
        buyers: Some(30),
        arrival_spread_ms: Some(200),
        time_scale: Some(100),
        hold_ttl_ms: Some(1_000_000),
        pay_ms: Some(10_000),
        crash_fraction: Some(0.5),
        seed: Some(16),
        ..fast("holds")
    }
    .validate(0)
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkout_a_redis_killed_while_the_reaper_drains_ends_the_run_within_seconds() {
    let mut redis = TestRedis::start();
    let config = long_drain();
    let (events, mut seen) = mpsc::unbounded_channel();
    let backends = redis.backends();
    let run = tokio::spawn(async move {
        let watchers = Watchers {
            events: Some(events),
            control: None,
            ..Watchers::default()
        };
        let s = strategy("holds");
        checkout::run(
            &backends,
            s,
            &config,
            "lost-drain",
            watchers,
            CancellationToken::new(),
        )
        .await
        .map(|_| ())
    });
    // Every story told: only the reaper still talks to Redis.
    let mut stories = 0;
    while stories < 30 {
        let e = tokio::time::timeout(Duration::from_secs(10), seen.recv())
            .await
            .expect("thirty stories within 10 s")
            .expect("the run sends events");
        stories += usize::from(matches!(e, Event::Outcome(_)));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let killed = Instant::now();
    tokio::task::block_in_place(|| redis.kill());
    let ended = tokio::time::timeout(HANG, run)
        .await
        .expect("no end within the hang limit")
        .expect("the run did not panic");
    let after_kill = killed.elapsed();
    println!(
        "holds, Redis SIGKILLed while the reaper waited for 10 s holds: the run ended {:.2} s \
         later with {:?}",
        after_kill.as_secs_f64(),
        ended.as_ref().map_err(ToString::to_string)
    );
    assert!(
        matches!(&ended, Err(RunError::StoreLost { why, .. }) if why.contains("the reaper")),
        "{ended:?}"
    );
    assert!(
        after_kill < ENDS_WITHIN,
        "ended {after_kill:?} after the kill"
    );
}

/// How long the test pauses Redis: past the reservation deadline, yet short enough that a
/// fresh connection asked at the deadline is answered within the probe's second.
const PAUSE: Duration = Duration::from_millis(900);

/// A hundred and twenty buyers over three real seconds, with enough stock that nobody is
/// refused for want of it; holds of 0.6 real seconds, so orphaned ones expire soon.
fn steady(mode: FailMode) -> RunConfig {
    RunRequest {
        stock: Some(400),
        buyers: Some(120),
        arrival_spread_ms: Some(3_000),
        time_scale: Some(100),
        hold_ttl_ms: Some(60_000),
        pay_ms: Some(20_000),
        fail_mode: Some(mode),
        seed: Some(7),
        ..fast("holds")
    }
    .validate(0)
    .unwrap()
}

/// Run [`steady`] on a Redis of its own and `CLIENT PAUSE` it for [`PAUSE`] 800 ms after the
/// first story ended.
async fn paused_mid_run(mode: FailMode) -> (RunConfig, Result<RunReport, RunError>) {
    let redis = TestRedis::start();
    let config = steady(mode);
    let (events, mut seen) = mpsc::unbounded_channel();
    let (backends, run_id) = (redis.backends(), format!("slow-{mode}"));
    let ran = checkout::run(
        &backends,
        strategy("holds"),
        &config,
        &run_id,
        Watchers {
            events: Some(events),
            control: None,
            ..Watchers::default()
        },
        CancellationToken::new(),
    );
    let pause = async {
        while !matches!(seen.recv().await, Some(Event::Outcome(_)) | None) {}
        tokio::time::sleep(Duration::from_millis(800)).await;
        let _: () = redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(PAUSE.as_millis() as u64)
            .arg("ALL")
            .query_async(&mut redis.raw().await)
            .await
            .expect("CLIENT PAUSE");
        // Keep draining, so the run's events never pile up.
        while seen.recv().await.is_some() {}
    };
    let (report, ()) = tokio::join!(ran, pause);
    (config, report)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkout_a_paused_redis_is_slow_not_unreachable() {
    let ((closed_cfg, closed), (open_cfg, open)) = tokio::join!(
        paused_mid_run(FailMode::Closed),
        paused_mid_run(FailMode::Open)
    );
    for (config, ran) in [(closed_cfg, closed), (open_cfg, open)] {
        let mode = config.race.checkout().unwrap().fail_mode;
        let report = ran.unwrap_or_else(|e| panic!("fail {mode}: Redis was up: {e}"));
        let c = report.summary.checkout.as_ref().unwrap();
        let stories = || {
            report
                .outcomes
                .iter()
                .filter_map(|o| Some((o, o.checkout.as_ref()?)))
        };
        let timed_out: Vec<_> = stories()
            .filter(|(o, s)| {
                s.end == CheckoutEnd::Failed
                    && o.result == OutcomeResult::Unknown
                    && o.error
                        .as_deref()
                        .is_some_and(|e| e.contains("no answer within"))
            })
            .map(|(o, _)| o)
            .collect();
        let unreachable = stories()
            .filter(|(_, s)| {
                s.steps
                    .iter()
                    .any(|st| st.outcome == StepOutcome::Unreachable)
            })
            .count();
        let slowest = stories()
            .flat_map(|(_, s)| &s.steps)
            .filter(|st| matches!(st.stage, Stage::Reserve | Stage::Retry))
            .map(|st| st.end_us - st.start_us)
            .max()
            .unwrap_or(0);
        println!(
            "fail {mode}, Redis paused {PAUSE:?} mid-run: {} reservations timed out (in doubt, \
             {} units), {unreachable} stories met an unreachable Redis, {} refused, {} \
             backorder units; the slowest reserve answer took {:.2} s",
            timed_out.len(),
            report.summary.in_doubt_units,
            c.refused_unreachable,
            c.backorder_units,
            slowest as f64 / 1e6
        );
        assert!(
            !timed_out.is_empty(),
            "fail {mode}: the pause timed nobody out"
        );
        assert_eq!(
            (unreachable, c.refused_unreachable, c.backorder_units),
            (0, 0, 0),
            "fail {mode}: a slow Redis was taken for an unreachable one"
        );
        let in_doubt: u64 = timed_out.iter().map(|o| u64::from(o.qty)).sum();
        assert_eq!(report.summary.in_doubt_units, in_doubt, "fail {mode}");
        check_checkout(&config, &report, true, true).unwrap();
    }
}
