//! One server: create, join, open, buy, close; results to the right phones; spectators
//! read-only; the presenter token enforced; expiry.

use oversold::rooms::Rooms;
use oversold::state::AppState;
use oversold_protocol::{ErrorCode, OutcomeResult, ServerMessage};
use serde_json::json;

use super::*;
use crate::common::{TestRedis, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sale_runs_and_each_phone_gets_its_own_result() {
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 4).await;
    let mut presenter = server.client().await;
    let room = create(&mut presenter).await;
    assert_eq!(room.code.len(), 5);
    assert!(
        room.join_url.ends_with(&format!("/r/{}", room.code)),
        "{}",
        room.join_url
    );

    let mut phones = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..3 {
        let mut p = server.client().await;
        ids.push(join(&mut p, &room.code, "phone").await);
        phones.push(p);
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3, "each phone has its own id");
    let mut spectator = server.client().await;
    join(&mut spectator, &room.code, "spectator").await;

    presenter
        .send_json(open_sale(
            &room,
            json!({"strategy": "naive", "stock": 2, "duration_ms": 60000}),
        ))
        .await;
    let sale_id = wait_opened(&mut presenter).await;
    for p in phones.iter_mut() {
        assert_eq!(wait_opened(p).await, sale_id);
    }
    assert_eq!(wait_opened(&mut spectator).await, sale_id);
    // Spectators are read-only (asked before any outcome can reach its socket).
    spectator
        .send_json(json!({"type": "buy", "room": room.code, "request_id": "x"}))
        .await;
    assert_eq!(
        expect_error(&mut spectator).await.code,
        ErrorCode::NotInRoom
    );

    // One click at a time: two units, three phones, so exactly one is refused.
    let mut results = Vec::new();
    for (i, p) in phones.iter_mut().enumerate() {
        p.send_json(json!({"type": "buy", "room": room.code, "request_id": format!("click-{i}")}))
            .await;
        let r = wait_result(p).await;
        assert_eq!(
            r.request_id,
            format!("click-{i}"),
            "a phone gets its own result only"
        );
        results.push(r);
    }
    let reserved: Vec<_> = results
        .iter()
        .filter(|r| r.result == OutcomeResult::Reserved)
        .collect();
    assert_eq!(reserved.len(), 2);
    let mut units: Vec<i64> = reserved.iter().map(|r| r.unit.unwrap()).collect();
    units.sort();
    assert_eq!(units, vec![1, 2], "units are numbered down from the stock");
    assert_eq!(results[2].result, OutcomeResult::SoldOut);

    // A second click from the same phone is refused.
    phones[0]
        .send_json(json!({"type": "buy", "room": room.code, "request_id": "again"}))
        .await;
    assert_eq!(
        expect_error(&mut phones[0]).await.code,
        ErrorCode::AlreadyBought
    );

    presenter
        .send_json(json!({"type": "close_sale", "room": room.code, "presenter_token": room.token}))
        .await;
    for c in [&mut presenter, &mut spectator] {
        let seen = until_closed(c, 15).await;
        let Some(ServerMessage::SaleClosed(closed)) = seen.last() else {
            unreachable!()
        };
        let summary = closed.summary.as_ref().expect("a summary");
        assert_eq!(
            (summary.buyers, summary.units_sold, summary.final_stock),
            (3, 2, 0)
        );
        let outcomes: usize = seen
            .iter()
            .map(|m| match m {
                ServerMessage::Outcomes { outcomes, .. } => outcomes.len(),
                _ => 0,
            })
            .sum();
        assert_eq!(outcomes, 3, "every screen sees every click's outcome once");
        assert!(
            !seen
                .iter()
                .any(|m| matches!(m, ServerMessage::BuyResult(_))),
            "buy results go to their phone only"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn presenter_actions_need_the_token_and_a_refusal_changes_nothing() {
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 4).await;
    let mut presenter = server.client().await;
    let room = create(&mut presenter).await;
    let mut phone = server.client().await;
    join(&mut phone, &room.code, "phone").await;
    let forged = Room {
        code: room.code.clone(),
        token: "0".repeat(32),
        join_url: String::new(),
    };
    let attempts = [
        open_sale(&forged, json!({"strategy": "naive", "stock": 5})),
        json!({"type": "close_sale", "room": room.code, "presenter_token": forged.token}),
        json!({"type": "chaos", "room": room.code, "presenter_token": forged.token, "action": "script_flush"}),
        json!({"type": "join_room", "room": room.code, "as": "presenter", "presenter_token": "nope"}),
    ];
    for attempt in attempts {
        phone.send_json(attempt.clone()).await;
        let e = expect_error(&mut phone).await;
        assert_eq!(e.code, ErrorCode::NotPresenter, "{attempt}");
    }
    // Nothing opened: a click finds no sale, and the presenter's own open still works.
    phone
        .send_json(json!({"type": "buy", "room": room.code, "request_id": "r1"}))
        .await;
    assert_eq!(expect_error(&mut phone).await.code, ErrorCode::SaleState);
    let mut raw = redis.raw().await;
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*sale*")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(
        keys.is_empty(),
        "no sale key after refused actions: {keys:?}"
    );
    // The presenter can come back on another socket with the token.
    let mut again = server.client().await;
    again.hello().await;
    again
        .send_json(json!({"type": "join_room", "room": room.code, "as": "presenter", "presenter_token": room.token}))
        .await;
    assert!(matches!(
        next_room_frame(&mut again, 5).await,
        ServerMessage::RoomJoined { .. }
    ));
    again
        .send_json(open_sale(&room, json!({"strategy": "lua", "stock": 5})))
        .await;
    wait_opened(&mut phone).await;
    // Bad input is bounded and named.
    phone
        .send_json(json!({"type": "buy", "room": room.code, "request_id": "x".repeat(65)}))
        .await;
    assert_eq!(expect_error(&mut phone).await.code, ErrorCode::OutOfRange);
    phone
        .send_json(json!({"type": "join_room", "room": "lower"}))
        .await;
    assert_eq!(expect_error(&mut phone).await.code, ErrorCode::OutOfRange);
    phone
        .send_json(json!({"type": "join_room", "room": "ZZZZZ"}))
        .await;
    assert_eq!(expect_error(&mut phone).await.code, ErrorCode::NoSuchRoom);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_room_nobody_uses_expires() {
    let redis = TestRedis::start();
    let state = AppState::new(
        redis.backends(),
        tokio::sync::watch::channel(oversold::health::Health::up()).1,
        "/nonexistent".into(),
        4,
    )
    .with_rooms(Rooms::default().with_ttl(std::time::Duration::from_secs(1)));
    let server = TestServer::serve(state).await;
    let mut presenter = server.client().await;
    let room = create(&mut presenter).await;
    drop(presenter);
    tokio::time::sleep(std::time::Duration::from_millis(2_500)).await;
    let mut late = server.client().await;
    late.hello().await;
    late.send_json(json!({"type": "join_room", "room": room.code}))
        .await;
    assert_eq!(expect_error(&mut late).await.code, ErrorCode::NoSuchRoom);
    let mut raw = redis.raw().await;
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("oversold:{room-*")
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(keys.is_empty(), "every key of the room expired: {keys:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phone_that_comes_back_is_the_same_buyer() {
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 4).await;
    let mut presenter = server.client().await;
    let room = create(&mut presenter).await;
    let mut phone = server.client().await;
    phone.hello().await;
    phone
        .send_json(json!({"type": "join_room", "room": room.code}))
        .await;
    let (id, token) = match next_room_frame(&mut phone, 5).await {
        ServerMessage::RoomJoined {
            participant_id,
            seat_token: Some(token),
            ..
        } => (participant_id, token),
        other => panic!("expected room_joined with a seat token, got {other:?}"),
    };
    presenter
        .send_json(open_sale(&room, json!({"strategy": "lua", "stock": 5})))
        .await;
    wait_opened(&mut phone).await;
    phone
        .send_json(json!({"type": "buy", "room": room.code, "request_id": "first"}))
        .await;
    assert_eq!(
        wait_result(&mut phone).await.result,
        OutcomeResult::Reserved
    );
    drop(phone);

    // A reload: a new socket, the same id and token. Still one buy per sale.
    let mut again = server.client().await;
    again.hello().await;
    again
        .send_json(json!({"type": "join_room", "room": room.code, "participant_id": id, "seat_token": token}))
        .await;
    assert!(matches!(
        next_room_frame(&mut again, 5).await,
        ServerMessage::RoomJoined { participant_id, .. } if participant_id == id
    ));
    again
        .send_json(json!({"type": "buy", "room": room.code, "request_id": "second"}))
        .await;
    // The refusal, and the replay of this phone's own earlier result (after a reload it
    // still shows), in either order: the replay runs beside the socket's answers.
    let (mut refused, mut replayed_mine) = (None, false);
    while refused.is_none() || !replayed_mine {
        match next_room_frame(&mut again, 10).await {
            ServerMessage::Error(e) => refused = Some(e.code),
            ServerMessage::BuyResult(r) if r.request_id == "first" => replayed_mine = true,
            ServerMessage::BuyResult(r) => panic!("bought twice: {r:?}"),
            _ => {}
        }
    }
    assert_eq!(refused, Some(ErrorCode::AlreadyBought));

    // Someone else's id without its token is not that phone.
    let mut other = server.client().await;
    other.hello().await;
    other
        .send_json(json!({"type": "join_room", "room": room.code, "participant_id": id, "seat_token": "0".repeat(32)}))
        .await;
    assert!(matches!(
        next_room_frame(&mut other, 5).await,
        ServerMessage::RoomJoined { participant_id, .. } if participant_id != id
    ));
}

/// The sale's defaults (no app work given): the naive sale must oversell every time, as it
/// must on a stage; 200 bots over 750 ms with 500 ms of app work overlap by the dozen.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn with_bots_a_naive_sale_oversells_and_a_lua_sale_does_not() {
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 4).await;
    let mut presenter = server.client().await;
    let room = create(&mut presenter).await;
    let mut oversold = Vec::new();
    for strategy in ["naive", "lua"] {
        let config = json!({"strategy": strategy, "stock": 10, "bots": 200, "duration_ms": 1500});
        presenter.send_json(open_sale(&room, config)).await;
        let seen = until_closed(&mut presenter, 30).await;
        let Some(ServerMessage::SaleClosed(closed)) = seen.last() else {
            unreachable!()
        };
        let summary = closed.summary.as_ref().expect("a summary");
        assert_eq!(summary.buyers, 200);
        oversold.push(summary.oversold_units);
    }
    assert!(oversold[0] > 0, "naive oversells: {oversold:?}");
    assert_eq!(oversold[1], 0, "lua never does");
}

/// A projector's screen (`/ws?page=spectator`, the lab's page at `/r/CODE?as=spectator`)
/// draws the sale's counters, grid and tape from the very frames the presenter's page draws
/// them from: `sale_opened` (the run's config), every batch of `outcomes` and `sale_closed`
/// (the summary), the same frames in the same order, batched alike (a few dozen frames for
/// hundreds of buyers, never a frame per buyer). A screen that joins after the close gets the
/// same again from the stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_spectator_screen_gets_the_presenters_sale_frame_for_frame() {
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 4).await;
    let mut presenter = server.client().await;
    let room = create(&mut presenter).await;
    let mut screen = server.client_at("/ws?page=spectator").await;
    join(&mut screen, &room.code, "spectator").await;
    let mut phone = server.client().await;
    join(&mut phone, &room.code, "phone").await;

    let config = json!({"strategy": "naive", "stock": 20, "bots": 300, "duration_ms": 2000});
    presenter.send_json(open_sale(&room, config)).await;
    wait_opened(&mut phone).await;
    phone
        .send_json(json!({"type": "buy", "room": room.code, "request_id": "tap"}))
        .await;
    wait_result(&mut phone).await;

    // The frames a screen draws a sale from (head counts and chaos aside).
    let sale_frames = |seen: Vec<ServerMessage>| -> Vec<ServerMessage> {
        seen.into_iter()
            .filter(|m| {
                matches!(
                    m,
                    ServerMessage::SaleOpened(_)
                        | ServerMessage::Outcomes { .. }
                        | ServerMessage::SaleClosed(_)
                )
            })
            .collect()
    };
    let presenters = sale_frames(until_closed(&mut presenter, 30).await);
    let screens = sale_frames(until_closed(&mut screen, 30).await);
    let mut late = server.client_at("/ws?page=spectator").await;
    join(&mut late, &room.code, "spectator").await;
    let lates = sale_frames(until_closed(&mut late, 30).await);

    let Some(ServerMessage::SaleClosed(closed)) = presenters.last() else {
        panic!("the presenter's last sale frame is sale_closed")
    };
    let summary = closed.summary.as_ref().expect("a summary");
    assert_eq!(summary.buyers, 301, "300 bots and the phone");
    assert!(
        matches!(presenters.first(), Some(ServerMessage::SaleOpened(_))),
        "from the opening on"
    );
    let batches = presenters.len() - 2;
    let outcomes: usize = presenters
        .iter()
        .map(|m| match m {
            ServerMessage::Outcomes { outcomes, .. } => outcomes.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(outcomes, 301, "every buyer's outcome, once");
    assert!(
        batches < outcomes / 3,
        "outcomes go in batches: {batches} frames for {outcomes} buyers"
    );
    assert!(
        screens == presenters,
        "the screen got the presenter's frames"
    );
    assert!(lates == presenters, "a late screen gets them too");
}
