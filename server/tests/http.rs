//! HTTP routes with `oneshot`: health up and down, and the page-not-built hint.

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use oversold::app::{AppState, app};
use oversold::shelf::Backends;
use oversold::store::Store;
use oversold_protocol::RedisState;
use tokio::sync::watch;
use tower::ServiceExt;

fn state(store: Store, assets: PathBuf) -> Arc<AppState> {
    let (_tx, rx) = watch::channel(RedisState::Up);
    Arc::new(AppState::new(
        Backends::redis_only(store, "not used"),
        rx,
        assets,
        8,
    ))
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
    let redis = common::TestRedis::start();
    let (status, body) = get(state(redis.store.clone(), "dist".into()), "/healthz").await;
    assert_eq!(status, StatusCode::OK);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["status"], "ok");
    assert_eq!(v["redis"], "up");
}

#[tokio::test]
async fn healthz_is_503_when_redis_is_down() {
    let port = oversold::private_redis::free_port();
    let store = Store::open(&format!("redis://127.0.0.1:{port}")).unwrap();
    let (status, body) = get(state(store, "dist".into()), "/healthz").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["redis"], "down");
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
