//! The fenced lock: a lock whose every holder gets a fencing token, and the stock reads and
//! writes that refuse a token older than the newest the stock has seen.
//!
//! A lease-based lock ([`super::lock`]) is only exclusive while no holder stalls past its
//! lease. Fencing keeps the *stock* safe even then: a stalled holder that wakes up after
//! someone else took the lock carries an older token, and the stock turns it away. Three
//! scripts, one per atomic step:
//! - `acquire_fenced_lock.lua`: take the lock and draw the next token, together;
//! - `fenced_get.lua`: read the stock, recording the token as the newest;
//! - `fenced_decrby.lua`: take units, if no newer token has touched the stock since.
//!
//! The lock is given back with `release_lock.lua` (the lock key holds the token).

use std::time::Duration;

use super::keys::RUN_KEY_TTL_SECS;
use super::scripts::{self, CallFailed, Called};
use super::{RedisConn, RunKeys, StoreError};

/// What a fenced read or write answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fenced {
    /// Done: the stock read, or the stock after the write. The token is now the newest.
    Done(i64),
    /// Refused: the stock has seen `newest`, a newer token than the caller's. The caller's
    /// lock had expired and someone else took it; nothing changed.
    Stale {
        /// The newest token the stock has seen.
        newest: u64,
    },
}

/// Try to take the run's lock with `acquire_fenced_lock.lua`. `Some(token)` when this caller
/// now holds it for `lease`; `None` when someone else does.
pub async fn try_lock(
    conn: &mut RedisConn,
    keys: &RunKeys,
    lease: Duration,
) -> Result<Called<Option<u64>>, CallFailed> {
    let lease_ms = u64::try_from(lease.as_millis()).unwrap_or(u64::MAX).max(1);
    let args = (lease_ms, RUN_KEY_TTL_SECS);
    let called: Called<Option<u64>> = scripts::call(
        conn,
        "acquire_fenced_lock.lua",
        &scripts::ACQUIRE_FENCED_LOCK,
        &[&keys.lock, &keys.fence],
        args,
    )
    .await?;
    Ok(called)
}

/// Read the stock with `token` (`fenced_get.lua`).
pub async fn get(
    conn: &mut RedisConn,
    keys: &RunKeys,
    token: u64,
) -> Result<Called<Fenced>, CallFailed> {
    let called: Called<Vec<i64>> = scripts::call(
        conn,
        "fenced_get.lua",
        &scripts::FENCED_GET,
        &[&keys.stock, &keys.stock_fence],
        (token, RUN_KEY_TTL_SECS),
    )
    .await?;
    decode("fenced_get.lua", called)
}

/// Take `qty` units with `token` (`fenced_decrby.lua`). The check that enough is left was
/// the caller's, on what [`get`] returned with the same token.
pub async fn decr_by(
    conn: &mut RedisConn,
    keys: &RunKeys,
    token: u64,
    qty: u32,
) -> Result<Called<Fenced>, CallFailed> {
    let called: Called<Vec<i64>> = scripts::call(
        conn,
        "fenced_decrby.lua",
        &scripts::FENCED_DECRBY,
        &[&keys.stock, &keys.stock_fence],
        (token, qty, RUN_KEY_TTL_SECS),
    )
    .await?;
    decode("fenced_decrby.lua", called)
}

/// Give the lock back (`release_lock.lua`; the lock key holds the token). True when it was
/// still ours.
pub async fn release(
    conn: &mut RedisConn,
    keys: &RunKeys,
    token: u64,
) -> Result<Called<bool>, CallFailed> {
    super::lock::release(conn, keys, &token.to_string()).await
}

/// Decode the `{1, value}` / `{0, newest}` reply shared by the fenced read and write.
fn decode(op: &'static str, called: Called<Vec<i64>>) -> Result<Called<Fenced>, CallFailed> {
    let reply = match *called.reply {
        [1, value] => Ok(Fenced::Done(value)),
        [0, newest] if newest > 0 => Ok(Fenced::Stale {
            newest: newest.unsigned_abs(),
        }),
        _ => Err(StoreError::Unexpected {
            op,
            detail: format!("{:?}", called.reply),
        }),
    };
    let round_trips = called.round_trips;
    match reply {
        Ok(reply) => Ok(Called { reply, round_trips }),
        Err(error) => Err(CallFailed { error, round_trips }),
    }
}
