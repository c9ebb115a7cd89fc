//! Fair shares and budgets over a real socket: per-address caps (sockets, runs), the
//! comparison share of the run slots, the connection budget and the PostgreSQL pool. Each
//! refusal must come before anything is opened, with a sentence that says which cap and why.

use std::time::Duration;

use axum::http::HeaderName;
use oversold::backends::Backends;
use oversold::client::ClientCaps;
use oversold::state::AppState;
use oversold_protocol::{ErrorCode, RunSummary, ServerMessage, WireError};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::common::{Client, TestRedis, TestServer};
use crate::ws::idle_health;

/// Caps high enough to stay out of the way of the one under test.
const ROOMY: ClientCaps = ClientCaps {
    sockets: 64,
    runs: 64,
};

fn state(backends: Backends, max_runs: usize) -> AppState {
    AppState::new(backends, idle_health(), "/nonexistent".into(), max_runs)
}

/// A WebSocket that says it comes through a proxy, as `header: value`.
async fn connect_as(
    server: &TestServer,
    header: &'static str,
    value: &str,
) -> Result<Client, tokio_tungstenite::tungstenite::Error> {
    let mut request = format!("ws://{}/ws", server.addr)
        .into_client_request()
        .unwrap();
    request.headers_mut().insert(header, value.parse().unwrap());
    let (ws, _) = tokio_tungstenite::connect_async(request).await?;
    Ok(Client { ws })
}

/// The status and body of a refused upgrade.
fn refusal(result: Result<Client, tokio_tungstenite::tungstenite::Error>) -> (u16, String) {
    match result {
        Err(tokio_tungstenite::tungstenite::Error::Http(res)) => {
            let body = res.body().clone().unwrap_or_default();
            (
                res.status().as_u16(),
                String::from_utf8_lossy(&body).into_owned(),
            )
        }
        Err(e) => panic!("expected an HTTP refusal, got {e}"),
        Ok(_) => panic!("expected an HTTP refusal, the socket opened"),
    }
}

/// A run that lasts a few seconds: its buyers arrive over `spread_ms`.
fn long_run(strategy: &str, app_servers: u32) -> Value {
    json!({"type":"start_run","config":{
        "strategy": strategy, "buyers": 20, "app_servers": app_servers, "arrival_spread_ms": 3000
    }})
}

async fn started(client: &mut Client) -> String {
    match client.next_not_status().await {
        ServerMessage::RunStarted { run_id, .. } => run_id,
        ServerMessage::CompareStarted { compare_id, .. } => compare_id,
        other => panic!("expected the job to start, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_past_its_socket_cap_gets_429_before_the_upgrade() {
    let redis = TestRedis::start();
    let caps = ClientCaps {
        sockets: 2,
        runs: 2,
    };
    let server = TestServer::serve(state(redis.backends(), 8).with_client_caps(caps, None)).await;
    let mut first = server.client().await;
    let _second = server.client().await;
    first.hello().await;
    let url = format!("ws://{}/ws", server.addr);
    let (status, body) = refusal(
        tokio_tungstenite::connect_async(&url)
            .await
            .map(|(ws, _)| Client { ws }),
    );
    assert_eq!(status, 429);
    assert!(
        body.contains("this address (127.0.0.1) already has 2 WebSockets open"),
        "{body}"
    );
    // Closing one gives the address its slot back.
    drop(first);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while tokio_tungstenite::connect_async(&url).await.is_err() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the slot never came back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_proxy_the_right_most_forwarded_address_is_the_client() {
    let redis = TestRedis::start();
    let caps = ClientCaps {
        sockets: 1,
        runs: 1,
    };
    let header = HeaderName::from_static("x-forwarded-for");
    let server =
        TestServer::serve(state(redis.backends(), 8).with_client_caps(caps, Some(header))).await;
    let _visitor = connect_as(&server, "x-forwarded-for", "203.0.113.1")
        .await
        .unwrap();
    // Same visitor, pretending to be someone else in the part of the header it controls.
    let spoofed = connect_as(&server, "x-forwarded-for", "198.51.100.99, 203.0.113.1").await;
    let (status, body) = refusal(spoofed);
    assert_eq!(status, 429);
    assert!(body.contains("203.0.113.1"), "{body}");
    // Another visitor behind the same proxy (same TCP peer) is counted apart.
    let mut other = connect_as(&server, "x-forwarded-for", "203.0.113.2")
        .await
        .expect("another address has its own share");
    other.hello().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_past_its_run_cap_gets_busy_saying_why() {
    let redis = TestRedis::start();
    let caps = ClientCaps {
        sockets: 8,
        runs: 2,
    };
    let header = HeaderName::from_static("x-real-ip");
    let server =
        TestServer::serve(state(redis.backends(), 8).with_client_caps(caps, Some(header))).await;
    let mut tabs = Vec::new();
    for _ in 0..3 {
        let mut tab = connect_as(&server, "x-real-ip", "192.0.2.10")
            .await
            .unwrap();
        tab.hello().await;
        tabs.push(tab);
    }
    for tab in &mut tabs[..2] {
        tab.send_json(long_run("lua", 2)).await;
        started(tab).await;
    }
    tabs[2].send_json(long_run("lua", 2)).await;
    let e = tabs[2].expect_error().await;
    assert_eq!(e.code, ErrorCode::Busy, "{e:?}");
    assert!(
        e.message
            .starts_with("this address already has 2 runs in flight"),
        "{e:?}"
    );
    // The server itself has room: another address runs at once.
    let mut neighbour = connect_as(&server, "x-real-ip", "192.0.2.11")
        .await
        .unwrap();
    neighbour.hello().await;
    neighbour.send_json(long_run("lua", 2)).await;
    started(&mut neighbour).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn comparisons_may_hold_at_most_half_the_run_slots() {
    // 8 long comparisons used to hold all 8 slots for minutes. With 4 slots, 2 may compare.
    let redis = TestRedis::start();
    let server = TestServer::serve(state(redis.backends(), 4).with_client_caps(ROOMY, None)).await;
    let compare =
        json!({"type":"start_compare","config":{"buyers": 20, "arrival_spread_ms": 3000}});
    let mut clients = Vec::new();
    for _ in 0..4 {
        let mut c = server.client().await;
        c.hello().await;
        clients.push(c);
    }
    for c in &mut clients[..2] {
        c.send_json(compare.clone()).await;
        started(c).await;
    }
    clients[2].send_json(compare.clone()).await;
    let e = clients[2].expect_error().await;
    assert_eq!(e.code, ErrorCode::Busy, "{e:?}");
    assert_eq!(
        e.message,
        "all 2 comparison slots are in use (2 of 4 run slots busy: 2 comparisons, 0 single \
         runs); single runs are still accepted"
    );
    // And they are.
    clients[3].send_json(long_run("lua", 2)).await;
    started(&mut clients[3]).await;
    let health = healthz(&server).await;
    assert_eq!(
        (
            health["runs_in_flight"].as_u64(),
            health["comparisons_in_flight"].as_u64()
        ),
        (Some(3), Some(2)),
        "{health}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_past_the_connection_budget_are_refused_before_opening_anything() {
    // Five runs of 256 app servers under a 1024-file limit used to die halfway with "Too many
    // open files", reported as redis_unavailable. A budget of 600 connections holds two such
    // runs (257 each); the others are refused up front and never get a run_started.
    let redis = TestRedis::start();
    let server = TestServer::serve(
        state(redis.backends(), 8)
            .with_client_caps(ROOMY, None)
            .with_connection_budget(600),
    )
    .await;
    let mut clients = Vec::new();
    for _ in 0..5 {
        let mut c = server.client().await;
        c.hello().await;
        clients.push(c);
    }
    let (mut ran, mut refused) = (Vec::new(), Vec::new());
    for mut c in clients {
        c.send_json(long_run("lua", 256)).await;
        match c.next_not_status().await {
            ServerMessage::RunStarted { .. } => ran.push(c),
            ServerMessage::Error(e) => refused.push(e),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((ran.len(), refused.len()), (2, 3));
    for e in &refused {
        assert_eq!(e.code, ErrorCode::ResourceExhausted, "{e:?}");
        assert!(e.run_id.is_none(), "refused before it started: {e:?}");
        assert_eq!(
            e.message,
            "this run needs 257 connections (256 app servers + 1 admin) and only 86 of the \
             server's 600 are free (the budget keeps the server under its open-file limit); try \
             fewer app servers, or again when a run ends"
        );
    }
    // The two that started finish cleanly: nothing failed halfway.
    for mut c in ran {
        let summary = rest_of_run(&mut c)
            .await
            .expect("a run within the budget finishes");
        assert_eq!((summary.errors, summary.units_sold), (0, 10));
    }
    // Everything reserved came back.
    let health = healthz(&server).await;
    assert_eq!(health["connections"]["in_use"], 0, "{health}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_larger_than_the_whole_budget_is_told_what_would_fit() {
    let redis = TestRedis::start();
    let server = TestServer::serve(state(redis.backends(), 8).with_connection_budget(100)).await;
    let mut c = server.client().await;
    c.hello().await;
    c.send_json(json!({"type":"start_run","config":{"strategy":"lua","app_servers":256}}))
        .await;
    let e = c.expect_error().await;
    assert_eq!(e.code, ErrorCode::ResourceExhausted);
    assert!(
        e.message
            .ends_with("more than this server's whole budget of 100 (it keeps the server under its open-file limit); use at most 99 app servers"),
        "{e:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_runs_share_a_pool_well_below_max_connections() {
    // A hostile page used to hold 97 of PostgreSQL's 100 slots. Now a pool of 10 is all the
    // server will open: a run needs its app servers + 1 (the admin connection).
    let redis = TestRedis::start();
    let Some(backends) = redis.backends_with_postgres().await else {
        return;
    };
    let server = TestServer::serve(
        state(backends, 8)
            .with_client_caps(ROOMY, None)
            .with_pg_max_connections(10),
    )
    .await;
    let mut too_big = server.client().await;
    too_big.hello().await;
    too_big.send_json(long_run("postgres", 12)).await;
    let e = too_big.expect_error().await;
    assert_eq!(e.code, ErrorCode::ResourceExhausted, "{e:?}");
    assert_eq!(
        e.message,
        "a postgres run with 12 app servers needs 13 PostgreSQL connections (one per app server + \
         1 admin), more than this server's pool of 10 (--pg-max-connections); use at most 9 app \
         servers"
    );

    let mut holders = Vec::new();
    for _ in 0..2 {
        let mut c = server.client().await;
        c.hello().await;
        c.send_json(long_run("postgres", 4)).await;
        started(&mut c).await;
        holders.push(c);
    }
    let mut third = server.client().await;
    third.hello().await;
    third.send_json(long_run("postgres", 4)).await;
    let e = third.expect_error().await;
    assert_eq!(e.code, ErrorCode::ResourceExhausted, "{e:?}");
    assert!(
        e.message.contains("only 0 of the server's 10 are free"),
        "{e:?}"
    );
    // Redis strategies do not touch the pool.
    third.send_json(long_run("lua", 4)).await;
    started(&mut third).await;
    for mut c in holders {
        rest_of_run(&mut c)
            .await
            .expect("within the pool, the run finishes");
    }
    assert_eq!(healthz(&server).await["pg_connections"]["in_use"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comparison_whose_postgres_race_does_not_fit_runs_the_others() {
    let redis = TestRedis::start();
    let Some(backends) = redis.backends_with_postgres().await else {
        return;
    };
    let server = TestServer::serve(state(backends, 8).with_pg_max_connections(5)).await;
    let mut c = server.client().await;
    c.hello().await;
    c.send_json(json!({"type":"start_compare","config":{"buyers": 20, "app_servers": 8}}))
        .await;
    let strategies = match c.next_not_status().await {
        ServerMessage::CompareStarted { strategies, .. } => strategies,
        other => panic!("{other:?}"),
    };
    assert!(strategies.iter().any(|s| s == "postgres"), "{strategies:?}");
    // Every strategy on PostgreSQL (`postgres`, `postgres_naive`) needs 9 connections here.
    let on_postgres: Vec<&str> = oversold::strategy::REGISTRY
        .iter()
        .filter(|s| s.uses_postgres())
        .map(|s| s.name())
        .collect();
    let mut finished = 0;
    for name in &strategies {
        let run = c.collect_run().await;
        assert_eq!(&run.config.strategy, name);
        match run.summary {
            Ok(_) => finished += 1,
            Err(e) => {
                assert!(on_postgres.contains(&name.as_str()), "{name}: {e:?}");
                assert_eq!(e.code, ErrorCode::ResourceExhausted, "{e:?}");
                assert!(e.message.contains("pool of 5"), "{e:?}");
            }
        }
    }
    assert_eq!(finished, strategies.len() - on_postgres.len());
    assert!(matches!(
        c.next_not_status().await,
        ServerMessage::CompareFinished { .. }
    ));
}

/// Read a started run to its terminal frame.
async fn rest_of_run(client: &mut Client) -> Result<RunSummary, WireError> {
    loop {
        match client.next_not_status().await {
            ServerMessage::Outcomes { .. } => continue,
            ServerMessage::RunFinished { summary, .. } => return Ok(summary),
            ServerMessage::Error(e) => return Err(e),
            other => panic!("unexpected mid-run frame {other:?}"),
        }
    }
}

async fn healthz(server: &TestServer) -> Value {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut raw = String::new();
    tcp.read_to_string(&mut raw).await.unwrap();
    let body = raw.split("\r\n\r\n").nth(1).expect("a body");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {raw}"))
}
