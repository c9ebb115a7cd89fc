//! Test harness: a private redis-server (or three-master cluster) per test, and the real app
//! on a real port.

pub mod checks;
pub mod registry;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use oversold::backends::Backends;
use oversold::pg::PgDb;
use oversold::private_cluster::PrivateCluster;
use oversold::private_redis::PrivateRedis;
use oversold::state::AppState;
use oversold::store::{RedisConn, Store};
use oversold_protocol::ServerMessage;
use redis::aio::MultiplexedConnection;
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// A redis-server owned by one test; killed when dropped.
pub struct TestRedis {
    pub server: PrivateRedis,
    pub store: Store,
}

impl TestRedis {
    pub fn start() -> Self {
        let server =
            PrivateRedis::start().expect("redis-server on PATH (apt-get install redis-server)");
        let store = Store::open(&server.url()).unwrap();
        TestRedis { server, store }
    }

    /// Redis only: the `postgres` strategy is marked unavailable.
    pub fn backends(&self) -> Backends {
        Backends::redis_only(self.store.clone(), "not used by this test")
    }

    /// Redis and the machine's PostgreSQL (`DATABASE_URL`, else the local default), or `None`
    /// when this machine has no PostgreSQL and the test should return (see [`postgres`]).
    pub async fn backends_with_postgres(&self) -> Option<Backends> {
        Some(Backends {
            redis: self.store.clone(),
            postgres: Ok(postgres().await?),
            owns_redis: false,
            lock_masters: Default::default(),
        })
    }

    /// A connection through the store module, as the server's own code uses.
    pub async fn conn(&self) -> RedisConn {
        self.store.connect().await.expect("connect to test redis")
    }

    /// A plain redis-crate connection, for what only a test does (KEYS, INFO, DEBUG, CLIENT
    /// PAUSE, CONFIG): the store module offers no such commands on purpose.
    pub async fn raw(&self) -> MultiplexedConnection {
        redis::Client::open(self.server.url())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .expect("connect to test redis")
    }

    /// Kill it, as an outage would.
    pub fn kill(&mut self) {
        self.server.stop();
    }

    /// Bring it back on the same port (empty, as after a crash without persistence).
    pub fn restart(&mut self) {
        let port = self.server.port();
        self.server.stop();
        self.server = PrivateRedis::start_on(port).expect("restart redis on the same port");
    }
}

/// A three-master Redis Cluster owned by one test; killed when dropped.
pub struct TestCluster {
    pub cluster: PrivateCluster,
    pub store: Store,
}

impl TestCluster {
    pub fn start() -> Self {
        let cluster =
            PrivateCluster::start().expect("redis-server on PATH (apt-get install redis-server)");
        let store = Store::open_cluster(&cluster.seeds()).unwrap();
        TestCluster { cluster, store }
    }

    /// The cluster only: the `postgres` strategy is marked unavailable.
    pub fn backends(&self) -> Backends {
        Backends::redis_only(self.store.clone(), "not used by this test")
    }

    /// A cluster connection through the store module, as the server's own code uses.
    pub async fn conn(&self) -> RedisConn {
        self.store
            .connect()
            .await
            .expect("connect to the test cluster")
    }

    /// A plain connection to node `i` alone, for what only a test does (KEYS, INFO,
    /// SCRIPT FLUSH on that node).
    pub async fn raw_node(&self, i: usize) -> MultiplexedConnection {
        redis::Client::open(self.cluster.node_url(i))
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .expect("connect to a cluster node")
    }

    /// Keys under our prefix on every node.
    pub async fn run_keys(&self) -> Vec<String> {
        let mut keys = Vec::new();
        for i in 0..oversold::private_cluster::MASTERS {
            keys.extend(run_keys(&mut self.raw_node(i).await).await);
        }
        keys
    }

    /// The index of the node that serves `key` right now.
    pub async fn node_serving(&self, key: &str) -> usize {
        let node = self.conn().await.node_of(key).expect("a cluster knows");
        self.cluster.index_of(&node).expect("one of ours")
    }

    /// The first id `prefix-N` whose key (`key_of(id)`) lives on node `node`, found on the
    /// cluster's slot map (which a fresh connection still reads while a dead master's slots
    /// are unserved).
    pub async fn id_on(
        &self,
        node: usize,
        prefix: &str,
        key_of: impl Fn(&str) -> String,
    ) -> String {
        let conn = self.conn().await;
        let wanted = format!("127.0.0.1:{}", self.cluster.port(node));
        (0..)
            .map(|i| format!("{prefix}-{i}"))
            .find(|id| conn.node_of(&key_of(id)).as_deref() == Some(wanted.as_str()))
            .expect("some id lands on every node")
    }

    /// Once `race`'s first buyer has been answered (on `seen`) and 300 ms more have passed,
    /// kill node `victim`; then what `race` ended with, within `limit`, and how long after the
    /// kill it ended.
    pub async fn kill_while_serving<T: Send + 'static, O>(
        &mut self,
        victim: usize,
        seen: &mut tokio::sync::mpsc::UnboundedReceiver<O>,
        race: tokio::task::JoinHandle<T>,
        limit: Duration,
    ) -> (T, Duration) {
        seen.recv().await.expect("buyers are being served");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let killed = std::time::Instant::now();
        self.cluster.kill(victim);
        let ended = tokio::time::timeout(limit, race)
            .await
            .expect("the run ended after its master was killed")
            .unwrap();
        (ended, killed.elapsed())
    }

    /// Send `command args...` to every node (e.g. `SCRIPT FLUSH`).
    pub async fn on_every_node(&self, command: &[&str]) {
        for i in 0..oversold::private_cluster::MASTERS {
            redis::cmd(command[0])
                .arg(&command[1..])
                .query_async::<()>(&mut self.raw_node(i).await)
                .await
                .unwrap();
        }
    }
}

/// The real router on a real port, with its health monitor.
pub struct TestServer {
    pub addr: SocketAddr,
    pub state: Arc<AppState>,
}

impl TestServer {
    pub async fn start(store: Store, max_runs: usize) -> Self {
        let backends = Backends::redis_only(store, "not used by this test");
        Self::start_with(
            backends,
            max_runs,
            PathBuf::from("/nonexistent-oversold-dist"),
        )
        .await
    }

    pub async fn start_with(backends: Backends, max_runs: usize, assets: PathBuf) -> Self {
        Self::start_full(
            backends,
            max_runs,
            assets,
            oversold::state::DEFAULT_MAX_SOCKETS,
        )
        .await
    }

    pub async fn start_full(
        backends: Backends,
        max_runs: usize,
        assets: PathBuf,
        max_sockets: usize,
    ) -> Self {
        let state = AppState::new(
            backends.clone(),
            watch::channel(oversold::health::Health::up()).1,
            assets,
            max_runs,
        )
        .with_max_sockets(max_sockets);
        Self::serve(state).await
    }

    /// Serve `state` exactly as `oversold serve` does (same function), with its own health
    /// monitor, on a free port.
    pub async fn serve(state: AppState) -> Self {
        let store = state.backends.redis.clone();
        let (tx, rx) = watch::channel(oversold::health::check_once(&store).await);
        let state = Arc::new(AppState {
            health: rx,
            ..state
        });
        tokio::spawn(oversold::health::monitor(store, tx, state.shutdown.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = state.shutdown.clone();
        tokio::spawn(oversold::serve::serve(
            listener,
            state.clone(),
            async move { stop.cancelled().await },
        ));
        TestServer { addr, state }
    }

    pub async fn client(&self) -> Client {
        self.client_at("/ws").await
    }

    /// A client on `path` (e.g. `/ws?page=phone`).
    pub async fn client_at(&self, path: &str) -> Client {
        let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{}{path}", self.addr))
            .await
            .expect("websocket connects");
        Client { ws }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.state.shutdown.cancel();
    }
}

/// A WebSocket client speaking the protocol.
pub struct Client {
    pub ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Client {
    pub async fn send_text(&mut self, text: &str) {
        self.ws
            .send(Message::Text(text.into()))
            .await
            .expect("send");
    }

    pub async fn send_json(&mut self, v: serde_json::Value) {
        self.send_text(&v.to_string()).await;
    }

    /// Next protocol message, failing the test after `secs` of silence.
    pub async fn next_within(&mut self, secs: u64) -> ServerMessage {
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(secs), self.ws.next())
                .await
                .expect("a frame in time")
                .expect("socket open")
                .expect("frame ok");
            match frame {
                Message::Text(t) => {
                    let msg = serde_json::from_str(&t).expect("server sends valid protocol");
                    // The page reads frames `type` first: it must read every frame the
                    // server sends exactly as serde's derived reader does.
                    let tag_first = ServerMessage::from_json(&t).expect("the page can read it");
                    assert_eq!(tag_first, msg, "the page's reader disagrees on {t}");
                    return msg;
                }
                Message::Ping(_) | Message::Pong(_) => continue,
                other => panic!("unexpected frame {other:?}"),
            }
        }
    }

    pub async fn next(&mut self) -> ServerMessage {
        self.next_within(15).await
    }

    /// Skip `redis_status` frames (they can arrive at any time).
    pub async fn next_not_status(&mut self) -> ServerMessage {
        loop {
            match self.next().await {
                ServerMessage::RedisStatus { .. } => continue,
                m => return m,
            }
        }
    }

    pub async fn hello(&mut self) -> oversold_protocol::Hello {
        match self.next().await {
            ServerMessage::Hello(h) => *h,
            other => panic!("expected hello, got {other:?}"),
        }
    }

    /// Expect an error frame and return its code string.
    pub async fn expect_error(&mut self) -> oversold_protocol::WireError {
        match self.next_not_status().await {
            ServerMessage::Error(e) => e,
            other => panic!("expected error, got {other:?}"),
        }
    }

    /// Read a whole run: run_started, outcomes..., run_finished.
    pub async fn collect_run(&mut self) -> RunSeen {
        let (run_id, config) = match self.next_not_status().await {
            ServerMessage::RunStarted { run_id, config } => (run_id, config),
            other => panic!("expected run_started, got {other:?}"),
        };
        let mut outcomes = Vec::new();
        let mut progress = Vec::new();
        let mut batches = 0;
        loop {
            match self.next_not_status().await {
                ServerMessage::RunProgress {
                    run_id: id,
                    progress: p,
                } => {
                    assert_eq!(
                        id, run_id,
                        "progress of another run leaked into this socket"
                    );
                    progress.push(p);
                }
                ServerMessage::Outcomes {
                    run_id: id,
                    outcomes: o,
                } => {
                    assert_eq!(
                        id, run_id,
                        "outcomes of another run leaked into this socket"
                    );
                    batches += 1;
                    outcomes.extend(o);
                }
                ServerMessage::RunFinished {
                    run_id: id,
                    summary,
                } => {
                    assert_eq!(id, run_id);
                    return RunSeen {
                        run_id,
                        config,
                        outcomes,
                        progress,
                        batches,
                        cancelled: false,
                        summary: Ok(summary),
                    };
                }
                ServerMessage::RunCancelled {
                    run_id: id,
                    summary,
                } => {
                    assert_eq!(id, run_id);
                    return RunSeen {
                        run_id,
                        config,
                        outcomes,
                        progress,
                        batches,
                        cancelled: true,
                        summary: summary.ok_or_else(|| oversold_protocol::WireError {
                            code: oversold_protocol::ErrorCode::RunFailed,
                            message: "cancelled, and the stock could not be read back".into(),
                            run_id: None,
                        }),
                    };
                }
                ServerMessage::Error(e) => {
                    assert_eq!(e.run_id.as_deref(), Some(run_id.as_str()));
                    return RunSeen {
                        run_id,
                        config,
                        outcomes,
                        progress,
                        batches,
                        cancelled: false,
                        summary: Err(e),
                    };
                }
                other => panic!("unexpected mid-run frame {other:?}"),
            }
        }
    }
}

pub struct RunSeen {
    pub run_id: String,
    pub config: oversold_protocol::RunConfig,
    pub outcomes: Vec<oversold_protocol::BuyerOutcome>,
    /// `run_progress` frames, for a race at scale (which sends no outcomes).
    pub progress: Vec<oversold_protocol::at_scale::RunProgress>,
    pub batches: usize,
    /// Ended with `run_cancelled` (then `summary` is its optional summary).
    pub cancelled: bool,
    pub summary: Result<oversold_protocol::RunSummary, oversold_protocol::WireError>,
}

/// The reply `reserve.lua` (or its Function twin) should give.
pub fn reply(reserved: bool, before: i64, after: i64) -> oversold::store::stock::ReserveReply {
    oversold::store::stock::ReserveReply {
        reserved,
        before,
        after,
    }
}

/// The round trips a run's buyers say they made, summed: a test holds it to what the
/// connections really sent.
pub fn reported_round_trips(report: &oversold::run::RunReport) -> u64 {
    report
        .outcomes
        .iter()
        .map(|o| u64::from(o.round_trips))
        .sum()
}

/// Keys under our prefix (tests check runs clean up after themselves).
pub async fn run_keys(conn: &mut MultiplexedConnection) -> Vec<String> {
    redis::cmd("KEYS")
        .arg("oversold:*")
        .query_async(conn)
        .await
        .unwrap()
}

/// Calls Redis received for `command` since the last `CONFIG RESETSTAT`.
pub async fn calls(conn: &mut MultiplexedConnection, command: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await
        .unwrap();
    let prefix = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|rest| rest.split(',').next())
        .map(|n| n.parse().unwrap())
        .unwrap_or(0)
}

/// The PostgreSQL URL the tests use (`DATABASE_URL`, else the local default).
pub fn pg_url() -> String {
    std::env::var("DATABASE_URL").unwrap_or_else(|_| oversold::pg::DEFAULT_URL.into())
}

/// The machine's PostgreSQL, or `None` when nothing listens at [`pg_url`]: the test that
/// needs it returns, and the run says so in one line (see [`postgres_at`]).
pub async fn postgres() -> Option<PgDb> {
    match postgres_at(&pg_url(), std::env::var_os("CI").is_some()).await {
        Ok(Ok(pg)) => Some(pg),
        Ok(Err(skipped)) => {
            say_once(&skipped);
            None
        }
        Err(why) => panic!("{why}"),
    }
}

/// PostgreSQL at `url`; or, when nothing listens there, the line that says its tests are
/// skipped; or why the test must fail. Nothing listening is a developer's machine without
/// PostgreSQL: a skip, unless `ci` (the `CI` variable is set): CI installs PostgreSQL, so
/// there a skip would hide a broken setup. Anything else (a bad URL, a refused login, a full
/// server, something that is not PostgreSQL) is a PostgreSQL that is there and broken: a
/// failure everywhere.
pub async fn postgres_at(url: &str, ci: bool) -> Result<Result<PgDb, String>, String> {
    let e = match PgDb::open(url).await {
        Ok(pg) => return Ok(Ok(pg)),
        Err(e) => e,
    };
    // PgError's message names the host, port, database and user, never the password.
    match (anything_listens(url).await, ci) {
        (false, false) => Ok(Err(format!(
            "skipped: no PostgreSQL ({e}); the tests that need it return without running \
             (set DATABASE_URL to run them; with CI set they fail instead)"
        ))),
        (false, true) => Err(format!(
            "CI is set, so the PostgreSQL tests must run, and there is no PostgreSQL: {e}"
        )),
        (true, _) => Err(format!(
            "something listens where DATABASE_URL points, but it is no usable PostgreSQL: {e}"
        )),
    }
}

/// True when something accepts a connection where `url` points: its first host's TCP port,
/// or its Unix socket.
async fn anything_listens(url: &str) -> bool {
    use tokio_postgres::config::Host;
    let Ok(config) = url.parse::<tokio_postgres::Config>() else {
        // Not a URL at all: that is a mistake to report, not a missing server.
        return true;
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let connect = async {
        match config.get_hosts().first() {
            Some(Host::Tcp(host)) => TcpStream::connect((host.as_str(), port)).await.is_ok(),
            Some(Host::Unix(dir)) => {
                let socket = dir.join(format!(".s.PGSQL.{port}"));
                tokio::net::UnixStream::connect(socket).await.is_ok()
            }
            None => TcpStream::connect(("localhost", port)).await.is_ok(),
        }
    };
    tokio::time::timeout(Duration::from_secs(3), connect)
        .await
        .unwrap_or(false)
}

/// Print `line` on the real stderr, once per test process. Not `eprintln!`: the test harness
/// captures that and shows it only for failing tests, and a skip must be seen.
fn say_once(line: &str) {
    use std::io::Write;
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        let _ = writeln!(std::io::stderr(), "{line}");
    });
}

/// Run a `SELECT count(*) ...` on the test database, on a connection of the test's own.
pub async fn pg_count(sql: &str) -> i64 {
    let (client, connection) = tokio_postgres::connect(&pg_url(), tokio_postgres::NoTls)
        .await
        .expect("connect to PostgreSQL");
    let task = tokio::spawn(connection);
    let n = client.query_one(sql, &[]).await.unwrap().get(0);
    task.abort();
    n
}
