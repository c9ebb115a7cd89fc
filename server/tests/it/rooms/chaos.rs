//! Every chaos button, against a private Redis the server owns; refused on one it does not.

use std::sync::{Arc, Mutex};

use oversold::backends::Backends;
use oversold::client::ClientCaps;
use oversold::private_redis::PrivateRedis;
use oversold::rooms::Rooms;
use oversold::state::AppState;
use oversold::store::Store;
use oversold_protocol::room::{ChaosAction, ChaosApplied, SaleClosed};
use oversold_protocol::{ErrorCode, OutcomeResult, ServerMessage};
use serde_json::json;

use super::*;
use crate::common::{Client, TestRedis, TestServer};

/// A buyer that got a clear answer: a unit, or "sold out".
fn answered(o: &oversold_protocol::BuyerOutcome) -> bool {
    matches!(o.result, OutcomeResult::Reserved | OutcomeResult::SoldOut)
}

/// A server that started its own Redis (as `--private-redis` does).
async fn owning_server() -> (TestServer, Arc<Mutex<PrivateRedis>>) {
    let redis = Arc::new(Mutex::new(
        PrivateRedis::start().expect("redis-server on PATH"),
    ));
    let url = redis.lock().unwrap().url();
    let backends = Backends::redis_only(Store::open(&url).unwrap(), "not used").owning_redis();
    let state = AppState::new(
        backends,
        tokio::sync::watch::channel(oversold::health::Health::up()).1,
        "/nonexistent".into(),
        4,
    )
    // Two rooms' sales and a visitor's run, all from 127.0.0.1: sales take runs' share.
    .with_client_caps(
        ClientCaps {
            sockets: 32,
            runs: 4,
        },
        None,
    )
    .with_rooms(Rooms::default().with_own_sale_redis());
    (TestServer::serve(state).await, redis)
}

/// Open a sale of `strategy` with `bots` spread over its first second, press `action` once
/// the sale runs, and return what the button said and how the sale ended.
async fn press_during_sale(
    presenter: &mut Client,
    room: &Room,
    strategy: &str,
    bots: u32,
    action: ChaosAction,
) -> (
    ChaosApplied,
    SaleClosed,
    Vec<oversold_protocol::BuyerOutcome>,
) {
    presenter
        .send_json(open_sale(room, json!({"strategy": strategy, "stock": 100, "bots": bots, "duration_ms": 2000, "app_servers": 4})))
        .await;
    wait_opened(presenter).await;
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    presenter
        .send_json(json!({"type": "chaos", "room": room.code, "presenter_token": room.token, "action": action.as_str()}))
        .await;
    let mut applied = None;
    let mut outcomes = Vec::new();
    loop {
        match next_room_frame(presenter, 40).await {
            ServerMessage::ChaosApplied(c) => applied = Some(c),
            ServerMessage::Outcomes { outcomes: o, .. } => outcomes.extend(o),
            ServerMessage::SaleClosed(s) => {
                let applied = match applied {
                    Some(a) => a,
                    None => {
                        wait_for(presenter, 10, |m| match m {
                            ServerMessage::ChaosApplied(c) => Some(c.clone()),
                            _ => None,
                        })
                        .await
                    }
                };
                return (applied, s, outcomes);
            }
            ServerMessage::Error(e) => panic!("{action:?} refused: {e:?}"),
            _ => {}
        }
    }
}

/// After a sale failed closed, the room opens a small sale on a fresh Redis and it ends with a
/// summary.
async fn sells_again(presenter: &mut Client, room: &Room) {
    presenter
        .send_json(open_sale(
            room,
            json!({"strategy": "lua", "stock": 3, "duration_ms": 1000}),
        ))
        .await;
    let seen = until_closed(presenter, 20).await;
    let Some(ServerMessage::SaleClosed(after)) = seen.last() else {
        unreachable!()
    };
    assert!(after.summary.is_some(), "the room recovered: {after:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn chaos_buttons_do_what_they_say() {
    let (server, _redis) = owning_server().await;
    let mut presenter = server.client().await;
    let room = create(&mut presenter).await;

    // Flushed scripts: lua reloads, nobody fails.
    let (c, closed, outcomes) =
        press_during_sale(&mut presenter, &room, "lua", 300, ChaosAction::ScriptFlush).await;
    assert!(c.detail.contains("SCRIPT FLUSH"), "{}", c.detail);
    assert!(
        c.at_us.is_some_and(|t| t > 0),
        "placed on the sale's timeline"
    );
    assert!(outcomes.iter().all(answered), "no buyer fails");
    assert!(closed.reloads >= 1, "the reload is counted: {closed:?}");
    assert_eq!(closed.summary.unwrap().units_sold, 100);

    // One app server killed: its buyers fail, the others go on.
    let (c, closed, outcomes) = press_during_sale(
        &mut presenter,
        &room,
        "lua",
        300,
        ChaosAction::KillAppServer,
    )
    .await;
    assert!(c.detail.contains("CLIENT KILL"), "{}", c.detail);
    assert!(
        outcomes.iter().any(|o| o.app_server == 0 && !answered(o)),
        "app server 0's buyers fail"
    );
    assert!(outcomes.iter().filter(|o| o.app_server != 0).all(answered));
    assert!(
        closed.summary.is_some(),
        "the sale still ends with a summary"
    );

    // A one-second pause: latency, no loss.
    let (c, closed, outcomes) =
        press_during_sale(&mut presenter, &room, "lua", 300, ChaosAction::PauseRedis).await;
    assert!(c.detail.contains("CLIENT PAUSE"), "{}", c.detail);
    assert!(outcomes.iter().all(answered));
    let slowest = outcomes.iter().map(|o| o.latency_us).max().unwrap();
    assert!(
        slowest >= 500_000,
        "the pause shows as latency: {slowest} µs"
    );
    assert!(closed.summary.is_some());

    // A slow script: the health check's PING waits behind it.
    let (c, _, _) =
        press_during_sale(&mut presenter, &room, "lua", 100, ChaosAction::SlowScript).await;
    let waited: u64 = c
        .detail
        .split("waited ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(
        waited >= 300,
        "a PING waited {waited} ms behind the script: {}",
        c.detail
    );

    // A restart: the sale fails closed with a reason, and the room goes on.
    let (c, closed, _) =
        press_during_sale(&mut presenter, &room, "lua", 300, ChaosAction::RestartRedis).await;
    assert!(c.detail.contains("started again"), "{}", c.detail);
    assert!(
        closed.summary.is_none() && closed.error.is_some(),
        "{closed:?}"
    );
    sells_again(&mut presenter, &room).await;
}

/// The two busy buttons (issue 18): a read-only script past the threshold is killed and the
/// sale goes on, its buyers answered `BUSY` meanwhile; a script that wrote is refused the
/// kill, and `SHUTDOWN NOSAVE` ends the sale's Redis, so the sale fails closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_busy_script_is_killed_and_an_unkillable_one_ends_the_sales_redis() {
    let (server, _redis) = owning_server().await;
    let mut presenter = server.client().await;
    let room = create(&mut presenter).await;

    let (c, closed, outcomes) =
        press_during_sale(&mut presenter, &room, "lua", 300, ChaosAction::BusyScript).await;
    assert!(c.detail.contains("SCRIPT KILL at"), "{}", c.detail);
    assert!(c.detail.contains("answered BUSY"), "{}", c.detail);
    let busy = outcomes
        .iter()
        .filter(|o| o.error.as_deref().is_some_and(|e| e.contains("BUSY")))
        .count();
    let errors: Vec<&str> = outcomes.iter().filter_map(|o| o.error.as_deref()).collect();
    assert!(
        busy > 0,
        "buyers in the stall are answered BUSY: {} outcomes, errors {errors:?}, {}",
        outcomes.len(),
        c.detail
    );
    // Placed on the sale's timeline: buyers who came after the kill are served again.
    let killed_at = c.at_us.expect("placed on the sale's timeline") + c.took_us;
    assert!(
        outcomes
            .iter()
            .any(|o| answered(o) && o.start_us > killed_at),
        "the sale goes on after the kill at {killed_at} µs"
    );
    assert!(closed.summary.is_some(), "{closed:?}");

    let (c, closed, _) = press_during_sale(
        &mut presenter,
        &room,
        "lua",
        300,
        ChaosAction::UnkillableScript,
    )
    .await;
    assert!(c.detail.contains("UNKILLABLE"), "{}", c.detail);
    assert!(c.detail.contains("SHUTDOWN NOSAVE"), "{}", c.detail);
    assert!(
        closed.summary.is_none() && closed.error.is_some(),
        "{closed:?}"
    );
    sells_again(&mut presenter, &room).await;
}

/// The page draws its chaos buttons from `hello.chaos`: every button, in order, with the
/// words the page used to hold itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hello_describes_every_chaos_button() {
    let (server, _redis) = owning_server().await;
    let hello = server.client().await.hello().await;
    assert!(hello.outage_allowed);
    let buttons: Vec<(ChaosAction, &str, bool)> = hello
        .chaos
        .iter()
        .map(|c| (c.action, c.label.as_str(), c.needs_own_redis))
        .collect();
    assert_eq!(
        buttons,
        [
            (ChaosAction::ScriptFlush, "Flush scripts", true),
            (ChaosAction::KillAppServer, "Kill app server 0", true),
            (ChaosAction::PauseRedis, "Pause Redis 1 s", true),
            (ChaosAction::RestartRedis, "Restart Redis", true),
            (ChaosAction::SlowScript, "Slow script", true),
            (ChaosAction::BusyScript, "Busy script", true),
            (ChaosAction::UnkillableScript, "Unkillable script", true),
        ]
    );
    assert!(hello.chaos.iter().all(|c| !c.description.is_empty()));
    // A server that does not own its Redis lists the same buttons and says it may not use
    // them (the page shows none).
    let redis = TestRedis::start();
    let other = TestServer::start(redis.store.clone(), 4).await;
    let hello_there = other.client().await.hello().await;
    assert!(!hello_there.outage_allowed);
    assert_eq!(hello_there.chaos, hello.chaos);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_is_refused_on_a_redis_the_server_does_not_own() {
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 4).await;
    let mut presenter = server.client().await;
    let room = create(&mut presenter).await;
    presenter
        .send_json(json!({"type": "chaos", "room": room.code, "presenter_token": room.token, "action": "pause_redis"}))
        .await;
    assert_eq!(
        expect_error(&mut presenter).await.code,
        ErrorCode::ChaosNotAllowed
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_slow_script_keeps_its_contract() {
    let redis = TestRedis::start();
    let mut conn = redis.conn().await;
    let spent = oversold::store::rooms::slow_script(&mut conn, 50)
        .await
        .unwrap();
    assert!((50_000..1_000_000).contains(&spent), "{spent} µs");
    assert!(
        oversold::store::rooms::slow_script(&mut conn, 1001)
            .await
            .is_err(),
        "capped at 1000 ms"
    );
    let mut raw = redis.raw().await;
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(keys.is_empty(), "it writes nothing");
}

/// Every chaos press is answered, with no sale open too: before, `restart_redis` in a room
/// without a sale was never answered (the room's reader died with the old Redis).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_chaos_button_is_answered_without_a_sale() {
    let (server, _redis) = owning_server().await;
    let mut presenter = server.client().await;
    let room = create(&mut presenter).await;
    for action in ChaosAction::ALL {
        presenter
            .send_json(json!({"type": "chaos", "room": room.code, "presenter_token": room.token, "action": action.as_str()}))
            .await;
        let applied = wait_for(&mut presenter, 15, |m| match m {
            ServerMessage::ChaosApplied(c) => Some(c.clone()),
            ServerMessage::Error(e) => panic!("{action:?} refused: {e:?}"),
            _ => None,
        })
        .await;
        assert_eq!(applied.action, action, "{applied:?}");
        assert_eq!(applied.sale_id, None);
    }
}

/// The reproduction of issue 16's first finding: chaos pressed in one room (pause, flush,
/// restart) leaves another room's sale, a visitor's run and the shared Redis untouched,
/// because it acts on the pressing room's sale's own `redis-server` only.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn chaos_in_one_room_leaves_other_rooms_and_runs_untouched() {
    let (server, redis) = owning_server().await;
    let url = redis.lock().unwrap().url();
    let mut shared = redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let info = |s: String| {
        s.lines()
            .find_map(|l| l.strip_prefix("run_id:"))
            .map(str::to_string)
    };
    let server_id = |c: &mut redis::aio::MultiplexedConnection| {
        let mut c = c.clone();
        async move {
            let s: String = redis::cmd("INFO")
                .arg("server")
                .query_async(&mut c)
                .await
                .unwrap();
            info(s).unwrap()
        }
    };
    let before = server_id(&mut shared).await;
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg("return 1")
        .query_async(&mut shared)
        .await
        .unwrap();

    let mut a = server.client().await;
    let room_a = create(&mut a).await;
    let mut b = server.client().await;
    let room_b = create(&mut b).await;
    a.send_json(open_sale(
        &room_a,
        json!({"strategy": "lua", "stock": 60, "bots": 300, "duration_ms": 6000, "app_servers": 2}),
    ))
    .await;
    wait_opened(&mut a).await;
    let mut visitor = server.client().await;
    visitor.hello().await;
    visitor
        .send_json(json!({"type": "start_run", "config": {"strategy": "lua", "stock": 20, "buyers": 200, "arrival_spread_ms": 3000}}))
        .await;
    b.send_json(open_sale(
        &room_b,
        json!({"strategy": "lua", "stock": 10, "bots": 50, "duration_ms": 4000, "app_servers": 2}),
    ))
    .await;
    wait_opened(&mut b).await;
    for action in [
        ChaosAction::PauseRedis,
        ChaosAction::ScriptFlush,
        ChaosAction::RestartRedis,
    ] {
        b.send_json(json!({"type": "chaos", "room": room_b.code, "presenter_token": room_b.token, "action": action.as_str()}))
            .await;
        let c = wait_for(&mut b, 15, |m| match m {
            ServerMessage::ChaosApplied(c) => Some(c.clone()),
            ServerMessage::Error(e) => panic!("{action:?} refused: {e:?}"),
            _ => None,
        })
        .await;
        assert_eq!(c.action, action);
        assert!(!c.detail.contains("failed"), "{}", c.detail);
    }

    // Room A's sale: every buyer answered, no pause in its latencies, all stock sold.
    let mut outcomes = Vec::new();
    let closed = loop {
        match next_room_frame(&mut a, 30).await {
            ServerMessage::Outcomes { outcomes: o, .. } => outcomes.extend(o),
            ServerMessage::SaleClosed(s) => break s,
            ServerMessage::ChaosApplied(c) => panic!("room B's chaos reached room A: {c:?}"),
            _ => {}
        }
    };
    assert!(closed.error.is_none(), "{closed:?}");
    assert_eq!(closed.summary.unwrap().units_sold, 60);
    assert!(
        outcomes.iter().all(answered),
        "every buyer of room A answered"
    );
    let slowest = outcomes.iter().map(|o| o.latency_us).max().unwrap();
    assert!(
        slowest < 900_000,
        "room A felt room B's pause: {slowest} µs"
    );
    // The visitor's run finished normally and sold exactly its stock.
    let run = visitor.collect_run().await;
    let summary = run.summary.expect("the visitor's run finished");
    assert_eq!(summary.units_sold, 20);
    assert!(run.outcomes.iter().all(answered));
    // The shared Redis was never restarted, and its script cache never flushed.
    assert_eq!(
        server_id(&mut shared).await,
        before,
        "shared Redis restarted"
    );
    let exists: Vec<i64> = redis::cmd("SCRIPT")
        .arg("EXISTS")
        .arg(&sha)
        .query_async(&mut shared)
        .await
        .unwrap();
    assert_eq!(exists, [1], "the shared script cache was flushed");
}
