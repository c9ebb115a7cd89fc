//! Issue 16's reproductions against rooms, through the protocol: a phone is a seat (a
//! rejoining socket buys once), a repeated request buys once, sales take their address's
//! share of runs, and the room budgets are per address across every process.

use oversold::rooms::Rooms;
use oversold::state::AppState;
use oversold_protocol::{ErrorCode, OutcomeResult, ServerMessage};
use serde_json::json;

use super::*;
use crate::common::{Client, TestRedis, TestServer};

async fn server_with(redis: &TestRedis, rooms: Rooms) -> TestServer {
    let state = AppState::new(
        redis.backends(),
        tokio::sync::watch::channel(oversold::health::Health::up()).1,
        "/nonexistent".into(),
        4,
    )
    .with_rooms(rooms);
    TestServer::serve(state).await
}

/// A room, one phone in it, and an open sale of `stock` where a phone may buy again.
async fn repeat_sale_with_a_phone(
    server: &TestServer,
    stock: u32,
    duration_ms: u32,
) -> (Client, Room, Client) {
    let mut presenter = server.client().await;
    let room = create(&mut presenter).await;
    let mut phone = server.client().await;
    join(&mut phone, &room.code, "phone").await;
    presenter
        .send_json(open_sale(
            &room,
            json!({"strategy": "lua", "stock": stock, "duration_ms": duration_ms, "allow_repeat": true}),
        ))
        .await;
    wait_opened(&mut presenter).await;
    (presenter, room, phone)
}

/// Units this phone got, from its `buy_result`s until `sale_closed`.
async fn units_until_closed(c: &mut crate::common::Client) -> usize {
    until_closed(c, 30)
        .await
        .iter()
        .filter(|m| matches!(m, ServerMessage::BuyResult(r) if r.result == OutcomeResult::Reserved))
        .count()
}

/// Before: a socket that sends `join_room` then `buy` every 250 ms got 15 units of 15
/// tries in a one-buy sale. Now a rejoin on the same socket is the same seat.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_that_rejoins_is_one_seat_and_buys_once() {
    let redis = TestRedis::start();
    let server = server_with(&redis, Rooms::default()).await;
    let mut presenter = server.client().await;
    let room = create(&mut presenter).await;
    presenter
        .send_json(open_sale(
            &room,
            json!({"strategy": "lua", "stock": 50, "duration_ms": 6000}),
        ))
        .await;
    wait_opened(&mut presenter).await;
    let mut phone = server.client().await;
    phone.hello().await;
    let mut ids = std::collections::BTreeSet::new();
    for i in 0..15 {
        phone
            .send_json(json!({"type": "join_room", "room": room.code, "as": "phone"}))
            .await;
        let id = wait_for(&mut phone, 5, |m| match m {
            ServerMessage::RoomJoined { participant_id, .. } => Some(*participant_id),
            _ => None,
        })
        .await;
        ids.insert(id);
        phone
            .send_json(json!({"type": "buy", "room": room.code, "request_id": format!("r{i}")}))
            .await;
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert_eq!(ids.len(), 1, "every rejoin kept the seat: {ids:?}");
    presenter
        .send_json(json!({"type": "close_sale", "room": room.code, "presenter_token": room.token}))
        .await;
    let units = units_until_closed(&mut phone).await;
    assert_eq!(units, 1, "one seat, one buy");
}

/// New sockets without a seat token take new seats only within their address's budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_seats_from_one_address_are_budgeted() {
    let redis = TestRedis::start();
    let server = server_with(&redis, Rooms::default().with_seats_per_address(3)).await;
    let mut presenter = server.client().await;
    let room = create(&mut presenter).await;
    let mut seated = Vec::new();
    for _ in 0..3 {
        let mut c = server.client().await;
        join(&mut c, &room.code, "phone").await;
        seated.push(c);
    }
    let mut fourth = server.client().await;
    fourth.hello().await;
    fourth
        .send_json(json!({"type": "join_room", "room": room.code, "as": "phone"}))
        .await;
    let refused = expect_error(&mut fourth).await;
    assert_eq!(refused.code, ErrorCode::RateLimited, "{refused:?}");
    assert!(refused.message.contains("seat"), "{}", refused.message);
    // A spectator is no seat: it still gets in.
    fourth
        .send_json(json!({"type": "join_room", "room": room.code, "as": "spectator"}))
        .await;
    assert!(matches!(
        next_room_frame(&mut fourth, 5).await,
        ServerMessage::RoomJoined { .. }
    ));
}

/// Before: a repeated `request_id` bought twice in a repeat sale. Now the repeat gets the
/// first answer again (the same unit) and nothing more is sold.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_request_is_answered_from_its_first_answer() {
    let redis = TestRedis::start();
    let server = server_with(&redis, Rooms::default()).await;
    let (mut presenter, room, mut phone) = repeat_sale_with_a_phone(&server, 10, 4000).await;
    let buy = json!({"type": "buy", "room": room.code, "request_id": "same-click"});
    phone.send_json(buy.clone()).await;
    let first = wait_result(&mut phone).await;
    assert_eq!(first.result, OutcomeResult::Reserved);
    for _ in 0..2 {
        tokio::time::sleep(std::time::Duration::from_millis(600)).await;
        phone.send_json(buy.clone()).await;
        let again = wait_result(&mut phone).await;
        assert_eq!(
            (again.request_id.as_str(), again.unit),
            ("same-click", first.unit)
        );
    }
    presenter
        .send_json(json!({"type": "close_sale", "room": room.code, "presenter_token": room.token}))
        .await;
    let seen = until_closed(&mut presenter, 20).await;
    let Some(ServerMessage::SaleClosed(closed)) = seen.last() else {
        unreachable!()
    };
    assert_eq!(closed.summary.as_ref().unwrap().units_sold, 1, "{closed:?}");
}

/// Before: one address opened seven 300 s sales and held every run slot. Now a sale takes
/// a run of its address's share (2 by default), like a run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sales_take_their_addresss_share_of_runs() {
    let redis = TestRedis::start();
    let server = server_with(&redis, Rooms::default()).await;
    let mut presenters = Vec::new();
    for _ in 0..3 {
        let mut p = server.client().await;
        let room = create(&mut p).await;
        p.send_json(open_sale(
            &room,
            json!({"strategy": "lua", "stock": 5, "duration_ms": 300000}),
        ))
        .await;
        presenters.push((p, room));
    }
    for (p, _) in presenters.iter_mut().take(2) {
        wait_opened(p).await;
    }
    let (third, _) = presenters.last_mut().unwrap();
    let refused = expect_error(third).await;
    assert_eq!(refused.code, ErrorCode::Busy, "{refused:?}");
    // A run from the same address is refused too: the share is one share.
    let mut visitor = server.client().await;
    visitor.hello().await;
    visitor
        .send_json(json!({"type": "start_run", "config": {"strategy": "lua"}}))
        .await;
    assert_eq!(visitor.expect_error().await.code, ErrorCode::Busy);
    for (p, room) in presenters.iter_mut().take(2) {
        p.send_json(
            json!({"type": "close_sale", "room": room.code, "presenter_token": room.token}),
        )
        .await;
    }
}

/// Before: the room-creation limit was per process. Now two processes on one Redis share
/// one budget per address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_room_creation_budget_is_shared_by_every_process() {
    let redis = TestRedis::start();
    let one = server_with(&redis, Rooms::default()).await;
    let two = server_with(&redis, Rooms::default()).await;
    let mut made = 0;
    for i in 0..10 {
        let server = if i % 2 == 0 { &one } else { &two };
        let mut p = server.client().await;
        create(&mut p).await;
        made += 1;
    }
    assert_eq!(made, 10);
    let mut p = two.client().await;
    p.hello().await;
    p.send_json(json!({"type": "create_room"})).await;
    let refused = expect_error(&mut p).await;
    assert_eq!(refused.code, ErrorCode::RateLimited, "{refused:?}");
    assert!(
        refused.message.contains("try again in"),
        "{}",
        refused.message
    );
}

/// One address's clicks in a sale are capped (8 per seat it may take), so a flood from one
/// address cannot use up a sale's clicks for everyone else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_clicks_only_its_share_of_a_sale() {
    let redis = TestRedis::start();
    let server = server_with(&redis, Rooms::default().with_seats_per_address(1)).await;
    let (mut presenter, room, mut phone) = repeat_sale_with_a_phone(&server, 100, 10000).await;
    let (mut bought, mut refused) = (0, Vec::new());
    for i in 0..10 {
        phone
            .send_json(json!({"type": "buy", "room": room.code, "request_id": format!("c{i}")}))
            .await;
        let answer = wait_for(&mut phone, 10, |m| match m {
            ServerMessage::BuyResult(r) => Some(Ok(r.result)),
            ServerMessage::Error(e) => Some(Err(e.clone())),
            _ => None,
        })
        .await;
        match answer {
            Ok(OutcomeResult::Reserved) => bought += 1,
            Ok(other) => panic!("click {i}: {other:?}"),
            Err(e) => refused.push(e),
        }
        tokio::time::sleep(std::time::Duration::from_millis(520)).await;
    }
    assert_eq!(bought, 8, "the address's share: {refused:?}");
    assert!(
        refused
            .iter()
            .all(|e| e.code == ErrorCode::RateLimited && e.message.contains("this address")),
        "{refused:?}"
    );
    presenter
        .send_json(json!({"type": "close_sale", "room": room.code, "presenter_token": room.token}))
        .await;
}

/// Before: a screen that joined after a big sale got the first 1,000 stream entries of it
/// (216 of 600 outcomes) and no `sale_closed`. Now the replay pages through all of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_late_screen_sees_the_whole_sale_and_its_close() {
    let redis = TestRedis::start();
    let state = AppState::new(
        redis.backends(),
        tokio::sync::watch::channel(oversold::health::Health::up()).1,
        "/nonexistent".into(),
        4,
    )
    .with_client_caps(
        oversold::client::ClientCaps {
            sockets: 300,
            runs: 4,
        },
        None,
    )
    .with_rooms(Rooms::default().with_seats_per_address(300));
    let server = TestServer::serve(state).await;
    let mut presenter = server.client().await;
    let room = create(&mut presenter).await;
    let mut phones = Vec::new();
    for _ in 0..100 {
        let mut phone = server.client().await;
        join(&mut phone, &room.code, "phone").await;
        phones.push(phone);
    }
    presenter
        .send_json(open_sale(
            &room,
            json!({"strategy": "lua", "stock": 10000, "duration_ms": 20000, "allow_repeat": true}),
        ))
        .await;
    wait_opened(&mut presenter).await;
    // 6 clicks per phone (the bucket allows a burst of 3, then 2 a second): 600 clicks,
    // 600 results, each its own stream entry.
    for round in 0..6 {
        if round == 3 {
            tokio::time::sleep(std::time::Duration::from_millis(1_600)).await;
        }
        for (i, phone) in phones.iter_mut().enumerate() {
            phone
                .send_json(json!({"type": "buy", "room": room.code, "request_id": format!("p{i}r{round}")}))
                .await;
        }
    }
    let mut seen = 0;
    while seen < 600 {
        if let ServerMessage::Outcomes { outcomes, .. } = next_room_frame(&mut presenter, 20).await
        {
            seen += outcomes.len();
        }
    }
    presenter
        .send_json(json!({"type": "close_sale", "room": room.code, "presenter_token": room.token}))
        .await;
    until_closed(&mut presenter, 30).await;

    let mut late = server.client().await;
    join(&mut late, &room.code, "spectator").await;
    let replayed = until_closed(&mut late, 20).await;
    let outcomes: usize = replayed
        .iter()
        .map(|m| match m {
            ServerMessage::Outcomes { outcomes, .. } => outcomes.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(outcomes, 600, "every outcome of the sale, replayed");
    let Some(ServerMessage::SaleClosed(closed)) = replayed.last() else {
        unreachable!()
    };
    assert_eq!(closed.summary.as_ref().unwrap().units_sold, 600);
}

/// Before: at this process's room cap, `create_room` wrote the room's record and then
/// refused, leaving an orphan record (7 at the 64-room cap). Now the refusal leaves nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_room_refused_at_the_cap_leaves_no_record() {
    let redis = TestRedis::start();
    let mut rooms = Rooms::default();
    rooms.max_rooms = 1;
    let server = server_with(&redis, rooms).await;
    let mut first = server.client().await;
    create(&mut first).await;
    for _ in 0..3 {
        let mut more = server.client().await;
        more.hello().await;
        more.send_json(json!({"type": "create_room"})).await;
        assert_eq!(expect_error(&mut more).await.code, ErrorCode::Busy);
    }
    let mut raw = redis.raw().await;
    let records: Vec<String> = redis::cmd("KEYS")
        .arg("oversold:{room-*}:meta")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert_eq!(records.len(), 1, "{records:?}");
}
