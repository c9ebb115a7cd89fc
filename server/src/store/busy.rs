//! The `busy_script` scenario's commands: the slow client's long jobs (`busy_read.lua`,
//! `busy_write.lua`, the `oversold_busy` Function), and what a watchdog may send while one
//! holds Redis: `SCRIPT KILL`, `FUNCTION KILL`, `SHUTDOWN NOSAVE`. Also the snapshot
//! (`SAVE`) a restart comes back to.
//!
//! Sent only to a `redis-server` the run started for itself: `SHUTDOWN` ends the server.

use super::sandbox::Kill;
use super::scripts::{self, BUSY_FUNCTION, BUSY_READ, BUSY_WRITE};
use super::{RedisConn, RunKeys, StoreError};

/// The Function library's name, and its one function.
const LIBRARY: &str = "oversold_busy";
const WRITE_FUNCTION: &str = "oversold_busy_write";

/// The keys of one `busy_script` run: the race's stock counter and the slow job's record.
#[derive(Debug, Clone)]
pub struct BusyKeys {
    run: RunKeys,
    job: String,
}

impl BusyKeys {
    /// Keys for the run `run_id`.
    pub fn new(run_id: &str) -> Self {
        let run = RunKeys::new(run_id);
        let job = format!("{}:job", run.tag());
        BusyKeys { run, job }
    }

    /// The buyers' keys (the stock counter).
    pub fn run(&self) -> &RunKeys {
        &self.run
    }

    /// The slow job's record.
    pub fn job_key(&self) -> &str {
        &self.job
    }
}

/// One long job inside Redis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// `busy_read.lua`: reads only.
    Read,
    /// `busy_write.lua`: writes its record first.
    Write,
    /// `FCALL oversold_busy_write`: the same, as a Function.
    WriteFunction,
}

/// Run `job` for `ms` of Redis's clock; the reads it made.
pub async fn run_job(
    conn: &mut RedisConn,
    keys: &BusyKeys,
    job: Job,
    ms: u32,
) -> Result<i64, StoreError> {
    let stock = keys.run.stock_key();
    let ms = ms.to_string();
    match job {
        Job::Read => scripts::call(conn, "EVALSHA busy_read.lua", &BUSY_READ, &[stock], &ms)
            .await
            .map(|c| c.reply)
            .map_err(|f| f.error),
        Job::Write => scripts::call(
            conn,
            "EVALSHA busy_write.lua",
            &BUSY_WRITE,
            &[stock, &keys.job],
            &ms,
        )
        .await
        .map(|c| c.reply)
        .map_err(|f| f.error),
        Job::WriteFunction => {
            let cmd = redis::cmd("FCALL")
                .arg(WRITE_FUNCTION)
                .arg(2)
                .arg(stock)
                .arg(&keys.job)
                .arg(&ms)
                .to_owned();
            conn.query("FCALL oversold_busy_write", &cmd).await
        }
    }
}

/// `FUNCTION LOAD` the `oversold_busy` library (on the run's own, fresh Redis).
pub async fn load_library(conn: &mut RedisConn) -> Result<(), StoreError> {
    let cmd = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg(BUSY_FUNCTION.source)
        .to_owned();
    let name: String = conn.query("FUNCTION LOAD", &cmd).await?;
    if name == LIBRARY {
        Ok(())
    } else {
        Err(StoreError::Unexpected {
            op: "FUNCTION LOAD",
            detail: format!("loaded {name:?}, expected {LIBRARY:?}"),
        })
    }
}

/// How the watchdog tries to stop a busy job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillWith {
    /// `SCRIPT KILL`: for `EVAL`/`EVALSHA` scripts.
    Script,
    /// `FUNCTION KILL`: for `FCALL`.
    Function,
}

impl KillWith {
    /// The command, as the page and the CLI name it.
    pub fn command(self) -> &'static str {
        match self {
            KillWith::Script => "SCRIPT KILL",
            KillWith::Function => "FUNCTION KILL",
        }
    }
}

/// `SCRIPT KILL` or `FUNCTION KILL`: what Redis did about it.
pub async fn kill(conn: &mut RedisConn, with: KillWith) -> Result<Kill, StoreError> {
    let cmd = match with {
        KillWith::Script => redis::cmd("SCRIPT").arg("KILL").to_owned(),
        KillWith::Function => redis::cmd("FUNCTION").arg("KILL").to_owned(),
    };
    match conn.query::<()>(with.command(), &cmd).await {
        Ok(()) => Ok(Kill::Killed),
        Err(e) if e.reply_code() == Some("NOTBUSY") => Ok(Kill::NotBusy),
        Err(e) if e.reply_code() == Some("UNKILLABLE") => Ok(Kill::Unkillable),
        Err(e) => Err(e),
    }
}

/// `SHUTDOWN NOSAVE`: the server ends now, without writing a snapshot, whatever script is
/// running. Its connection closes instead of answering, which is the success.
pub async fn shutdown_nosave(conn: &mut RedisConn) -> Result<(), StoreError> {
    let cmd = redis::cmd("SHUTDOWN").arg("NOSAVE").to_owned();
    match conn.query::<()>("SHUTDOWN NOSAVE", &cmd).await {
        Ok(()) => Ok(()),
        Err(e) if e.in_doubt() => Ok(()),
        Err(e) => Err(e),
    }
}

/// `CONFIG SET busy-reply-threshold ms`: how long a script may run before every other
/// command is answered `BUSY` (only ever on a Redis of a run's or a sale's own).
pub async fn set_threshold(conn: &mut RedisConn, ms: u32) -> Result<(), StoreError> {
    let cmd = redis::cmd("CONFIG")
        .arg("SET")
        .arg("busy-reply-threshold")
        .arg(ms)
        .to_owned();
    conn.query("CONFIG SET busy-reply-threshold", &cmd).await
}

/// `SAVE`: write the snapshot a restart loads (the stock as set up, and the library).
pub async fn snapshot(conn: &mut RedisConn) -> Result<(), StoreError> {
    conn.query("SAVE", &redis::cmd("SAVE")).await
}

/// True when Redis refused a command because a script (or function) holds it: `BUSY`.
pub fn is_busy(e: &StoreError) -> bool {
    e.reply_code() == Some("BUSY")
}

/// Delete the run's keys (the stock and the job record).
pub async fn remove_run(conn: &mut RedisConn, keys: &BusyKeys) -> Result<(), StoreError> {
    let mut all = keys.run.all();
    all.push(keys.job.clone());
    conn.query("DEL run keys", redis::cmd("DEL").arg(all)).await
}
