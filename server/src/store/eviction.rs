//! The `eviction` scenario's commands: `reserve_strict.lua`, the page cache's writes that
//! fill memory, `CONFIG SET maxmemory`, and the two numbers read from `INFO`
//! (`used_memory`, `evicted_keys`).
//!
//! Sent only to a `redis-server` the run started for itself: a low `maxmemory` on a shared
//! Redis would evict other people's keys.

use super::keys::RUN_KEY_TTL_SECS;
use super::scripts::{self, CallFailed, Called, RESERVE_STRICT};
use super::stock::{ReserveReply, reserve_reply};
use super::{RedisConn, RunKeys, StoreError};

/// The keys of one `eviction` run: the race's stock counter and the page cache's entries,
/// all under the run's tag.
#[derive(Debug, Clone)]
pub struct EvictionKeys {
    run: RunKeys,
    cache: String,
}

impl EvictionKeys {
    /// Keys for the run `run_id`.
    pub fn new(run_id: &str) -> Self {
        let run = RunKeys::new(run_id);
        let cache = format!("{}:cache", run.tag());
        EvictionKeys { run, cache }
    }

    /// The buyers' keys (the stock counter).
    pub fn run(&self) -> &RunKeys {
        &self.run
    }

    /// The page cache's entry number `i`.
    fn cache_entry(&self, i: u32) -> String {
        format!("{}:{i}", self.cache)
    }
}

/// Run `reserve_strict.lua` on the counter `key` for `qty` units: `reserve.lua`'s replies,
/// and `STOCK_MISSING` when the counter is not there.
pub async fn reserve_strict(
    conn: &mut RedisConn,
    key: &str,
    qty: u32,
) -> Result<Called<ReserveReply>, CallFailed> {
    let called: Called<Vec<i64>> = scripts::call(
        conn,
        "reserve_strict.lua",
        &RESERVE_STRICT,
        &[key],
        qty.to_string(),
    )
    .await?;
    let round_trips = called.round_trips;
    match reserve_reply("reserve_strict.lua", &called.reply) {
        Ok(reply) => Ok(Called { reply, round_trips }),
        Err(error) => Err(CallFailed { error, round_trips }),
    }
}

/// The page cache stores entry `i`: `bytes` bytes, with a TTL like any cache entry (and
/// like every run key), so `volatile-lru` may evict it too.
pub async fn write_cache_entry(
    conn: &mut RedisConn,
    keys: &EvictionKeys,
    i: u32,
    bytes: usize,
) -> Result<(), StoreError> {
    let cmd = redis::cmd("SET")
        .arg(keys.cache_entry(i))
        .arg(vec![b'x'; bytes])
        .arg("EX")
        .arg(RUN_KEY_TTL_SECS)
        .to_owned();
    conn.query("SET cache entry", &cmd).await
}

/// The page cache reserves entry `i` of `bytes` bytes sparse: `SETRANGE` at the last byte
/// (Redis fills what lies before it with zeros), then the cache's TTL. One short command
/// that makes Redis allocate `bytes`: Redis checks memory before a command, never during
/// it, so this write alone can carry it far past `maxmemory`.
pub async fn reserve_cache_entry(
    conn: &mut RedisConn,
    keys: &EvictionKeys,
    i: u32,
    bytes: usize,
) -> Result<(), StoreError> {
    let key = keys.cache_entry(i);
    let offset = bytes.saturating_sub(1);
    conn.query::<i64>(
        "SETRANGE cache entry",
        redis::cmd("SETRANGE").arg(&key).arg(offset).arg("x"),
    )
    .await?;
    conn.query::<i64>(
        "EXPIRE cache entry",
        redis::cmd("EXPIRE").arg(&key).arg(RUN_KEY_TTL_SECS),
    )
    .await
    .map(drop)
}

/// `CONFIG SET maxmemory`: from now on the policy the server started with applies.
pub async fn set_maxmemory(conn: &mut RedisConn, bytes: u64) -> Result<(), StoreError> {
    let cmd = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(bytes)
        .to_owned();
    conn.query("CONFIG SET maxmemory", &cmd).await
}

/// `used_memory` from `INFO memory`, in bytes.
pub async fn used_memory(conn: &mut RedisConn) -> Result<u64, StoreError> {
    info_field(conn, "memory", "used_memory").await
}

/// `evicted_keys` from `INFO stats`: keys deleted for memory since the server started.
pub async fn evicted_keys(conn: &mut RedisConn) -> Result<u64, StoreError> {
    info_field(conn, "stats", "evicted_keys").await
}

async fn info_field(
    conn: &mut RedisConn,
    section: &'static str,
    field: &'static str,
) -> Result<u64, StoreError> {
    let text: String = conn.query("INFO", redis::cmd("INFO").arg(section)).await?;
    text.lines()
        .filter_map(|l| l.trim_end().split_once(':'))
        .find(|(name, _)| *name == field)
        .and_then(|(_, v)| v.parse().ok())
        .ok_or_else(|| StoreError::Unexpected {
            op: "INFO",
            detail: format!("no {field} in INFO {section}"),
        })
}

/// True when Redis refused a write because memory is full (`OOM`, under `noeviction`, or
/// when nothing is left that the policy may evict).
pub fn is_oom(e: &StoreError) -> bool {
    e.reply_code() == Some("OOM")
}

/// True when `reserve_strict.lua` found no counter.
pub fn is_stock_missing(e: &StoreError) -> bool {
    e.reply_code() == Some("STOCK_MISSING")
}

/// Delete the run's keys: the stock and the `entries` cache entries written.
pub async fn remove_run(
    conn: &mut RedisConn,
    keys: &EvictionKeys,
    entries: u32,
) -> Result<(), StoreError> {
    let mut all = keys.run.all();
    all.extend((0..entries).map(|i| keys.cache_entry(i)));
    conn.query("DEL run keys", redis::cmd("DEL").arg(all)).await
}
