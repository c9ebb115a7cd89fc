//! The HTTP surface: `GET /healthz`, the `/ws` WebSocket, and the page's static files.
//!
//! [`app`] builds the whole router from an [`AppState`], so tests can drive it with
//! `oneshot` or serve it on port 0.

use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use oversold_protocol::{Hello, PROTOCOL_VERSION, RedisState, ScriptSource, limits::LIMITS};
use serde_json::json;
use tokio::sync::{Semaphore, watch};
use tokio_util::sync::CancellationToken;
use tower_http::compression::CompressionLayer;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

use crate::backends::Backends;
use crate::budget::{Budget, DEFAULT_PG_MAX_CONNECTIONS, FDS_PER_RUN};
use crate::client::{ClientCaps, Clients};
use crate::headers;
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
    /// Cancelled on shutdown: open sockets cancel their runs and close.
    pub shutdown: CancellationToken,
    /// Rooms: caps, readers and sales of this process (their state lives in Redis).
    pub rooms: crate::rooms::Rooms,
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
            shutdown: CancellationToken::new(),
            rooms: crate::rooms::Rooms::default(),
        }
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
            ledger: crate::checkout::ledger::info(&self.backends),
            outage_allowed: self.backends.owns_redis,
            chaos: crate::rooms::chaos::buttons(),
            scripts: scripts::all()
                .into_iter()
                .map(|f| ScriptSource {
                    file: f.file.into(),
                    source: f.source.into(),
                })
                .collect(),
            limits: LIMITS,
        }
    }
}

/// The whole router. Every response, errors and static files included, carries the
/// security headers of [`headers`]; `index.html` sets its own policy (with its inline
/// script's hash), which the layer then leaves alone.
pub fn app(state: Arc<AppState>) -> Router {
    let assets = ServeDir::new(&state.assets);
    let csp = headers::header_value(&headers::policy(&state.allowed_origins, &[]));
    Router::new()
        .route("/", get(index))
        .route("/index.html", get(index))
        // A room's join URL opens the same page, which shows the phone view.
        .route("/r/{room}", get(index))
        .route("/qr/{file}", get(crate::rooms::qr::svg))
        .route("/healthz", get(healthz))
        .route("/ws", get(crate::ws::upgrade))
        .fallback_service(assets)
        .layer(axum::middleware::map_response(cache_policy))
        .layer(CompressionLayer::new())
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CONTENT_SECURITY_POLICY,
            csp,
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static(headers::X_FRAME_OPTIONS),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::REFERRER_POLICY,
            HeaderValue::from_static(headers::REFERRER_POLICY),
        ))
        .with_state(state)
}

/// Trunk puts a content hash in every asset name (`style-61594fa88c6ada1e.css`), so those
/// can be cached for good: on flaky conference Wi-Fi a reload then needs only `index.html`.
/// Everything else (the page, `/healthz`) is revalidated every time.
async fn cache_policy(uri: axum::http::Uri, mut res: Response) -> Response {
    let value = if res.status().is_success() && is_hashed_asset(uri.path()) {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(value));
    res
}

/// `/name-<16 hex digits>.ext`, as Trunk names what it builds.
fn is_hashed_asset(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or("");
    let stem = file.split('.').next().unwrap_or("");
    let stem = stem.strip_suffix("_bg").unwrap_or(stem);
    stem.rsplit_once('-')
        .is_some_and(|(_, hash)| hash.len() >= 15 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// `GET /healthz`: Redis as the health monitor saw it at most a second ago (one PING a
/// second on one connection, however often this is polled), and the server's load.
async fn healthz(State(state): State<Arc<AppState>>) -> Response {
    let health = state.health.borrow().clone();
    let up = health.state == RedisState::Up;
    let in_flight = state.max_runs - state.run_slots.available_permits();
    let mut body = json!({
        "status": if up { "ok" } else { "degraded" },
        "redis": if up { "up" } else { "down" },
        "version": env!("CARGO_PKG_VERSION"),
        "protocol_version": PROTOCOL_VERSION,
        "runs_in_flight": in_flight,
        "max_runs": state.max_runs,
        "comparisons_in_flight": state.max_compares - state.compare_slots.available_permits(),
        "max_comparisons": state.max_compares,
        "sockets_open": state.max_sockets - state.socket_slots.available_permits(),
        "max_sockets": state.max_sockets,
        "client_addresses": state.clients.addresses(),
        "connections": { "in_use": state.connections.in_use(), "budget": state.connections.total() },
        "pg_connections": { "in_use": state.pg_connections.in_use(), "budget": state.pg_connections.total() },
    });
    if let Some(reason) = health.reason {
        body["reason"] = reason.into();
    }
    let status = if up {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(body)).into_response()
}

/// `GET /`: the built page, with a policy that allows its inline script, or a note on how
/// to build it.
async fn index(State(state): State<Arc<AppState>>) -> Response {
    match tokio::fs::read_to_string(state.assets.join("index.html")).await {
        Ok(html) => {
            let csp = headers::page_policy(&state.allowed_origins, &html);
            ([(header::CONTENT_SECURITY_POLICY, csp)], Html(html)).into_response()
        }
        Err(_) => (
            StatusCode::NOT_FOUND,
            // No inline style: the policy would block it.
            Html(format!(
                "<!doctype html><meta charset=utf-8><title>oversold: page not built</title>\
                 <body><h1>The page is not built yet</h1>\
                 <p>No <code>index.html</code> in <code>{}</code>. Build it with\
                 <pre>scripts/frontend.sh</pre> (or <code>trunk build --release</code>) and reload.\
                 The WebSocket at <code>/ws</code> and <code>/healthz</code> work already.</p>",
                state.assets.display()
            )),
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::is_hashed_asset;

    #[test]
    fn only_trunk_hashed_names_are_immutable() {
        assert!(is_hashed_asset("/style-61594fa88c6ada1e.css"));
        assert!(is_hashed_asset(
            "/oversold-frontend-38cc67ea930d73e_bg.wasm"
        ));
        assert!(is_hashed_asset("/oversold-frontend-38cc67ea930d73e.js"));
        assert!(!is_hashed_asset("/"));
        assert!(!is_hashed_asset("/index.html"));
        assert!(!is_hashed_asset("/healthz"));
        assert!(!is_hashed_asset("/app.css"));
        assert!(!is_hashed_asset("/my-style.css"));
    }
}
