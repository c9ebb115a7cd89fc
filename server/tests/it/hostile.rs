//! A hostile page and a hostile client, over a real socket: another origin's page cannot open
//! the WebSocket; a start and a cancel in one TCP write still get their frames; binary frames
//! count against the rate limit like any other.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use oversold_protocol::{ErrorCode, ServerMessage};
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::common::{Client, TestRedis, TestServer};

/// Open `/ws` with `origin` (or none); the HTTP status of the answer.
async fn upgrade_status(server: &TestServer, origin: Option<&str>) -> u16 {
    upgrade_status_as(server, None, origin).await
}

/// [`upgrade_status`], naming `host` in the `Host` header (as a rebound domain would).
async fn upgrade_status_as(server: &TestServer, host: Option<&str>, origin: Option<&str>) -> u16 {
    let mut request = format!("ws://{}/ws", server.addr)
        .into_client_request()
        .unwrap();
    if let Some(host) = host {
        request.headers_mut().insert("host", host.parse().unwrap());
    }
    if let Some(origin) = origin {
        request
            .headers_mut()
            .insert("origin", origin.parse().unwrap());
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((_, response)) => response.status().as_u16(),
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => response.status().as_u16(),
        Err(e) => panic!("unexpected failure: {e}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_this_servers_pages_may_open_the_socket() {
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 8).await;
    let own = format!("http://{}", server.addr);
    // Defect: any web page the visitor opened could drive the lab through their browser.
    assert_eq!(
        upgrade_status(&server, Some("http://evil.example")).await,
        403
    );
    assert_eq!(upgrade_status(&server, Some("null")).await, 403);
    assert_eq!(
        upgrade_status(&server, Some(&own.replace("127.0.0.1", "localhost"))).await,
        403,
        "another host name is another origin"
    );
    // The page this server serves, and clients that are not browsers (no Origin), may.
    assert_eq!(upgrade_status(&server, Some(&own)).await, 101);
    assert_eq!(upgrade_status(&server, None).await, 101);
    // A refused upgrade touched nothing.
    assert!(
        crate::common::run_keys(&mut redis.raw().await)
            .await
            .is_empty()
    );

    // --allow-origin adds an origin.
    let state = oversold::state::AppState::new(
        redis.backends(),
        crate::ws::idle_health(),
        "/nonexistent".into(),
        8,
    )
    .with_allowed_origins(vec!["http://127.0.0.1:8080".into()]);
    let server = TestServer::serve(state).await;
    assert_eq!(
        upgrade_status(&server, Some("http://127.0.0.1:8080")).await,
        101
    );
    assert_eq!(
        upgrade_status(&server, Some("http://evil.example")).await,
        403
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_origin_shuts_out_a_dns_rebinding_page() {
    // Defect: a page on evil.example, with evil.example resolving to the server, sends
    // `Host: evil.example` and `Origin: http://evil.example`, which the same-host rule takes
    // for this server's own page.
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 8).await;
    let rebound = (Some("evil.example"), Some("http://evil.example"));
    assert_eq!(
        upgrade_status_as(&server, rebound.0, rebound.1).await,
        101,
        "without --public-origin the same-host rule lets it in (why the flag exists)"
    );
    let state = oversold::state::AppState::new(
        redis.backends(),
        crate::ws::idle_health(),
        "/nonexistent".into(),
        8,
    )
    .with_public_origins(vec!["https://lab.example".into()]);
    let server = TestServer::serve(state).await;
    assert_eq!(upgrade_status_as(&server, rebound.0, rebound.1).await, 403);
    let site = (Some("lab.example"), Some("https://lab.example"));
    assert_eq!(upgrade_status_as(&server, site.0, site.1).await, 101);
    assert_eq!(
        upgrade_status_as(&server, Some("evil.example"), None).await,
        101
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_and_a_cancel_in_one_write_still_get_their_frames() {
    // Defect: 59 of 60 such writes got no reply at all (no run_started, no end frame).
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 8).await;
    // Eight sockets taking turns, so no one socket outruns its rate limit (10 frames a second).
    let mut clients = Vec::new();
    for _ in 0..8 {
        let mut client = server.client().await;
        client.hello().await;
        clients.push(client);
    }
    let start = json!({"type":"start_run","config":{"strategy":"lua","buyers":200,"arrival_spread_ms":2000}});
    let cancel = json!({"type":"cancel_run"});
    for round in 0..60 {
        let client = &mut clients[round % 8];
        // feed + feed + flush: both frames leave in one buffer, one write.
        client
            .ws
            .feed(Message::Text(start.to_string().into()))
            .await
            .unwrap();
        client
            .ws
            .feed(Message::Text(cancel.to_string().into()))
            .await
            .unwrap();
        client.ws.flush().await.unwrap();
        let run_id = match client.next_not_status().await {
            ServerMessage::RunStarted { run_id, .. } => run_id,
            other => panic!("round {round}: expected run_started, got {other:?}"),
        };
        // Then outcomes, possibly, and exactly one terminal frame for that run.
        loop {
            match client.next_within(5).await {
                ServerMessage::Outcomes { run_id: id, .. } => assert_eq!(id, run_id),
                ServerMessage::RunCancelled { run_id: id, .. } => {
                    assert_eq!(id, run_id);
                    break;
                }
                ServerMessage::RunFinished { run_id: id, .. } => {
                    // The cancel can only come too late if every buyer had already run.
                    assert_eq!(id, run_id);
                    break;
                }
                ServerMessage::RedisStatus { .. } => {}
                other => panic!("round {round}: {other:?}"),
            }
        }
    }
    assert!(
        crate::common::run_keys(&mut redis.raw().await)
            .await
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_frames_is_answered_within_budget_then_closed() {
    // Defect: 2,000 binary frames got 2,000 replies; later, a flood was dropped silently
    // for ever instead of ended.
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 8).await;
    let mut client = server.client().await;
    client.hello().await;
    for _ in 0..2_000 {
        if client
            .ws
            .feed(Message::Binary(vec![1, 2, 3].into()))
            .await
            .is_err()
        {
            break; // closed under us: what this test expects
        }
    }
    let _ = client.ws.flush().await;
    let (mut answered, mut limited, mut close) = (0, 0, None);
    while let Ok(Some(Ok(frame))) =
        tokio::time::timeout(Duration::from_secs(2), client.ws.next()).await
    {
        match frame {
            Message::Text(t) => match serde_json::from_str::<ServerMessage>(&t).unwrap() {
                ServerMessage::Error(e) if e.code == ErrorCode::RateLimited => limited += 1,
                ServerMessage::Error(_) => answered += 1,
                _ => {}
            },
            Message::Close(frame) => close = frame.map(|f| u16::from(f.code)),
            _ => {}
        }
    }
    // The bucket holds 20 frames; a binary frame is no request, so a refused one owes no
    // answer; far past the budget the socket is closed as a policy violation.
    assert!(answered <= 25, "{answered}");
    assert_eq!(limited, 0);
    assert_eq!(close, Some(1008));
    // The server is fine, and a new socket from the same address works.
    let mut again = server.client().await;
    again.hello().await;
    again
        .send_json(json!({"type":"start_run","config":{"strategy":"lua"}}))
        .await;
    assert!(matches!(
        again.next_not_status().await,
        ServerMessage::RunStarted { .. }
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_over_the_rate_limit_still_gets_exactly_one_answer() {
    // Defect: a start_run refused within a second of the last rate_limited notice got
    // silence, and a client waiting for run_started hung.
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 8).await;
    let mut client = server.client().await;
    client.hello().await;
    const SENT: usize = 60; // past the burst of 20, short of the hard limit
    for _ in 0..SENT {
        client
            .ws
            .feed(Message::Text(r#"{"type":"cancel_run"}"#.into()))
            .await
            .unwrap();
    }
    client.ws.flush().await.unwrap();
    let (answered, limited) = count_replies(&mut client).await;
    assert_eq!(answered + limited, SENT, "{answered} + {limited}");
    assert!(limited >= SENT - 25, "{limited}");
    // Once the bucket refills, the socket is as good as new.
    tokio::time::sleep(Duration::from_secs(5)).await;
    client
        .send_json(json!({"type":"start_run","config":{"strategy":"lua"}}))
        .await;
    assert!(matches!(
        client.next_not_status().await,
        ServerMessage::RunStarted { .. }
    ));
}

/// (bad_json replies, rate_limited replies) that arrive within half a second of silence.
async fn count_replies(client: &mut Client) -> (usize, usize) {
    let (mut answered, mut limited) = (0, 0);
    while let Ok(Some(Ok(frame))) =
        tokio::time::timeout(Duration::from_millis(500), client.ws.next()).await
    {
        if let Message::Text(t) = frame {
            match serde_json::from_str::<ServerMessage>(&t).unwrap() {
                ServerMessage::Error(e) if e.code == ErrorCode::RateLimited => limited += 1,
                ServerMessage::Error(_) => answered += 1,
                _ => {}
            }
        }
    }
    (answered, limited)
}
