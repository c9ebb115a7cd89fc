//! Every HTTP wait is timed: half-sent requests are dropped after the header timeout, do not
//! stop `/healthz` from answering meanwhile, and a shutdown with a half-sent request and an
//! open WebSocket ends within the drain timeout. The timeouts are shortened to keep the suite
//! fast; the code path is `oversold serve`'s own.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use oversold::serve::{ServeOptions, serve_with};
use oversold::state::AppState;
use oversold_protocol::ServerMessage;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_util::sync::CancellationToken;

use crate::common::TestRedis;
use crate::ws::idle_health;

/// The server under test, and the handle that says when `serve_with` returned.
struct Served {
    addr: SocketAddr,
    stop: CancellationToken,
    done: JoinHandle<std::io::Result<()>>,
}

async fn start(redis: &TestRedis, options: ServeOptions) -> Served {
    let state = AppState::new(redis.backends(), idle_health(), "/nonexistent".into(), 8);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    let signal = stop.clone();
    let done = tokio::spawn(serve_with(
        listener,
        Arc::new(state),
        async move { signal.cancelled().await },
        options,
    ));
    Served { addr, stop, done }
}

fn timeouts(header_read: u64, drain: u64) -> ServeOptions {
    ServeOptions {
        header_read_timeout: Duration::from_secs(header_read),
        drain_timeout: Duration::from_secs(drain),
    }
}

/// A connection that sent half a request line and nothing more.
async fn half_sent(addr: SocketAddr) -> TcpStream {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"GET /heal").await.unwrap();
    tcp
}

/// How long until the server closes `tcp` (reading whatever it sends first), within `limit`.
async fn closed_within(tcp: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut buf = [0u8; 1024];
    tokio::time::timeout(limit, async {
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return started.elapsed(),
                Ok(_) => continue,
            }
        }
    })
    .await
    .ok()
}

async fn healthz_status(addr: SocketAddr) -> String {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut raw = String::new();
    tcp.read_to_string(&mut raw).await.unwrap();
    raw.lines().next().unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_sent_request_is_dropped_after_the_header_timeout() {
    let redis = TestRedis::start();
    let server = start(&redis, timeouts(1, 1)).await;
    let mut slow = half_sent(server.addr).await;
    let after = closed_within(&mut slow, Duration::from_secs(5))
        .await
        .expect("a half-sent request is not held forever");
    assert!(
        after >= Duration::from_millis(900),
        "dropped after {after:?}, before the timeout"
    );
    server.stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_half_sent_requests_do_not_stop_healthz() {
    let redis = TestRedis::start();
    let server = start(&redis, timeouts(1, 1)).await;
    let mut slow = Vec::new();
    for _ in 0..500 {
        slow.push(half_sent(server.addr).await);
    }
    let asked = Instant::now();
    assert_eq!(healthz_status(server.addr).await, "HTTP/1.1 200 OK");
    assert!(
        asked.elapsed() < Duration::from_millis(500),
        "healthz took {:?}",
        asked.elapsed()
    );
    // And every one of them is let go once its time is up.
    for tcp in &mut slow {
        assert!(closed_within(tcp, Duration::from_secs(5)).await.is_some());
    }
    server.stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_with_a_half_sent_request_and_an_open_socket_ends_within_the_drain() {
    let redis = TestRedis::start();
    // A header timeout far past the drain: only the drain can end that connection.
    let server = start(&redis, timeouts(60, 1)).await;
    let _slow = half_sent(server.addr).await;
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{}/ws", server.addr))
        .await
        .unwrap();
    let hello = ws.next().await.unwrap().unwrap();
    assert!(matches!(hello, Message::Text(_)));

    let asked = Instant::now();
    server.stop.cancel(); // what SIGTERM does in `oversold serve`
    tokio::time::timeout(Duration::from_secs(3), server.done)
        .await
        .expect("serve returns within the drain timeout")
        .unwrap()
        .unwrap();
    assert!(
        asked.elapsed() < Duration::from_millis(1_800),
        "shutdown took {:?} with a 1 s drain",
        asked.elapsed()
    );
    // The socket was told why it closed.
    let close = loop {
        match ws.next().await {
            Some(Ok(Message::Close(frame))) => break frame,
            Some(Ok(_)) => continue,
            other => panic!("expected a close frame, got {other:?}"),
        }
    };
    assert_eq!(close.map(|f| f.code), Some(CloseCode::Away));
}

/// On SIGTERM a run in flight gets its terminal frame, then the close (1001): before, the
/// close went out first and the client never heard how its run ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_sends_a_runs_terminal_frame_before_the_close() {
    let redis = TestRedis::start();
    let server = start(&redis, timeouts(60, 3)).await;
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{}/ws", server.addr))
        .await
        .unwrap();
    ws.next().await.unwrap().unwrap(); // hello
    let start_run = r#"{"type":"start_run","config":{"strategy":"lua","buyers":2000,"stock":100,"arrival_spread_ms":20000}}"#;
    ws.send(Message::Text(start_run.into())).await.unwrap();
    let run_id = loop {
        let Some(Ok(Message::Text(t))) = ws.next().await else {
            panic!("the socket ended before run_started")
        };
        if let Ok(ServerMessage::RunStarted { run_id, .. }) = serde_json::from_str(&t) {
            break run_id;
        }
    };
    server.stop.cancel(); // what SIGTERM does in `oversold serve`
    let (mut terminal, mut close) = (None, None);
    while let Ok(Some(Ok(frame))) = tokio::time::timeout(Duration::from_secs(5), ws.next()).await {
        match frame {
            Message::Text(t) => match serde_json::from_str::<ServerMessage>(&t) {
                Ok(ServerMessage::RunCancelled { run_id: id, .. }) => terminal = Some(id),
                Ok(ServerMessage::Error(e)) if e.run_id.is_some() => terminal = e.run_id,
                _ => {}
            },
            Message::Close(frame) => {
                close = frame.map(|f| f.code);
                break;
            }
            _ => {}
        }
    }
    assert_eq!(
        terminal.as_deref(),
        Some(run_id.as_str()),
        "no terminal frame before the close"
    );
    assert_eq!(close, Some(CloseCode::Away));
}
