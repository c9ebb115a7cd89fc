//! The `failover` scenario's replication commands: `WAIT` (has a replica got my writes?),
//! `min-replicas-to-write` (refuse writes while no replica keeps up), and what the run's
//! failover manager sends: `CLIENT KILL TYPE replica` (the primary gives up on its replica),
//! `INFO replication` (has the replica seen its link go?), `REPLICAOF NO ONE` (promote) and
//! `REPLICAOF` (the old primary follows the new one).
//!
//! Sent only to the `redis-server`s a `failover` run started for itself: dropping a
//! replica's link or promoting a replica changes the whole deployment.

use super::{RedisConn, StoreError};

/// `WAIT replicas timeout_ms`: block this connection until `replicas` replicas have
/// acknowledged every write it sent before, or the timeout passes; how many had.
pub async fn wait_for_replicas(
    conn: &mut RedisConn,
    replicas: u32,
    timeout_ms: u32,
) -> Result<i64, StoreError> {
    let cmd = redis::cmd("WAIT").arg(replicas).arg(timeout_ms).to_owned();
    conn.query("WAIT", &cmd).await
}

/// `CONFIG SET min-replicas-to-write replicas min-replicas-max-lag max_lag_s`: from now on
/// the primary refuses writes (`NOREPLICAS`) unless `replicas` replicas are connected and
/// each acknowledged within the last `max_lag_s` seconds.
pub async fn require_replicas(
    conn: &mut RedisConn,
    replicas: u32,
    max_lag_s: u32,
) -> Result<(), StoreError> {
    let cmd = redis::cmd("CONFIG")
        .arg("SET")
        .arg("min-replicas-to-write")
        .arg(replicas)
        .arg("min-replicas-max-lag")
        .arg(max_lag_s)
        .to_owned();
    conn.query("CONFIG SET min-replicas-to-write", &cmd).await
}

/// True when the primary refused a write because too few replicas keep up: `NOREPLICAS`.
/// Nothing was written (inside a script, the refusal comes at its first write, and
/// `reserve.lua` writes once).
pub fn is_no_replicas(e: &StoreError) -> bool {
    e.reply_code() == Some("NOREPLICAS")
}

/// `CLIENT KILL TYPE replica`: the primary closes every replica's link; how many it closed.
/// What it wrote before this is in the replica's socket, and a stopped replica reads it
/// when it wakes; what it writes after, no replica will ever receive from it.
pub async fn drop_replicas(conn: &mut RedisConn) -> Result<i64, StoreError> {
    let cmd = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("replica")
        .to_owned();
    conn.query("CLIENT KILL TYPE replica", &cmd).await
}

/// `INFO replication` on a replica: true once its link to its primary is down
/// (`master_link_status:down`): it has read everything its primary sent before the link
/// closed.
pub async fn link_is_down(conn: &mut RedisConn) -> Result<bool, StoreError> {
    let cmd = redis::cmd("INFO").arg("replication").to_owned();
    let info: String = conn.query("INFO replication", &cmd).await?;
    Ok(info
        .lines()
        .any(|l| l.trim_end() == "master_link_status:down"))
}

/// `REPLICAOF 127.0.0.1 port`: follow the primary on that loopback port (dropping this
/// server's own data for a full copy of the primary's).
pub async fn follow(conn: &mut RedisConn, port: u16) -> Result<(), StoreError> {
    let cmd = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(port)
        .to_owned();
    conn.query("REPLICAOF", &cmd).await
}

/// `REPLICAOF NO ONE`: the replica stops following anyone and takes writes: the promotion.
pub async fn promote(conn: &mut RedisConn) -> Result<(), StoreError> {
    let cmd = redis::cmd("REPLICAOF").arg("NO").arg("ONE").to_owned();
    conn.query("REPLICAOF NO ONE", &cmd).await
}
