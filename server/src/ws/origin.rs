//! Which pages may open a WebSocket: the page this server serves, plus any origin the
//! operator allowed with `--allow-origin`.
//!
//! A browser sends `Origin` on every WebSocket upgrade and attaches the visitor's ambient
//! access (their network position: a lab reachable only from their laptop). Without this
//! check any web page the visitor opens could drive the lab through their browser. A client
//! that sends no `Origin` at all is not a browser (the CLI, a test, a student's script) and
//! has no one else's access to borrow, so it is allowed.

use axum::http::{HeaderMap, header};

/// `Ok` when the upgrade may proceed; otherwise the reason, for the 403 body.
pub fn check(headers: &HeaderMap, allowed: &[String]) -> Result<(), String> {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let origin = origin
        .to_str()
        .map_err(|_| "the Origin header is not text".to_string())?;
    if allowed.iter().any(|a| a.eq_ignore_ascii_case(origin)) {
        return Ok(());
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    // Same origin: the page came from this very host and port (http or https; a proxy in
    // front may terminate TLS).
    let same = ["http://", "https://"].iter().any(|scheme| {
        origin
            .strip_prefix(scheme)
            .is_some_and(|rest| !host.is_empty() && rest.eq_ignore_ascii_case(host))
    });
    if same {
        Ok(())
    } else {
        Err(format!(
            "WebSocket from origin {origin:?} refused: only pages served by this server may connect \
             (the operator can allow more with --allow-origin)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(origin: Option<&str>, host: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        if let Some(o) = origin {
            h.insert(header::ORIGIN, HeaderValue::from_str(o).unwrap());
        }
        h
    }

    #[test]
    fn same_origin_and_no_origin_pass_others_do_not() {
        let none: Vec<String> = vec![];
        assert!(check(&headers(None, "127.0.0.1:3000"), &none).is_ok());
        assert!(
            check(
                &headers(Some("http://127.0.0.1:3000"), "127.0.0.1:3000"),
                &none
            )
            .is_ok()
        );
        assert!(check(&headers(Some("https://lab.example"), "lab.example"), &none).is_ok());
        assert!(
            check(
                &headers(Some("http://evil.example"), "127.0.0.1:3000"),
                &none
            )
            .is_err()
        );
        assert!(check(&headers(Some("null"), "127.0.0.1:3000"), &none).is_err());
        // Same host, other port: another origin.
        assert!(
            check(
                &headers(Some("http://127.0.0.1:8080"), "127.0.0.1:3000"),
                &none
            )
            .is_err()
        );
        let allowed = vec!["http://127.0.0.1:8080".to_string()];
        assert!(
            check(
                &headers(Some("http://127.0.0.1:8080"), "127.0.0.1:3000"),
                &allowed
            )
            .is_ok()
        );
    }
}
