//! What every request and socket shares: the [`AppState`] (stores, caps, budgets, health,
//! rooms), the `hello` it greets each socket with, and what it lends the layers below it
//! (rooms get a [`crate::rooms::Host`]; a request's address comes from [`ClientAddr`]'s
//! extractor here).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::HeaderName;
use axum::http::request::Parts;
use oversold_protocol::limits::{LIMITS, Limits};
use oversold_protocol::{Hello, PROTOCOL_VERSION, RedisState, ScriptSource};
use tokio::sync::{Semaphore, watch};
use tokio_util::sync::CancellationToken;

use crate::backends::Backends;
use crate::budget::{Budget, DEFAULT_PG_MAX_CONNECTIONS, FDS_PER_RUN};
use crate::client::{ClientAddr, ClientCaps, Clients};
use crate::health::Health;
use crate::store::scripts;
use crate::strategy::{REGISTRY, checkout};

/// Default cap on runs in flight across all clients.
pub const DEFAULT_MAX_RUNS: usize = 8;
/// Default cap on open WebSockets: a public demo must not be exhausted by one script.
pub const DEFAULT_MAX_SOCKETS: usize = 512;

/// Shared by every request and socket.
pub struct AppState {
    /// The stores the buyers hit (Redis, and PostgreSQL when reachable).
    pub backends: Backends,
    /// One permit per run in flight; when none is left, new runs get `busy`.
    pub run_slots: Arc<Semaphore>,
    /// The cap `run_slots` started with.
    pub max_runs: usize,
    /// One permit per comparison in flight (each also holds a run slot). A comparison races
    /// every strategy in turn and can last minutes, so comparisons may hold at most half the
    /// run slots: single runs always find room.
    pub compare_slots: Arc<Semaphore>,
    /// The cap `compare_slots` started with.
    pub max_compares: usize,
    /// One permit per open WebSocket; when none is left, upgrades get 503.
    pub socket_slots: Arc<Semaphore>,
    /// The cap `socket_slots` started with.
    pub max_sockets: usize,
    /// Sockets and runs per client address, against the per-address caps.
    pub clients: Arc<Clients>,
    /// Connections (file descriptors) the runs may hold together: a run reserves its
    /// `app_servers + 1` before opening any.
    pub connections: Budget,
    /// PostgreSQL connections the server may open: a `postgres` run reserves its
    /// `app_servers + 1` before opening any.
    pub pg_connections: Budget,
    /// Latest Redis health, kept fresh by [`crate::health::monitor`].
    pub health: watch::Receiver<Health>,
    /// Where the built page lives (Trunk's `dist/`).
    pub assets: PathBuf,
    /// Origins besides this server's own whose pages may open the WebSocket.
    pub allowed_origins: Vec<String>,
    /// The origins this site is served at (`--public-origin`); when any is given, the
    /// same-host rule is off (see `ws::origin`).
    pub public_origins: Vec<String>,
    /// Cancelled on shutdown: open sockets cancel their runs and close.
    pub shutdown: CancellationToken,
    /// Rooms: caps, readers and sales of this process (their state lives in Redis).
    pub rooms: crate::rooms::Rooms,
    /// The workshop's judge: its sandbox and budgets.
    pub workshop: Arc<crate::workshop::service::Workshop>,
    /// The knobs' ranges this server checks and sends in `hello`: the protocol's, or with
    /// more buyers per race (`--max-buyers`).
    pub limits: Limits,
}

/// Comparisons allowed at once with `max_runs` run slots: half, rounded up, at least 1.
pub fn max_compares(max_runs: usize) -> usize {
    max_runs.div_ceil(2).max(1)
}

impl AppState {
    /// State with `max_runs` concurrent runs and every other cap at its default: sockets,
    /// per-address caps, the PostgreSQL pool, and a connection budget that fits `max_runs`
    /// of the largest runs (`main` sizes it from the open-file limit instead).
    pub fn new(
        backends: Backends,
        health: watch::Receiver<Health>,
        assets: PathBuf,
        max_runs: usize,
    ) -> Self {
        let max_compares = max_compares(max_runs);
        AppState {
            backends,
            run_slots: Arc::new(Semaphore::new(max_runs)),
            max_runs,
            compare_slots: Arc::new(Semaphore::new(max_compares)),
            max_compares,
            socket_slots: Arc::new(Semaphore::new(DEFAULT_MAX_SOCKETS)),
            max_sockets: DEFAULT_MAX_SOCKETS,
            clients: Arc::new(Clients::new(ClientCaps::default(), None)),
            connections: Budget::new("connections", max_runs * FDS_PER_RUN),
            pg_connections: Budget::new("PostgreSQL connections", DEFAULT_PG_MAX_CONNECTIONS),
            health,
            assets,
            allowed_origins: Vec::new(),
            public_origins: Vec::new(),
            shutdown: CancellationToken::new(),
            rooms: crate::rooms::Rooms::default(),
            workshop: Arc::default(),
            limits: LIMITS,
        }
    }

    /// The same state allowing races of up to `max_buyers` buyers (`--max-buyers`; kept
    /// within the protocol's [`oversold_protocol::limits::MAX_BUYERS_AT_SCALE`]).
    pub fn with_max_buyers(mut self, max_buyers: u32) -> Self {
        self.limits = LIMITS.with_max_buyers(max_buyers);
        self
    }

    /// The same state with these rooms settings.
    pub fn with_rooms(mut self, rooms: crate::rooms::Rooms) -> Self {
        self.rooms = rooms;
        self
    }

    /// The same state with a different cap on open WebSockets.
    pub fn with_max_sockets(mut self, max_sockets: usize) -> Self {
        self.socket_slots = Arc::new(Semaphore::new(max_sockets));
        self.max_sockets = max_sockets;
        self
    }

    /// The same state with these per-address caps, client addresses taken from `ip_header`
    /// (behind a proxy that sets it) or else from the TCP peer.
    pub fn with_client_caps(mut self, caps: ClientCaps, ip_header: Option<HeaderName>) -> Self {
        self.clients = Arc::new(Clients::new(caps, ip_header));
        self
    }

    /// The same state with a budget of `units` connections for the runs together.
    pub fn with_connection_budget(mut self, units: usize) -> Self {
        self.connections = Budget::new("connections", units);
        self
    }

    /// The same state with a pool of `max` PostgreSQL connections.
    pub fn with_pg_max_connections(mut self, max: usize) -> Self {
        self.pg_connections = Budget::new("PostgreSQL connections", max);
        self
    }

    /// The same state, also accepting WebSockets from pages of these origins.
    pub fn with_allowed_origins(mut self, origins: Vec<String>) -> Self {
        self.allowed_origins = origins;
        self
    }

    /// The same state, served at these origins only (`--public-origin`).
    pub fn with_public_origins(mut self, origins: Vec<String>) -> Self {
        self.public_origins = origins;
        self
    }

    /// Redis as last seen by the health monitor.
    pub fn redis_state(&self) -> RedisState {
        self.health.borrow().state
    }

    /// Resolves once every WebSocket has closed (used to drain on shutdown).
    pub async fn sockets_closed(&self) {
        let all = u32::try_from(self.max_sockets).unwrap_or(u32::MAX);
        let _ = self.socket_slots.acquire_many(all).await;
    }

    /// The greeting every new socket receives.
    pub fn hello(&self) -> Hello {
        Hello {
            protocol_version: PROTOCOL_VERSION,
            server_version: env!("CARGO_PKG_VERSION").into(),
            redis: self.redis_state(),
            strategies: REGISTRY.iter().map(|s| s.info(&self.backends)).collect(),
            checkout_strategies: checkout::REGISTRY.iter().map(|s| s.info()).collect(),
            cart_strategies: crate::strategy::cart::REGISTRY
                .iter()
                .map(|s| s.info())
                .collect(),
            busy_strategies: crate::strategy::busy::REGISTRY
                .iter()
                .map(|s| s.info())
                .collect(),
            durability_strategies: crate::strategy::durability::REGISTRY
                .iter()
                .map(|s| s.info())
                .collect(),
            eviction_strategies: crate::strategy::eviction::REGISTRY
                .iter()
                .map(|s| s.info())
                .collect(),
            failover_strategies: crate::strategy::failover::REGISTRY
                .iter()
                .map(|s| s.info())
                .collect(),
            ledger: crate::checkout::ledger::info(&self.backends),
            outage_allowed: self.backends.owns_redis,
            chaos: crate::rooms::chaos::buttons(),
            presets: crate::presets::all(),
            exercises: crate::workshop::exercises::all()
                .iter()
                .map(|e| e.info())
                .collect(),
            scripts: scripts::all()
                .into_iter()
                .map(|f| ScriptSource {
                    file: f.file.into(),
                    source: f.source.into(),
                })
                .collect(),
            limits: self.limits,
        }
    }
}

/// A request's client address, as the per-address caps count it (proxy headers only when
/// the server was told to trust them).
impl FromRequestParts<Arc<AppState>> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, Self::Rejection> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0);
        Ok(ClientAddr::of(
            &parts.headers,
            peer,
            state.clients.ip_header(),
        ))
    }
}
