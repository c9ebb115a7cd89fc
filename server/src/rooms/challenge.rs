//! The room's workshop challenge: `open_challenge` (presenter), `submit_challenge` (any
//! participant: judged by the process's workshop, like `check_solution`, under the same
//! per-address budgets), `show_counterexample` (presenter), and the leaderboard a late
//! joiner gets. The leaderboard and the verdicts live in Redis with the room.

use std::sync::Arc;

use oversold_protocol::challenge::{self, ChallengeEntry, ChallengeOpened, ChallengeTape};
use oversold_protocol::workshop::SolutionVerdict;
use oversold_protocol::{ErrorCode, ServerMessage, WireError};
use tokio::sync::mpsc;

use super::event::Event;
use super::seat::{Seat, room_keys};
use super::{Host, check_presenter, unavailable};
use crate::client::Caller;
use crate::store::rooms as store;
use crate::workshop::exercises;

/// `open_challenge`: the token, the exercise; a fresh leaderboard; everyone is told.
pub async fn open(
    state: &Arc<dyn Host>,
    code: &str,
    token: &str,
    exercise: &str,
) -> Result<(), WireError> {
    let keys = room_keys(code)?;
    let mut conn = state.rooms().conn(&state.backends().redis).await?;
    check_presenter(&mut conn, &keys, token).await?;
    let found = exercises::find(exercise).ok_or_else(|| {
        WireError::new(
            ErrorCode::OutOfRange,
            format!("no exercise is called {exercise:?}"),
        )
    })?;
    store::open_challenge(&mut conn, &keys, found.id, state.rooms().ttl_s())
        .await
        .map_err(unavailable)?;
    let msg = ServerMessage::ChallengeOpened(ChallengeOpened {
        room: code.to_string(),
        exercise: found.info(),
    });
    state
        .rooms()
        .publish(&mut conn, &keys, &Event::All { msg })
        .await?;
    Ok(())
}

/// `submit_challenge`: checked now (seat, nickname, size, an open challenge), judged in
/// the background; the verdict goes to this socket, the entry to everyone.
pub async fn submit(
    state: &Arc<dyn Host>,
    caller: &Caller,
    (code, nickname, source): (&str, &str, String),
    frames: &mpsc::Sender<ServerMessage>,
    seat: &Option<Seat>,
) -> Result<(), WireError> {
    let Some(me) = seat.as_ref().filter(|s| s.hub.code == code) else {
        return Err(WireError::new(
            ErrorCode::NotInRoom,
            "join the room before submitting",
        ));
    };
    let nickname = challenge::check_nickname(nickname)
        .map_err(|why| WireError::new(ErrorCode::OutOfRange, why))?;
    let keys = me.hub.keys.clone();
    let mut conn = state.rooms().conn(&state.backends().redis).await?;
    let Some(exercise) = store::challenge(&mut conn, &keys)
        .await
        .map_err(unavailable)?
    else {
        return Err(WireError::new(
            ErrorCode::SaleState,
            "no challenge is open in this room",
        ));
    };
    crate::workshop::service::admit(&exercise, &source)?;
    let participant = me.participant();
    let (state, addr, frames, code) =
        (state.clone(), caller.addr, frames.clone(), code.to_string());
    state.rooms().tracker.clone().spawn(async move {
        let judged = state.workshop().check(addr, &exercise, &source).await;
        match judged {
            Ok(verdict) => {
                record(&state, &keys, &code, participant, nickname, &verdict).await;
                let _ = frames.send(ServerMessage::SolutionVerdict(verdict)).await;
            }
            Err(e) => {
                let _ = frames.send(ServerMessage::Error(e)).await;
            }
        }
    });
    Ok(())
}

/// Keep the submission and tell the room.
async fn record(
    state: &Arc<dyn Host>,
    keys: &store::RoomKeys,
    code: &str,
    participant: u32,
    nickname: String,
    verdict: &SolutionVerdict,
) {
    let entry = ChallengeEntry {
        room: code.to_string(),
        participant,
        nickname,
        passed: verdict.passed,
        verdict: verdict.verdict,
        calls_per_s: verdict.figures.map(|f| f.calls_per_s),
        took_ms: verdict.took_ms,
    };
    let (entry_json, verdict_json) = (
        serde_json::to_string(&entry).expect("serializes"),
        serde_json::to_string(verdict).expect("serializes"),
    );
    if let Ok(mut conn) = state.rooms().conn(&state.backends().redis).await {
        let ttl = state.rooms().ttl_s();
        let kept = store::keep_submission(
            &mut conn,
            keys,
            participant,
            &entry_json,
            &verdict_json,
            ttl,
        );
        if let Err(e) = kept.await {
            tracing::warn!(room = %code, error = %e, "a challenge entry could not be kept");
        }
    }
    let msg = ServerMessage::ChallengeEntry(entry);
    super::announce(state, keys, &Event::All { msg }).await;
}

/// `show_counterexample`: the token, then that participant's verdict on every screen.
pub async fn show(
    state: &Arc<dyn Host>,
    code: &str,
    token: &str,
    participant: u32,
) -> Result<(), WireError> {
    let keys = room_keys(code)?;
    let mut conn = state.rooms().conn(&state.backends().redis).await?;
    check_presenter(&mut conn, &keys, token).await?;
    let verdict: SolutionVerdict = store::verdict_of(&mut conn, &keys, participant)
        .await
        .map_err(unavailable)?
        .and_then(|json| serde_json::from_str(&json).ok())
        .ok_or_else(|| {
            WireError::new(
                ErrorCode::OutOfRange,
                format!("participant {participant} has submitted nothing to this challenge"),
            )
        })?;
    let nickname = store::board(&mut conn, &keys)
        .await
        .map_err(unavailable)?
        .iter()
        .filter_map(|json| serde_json::from_str::<ChallengeEntry>(json).ok())
        .find(|e| e.participant == participant)
        .map(|e| e.nickname)
        .unwrap_or_default();
    let msg = ServerMessage::ChallengeTape(ChallengeTape {
        room: code.to_string(),
        participant,
        nickname,
        verdict,
    });
    state
        .rooms()
        .publish(&mut conn, &keys, &Event::All { msg })
        .await?;
    Ok(())
}

/// The open challenge and its leaderboard, for a socket that just joined.
pub async fn catch_up(
    state: &Arc<dyn Host>,
    keys: &store::RoomKeys,
    code: &str,
    frames: &mpsc::Sender<ServerMessage>,
) {
    let Ok(mut conn) = state.rooms().conn(&state.backends().redis).await else {
        return;
    };
    let Some(exercise) = store::challenge(&mut conn, keys)
        .await
        .ok()
        .flatten()
        .and_then(|id| exercises::find(&id))
    else {
        return;
    };
    let opened = ServerMessage::ChallengeOpened(ChallengeOpened {
        room: code.to_string(),
        exercise: exercise.info(),
    });
    let _ = frames.send(opened).await;
    let mut entries: Vec<ChallengeEntry> = store::board(&mut conn, keys)
        .await
        .unwrap_or_default()
        .iter()
        .filter_map(|json| serde_json::from_str(json).ok())
        .collect();
    entries.sort_by_key(|e| e.participant);
    for entry in entries {
        let _ = frames.send(ServerMessage::ChallengeEntry(entry)).await;
    }
}
