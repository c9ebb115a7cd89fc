//! The presenter's chaos buttons. Each acts on one Redis only: the `redis-server` the room's
//! open sale runs on, which the sale's process started for that sale alone
//! ([`super::sale_redis`]). No press can pause, flush, kill or restart the shared Redis,
//! another room's sale, or a visitor's run.
//!
//! A press may reach any process ([`press`]); it travels on the room's stream to the
//! process running the sale, which applies it ([`apply`]) and announces a `chaos_applied`
//! placed on the sale's timeline. Every press is answered: with no sale open it says so
//! (nothing is touched), and if the sale's process does not answer in
//! [`ANSWER_WITHIN`], the pressing process says that instead.

use std::sync::Arc;
use std::time::{Duration, Instant};

use oversold_protocol::room::{ChaosAction, ChaosApplied, ChaosInfo};
use oversold_protocol::{ErrorCode, ServerMessage, WireError};
use tokio::sync::broadcast;

use super::event::{Event, Stamped};
use super::hub::Hub;
use super::sale::{SaleRecord, unix_us};
use super::sale_redis::SaleRedis;
use super::{Host, check_presenter, unavailable};
use crate::store::busy::{self, BusyKeys, Job, KillWith};
use crate::store::rooms as store;
use crate::store::sandbox::Kill;
use crate::store::{self as redis_store, RedisConn};

/// `pause_redis` pauses every client this long.
pub const PAUSE_MS: u64 = 1_000;
/// `slow_script` spins this long: well under Redis's 5 s busy-script threshold.
pub const SLOW_SCRIPT_MS: u64 = 500;
/// How long after the slow script starts the health-style `PING` is sent.
const PING_AFTER: Duration = Duration::from_millis(20);
/// How long the busy buttons' scripts would hold Redis if nobody stopped them.
pub const BUSY_SCRIPT_MS: u32 = 3_000;
/// `busy-reply-threshold` on the sale's own Redis for the busy buttons: past it, every other
/// command is answered `BUSY` (Redis's default, 5 s, would outlast the whole lesson).
pub const BUSY_THRESHOLD_MS: u32 = 100;
/// How long the server lets a busy script hold Redis before it steps in, like the
/// `busy_script` scenario's watchdog.
const KILL_AFTER: Duration = Duration::from_millis(500);
/// A press the sale's process has not answered by then is answered by the pressing one.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(15);

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
            "Stop the sale's own redis-server and start it again, empty: the sale in flight \
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
        ChaosAction::BusyScript => (
            "Busy script".to_string(),
            format!(
                "A read-only Lua script that would run {} s: after {BUSY_THRESHOLD_MS} ms every \
                 buyer is answered BUSY, until the server sends SCRIPT KILL and the sale goes on.",
                BUSY_SCRIPT_MS / 1_000
            ),
        ),
        ChaosAction::UnkillableScript => (
            "Unkillable script".to_string(),
            "A Lua script that writes, then spins: SCRIPT KILL is refused (UNKILLABLE), so the \
             only way out is SHUTDOWN NOSAVE: the sale's Redis restarts empty and the sale \
             fails closed."
                .to_string(),
        ),
    };
    ChaosInfo {
        action,
        label,
        description,
        // Only ever the sale's own Redis, which this server must be able to start.
        needs_own_redis: true,
    }
}

/// `chaos` (on whichever process the presenter is): check the presenter, then send the
/// press to the sale's process through the room's stream and make sure it is answered.
pub async fn press(
    state: &Arc<dyn Host>,
    code: &str,
    token: &str,
    action: ChaosAction,
) -> Result<(), WireError> {
    let keys = super::seat::room_keys(code)?;
    let mut conn = state.rooms().conn(&state.backends().redis).await?;
    check_presenter(&mut conn, &keys, token).await?;
    if !state.rooms().own_sale_redis {
        return Err(WireError::new(
            ErrorCode::ChaosNotAllowed,
            "chaos buttons act only on a sale's own redis-server, and this server starts \
             those only when it runs its own Redis (--private-redis)",
        ));
    }
    let record = store::sale(&mut conn, &keys)
        .await
        .map_err(unavailable)?
        .and_then(|json| serde_json::from_str::<SaleRecord>(&json).ok());
    let Some(record) = record else {
        let detail = "no sale is open: chaos acts on the sale's own Redis, which exists only \
                      while a sale runs; nothing was touched";
        let msg = applied(code, action, None, None, 0, detail.to_string());
        super::announce(state, &keys, &Event::All { msg }).await;
        return Ok(());
    };
    let hub = state.rooms().hub(code, &state.backends().redis).await?;
    // Listening before the press is sent, so the answer cannot slip past.
    let answers = hub.subscribe();
    let pressed = Event::Chaos {
        sale_id: record.sale_id.clone(),
        action,
        pressed_unix_us: unix_us(),
    };
    state.rooms().publish(&mut conn, &keys, &pressed).await?;
    let state = state.clone();
    let watch = await_answer(state.clone(), hub, answers, record.sale_id, action);
    state.rooms().tracker.spawn(watch);
    Ok(())
}

/// Wait for the sale's process to answer a press; if it does not within [`ANSWER_WITHIN`]
/// (it stopped, or the sale ended as the press arrived), answer for it.
async fn await_answer(
    state: Arc<dyn Host>,
    hub: Arc<Hub>,
    mut answers: broadcast::Receiver<Arc<Stamped>>,
    sale_id: String,
    action: ChaosAction,
) {
    let answered = |s: &Stamped| {
        matches!(&s.event, Event::All { msg: ServerMessage::ChaosApplied(c) }
            if c.action == action && c.sale_id.as_deref() == Some(sale_id.as_str()))
    };
    let waited = tokio::time::timeout(ANSWER_WITHIN, async {
        loop {
            match answers.recv().await {
                Ok(s) if answered(&s) => return,
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    })
    .await;
    if waited.is_err() {
        let detail = format!(
            "{} was not applied: the process running the sale did not answer within {} s \
             (the sale may have ended, or its process stopped)",
            action.as_str(),
            ANSWER_WITHIN.as_secs()
        );
        let msg = applied(&hub.code, action, Some(sale_id), None, 0, detail);
        super::announce(&state, &hub.keys, &Event::All { msg }).await;
    }
}

/// A `chaos_applied` frame.
pub fn applied(
    room: &str,
    action: ChaosAction,
    sale_id: Option<String>,
    at_us: Option<u64>,
    took_us: u64,
    detail: String,
) -> ServerMessage {
    ServerMessage::ChaosApplied(ChaosApplied {
        room: room.to_string(),
        action,
        sale_id,
        at_us,
        took_us,
        detail,
    })
}

/// Apply `action` to the sale's own Redis (on the sale's process). Returns what it did, in
/// words.
pub async fn apply(
    redis: &SaleRedis,
    sale_id: &str,
    action: ChaosAction,
) -> Result<String, WireError> {
    if !redis.is_own() {
        return Err(WireError::new(
            ErrorCode::ChaosNotAllowed,
            "this sale runs on the shared Redis; chaos never touches it",
        ));
    }
    let store = redis.store();
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
            let name = redis_store::app_server_name(sale_id, 0);
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
        ChaosAction::BusyScript => busy_script(redis, conn, sale_id, Job::Read).await,
        ChaosAction::UnkillableScript => busy_script(redis, conn, sale_id, Job::Write).await,
        ChaosAction::RestartRedis => {
            let down = redis.restart().await?;
            Ok(format!(
                "the sale's own redis-server stopped and started again, empty, in {} ms: the \
                 sale's stock is gone, so the sale fails closed; the room, other rooms and \
                 other runs use other Redis and go on",
                down.as_millis()
            ))
        }
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

/// Run a long script on its own connection, let it hold Redis past the busy threshold, then
/// do what the server's watchdog does: `SCRIPT KILL`, and for a script that has written (so
/// Redis refuses to kill it), `SHUTDOWN NOSAVE` and a restart. `admin` was opened before the
/// script starts: a new connection's handshake would itself be answered `BUSY`.
async fn busy_script(
    redis: &SaleRedis,
    mut admin: RedisConn,
    sale_id: &str,
    job: Job,
) -> Result<String, WireError> {
    let store = redis.store();
    busy::set_threshold(&mut admin, BUSY_THRESHOLD_MS)
        .await
        .map_err(unavailable)?;
    let mut job_conn = store.connect().await.map_err(unavailable)?;
    // Keys of the press's own, so the job never touches the sale's stock.
    let keys = BusyKeys::new(&format!("chaos-{sale_id}"));
    let started = Instant::now();
    let spin =
        tokio::spawn(async move { busy::run_job(&mut job_conn, &keys, job, BUSY_SCRIPT_MS).await });
    tokio::time::sleep(KILL_AFTER).await;
    // What every buyer is answered right now.
    let busy_now = matches!(redis_store::ping(&mut admin).await, Err(ref e) if busy::is_busy(e));
    let seen = if busy_now {
        "answered BUSY"
    } else {
        "not yet answered BUSY"
    };
    let kill = busy::kill(&mut admin, KillWith::Script)
        .await
        .map_err(unavailable)?;
    let at = started.elapsed().as_millis();
    match kill {
        Kill::Killed => {
            let _ = spin.await;
            Ok(format!(
                "a read-only script held the sale's Redis; past {BUSY_THRESHOLD_MS} ms every \
                 other command was {seen}; SCRIPT KILL at {at} ms stopped it, and the sale \
                 goes on"
            ))
        }
        Kill::NotBusy => Ok(format!(
            "the script had ended on its own by {at} ms; nothing was killed"
        )),
        Kill::Unkillable => {
            busy::shutdown_nosave(&mut admin)
                .await
                .map_err(unavailable)?;
            spin.abort();
            let down = redis.restart().await?;
            Ok(format!(
                "the script wrote before it spun, so SCRIPT KILL at {at} ms was refused \
                 (UNKILLABLE) while every other command was {seen}; SHUTDOWN NOSAVE ended the \
                 sale's Redis and it started again, empty, in {} ms: the sale's stock is gone, \
                 so the sale fails closed",
                down.as_millis()
            ))
        }
    }
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
                "Slow script",
                "Busy script",
                "Unkillable script"
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
