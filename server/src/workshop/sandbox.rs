//! A `redis-server` for untrusted Lua, started and owned by this process: one check at a time,
//! each with its own ACL user, under a watchdog. A student's script never reaches any other
//! Redis.
//!
//! # A check, step by step
//! ```text
//! Sandbox::start()        a redis-server ready for the first check
//! sandbox.lease(wait)     Lease: that server, a fresh tag "ws-3f2a9c", an admin store and a
//!                         student store (the ACL user ws-3f2a9c: keys oversold:{ws-3f2a9c}:*,
//!                         STUDENT_COMMANDS only)
//! lease.guard(budget, w)  runs the check `w`; every POLL the watchdog PINGs as admin:
//!                           BUSY       -> SCRIPT KILL             Incident::Killed
//!                           UNKILLABLE -> kill, restart           Incident::Restarted
//!                           died       -> restart                 Incident::Restarted
//!                           no answer  -> restart                 Incident::Restarted
//!                           (SILENCE_LIMIT: a script stuck in one C call)
//!                           budget out -> drop `w`, restart       Incident::Restarted
//! drop(lease)             the server is killed: its keys, user and cached scripts go with it;
//!                         the next lease starts a new one (tens of ms)
//! ```
//!
//! # Limits, and what enforces each
//! - What a script may call and touch: the check's ACL user ([`STUDENT_COMMANDS`], keys
//!   `oversold:{TAG}:*`); Redis checks every `redis.call` of a script against it. Lua itself
//!   has no `os`, `io`, `require`, `dofile` or `loadfile` in Redis, and `EVAL` inside a script
//!   is refused by Redis.
//! - How long a script may hold Redis: [`BUSY_THRESHOLD`] (`busy-reply-threshold`), then the
//!   watchdog's `SCRIPT KILL`, or a kill of the server for a script that has written; a
//!   script stuck inside one C call, which neither reaches, [`SILENCE_LIMIT`].
//! - How long a check may take: `guard`'s budget.
//! - Data: `maxmemory` [`MAXMEMORY`] with `noeviction` (a write past it is refused).
//! - Lua's own memory, which `maxmemory` does not count: the process runs under
//!   `prlimit --as` [`ADDRESS_SPACE`]; an allocation past it fails ("not enough memory") or,
//!   if Redis itself cannot allocate, the process ends and the watchdog restarts it.
//! - A reply: `client-output-buffer-limit normal` [`MAX_REPLY`]; a bigger reply closes the
//!   connection instead of flooding this process.
//! - Source size: [`MAX_SCRIPT_BYTES`], which the judge checks before sending.
//! - Reach: loopback only, `protected-mode`, a random admin password (fed on stdin, so it is
//!   in no `ps` line, file, log or `Debug` output), `DEBUG` disabled, no persistence, and the
//!   parent-death signal ([`crate::private_redis`]) so it never outlives this process.

use std::future::Future;
use std::time::Duration;

use tokio::sync::{Mutex, MutexGuard};

use crate::private_redis::PrivateRedisError;
use crate::store::{Store, StoreError};

mod cluster;
mod process;
mod watchdog;

pub use cluster::{ClusterLease, ClusterNode, ClusterSandbox};

use process::Running;

/// The sandbox's `busy-reply-threshold`: how long a script runs before other clients get
/// `BUSY` and the watchdog may stop it. An exercise's script does a handful of commands in
/// microseconds, so 100 ms is a thousand times what a correct answer needs even on a busy
/// 2-core machine, yet short enough that an endless loop is stopped before a student
/// wonders what happened. Redis only lets `SCRIPT KILL` in once this has passed.
pub const BUSY_THRESHOLD: Duration = Duration::from_millis(100);

/// How often the watchdog asks the sandbox whether it is busy. A killed loop's verdict comes
/// at most this long after [`BUSY_THRESHOLD`] (plus the kill itself).
pub const POLL: Duration = Duration::from_millis(25);

/// How long the sandbox may answer the watchdog nothing at all, not even `BUSY`, before it
/// is restarted. Redis answers `BUSY` and takes `SCRIPT KILL` only between Lua instructions,
/// so a script inside one long C call (`string.find` with a pattern that backtracks for
/// ever, a string built to a gigabyte) holds it silently, and only killing the process ends
/// that. Shorter than the store's 3 s response timeout, so the check sees the restart rather
/// than a timeout; longer than a memory bomb takes to fail cleanly at [`ADDRESS_SPACE`]
/// (measured 0.5-2 s for the tests' bombs with two busy loops beside), so that one is
/// reported as it is.
pub const SILENCE_LIMIT: Duration = Duration::from_millis(2500);

/// The largest script source the judge should send. An exercise's answer is tens of lines;
/// 16 KiB is room for comments and a helper or two, and keeps a pasted blob out of Redis.
pub const MAX_SCRIPT_BYTES: usize = 16 * 1024;

/// The sandbox's `maxmemory` (with `noeviction`): a check's data is a few keys.
pub const MAXMEMORY: &str = "32mb";

/// The sandbox process's address-space limit (`prlimit --as`), in bytes: Redis starts in
/// about 60 MB of it, and a Lua memory bomb fails at it instead of taking the machine's RAM.
pub const ADDRESS_SPACE: u64 = 1 << 30;

/// The most a reply may queue for one client (`client-output-buffer-limit normal`, a hard
/// limit): past it Redis closes that connection, so a script returning a 500 MB string
/// cannot make this process hold it. [`MAXMEMORY`] of data still fits in one reply.
pub const MAX_REPLY: &str = "64mb";

/// Every command a check's student may run, directly or from a script: what the exercises
/// need (strings, hashes, sets, sorted sets, lists, `TIME`, `PING`) and `EVAL`/`EVALSHA`.
/// Nothing that reaches another key space or server (`KEYS`, `SCAN`, `SELECT`, `MIGRATE`,
/// `REPLICAOF`, `OBJECT`, `SORT`), administers Redis (`CONFIG`, `ACL`, `CLIENT`, `DEBUG`,
/// `SCRIPT`, `FUNCTION`, `SHUTDOWN`, `FLUSHALL`, `FLUSHDB`, `MONITOR`, `WAIT`), or
/// publishes.
#[rustfmt::skip] // a table: one line per family reads better than one line per command
pub const STUDENT_COMMANDS: &[&str] = &[
    // strings and keys
    "get", "set", "setnx", "setex", "psetex", "getset", "incr", "incrby", "decr", "decrby",
    "mget", "mset", "del", "exists", "expire", "pexpire", "ttl", "pttl", "persist", "type",
    // hashes
    "hget", "hset", "hsetnx", "hdel", "hincrby", "hmget", "hgetall", "hexists", "hlen", "hkeys",
    "hvals",
    // sets
    "sadd", "srem", "sismember", "scard", "smembers",
    // sorted sets
    "zadd", "zrem", "zscore", "zcard", "zrange", "zrangebyscore", "zremrangebyscore", "zcount",
    "zincrby", "zpopmin",
    // lists
    "lpush", "rpush", "lpop", "rpop", "llen", "lrange",
    // the rest
    "time", "ping", "eval", "evalsha",
];

/// What the watchdog had to do during a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incident {
    /// A script ran past [`BUSY_THRESHOLD`] and `SCRIPT KILL` stopped it. `after` is how long
    /// Redis had been busy when the kill was answered: measured from the last moment the
    /// watchdog saw it free, so at most one [`POLL`] more than the script's real run time.
    Killed {
        /// Since the sandbox was last seen free.
        after: Duration,
    },
    /// The sandbox's `redis-server` was replaced by a fresh one (its data is gone): a script
    /// that had written ran past the threshold (`UNKILLABLE`), the process died (out of
    /// memory), it answered nothing for [`SILENCE_LIMIT`], or the check outlasted its budget.
    /// `why` says which, in a student's words.
    Restarted {
        /// What happened.
        why: String,
    },
}

/// Why the sandbox could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// Its `redis-server` did not start (not installed, no `prlimit`, no free port...).
    #[error("the workshop sandbox could not start: {0}")]
    Start(#[source] PrivateRedisError),
    /// Its stores could not be opened.
    #[error("the workshop sandbox's stores could not be opened: {0}")]
    Store(#[source] StoreError),
    /// Another check held it for longer than the caller would wait.
    #[error(
        "the workshop sandbox is busy with another check (waited {} ms)",
        waited.as_millis()
    )]
    Busy {
        /// How long the caller waited.
        waited: Duration,
    },
}

/// The sandbox: one `redis-server` at a time, lent to one check at a time. `Send + Sync`;
/// share it (e.g. in an `Arc`) and take a [`Lease`] per check.
pub struct Sandbox {
    /// The check's turn, and between checks the server ready for the next one.
    slot: Mutex<Option<Running>>,
}

impl Sandbox {
    /// Start the server for the first check, so what is missing (`redis-server`, `prlimit`)
    /// shows now rather than at the first check.
    pub async fn start() -> Result<Sandbox, SandboxError> {
        let first = Running::start().await?;
        Ok(Sandbox {
            slot: Mutex::new(Some(first)),
        })
    }

    /// Exclusive use for one check; waits at most `wait` for the previous check (else
    /// [`SandboxError::Busy`]), then takes the ready server or starts a fresh one.
    pub async fn lease(&self, wait: Duration) -> Result<Lease<'_>, SandboxError> {
        let mut turn = tokio::time::timeout(wait, self.slot.lock())
            .await
            .map_err(|_| SandboxError::Busy { waited: wait })?;
        // The ready server, unless something ended it while it waited.
        let ready = turn
            .take()
            .and_then(|mut ready| ready.is_alive().then_some(ready));
        let running = match ready {
            Some(ready) => ready,
            None => Running::start().await?,
        };
        tracing::debug!(tag = running.tag(), "workshop sandbox leased");
        Ok(Lease {
            _turn: turn,
            running,
        })
    }
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("Sandbox");
        match self.slot.try_lock() {
            Ok(slot) => out.field("ready", &*slot),
            Err(_) => out.field("ready", &"(leased)"),
        };
        out.finish()
    }
}

/// One check's hold on the sandbox. Dropping it kills the check's server (a SIGKILL and a
/// reap, a few ms on the dropping thread): its keys, its ACL user and its cached scripts go
/// with the process, so the next check starts clean whatever this one left, with no async
/// clean-up to forget or to cancel.
#[derive(Debug)]
pub struct Lease<'a> {
    /// Held for the check's whole life: the next lease waits for it.
    _turn: MutexGuard<'a, Option<Running>>,
    running: Running,
}

impl Lease<'_> {
    /// The check's own hash tag, e.g. `ws-3f2a9c` (fresh per lease); every key the student
    /// may touch is `oversold:{TAG}:*` ([`crate::store::sandbox::key_prefix`]).
    pub fn tag(&self) -> &str {
        self.running.tag()
    }

    /// A store that connects as the sandbox's admin (the password-protected default user):
    /// setup, read-back, `MONITOR`.
    pub fn admin(&self) -> &Store {
        self.running.admin()
    }

    /// A store that connects as this check's ACL user: keys `oversold:{TAG}:*` only,
    /// [`STUDENT_COMMANDS`] only.
    pub fn student(&self) -> &Store {
        self.running.student()
    }

    /// The sandbox `redis-server`'s process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.running.pid()
    }

    /// Run `work` (the check) under the watchdog, and return its output (`None` if it outlasted
    /// `budget` and was dropped) with what the watchdog had to do. `work` cannot borrow the
    /// lease: clone [`Lease::student`] and [`Lease::admin`] into it (a `Store` is a cheap
    /// handle). After a restart the stores reach the new server (same port when it can be
    /// had), which holds none of the old data.
    pub async fn guard<F: Future>(
        &mut self,
        budget: Duration,
        work: F,
    ) -> (Option<F::Output>, Vec<Incident>) {
        watchdog::guard(&mut self.running, budget, work).await
    }

    /// The admin password, for the tests that prove it is shown nowhere.
    #[cfg(feature = "test-support")]
    pub fn admin_password(&self) -> &str {
        self.running.admin_password()
    }
}
