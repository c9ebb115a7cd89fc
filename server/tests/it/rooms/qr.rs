//! `GET /qr/ROOM.svg` with `oneshot`: the join URL from the request's own host, as an SVG;
//! anything that is not a room code is a 404. The page's test decodes the code itself.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use oversold::app::app;
use oversold::backends::Backends;
use oversold::state::AppState;
use oversold::store::Store;
use tower::ServiceExt;

async fn get(path: &str, host: &str) -> (StatusCode, Option<String>, String) {
    let store = Store::open("redis://127.0.0.1:1").unwrap();
    let state = Arc::new(AppState::new(
        Backends::redis_only(store, "not used"),
        tokio::sync::watch::channel(oversold::health::Health::up()).1,
        "/nonexistent-oversold-dist".into(),
        4,
    ));
    let request = Request::get(path)
        .header(header::HOST, host)
        .body(Body::empty())
        .unwrap();
    let res = app(state).oneshot(request).await.unwrap();
    let status = res.status();
    let kind = res
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_string());
    let body = res.into_body().collect().await.unwrap().to_bytes();
    (status, kind, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn the_qr_code_is_an_svg_of_the_join_url_and_only_for_room_codes() {
    let (status, kind, body) = get("/qr/AB3CD.svg", "192.168.1.20:3000").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(kind.as_deref(), Some("image/svg+xml"));
    let expected = oversold::rooms::qr::render("http://192.168.1.20:3000/r/AB3CD").unwrap();
    assert_eq!(
        body, expected,
        "the code of the URL the presenter's browser used"
    );
    for bad in [
        "/qr/ab3cd.svg",
        "/qr/AB3CD.png",
        "/qr/AB0CD.svg",
        "/qr/AB3CDE.svg",
    ] {
        assert_eq!(get(bad, "h").await.0, StatusCode::NOT_FOUND, "{bad}");
    }
}
