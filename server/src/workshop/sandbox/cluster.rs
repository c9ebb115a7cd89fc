//! The cluster sandbox: a private three-master Redis Cluster for the exercises judged on one
//! (`cluster_tags`), started by this process for one check at a time, with the sandbox's
//! limits and users on every node.
//!
//! ```text
//! ClusterSandbox::start()   a cluster ready for the first check (three nodes, ~1 s)
//! sandbox.lease(wait)       ClusterLease: that cluster, a fresh tag, per node an admin and
//!                           the check's student (ACL user: keys oversold:TAG:*, with no
//!                           braces, STUDENT_COMMANDS only), and the admin's cluster client
//! lease.guard(node, b, w)   the check under the watchdog, which watches `node` (the master
//!                           serving the submission's keys: the only one that runs its Lua)
//!                           and restarts that node when the sandbox's would be restarted
//! drop(lease)               all three nodes killed; the next lease starts a new cluster
//! ```
//!
//! Every node is started like the single sandbox (`busy-reply-threshold`, `maxmemory`,
//! `prlimit --as`, `DEBUG` off, loopback, the users on stdin), plus `cluster-enabled`. The
//! differences, on purpose: the student's keys are `oversold:TAG:*` rather than
//! `oversold:{TAG}:*`, so the submission's own hash tag decides the slot; and a restart
//! brings back one node with its `nodes.conf` (same identity, same slots, no data), which
//! rejoins the cluster before the check's stores reach it again.

use std::time::Duration;

use tokio::sync::{Mutex, MutexGuard};

use super::process::{Secret, acl_lines, arguments, off_the_runtime, open, url};
use super::watchdog::{self, Watched};
use super::{ADDRESS_SPACE, Incident, SandboxError};
use crate::private_cluster::{MASTERS, PrivateCluster};
use crate::private_redis::{ExtraConfig, PrivateRedisError};
use crate::store::Store;
use crate::store::cluster::slot_of;
use crate::store::sandbox::cluster_key_prefix;

/// The cluster sandbox: one private cluster at a time, lent to one check at a time, and the
/// next one starting while a check runs (a cluster takes about 2 s to start, a check about
/// 1 s: without it every check after the first would wait for a start).
pub struct ClusterSandbox {
    slot: Mutex<Option<RunningCluster>>,
    /// The cluster for the next check, starting in the background.
    next: std::sync::Mutex<Option<Starting>>,
}

/// A cluster starting in the background.
type Starting = tokio::task::JoinHandle<Result<RunningCluster, SandboxError>>;

impl ClusterSandbox {
    /// Start the cluster for the first check, so what is missing shows now.
    pub async fn start() -> Result<ClusterSandbox, SandboxError> {
        let first = RunningCluster::start().await?;
        Ok(ClusterSandbox {
            slot: Mutex::new(Some(first)),
            next: std::sync::Mutex::new(None),
        })
    }

    /// The cluster started in the background for this check, if one was and it came up.
    async fn started_ahead(&self) -> Option<RunningCluster> {
        let starting = self.next.lock().ok()?.take()?;
        let mut cluster = starting.await.ok()?.ok()?;
        cluster.is_alive().then_some(cluster)
    }

    /// Exclusive use for one check; waits at most `wait` for the previous check, then takes
    /// the ready cluster or starts a fresh one.
    pub async fn lease(&self, wait: Duration) -> Result<ClusterLease<'_>, SandboxError> {
        let mut turn = tokio::time::timeout(wait, self.slot.lock())
            .await
            .map_err(|_| SandboxError::Busy { waited: wait })?;
        let ready = turn
            .take()
            .and_then(|mut ready| ready.is_alive().then_some(ready));
        let running = match ready {
            Some(ready) => ready,
            None => match self.started_ahead().await {
                Some(warm) => warm,
                None => RunningCluster::start().await?,
            },
        };
        // The next check's cluster starts now, while this one's check runs.
        if let Ok(mut next) = self.next.lock()
            && next.is_none()
        {
            *next = Some(tokio::spawn(RunningCluster::start()));
        }
        tracing::debug!(tag = %running.tag, "workshop cluster sandbox leased");
        Ok(ClusterLease {
            _turn: turn,
            running,
        })
    }
}

impl std::fmt::Debug for ClusterSandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterSandbox").finish_non_exhaustive()
    }
}

/// One check's hold on the cluster sandbox; dropping it kills the three nodes (their keys,
/// users and scripts go with them).
pub struct ClusterLease<'a> {
    _turn: MutexGuard<'a, Option<RunningCluster>>,
    running: RunningCluster,
}

impl ClusterLease<'_> {
    /// The check's tag: its keys are `oversold:TAG:*`.
    pub fn tag(&self) -> &str {
        &self.running.tag
    }

    /// The whole cluster as its admin, through a cluster client.
    pub fn admin(&self) -> &Store {
        &self.running.admin
    }

    /// Every master: its address, its admin and the check's student on it, alone.
    pub fn nodes(&self) -> &[ClusterNode] {
        &self.running.nodes
    }

    /// The node that serves `key`'s slot.
    pub fn node_serving(&self, key: &str) -> usize {
        self.running
            .cluster
            .as_ref()
            .map_or(0, |c| c.node_serving(slot_of(key)))
    }

    /// Node `i`'s process id, while it runs.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.running.cluster.as_ref()?.pid(i)
    }

    /// Run `work` under the watchdog, watching node `node`: see [`super::Lease::guard`].
    pub async fn guard<F: std::future::Future>(
        &mut self,
        node: usize,
        budget: Duration,
        work: F,
    ) -> (Option<F::Output>, Vec<Incident>) {
        let mut watched = Node {
            running: &mut self.running,
            i: node.min(MASTERS - 1),
        };
        watchdog::guard(&mut watched, budget, work).await
    }
}

/// One master of a check's cluster, as the judge reaches it.
#[derive(Debug, Clone)]
pub struct ClusterNode {
    /// `host:port`, as the cluster's slot map names it.
    pub addr: String,
    /// Its admin, alone (`SCRIPT LOAD`, `MONITOR`, `SLOWLOG`).
    pub admin: Store,
    /// The check's student on it, alone.
    pub student: Store,
}

/// A check's cluster: the nodes, the tag, the users' stores.
struct RunningCluster {
    /// `None` only while a node restarts, or after a restart failed.
    cluster: Option<PrivateCluster>,
    tag: String,
    admin: Store,
    nodes: Vec<ClusterNode>,
}

impl RunningCluster {
    async fn start() -> Result<RunningCluster, SandboxError> {
        use rand::Rng;
        let tag = format!("ws-{:06x}", rand::rng().random::<u32>() & 0xff_ffff);
        let admin_password = Secret::fresh();
        let student_password = Secret::fresh();
        let extra = ExtraConfig {
            args: arguments(),
            secret_lines: Some(acl_lines(
                &cluster_key_prefix(&tag),
                &tag,
                &admin_password,
                &student_password,
            )),
            address_space: Some(ADDRESS_SPACE),
        };
        let password = admin_password.expose().to_string();
        let cluster =
            off_the_runtime(move || PrivateCluster::start_with(extra, Some(password))).await?;
        let mut nodes = Vec::with_capacity(MASTERS);
        let mut seeds = Vec::with_capacity(MASTERS);
        for i in 0..MASTERS {
            let port = cluster.port(i);
            seeds.push(url(port, "default", &admin_password));
            nodes.push(ClusterNode {
                addr: format!("127.0.0.1:{port}"),
                admin: open(port, "default", &admin_password)?,
                student: open(port, &tag, &student_password)?,
            });
        }
        let admin = Store::open_cluster(&seeds).map_err(SandboxError::Store)?;
        Ok(RunningCluster {
            cluster: Some(cluster),
            tag,
            admin,
            nodes,
        })
    }

    fn is_alive(&mut self) -> bool {
        self.cluster
            .as_mut()
            .is_some_and(PrivateCluster::is_running)
    }
}

/// The node of a check's cluster that the watchdog watches.
struct Node<'a> {
    running: &'a mut RunningCluster,
    i: usize,
}

impl Watched for Node<'_> {
    fn tag(&self) -> &str {
        &self.running.tag
    }

    fn admin(&self) -> &Store {
        &self.running.nodes[self.i].admin
    }

    /// Any node's end: the check needs all three (its setup writes to every master).
    fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.running.cluster.as_mut()?.exit_status().map(|(_, s)| s)
    }

    /// Kill node `i` (and any node that died) and bring it back with its `nodes.conf`, on
    /// its port, so the stores reach it again; wait until the cluster is whole.
    async fn restart(&mut self) -> Result<(), SandboxError> {
        let Some(mut cluster) = self.running.cluster.take() else {
            return Err(SandboxError::Start(PrivateRedisError::DidNotStart {
                port: 0,
                reason: "the cluster was lost in an earlier restart".into(),
            }));
        };
        let i = self.i;
        let cluster = off_the_runtime(move || {
            let mut which = vec![i];
            which.extend(cluster.dead_nodes());
            which.sort_unstable();
            which.dedup();
            cluster.restart_nodes(&which)?;
            Ok(cluster)
        })
        .await?;
        self.running.cluster = Some(cluster);
        Ok(())
    }
}
