//! A throwaway three-master Redis Cluster on free loopback ports, owned by this process.
//!
//! The cluster twin of [`crate::private_redis`]: the tests start one to race every strategy
//! on a real cluster (and to kill a master mid-run), `oversold --private-cluster` runs any
//! command on one, and `oversold private-cluster` keeps one up for scripts. Nothing needs
//! installing beyond `redis-server`.
//!
//! Forming a cluster by hand is three steps, done here with plain commands so a student can
//! follow them in `redis-cli` (they are what `redis-cli --cluster create` does):
//! 1. start three `redis-server --cluster-enabled yes` nodes, each with its own directory
//!    (where it keeps its cluster identity in `nodes.conf`);
//! 2. give each node a third of the 16384 hash slots (`CLUSTER ADDSLOTSRANGE`) and its own
//!    config epoch, then introduce them (`CLUSTER MEET`);
//! 3. wait until every node reports `cluster_state:ok` (it knows who serves every slot).
//!
//! No replicas: a killed master's slots are unserved until it comes back. Its `nodes.conf`
//! survives [`PrivateCluster::kill`], so [`PrivateCluster::restart`] brings the same node
//! back (with empty data: there is no persistence) and the cluster recovers on its own.

use std::time::{Duration, Instant};

use crate::private_redis::{ExtraConfig, PrivateRedis, PrivateRedisError, free_port};

/// Masters in a private cluster.
pub const MASTERS: usize = 3;
/// Hash slots in every Redis Cluster.
const SLOTS: u16 = 16384;
/// How long forming (or recovering) the cluster may take before we give up.
const FORM_TIMEOUT: Duration = Duration::from_secs(30);

/// Three running cluster nodes. Dropping it kills them and removes their directories.
#[derive(Debug)]
pub struct PrivateCluster {
    nodes: Vec<PrivateRedis>,
    /// The default user's password, when the nodes were started with one (the workshop's
    /// cluster sandbox): forming and watching the cluster log in with it.
    admin_password: Option<Password>,
}

/// A password whose `Debug` shows none of it.
#[derive(Clone)]
struct Password(String);

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl PrivateCluster {
    /// Start [`MASTERS`] nodes on free ports, form the cluster and wait until it serves every
    /// slot. Retries a few times in case another process takes a port first.
    pub fn start() -> Result<Self, PrivateRedisError> {
        Self::start_with(ExtraConfig::default(), None)
    }

    /// [`PrivateCluster::start`], every node with `extra` on top of the defaults (its users
    /// on stdin, its limits), and `admin_password` for the default user when `extra` sets one.
    pub fn start_with(
        extra: ExtraConfig,
        admin_password: Option<String>,
    ) -> Result<Self, PrivateRedisError> {
        let mut last = None;
        for _ in 0..3 {
            match Self::try_start(&extra, admin_password.clone().map(Password)) {
                Ok(c) => return Ok(c),
                Err(e @ PrivateRedisError::NotInstalled) => return Err(e),
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("at least one attempt"))
    }

    fn try_start(
        extra: &ExtraConfig,
        admin_password: Option<Password>,
    ) -> Result<Self, PrivateRedisError> {
        let nodes = (0..MASTERS)
            .map(|_| PrivateRedis::start_cluster_node_with(free_port(), extra.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        let cluster = PrivateCluster {
            nodes,
            admin_password,
        };
        cluster.form()?;
        cluster.wait_until_ok()?;
        Ok(cluster)
    }

    /// `host:port` of every node, in node order: what `--redis-cluster` takes.
    pub fn seeds(&self) -> Vec<String> {
        self.nodes.iter().map(PrivateRedis::host_port).collect()
    }

    /// The seeds joined by commas, e.g. `127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002`.
    pub fn spec(&self) -> String {
        self.seeds().join(",")
    }

    /// Node `i`'s port.
    pub fn port(&self, i: usize) -> u16 {
        self.nodes[i].port()
    }

    /// Node `i`'s `redis://127.0.0.1:PORT`, for a plain connection to that node alone.
    pub fn node_url(&self, i: usize) -> String {
        self.nodes[i].url()
    }

    /// The node listening on `host_port` (as [`PrivateCluster::seeds`] spells it), if any.
    pub fn index_of(&self, host_port: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.host_port() == host_port)
    }

    /// Node `i`'s process id, while it runs.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.nodes[i].pid()
    }

    /// The first node whose process ended by itself, and how.
    pub fn exit_status(&mut self) -> Option<(usize, std::process::ExitStatus)> {
        self.nodes
            .iter_mut()
            .enumerate()
            .find_map(|(i, n)| n.exit_status().map(|status| (i, status)))
    }

    /// The nodes whose process ended by itself.
    pub fn dead_nodes(&mut self) -> Vec<usize> {
        self.nodes
            .iter_mut()
            .enumerate()
            .filter_map(|(i, n)| n.exit_status().map(|_| i))
            .collect()
    }

    /// True while every node's process runs.
    pub fn is_running(&mut self) -> bool {
        self.nodes.iter().all(PrivateRedis::is_running) && self.exit_status().is_none()
    }

    /// The node that serves hash slot `slot` (the ranges [`PrivateCluster::start`] gave out,
    /// which never move on our clusters).
    pub fn node_serving(&self, slot: u16) -> usize {
        (0..MASTERS)
            .find(|&i| {
                let (first, last) = slot_range(i);
                (first..=last).contains(&slot)
            })
            .unwrap_or(MASTERS - 1)
    }

    /// Kill node `i` at once (SIGKILL), as a crash would. Its slots stay unserved until
    /// [`PrivateCluster::restart`].
    pub fn kill(&mut self, i: usize) {
        self.nodes[i].stop();
    }

    /// Bring node `i` back on its port with its `nodes.conf` (same identity, same slots,
    /// no data), and wait until the whole cluster reports `cluster_state:ok` again.
    pub fn restart(&mut self, i: usize) -> Result<(), PrivateRedisError> {
        self.nodes[i].restart()?;
        self.wait_until_ok()
    }

    /// Kill the nodes in `which` (those still running), bring them all back as
    /// [`PrivateCluster::restart`] does, and wait once for the whole cluster.
    pub fn restart_nodes(&mut self, which: &[usize]) -> Result<(), PrivateRedisError> {
        for &i in which {
            self.nodes[i].stop();
        }
        for &i in which {
            self.nodes[i].restart()?;
        }
        self.wait_until_ok()
    }

    /// Steps 2 and 3 of the module doc, minus the wait.
    fn form(&self) -> Result<(), PrivateRedisError> {
        for (i, node) in self.nodes.iter().enumerate() {
            let (first, last) = slot_range(i);
            let mut conn = self.connect(node)?;
            // Distinct epochs, as redis-cli gives them: no two masters claim a slot with the
            // same epoch, so the nodes agree at once instead of resolving a collision.
            command(
                node,
                &mut conn,
                redis::cmd("CLUSTER").arg("SET-CONFIG-EPOCH").arg(i + 1),
            )?;
            command(
                node,
                &mut conn,
                redis::cmd("CLUSTER")
                    .arg("ADDSLOTSRANGE")
                    .arg(first)
                    .arg(last),
            )?;
        }
        let first = &self.nodes[0];
        let mut conn = self.connect(first)?;
        for other in &self.nodes[1..] {
            command(
                first,
                &mut conn,
                redis::cmd("CLUSTER")
                    .arg("MEET")
                    .arg("127.0.0.1")
                    .arg(other.port()),
            )?;
        }
        Ok(())
    }

    /// Wait until every running node says `cluster_state:ok` and knows all the others.
    pub fn wait_until_ok(&self) -> Result<(), PrivateRedisError> {
        let deadline = Instant::now() + FORM_TIMEOUT;
        loop {
            let not_ok = self.nodes.iter().find(|n| !self.cluster_ok(n));
            let Some(node) = not_ok else {
                return Ok(());
            };
            if Instant::now() > deadline {
                return Err(PrivateRedisError::DidNotStart {
                    port: node.port(),
                    reason: format!(
                        "the cluster did not reach cluster_state:ok within {} s",
                        FORM_TIMEOUT.as_secs()
                    ),
                });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl PrivateCluster {
    /// True when `node` runs and its `CLUSTER INFO` says the cluster is whole.
    fn cluster_ok(&self, node: &PrivateRedis) -> bool {
        if !node.is_running() {
            return false;
        }
        let Ok(mut conn) = self.connect(node) else {
            return false;
        };
        let info: Result<String, _> = redis::cmd("CLUSTER").arg("INFO").query(&mut conn);
        info.is_ok_and(|info| {
            info.contains("cluster_state:ok")
                && info.contains(&format!("cluster_known_nodes:{MASTERS}"))
                && info.contains(&format!("cluster_slots_ok:{SLOTS}"))
        })
    }

    /// A plain blocking connection to one node (no async runtime needed, like the readiness
    /// check in [`crate::private_redis`]), logged in as the default user when it has a
    /// password.
    fn connect(&self, node: &PrivateRedis) -> Result<redis::Connection, PrivateRedisError> {
        let failed = |e: redis::RedisError| PrivateRedisError::DidNotStart {
            port: node.port(),
            reason: e.to_string(),
        };
        let url = match &self.admin_password {
            None => node.url(),
            Some(p) => format!("redis://default:{}@{}", p.0, node.host_port()),
        };
        redis::Client::open(url)
            .map_err(failed)?
            .get_connection_with_timeout(Duration::from_secs(2))
            .map_err(failed)
    }
}

/// Node `i`'s slots, first and last: a third each, the last node taking the remainder up
/// to slot 16383.
fn slot_range(i: usize) -> (u16, u16) {
    let per_node = SLOTS / MASTERS as u16;
    let first = i as u16 * per_node;
    let last = if i + 1 == MASTERS {
        SLOTS - 1
    } else {
        first + per_node - 1
    };
    (first, last)
}

fn command(
    node: &PrivateRedis,
    conn: &mut redis::Connection,
    cmd: &redis::Cmd,
) -> Result<(), PrivateRedisError> {
    cmd.query::<()>(conn)
        .map_err(|e| PrivateRedisError::DidNotStart {
            port: node.port(),
            reason: format!("forming the cluster: {e}"),
        })
}
