//! The HTTP surface: `GET /healthz`, the `/ws` WebSocket, and the page's static files.
//!
//! [`app`] builds the whole router from an [`AppState`] (in [`crate::state`]), so tests can
//! drive it with `oneshot` or serve it on port 0.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use oversold_protocol::{PROTOCOL_VERSION, RedisState};
use serde_json::json;
use tower_http::compression::CompressionLayer;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

use crate::headers;
use crate::state::AppState;

/// The whole router. Every response, errors and static files included, carries the
/// security headers of [`headers`]; `index.html` sets its own policy (with its inline
/// script's hash), which the layer then leaves alone.
pub fn app(state: Arc<AppState>) -> Router {
    // Built files come with `.br` and `.gz` copies (scripts/frontend.sh): served as they are,
    // with their `Content-Encoding`, when the browser takes them.
    let assets = ServeDir::new(&state.assets)
        .precompressed_br()
        .precompressed_gzip();
    let csp = headers::header_value(&headers::policy(&state.allowed_origins, &[]));
    Router::new()
        .route("/", get(index))
        .route("/index.html", get(index))
        // A room's join URL opens the phone page (its own wasm), named for the room; with
        // `?as=spectator` the lab, which draws the projector's view of the room.
        .route("/r/{room}", get(room))
        // The workshop is a page of its own (`/?view=workshop` opens it too).
        .route("/workshop", get(workshop))
        .route("/workshop/", get(workshop))
        .route("/workshop/index.html", get(workshop))
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

/// `GET /`: the built lab, or the workshop when the address asks for it (`view=workshop`).
async fn index(State(state): State<Arc<AppState>>, uri: axum::http::Uri) -> Response {
    let page = if opens_workshop(uri.query().unwrap_or("")) {
        WORKSHOP_PAGE
    } else {
        "index.html"
    };
    serve_page(&state, page).await
}

/// `GET /workshop`: the workshop page.
async fn workshop(State(state): State<Arc<AppState>>) -> Response {
    serve_page(&state, WORKSHOP_PAGE).await
}

/// `GET /r/CODE`: the phone page, its first paint naming the room (`__ROOM__` in its HTML)
/// before the wasm arrives. A code that is not one is shown as a dash: the page then says
/// the address names no room. `GET /r/CODE?as=spectator` is a projector's screen: the lab's
/// page, whose wasm already carries the counters, the grid and the tape it shows (the phone's
/// stays small); the lab reads the room and the role from the address.
async fn room(
    State(state): State<Arc<AppState>>,
    axum::extract::Path(room): axum::extract::Path<String>,
    uri: axum::http::Uri,
) -> Response {
    if opens_spectator(uri.query().unwrap_or("")) {
        return serve_page(&state, "index.html").await;
    }
    let code = if oversold_protocol::room::is_room_code(&room) {
        room
    } else {
        "—".to_string()
    };
    match tokio::fs::read_to_string(state.assets.join(PHONE_PAGE)).await {
        Ok(html) => {
            let csp = headers::page_policy(&state.allowed_origins, &html);
            let html = html.replace("__ROOM__", &code);
            ([(header::CONTENT_SECURITY_POLICY, csp)], Html(html)).into_response()
        }
        Err(_) => serve_page(&state, PHONE_PAGE).await,
    }
}

/// Where `scripts/frontend.sh` builds the phone page (its files are under `/phone/`).
const PHONE_PAGE: &str = "phone/index.html";

/// Where `scripts/frontend.sh` builds the workshop page (its files are under `/workshop/`).
const WORKSHOP_PAGE: &str = "workshop/index.html";

/// The address names the workshop view: a `view=workshop` pair in its query.
fn opens_workshop(query: &str) -> bool {
    query.split('&').any(|pair| pair == "view=workshop")
}

/// The address asks for a room's spectator screen: an `as=spectator` pair in its query.
fn opens_spectator(query: &str) -> bool {
    query.split('&').any(|pair| pair == "as=spectator")
}

/// A built page (`page`, under the assets), with a policy that allows its inline script, or a
/// note on how to build it.
async fn serve_page(state: &AppState, page: &str) -> Response {
    match tokio::fs::read_to_string(state.assets.join(page)).await {
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
                 <p>No <code>{page}</code> in <code>{}</code>. Build it with\
                 <pre>scripts/frontend.sh</pre> and reload.\
                 The WebSocket at <code>/ws</code> and <code>/healthz</code> work already.</p>",
                state.assets.display()
            )),
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::{is_hashed_asset, opens_spectator, opens_workshop};

    #[test]
    fn the_workshop_is_opened_by_its_view_pair_only() {
        assert!(opens_workshop("view=workshop"));
        assert!(opens_workshop("view=workshop&exercise=reserve"));
        assert!(opens_workshop("exercise=reserve&view=workshop"));
        assert!(!opens_workshop(""));
        assert!(!opens_workshop("view=workshops"));
        assert!(!opens_workshop("strategy=lua&seed=3"));
        assert!(!opens_workshop("xview=workshop"));
    }

    #[test]
    fn the_spectator_screen_is_opened_by_its_role_pair_only() {
        assert!(opens_spectator("as=spectator"));
        assert!(opens_spectator("lang=en&as=spectator"));
        assert!(!opens_spectator(""));
        assert!(!opens_spectator("as=phone"));
        assert!(!opens_spectator("as=spectators"));
        assert!(!opens_spectator("has=spectator"));
    }

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
