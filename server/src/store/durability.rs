//! The `durability` scenario's commands: its keys (the sale's counter, and a counter of its
//! own for the throughput burst), the snapshots (`SAVE` at set-up, `BGSAVE` mid-sale, and
//! waiting for it from `INFO persistence`), and deleting the run's keys.
//!
//! Sent only to a `redis-server` the run started for itself.

use std::time::Duration;

use super::{RedisConn, RunKeys, StoreError};

/// The keys of one `durability` run: the sale's stock counter, and the burst's counter (a
/// tag of its own, so it never shares a key with the sale).
#[derive(Debug, Clone)]
pub struct DurabilityKeys {
    run: RunKeys,
    burst: RunKeys,
}

impl DurabilityKeys {
    /// Keys for the run `run_id`.
    pub fn new(run_id: &str) -> Self {
        DurabilityKeys {
            run: RunKeys::new(run_id),
            burst: RunKeys::new(&format!("{run_id}-burst")),
        }
    }

    /// The sale's keys (the stock counter).
    pub fn run(&self) -> &RunKeys {
        &self.run
    }

    /// The throughput burst's counter.
    pub fn burst(&self) -> &RunKeys {
        &self.burst
    }
}

/// `SAVE`: write a snapshot now (the run's set-up, on `rdb`).
pub async fn save(conn: &mut RedisConn) -> Result<(), StoreError> {
    conn.query("SAVE", &redis::cmd("SAVE")).await
}

/// `BGSAVE`, then `INFO persistence` every few ms until the forked child has written the
/// snapshot (`rdb_bgsave_in_progress:0`, `rdb_last_bgsave_status:ok`). The snapshot holds
/// the data as it was at the fork, the moment `BGSAVE` ran.
pub async fn background_save(conn: &mut RedisConn, within: Duration) -> Result<(), StoreError> {
    let _: String = conn.query("BGSAVE", &redis::cmd("BGSAVE")).await?;
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let info: String = conn
            .query("INFO persistence", redis::cmd("INFO").arg("persistence"))
            .await?;
        let field = |name: &str| {
            info.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .map(str::trim)
        };
        if field("rdb_bgsave_in_progress") == Some("0") {
            return match field("rdb_last_bgsave_status") {
                Some("ok") => Ok(()),
                other => Err(StoreError::Unexpected {
                    op: "BGSAVE",
                    detail: format!("rdb_last_bgsave_status {other:?}"),
                }),
            };
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(StoreError::Unexpected {
                op: "BGSAVE",
                detail: format!("still writing after {} ms", within.as_millis()),
            });
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Delete the run's keys (the sale's and the burst's).
pub async fn remove_run(conn: &mut RedisConn, keys: &DurabilityKeys) -> Result<(), StoreError> {
    let mut all = keys.run.all();
    all.extend(keys.burst.all());
    conn.query("DEL run keys", redis::cmd("DEL").arg(all)).await
}
