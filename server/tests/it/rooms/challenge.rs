//! A workshop challenge in a room: the presenter opens an exercise, two participants
//! submit, everyone sees the leaderboard, the presenter puts a failing tape on every
//! screen, and a late joiner catches up.

use oversold_protocol::challenge::ChallengeEntry;
use oversold_protocol::workshop::VerdictCode;
use oversold_protocol::{ErrorCode, ServerMessage};
use serde_json::json;

use super::*;
use crate::common::{Client, TestRedis, TestServer};

const GOOD: &str = "local s = tonumber(redis.call('GET', KEYS[1]) or '0')\n\
                    if s < tonumber(ARGV[1]) then return 0 end\n\
                    redis.call('DECRBY', KEYS[1], ARGV[1]) return 1";

async fn entry(c: &mut Client) -> ChallengeEntry {
    wait_for(c, 30, |m| match m {
        ServerMessage::ChallengeEntry(e) => Some(e.clone()),
        _ => None,
    })
    .await
}

async fn submit(
    c: &mut Client,
    room: &str,
    nickname: &str,
    source: &str,
) -> oversold_protocol::workshop::SolutionVerdict {
    c.send_json(
        json!({"type": "submit_challenge", "room": room, "nickname": nickname, "source": source}),
    )
    .await;
    wait_for(c, 30, |m| match m {
        ServerMessage::SolutionVerdict(v) => Some(v.clone()),
        ServerMessage::Error(e) => panic!("refused: {e:?}"),
        _ => None,
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_challenge_with_two_participants_and_a_tape_on_the_projector() {
    let redis = TestRedis::start();
    let server = TestServer::start(redis.store.clone(), 4).await;
    let mut presenter = server.client().await;
    let room = create(&mut presenter).await;
    let mut ada = server.client().await;
    let ada_id = join(&mut ada, &room.code, "phone").await;
    let mut bob = server.client().await;
    join(&mut bob, &room.code, "phone").await;

    // Before a challenge is open, and from someone who is not the presenter: refused.
    ada.send_json(
        json!({"type": "submit_challenge", "room": room.code, "nickname": "ada", "source": GOOD}),
    )
    .await;
    assert_eq!(expect_error(&mut ada).await.code, ErrorCode::SaleState);
    ada.send_json(json!({"type": "open_challenge", "room": room.code, "presenter_token": "nope", "exercise": "reserve"}))
        .await;
    assert_eq!(expect_error(&mut ada).await.code, ErrorCode::NotPresenter);

    presenter
        .send_json(json!({"type": "open_challenge", "room": room.code, "presenter_token": room.token, "exercise": "reserve"}))
        .await;
    for c in [&mut presenter, &mut ada, &mut bob] {
        let opened = wait_for(c, 10, |m| match m {
            ServerMessage::ChallengeOpened(o) => Some(o.clone()),
            _ => None,
        })
        .await;
        assert_eq!(opened.exercise.id, "reserve");
    }
    // A nickname past its bound is refused.
    ada.send_json(json!({"type": "submit_challenge", "room": room.code, "nickname": "x".repeat(30), "source": GOOD}))
        .await;
    assert_eq!(expect_error(&mut ada).await.code, ErrorCode::OutOfRange);

    let starter = oversold::workshop::exercises::find("reserve")
        .unwrap()
        .starter;
    let failed = submit(&mut ada, &room.code, "<ada>", starter).await;
    assert_eq!(failed.verdict, VerdictCode::Oversold);
    let seen = entry(&mut presenter).await;
    assert_eq!(
        (seen.nickname.as_str(), seen.passed, seen.participant),
        ("<ada>", false, ada_id)
    );
    let passed = submit(&mut bob, &room.code, "bob", GOOD).await;
    assert!(passed.passed, "{passed:?}");
    let seen = entry(&mut presenter).await;
    assert!(seen.passed && seen.calls_per_s.is_some(), "{seen:?}");

    // The presenter puts ada's tape on every screen.
    presenter
        .send_json(json!({"type": "show_counterexample", "room": room.code, "presenter_token": room.token, "participant": ada_id}))
        .await;
    let tape = wait_for(&mut bob, 10, |m| match m {
        ServerMessage::ChallengeTape(t) => Some(t.clone()),
        _ => None,
    })
    .await;
    assert_eq!(tape.nickname, "<ada>");
    assert!(!tape.verdict.counterexample.unwrap().tape.is_empty());

    // A screen that joins late gets the challenge and both entries.
    let mut late = server.client().await;
    late.hello().await;
    late.send_json(json!({"type": "join_room", "room": room.code, "as": "spectator"}))
        .await;
    let mut entries = Vec::new();
    let mut opened = false;
    while entries.len() < 2 {
        match next_room_frame(&mut late, 10).await {
            ServerMessage::ChallengeOpened(_) => opened = true,
            ServerMessage::ChallengeEntry(e) => entries.push(e),
            _ => {}
        }
    }
    assert!(opened);
    assert_eq!(entries.iter().filter(|e| e.passed).count(), 1);
}
