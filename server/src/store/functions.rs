//! The `oversold_v2` Redis Function library (`lua/reserve_function.lua`): loading it without
//! ever replacing someone else's, and calling it with `FCALL`.
//!
//! Functions live in each server's memory, so on a Redis Cluster the library is loaded on
//! every master, one by one (each may already have it, or have someone else's).

use std::collections::HashMap;

use super::cluster::Route;
use super::scripts::RESERVE_FUNCTION;
use super::stock::{ReserveReply, reserve_reply};
use super::{RedisConn, RunKeys, StoreError};

/// The library's name, as its first line declares it. Versioned, so a later release with
/// different code gets a new name instead of replacing this one under running clients.
pub const LIBRARY: &str = "oversold_v2";
/// The function the library registers.
pub const RESERVE: &str = "oversold_v2_reserve";

/// Why the library could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Talking to Redis failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A library with our name but other code is loaded: we did not write it, so we leave it.
    #[error(
        "a different library named {LIBRARY} is already loaded in this Redis; \
         refusing to replace code this server did not write"
    )]
    Foreign,
    /// Every try found the library there at `FUNCTION LOAD` and gone at `FUNCTION LIST`:
    /// something keeps flushing Functions.
    #[error(
        "the {LIBRARY} library was flushed between loading and checking it, {LOAD_TRIES} times in a row"
    )]
    KeptVanishing,
}

/// What [`load`] did, and the requests it took (1, or 2 when it had to look at a library
/// of the same name, more when a flush made it load again; on a cluster, that for each
/// master).
pub struct Loaded {
    /// Loaded (or already there and ours), or why not.
    pub result: Result<(), LoadError>,
    /// Requests sent.
    pub round_trips: u32,
}

/// Make sure our library is loaded: `FUNCTION LOAD` (never `REPLACE`). If a library of that
/// name is there already, it must be byte for byte ours, or nothing is touched. On a
/// cluster, on every master in turn, stopping at the first that fails.
pub async fn load(conn: &mut RedisConn) -> Loaded {
    let Some(masters) = conn.masters() else {
        return load_on(conn, Route::Auto).await;
    };
    let mut round_trips = 0;
    for master in &masters {
        let loaded = load_on(conn, Route::Node(master)).await;
        round_trips += loaded.round_trips;
        if loaded.result.is_err() {
            return Loaded {
                result: loaded.result,
                round_trips,
            };
        }
    }
    Loaded {
        result: Ok(()),
        round_trips,
    }
}

/// How often [`load_on`] loads again when the library vanished between its `FUNCTION LOAD`
/// and its `FUNCTION LIST` (a `FUNCTION FLUSH` in between: the chaos button, a test).
const LOAD_TRIES: u32 = 3;

/// [`load`] on one server. "Already exists" is checked against the code that is there; a
/// library that is gone by the time we look was flushed in between, not someone else's, so
/// we load again (a foreign library is only ever one we *saw*).
async fn load_on(conn: &mut RedisConn, route: Route<'_>) -> Loaded {
    let load = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg(RESERVE_FUNCTION.source)
        .to_owned();
    let mut round_trips = 0;
    let mut last_vanished = false;
    for _ in 0..LOAD_TRIES {
        round_trips += 1;
        match conn
            .query_routed::<String>("FUNCTION LOAD", &load, route)
            .await
        {
            Ok(_) => return loaded(Ok(()), round_trips),
            // "ERR Library 'oversold_v2' already exists": check whose it is below.
            Err(e)
                if e.reply_detail()
                    .is_some_and(|d| d.contains("already exists")) => {}
            Err(e) => return loaded(Err(e.into()), round_trips),
        }
        round_trips += 1;
        match loaded_code_on(conn, route).await {
            Ok(Some(code)) if code == RESERVE_FUNCTION.source => {
                return loaded(Ok(()), round_trips);
            }
            Ok(Some(_)) => return loaded(Err(LoadError::Foreign), round_trips),
            Ok(None) => last_vanished = true, // flushed between the two calls: again
            Err(e) => return loaded(Err(e.into()), round_trips),
        }
    }
    debug_assert!(last_vanished);
    loaded(Err(LoadError::KeptVanishing), round_trips)
}

fn loaded(result: Result<(), LoadError>, round_trips: u32) -> Loaded {
    Loaded {
        result,
        round_trips,
    }
}

/// The code of the loaded library named [`LIBRARY`], if any (on a cluster: on one node).
/// Only tests ask (the server checks the code inside [`load`]), so only they compile it.
#[cfg(feature = "test-support")]
pub async fn loaded_code(conn: &mut RedisConn) -> Result<Option<String>, StoreError> {
    loaded_code_on(conn, Route::Auto).await
}

async fn loaded_code_on(
    conn: &mut RedisConn,
    route: Route<'_>,
) -> Result<Option<String>, StoreError> {
    let list = redis::cmd("FUNCTION")
        .arg("LIST")
        .arg("LIBRARYNAME")
        .arg(LIBRARY)
        .arg("WITHCODE")
        .to_owned();
    let libraries: Vec<HashMap<String, redis::Value>> =
        conn.query_routed("FUNCTION LIST", &list, route).await?;
    // LIBRARYNAME is a pattern: keep the exact name only.
    for lib in libraries {
        let name: Option<String> = lib
            .get("library_name")
            .and_then(|v| redis::from_redis_value_ref(v).ok());
        if name.as_deref() == Some(LIBRARY) {
            return Ok(lib
                .get("library_code")
                .and_then(|v| redis::from_redis_value_ref(v).ok()));
        }
    }
    Ok(None)
}

/// `FCALL oversold_v2_reserve 1 stock qty`: the reserve contract, as a Redis Function. Takes a
/// raw `qty` so contract tests can send bad input; buyers call [`reserve`].
pub async fn reserve_raw(
    conn: &mut RedisConn,
    keys: &RunKeys,
    qty: &str,
) -> Result<ReserveReply, StoreError> {
    let cmd = redis::cmd("FCALL")
        .arg(RESERVE)
        .arg(1)
        .arg(keys.stock_key())
        .arg(qty)
        .to_owned();
    let reply: Vec<i64> = conn.query("FCALL oversold_v2_reserve", &cmd).await?;
    reserve_reply("FCALL oversold_v2_reserve", &reply)
}

/// `FCALL oversold_v2_reserve` for `qty` units.
pub async fn reserve(
    conn: &mut RedisConn,
    keys: &RunKeys,
    qty: u32,
) -> Result<ReserveReply, StoreError> {
    reserve_raw(conn, keys, &qty.to_string()).await
}

/// True when Redis answered that the function does not exist (never loaded, or removed by
/// `FUNCTION FLUSH` or a restart without persistence).
pub fn is_missing(e: &StoreError) -> bool {
    e.reply_detail()
        .is_some_and(|d| d.starts_with("Function not found"))
}

/// `FUNCTION FLUSH`: drop every loaded library, as an operator (or a restart without
/// persistence) would. Tests and the fault suite use it.
pub async fn flush(conn: &mut RedisConn) -> Result<(), StoreError> {
    conn.query("FUNCTION FLUSH", redis::cmd("FUNCTION").arg("FLUSH"))
        .await
}

/// `FUNCTION DELETE` our library (tests use it to start from a clean slate).
pub async fn delete(conn: &mut RedisConn) -> Result<(), StoreError> {
    conn.query(
        "FUNCTION DELETE",
        redis::cmd("FUNCTION").arg("DELETE").arg(LIBRARY),
    )
    .await
}
