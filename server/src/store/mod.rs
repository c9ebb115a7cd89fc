//! Everything that knows Redis: connections, key names, commands and the Lua scripts.
//!
//! Strategies never build a key or a command themselves; they call the small operations in
//! [`stock`], [`lock`], [`fence`] and [`scripts`]. That keeps the key layout (one hash tag
//! per run, so a Redis Cluster keeps each run on one slot) and every command in one place.
//!
//! A deployment is one Redis or a Redis Cluster; nothing outside this module can tell which.
//! [`Store`] and [`RedisConn`] each hold an enum inside (a single node's client and
//! connection, or the cluster's), with the same methods, the same counting and the same
//! "broken stays broken" rule; [`cluster`] has what only a cluster needs.
//!
//! # Layout
//! - this file: [`Store`] (one Redis deployment), [`RedisConn`] (one app server's
//!   connection, which counts the requests it sends), [`StoreError`] and its [`Cause`].
//! - [`cluster`]: the cluster client's settings, the slot map read at connect time (which
//!   node serves a key), and what "up" means for a cluster.
//! - [`keys`]: the keys of one run, and how its stock is laid out ([`StockLayout`]).
//! - [`scripts`]: the Lua files, and how a script is called (`EVALSHA`, falling back to `EVAL`).
//! - [`stock`]: putting stock on the shelf, reading it back, the plain commands buyers send.
//! - [`lock`]: the per-SKU lock (`SET NX PX`, compare-and-delete).
//! - [`fence`]: the fenced lock (a token per holder) and the stock reads and writes that
//!   refuse a stale token.
//! - [`functions`]: the `oversold_v2` Redis Function library (`FUNCTION LOAD`, `FCALL`).
//! - [`holds`]: the checkout scenario: holds (reserve, confirm, release), the reaper,
//!   reconciliation, the run's counters, and `CLIENT PAUSE` on a Redis we own.
//! - [`notify`]: `holds_notify`'s holds that Redis expires (a key with PX and its shadow),
//!   and the subscription to `expired` keyspace events that returns them.
//! - [`ledger`]: the Redis-side settlement ledger, when PostgreSQL is not available.
//! - [`shelves`]: the `cart` and `warehouses` scenarios: one counter per SKU or warehouse,
//!   the cart and warehouse scripts, and the saga's once-only compensation.
//! - [`rooms`]: a room's record, its event stream, its open sale's lease, who bought, and
//!   the chaos buttons' commands.
//! - [`busy`]: the `busy_script` scenario: the slow client's long jobs, `SCRIPT KILL`,
//!   `FUNCTION KILL`, `SHUTDOWN NOSAVE`, and the snapshot a restart comes back to.
//! - [`durability`]: the `durability` scenario: its keys, the snapshots (`SAVE`, `BGSAVE`
//!   and waiting for it).
//! - [`eviction`]: the `eviction` scenario: `reserve_strict.lua`, the page cache's writes,
//!   `CONFIG SET maxmemory`, and `used_memory`/`evicted_keys` from `INFO`.
//! - [`failover`]: the `failover` scenario: `WAIT`, `min-replicas-to-write`, dropping a
//!   replica's link, and promoting a replica.
//! - [`sandbox`]: the workshop sandbox's `EVAL` of a student's script and `SCRIPT KILL`.
//!
//! A few operations exist only for the integration tests (planting a raw value or a
//! thousand holds, asking whether a key is left, reading a key's name or the loaded library's
//! code): they sit behind the `test-support` feature, which only the tests turn on, so the
//! server binary cannot call them by mistake.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use oversold_protocol::{RedisCall, RedisCommand, RedisReply};
use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::cluster_async::ClusterConnection;
use redis::{AsyncConnectionConfig, Client, FromRedisValue, RedisError, RedisFuture, Value};

use cluster::{ClusterStore, Route, Topology};
use turnstile::Turnstile;

pub mod busy;
pub mod cluster;
pub mod durability;
pub mod eviction;
pub mod exercise;
pub mod failover;
pub mod fence;
pub mod functions;
pub mod holds;
pub mod keys;
pub mod ledger;
pub mod lock;
pub mod notify;
pub mod rooms;
pub mod sandbox;
pub mod scripts;
pub mod shelves;
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
    /// The cluster cannot serve a slot (or, for a health check, every slot): its master does
    /// not answer, or a node says the cluster is down. The request was not applied.
    #[error("{op}: the Redis Cluster is not whole: {detail}")]
    ClusterDown {
        /// Which operation.
        op: &'static str,
        /// What showed it.
        detail: String,
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
    /// A Redis Cluster cannot serve a slot: its master is down (the connection to it is
    /// gone, another node redirects with `MOVED`), or a node answers `CLUSTERDOWN`.
    ClusterDown,
    /// A Redis Cluster refused a request whose keys hash to different slots (`CROSSSLOT`),
    /// or the client refused to send it: nothing ran. Not an outage: the request is wrong
    /// for a cluster (the lesson of keys that share no hash tag).
    CrossSlot,
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
            Cause::ClusterDown => "a cluster node is down or its slots are unserved",
            Cause::CrossSlot => "keys in different cluster slots (CROSSSLOT)",
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
    // The client's own kind, whether Redis said CROSSSLOT or the cluster client found the
    // keys' slots differ before sending.
    if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::CrossSlot) {
        return Cause::CrossSlot;
    }
    // On our clusters slots never move, so a redirect means the slot's master is unreachable
    // from this client (the node that answered points at it); CLUSTERDOWN and TRYAGAIN mean
    // the cluster itself has noticed. Our cluster client never retries (see `cluster`).
    if matches!(
        e.code(),
        Some("MOVED" | "ASK" | "CLUSTERDOWN" | "TRYAGAIN" | "MASTERDOWN")
    ) || e.kind() == redis::ErrorKind::ClusterConnectionNotFound
    {
        return Cause::ClusterDown;
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
            StoreError::ClusterDown { .. } => Cause::ClusterDown,
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
            Cause::Refused
                | Cause::ConnectionLost
                | Cause::ClusterDown
                | Cause::AuthFailed
                | Cause::TooManyOpenFiles
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

/// A handle on one Redis deployment: a single Redis, or a Redis Cluster. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    deployment: Deployment,
}

#[derive(Debug, Clone)]
enum Deployment {
    /// One `redis-server`.
    Single(Client),
    /// A Redis Cluster, reached through any of its nodes. (Boxed: the cluster client is
    /// more than twice the size of a single one.)
    Cluster(Arc<ClusterStore>),
}

impl Store {
    /// Parse the URL of a single Redis; does not connect yet.
    pub fn open(url: &str) -> Result<Self, StoreError> {
        Ok(Store {
            deployment: Deployment::Single(Client::open(url).map_err(StoreError::BadUrl)?),
        })
    }

    /// A Redis Cluster reached through `nodes` (`host:port` each, or `redis://` URLs): any
    /// one of them is enough, the client discovers the rest. Does not connect yet.
    pub fn open_cluster(nodes: &[String]) -> Result<Self, StoreError> {
        Ok(Store {
            deployment: Deployment::Cluster(Arc::new(ClusterStore::open(nodes)?)),
        })
    }

    /// Sockets one [`RedisConn`] opens: 1 on a single Redis; on a cluster, one per node (the
    /// nodes named at start, as an estimate). The connection budget counts runs with it.
    pub fn sockets_per_connection(&self) -> usize {
        match &self.deployment {
            Deployment::Single(_) => 1,
            Deployment::Cluster(cluster) => cluster.seed_count().max(1),
        }
    }

    /// True for a Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        matches!(self.deployment, Deployment::Cluster(_))
    }

    /// `host:port/db`, or `cluster host:port,...`; never the password: safe to log.
    pub fn display_addr(&self) -> String {
        match &self.deployment {
            Deployment::Single(client) => {
                let info = client.get_connection_info();
                format!("{}/{}", info.addr(), info.redis_settings().db())
            }
            Deployment::Cluster(cluster) => cluster.display(),
        }
    }

    /// A `MONITOR` connection (a single Redis only): every command Redis runs, in its order,
    /// as one line each. The workshop's judge reads a check's tape from it.
    pub async fn monitor(&self) -> Result<redis::aio::Monitor, StoreError> {
        match &self.deployment {
            Deployment::Single(client) => {
                client
                    .get_async_monitor()
                    .await
                    .map_err(|source| StoreError::Connect {
                        addr: self.display_addr(),
                        source,
                    })
            }
            Deployment::Cluster(_) => Err(StoreError::Unexpected {
                op: "MONITOR",
                detail: "a cluster has no single MONITOR".into(),
            }),
        }
    }

    /// Open one connection (one "app server"). On a cluster, that is a cluster connection
    /// of its own (its own connection to every node), with the slot map as it is now.
    pub async fn connect(&self) -> Result<RedisConn, StoreError> {
        self.connect_within(RESPONSE_TIMEOUT).await
    }

    /// [`Store::connect`], waiting at most `response_timeout` for each answer on a single
    /// Redis (a cluster connection keeps its own settings).
    async fn connect_within(&self, response_timeout: Duration) -> Result<RedisConn, StoreError> {
        let link = match &self.deployment {
            Deployment::Single(client) => {
                let config = AsyncConnectionConfig::new()
                    .set_connection_timeout(Some(CONNECT_TIMEOUT))
                    .set_response_timeout(Some(response_timeout));
                let conn = client
                    .get_multiplexed_async_connection_with_config(&config)
                    .await
                    .map_err(|source| StoreError::Connect {
                        addr: self.display_addr(),
                        source,
                    })?;
                Link::Single(conn)
            }
            Deployment::Cluster(cluster) => {
                let (conn, topology) = cluster.connect().await?;
                Link::Cluster {
                    conn,
                    topology: Arc::new(topology),
                }
            }
        };
        Ok(RedisConn {
            link,
            sent: Arc::new(AtomicU64::new(0)),
            broken: Arc::new(AtomicBool::new(false)),
            turnstile: None,
        })
    }

    /// On a fresh connection, see whether the deployment answers at all: a `PING` on a
    /// single Redis; on a cluster, [`ping`]'s whole-cluster check.
    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.connect().await?;
        ping(&mut conn).await
    }

    /// Open one connection and name it (`CLIENT SETNAME`), so `CLIENT LIST` on the Redis
    /// side shows which run and app server it belongs to (on a cluster, on every node). The
    /// naming request is setup, not a buyer's, so it is not counted in
    /// [`RedisConn::requests_sent`].
    pub async fn connect_named(&self, name: &str) -> Result<RedisConn, StoreError> {
        self.connect_named_within(name, RESPONSE_TIMEOUT).await
    }

    /// [`Store::connect_named`], waiting at most `response_timeout` for each answer. A
    /// `redlock` buyer's connection to a lock master: a vote that comes later than that is
    /// no vote (the request ends with a timeout, and the connection stays usable).
    pub async fn connect_named_within(
        &self,
        name: &str,
        response_timeout: Duration,
    ) -> Result<RedisConn, StoreError> {
        let mut conn = self.connect_within(response_timeout).await?;
        redis::cmd("CLIENT")
            .arg("SETNAME")
            .arg(name)
            .query_async::<()>(&mut conn.link)
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

/// The connection under a [`RedisConn`]: to one Redis, or to a cluster (with the slot map
/// read when it opened).
#[derive(Clone)]
enum Link {
    Single(MultiplexedConnection),
    Cluster {
        conn: ClusterConnection,
        topology: Arc<Topology>,
    },
}

/// Lets the redis crate's `query_async` run on either kind of connection.
impl ConnectionLike for Link {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a redis::Cmd) -> RedisFuture<'a, Value> {
        match self {
            Link::Single(conn) => conn.req_packed_command(cmd),
            Link::Cluster { conn, .. } => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipe: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Link::Single(conn) => conn.req_packed_commands(pipe, offset, count),
            Link::Cluster { conn, .. } => conn.req_packed_commands(pipe, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Link::Single(conn) => conn.get_db(),
            Link::Cluster { conn, .. } => conn.get_db(),
        }
    }
}

impl Link {
    /// Send one command to `route` (a single Redis takes everything itself).
    async fn send(&mut self, cmd: &redis::Cmd, route: Route<'_>) -> Result<Value, RedisError> {
        match self {
            Link::Cluster { conn, .. } => cluster::send(conn, cmd, route).await,
            single @ Link::Single(_) => cmd.query_async(single).await,
        }
    }
}

/// One app server's connection to Redis. Cloning it shares the same TCP connection
/// (requests from many buyers are pipelined on it), which is how a real app server talks to
/// Redis. On a cluster it is one cluster connection: one such TCP connection per node, and
/// each request goes to the master of its key's slot.
///
/// It counts the requests it sends (a pipeline counts once), so what a buyer reports as its
/// round trips can be checked against what really went out. Once it has broken it stays
/// broken: later commands fail at once without being sent, so they are known not to have
/// been applied (the redis crate's multiplexed connection never reconnects by itself). On a
/// cluster the crate would reconnect a lost node connection in the background; we still
/// treat the app server's whole connection as lost, for the same reason, and because a
/// reconnected node connection has silently dropped any `WATCH` it held.
#[derive(Clone)]
pub struct RedisConn {
    link: Link,
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

    /// On a cluster, the `host:port` of the master serving `key`, from the slot map read when
    /// this connection opened; `None` on a single Redis.
    pub fn node_of(&self, key: &str) -> Option<String> {
        self.topology()?.master_of(key).map(str::to_string)
    }

    /// True on a cluster connection.
    fn is_cluster(&self) -> bool {
        matches!(self.link, Link::Cluster { .. })
    }

    /// On a cluster, every master in the slot map; `None` on a single Redis.
    fn masters(&self) -> Option<Vec<String>> {
        self.topology().map(Topology::masters)
    }

    fn topology(&self) -> Option<&Topology> {
        match &self.link {
            Link::Cluster { topology, .. } => Some(topology),
            Link::Single(_) => None,
        }
    }

    /// Send one command and decode its reply. Every Redis request in this module goes through
    /// here, [`RedisConn::query_routed`] or [`RedisConn::pipeline`], so the counting and the
    /// broken flag cannot be skipped.
    async fn query<T: FromRedisValue>(
        &mut self,
        op: &'static str,
        cmd: &redis::Cmd,
    ) -> Result<T, StoreError> {
        self.query_routed(op, cmd, Route::Auto).await
    }

    /// [`RedisConn::query`], sent to `route` on a cluster (a single Redis ignores it).
    async fn query_routed<T: FromRedisValue>(
        &mut self,
        op: &'static str,
        cmd: &redis::Cmd,
        route: Route<'_>,
    ) -> Result<T, StoreError> {
        if self.is_broken() {
            return Err(StoreError::NotSent { op });
        }
        if let Some(t) = self.turnstile.clone() {
            let call = turnstile::command(cmd.args_iter().map(arg_bytes)).into();
            let mut link = self.link.clone();
            return self
                .through_turnstile(&t, call, op, async move { link.send(cmd, route).await })
                .await;
        }
        self.sent.fetch_add(1, Ordering::Relaxed);
        let reply = self.link.send(cmd, route).await;
        let value = self.check(op, reply)?;
        decode(op, value)
    }

    /// Send a pipeline (one round trip) and decode its replies. On a cluster every command in
    /// it must hash to one slot.
    async fn pipeline<T: FromRedisValue>(
        &mut self,
        op: &'static str,
        pipe: &redis::Pipeline,
    ) -> Result<T, StoreError> {
        if self.is_broken() {
            return Err(StoreError::NotSent { op });
        }
        if let Some(t) = self.turnstile.clone() {
            let commands: Vec<RedisCommand> = pipe
                .cmd_iter()
                .map(|c| turnstile::command(c.args_iter().map(arg_bytes)))
                .collect();
            let call = if pipe.is_transaction() {
                RedisCall::Transaction(commands)
            } else {
                RedisCall::Pipeline(commands)
            };
            return self
                .through_turnstile(&t, call, op, pipe.query_async(&mut self.link.clone()))
                .await;
        }
        self.sent.fetch_add(1, Ordering::Relaxed);
        let reply = pipe.query_async(&mut self.link).await;
        self.check(op, reply)
    }

    /// Step-through mode: wait for the visitor's click, send, report the reply as Redis sent
    /// it, then decode it as usual.
    async fn through_turnstile<T: FromRedisValue>(
        &mut self,
        t: &Turnstile,
        call: RedisCall,
        op: &'static str,
        send: impl std::future::Future<Output = Result<Value, RedisError>>,
    ) -> Result<T, StoreError> {
        t.wait(call.clone()).await;
        self.sent.fetch_add(1, Ordering::Relaxed);
        let reply = send.await;
        let answer = match &reply {
            Ok(v) => turnstile::reply(v),
            Err(e) => RedisReply::Error(e.to_string()),
        };
        t.passed(call, answer);
        let value = self.check(op, reply)?;
        decode(op, value)
    }

    fn check<T>(&self, op: &'static str, reply: Result<T, RedisError>) -> Result<T, StoreError> {
        reply.map_err(|source| match cause_of(&source) {
            Cause::ConnectionLost => {
                self.broken.store(true, Ordering::Relaxed);
                StoreError::Command { op, source }
            }
            // Not applied: the request never reached a master that serves its slot.
            Cause::ClusterDown => StoreError::ClusterDown {
                op,
                detail: cluster::explain(&source),
            },
            _ => StoreError::Command { op, source },
        })
    }
}

fn decode<T: FromRedisValue>(op: &'static str, value: Value) -> Result<T, StoreError> {
    T::from_redis_value(value).map_err(|e| StoreError::Unexpected {
        op,
        detail: e.to_string(),
    })
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

/// Is the deployment up? On a single Redis: `PING`, expecting `PONG`. On a cluster: every
/// slot has a master, every master answers `PING`, and the cluster says `cluster_state:ok`
/// (see [`cluster`]).
pub async fn ping(conn: &mut RedisConn) -> Result<(), StoreError> {
    if conn.is_cluster() {
        return cluster::check_whole(conn).await;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossslot_is_a_cause_of_its_own_not_an_outage_and_not_in_doubt() {
        let refused = RedisError::from((
            redis::ServerErrorKind::CrossSlot.into(),
            "CROSSSLOT",
            "Keys in request don't hash to the same slot".to_string(),
        ));
        let e = StoreError::Command {
            op: "EVALSHA reserve_cart.lua",
            source: refused,
        };
        assert_eq!(e.cause(), Cause::CrossSlot);
        assert!(!e.is_outage(), "the cluster is whole; the request is wrong");
        assert!(!e.in_doubt(), "nothing ran");
        assert_eq!(e.reply_code(), Some("CROSSSLOT"));
        // Any other error reply stays a plain reply.
        let other = StoreError::Command {
            op: "GET",
            source: RedisError::from((redis::ServerErrorKind::ResponseError.into(), "WRONGTYPE")),
        };
        assert_eq!(other.cause(), Cause::Reply);
    }
}
