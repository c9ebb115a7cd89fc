//! Injecting the faults: a run of one strategy on a redis-server of its own, and, from a
//! connection of the test's own, the fault at a chosen moment of it.
//!
//! The injector's connection has no response timeout of its own (the redis crate's default is
//! 500 ms), because `DEBUG SLEEP 2.6` answers only when Redis wakes up.

use std::time::{Duration, Instant};

use oversold::engine;
use oversold::plan::plan;
use oversold::run::{Event, RunError, RunReport};
use oversold::store;
use oversold::strategy::Strategy;
use oversold_protocol::{BuyerOutcome, RunConfig, RunRequest};
use redis::aio::MultiplexedConnection;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::expectations::{
    DEBUG_SLEEP, Ended, FLUSH_EVERY, Fault, Observed, PAUSE_ALL, PAUSE_WRITE,
};
use crate::common::TestRedis;

/// A run that has not ended by then is reported as hung (the engine's own backstop is the
/// 20 s buyer deadline, so this is generous).
const HANG: Duration = Duration::from_secs(60);
/// The app server whose connection [`Fault::KillAppServer`] kills.
pub const KILLED_APP_SERVER: u32 = 1;

/// The crowd every fault scenario races: the same seed for every strategy, so they face the
/// same buyers. The stock roughly matches the demand (240 buyers of 1 or 2 units), so the
/// shelf runs out near the end of the 400 ms arrival spread and the fault, injected 100 ms
/// after the first answer, lands while units are still being sold.
pub fn crowd(strategy: &str, fault: Fault) -> RunConfig {
    RunRequest {
        strategy: Some(strategy.into()),
        stock: Some(300),
        // A quiet restart needs a quiet moment: 24 buyers over 8 s leave gaps of a third of a
        // second on average.
        buyers: Some(if fault == Fault::QuietRestart {
            24
        } else {
            240
        }),
        max_qty: Some(2),
        app_servers: Some(4),
        // A kill must find buyers still to come, so the promptness of the end is measured
        // against a spread that would otherwise last much longer than the bound.
        arrival_spread_ms: Some(match fault {
            Fault::KillRestart | Fault::QuietRestart => 8000,
            _ => 400,
        }),
        race_window_ms: Some(1),
        seed: Some(0xFA17),
        ..Default::default()
    }
    .validate(0)
    .unwrap()
}

/// A redis-server of the test's own (started off the async worker threads: it blocks while
/// the server comes up).
pub async fn private_redis() -> TestRedis {
    tokio::task::spawn_blocking(TestRedis::start)
        .await
        .expect("redis starts")
}

/// A connection for the injector: no response timeout, so a `DEBUG SLEEP` can finish.
pub async fn injector(redis: &TestRedis) -> MultiplexedConnection {
    let config = redis::AsyncConnectionConfig::new().set_response_timeout(None);
    redis::Client::open(redis.server.url())
        .unwrap()
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .expect("injector connects")
}

/// A run going on in the background, with the outcomes it has delivered so far.
pub struct Running {
    pub task: JoinHandle<Result<RunReport, RunError>>,
    pub outcomes: mpsc::UnboundedReceiver<Event>,
    pub started: Instant,
    pub seen: Vec<BuyerOutcome>,
}

impl Running {
    /// Start `config` with `strategy` on `redis`.
    pub fn start(
        redis: &TestRedis,
        strategy: &'static Strategy,
        config: &RunConfig,
        run_id: &str,
    ) -> Running {
        let (sink, outcomes) = mpsc::unbounded_channel();
        let (backends, config, run_id) = (redis.backends(), config.clone(), run_id.to_string());
        let started = Instant::now();
        let task = tokio::spawn(async move {
            engine::run(
                &backends,
                strategy,
                &config,
                &run_id,
                Some(sink),
                CancellationToken::new(),
            )
            .await
        });
        Running {
            task,
            outcomes,
            started,
            seen: Vec::new(),
        }
    }

    /// Wait for the first outcome: the gate is open and buyers are at work. Returns when the
    /// gate opened, as near as the test can tell (the outcome's `end_us` is measured from it).
    pub async fn first_outcome(&mut self) -> Instant {
        // Generous: on a loaded two-core machine nine redis-servers start at once.
        let first = tokio::time::timeout(Duration::from_secs(30), self.outcomes.recv())
            .await
            .expect("a first outcome within 30 s")
            .expect("the run delivers outcomes")
            .outcome()
            .expect("a race sends outcomes only");
        let gate = Instant::now() - Duration::from_micros(first.end_us);
        self.seen.push(first);
        gate
    }

    /// Wait for the end (or [`HANG`]), then collect every outcome it delivered.
    pub async fn end(mut self) -> (Ended, Vec<BuyerOutcome>, Instant) {
        let ended = match tokio::time::timeout(HANG, &mut self.task).await {
            Ok(Ok(Ok(report))) => Ended::Summary(report.summary),
            Ok(Ok(Err(e))) => Ended::Failed(e),
            Ok(Err(panicked)) => panic!("the run panicked: {panicked}"),
            Err(_) => {
                self.task.abort();
                Ended::Hung
            }
        };
        let at = Instant::now();
        while let Some(o) = self.outcomes.try_recv().ok().and_then(Event::outcome) {
            self.seen.push(o);
        }
        (ended, self.seen, at)
    }
}

/// Sends `cmd` (`SCRIPT` or `FUNCTION`) `FLUSH` every [`FLUSH_EVERY`] until cancelled; returns
/// how many flushes it sent.
pub fn dense_flush(
    mut conn: MultiplexedConnection,
    cmd: &'static str,
    stop: CancellationToken,
) -> JoinHandle<u32> {
    tokio::spawn(async move {
        let mut flushes = 0;
        while !stop.is_cancelled() {
            let _: () = redis::cmd(cmd)
                .arg("FLUSH")
                .query_async(&mut conn)
                .await
                .expect("flush");
            flushes += 1;
            tokio::time::sleep(FLUSH_EVERY).await;
        }
        flushes
    })
}

/// `CLIENT KILL ID` the connection named `name` (as `CLIENT SETNAME` set it). `Err` with
/// `CLIENT LIST` when no connection has that name.
pub async fn kill_client_named(conn: &mut MultiplexedConnection, name: &str) -> Result<(), String> {
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query_async(conn)
        .await
        .unwrap();
    let wanted = format!("name={name}");
    let Some(id) = list
        .lines()
        .find(|l| l.split(' ').any(|field| field == wanted))
        .and_then(|l| l.split(' ').find_map(|field| field.strip_prefix("id=")))
        .map(str::to_string)
    else {
        return Err(format!("no client named {name} in CLIENT LIST:\n{list}"));
    };
    let killed: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("ID")
        .arg(&id)
        .query_async(conn)
        .await
        .unwrap();
    assert_eq!(killed, 1, "CLIENT KILL ID {id}");
    Ok(())
}

/// SIGKILL redis-server and start it again, empty, on the same port, as a supervisor would.
pub fn kill_and_restart(redis: &mut TestRedis) {
    tokio::task::block_in_place(|| {
        redis.kill();
        redis.restart();
    });
}

/// A small run that must simply work (after a restart).
pub async fn small_run(
    redis: &TestRedis,
    strategy: &'static Strategy,
    run_id: &str,
) -> Result<oversold_protocol::RunSummary, String> {
    let config = RunRequest {
        strategy: Some(strategy.name().into()),
        stock: Some(10),
        buyers: Some(30),
        ..Default::default()
    }
    .validate(0)
    .unwrap();
    engine::run(
        &redis.backends(),
        strategy,
        &config,
        run_id,
        None,
        CancellationToken::new(),
    )
    .await
    .map(|r| r.summary)
    .map_err(|e| e.to_string())
}

/// Times [`observe`] tries again when the fault found the run already over.
const ATTEMPTS: u32 = 3;

/// The fault could not be injected: the run had ended before its moment came (a machine so
/// loaded that the whole crowd was served before the test's own task woke up). Such a run
/// tested nothing, so it is run again rather than judged.
struct Missed(String);

/// Race [`crowd`] with `strategy` on a fresh redis-server while injecting `fault`; a run the
/// fault missed ([`Missed`]) is raced again, up to [`ATTEMPTS`] times.
pub async fn observe(strategy: &'static Strategy, fault: Fault) -> Observed {
    let mut why = Vec::new();
    for attempt in 1..=ATTEMPTS {
        match observe_once(strategy, fault).await {
            Ok(observed) => return observed,
            Err(Missed(reason)) => {
                println!(
                    "{:<16} {:<24} attempt {attempt}: the fault missed the run, racing again",
                    strategy.name(),
                    fault.label()
                );
                why.push(reason);
            }
        }
    }
    panic!(
        "{}: the fault missed the run {ATTEMPTS} times:\n{}",
        strategy.name(),
        why.join("\n")
    );
}

/// One try of [`observe`].
async fn observe_once(strategy: &'static Strategy, fault: Fault) -> Result<Observed, Missed> {
    let mut redis = private_redis().await;
    let config = crowd(strategy.name(), fault);
    let run_id = format!("faults-{}-{}", strategy.name(), fault.slug());
    let mut inject = injector(&redis).await;

    let flusher = match fault {
        Fault::ScriptFlush => Some("SCRIPT"),
        Fault::FunctionFlush => Some("FUNCTION"),
        _ => None,
    };
    // A dense flush runs for the whole run, from before its first buyer.
    let stop_flushing = CancellationToken::new();
    let flushing = flusher.map(|cmd| dense_flush(inject.clone(), cmd, stop_flushing.clone()));

    let mut run = Running::start(&redis, strategy, &config, &run_id);
    let started = run.started;
    let mut injected = Instant::now();
    let mut debug_sleep = None;
    if flusher.is_none() {
        let gate = run.first_outcome().await;
        let at = match fault {
            Fault::KillRestart => gate + Duration::from_secs(1),
            Fault::QuietRestart => gate + quiet_moment(&config),
            // From the gate, not from when this task heard of the first answer: on a loaded
            // machine that can be late, and the kill must land while buyers are still coming.
            _ => gate + Duration::from_millis(100),
        };
        tokio::time::sleep_until(at.into()).await;
        injected = Instant::now();
        match fault {
            Fault::PauseWrite => pause(&mut inject, PAUSE_WRITE, "WRITE").await,
            Fault::PauseAll => pause(&mut inject, PAUSE_ALL, "ALL").await,
            Fault::DebugSleep => {
                // Answers only when Redis wakes up: sent from its own task.
                let mut conn = inject.clone();
                debug_sleep = Some(tokio::spawn(async move {
                    let _: () = redis::cmd("DEBUG")
                        .arg("SLEEP")
                        .arg(DEBUG_SLEEP.as_secs_f64())
                        .query_async(&mut conn)
                        .await
                        .expect("DEBUG SLEEP (is enable-debug-command set?)");
                }));
            }
            Fault::KillAppServer => {
                let name = store::app_server_name(&run_id, KILLED_APP_SERVER);
                if let Err(list) = kill_client_named(&mut inject, &name).await {
                    // The run was over, or about to be (its connections already closed): it
                    // ends within moments. One that goes on without its app server's
                    // connection is a bug.
                    let ending = tokio::time::timeout(Duration::from_secs(5), &mut run.task);
                    assert!(ending.await.is_ok(), "the run goes on, yet {list}");
                    return Err(Missed(format!("{run_id}: {list}")));
                }
            }
            Fault::KillRestart | Fault::QuietRestart => kill_and_restart(&mut redis),
            Fault::ScriptFlush | Fault::FunctionFlush => unreachable!("flushers run above"),
        }
    }

    let (ended, outcomes, at) = run.end().await;
    stop_flushing.cancel();
    if let Some(f) = flushing {
        let flushes = f.await.expect("flusher");
        assert!(
            flushes > 5,
            "only {flushes} flushes: the fault barely happened"
        );
    }
    if let Some(sleep) = debug_sleep {
        sleep.await.expect("DEBUG SLEEP task");
    }
    let next_run = if matches!(fault, Fault::KillRestart | Fault::QuietRestart) {
        Some(small_run(&redis, strategy, &format!("{run_id}-after")).await)
    } else {
        None
    };
    Ok(Observed {
        strategy: strategy.name().to_string(),
        fault,
        config,
        ended,
        outcomes,
        elapsed: at - started,
        fault_to_end: at.saturating_duration_since(injected),
        next_run,
    })
}

/// A moment, after the gate opened, when no buyer is at work and none arrives for a while:
/// 40 ms after an arrival followed by a gap of at least 300 ms (the plan is seeded, so the
/// test knows every arrival in advance). A kill and restart there is over before anyone
/// notices.
fn quiet_moment(config: &RunConfig) -> Duration {
    let mut arrivals: Vec<Duration> = plan(&config.race).iter().map(|b| b.arrival).collect();
    arrivals.sort();
    arrivals
        .windows(2)
        .find(|w| w[0] > Duration::from_secs(1) && w[1] - w[0] >= Duration::from_millis(300))
        .map(|w| w[0] + Duration::from_millis(40))
        .expect("the seeded plan has a quiet moment")
}

/// `CLIENT PAUSE ms mode`.
async fn pause(conn: &mut MultiplexedConnection, length: Duration, mode: &str) {
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(length.as_millis() as u64)
        .arg(mode)
        .query_async(conn)
        .await
        .expect("CLIENT PAUSE");
}
