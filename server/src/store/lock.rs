//! The per-SKU lock: taken with `SET lock token NX PX ttl`, given back with
//! `release_lock.lua` (delete only if it still holds our token).

use std::time::Duration;

use super::scripts::{self, CallFailed, Called};
use super::{RedisConn, RunKeys, StoreError};

/// Try to take the run's lock: `SET lock token NX PX ttl`. True when this caller now holds it.
pub async fn try_lock(
    conn: &mut RedisConn,
    keys: &RunKeys,
    token: &str,
    ttl: Duration,
) -> Result<bool, StoreError> {
    let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
    let cmd = redis::cmd("SET")
        .arg(&keys.lock)
        .arg(token)
        .arg("NX")
        .arg("PX")
        .arg(ttl_ms)
        .to_owned();
    let reply: Option<String> = conn.query("SET lock NX PX", &cmd).await?;
    Ok(reply.is_some())
}

/// Release the run's lock with `release_lock.lua`: deletes it only if it still holds
/// `token`. True when it did; false when the lock had expired or belonged to someone else.
pub async fn release(
    conn: &mut RedisConn,
    keys: &RunKeys,
    token: &str,
) -> Result<Called<bool>, CallFailed> {
    release_raw(conn, &keys.lock, token).await
}

/// [`release`] on any key with any token, for the contract tests.
pub async fn release_raw(
    conn: &mut RedisConn,
    key: &str,
    token: &str,
) -> Result<Called<bool>, CallFailed> {
    let called: Called<i64> = scripts::call(
        conn,
        "release_lock.lua",
        &scripts::RELEASE_LOCK,
        &[key],
        token,
    )
    .await?;
    Ok(Called {
        reply: called.reply == 1,
        round_trips: called.round_trips,
    })
}
