//! The rooms load benchmark: N participants (default 500) in one room across S (default two)
//! `oversold serve` processes on loopback sharing one private Redis, everyone pressing Buy
//! within one second. Checks that every click gets exactly one `buy_result`, delivered to the
//! phone that made it, and prints: click → own result latency, fan-out latency (an outcome's
//! end on the sale's server → its arrival on every screen), and each server's peak memory
//! and CPU time.
//!
//! ```text
//! cargo build --release -p oversold --bin oversold --example room_bench
//! target/release/examples/room_bench [--participants 500] [--servers 2] [--strategy naive] [--stock 100]
//! ```
//! Issue 20's hall: `--participants 2000 --servers 4` (each server is started with
//! `--max-room-people` for the whole room, since a room holds 1000 people by default).
//! Loopback only (it binds 127.0.0.1 and starts its own redis-server); Linux only (it reads
//! `/proc` for memory and CPU). The servers are `oversold` next to this example's binary,
//! or `--server PATH`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures_util::{SinkExt, StreamExt};
use oversold::private_redis::PrivateRedis;
use oversold::rooms::sale::unix_us;
use oversold_protocol::ServerMessage;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{Mutex, watch};
use tokio_tungstenite::tungstenite::Message;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Longest the whole run may take before it is declared stuck.
const RUN_LIMIT: Duration = Duration::from_secs(120);
/// Most participants this benchmark will open (each is a socket).
const MAX_PARTICIPANTS: usize = 4_000;
/// Most `oversold serve` processes it starts.
const MAX_SERVERS: usize = 8;

struct Args {
    participants: usize,
    servers: usize,
    strategy: String,
    stock: u32,
    server: PathBuf,
}

fn args() -> anyhow::Result<Args> {
    let mut a = Args {
        participants: 500,
        servers: 2,
        strategy: "naive".into(),
        stock: 100,
        server: std::env::current_exe()?
            .parent()
            .and_then(|p| p.parent())
            .context("no parent directory")?
            .join("oversold"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--participants" => a.participants = value.parse()?,
            "--servers" => a.servers = value.parse()?,
            "--strategy" => a.strategy = value,
            "--stock" => a.stock = value.parse()?,
            "--server" => a.server = value.into(),
            other => bail!("unknown flag {other}"),
        }
    }
    if !(1..=MAX_PARTICIPANTS).contains(&a.participants) {
        bail!("--participants must be 1 to {MAX_PARTICIPANTS}");
    }
    if !(1..=MAX_SERVERS).contains(&a.servers) {
        bail!("--servers must be 1 to {MAX_SERVERS}");
    }
    Ok(a)
}

/// One `oversold serve` child, and the address it printed.
struct Server {
    child: Child,
    addr: String,
}

/// Start one server taking `sockets` sockets, all from loopback, in rooms of `people`.
/// Every phone comes from 127.0.0.1, and a room's seats per address are counted in Redis
/// across the processes (twice the per-address socket cap), so that cap covers the room.
async fn start_server(
    bin: &PathBuf,
    redis_url: &str,
    sockets: usize,
    people: usize,
) -> anyhow::Result<Server> {
    let mut child = Command::new(bin)
        .args(["--redis-url", redis_url, "serve", "--addr", "127.0.0.1:0"])
        .args(["--max-sockets", &sockets.to_string()])
        .args([
            "--max-sockets-per-address",
            &sockets.max(people).to_string(),
        ])
        .args(["--max-room-people", &people.to_string()])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("starting {}", bin.display()))?;
    let stdout = child.stdout.take().context("no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .context("the server did not start in 20 s")??
        .context("the server exited")?;
    let addr = line
        .strip_prefix("oversold listening on http://")
        .context("unexpected first line")?
        .to_string();
    Ok(Server { child, addr })
}

async fn connect(addr: &str) -> anyhow::Result<Ws> {
    let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws")).await?;
    Ok(ws)
}

async fn send(ws: &mut Ws, v: serde_json::Value) -> anyhow::Result<()> {
    ws.send(Message::Text(v.to_string().into())).await?;
    Ok(())
}

/// The next protocol frame, or an error after `limit`.
async fn next(ws: &mut Ws, limit: Duration) -> anyhow::Result<ServerMessage> {
    loop {
        let frame = tokio::time::timeout(limit, ws.next())
            .await
            .context("no frame in time")?
            .context("socket closed")??;
        if let Message::Text(t) = frame {
            return Ok(serde_json::from_str(&t)?);
        }
    }
}

/// Phones joining at once.
const JOINING_AT_ONCE: usize = 64;

/// Phone `i` joins `room` on the server at `addr`.
async fn join_phone(addr: &str, room: &str, i: usize) -> anyhow::Result<Ws> {
    let mut ws = connect(addr).await?;
    send(&mut ws, json!({"type":"join_room","room":room})).await?;
    loop {
        match next(&mut ws, Duration::from_secs(20)).await? {
            ServerMessage::RoomJoined { .. } => return Ok(ws),
            ServerMessage::Error(e) => bail!("phone {i} was not let in: {e:?}"),
            _ => {}
        }
    }
}

/// What one screen saw: each buyer's outcome arrival (µs since the epoch), its own results.
#[derive(Default)]
struct Seen {
    arrivals: HashMap<u32, u64>,
    results: Vec<(String, u64)>,
    opened_unix_us: u64,
    outcome_end_us: HashMap<u32, u64>,
}

/// Longest the phones may take to join, all of them.
const JOIN_LIMIT: Duration = Duration::from_secs(300);

/// What one screen does once the sale is about to open: the presenter opens it, a phone
/// presses Buy this long after the start.
enum Part {
    Opens(serde_json::Value),
    Clicks(String, Duration),
    Watches,
}

/// Follow one screen until `sale_closed`, reading (and so answering the server's pings) from
/// the moment it joined; once `start` is known, play its part.
async fn screen(
    mut ws: Ws,
    room: String,
    part: Part,
    mut start: watch::Receiver<Option<Instant>>,
) -> anyhow::Result<(Seen, Option<u64>)> {
    let mut seen = Seen::default();
    let mut sent_at = None;
    let mut part = Some(part);
    let joined_by = Instant::now() + JOIN_LIMIT;
    loop {
        let began = *start.borrow();
        let deadline = began.map_or(joined_by, |b| b + RUN_LIMIT);
        let click_at = match (&part, began) {
            (Some(Part::Clicks(_, after)), Some(b)) => Some(b + *after),
            _ => None,
        };
        let frame = tokio::select! {
            f = next(&mut ws, deadline.saturating_duration_since(Instant::now())) => f?,
            changed = start.changed(), if began.is_none() => {
                changed?;
                if let Some(Part::Opens(open)) = part.take_if(|p| matches!(p, Part::Opens(_))) {
                    send(&mut ws, open).await?;
                }
                continue;
            }
            _ = tokio::time::sleep_until(click_at.unwrap_or(deadline).into()), if click_at.is_some() => {
                if let Some(Part::Clicks(request_id, _)) = part.take() {
                    sent_at = Some(unix_us());
                    send(&mut ws, json!({"type":"buy","room":room,"request_id":request_id})).await?;
                }
                continue;
            }
        };
        let now = unix_us();
        match frame {
            ServerMessage::SaleOpened(s) => seen.opened_unix_us = s.opened_unix_us,
            ServerMessage::Outcomes { outcomes, .. } => {
                for o in outcomes {
                    seen.arrivals.insert(o.buyer, now);
                    seen.outcome_end_us.insert(o.buyer, o.end_us);
                }
            }
            ServerMessage::BuyResult(r) => seen.results.push((r.request_id, now)),
            ServerMessage::SaleClosed(_) => return Ok((seen, sent_at)),
            ServerMessage::Error(e) => bail!("error frame: {e:?}"),
            _ => {}
        }
    }
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// `(peak RSS KiB, CPU seconds)` of a process, from `/proc`.
fn usage(pid: u32) -> (u64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let hwm = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0)
        + f.get(12).and_then(|v| v.parse().ok()).unwrap_or(0);
    (hwm, ticks as f64 / 100.0)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let a = args()?;
    let redis = tokio::task::spawn_blocking(PrivateRedis::start).await??;
    let per_server = a.participants.div_ceil(a.servers) + 8;
    // Everyone, the presenter and the spectator, with room to spare.
    let people = (a.participants + 8).max(1_000);
    let mut servers = Vec::new();
    for _ in 0..a.servers {
        servers.push(start_server(&a.server, &redis.url(), per_server + 16, people).await?);
    }
    let addrs: Vec<String> = servers.iter().map(|s| s.addr.clone()).collect();
    println!("servers: {}; redis: {}", addrs.join(", "), redis.url());
    let first = &addrs[0];
    let last = &addrs[addrs.len() - 1];

    let mut presenter = connect(first).await?;
    send(&mut presenter, json!({"type":"create_room"})).await?;
    let (room, token) = loop {
        if let ServerMessage::RoomCreated {
            room,
            presenter_token,
            ..
        } = next(&mut presenter, Duration::from_secs(5)).await?
        {
            break (room, presenter_token);
        }
    };

    // Every screen is read from the moment it joined (an unread socket stops answering the
    // server's pings and is closed as gone); `start` tells them all when the sale opens.
    let (start_tx, start_rx) = watch::channel(None::<Instant>);
    let mut tasks = tokio::task::JoinSet::new();
    // No simulated app work: the click-to-result times are the server's own path.
    let open = json!({"type":"open_sale","room":room,"presenter_token":token,
        "config":{"strategy":a.strategy,"stock":a.stock,"duration_ms":8000,"app_servers":8,
        "race_window_ms":0}});
    tasks.spawn(screen(
        presenter,
        room.clone(),
        Part::Opens(open),
        start_rx.clone(),
    ));

    // Phones take the servers in turn, JOINING_AT_ONCE at a time; one spectator on the last.
    // Everyone presses Buy within one second of the sale opening (spread evenly).
    let joined = Instant::now();
    let mut joins = futures_util::stream::iter(0..a.participants)
        .map(|i| join_phone(&addrs[i % addrs.len()], &room, i))
        .buffered(JOINING_AT_ONCE)
        .enumerate();
    while let Some((i, ws)) = joins.next().await {
        let after = Duration::from_micros((i as u64 * 1_000_000) / a.participants as u64);
        let part = Part::Clicks(format!("p{i}"), after);
        tasks.spawn(screen(ws?, room.clone(), part, start_rx.clone()));
    }
    let mut spectator = connect(last).await?;
    send(
        &mut spectator,
        json!({"type":"join_room","room":room,"as":"spectator"}),
    )
    .await?;
    tasks.spawn(screen(spectator, room.clone(), Part::Watches, start_rx));
    println!("{} phones joined in {:?}", a.participants, joined.elapsed());

    let before: Vec<(u64, f64)> = servers
        .iter()
        .map(|s| usage(s.child.id().unwrap_or(0)))
        .collect();
    start_tx.send_replace(Some(Instant::now() + Duration::from_millis(500)));
    let screens = Arc::new(Mutex::new(Vec::new()));
    while let Some(done) = tokio::time::timeout(RUN_LIMIT, tasks.join_next())
        .await
        .context("stuck")?
    {
        screens.lock().await.push(done??);
    }
    let after: Vec<(u64, f64)> = servers
        .iter()
        .map(|s| usage(s.child.id().unwrap_or(0)))
        .collect();
    report(&a, &screens.lock().await, &before, &after)
}

fn report(
    a: &Args,
    screens: &[(Seen, Option<u64>)],
    before: &[(u64, f64)],
    after: &[(u64, f64)],
) -> anyhow::Result<()> {
    let mut lost = 0;
    let mut own = Vec::new();
    for (seen, sent) in screens.iter().filter(|(_, sent)| sent.is_some()) {
        match (seen.results.as_slice(), sent) {
            ([(_, got)], Some(sent)) => own.push(got.saturating_sub(*sent)),
            _ => lost += 1,
        }
    }
    let mut fanout = Vec::new();
    let mut buyers = 0;
    for (seen, _) in screens {
        buyers = buyers.max(seen.arrivals.len());
        for (buyer, arrived) in &seen.arrivals {
            let ended = seen.opened_unix_us + seen.outcome_end_us[buyer];
            fanout.push(arrived.saturating_sub(ended));
        }
    }
    own.sort_unstable();
    fanout.sort_unstable();
    let ms = |us: u64| us as f64 / 1000.0;
    println!(
        "participants {} · servers {} · strategy {} · stock {}",
        a.participants, a.servers, a.strategy, a.stock
    );
    println!(
        "clicks {} · answered exactly once {} · lost {lost}",
        own.len() + lost,
        own.len()
    );
    println!("outcomes per screen {buyers} · screens {}", screens.len());
    println!(
        "click → own result  p50 {:.1} ms  p99 {:.1} ms  max {:.1} ms",
        ms(percentile(&own, 0.5)),
        ms(percentile(&own, 0.99)),
        ms(percentile(&own, 1.0))
    );
    println!(
        "fan-out (outcome → every screen, {} deliveries)  p50 {:.1} ms  p99 {:.1} ms  max {:.1} ms",
        fanout.len(),
        ms(percentile(&fanout, 0.5)),
        ms(percentile(&fanout, 0.99)),
        ms(percentile(&fanout, 1.0))
    );
    for (i, ((_, cpu0), (hwm, cpu1))) in before.iter().zip(after).enumerate() {
        println!(
            "server {} · peak RSS {:.1} MiB · CPU {:.2} s during the sale",
            i + 1,
            *hwm as f64 / 1024.0,
            cpu1 - cpu0
        );
    }
    if lost > 0 {
        bail!("{lost} clicks were not answered exactly once");
    }
    Ok(())
}
