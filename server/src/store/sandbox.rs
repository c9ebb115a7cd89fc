//! The workshop sandbox's commands: a student's own Lua by `EVAL`, and the watchdog's
//! `SCRIPT KILL`. Sent only to the sandbox's `redis-server` ([`crate::workshop::sandbox`]),
//! whose ACL users decide what a student's script may reach.

use redis::Value;

use super::{RedisConn, StoreError};

/// Run a student's Lua `source` by `EVAL` on `keys` with `args`, and return the reply as
/// Redis sent it. Unlike [`super::scripts::call`] there is no `EVALSHA` first: the source is
/// new each time, and the sandbox is fresh for every check.
pub async fn eval(
    conn: &mut RedisConn,
    source: &str,
    keys: &[&str],
    args: &[&str],
) -> Result<Value, StoreError> {
    let cmd = redis::cmd("EVAL")
        .arg(source)
        .arg(keys.len())
        .arg(keys)
        .arg(args)
        .to_owned();
    conn.query("EVAL (a student's script)", &cmd).await
}

/// What `SCRIPT KILL` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kill {
    /// The running script was stopped; its caller gets an error.
    Killed,
    /// No script was running (it ended on its own in the meantime).
    NotBusy,
    /// The script has written, so stopping it would leave half its work applied; Redis
    /// refuses, and only ending the server stops it.
    Unkillable,
}

/// `SCRIPT KILL`.
pub async fn script_kill(conn: &mut RedisConn) -> Result<Kill, StoreError> {
    let cmd = redis::cmd("SCRIPT").arg("KILL").to_owned();
    match conn.query::<()>("SCRIPT KILL", &cmd).await {
        Ok(()) => Ok(Kill::Killed),
        Err(e) if e.reply_code() == Some("NOTBUSY") => Ok(Kill::NotBusy),
        Err(e) if e.reply_code() == Some("UNKILLABLE") => Ok(Kill::Unkillable),
        Err(e) => Err(e),
    }
}

/// The prefix of every key a check's student may touch: `oversold:{TAG}:`. The sandbox's ACL
/// user for the check gets exactly the pattern `oversold:{TAG}:*`.
pub fn key_prefix(tag: &str) -> String {
    format!("oversold:{{{tag}}}:")
}

/// The prefix of every key a check on the cluster sandbox may touch: `oversold:TAG:`, with
/// no braces, so the hash tag in the names a submission chooses decides each key's slot.
/// The cluster's ACL user for the check gets exactly `oversold:TAG:*`.
pub fn cluster_key_prefix(tag: &str) -> String {
    format!("oversold:{tag}:")
}
