//! The rooms' own script: `room_budget.lua`.

use oversold::store::scripts;

use super::{Answer, assert_pinned, eval, get, pttl, set};
use crate::common::TestRedis;

#[tokio::test]
async fn room_budget_header_is_its_contract() {
    let script = &scripts::ROOM_BUDGET;
    assert_pinned(
        script,
        &[
            "KEYS[1]  the budget's counter: units taken in this window (missing means none yet).",
            "ARGV[1]  amount: units to take, a canonical integer >= 1.",
            "ARGV[2]  cap: units one window allows, a canonical integer >= 1.",
            "ARGV[3]  window_ms: the window's length, a canonical integer >= 1.",
            "Returns  {1, taken, ms_left}  taken: the counter is now taken; the window ends in ms_left",
            "         {0, taken, ms_left}  refused: amount more would pass cap, nothing changed",
            "Errors   \"INVALID_COUNT ...\"        ARGV[1] or ARGV[2] is missing or not a canonical integer >= 1",
            "         \"INVALID_TIME ...\"         ARGV[3] is missing or not a canonical integer >= 1",
            "         \"COUNTER_NOT_INTEGER ...\"  KEYS[1] holds something other than a canonical integer",
        ],
    );
    let redis = TestRedis::start();
    let mut c = redis.raw().await;
    let key = "oversold:{contract}:budget";
    let take = |amount: &'static str| [amount, "5", "60000"];
    // KEYS[1] missing means none taken; the first take starts the window.
    match eval(&mut c, script.source, &[key], &take("2")).await {
        Answer::Reply(r) => {
            assert_eq!(&r[..2], [1, 2]);
            assert!((1..=60_000).contains(&r[2]), "{r:?}");
        }
        other => panic!("{other:?}"),
    }
    assert!((1..=60_000).contains(&pttl(&mut c, key).await));
    // Up to the cap, then refused with nothing changed.
    assert!(
        matches!(eval(&mut c, script.source, &[key], &take("3")).await, Answer::Reply(r) if r[..2] == [1, 5])
    );
    assert!(
        matches!(eval(&mut c, script.source, &[key], &take("1")).await, Answer::Reply(r) if r[..2] == [0, 5])
    );
    assert_eq!(get(&mut c, key).await.as_deref(), Some("5"));
    // Errors, each before any write.
    for (args, code) in [
        (["0", "5", "1000"], "INVALID_COUNT"),
        (["1", "0", "1000"], "INVALID_COUNT"),
        (["01", "5", "1000"], "INVALID_COUNT"),
        (["1", "5", "0"], "INVALID_TIME"),
        (["1", "5", "x"], "INVALID_TIME"),
    ] {
        match eval(&mut c, script.source, &[key], &args).await {
            Answer::Error(found, _) => assert_eq!(found, code, "{args:?}"),
            other => panic!("{args:?} gave {other:?}"),
        }
    }
    assert_eq!(get(&mut c, key).await.as_deref(), Some("5"));
    let odd = "oversold:{contract}:odd";
    set(&mut c, odd, "many").await;
    match eval(&mut c, script.source, &[odd], &take("1")).await {
        Answer::Error(found, _) => assert_eq!(found, "COUNTER_NOT_INTEGER"),
        other => panic!("{other:?}"),
    }
    assert_eq!(get(&mut c, odd).await.as_deref(), Some("many"));
    // The window ends: the counter is gone and the budget starts over.
    let short = "oversold:{contract}:short";
    assert!(
        matches!(eval(&mut c, script.source, &[short], &["5", "5", "50"]).await, Answer::Reply(r) if r[0] == 1)
    );
    tokio::time::sleep(std::time::Duration::from_millis(120)).await;
    assert!(
        matches!(eval(&mut c, script.source, &[short], &["5", "5", "50"]).await, Answer::Reply(r) if r[..2] == [1, 5])
    );
}

#[tokio::test]
async fn room_join_header_is_its_contract() {
    let script = &scripts::ROOM_JOIN;
    assert_pinned(
        script,
        &[
            "KEYS[1]  the room's record: a hash; its next_id field numbers the participants.",
            "KEYS[2]  the room's head counts: a hash of \"<process>:<role>\" -> people (missing means none).",
            "ARGV[1]  field: the \"<process>:<role>\" to count into (non-empty).",
            "ARGV[2]  cap: people the room holds at most, a canonical integer >= 1.",
            "ARGV[3]  new_id: \"1\" to draw a new participant id, \"0\" for someone back with their id.",
            "ARGV[4]  key_ttl: seconds both keys live from now, a canonical integer >= 1.",
            "Returns  {1, id, people}  counted in: id is the new participant id (0 when new_id is \"0\"), people the count after",
            "         {0, 0, people}   the room is full: nothing changed",
            "Errors   \"INVALID_ID ...\"           ARGV[1] is missing or empty",
            "         \"INVALID_COUNT ...\"        ARGV[2] is missing or not a canonical integer >= 1",
            "         \"INVALID_FLAG ...\"         ARGV[3] is neither \"0\" nor \"1\"",
            "         \"INVALID_TIME ...\"         ARGV[4] is missing or not a canonical integer >= 1",
            "         \"NO_ROOM ...\"              KEYS[1] does not exist (the room expired)",
            "         \"COUNTER_NOT_INTEGER ...\"  a field of KEYS[2] is not a canonical integer",
        ],
    );
    let redis = TestRedis::start();
    let mut c = redis.raw().await;
    let (meta, here) = ("oversold:{room-C}:meta", "oversold:{room-C}:here");
    let keys = [meta, here];
    // NO_ROOM: nothing is created for a room that does not exist.
    match eval(&mut c, script.source, &keys, &["p1:phones", "3", "1", "60"]).await {
        Answer::Error(code, _) => assert_eq!(code, "NO_ROOM"),
        other => panic!("{other:?}"),
    }
    assert_eq!(get_hash(&mut c, here, "p1:phones").await, None);
    redis::cmd("HSET")
        .arg(meta)
        .arg("token")
        .arg("h")
        .query_async::<()>(&mut c)
        .await
        .unwrap();
    // A new id each time with new_id "1"; none with "0"; the count summed over processes.
    assert!(
        matches!(eval(&mut c, script.source, &keys, &["p1:phones", "3", "1", "60"]).await, Answer::Reply(r) if r == [1, 1, 1])
    );
    assert!(
        matches!(eval(&mut c, script.source, &keys, &["p2:watchers", "3", "1", "60"]).await, Answer::Reply(r) if r == [1, 2, 2])
    );
    assert!(
        matches!(eval(&mut c, script.source, &keys, &["p1:phones", "3", "0", "60"]).await, Answer::Reply(r) if r == [1, 0, 3])
    );
    assert!((1..=60_000).contains(&pttl(&mut c, here).await));
    // Full: refused, nothing changed (no id drawn, no count added).
    assert!(
        matches!(eval(&mut c, script.source, &keys, &["p3:phones", "3", "1", "60"]).await, Answer::Reply(r) if r == [0, 0, 3])
    );
    assert_eq!(
        get_hash(&mut c, meta, "next_id").await.as_deref(),
        Some("2")
    );
    assert_eq!(get_hash(&mut c, here, "p3:phones").await, None);
    // Argument errors, each before any write.
    for (args, code) in [
        (["", "3", "1", "60"], "INVALID_ID"),
        (["p1:phones", "0", "1", "60"], "INVALID_COUNT"),
        (["p1:phones", "9", "2", "60"], "INVALID_FLAG"),
        (["p1:phones", "9", "1", "0"], "INVALID_TIME"),
    ] {
        match eval(&mut c, script.source, &keys, &args).await {
            Answer::Error(found, _) => assert_eq!(found, code, "{args:?}"),
            other => panic!("{args:?} gave {other:?}"),
        }
    }
    assert_eq!(
        get_hash(&mut c, here, "p1:phones").await.as_deref(),
        Some("2")
    );
    redis::cmd("HSET")
        .arg(here)
        .arg("p9:phones")
        .arg("lots")
        .query_async::<()>(&mut c)
        .await
        .unwrap();
    match eval(&mut c, script.source, &keys, &["p1:phones", "9", "1", "60"]).await {
        Answer::Error(found, _) => assert_eq!(found, "COUNTER_NOT_INTEGER"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        get_hash(&mut c, meta, "next_id").await.as_deref(),
        Some("2")
    );
}

async fn get_hash(
    c: &mut redis::aio::MultiplexedConnection,
    key: &str,
    field: &str,
) -> Option<String> {
    redis::cmd("HGET")
        .arg(key)
        .arg(field)
        .query_async(c)
        .await
        .unwrap()
}
