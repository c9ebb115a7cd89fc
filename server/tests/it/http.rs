//! HTTP routes with `oneshot`: health up and down (from the monitor, at no cost to Redis),
//! and the page-not-built hint.

use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use oversold::app::app;
use oversold::backends::Backends;
use oversold::health::{self, Health};
use oversold::state::AppState;
use oversold::store::Store;
use tokio::sync::watch;
use tower::ServiceExt;

fn state_with(store: Store, assets: PathBuf, health: Health) -> Arc<AppState> {
    let (_tx, rx) = watch::channel(health);
    Arc::new(AppState::new(
        Backends::redis_only(store, "not used"),
        rx,
        assets,
        8,
    ))
}

fn state(store: Store, assets: PathBuf) -> Arc<AppState> {
    state_with(store, assets, Health::up())
}

async fn get(state: Arc<AppState>, path: &str) -> (StatusCode, String) {
    let res = app(state)
        .oneshot(Request::get(path).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = res.status();
    let body = res.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn healthz_reports_redis_up() {
    let redis = crate::common::TestRedis::start();
    let (status, body) = get(state(redis.store.clone(), "dist".into()), "/healthz").await;
    assert_eq!(status, StatusCode::OK);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["status"], "ok");
    assert_eq!(v["redis"], "up");
}

#[tokio::test]
async fn healthz_is_503_with_the_reason_when_redis_is_down() {
    // Port 1: nothing listens there. (A "free" port could be taken meanwhile by another
    // test's redis-server, which then answers or drops the connection.)
    let store = Store::open("redis://127.0.0.1:1").unwrap();
    let seen = health::check_once(&store).await;
    let (status, body) = get(state_with(store, "dist".into(), seen), "/healthz").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["redis"], "down");
    assert_eq!(v["reason"], "connection refused");
}

#[tokio::test]
async fn healthz_says_when_redis_wants_a_password() {
    let redis = crate::common::TestRedis::start();
    let mut raw = redis.raw().await;
    redis::cmd("CONFIG")
        .arg("SET")
        .arg("requirepass")
        .arg("s3cret")
        .query_async::<()>(&mut raw)
        .await
        .unwrap();
    let seen = health::check_once(&redis.store).await;
    let (status, body) = get(
        state_with(redis.store.clone(), "dist".into(), seen),
        "/healthz",
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(body.contains("authentication failed"), "{body}");
    assert!(!body.contains("s3cret"));
}

#[tokio::test]
async fn healthz_costs_redis_nothing() {
    // It answers from the health monitor's last reading: a thousand polls open no connection
    // and send no command (a load balancer polling it used to leave sockets in TIME_WAIT).
    let redis = crate::common::TestRedis::start();
    let mut raw = redis.raw().await;
    let before = connections_received(&mut raw).await;
    let state = state(redis.store.clone(), "dist".into());
    for _ in 0..1000 {
        let (status, _) = get(state.clone(), "/healthz").await;
        assert_eq!(status, StatusCode::OK);
    }
    assert_eq!(connections_received(&mut raw).await, before);
}

async fn connections_received(raw: &mut redis::aio::MultiplexedConnection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query_async(raw)
        .await
        .unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("total_connections_received:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn index_explains_how_to_build_the_page_when_missing() {
    let store = Store::open("redis://127.0.0.1:1").unwrap();
    let (status, body) = get(state(store, "/nonexistent-oversold-dist".into()), "/").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("scripts/frontend.sh"), "{body}");
}

#[tokio::test]
async fn index_and_assets_are_served_from_the_assets_dir() {
    let dir = std::env::temp_dir().join(format!("oversold-assets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("index.html"), "<h1>stage</h1>").unwrap();
    std::fs::write(dir.join("app.css"), "body{}").unwrap();
    let store = Store::open("redis://127.0.0.1:1").unwrap();
    let (status, body) = get(state(store.clone(), dir.clone()), "/").await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "<h1>stage</h1>"));
    let (status, body) = get(state(store.clone(), dir.clone()), "/app.css").await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "body{}"));
    // Hashed build output is cached for good; the page itself is always revalidated.
    std::fs::write(dir.join("style-61594fa88c6ada1e.css"), "p{}").unwrap();
    let cache = |path: &'static str| {
        let app = app(state(store.clone(), dir.clone()));
        async move {
            let res = app
                .oneshot(Request::get(path).body(Body::empty()).unwrap())
                .await
                .unwrap();
            res.headers()["cache-control"].to_str().unwrap().to_string()
        }
    };
    assert!(
        cache("/style-61594fa88c6ada1e.css")
            .await
            .contains("immutable")
    );
    assert_eq!(cache("/").await, "no-cache");
    std::fs::remove_dir_all(dir).unwrap();
}

/// The policy on every response but the page itself.
const CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; \
                   connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; \
                   frame-ancestors 'none'";

async fn headers_of(state: Arc<AppState>, path: &str) -> (StatusCode, axum::http::HeaderMap) {
    let res = app(state)
        .oneshot(Request::get(path).body(Body::empty()).unwrap())
        .await
        .unwrap();
    (res.status(), res.headers().clone())
}

fn assert_security_headers(headers: &axum::http::HeaderMap, csp: &str, what: &str) {
    let get = |name: &str| {
        headers
            .get(name)
            .unwrap_or_else(|| panic!("{what}: no {name}"))
            .to_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(get("content-security-policy"), csp, "{what}");
    assert_eq!(get("x-frame-options"), "DENY", "{what}");
    assert_eq!(get("referrer-policy"), "no-referrer", "{what}");
    assert_eq!(get("x-content-type-options"), "nosniff", "{what}");
}

#[tokio::test]
async fn every_response_carries_the_security_headers() {
    let store = Store::open("redis://127.0.0.1:1").unwrap();
    let state = state(store, "/nonexistent-oversold-dist".into());
    for (path, status) in [
        ("/healthz", StatusCode::OK),
        ("/", StatusCode::NOT_FOUND),
        ("/no-such-asset.js", StatusCode::NOT_FOUND),
        // Not an upgrade request: refused by the WebSocket extractor, headers all the same.
        ("/ws", StatusCode::BAD_REQUEST),
    ] {
        let (got, headers) = headers_of(state.clone(), path).await;
        assert_eq!(got.is_success(), status.is_success(), "{path}: {got}");
        assert_security_headers(&headers, CSP, path);
    }
}

#[tokio::test]
async fn the_page_allows_exactly_its_own_inline_script() {
    // Trunk ends index.html with an inline module script that starts the wasm; the policy
    // names its hash rather than allowing every inline script.
    let dir = std::env::temp_dir().join(format!("oversold-csp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("index.html"),
        "<html><head><link rel=\"modulepreload\" href=\"/app-1.js\"></head>\
         <body><script type=\"module\">alert(1)</script></body></html>",
    )
    .unwrap();
    let store = Store::open("redis://127.0.0.1:1").unwrap();
    let with_origin = Arc::new(
        AppState::new(
            Backends::redis_only(store, "not used"),
            watch::channel(Health::up()).1,
            dir.clone(),
            8,
        )
        .with_allowed_origins(vec!["http://127.0.0.1:8080".into()]),
    );
    // printf 'alert(1)' | openssl dgst -sha256 -binary | base64
    let page_csp = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval' \
                    'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='; style-src 'self'; \
                    connect-src 'self' ws://127.0.0.1:8080; object-src 'none'; base-uri 'none'; \
                    form-action 'none'; frame-ancestors 'none'";
    // A room's spectator screen is the lab's page, under the same policy.
    for path in ["/", "/index.html", "/r/ABC23?as=spectator"] {
        let (status, headers) = headers_of(with_origin.clone(), path).await;
        assert_eq!(status, StatusCode::OK);
        assert_security_headers(&headers, page_csp, path);
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Each page from its own folder: the workshop for `view=workshop` (and `/workshop`), the phone
/// for a join URL with the room's code painted in, the lab for a join URL's spectator screen;
/// a precompressed file goes as it is.
#[tokio::test]
async fn each_page_comes_from_its_folder_and_precompressed_files_go_as_they_are() {
    let dir = std::env::temp_dir().join(format!("oversold-pages-{}", std::process::id()));
    for sub in ["workshop", "phone"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    std::fs::write(dir.join("index.html"), "lab").unwrap();
    std::fs::write(dir.join("workshop/index.html"), "workshop").unwrap();
    std::fs::write(
        dir.join("phone/index.html"),
        "<p>Room __ROOM__ · joining…</p>",
    )
    .unwrap();
    let store = Store::open("redis://127.0.0.1:1").unwrap();
    let page = |path: &'static str| get(state(store.clone(), dir.clone()), path);
    assert_eq!(page("/").await.1, "lab");
    assert_eq!(page("/?strategy=lua&seed=3").await.1, "lab");
    assert_eq!(page("/?view=workshop&exercise=reserve").await.1, "workshop");
    assert_eq!(page("/workshop").await.1, "workshop");
    assert_eq!(page("/r/ABC23").await.1, "<p>Room ABC23 · joining…</p>");
    // A projector's screen is the lab's page (its wasm has the grid and the tape).
    assert_eq!(page("/r/ABC23?as=spectator").await.1, "lab");
    assert_eq!(
        page("/r/ABC23?as=spectators").await.1,
        "<p>Room ABC23 · joining…</p>"
    );
    // Not a room code: nothing of it reaches the page.
    let (status, body) = page("/r/%3Cscript%3E").await;
    assert_eq!(
        (status, body.as_str()),
        (StatusCode::OK, "<p>Room — · joining…</p>")
    );

    std::fs::write(dir.join("phone/app.wasm"), "raw").unwrap();
    std::fs::write(dir.join("phone/app.wasm.br"), "brotli").unwrap();
    std::fs::write(dir.join("phone/app.wasm.gz"), "gzip").unwrap();
    let fetch = |encoding: &'static str| {
        let app = app(state(store.clone(), dir.clone()));
        async move {
            let res = app
                .oneshot(
                    Request::get("/phone/app.wasm")
                        .header("accept-encoding", encoding)
                        .body(Body::empty())
                        .unwrap(),
                )
                .await
                .unwrap();
            let enc = res
                .headers()
                .get("content-encoding")
                .map(|v| v.to_str().unwrap().to_string());
            let body = res.into_body().collect().await.unwrap().to_bytes();
            (enc, String::from_utf8_lossy(&body).into_owned())
        }
    };
    assert_eq!(
        fetch("br, gzip").await,
        (Some("br".into()), "brotli".into())
    );
    assert_eq!(fetch("gzip").await, (Some("gzip".into()), "gzip".into()));
    assert_eq!(fetch("identity").await, (None, "raw".into()));
    std::fs::remove_dir_all(dir).unwrap();
}
