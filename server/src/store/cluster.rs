//! What only a Redis Cluster needs: the cluster client's settings, the slot map a connection
//! reads when it opens (which master serves a key), routing a command to one node, and
//! what "up" means for a cluster.
//!
//! A cluster splits the key space into 16384 hash slots; each master serves some of them.
//! A key's slot is the CRC16 of its hash tag (the part in `{…}`), so every key of a run
//! (`oversold:{run-ID}:…`) lands on one slot, one node, and a script that touches several of
//! them never crosses nodes. `sharded` is the exception by design: each bucket has its own
//! tag, so the buckets spread over the nodes (see [`super::keys`]).
//!
//! The redis crate's cluster client routes a keyed command to the master of its slot, over
//! one multiplexed connection per node. Each [`super::RedisConn`] on a cluster is its own
//! cluster connection, with its own node connections: an app server's `WATCH` state lives
//! on its own connection to the slot's node, exactly as on a single Redis.
//!
//! The crate does not say which node answered a request, so we read the slot map once, when
//! a connection opens (`CLUSTER SHARDS`), and look a key's master up in it
//! ([`Topology::master_of`], with [`slot_of`], Redis's own CRC16 rule). On our clusters slots
//! never move while a run lasts, so the map read at the start of a run stays true for it.

use std::collections::HashMap;
use std::fmt;

use redis::cluster::{ClusterClient, ClusterClientBuilder};
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{Route as SlotRoute, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
use redis::{RedisError, Value};

use super::{CONNECT_TIMEOUT, RESPONSE_TIMEOUT, RedisConn, StoreError};

/// A Redis Cluster, reached through the seed nodes it was given.
#[derive(Clone)]
pub(super) struct ClusterStore {
    client: ClusterClient,
    seeds: Vec<String>,
}

impl fmt::Debug for ClusterStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterStore")
            .field("seeds", &self.seeds)
            .finish()
    }
}

impl ClusterStore {
    /// A client for the cluster behind `nodes` (`host:port` each, or a `redis://` URL).
    /// Does not connect yet.
    ///
    /// The client never retries a request (`retries(0)`): the crate would otherwise send a
    /// write again after a timeout or a dropped connection, when the first one may have
    /// been applied (a buyer would take its units twice), and would keep a buyer waiting
    /// through backoffs while a master is down. A failed request fails at once, like on a
    /// single Redis, and the buyer reports it (`unknown` when it may have been applied).
    pub(super) fn open(nodes: &[String]) -> Result<Self, StoreError> {
        let seeds: Vec<String> = nodes
            .iter()
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
            .collect();
        if seeds.is_empty() {
            return Err(StoreError::BadUrl(RedisError::from((
                redis::ErrorKind::InvalidClientConfig,
                "no cluster node given (expected HOST:PORT[,HOST:PORT...])",
            ))));
        }
        let urls: Vec<String> = seeds.iter().map(|s| as_url(s)).collect();
        let client = ClusterClientBuilder::new(urls)
            .retries(0)
            .connection_timeout(CONNECT_TIMEOUT)
            .response_timeout(RESPONSE_TIMEOUT)
            .build()
            .map_err(StoreError::BadUrl)?;
        Ok(ClusterStore { client, seeds })
    }

    /// How many nodes the operator named: what one app server's cluster connection is
    /// budgeted at (it opens a socket to every node it learns of; the seeds are the estimate).
    pub(super) fn seed_count(&self) -> usize {
        self.seeds.len()
    }

    /// `cluster 127.0.0.1:7000,127.0.0.1:7001`: the seeds, never a password.
    pub(super) fn display(&self) -> String {
        let hosts: Vec<&str> = self
            .seeds
            .iter()
            .map(|s| s.rsplit('@').next().unwrap_or(s))
            .collect();
        format!("cluster {}", hosts.join(","))
    }

    /// A new cluster connection (its own connection to every node), and the slot map.
    pub(super) async fn connect(&self) -> Result<(ClusterConnection, Topology), StoreError> {
        let failed = |source| StoreError::Connect {
            addr: self.display(),
            source,
        };
        // Discovery may try several seeds in turn, each bounded by CONNECT_TIMEOUT; this
        // bounds the whole.
        let mut conn =
            tokio::time::timeout(CONNECT_TIMEOUT * 2, self.client.get_async_connection())
                .await
                .map_err(|_| failed(timed_out("no cluster node answered in time")))?
                .map_err(failed)?;
        let topology = read_topology(&mut conn).await.map_err(failed)?;
        Ok((conn, topology))
    }
}

/// `host:port` as a URL the client takes; a URL stays as it is.
fn as_url(node: &str) -> String {
    if node.contains("://") {
        node.to_string()
    } else {
        format!("redis://{node}")
    }
}

fn timed_out(what: &'static str) -> RedisError {
    RedisError::from(std::io::Error::new(std::io::ErrorKind::TimedOut, what))
}

/// The slot map as one node reported it when a connection opened: which master serves
/// which slots.
#[derive(Debug, Clone, Default)]
pub struct Topology {
    ranges: Vec<SlotRange>,
}

#[derive(Debug, Clone)]
struct SlotRange {
    first: u16,
    last: u16,
    /// `host:port`.
    master: String,
}

impl Topology {
    /// The `host:port` of the master serving `key`'s slot, if the map has one.
    pub fn master_of(&self, key: &str) -> Option<&str> {
        let slot = slot_of(key);
        self.ranges
            .iter()
            .find(|r| (r.first..=r.last).contains(&slot))
            .map(|r| r.master.as_str())
    }

    /// Every master that serves slots, sorted, each once.
    pub fn masters(&self) -> Vec<String> {
        let mut masters: Vec<String> = self.ranges.iter().map(|r| r.master.clone()).collect();
        masters.sort();
        masters.dedup();
        masters
    }

    /// Slots no master serves in this map (0 on a whole cluster).
    fn unserved_slots(&self) -> u32 {
        let served: u32 = self
            .ranges
            .iter()
            .map(|r| u32::from(r.last - r.first) + 1)
            .sum();
        16384u32.saturating_sub(served)
    }
}

/// A key's hash slot, as Redis computes it: CRC16 (XMODEM) of the key's hash tag, mod 16384.
/// The tag is what lies between the first `{` and the next `}`, if that is not empty;
/// otherwise the whole key is hashed.
pub fn slot_of(key: &str) -> u16 {
    let bytes = key.as_bytes();
    let tag = bytes
        .iter()
        .position(|&b| b == b'{')
        .and_then(|open| {
            let rest = &bytes[open + 1..];
            let close = rest.iter().position(|&b| b == b'}')?;
            (close > 0).then(|| &rest[..close])
        })
        .unwrap_or(bytes);
    crc16::State::<crc16::XMODEM>::calculate(tag) % 16384
}

/// `CLUSTER SHARDS`: per shard, its slot ranges and its nodes; we keep each range's master.
async fn read_topology(conn: &mut ClusterConnection) -> Result<Topology, RedisError> {
    let shards: Vec<HashMap<String, Value>> = redis::cmd("CLUSTER")
        .arg("SHARDS")
        .query_async(conn)
        .await?;
    let mut ranges = Vec::new();
    for shard in &shards {
        let slots: Vec<u16> = field(shard, "slots")?;
        let nodes: Vec<HashMap<String, Value>> = field(shard, "nodes")?;
        let master = nodes.iter().find_map(|n| {
            let role: String = field(n, "role").ok()?;
            let ip: String = field(n, "ip").ok()?;
            let port: u16 = field(n, "port").ok()?;
            (role == "master").then(|| format!("{ip}:{port}"))
        });
        // A shard whose master is gone from the map serves nothing.
        let Some(master) = master else { continue };
        for pair in slots.chunks_exact(2) {
            ranges.push(SlotRange {
                first: pair[0],
                last: pair[1],
                master: master.clone(),
            });
        }
    }
    Ok(Topology { ranges })
}

fn field<T: redis::FromRedisValue>(
    map: &HashMap<String, Value>,
    name: &str,
) -> Result<T, RedisError> {
    let value = map.get(name).cloned().unwrap_or(Value::Nil);
    T::from_redis_value(value).map_err(|e| {
        RedisError::from((
            redis::ErrorKind::UnexpectedReturnType,
            "CLUSTER SHARDS",
            format!("field {name}: {e}"),
        ))
    })
}

/// Where a command goes on a cluster (a single Redis ignores it: everything goes there).
#[derive(Debug, Clone, Copy)]
pub(super) enum Route<'a> {
    /// Wherever the client routes it: a keyed command to its slot's master; a keyless
    /// one to one node, or to every node for commands that change server state
    /// (`SCRIPT LOAD`, `FUNCTION FLUSH`, `CLIENT SETNAME`...).
    Auto,
    /// The master serving this key. For keyless commands that belong with a key: `UNWATCH`
    /// must reach the connection that holds the `WATCH` (the crate would send it to every
    /// master, and count as one request what is several).
    KeyMaster(&'a str),
    /// This node, `host:port`.
    Node(&'a str),
}

/// Send `cmd` on a cluster connection to `route`. Error replies come back as errors.
pub(super) async fn send(
    conn: &mut ClusterConnection,
    cmd: &redis::Cmd,
    route: Route<'_>,
) -> Result<Value, RedisError> {
    let routing = match route {
        Route::Auto => return cmd.query_async(conn).await,
        Route::KeyMaster(key) => {
            SingleNodeRoutingInfo::SpecificNode(SlotRoute::new(slot_of(key), SlotAddr::Master))
        }
        Route::Node(node) => {
            let (host, port) = node
                .rsplit_once(':')
                .and_then(|(h, p)| Some((h.to_string(), p.parse().ok()?)))
                .ok_or_else(|| {
                    RedisError::from((
                        redis::ErrorKind::InvalidClientConfig,
                        "not a host:port",
                        node.to_string(),
                    ))
                })?;
            SingleNodeRoutingInfo::ByAddress { host, port }
        }
    };
    conn.route_command(cmd.clone(), RoutingInfo::SingleNode(routing))
        .await?
        .extract_error()
}

/// A cluster error in words: a redirect on our clusters (whose slots never move) means the
/// slot's master does not answer and a live node points at it.
pub(super) fn explain(e: &RedisError) -> String {
    match e.code() {
        Some("MOVED" | "ASK") => format!(
            "the master of this key's slot does not answer; another node redirects to it ({e})"
        ),
        _ => e.to_string(),
    }
}

/// What "up" means for a cluster: every slot has a master in the map this connection read,
/// every one of those masters answers `PING` on this connection, and the node asked says
/// `cluster_state:ok` (the cluster itself agrees that every slot is served). A killed master
/// fails the `PING` at once; the cluster's own verdict follows after its node timeout.
pub(super) async fn check_whole(conn: &mut RedisConn) -> Result<(), StoreError> {
    let topology = conn.topology().cloned().unwrap_or_default();
    let unserved = topology.unserved_slots();
    if unserved > 0 {
        return Err(StoreError::ClusterDown {
            op: "CLUSTER SHARDS",
            detail: format!("{unserved} of 16384 slots have no master"),
        });
    }
    for master in topology.masters() {
        let reply: String = conn
            .query_routed("PING", &redis::cmd("PING"), Route::Node(&master))
            .await?;
        if reply != "PONG" {
            return Err(StoreError::Unexpected {
                op: "PING",
                detail: reply,
            });
        }
    }
    let info: String = conn
        .query("CLUSTER INFO", redis::cmd("CLUSTER").arg("INFO"))
        .await?;
    match info
        .lines()
        .find_map(|l| l.trim().strip_prefix("cluster_state:"))
    {
        Some("ok") => Ok(()),
        state => Err(StoreError::ClusterDown {
            op: "CLUSTER INFO",
            detail: format!("cluster_state:{}", state.unwrap_or("?")),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_hashes_by_its_tag_only() {
        // The slot Redis's own docs give for "foo", and a tag that pins two keys together.
        assert_eq!(slot_of("foo"), 12182);
        assert_eq!(
            slot_of("oversold:{r-1}:stock"),
            slot_of("oversold:{r-1}:lock")
        );
        assert_eq!(slot_of("oversold:{r-1}:stock"), slot_of("r-1"));
        // An empty tag does not count: the whole key is hashed.
        assert_eq!(
            slot_of("a{}b"),
            crc16::State::<crc16::XMODEM>::calculate(b"a{}b") % 16384
        );
        assert_ne!(slot_of("{r-1-b0}"), slot_of("{r-1-b1}"));
    }

    #[test]
    fn the_map_finds_a_keys_master() {
        let topology = Topology {
            ranges: vec![
                SlotRange {
                    first: 0,
                    last: 8191,
                    master: "127.0.0.1:7000".into(),
                },
                SlotRange {
                    first: 8192,
                    last: 16383,
                    master: "127.0.0.1:7001".into(),
                },
            ],
        };
        assert_eq!(topology.master_of("foo"), Some("127.0.0.1:7001"));
        assert_eq!(topology.masters(), ["127.0.0.1:7000", "127.0.0.1:7001"]);
        assert_eq!(topology.unserved_slots(), 0);
        assert_eq!(Topology::default().unserved_slots(), 16384);
    }

    #[test]
    fn seeds_become_urls_and_the_display_hides_credentials() {
        assert_eq!(as_url("127.0.0.1:7000"), "redis://127.0.0.1:7000");
        assert_eq!(as_url("redis://h:1"), "redis://h:1");
        let store = ClusterStore::open(&["redis://:secret@127.0.0.1:7000".into()]).unwrap();
        assert_eq!(store.display(), "cluster 127.0.0.1:7000");
        assert!(ClusterStore::open(&[" ".into()]).is_err());
    }
}
