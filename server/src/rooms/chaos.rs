//! The presenter's chaos buttons. Each one is refused unless this server started its Redis
//! itself (`--private-redis`): nobody else's Redis is ever flushed, paused or restarted.
//!
//! An action runs on the process that received the button (it needs no state of the
//! sale's process: the app servers' connections are found by name), and ends with a
//! `chaos_applied` event placed on the sale's timeline.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use oversold_protocol::room::{ChaosAction, ChaosApplied, ChaosInfo};
use oversold_protocol::{ErrorCode, ServerMessage, WireError};

use super::event::Event;
use super::sale::{SaleRecord, unix_us};
use super::{Host, check_presenter, unavailable};
use crate::store::rooms::{self as store, RoomKeys};
use crate::store::{self as redis_store, RedisConn};

/// `pause_redis` pauses every client this long.
pub const PAUSE_MS: u64 = 1_000;
/// `slow_script` spins this long: well under Redis's 5 s busy-script threshold.
pub const SLOW_SCRIPT_MS: u64 = 500;
/// How long after the slow script starts the health-style `PING` is sent.
const PING_AFTER: Duration = Duration::from_millis(20);

/// Every chaos button, in the order the page shows them (sent in `hello.chaos`).
pub fn buttons() -> Vec<ChaosInfo> {
    ChaosAction::ALL.into_iter().map(about).collect()
}

/// The one table of what each button is called, what it does, and what it needs: the page
/// draws its buttons from it and [`press`] refuses by it. A match, so a new action cannot
/// be added without its words.
pub fn about(action: ChaosAction) -> ChaosInfo {
    let (label, description) = match action {
        ChaosAction::ScriptFlush => (
            "Flush scripts".to_string(),
            "SCRIPT FLUSH and FUNCTION FLUSH mid-sale: the atomic strategies load theirs again \
             on their next call, and nobody fails."
                .to_string(),
        ),
        ChaosAction::KillAppServer => (
            "Kill app server 0".to_string(),
            "CLIENT KILL on app server 0's connection: its buyers fail, the others go on."
                .to_string(),
        ),
        ChaosAction::PauseRedis => (
            // f64 so a pause that is not whole seconds still reads right (1.5 s).
            format!("Pause Redis {} s", PAUSE_MS as f64 / 1_000.0),
            format!(
                "CLIENT PAUSE for {PAUSE_MS} ms: every command waits, latency spikes, nothing \
                 is lost."
            ),
        ),
        ChaosAction::RestartRedis => (
            "Restart Redis".to_string(),
            "Stop this server's own redis-server and start it again, empty: the sale in flight \
             fails, the room goes on."
                .to_string(),
        ),
        ChaosAction::SlowScript => (
            "Slow script".to_string(),
            format!(
                "A Lua script that spins {SLOW_SCRIPT_MS} ms and writes nothing: every other \
                 command, PING included, waits behind it."
            ),
        ),
    };
    ChaosInfo {
        action,
        label,
        description,
        // Nobody else's Redis is ever flushed, paused, killed or restarted.
        needs_own_redis: true,
    }
}

/// `chaos`: check the presenter and the Redis, then run the action in the background (it
/// can take a second) and announce what it did.
pub async fn press(
    state: &Arc<dyn Host>,
    code: &str,
    token: &str,
    action: ChaosAction,
) -> Result<(), WireError> {
    let keys = super::seat::room_keys(code)?;
    let mut conn = state.rooms().conn(&state.backends().redis).await?;
    check_presenter(&mut conn, &keys, token).await?;
    if (about(action).needs_own_redis && !state.backends().owns_redis)
        || (action == ChaosAction::RestartRedis && state.rooms().private.is_none())
    {
        return Err(WireError::new(
            ErrorCode::ChaosNotAllowed,
            "chaos buttons only act on a Redis this server started itself (--private-redis)",
        ));
    }
    if state.rooms().chaos_running.swap(true, Ordering::AcqRel) {
        return Err(WireError::new(
            ErrorCode::RateLimited,
            "a chaos action is still running; wait for it to finish",
        ));
    }
    let record = store::sale(&mut conn, &keys)
        .await
        .ok()
        .flatten()
        .and_then(|json| serde_json::from_str::<SaleRecord>(&json).ok());
    // The sale's clock (its outcomes' times count from it), so the press lands on the
    // timeline where it happened.
    let clock = match &record {
        Some(_) => store::sale_clock(&mut conn, &keys).await.ok().flatten(),
        None => None,
    };
    let state = state.clone();
    let code = code.to_string();
    state.rooms().tracker.clone().spawn(async move {
        let started = Instant::now();
        let at_us = clock.map(|c| unix_us().saturating_sub(c));
        let detail = match apply(&state, &keys, action, record.as_ref()).await {
            Ok(detail) => detail,
            Err(e) => format!("{} failed: {}", action.as_str(), e.message),
        };
        let took_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        tracing::info!(room = %code, action = action.as_str(), %detail, "chaos");
        let msg = ServerMessage::ChaosApplied(ChaosApplied {
            room: code,
            action,
            sale_id: record.map(|r| r.sale_id),
            at_us,
            took_us,
            detail,
        });
        // A restart breaks the process's shared connection, and the first request on it is
        // the one that finds out (marking it broken): with no sale running, that is this
        // announcement. So a failed publish is tried once more, on a fresh connection.
        let event = Event::All { msg };
        for _ in 0..2 {
            let Ok(mut conn) = state.rooms().conn(&state.backends().redis).await else {
                continue;
            };
            if state
                .rooms()
                .publish(&mut conn, &keys, &event)
                .await
                .is_ok()
            {
                break;
            }
        }
        state.rooms().chaos_running.store(false, Ordering::Release);
    });
    Ok(())
}

async fn apply(
    state: &Arc<dyn Host>,
    keys: &RoomKeys,
    action: ChaosAction,
    sale: Option<&SaleRecord>,
) -> Result<String, WireError> {
    let store = &state.backends().redis;
    let mut conn = store.connect().await.map_err(unavailable)?;
    match action {
        ChaosAction::ScriptFlush => {
            store::flush_scripts(&mut conn).await.map_err(unavailable)?;
            Ok(
                "SCRIPT FLUSH and FUNCTION FLUSH: every cached script and function is gone; \
                the atomic strategies load theirs again on their next call"
                    .into(),
            )
        }
        ChaosAction::KillAppServer => {
            let Some(sale) = sale else {
                return Ok("no sale is open: there is no app server to kill".into());
            };
            let name = redis_store::app_server_name(&sale.sale_id, 0);
            let killed = store::kill_client_named(&mut conn, &name)
                .await
                .map_err(unavailable)?;
            Ok(if killed {
                "CLIENT KILL: app server 0's connection is gone; its buyers fail, the others go on"
                    .into()
            } else {
                "app server 0 had no connection to kill".into()
            })
        }
        ChaosAction::PauseRedis => {
            store::pause(&mut conn, PAUSE_MS)
                .await
                .map_err(unavailable)?;
            let waited = ping_time(store).await;
            Ok(format!(
                "CLIENT PAUSE {PAUSE_MS} ms: every command waits; a PING sent right after \
                 waited {waited}"
            ))
        }
        ChaosAction::SlowScript => slow_script(store, conn).await,
        ChaosAction::RestartRedis => restart(state, keys, conn).await,
    }
}

/// How long a `PING` on a fresh connection takes, in words.
async fn ping_time(store: &redis_store::Store) -> String {
    let t = Instant::now();
    match store.ping().await {
        Ok(()) => format!("{} ms", t.elapsed().as_millis()),
        Err(e) => format!("{} ms and failed ({})", t.elapsed().as_millis(), e.short()),
    }
}

/// Run the slow script and, while it runs, time a `PING` (what the health check sends).
async fn slow_script(store: &redis_store::Store, mut conn: RedisConn) -> Result<String, WireError> {
    let spin = tokio::spawn(async move { store::slow_script(&mut conn, SLOW_SCRIPT_MS).await });
    tokio::time::sleep(PING_AFTER).await;
    let waited = ping_time(store).await;
    let spent = spin
        .await
        .map_err(|e| WireError::new(ErrorCode::RunFailed, e.to_string()))?
        .map_err(unavailable)?;
    Ok(format!(
        "a Lua script spun {} ms inside Redis; a PING sent {} ms in waited {waited} behind it",
        spent / 1_000,
        PING_AFTER.as_millis()
    ))
}

/// Stop the server's own Redis and start it again, empty; put the room's record back so
/// the room goes on (the sale in flight is lost, and says so).
async fn restart(
    state: &Arc<dyn Host>,
    keys: &RoomKeys,
    mut conn: RedisConn,
) -> Result<String, WireError> {
    let record = store::record(&mut conn, keys).await.map_err(unavailable)?;
    let Some(private) = state.rooms().private.clone() else {
        return Err(WireError::new(
            ErrorCode::ChaosNotAllowed,
            "this server did not start its Redis",
        ));
    };
    let t = Instant::now();
    tokio::task::spawn_blocking(move || {
        let mut redis = private.lock().expect("private redis poisoned");
        redis.stop();
        redis.restart()
    })
    .await
    .map_err(|e| WireError::new(ErrorCode::RunFailed, e.to_string()))?
    .map_err(|e| WireError::new(ErrorCode::RedisUnavailable, e.to_string()))?;
    let down = t.elapsed();
    let mut fresh = state
        .backends()
        .redis
        .connect()
        .await
        .map_err(unavailable)?;
    store::restore(&mut fresh, keys, &record, state.rooms().ttl_s())
        .await
        .map_err(unavailable)?;
    Ok(format!(
        "redis-server stopped and started again, empty, in {} ms: the sale's stock is gone, \
         so the sale fails closed; the room's record was put back",
        down.as_millis()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_every_button_in_order_with_todays_words() {
        let b = buttons();
        let labels: Vec<&str> = b.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "Flush scripts",
                "Kill app server 0",
                "Pause Redis 1 s",
                "Restart Redis",
                "Slow script"
            ]
        );
        assert_eq!(
            b.iter().map(|c| c.action).collect::<Vec<_>>(),
            ChaosAction::ALL
        );
        assert!(b.iter().all(|c| c.needs_own_redis));
        assert!(
            b.iter()
                .all(|c| c.description.ends_with('.') && !c.description.contains('\n'))
        );
        assert!(b[2].description.starts_with("CLIENT PAUSE for 1000 ms"));
    }
}
