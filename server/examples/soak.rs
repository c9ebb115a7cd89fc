//! A bounded soak: the release `oversold serve` under a mixed load for N minutes, watched for
//! leaks. Not part of CI (it runs for minutes); run it before a release or after touching the
//! WebSocket, the engine or the store:
//!
//! ```text
//! cargo run --release -p oversold --example soak -- --minutes 3 [--sockets 24]
//! ```
//!
//! It starts a redis-server of its own and the server as a child process (closer to
//! production than an in-process server, and its file descriptors and memory are its own:
//! read from `/proc/PID/fd` and `/proc/PID/status`). Then `--sockets` clients loop until the
//! time is up, each picking at random: a run of any strategy with random knobs, a run
//! cancelled midway, a comparison, a malformed frame, or a socket that starts a run and
//! vanishes without a close. Halfway through, Redis is killed and restarted (empty).
//!
//! Every 10 s it prints the server's open fds and resident memory, runs finished, failed and
//! cancelled, error codes, and outcomes by result. At the end it waits for the server to
//! settle and gives a verdict: no `oversold:*` key left in Redis, and the fd count back near
//! where it started. Memory is printed, not judged (an allocator keeps what it grew).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use oversold::private_redis::PrivateRedis;
use oversold_protocol::{ErrorCode, ServerMessage};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How often the progress line is printed.
const REPORT_EVERY: Duration = Duration::from_secs(10);
/// Longest one action may take (a run's buyers have a 20 s deadline, plus arrival spreads).
const ACTION_BOUND: Duration = Duration::from_secs(90);
/// How far above its starting count the server's fd count may end and still pass.
const FD_SLACK: usize = 8;

/// Flags.
#[derive(Debug, Parser)]
struct Args {
    /// How long to load the server, in minutes (fractions allowed).
    #[arg(long, default_value_t = 3.0)]
    minutes: f64,
    /// Concurrent client sockets.
    #[arg(long, default_value_t = 24)]
    sockets: usize,
    /// The `oversold` binary to soak [default: the release build next to this example,
    /// built first with cargo].
    #[arg(long)]
    binary: Option<PathBuf>,
    /// Write the server's warnings and errors to this file [default: discarded].
    #[arg(long)]
    server_log: Option<PathBuf>,
}

/// Everything the clients saw, shared by them. A std `Mutex`: each update is a few map
/// increments, never held across an `.await`.
#[derive(Default)]
struct Tally {
    actions: BTreeMap<&'static str, u64>,
    runs_finished: u64,
    runs_failed: u64,
    runs_cancelled: u64,
    compares: u64,
    errors: BTreeMap<String, u64>,
    outcomes: BTreeMap<&'static str, u64>,
    connect_failed: u64,
    dropped_by_server: u64,
}

type Shared = Arc<Mutex<Tally>>;

fn bump<K: Ord>(map: &mut BTreeMap<K, u64>, key: K) {
    *map.entry(key).or_default() += 1;
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let binary = match args.binary.clone() {
        Some(b) => b,
        None => build_server()?,
    };
    let mut redis = PrivateRedis::start()?;
    let redis_port = redis.port();
    let (mut server, addr) = start_server(&binary, &redis.url(), args.server_log.as_deref())?;
    let pid = server.id();
    println!(
        "soak: {} for {} min, {} sockets, server pid {pid} on {addr}, redis on port {redis_port}",
        binary.display(),
        args.minutes,
        args.sockets
    );

    // The baseline: one client said hello, nothing else going on.
    let _ = hello(&addr).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (fds_start, rss_start) = (open_fds(pid), rss_kb(pid));

    let tally: Shared = Arc::default();
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(args.minutes * 60.0);
    let mut clients = tokio::task::JoinSet::new();
    for k in 0..args.sockets {
        clients.spawn(client(k, addr.clone(), deadline, tally.clone()));
    }

    let halfway = started + (deadline - started) / 2;
    let mut restarted = false;
    let mut next_report = started + REPORT_EVERY;
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        if !restarted && Instant::now() >= halfway {
            restarted = true;
            // Dropped before the new one starts: both use the same scratch directory.
            redis.stop();
            drop(redis);
            redis = PrivateRedis::start_on(redis_port)?;
            println!(
                "{:>6.1}s  redis killed and restarted (empty) on port {redis_port}",
                started.elapsed().as_secs_f64()
            );
        }
        if Instant::now() >= next_report {
            next_report += REPORT_EVERY;
            println!("{}", progress(started, pid, &tally));
        }
    }

    // Let every client finish its current action (each is bounded), then let the server settle.
    let wait = tokio::time::timeout(ACTION_BOUND, async {
        while clients.join_next().await.is_some() {}
    });
    if wait.await.is_err() {
        println!("some clients did not finish within {ACTION_BOUND:?}; aborting them");
        clients.abort_all();
    }
    println!("{}", progress(started, pid, &tally));
    let (fds_end, keys_left) = settle(pid, fds_start, &redis.url()).await;
    let rss_end = rss_kb(pid);

    stop_server(&mut server);
    let t = tally.lock().expect("tally");
    println!(
        "--- soak over after {:.0} s",
        started.elapsed().as_secs_f64()
    );
    println!("actions:        {:?}", t.actions);
    println!(
        "runs:           {} finished, {} failed, {} cancelled; {} comparisons",
        t.runs_finished, t.runs_failed, t.runs_cancelled, t.compares
    );
    println!("error codes:    {:?}", t.errors);
    println!("outcomes:       {:?}", t.outcomes);
    println!(
        "sockets:        {} connects refused, {} dropped by the server",
        t.connect_failed, t.dropped_by_server
    );
    println!("keys left:      {keys_left} oversold:* keys in Redis");
    println!("server fds:     {fds_start} at start, {fds_end} at end");
    println!(
        "server VmRSS:   {} kB at start, {} kB at end",
        rss_start, rss_end
    );
    let fds_ok = fds_end <= fds_start + FD_SLACK;
    let pass = fds_ok && keys_left == 0;
    println!(
        "verdict:        {} (fds back near start: {}, no keys left: {})",
        if pass { "PASS" } else { "FAIL" },
        if fds_ok { "yes" } else { "no" },
        if keys_left == 0 { "yes" } else { "no" },
    );
    if !pass {
        std::process::exit(1);
    }
    Ok(())
}

/// `cargo build --release -p oversold --bin oversold`, and the path of what it built (next to
/// this example's own binary: `target/release/examples/soak` → `target/release/oversold`).
fn build_server() -> anyhow::Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "build",
            "--release",
            "-q",
            "-p",
            "oversold",
            "--bin",
            "oversold",
        ])
        .status()?;
    anyhow::ensure!(status.success(), "building the server failed");
    let exe = std::env::current_exe()?;
    let dir = exe
        .parent()
        .and_then(|examples| examples.parent())
        .ok_or_else(|| anyhow::anyhow!("cannot place {}", exe.display()))?;
    Ok(dir.join("oversold"))
}

/// Start `oversold serve` on a free port; returns the child and `host:port` from its first line.
fn start_server(
    binary: &Path,
    redis_url: &str,
    log: Option<&Path>,
) -> anyhow::Result<(Child, String)> {
    let stderr = match log {
        Some(path) => Stdio::from(std::fs::File::create(path)?),
        None => Stdio::null(),
    };
    let mut child = Command::new(binary)
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--assets",
            "/nonexistent-oversold-dist",
            "--max-runs",
            "16",
        ])
        .env("REDIS_URL", redis_url)
        .env("RUST_LOG", "oversold=warn")
        .stdout(Stdio::piped())
        .stderr(stderr)
        .stdin(Stdio::null())
        .spawn()?;
    let stdout = child.stdout.take().expect("piped");
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    let addr = line
        .trim()
        .strip_prefix("oversold listening on http://")
        .ok_or_else(|| anyhow::anyhow!("unexpected first line from the server: {line:?}"))?
        .to_string();
    Ok((child, addr))
}

/// SIGTERM (a graceful shutdown), then SIGKILL if it has not exited within 10 s.
fn stop_server(server: &mut Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status();
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        if let Ok(Some(_)) = server.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = server.kill();
    let _ = server.wait();
}

/// Wait up to 20 s for the server's fds to come back near the start and for Redis to hold no
/// run keys; returns the last fd count and key count seen.
async fn settle(pid: u32, fds_start: usize, redis_url: &str) -> (usize, usize) {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let fds = open_fds(pid);
        let keys = run_keys(redis_url).await;
        if (fds <= fds_start + FD_SLACK && keys == 0) || Instant::now() > until {
            return (fds, keys);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// `oversold:*` keys in Redis (an unreachable Redis counts as a failure to check).
async fn run_keys(url: &str) -> usize {
    let Ok(client) = redis::Client::open(url) else {
        return usize::MAX;
    };
    let Ok(mut conn) = client.get_multiplexed_async_connection().await else {
        return usize::MAX;
    };
    redis::cmd("KEYS")
        .arg("oversold:*")
        .query_async::<Vec<String>>(&mut conn)
        .await
        .map(|k| k.len())
        .unwrap_or(usize::MAX)
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn progress(started: Instant, pid: u32, tally: &Shared) -> String {
    let t = tally.lock().expect("tally");
    format!(
        "{:>6.1}s  fds {:>4}  rss {:>7} kB  runs {} ok / {} failed / {} cancelled  errors {:?}  outcomes {:?}",
        started.elapsed().as_secs_f64(),
        open_fds(pid),
        rss_kb(pid),
        t.runs_finished,
        t.runs_failed,
        t.runs_cancelled,
        t.errors,
        t.outcomes
    )
}

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Connect and read `hello`; returns the socket and the strategies it may run.
async fn hello(addr: &str) -> anyhow::Result<(Ws, Vec<String>)> {
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws")).await?;
    match next(&mut ws, Duration::from_secs(10)).await {
        Some(ServerMessage::Hello(h)) => {
            let names = h
                .strategies
                .into_iter()
                .filter(|s| s.available)
                .map(|s| s.about.name)
                .map(String::from)
                .collect();
            Ok((ws, names))
        }
        other => anyhow::bail!("expected hello, got {other:?}"),
    }
}

/// The next protocol frame within `wait`, skipping pings; `None` when the socket closed or went
/// silent.
async fn next(ws: &mut Ws, wait: Duration) -> Option<ServerMessage> {
    loop {
        match tokio::time::timeout(wait, ws.next()).await {
            Ok(Some(Ok(Message::Text(t)))) => return serde_json::from_str(&t).ok(),
            Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => continue,
            _ => return None,
        }
    }
}

/// One client: connect, do a few random actions on the socket, leave, again, until `deadline`.
async fn client(k: usize, addr: String, deadline: Instant, tally: Shared) {
    while Instant::now() < deadline {
        let Ok((mut ws, strategies)) = hello(&addr).await else {
            tally.lock().expect("tally").connect_failed += 1;
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        for _ in 0..rand::random_range(1..=6) {
            if Instant::now() >= deadline {
                break;
            }
            let action = pick();
            bump(&mut tally.lock().expect("tally").actions, action);
            let alive = match action {
                "run" => run(&mut ws, random_run(&strategies), None, &tally).await,
                "cancel" => {
                    let after = Duration::from_millis(rand::random_range(0..600));
                    run(&mut ws, slow_run(&strategies), Some(after), &tally).await
                }
                "compare" => compare(&mut ws, &tally).await,
                "malformed" => malformed(&mut ws, &tally).await,
                _ => {
                    // Vanish: start a long run and drop the TCP connection without a close.
                    let _ = ws.send(text(&slow_run(&strategies))).await;
                    tokio::time::sleep(Duration::from_millis(rand::random_range(0..300))).await;
                    false
                }
            };
            if !alive {
                break;
            }
        }
        drop(ws);
        // Spread the reconnects out a little.
        tokio::time::sleep(Duration::from_millis(10 * (k as u64 % 7))).await;
    }
}

/// An action, weighted: mostly runs.
fn pick() -> &'static str {
    match rand::random_range(0..100) {
        0..55 => "run",
        55..70 => "cancel",
        70..75 => "compare",
        75..90 => "malformed",
        _ => "vanish",
    }
}

fn text(v: &Value) -> Message {
    Message::Text(v.to_string().into())
}

fn random_run(strategies: &[String]) -> Value {
    let strategy = &strategies[rand::random_range(0..strategies.len())];
    let mut config = json!({
        "strategy": strategy,
        "stock": rand::random_range(0..=400),
        "buyers": rand::random_range(1..=1500),
        "app_servers": rand::random_range(1..=32),
        "arrival_spread_ms": rand::random_range(0..=1500),
        "race_window_ms": rand::random_range(0..=10),
    });
    if rand::random_bool(0.5) {
        config["max_qty"] = json!(rand::random_range(2..=4));
    } else {
        config["qty"] = json!(rand::random_range(1..=3));
    }
    json!({"type": "start_run", "config": config})
}

/// A run long enough to be cancelled or abandoned in the middle.
fn slow_run(strategies: &[String]) -> Value {
    let mut frame = random_run(strategies);
    frame["config"]["buyers"] = json!(2000);
    frame["config"]["arrival_spread_ms"] = json!(3000);
    frame
}

/// What one frame means for the action reading it.
enum Step {
    /// More frames to come.
    More,
    /// The action is over.
    Done,
    /// Refused before it started: wait a little (as the page does), then it is over.
    Refused(ErrorCode),
}

/// Count one frame of a run (or comparison) in the tally and say what it means. `compare` is
/// true while reading a comparison, which ends at `compare_finished`, not at a run's end.
fn tally_frame(msg: ServerMessage, compare: bool, tally: &Shared) -> Step {
    let mut t = tally.lock().expect("tally");
    match msg {
        ServerMessage::Outcomes { outcomes, .. } => {
            for o in outcomes {
                bump(&mut t.outcomes, o.result.as_str());
            }
            Step::More
        }
        ServerMessage::RunFinished { .. } => {
            t.runs_finished += 1;
            if compare { Step::More } else { Step::Done }
        }
        ServerMessage::RunCancelled { .. } => {
            t.runs_cancelled += 1;
            if compare { Step::More } else { Step::Done }
        }
        ServerMessage::CompareFinished { .. } => {
            t.compares += 1;
            Step::Done
        }
        ServerMessage::Error(e) => {
            bump(&mut t.errors, classed(e.code));
            match (e.run_id, e.code) {
                // A run's terminal error (in a comparison, the next race follows).
                (Some(_), _) => {
                    t.runs_failed += 1;
                    if compare { Step::More } else { Step::Done }
                }
                // A late answer to an earlier cancel that crossed the run's end: not about
                // this action.
                (None, ErrorCode::NoRunInProgress) => Step::More,
                (None, code) => Step::Refused(code),
            }
        }
        _ => Step::More, // run_started, compare_started, redis_status
    }
}

/// End an action: a refused one pauses first (busy or Redis down), as the page would.
async fn finish(step: Step) -> bool {
    if let Step::Refused(code) = step
        && matches!(code, ErrorCode::Busy | ErrorCode::RedisUnavailable)
    {
        tokio::time::sleep(Duration::from_millis(rand::random_range(100..400))).await;
    }
    true
}

/// Start a run, optionally cancel it after `cancel_after`, and read it to its terminal frame.
/// Returns false when the socket is gone.
async fn run(ws: &mut Ws, frame: Value, cancel_after: Option<Duration>, tally: &Shared) -> bool {
    if ws.send(text(&frame)).await.is_err() {
        return false;
    }
    let mut cancel_at = cancel_after.map(|d| Instant::now() + d);
    let until = Instant::now() + ACTION_BOUND;
    while Instant::now() < until {
        let wait = cancel_at
            .map(|t| t.saturating_duration_since(Instant::now()))
            .unwrap_or(ACTION_BOUND)
            .max(Duration::from_millis(1));
        match tokio::time::timeout(wait, next(ws, ACTION_BOUND)).await {
            Err(_) => {
                // Time to cancel.
                cancel_at = None;
                if ws.send(text(&json!({"type": "cancel_run"}))).await.is_err() {
                    return false;
                }
            }
            Ok(None) => {
                tally.lock().expect("tally").dropped_by_server += 1;
                return false;
            }
            Ok(Some(msg)) => match tally_frame(msg, false, tally) {
                Step::More => {}
                step => return finish(step).await,
            },
        }
    }
    false
}

/// A small comparison of every strategy, read to `compare_finished` (or a refusal).
async fn compare(ws: &mut Ws, tally: &Shared) -> bool {
    let frame = json!({"type": "start_compare", "config": {
        "stock": rand::random_range(1..=50),
        "buyers": rand::random_range(10..=200),
        "arrival_spread_ms": rand::random_range(0..=200),
    }});
    if ws.send(text(&frame)).await.is_err() {
        return false;
    }
    loop {
        let Some(msg) = next(ws, ACTION_BOUND).await else {
            tally.lock().expect("tally").dropped_by_server += 1;
            return false;
        };
        match tally_frame(msg, true, tally) {
            Step::More => {}
            step => return finish(step).await,
        }
    }
}

/// One malformed frame; the server must answer with an error frame (or, for an oversized
/// frame, may close the socket). Returns false when the socket is gone.
async fn malformed(ws: &mut Ws, tally: &Shared) -> bool {
    let frame = match rand::random_range(0..7) {
        0 => Message::Text("not json at all".into()),
        1 => Message::Text("[1, 2, 3]".into()),
        2 => Message::Text(r#"{"type":"warp_drive"}"#.into()),
        3 => Message::Text(r#"{"type":"start_run","config":{}}"#.into()),
        4 => Message::Text(
            r#"{"type":"start_run","config":{"strategy":"lua","buyers":99999999}}"#.into(),
        ),
        5 => Message::Binary(vec![0xde, 0xad, 0xbe, 0xef].into()),
        _ => Message::Text("x".repeat(20 * 1024).into()),
    };
    if ws.send(frame).await.is_err() {
        return false;
    }
    loop {
        match next(ws, Duration::from_secs(10)).await {
            Some(ServerMessage::Error(e)) => {
                bump(&mut tally.lock().expect("tally").errors, classed(e.code));
                // A late answer to an earlier cancel: the answer to this frame is still due.
                if e.code != ErrorCode::NoRunInProgress {
                    return true;
                }
            }
            Some(_) => continue, // redis_status
            None => {
                tally.lock().expect("tally").dropped_by_server += 1;
                return false;
            }
        }
    }
}

/// An error code under its class, e.g. `input/bad_json`: `input` is the client's fault,
/// `capacity` a refusal to protect the server, `store` Redis (or PostgreSQL) failing.
fn classed(code: ErrorCode) -> String {
    let class = match code {
        ErrorCode::Busy
        | ErrorCode::ResourceExhausted
        | ErrorCode::RateLimited
        | ErrorCode::RunInProgress => "capacity",
        ErrorCode::RedisUnavailable | ErrorCode::RunFailed | ErrorCode::StrategyUnavailable => {
            "store"
        }
        _ => "input",
    };
    format!("{class}/{}", code.as_str())
}
