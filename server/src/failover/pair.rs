//! A `failover` run's two `redis-server` processes: a primary and its replica, each on a
//! free loopback port, started for the run and stopped with it (Drop; or with this process,
//! through the parent-death signal every private Redis has).
//!
//! Process signals are the point here, not Redis commands: the replica is frozen
//! (`SIGSTOP`) and thawed (`SIGCONT`), the primary is killed (`SIGKILL`). Each is a blocking
//! call of a few milliseconds, so each runs on tokio's blocking pool.

use crate::private_redis::{ExtraConfig, PrivateRedis};
use crate::shelf::ShelfError;

/// The primary and its replica. After the failover the names stay with the processes:
/// `replica` is the promoted one, `primary` the old primary, back as its replica.
pub struct Pair {
    primary: PrivateRedis,
    replica: PrivateRedis,
}

impl Pair {
    /// Start the primary, then a replica of it (`--replicaof`). The primary sends its first
    /// snapshot over the socket at once (`repl-diskless-sync-delay 0`; Redis's default waits
    /// 5 s for more replicas).
    pub async fn start() -> Result<Pair, ShelfError> {
        blocking(|| {
            let primary = PrivateRedis::start_with(ExtraConfig {
                args: vec!["--repl-diskless-sync-delay".into(), "0".into()],
                ..ExtraConfig::default()
            })
            .map_err(|e| format!("the primary: {e}"))?;
            let replica = PrivateRedis::start_with(ExtraConfig {
                args: vec![
                    "--replicaof".into(),
                    "127.0.0.1".into(),
                    primary.port().to_string(),
                    // Once promoted, it feeds the old primary the same way.
                    "--repl-diskless-sync-delay".into(),
                    "0".into(),
                ],
                ..ExtraConfig::default()
            })
            .map_err(|e| format!("the replica: {e}"))?;
            Ok(Pair { primary, replica })
        })
        .await
    }

    /// The primary's `redis://` URL.
    pub fn primary_url(&self) -> String {
        self.primary.url()
    }

    /// The replica's port.
    pub fn replica_port(&self) -> u16 {
        self.replica.port()
    }

    /// The replica's `redis://` URL.
    pub fn replica_url(&self) -> String {
        self.replica.url()
    }

    /// `SIGSTOP` the replica: it reads nothing from its link and acknowledges nothing.
    pub async fn freeze_replica(self) -> Result<Pair, String> {
        self.with(|p| {
            p.replica
                .freeze()
                .map_err(|e| format!("SIGSTOP the replica: {e}"))
        })
        .await
    }

    /// `SIGKILL` the primary: no goodbye, no last write to anyone.
    pub async fn kill_primary(self) -> Result<Pair, String> {
        self.with(|p| {
            p.primary.stop();
            Ok(())
        })
        .await
    }

    /// Start the killed primary again on its port: empty (no persistence), and a primary of
    /// nothing until told to follow the promoted replica.
    pub async fn restart_old_primary(self) -> Result<Pair, String> {
        self.with(|p| {
            p.primary
                .restart()
                .map_err(|e| format!("restarting the old primary: {e}"))
        })
        .await
    }

    /// `SIGCONT` the replica: it reads what was left in its socket, then finds the link gone.
    pub async fn thaw_replica(self) -> Result<Pair, String> {
        self.with(|p| {
            p.replica
                .thaw()
                .map_err(|e| format!("SIGCONT the replica: {e}"))
        })
        .await
    }

    /// Run `f` on the blocking pool with the pair, and hand the pair back. On an error the
    /// pair is dropped, and both processes with it: the run cannot go on.
    async fn with(
        mut self,
        f: impl FnOnce(&mut Pair) -> Result<(), String> + Send + 'static,
    ) -> Result<Pair, String> {
        tokio::task::spawn_blocking(move || f(&mut self).map(|()| self))
            .await
            .map_err(|e| format!("a failover step did not finish: {e}"))?
    }
}

async fn blocking(
    f: impl FnOnce() -> Result<Pair, String> + Send + 'static,
) -> Result<Pair, ShelfError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ShelfError::OwnRedis(e.to_string()))?
        .map_err(ShelfError::OwnRedis)
}
