//! The watchdog behind [`super::Lease::guard`]: it runs a check and, every [`POLL`], asks the
//! sandbox as its admin whether a script holds it; it stops the script, or restarts the server.

use std::future::Future;
use std::process::ExitStatus;
use std::time::Duration;

use tokio::time::Instant;

use super::{ADDRESS_SPACE, BUSY_THRESHOLD, Incident, POLL, SILENCE_LIMIT, SandboxError};
use crate::store::sandbox::{Kill, script_kill};
use crate::store::{self, RedisConn, Store, StoreError};

/// What the watchdog watches: one `redis-server` that runs students' scripts (the sandbox's
/// own, or the cluster sandbox's node that serves a check's keys).
pub(super) trait Watched {
    /// The check's tag, for the logs.
    fn tag(&self) -> &str;
    /// Its admin, whom the watchdog `PING`s and who sends `SCRIPT KILL`.
    fn admin(&self) -> &Store;
    /// How the process ended, if it ended by itself.
    fn exit_status(&mut self) -> Option<ExitStatus>;
    /// End it and start it again, empty, reachable by the same stores.
    async fn restart(&mut self) -> Result<(), SandboxError>;
}

/// Run `work` until it ends or `budget` runs out, watching the sandbox meanwhile.
pub(super) async fn guard<W: Watched, F: Future>(
    running: &mut W,
    budget: Duration,
    work: F,
) -> (Option<F::Output>, Vec<Incident>) {
    let mut watch = Watch {
        conn: None,
        last_free: Instant::now(),
        last_heard: Instant::now(),
        incidents: Vec::new(),
    };
    // The watchdog's connection is opened before the check starts, while the sandbox is
    // normally idle: opened while a script holds Redis, its login would wait like any request.
    let opening = tokio::time::timeout(SILENCE_LIMIT, running.admin().connect());
    watch.conn = opening.await.ok().and_then(Result::ok);
    // `watch_over` owns `work`, so a check that outlasts its budget is dropped by the time
    // the server it may still be using is restarted.
    let output = watch_over(running, &mut watch, Instant::now() + budget, work).await;
    if output.is_none() {
        let why = format!(
            "the check took longer than its budget of {} ms, so it was stopped",
            budget.as_millis()
        );
        watch.restart(running, why).await;
    }
    (output, watch.incidents)
}

/// `work`'s output, or `None` at `deadline`.
async fn watch_over<W: Watched, F: Future>(
    running: &mut W,
    watch: &mut Watch,
    deadline: Instant,
    work: F,
) -> Option<F::Output> {
    let mut work = std::pin::pin!(work);
    loop {
        tokio::select! {
            // The check first: an answer that is ready is kept, whatever else is due.
            biased;
            out = &mut work => return Some(out),
            () = tokio::time::sleep_until(deadline) => return None,
            seen = watch.look(running) => watch.act(running, seen).await,
        }
    }
}

/// What one look at the sandbox found.
enum Seen {
    /// It answered `PONG`.
    Free,
    /// A script has held it past [`BUSY_THRESHOLD`]: it answered `BUSY`.
    Busy,
    /// The process has ended.
    Died(ExitStatus),
    /// It answered nothing at all, not even `BUSY`, for [`SILENCE_LIMIT`].
    Stuck,
    /// No answer (a connection error, a timeout); the next look tries again.
    Silent(StoreError),
}

/// The watchdog's state during one `guard`.
struct Watch {
    /// Its own admin connection, opened when needed and dropped once broken.
    conn: Option<RedisConn>,
    /// When the sandbox last answered a `PING`: a script holding it now began after that.
    last_free: Instant,
    /// When the sandbox last answered anything (`PONG` or `BUSY`).
    last_heard: Instant,
    incidents: Vec<Incident>,
}

impl Watch {
    /// Wait one [`POLL`], then look: has the process died, does it answer, and has it been
    /// silent for too long?
    async fn look<W: Watched>(&mut self, running: &mut W) -> Seen {
        tokio::time::sleep(POLL).await;
        if let Some(status) = running.exit_status() {
            return Seen::Died(status);
        }
        // A PING sent while a script runs waits until the script ends, or gets `BUSY` once
        // it has run past the threshold: Redis answers nothing else in between. A script
        // inside one long C call (a pattern match, a huge string) reaches neither, and the
        // PING (or a new connection's login) waits on: past SILENCE_LIMIT that is a stuck
        // server.
        let deadline = self.last_heard + SILENCE_LIMIT;
        match tokio::time::timeout_at(deadline, self.ping(running)).await {
            Ok(seen) => seen,
            Err(_) => Seen::Stuck,
        }
    }

    /// One `PING` as admin, on the watchdog's connection (opened if needed).
    async fn ping<W: Watched>(&mut self, running: &W) -> Seen {
        let conn = match self.conn.as_mut() {
            Some(conn) => conn,
            None => match running.admin().connect().await {
                Ok(conn) => self.conn.insert(conn),
                Err(e) => return Seen::Silent(e),
            },
        };
        match store::ping(conn).await {
            Ok(()) => {
                self.last_free = Instant::now();
                self.last_heard = self.last_free;
                Seen::Free
            }
            Err(e) if e.reply_code() == Some("BUSY") => {
                self.last_heard = Instant::now();
                Seen::Busy
            }
            Err(e) => {
                if conn.is_broken() {
                    self.conn = None;
                }
                Seen::Silent(e)
            }
        }
    }

    async fn act<W: Watched>(&mut self, running: &mut W, seen: Seen) {
        match seen {
            Seen::Free => {}
            Seen::Silent(e) => tracing::debug!(tag = running.tag(), error = %e, "sandbox silent"),
            Seen::Busy => self.stop_script(running).await,
            Seen::Stuck => {
                let why = format!(
                    "the sandbox's Redis answered nothing for {} ms, not even BUSY: a script \
                     was stuck inside one long operation (a pattern match, a huge string), \
                     where SCRIPT KILL cannot reach it; it was ended and started again, empty",
                    SILENCE_LIMIT.as_millis()
                );
                self.restart(running, why).await;
            }
            Seen::Died(status) => {
                let why = format!(
                    "the sandbox's Redis died ({status}), as Redis does when it cannot \
                     allocate memory within its {} MiB (Lua included); it was started again, \
                     empty",
                    ADDRESS_SPACE >> 20
                );
                self.restart(running, why).await;
            }
        }
    }

    /// `SCRIPT KILL`; a script that has written cannot be killed, so the server goes.
    async fn stop_script<W: Watched>(&mut self, running: &mut W) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        match script_kill(conn).await {
            Ok(Kill::Killed) => {
                let after = self.last_free.elapsed();
                self.last_free = Instant::now();
                self.last_heard = self.last_free;
                tracing::info!(
                    tag = running.tag(),
                    after_ms = after.as_millis(),
                    "script killed"
                );
                self.incidents.push(Incident::Killed { after });
            }
            Ok(Kill::NotBusy) => {}
            Ok(Kill::Unkillable) => {
                let why = format!(
                    "a script wrote, then ran past {} ms; Redis cannot stop a script that has \
                     written halfway (UNKILLABLE), so the sandbox's Redis was ended without \
                     saving and started again, empty",
                    BUSY_THRESHOLD.as_millis()
                );
                self.restart(running, why).await;
            }
            Err(e) => tracing::debug!(tag = running.tag(), error = %e, "SCRIPT KILL failed"),
        }
    }

    /// Replace the server, and record why.
    async fn restart<W: Watched>(&mut self, running: &mut W, why: String) {
        self.conn = None;
        let why = match running.restart().await {
            Ok(()) => why,
            Err(e) => format!("{why}; it could not be started again: {e}"),
        };
        tracing::warn!(tag = running.tag(), %why, "workshop sandbox restarted");
        self.last_free = Instant::now();
        self.last_heard = self.last_free;
        self.incidents.push(Incident::Restarted { why });
    }
}
