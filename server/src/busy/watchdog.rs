//! The run's watchdog: the server's own guard against a script that holds Redis too long.
//!
//! Every [`POLL`] it sends a `PING` on a connection of its own. A `PING` sent while a
//! script runs waits; once the script is past `busy-reply-threshold`, Redis answers `BUSY`.
//! When Redis has answered nothing but `BUSY` for [`PATIENCE`] since its last `PONG`, the
//! watchdog asks it to stop the job (`SCRIPT KILL`, or `FUNCTION KILL` when `BUSY` says a
//! function runs). If Redis answers `UNKILLABLE` (the job has written), the watchdog holds
//! the buyers' connections, sends `SHUTDOWN NOSAVE`, starts the same `redis-server` again
//! (it loads its last snapshot), and hands the buyers fresh connections.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::RwLock;
use tokio_util::sync::CancellationToken;

use oversold_protocol::Epoch;

use super::Fleet;
use crate::private_redis::PrivateRedis;
use crate::store::busy::{self, BusyKeys, KillWith};
use crate::store::sandbox::Kill;
use crate::store::{self, RedisConn, Store, StoreError, stock};

/// How often the watchdog looks.
pub const POLL: Duration = Duration::from_millis(20);
/// How long Redis may stay busy (since its last `PONG`) before the watchdog acts.
pub const PATIENCE: Duration = Duration::from_millis(500);
/// How long one `PING` may wait before the watchdog tries again.
const PING_LIMIT: Duration = Duration::from_secs(2);

/// What the watchdog saw and did.
#[derive(Debug, Default, Clone)]
pub struct Watched {
    /// When Redis first answered a `PING` again after answering `BUSY`.
    pub stall_ended: Option<Instant>,
    /// `BUSY` answers to its own `PING`s.
    pub busy_pings: u32,
    /// Jobs stopped by a kill command.
    pub killed: u32,
    /// `UNKILLABLE` answers.
    pub kill_refused: u32,
    /// When it sent `SHUTDOWN NOSAVE` (everything since the snapshot was lost then).
    pub shut_down_at: Option<Instant>,
    /// Restarts done.
    pub restarted: u32,
    /// After a restart, the counter as the restarted Redis loaded it from the snapshot
    /// (`Some(None)`: the key did not come back); `None` without a restart.
    pub restored: Option<Option<i64>>,
}

/// What the watchdog works on.
pub struct Watchdog {
    /// The run's own Redis process (restarted in place).
    pub redis: Arc<Mutex<PrivateRedis>>,
    /// Its address.
    pub store: Store,
    /// The buyers' connections, replaced after a restart.
    pub fleet: Arc<RwLock<Fleet>>,
    /// The run's keys: the restarted counter is read back.
    pub keys: BusyKeys,
    /// The run's id (names the new connections).
    pub run_id: String,
    /// The watchdog's own connection, opened before the sale starts.
    pub conn: RedisConn,
}

impl Watchdog {
    /// Watch until `done` fires; what it saw and did.
    pub async fn watch(mut self, done: CancellationToken) -> Watched {
        let mut seen = Watched::default();
        let mut last_free = Instant::now();
        let mut stalled = false;
        loop {
            tokio::select! {
                biased;
                () = done.cancelled() => return seen,
                () = tokio::time::sleep(POLL) => {}
            }
            let ping = tokio::time::timeout(PING_LIMIT, store::ping(&mut self.conn)).await;
            match ping {
                Ok(Ok(())) => {
                    last_free = Instant::now();
                    if stalled {
                        stalled = false;
                        seen.stall_ended.get_or_insert(last_free);
                    }
                }
                Ok(Err(e)) if busy::is_busy(&e) => {
                    seen.busy_pings += 1;
                    stalled = true;
                    if last_free.elapsed() >= PATIENCE {
                        self.stop_job(&e, &mut seen).await;
                    }
                }
                Ok(Err(e)) => {
                    tracing::debug!(run_id = %self.run_id, error = %e, "watchdog PING failed");
                    if self.conn.is_broken()
                        && let Ok(conn) = self.store.connect().await
                    {
                        self.conn = conn;
                    }
                }
                Err(_) => tracing::debug!(run_id = %self.run_id, "watchdog PING unanswered"),
            }
        }
    }

    /// Ask Redis to stop the job; restart it if the job cannot be stopped.
    async fn stop_job(&mut self, busy_reply: &StoreError, seen: &mut Watched) {
        // BUSY says which kind of job holds Redis ("... running a function. You can only
        // call FUNCTION KILL ...").
        let first = if busy_reply
            .reply_detail()
            .is_some_and(|d| d.contains("FUNCTION KILL"))
        {
            KillWith::Function
        } else {
            KillWith::Script
        };
        let second = match first {
            KillWith::Script => KillWith::Function,
            KillWith::Function => KillWith::Script,
        };
        for with in [first, second] {
            match busy::kill(&mut self.conn, with).await {
                Ok(Kill::Killed) => {
                    seen.killed += 1;
                    tracing::info!(run_id = %self.run_id, command = with.command(), "busy job killed");
                    return;
                }
                Ok(Kill::NotBusy) => continue,
                Ok(Kill::Unkillable) => {
                    seen.kill_refused += 1;
                    self.restart(seen).await;
                    return;
                }
                Err(e) => {
                    tracing::debug!(run_id = %self.run_id, error = %e, "kill failed");
                    return;
                }
            }
        }
    }

    /// `SHUTDOWN NOSAVE`, start the same server again, and give the buyers new connections.
    /// Buyers arriving meanwhile wait for the new ones (the write lock).
    async fn restart(&mut self, seen: &mut Watched) {
        let mut fleet = self.fleet.write().await;
        if let Err(e) = busy::shutdown_nosave(&mut self.conn).await {
            tracing::warn!(run_id = %self.run_id, error = %e, "SHUTDOWN NOSAVE refused");
            return;
        }
        seen.shut_down_at = Some(Instant::now());
        let redis = self.redis.clone();
        let restarted = tokio::task::spawn_blocking(move || {
            let mut redis = redis.lock().expect("the run's redis lock");
            // SHUTDOWN ends the process by itself; wait for it, then start it again on the
            // same port and directory (it loads the snapshot there).
            let deadline = Instant::now() + Duration::from_secs(5);
            while redis.exit_status().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            redis.stop();
            redis.restart()
        })
        .await;
        match restarted {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(run_id = %self.run_id, error = %e, "the run's Redis did not restart");
                return;
            }
            Err(e) => {
                tracing::warn!(run_id = %self.run_id, error = %e, "restart task failed");
                return;
            }
        }
        seen.restarted += 1;
        tracing::info!(run_id = %self.run_id, "the run's Redis was shut down without saving and restarted");
        match self.store.connect().await {
            Ok(conn) => self.conn = conn,
            Err(e) => {
                tracing::warn!(run_id = %self.run_id, error = %e, "watchdog reconnect failed")
            }
        }
        // Where the counter's next life begins: what the snapshot brought back. Unread, the
        // buyers stay in the old life's numbering, and the tape says no order explains it
        // rather than the run inventing a start.
        let restored = match stock::get(&mut self.conn, self.keys.run()).await {
            Ok(value) => Some(value),
            Err(e) => {
                tracing::warn!(run_id = %self.run_id, error = %e, "reading the restored stock failed");
                None
            }
        };
        seen.restored = restored;
        let n = fleet.conns.len() as u32;
        match self.store.connect_fleet(&self.run_id, n).await {
            Ok(fresh) => {
                fleet.conns = fresh;
                if let Some(began_at) = restored {
                    fleet.life = Epoch {
                        n: fleet.life.n + 1,
                        began_at,
                        evicted: false,
                    };
                }
            }
            Err(e) => {
                tracing::warn!(run_id = %self.run_id, error = %e, "buyers could not reconnect")
            }
        }
    }
}
