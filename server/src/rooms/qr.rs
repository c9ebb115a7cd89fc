//! `GET /qr/ROOM.svg`: the room's join URL as a QR code, drawn here (no outside service
//! sees who joins which room).

use std::fmt::Write;

use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use oversold_protocol::room::is_room_code;
use qrcodegen::{QrCode, QrCodeEcc};

/// Light modules around the code, as the QR standard asks.
const QUIET_ZONE: i32 = 4;

/// The handler. The URL is built from the request's own host, so the code a presenter shows
/// is the address the presenter's browser reached (a LAN address, or the proxy's name).
pub async fn svg(Path(file): Path<String>, headers: HeaderMap) -> Response {
    let Some(code) = file.strip_suffix(".svg").filter(|c| is_room_code(c)) else {
        return (StatusCode::NOT_FOUND, "no such QR code").into_response();
    };
    let url = format!("{}/r/{code}", base_url(&headers));
    match render(&url) {
        Some(svg) => (
            [
                (header::CONTENT_TYPE, "image/svg+xml"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            svg,
        )
            .into_response(),
        None => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "URL too long for a QR code",
        )
            .into_response(),
    }
}

/// `scheme://host` of a request: the `Host` header (checked to be a plain host and port)
/// and `X-Forwarded-Proto: https` from a proxy; `http://localhost` when there is none.
pub fn base_url(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            !h.is_empty()
                && h.len() <= 255
                && h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
        })
        .unwrap_or("localhost");
    let https = headers
        .get("x-forwarded-proto")
        .and_then(|h| h.to_str().ok())
        .is_some_and(|p| p.eq_ignore_ascii_case("https"));
    format!("{}://{host}", if https { "https" } else { "http" })
}

/// `text` as an SVG QR code (medium error correction), one path, crisp at any size.
pub fn render(text: &str) -> Option<String> {
    let qr = QrCode::encode_text(text, QrCodeEcc::Medium).ok()?;
    let size = qr.size() + 2 * QUIET_ZONE;
    let mut path = String::new();
    for y in 0..qr.size() {
        for x in 0..qr.size() {
            if qr.get_module(x, y) {
                let _ = write!(path, "M{},{}h1v1h-1z", x + QUIET_ZONE, y + QUIET_ZONE);
            }
        }
    }
    Some(format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {size} {size}\" \
         shape-rendering=\"crispEdges\"><rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\
         <path d=\"{path}\" fill=\"#000\"/></svg>"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_url_takes_a_plain_host_and_the_proxy_scheme() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, "192.168.1.10:8080".parse().unwrap());
        assert_eq!(base_url(&h), "http://192.168.1.10:8080");
        h.insert("x-forwarded-proto", "https".parse().unwrap());
        assert_eq!(base_url(&h), "https://192.168.1.10:8080");
        h.insert(header::HOST, "evil.example/<script>".parse().unwrap());
        assert_eq!(base_url(&h), "https://localhost");
    }

    #[test]
    fn render_draws_a_square_code_with_its_quiet_zone() {
        let url = "http://192.168.1.10:8080/r/AB3CD";
        let svg = render(url).unwrap();
        let modules = QrCode::encode_text(url, QrCodeEcc::Medium).unwrap().size();
        let side = modules + 2 * QUIET_ZONE;
        assert!(
            svg.contains(&format!("viewBox=\"0 0 {side} {side}\"")),
            "{svg}"
        );
        // The top-left finder pattern starts right after the quiet zone.
        assert!(svg.contains(&format!("M{QUIET_ZONE},{QUIET_ZONE}h1v1h-1z")));
        assert!(
            render(&"x".repeat(5_000)).is_none(),
            "too long for any QR version"
        );
    }
}
