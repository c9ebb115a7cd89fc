//! The failover, in the part Sentinel would play (see the parent module for why the run
//! plays it): two steps at fixed moments of the sale.
//!
//! 1. **The replica falls behind** ([`super::replica_stops_at`]): its process is frozen
//!    (`SIGSTOP`) and the primary drops its link (`CLIENT KILL TYPE replica`), as it would on
//!    its own after `repl-timeout` (60 s by default). Both are needed: a frozen replica alone
//!    loses nothing on loopback, because the kernel keeps what the primary sent in the
//!    replica's socket and the replica applies it when it wakes. What the primary writes
//!    after the link is gone reaches no one.
//! 2. **The primary dies, the replica is promoted** ([`super::primary_dies_at`]): the buyers'
//!    connections are held (an app server waits for the new primary, as a client of
//!    Sentinel would), the primary is killed (`SIGKILL`), the replica thawed; once it has
//!    read what was left in its socket and seen its link go down, `REPLICAOF NO ONE`
//!    promotes it. The old primary is started again (empty: no persistence) as the new
//!    primary's replica, as Sentinel reconfigures a returning primary, and once it has caught
//!    up (with `min_replicas`, the new primary gets the same rule) the app servers get
//!    connections to the new primary. Without a replica, `WAIT 1` could never confirm an
//!    order again, and `min-replicas-to-write 1` would refuse them all.

use std::sync::Arc;
use std::time::{Duration, Instant};

use oversold_protocol::Epoch;
use tokio::sync::RwLock;
use tokio_util::sync::CancellationToken;

use super::Fleet;
use super::pair::Pair;
use crate::gate::Turn;
use crate::store::{RedisConn, RunKeys, Store, failover, stock};
use crate::strategy::failover::Guard;

/// How long the thawed replica may take to notice its link is gone.
const LINK_DOWN_LIMIT: Duration = Duration::from_secs(3);
/// How often it is asked.
const LINK_POLL: Duration = Duration::from_millis(2);
/// How long the old primary, back as a replica, may take to catch up (under the store's
/// 3 s response timeout, so `WAIT` answers before the client gives up).
const RESYNC_LIMIT_MS: u32 = 2_500;

/// What the failover works on.
pub struct Manager {
    /// The old primary's address: it comes back as a replica.
    pub primary: Store,
    /// The replica's address: the buyers' new connections.
    pub replica: Store,
    /// The replica's port, for the old primary's `REPLICAOF`.
    pub replica_port: u16,
    /// The strategy's guard: `min_replicas` carries its rule to the new primary.
    pub guard: Guard,
    /// The buyers' connections, replaced at the promotion.
    pub fleet: Arc<RwLock<Fleet>>,
    /// The run's id (names the new connections).
    pub run_id: String,
    /// The run's keys.
    pub keys: RunKeys,
    /// The manager's connection to the primary, opened before the sale.
    pub primary_admin: RedisConn,
    /// The manager's connection to the replica, opened before the sale.
    pub replica_admin: RedisConn,
    /// Connections to open on the promoted replica.
    pub app_servers: u32,
}

/// What the failover did, and when.
#[derive(Debug, Clone)]
pub struct FailedOver {
    /// When the replica was frozen and its link dropped.
    pub replica_stopped: Instant,
    /// When the primary was killed.
    pub primary_killed: Instant,
    /// When the app servers had connections to the promoted replica.
    pub promoted: Instant,
    /// The old primary's counter just before the kill.
    pub primary_stock_at_kill: i64,
    /// The replica's counter when promoted.
    pub replica_stock_at_promotion: i64,
}

impl Manager {
    /// Run both steps on `pair` at their moments after the gate opens. `None` when the run was
    /// cancelled first; an error says which step failed (the pair is gone then).
    pub async fn fail_over(
        mut self,
        pair: Pair,
        turn: Turn,
        stop_at: Duration,
        kill_at: Duration,
        cancel: CancellationToken,
    ) -> Option<Result<(FailedOver, Pair), String>> {
        let second = turn.clone();
        turn.arrive(stop_at, &cancel).await?;
        let replica_stopped = Instant::now();
        let pair = match self.replica_falls_behind(pair).await {
            Ok(pair) => pair,
            Err(e) => return Some(Err(e)),
        };
        second.arrive(kill_at, &cancel).await?;
        Some(self.promote(pair, replica_stopped).await)
    }

    /// Step 1: freeze the replica, drop its link. The buyers are held meanwhile (as in step
    /// 2): between the freeze and the dropped link the primary still counts its replica as
    /// good (`min-replicas-max-lag` is whole seconds), so a write landing there would be
    /// confirmed under `min_replicas` and then lost (measured once in ten under CI's load).
    async fn replica_falls_behind(&mut self, pair: Pair) -> Result<Pair, String> {
        let fleet = self.fleet.clone();
        let _held = fleet.write().await;
        let pair = pair.freeze_replica().await?;
        failover::drop_replicas(&mut self.primary_admin)
            .await
            .map_err(|e| format!("CLIENT KILL TYPE replica: {e}"))?;
        Ok(pair)
    }

    /// Step 2: hold the buyers, kill the primary, thaw and promote the replica, hand the
    /// buyers connections to it.
    async fn promote(
        mut self,
        pair: Pair,
        replica_stopped: Instant,
    ) -> Result<(FailedOver, Pair), String> {
        let mut fleet = self.fleet.write().await;
        let primary_stock_at_kill = stock::get(&mut self.primary_admin, &self.keys)
            .await
            .map_err(|e| format!("reading the primary's stock: {e}"))?
            .ok_or("the primary had no stock key")?;
        let primary_killed = Instant::now();
        let pair = pair.kill_primary().await?;
        let pair = pair.thaw_replica().await?;
        // REPLICAOF NO ONE would drop the link at once, and with it whatever the replica had
        // not read yet: wait until it has read to the end and seen the link close.
        let deadline = Instant::now() + LINK_DOWN_LIMIT;
        loop {
            let down = failover::link_is_down(&mut self.replica_admin)
                .await
                .map_err(|e| format!("INFO replication on the replica: {e}"))?;
            if down {
                break;
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "the replica still saw its primary after {} ms",
                    LINK_DOWN_LIMIT.as_millis()
                ));
            }
            tokio::time::sleep(LINK_POLL).await;
        }
        failover::promote(&mut self.replica_admin)
            .await
            .map_err(|e| format!("REPLICAOF NO ONE: {e}"))?;
        let replica_stock_at_promotion = stock::get(&mut self.replica_admin, &self.keys)
            .await
            .map_err(|e| format!("reading the promoted replica's stock: {e}"))?
            .ok_or("the promoted replica had no stock key")?;
        let pair = pair.restart_old_primary().await?;
        let mut returning = self
            .primary
            .connect()
            .await
            .map_err(|e| format!("connecting to the restarted old primary: {e}"))?;
        failover::follow(&mut returning, self.replica_port)
            .await
            .map_err(|e| format!("REPLICAOF on the old primary: {e}"))?;
        let synced = failover::wait_for_replicas(&mut self.replica_admin, 1, RESYNC_LIMIT_MS)
            .await
            .map_err(|e| format!("WAIT for the old primary to catch up: {e}"))?;
        if synced < 1 {
            return Err(format!(
                "the old primary had not caught up with the new one after {RESYNC_LIMIT_MS} ms"
            ));
        }
        if let Guard::MinReplicas { max_lag_s } = self.guard {
            failover::require_replicas(&mut self.replica_admin, 1, max_lag_s)
                .await
                .map_err(|e| format!("min-replicas-to-write on the new primary: {e}"))?;
        }
        let conns = self
            .replica
            .connect_fleet(&self.run_id, self.app_servers)
            .await
            .map_err(|e| format!("connecting to the promoted replica: {e}"))?;
        let retired: u64 = fleet.conns.iter().map(RedisConn::requests_sent).sum();
        fleet.retired_requests += retired;
        fleet.conns = conns;
        fleet.life = Epoch {
            n: 1,
            began_at: Some(replica_stock_at_promotion),
            evicted: false,
        };
        let promoted = Instant::now();
        drop(fleet);
        Ok((
            FailedOver {
                replica_stopped,
                primary_killed,
                promoted,
                primary_stock_at_kill,
                replica_stock_at_promotion,
            },
            pair,
        ))
    }
}
