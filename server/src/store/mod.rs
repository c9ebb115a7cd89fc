//! Everything that knows Redis: connections, key names, commands and the Lua scripts.
//!
//! Strategies never build a key or a command themselves; they call the small operations in
//! [`stock`], [`lock`], [`fence`] and [`scripts`]. That keeps the key layout (one hash tag
//! per run, so a Redis Cluster keeps each run on one slot) and every command in one place.
//!
//! # Layout
//! - this file: [`Store`] (one Redis deployment), [`RedisConn`] (one app server's
//!   connection, which counts the requests it sends), [`StoreError`] and its [`Cause`].
//! - [`keys`]: the keys of one run, and how its stock is laid out ([`StockLayout`]).
//! - [`scripts`]: the Lua files, and how a script is called (`EVALSHA`, falling back to `EVAL`).
//! - [`stock`]: putting stock on the shelf, reading it back, the plain commands buyers send.
//! - [`lock`]: the per-SKU lock (`SET NX PX`, compare-and-delete).
//! - [`fence`]: the fenced lock (a token per holder) and the stock reads and writes that
//!   refuse a stale token.
//! - [`functions`]: the `oversold_v2` Redis Function library (`FUNCTION LOAD`, `FCALL`).
//! - [`holds`]: the checkout scenario: holds (reserve, confirm, release), the reaper,
//!   reconciliation, the run's counters, and `CLIENT PAUSE` on a Redis we own.
//! - [`ledger`]: the Redis-side settlement ledger, when PostgreSQL is not available.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, FromRedisValue, RedisError, Value};

use turnstile::Turnstile;

pub mod fence;
pub mod functions;
pub mod holds;
pub mod keys;
pub mod ledger;
pub mod lock;
pub mod scripts;
pub mod stock;
pub mod turnstile;

pub use keys::{CheckoutKeys, HoldKey, RunKeys, StockLayout};

/// How long one request may wait for its answer before the buyer reports it. Without it, a
/// Redis that stops answering (but keeps the socket open) would hang a run.
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(3);
/// How long opening a connection may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// What went wrong talking to Redis.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The URL could not be parsed.
    #[error("invalid Redis URL: {0}")]
    BadUrl(#[source] RedisError),
    /// Could not connect.
    #[error("cannot connect to Redis at {addr}: {source}")]
    Connect {
        /// Where we tried (no password).
        addr: String,
        /// The cause.
        #[source]
        source: RedisError,
    },
    /// A command was sent and failed (an error reply, a timeout, a dropped connection).
    #[error("{op} failed: {source}")]
    Command {
        /// Which operation.
        op: &'static str,
        /// The cause.
        #[source]
        source: RedisError,
    },
    /// Not sent: this connection had already broken, so Redis never saw the command.
    #[error("{op} not sent: this app server's connection to Redis is lost")]
    NotSent {
        /// Which operation.
        op: &'static str,
    },
    /// Redis answered with something the code did not expect.
    #[error("{op}: unexpected reply: {detail}")]
    Unexpected {
        /// Which operation.
        op: &'static str,
        /// What came back.
        detail: String,
    },
}

/// Why a store operation failed, in the words an operator (and the page) needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// Nothing listens at the address.
    Refused,
    /// Redis wants a password (or another one).
    AuthFailed,
    /// Redis is over its `maxmemory` and refuses writes.
    OutOfMemory,
    /// This process ran out of file descriptors.
    TooManyOpenFiles,
    /// Sent, and no answer within [`RESPONSE_TIMEOUT`].
    Timeout,
    /// The connection broke (Redis killed, network cut).
    ConnectionLost,
    /// Redis answered with an error (a script's error, a wrong type...).
    Reply,
    /// Anything else (a bad URL, an unexpected reply).
    Other,
}

impl Cause {
    /// A few words for logs, `/healthz` and the page, e.g. `"connection refused"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Refused => "connection refused",
            Cause::AuthFailed => "authentication failed",
            Cause::OutOfMemory => "out of memory (maxmemory reached)",
            Cause::TooManyOpenFiles => "too many open files in the server process",
            Cause::Timeout => "no answer in time",
            Cause::ConnectionLost => "connection lost",
            Cause::Reply => "error reply",
            Cause::Other => "unexpected failure",
        }
    }
}

fn cause_of(e: &RedisError) -> Cause {
    if e.kind() == redis::ErrorKind::AuthenticationFailed
        || matches!(e.code(), Some("NOAUTH" | "WRONGPASS"))
    {
        return Cause::AuthFailed;
    }
    if e.code() == Some("OOM") {
        return Cause::OutOfMemory;
    }
    // EMFILE is errno 24 on Linux and macOS.
    let io = std::error::Error::source(e).and_then(|s| s.downcast_ref::<std::io::Error>());
    if io.and_then(std::io::Error::raw_os_error) == Some(24) {
        return Cause::TooManyOpenFiles;
    }
    if e.is_connection_refusal() {
        Cause::Refused
    } else if e.is_timeout() {
        Cause::Timeout
    } else if e.is_io_error() || e.is_connection_dropped() {
        Cause::ConnectionLost
    } else if e.code().is_some() || matches!(e.kind(), redis::ErrorKind::Server(_)) {
        Cause::Reply
    } else {
        Cause::Other
    }
}

impl StoreError {
    /// Why it failed.
    pub fn cause(&self) -> Cause {
        match self {
            StoreError::Connect { source, .. } | StoreError::Command { source, .. } => {
                cause_of(source)
            }
            StoreError::NotSent { .. } => Cause::ConnectionLost,
            StoreError::BadUrl(_) | StoreError::Unexpected { .. } => Cause::Other,
        }
    }

    /// True when the command may have been applied although no answer came back: it was sent,
    /// then the answer timed out or the connection broke. For a write, the buyer's outcome is
    /// `unknown` and its units are in doubt. Error replies and unsent commands changed nothing.
    pub fn in_doubt(&self) -> bool {
        matches!(self, StoreError::Command { .. })
            && matches!(self.cause(), Cause::Timeout | Cause::ConnectionLost)
    }

    /// True when Redis itself is unreachable (not one bad reply): the engine stops a run early.
    pub fn is_outage(&self) -> bool {
        matches!(
            self.cause(),
            Cause::Refused | Cause::ConnectionLost | Cause::AuthFailed | Cause::TooManyOpenFiles
        )
    }

    /// A short message fit for one buyer's audit line (no chain, no URL).
    pub fn short(&self) -> String {
        match self {
            StoreError::Command { op, .. } if self.cause() == Cause::Timeout => format!(
                "{op}: Redis did not answer within {} s",
                RESPONSE_TIMEOUT.as_secs()
            ),
            StoreError::Command { op, .. } if self.cause() == Cause::ConnectionLost => {
                format!("{op}: connection to Redis lost")
            }
            other => other.to_string(),
        }
    }

    /// The error reply's code, e.g. `"NOSCRIPT"` or a script's own `"INVALID_QTY"`.
    pub fn reply_code(&self) -> Option<&str> {
        match self {
            StoreError::Command { source, .. } => source.code(),
            _ => None,
        }
    }

    /// The error reply's text after its code.
    pub fn reply_detail(&self) -> Option<&str> {
        match self {
            StoreError::Command { source, .. } => source.detail(),
            _ => None,
        }
    }
}

/// A handle on one Redis deployment. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    client: Client,
}

impl Store {
    /// Parse the URL; does not connect yet.
    pub fn open(url: &str) -> Result<Self, StoreError> {
        Ok(Store {
            client: Client::open(url).map_err(StoreError::BadUrl)?,
        })
    }

    /// `host:port/db`, never the password: safe to log.
    pub fn display_addr(&self) -> String {
        let info = self.client.get_connection_info();
        format!("{}/{}", info.addr(), info.redis_settings().db())
    }

    /// Open one connection (one "app server").
    pub async fn connect(&self) -> Result<RedisConn, StoreError> {
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT));
        let inner = self
            .client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|source| StoreError::Connect {
                addr: self.display_addr(),
                source,
            })?;
        Ok(RedisConn {
            inner,
            sent: Arc::new(AtomicU64::new(0)),
            broken: Arc::new(AtomicBool::new(false)),
            turnstile: None,
        })
    }

    /// One PING on a fresh connection (to see whether a Redis answers at all).
    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.connect().await?;
        ping(&mut conn).await
    }

    /// Open one connection and name it (`CLIENT SETNAME`), so `CLIENT LIST` on the Redis
    /// side shows which run and app server it belongs to. The naming request is setup, not
    /// a buyer's, so it is not counted in [`RedisConn::requests_sent`].
    pub async fn connect_named(&self, name: &str) -> Result<RedisConn, StoreError> {
        let mut conn = self.connect().await?;
        redis::cmd("CLIENT")
            .arg("SETNAME")
            .arg(name)
            .query_async::<()>(&mut conn.inner)
            .await
            .map_err(|source| StoreError::Command {
                op: "CLIENT SETNAME",
                source,
            })?;
        Ok(conn)
    }

    /// Open the `n` app servers' connections of run `run_id`, concurrently, named
    /// `oversold:{run_id}:app-{k}`.
    pub async fn connect_fleet(&self, run_id: &str, n: u32) -> Result<Vec<RedisConn>, StoreError> {
        let names: Vec<String> = (0..n).map(|k| app_server_name(run_id, k)).collect();
        futures_util::future::try_join_all(names.iter().map(|name| self.connect_named(name))).await
    }
}

/// One app server's connection to Redis. Cloning it shares the same TCP connection
/// (requests from many buyers are pipelined on it), which is how a real app server talks to
/// Redis.
///
/// It counts the requests it sends (a pipeline counts once), so what a buyer reports as its
/// round trips can be checked against what really went out. Once it has broken it stays
/// broken: later commands fail at once without being sent, so they are known not to have
/// been applied (the redis crate's multiplexed connection never reconnects by itself).
#[derive(Clone)]
pub struct RedisConn {
    inner: MultiplexedConnection,
    sent: Arc<AtomicU64>,
    broken: Arc<AtomicBool>,
    turnstile: Option<Arc<Turnstile>>,
}

impl RedisConn {
    /// The same connection, every command of which waits at `turnstile` (step-through mode).
    pub fn with_turnstile(mut self, turnstile: Arc<Turnstile>) -> Self {
        self.turnstile = Some(turnstile);
        self
    }

    /// Requests sent on this connection (and its clones) so far.
    pub fn requests_sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    /// True once a request on it has failed with a broken connection.
    pub fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Relaxed)
    }

    /// Send one command and decode its reply. Every Redis request in this module goes through
    /// here (or [`RedisConn::pipeline`]), so the counting and the broken flag cannot be skipped.
    async fn query<T: FromRedisValue>(
        &mut self,
        op: &'static str,
        cmd: &redis::Cmd,
    ) -> Result<T, StoreError> {
        if self.is_broken() {
            return Err(StoreError::NotSent { op });
        }
        if let Some(t) = self.turnstile.clone() {
            let command = turnstile::describe(cmd.args_iter().map(arg_bytes));
            return self
                .through_turnstile(&t, command, op, cmd.query_async(&mut self.inner.clone()))
                .await;
        }
        self.sent.fetch_add(1, Ordering::Relaxed);
        let reply = cmd.query_async(&mut self.inner).await;
        self.check(op, reply)
    }

    /// Send a pipeline (one round trip) and decode its replies.
    async fn pipeline<T: FromRedisValue>(
        &mut self,
        op: &'static str,
        pipe: &redis::Pipeline,
    ) -> Result<T, StoreError> {
        if self.is_broken() {
            return Err(StoreError::NotSent { op });
        }
        if let Some(t) = self.turnstile.clone() {
            let mut parts: Vec<String> = pipe
                .cmd_iter()
                .map(|c| turnstile::describe(c.args_iter().map(arg_bytes)))
                .collect();
            if pipe.is_transaction() {
                parts.insert(0, "MULTI".into());
                parts.push("EXEC".into());
            }
            let command = parts.join(" · ");
            return self
                .through_turnstile(&t, command, op, pipe.query_async(&mut self.inner.clone()))
                .await;
        }
        self.sent.fetch_add(1, Ordering::Relaxed);
        let reply = pipe.query_async(&mut self.inner).await;
        self.check(op, reply)
    }

    /// Step-through mode: wait for the visitor's click, send, report the reply as Redis sent
    /// it, then decode it as usual.
    async fn through_turnstile<T: FromRedisValue>(
        &mut self,
        t: &Turnstile,
        command: String,
        op: &'static str,
        send: impl std::future::Future<Output = Result<Value, RedisError>>,
    ) -> Result<T, StoreError> {
        t.wait(command.clone()).await;
        self.sent.fetch_add(1, Ordering::Relaxed);
        let reply = send.await;
        let shown = match &reply {
            Ok(v) => turnstile::show(v),
            Err(e) => e.to_string(),
        };
        t.passed(command, shown);
        let value = self.check(op, reply)?;
        T::from_redis_value(value).map_err(|e| StoreError::Unexpected {
            op,
            detail: e.to_string(),
        })
    }

    fn check<T>(&self, op: &'static str, reply: Result<T, RedisError>) -> Result<T, StoreError> {
        reply.map_err(|source| {
            if cause_of(&source) == Cause::ConnectionLost {
                self.broken.store(true, Ordering::Relaxed);
            }
            StoreError::Command { op, source }
        })
    }
}

fn arg_bytes(arg: redis::Arg<&[u8]>) -> Vec<u8> {
    match arg {
        redis::Arg::Simple(b) => b.to_vec(),
        _ => b"?".to_vec(), // a SCAN cursor: never sent by this project
    }
}

/// The `CLIENT SETNAME` of run `run_id`'s app server `k`.
pub fn app_server_name(run_id: &str, k: u32) -> String {
    format!("oversold:{run_id}:app-{k}")
}

/// `PING`, expecting `PONG`.
pub async fn ping(conn: &mut RedisConn) -> Result<(), StoreError> {
    let reply: String = conn.query("PING", &redis::cmd("PING")).await?;
    if reply == "PONG" {
        Ok(())
    } else {
        Err(StoreError::Unexpected {
            op: "PING",
            detail: reply,
        })
    }
}
