//! Step-through mode over a real socket and a real Redis: each click sends one buyer's next
//! real command, the log is the exact order Redis ran them in, and the stock follows the key.

use serde_json::json;

use crate::common::{Client, TestRedis, TestServer};
use oversold_protocol::{
    ErrorCode, OutcomeResult, RedisCall, RedisCommand, RedisReply, ServerMessage, StepState,
};

async fn state(client: &mut Client) -> StepState {
    match client.next_not_status().await {
        ServerMessage::StepState(s) => {
            text_is_the_typed_fields(&s);
            s
        }
        other => panic!("expected step_state, got {other:?}"),
    }
}

/// Every text field of a step frame is its typed field, said (the page reads only the typed).
fn text_is_the_typed_fields(s: &StepState) {
    for c in &s.log {
        assert_eq!(c.command, c.call.to_string(), "{c:?}");
        assert_eq!(c.reply, c.answer.to_string(), "{c:?}");
    }
    for b in &s.buyers {
        assert_eq!(
            b.next,
            b.next_call.as_ref().map(ToString::to_string),
            "{b:?}"
        );
    }
}

async fn step(client: &mut Client, buyer: u32) -> StepState {
    client.send_json(json!({"type":"step","buyer":buyer})).await;
    state(client).await
}

fn next(s: &StepState, buyer: u32) -> Option<&str> {
    s.buyers[(buyer - 1) as usize].next.as_deref()
}

fn result(s: &StepState, buyer: u32) -> Option<OutcomeResult> {
    s.buyers[(buyer - 1) as usize]
        .outcome
        .as_ref()
        .map(|o| o.result)
}

async fn open(client: &mut Client, strategy: &str) -> StepState {
    client
        .send_json(json!({"type":"step_open","config":{"strategy":strategy}}))
        .await;
    state(client).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn naive_can_be_driven_into_an_oversell_by_hand() {
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 8).await;
    let mut client = server.client().await;
    client.hello().await;
    // The classic case by default: one unit, two buyers, both about to read.
    let s = open(&mut client, "naive").await;
    assert_eq!((s.config.race.stock, s.config.race.buyers), (1, 2));
    assert_eq!(
        (next(&s, 1), next(&s, 2)),
        (Some("GET stock"), Some("GET stock"))
    );
    assert_eq!(s.stock, Some(1));
    assert!(s.log.is_empty());
    // Both read before either writes...
    let s = step(&mut client, 1).await;
    assert_eq!(
        next(&s, 1),
        Some("DECRBY stock 1"),
        "it saw 1 and decided to buy"
    );
    let s = step(&mut client, 2).await;
    assert_eq!(next(&s, 2), Some("DECRBY stock 1"));
    // ...then both write: the second sells a unit that does not exist.
    let s = step(&mut client, 1).await;
    assert_eq!(result(&s, 1), Some(OutcomeResult::Reserved));
    assert_eq!(s.stock, Some(0));
    let s = step(&mut client, 2).await;
    assert_eq!(result(&s, 2), Some(OutcomeResult::Reserved));
    assert_eq!(s.stock, Some(-1), "the page's stock follows the real key");
    assert_eq!(s.units_sold, 2);
    let log: Vec<(u32, &str, &str)> = s
        .log
        .iter()
        .map(|c| (c.buyer, c.command.as_str(), c.reply.as_str()))
        .collect();
    assert_eq!(
        log,
        [
            (1, "GET stock", "1"),
            (2, "GET stock", "1"),
            (1, "DECRBY stock 1", "0"),
            (2, "DECRBY stock 1", "-1"),
        ]
    );
    // Typed: the read's bulk string is the number it spells, the write's reply an integer.
    assert_eq!(
        s.log[1].call,
        RedisCall::from(RedisCommand::new("GET").key("stock"))
    );
    assert_eq!(s.log[1].answer, RedisReply::Integer(1));
    assert_eq!(
        s.log[3].call,
        RedisCall::from(RedisCommand::new("DECRBY").key("stock").int(1))
    );
    assert_eq!(s.log[3].answer, RedisReply::Integer(-1));
    // A done buyer cannot move; an unknown one neither; the socket stays usable.
    client.send_json(json!({"type":"step","buyer":1})).await;
    assert_eq!(client.expect_error().await.code, ErrorCode::BadMessage);
    client.send_json(json!({"type":"step","buyer":7})).await;
    assert_eq!(client.expect_error().await.code, ErrorCode::OutOfRange);
    // Reset: fresh keys, buyers back at the start.
    client.send_json(json!({"type":"step_reset"})).await;
    let s = state(&mut client).await;
    assert_eq!((s.stock, s.log.len()), (Some(1), 0));
    assert_eq!(next(&s, 2), Some("GET stock"));
    // Close: the keys are gone.
    client.send_json(json!({"type":"step_close"})).await;
    assert!(matches!(
        client.next_not_status().await,
        ServerMessage::StepClosed { .. }
    ));
    assert!(
        crate::common::run_keys(&mut redis.raw().await)
            .await
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lua_cannot_be_split_and_watch_shows_the_empty_exec() {
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 8).await;
    let mut client = server.client().await;
    client.hello().await;
    // Lua: one command per buyer, check and write inside it.
    let s = open(&mut client, "lua").await;
    assert_eq!(next(&s, 1), Some("EVALSHA reserve.lua 1 stock 1"));
    let s = step(&mut client, 2).await;
    assert_eq!(result(&s, 2), Some(OutcomeResult::Reserved));
    assert_eq!(s.log[0].reply, "[1, 1, 0]");
    assert_eq!(
        s.log[0].answer,
        RedisReply::Array(vec![
            RedisReply::Integer(1),
            RedisReply::Integer(1),
            RedisReply::Integer(0)
        ]),
        "a script's result, typed"
    );
    let s = step(&mut client, 1).await;
    assert_eq!(result(&s, 1), Some(OutcomeResult::SoldOut));
    assert_eq!(s.log[1].reply, "[0, 0, 0]");
    assert_eq!(s.stock, Some(0));

    // WATCH: interleave both transactions; the second EXEC comes back empty and it retries.
    let mut s = open(&mut client, "watch").await;
    for buyer in [1, 2, 1, 2] {
        s = step(&mut client, buyer).await; // WATCH, WATCH, GET, GET
    }
    assert_eq!(next(&s, 1), Some("MULTI · DECRBY stock 1 · EXEC"));
    let s = step(&mut client, 1).await;
    assert_eq!(result(&s, 1), Some(OutcomeResult::Reserved));
    let s = step(&mut client, 2).await;
    assert_eq!(
        s.log.last().unwrap().reply,
        "nil",
        "EXEC discarded: the stock changed"
    );
    assert_eq!(s.log.last().unwrap().answer, RedisReply::Nil);
    assert_eq!(
        s.log.last().unwrap().call,
        RedisCall::Transaction(vec![RedisCommand::new("DECRBY").key("stock").int(1)])
    );
    assert_eq!(next(&s, 2), Some("WATCH stock"), "it starts over");
    let _ = step(&mut client, 2).await;
    let s = step(&mut client, 2).await; // GET -> 0: sold out, it unwatches
    assert_eq!(s.log.last().unwrap().reply, "0");
    assert_eq!(next(&s, 2), Some("UNWATCH"));
    let s = step(&mut client, 2).await;
    assert_eq!(result(&s, 2), Some(OutcomeResult::SoldOut));

    // The lock: the second SET NX fails while the first buyer holds it.
    let _ = open(&mut client, "lock").await;
    let s = step(&mut client, 1).await;
    assert_eq!(s.log[0].reply, "OK");
    let s = step(&mut client, 2).await;
    assert_eq!(s.log[1].reply, "nil", "the lock is taken");
    assert_eq!(s.log[1].answer, RedisReply::Nil);
    let set = s.log[1].call.single().expect("one command");
    assert!(set.name == "SET" && set.has_word("NX"), "{set:?}");
    assert!(
        next(&s, 2).unwrap().starts_with("SET lock"),
        "{:?}",
        next(&s, 2)
    );
}

/// A person thinks between clicks: the first buyer's lock must still be held when the second
/// buyer tries it seconds later (a lease timed for machines would have expired by then).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_taken_by_hand_outlives_a_slow_click() {
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 8).await;
    let mut client = server.client().await;
    client.hello().await;
    let _ = open(&mut client, "lock").await;
    let s = step(&mut client, 1).await;
    assert_eq!(s.log[0].reply, "OK");
    // Longer than the 2 s lease a machine-paced buyer gets.
    tokio::time::sleep(std::time::Duration::from_millis(2_500)).await;
    let s = step(&mut client, 2).await;
    assert_eq!(s.log[1].reply, "nil", "the lock is still the first buyer's");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_step_requests_are_refused_and_touch_nothing() {
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 8).await;
    let mut client = server.client().await;
    client.hello().await;
    client.send_json(json!({"type":"step","buyer":1})).await;
    assert_eq!(client.expect_error().await.code, ErrorCode::NoRunInProgress);
    client
        .send_json(json!({"type":"step_open","config":{"strategy":"naive","buyers":5}}))
        .await;
    assert_eq!(client.expect_error().await.code, ErrorCode::OutOfRange);
    client
        .send_json(json!({"type":"step_open","config":{"strategy":"nope"}}))
        .await;
    assert_eq!(client.expect_error().await.code, ErrorCode::UnknownStrategy);
    client.send_json(json!({"type":"step","buyer":"one"})).await;
    assert_eq!(client.expect_error().await.code, ErrorCode::BadMessage);
    client.send_json(json!({"type":"step"})).await;
    assert_eq!(client.expect_error().await.code, ErrorCode::MissingField);
    assert!(
        crate::common::run_keys(&mut redis.raw().await)
            .await
            .is_empty()
    );
    // Still usable.
    let s = open(&mut client, "naive").await;
    assert_eq!(s.buyers.len(), 2);
}

/// An unknown message, a malformed one and messages that belong elsewhere (a checkout's
/// `reconcile`, a `cancel_run`, a room's `buy`) each get their one error, and the open
/// step-through is still there: the next click moves its buyer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stray_messages_get_their_error_and_leave_the_step_through_open() {
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 8).await;
    let mut client = server.client().await;
    client.hello().await;
    let opened = open(&mut client, "naive").await;
    assert_eq!(next(&opened, 1), Some("GET stock"));
    let strays = [
        (json!({"type":"no_such_thing"}), ErrorCode::UnknownType),
        (json!({"type":"step","buyer":"one"}), ErrorCode::BadMessage),
        (json!({"type":"reconcile"}), ErrorCode::NoRunInProgress),
        (json!({"type":"cancel_run"}), ErrorCode::NoRunInProgress),
        (
            json!({"type":"buy","room":"ABCD","request_id":"r1"}),
            ErrorCode::NotInRoom,
        ),
    ];
    for (frame, code) in strays {
        client.send_json(frame.clone()).await;
        match client.next_not_status().await {
            ServerMessage::Error(e) => assert_eq!(e.code, code, "{frame}: {e:?}"),
            other => panic!("{frame}: expected an error, got {other:?}"),
        }
    }
    let moved = step(&mut client, 1).await;
    assert_eq!(moved.log.len(), 1, "the step-through survived: {moved:?}");
    assert_eq!(moved.log[0].command, "GET stock");
}
