//! Everything that knows Redis: key names, connections, and the scripts.
//!
//! Strategies never build a key or a command themselves; they call the small
//! operations here. That keeps the key layout (one hash tag per run, so a future
//! Redis Cluster keeps each run on one slot) in one place.

use std::sync::LazyLock;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, RedisError};

/// One app server's connection. Cloning it shares the same TCP connection
/// (requests from many buyers are pipelined on it), which is how a real app
/// server talks to Redis.
pub type Conn = MultiplexedConnection;

/// How long one request may wait for its answer before the buyer reports an error.
/// Without it, a Redis that stops answering (but keeps the socket open) would hang a run.
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(3);
/// How long opening a connection may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Every key a run creates expires after this, even if the server crashes mid-run.
pub const RUN_KEY_TTL_SECS: u64 = 600;

/// The Lua sources, embedded at compile time so the binary and the page show the same text.
pub const RESERVE_LUA: &str = include_str!("../../lua/reserve.lua");
/// Compare-and-delete for the `lock` strategy's per-SKU lock.
pub const RELEASE_LOCK_LUA: &str = include_str!("../../lua/release_lock.lua");
/// The `oversold` Redis Function library (the reserve contract, loaded by `FUNCTION LOAD`).
pub const RESERVE_FUNCTION_LUA: &str = include_str!("../../lua/reserve_function.lua");
/// The function `reserve_function.lua` registers.
const RESERVE_FUNCTION: &str = "oversold_reserve";

/// `lua/reserve.lua` as a `redis::Script`: sent by `EVALSHA`, and reloaded transparently
/// when Redis answers `NOSCRIPT` (after `SCRIPT FLUSH` or a restart).
static RESERVE: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(RESERVE_LUA));
/// `lua/release_lock.lua`, by `EVALSHA` with the same transparent reload.
static RELEASE_LOCK: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(RELEASE_LOCK_LUA));

/// Every Lua file the server runs, as `(file name, source)`, for the `hello` frame.
pub fn lua_sources() -> Vec<(&'static str, &'static str)> {
    vec![
        ("reserve.lua", RESERVE_LUA),
        ("release_lock.lua", RELEASE_LOCK_LUA),
        ("reserve_function.lua", RESERVE_FUNCTION_LUA),
    ]
}

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
    /// A command failed.
    #[error("{op} failed: {source}")]
    Command {
        /// Which operation.
        op: &'static str,
        /// The cause.
        #[source]
        source: RedisError,
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

impl StoreError {
    fn command(op: &'static str) -> impl FnOnce(RedisError) -> StoreError {
        move |source| StoreError::Command { op, source }
    }

    /// A short message fit for one buyer's audit line (no chain, no URL).
    pub fn short(&self) -> String {
        match self {
            StoreError::Command { op, source } if source.is_timeout() => {
                format!(
                    "{op}: Redis did not answer within {} s",
                    RESPONSE_TIMEOUT.as_secs()
                )
            }
            StoreError::Command { op, source }
                if source.is_io_error() || source.is_connection_dropped() =>
            {
                format!("{op}: connection to Redis lost")
            }
            other => other.to_string(),
        }
    }

    /// True when Redis answered that the called Function does not exist (the library was
    /// never loaded, or `FUNCTION FLUSH` / a restart removed it).
    pub fn is_function_missing(&self) -> bool {
        match self {
            StoreError::Command { source, .. } => source
                .detail()
                .is_some_and(|d| d.starts_with("Function not found")),
            _ => false,
        }
    }
}

/// The keys of one run. All share the hash tag `{run-ID}` so they live in one Cluster slot.
#[derive(Debug, Clone)]
pub struct RunKeys {
    stock: String,
    lock: String,
}

impl RunKeys {
    /// Keys for the run `run_id` (e.g. `r-1a2b3c`).
    pub fn new(run_id: &str) -> Self {
        let tag = format!("oversold:{{{run_id}}}");
        RunKeys {
            stock: format!("{tag}:stock"),
            lock: format!("{tag}:lock"),
        }
    }

    /// The stock counter's key, for logs and tests.
    pub fn stock_key(&self) -> &str {
        &self.stock
    }

    /// The per-SKU lock's key, for logs and tests.
    pub fn lock_key(&self) -> &str {
        &self.lock
    }

    fn all(&self) -> [&str; 2] {
        [&self.stock, &self.lock]
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
    pub async fn connect(&self) -> Result<Conn, StoreError> {
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT));
        self.client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|source| StoreError::Connect {
                addr: self.display_addr(),
                source,
            })
    }

    /// Open `n` separate connections, concurrently.
    pub async fn connect_fleet(&self, n: u32) -> Result<Vec<Conn>, StoreError> {
        let attempts = (0..n).map(|_| self.connect());
        futures_util::future::try_join_all(attempts).await
    }

    /// One PING on a fresh connection.
    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.connect().await?;
        ping(&mut conn).await
    }
}

/// `PING`, expecting `PONG`.
pub async fn ping(conn: &mut Conn) -> Result<(), StoreError> {
    let reply: String = redis::cmd("PING")
        .query_async(conn)
        .await
        .map_err(StoreError::command("PING"))?;
    if reply == "PONG" {
        Ok(())
    } else {
        Err(StoreError::Unexpected {
            op: "PING",
            detail: reply,
        })
    }
}

/// Put `stock` units on the shelf for a run (`SET key stock EX ttl`).
pub async fn init_stock(conn: &mut Conn, keys: &RunKeys, stock: u32) -> Result<(), StoreError> {
    redis::cmd("SET")
        .arg(&keys.stock)
        .arg(stock)
        .arg("EX")
        .arg(RUN_KEY_TTL_SECS)
        .query_async::<()>(conn)
        .await
        .map_err(StoreError::command("SET stock"))
}

/// `GET` the stock counter; a missing key reads as `None`.
pub async fn read_stock(conn: &mut Conn, keys: &RunKeys) -> Result<Option<i64>, StoreError> {
    redis::cmd("GET")
        .arg(&keys.stock)
        .query_async(conn)
        .await
        .map_err(StoreError::command("GET stock"))
}

/// `DECRBY` the stock counter; returns the value after.
pub async fn decr_by(conn: &mut Conn, keys: &RunKeys, qty: u32) -> Result<i64, StoreError> {
    redis::cmd("DECRBY")
        .arg(&keys.stock)
        .arg(qty)
        .query_async(conn)
        .await
        .map_err(StoreError::command("DECRBY stock"))
}

/// What `reserve.lua` answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReserveReply {
    /// True when the units were taken.
    pub reserved: bool,
    /// The stock the script read.
    pub before: i64,
    /// The stock after (equal to `before` when nothing was taken).
    pub after: i64,
}

/// Run `reserve.lua` with a raw `qty` argument. Takes a string so the contract tests can
/// send what a buggy client might (`"0"`, `"-1"`, `"abc"`); the engine calls
/// [`reserve_atomic`].
pub async fn reserve_raw(
    conn: &mut Conn,
    keys: &RunKeys,
    qty: &str,
) -> Result<ReserveReply, StoreError> {
    let reply: Vec<i64> = RESERVE
        .key(&keys.stock)
        .arg(qty)
        .invoke_async(conn)
        .await
        .map_err(StoreError::command("reserve.lua"))?;
    reserve_reply("reserve.lua", &reply)
}

/// Decode the `{flag, before, after}` reply shared by `reserve.lua` and `oversold_reserve`.
fn reserve_reply(op: &'static str, reply: &[i64]) -> Result<ReserveReply, StoreError> {
    match *reply {
        [flag @ (0 | 1), before, after] => Ok(ReserveReply {
            reserved: flag == 1,
            before,
            after,
        }),
        _ => Err(StoreError::Unexpected {
            op,
            detail: format!("{reply:?}"),
        }),
    }
}

/// Run `reserve.lua` for `qty` units.
pub async fn reserve_atomic(
    conn: &mut Conn,
    keys: &RunKeys,
    qty: u32,
) -> Result<ReserveReply, StoreError> {
    reserve_raw(conn, keys, &qty.to_string()).await
}

/// Delete every key of a run. Only ever named keys: nothing global is flushed.
pub async fn remove_run(conn: &mut Conn, keys: &RunKeys) -> Result<(), StoreError> {
    redis::cmd("DEL")
        .arg(&keys.all()[..])
        .query_async::<()>(conn)
        .await
        .map_err(StoreError::command("DEL run keys"))
}

/// Drop the server's script cache, as an operator (or a restart) would. Tests use it to
/// prove the `lua` strategy reloads its script.
pub async fn flush_script_cache(conn: &mut Conn) -> Result<(), StoreError> {
    redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async::<()>(conn)
        .await
        .map_err(StoreError::command("SCRIPT FLUSH"))
}

/// Does this key exist? (Tests check a run cleaned up after itself.)
pub async fn key_exists(conn: &mut Conn, key: &str) -> Result<bool, StoreError> {
    redis::cmd("EXISTS")
        .arg(key)
        .query_async(conn)
        .await
        .map_err(StoreError::command("EXISTS"))
}

/// Write a raw value into a run's stock key (contract tests use it to plant bad data).
pub async fn set_stock_raw(conn: &mut Conn, keys: &RunKeys, raw: &str) -> Result<(), StoreError> {
    redis::cmd("SET")
        .arg(&keys.stock)
        .arg(raw)
        .arg("EX")
        .arg(RUN_KEY_TTL_SECS)
        .query_async::<()>(conn)
        .await
        .map_err(StoreError::command("SET stock"))
}

/// `SET` the stock counter to `value`, keeping the key's TTL (`SET key value KEEPTTL`).
/// An unconditional overwrite: the `naive_set` strategy uses it to show a lost update.
pub async fn overwrite_stock(
    conn: &mut Conn,
    keys: &RunKeys,
    value: i64,
) -> Result<(), StoreError> {
    redis::cmd("SET")
        .arg(&keys.stock)
        .arg(value)
        .arg("KEEPTTL")
        .query_async::<()>(conn)
        .await
        .map_err(StoreError::command("SET stock KEEPTTL"))
}

/// `INCRBY` the stock counter; returns the value after.
pub async fn incr_by(conn: &mut Conn, keys: &RunKeys, qty: u32) -> Result<i64, StoreError> {
    redis::cmd("INCRBY")
        .arg(&keys.stock)
        .arg(qty)
        .query_async(conn)
        .await
        .map_err(StoreError::command("INCRBY stock"))
}

/// `WATCH` the stock counter on this connection: the next `EXEC` on it is discarded if
/// anyone writes the key in between. Only meaningful on a connection one buyer holds.
pub async fn watch_stock(conn: &mut Conn, keys: &RunKeys) -> Result<(), StoreError> {
    redis::cmd("WATCH")
        .arg(&keys.stock)
        .query_async::<()>(conn)
        .await
        .map_err(StoreError::command("WATCH stock"))
}

/// `UNWATCH`: forget every key this connection watches.
pub async fn unwatch(conn: &mut Conn) -> Result<(), StoreError> {
    redis::cmd("UNWATCH")
        .query_async::<()>(conn)
        .await
        .map_err(StoreError::command("UNWATCH"))
}

/// `MULTI`, `DECRBY stock qty`, `EXEC`, sent as one pipeline. `Some(stock after)` when the
/// transaction ran; `None` when `EXEC` answered nil because a watched key changed.
pub async fn exec_decr_by(
    conn: &mut Conn,
    keys: &RunKeys,
    qty: u32,
) -> Result<Option<i64>, StoreError> {
    let ran: Option<(i64,)> = redis::pipe()
        .atomic()
        .cmd("DECRBY")
        .arg(&keys.stock)
        .arg(qty)
        .query_async(conn)
        .await
        .map_err(StoreError::command("MULTI/DECRBY/EXEC"))?;
    Ok(ran.map(|(after,)| after))
}

/// Try to take the run's lock: `SET lock token NX PX ttl`. True when this caller now holds it.
pub async fn try_lock(
    conn: &mut Conn,
    keys: &RunKeys,
    token: &str,
    ttl: Duration,
) -> Result<bool, StoreError> {
    let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
    let reply: Option<String> = redis::cmd("SET")
        .arg(&keys.lock)
        .arg(token)
        .arg("NX")
        .arg("PX")
        .arg(ttl_ms)
        .query_async(conn)
        .await
        .map_err(StoreError::command("SET lock NX PX"))?;
    Ok(reply.is_some())
}

/// Release the run's lock with `release_lock.lua`: deletes it only if it still holds
/// `token`. True when it did; false when the lock had expired or belonged to someone else.
pub async fn release_lock(
    conn: &mut Conn,
    keys: &RunKeys,
    token: &str,
) -> Result<bool, StoreError> {
    let deleted: i64 = RELEASE_LOCK
        .key(&keys.lock)
        .arg(token)
        .invoke_async(conn)
        .await
        .map_err(StoreError::command("release_lock.lua"))?;
    Ok(deleted == 1)
}

/// `FUNCTION LOAD REPLACE` the `oversold` library (`lua/reserve_function.lua`). Idempotent.
pub async fn load_functions(conn: &mut Conn) -> Result<(), StoreError> {
    redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg("REPLACE")
        .arg(RESERVE_FUNCTION_LUA)
        .query_async::<()>(conn)
        .await
        .map_err(StoreError::command("FUNCTION LOAD"))
}

/// `FCALL oversold_reserve 1 stock qty`: the reserve contract, as a Redis Function. Takes
/// a raw `qty` like [`reserve_raw`], so contract tests can send bad input.
pub async fn reserve_function_raw(
    conn: &mut Conn,
    keys: &RunKeys,
    qty: &str,
) -> Result<ReserveReply, StoreError> {
    let reply: Vec<i64> = redis::cmd("FCALL")
        .arg(RESERVE_FUNCTION)
        .arg(1)
        .arg(&keys.stock)
        .arg(qty)
        .query_async(conn)
        .await
        .map_err(StoreError::command("FCALL oversold_reserve"))?;
    reserve_reply("FCALL oversold_reserve", &reply)
}

/// `FCALL oversold_reserve` for `qty` units.
pub async fn reserve_function(
    conn: &mut Conn,
    keys: &RunKeys,
    qty: u32,
) -> Result<ReserveReply, StoreError> {
    reserve_function_raw(conn, keys, &qty.to_string()).await
}

/// `FUNCTION FLUSH`: drop every loaded library, as an operator (or a restart without
/// persistence) would. Tests use it to prove the `function` strategy reloads its library.
pub async fn flush_functions(conn: &mut Conn) -> Result<(), StoreError> {
    redis::cmd("FUNCTION")
        .arg("FLUSH")
        .query_async::<()>(conn)
        .await
        .map_err(StoreError::command("FUNCTION FLUSH"))
}
