//! Which pages may open a WebSocket: the page this server serves, plus any origin the
//! operator allowed with `--allow-origin`.
//!
//! "The page this server serves" is, by default, a page whose `Origin` names the request's
//! own `Host`. That is right on a laptop, but a page on another domain that the attacker
//! points at this server's address (DNS rebinding) sends an `Origin` equal to its `Host` too.
//! So a public site names its origin(s) with `--public-origin`, and then only those count.
//!
//! A browser sends `Origin` on every WebSocket upgrade and attaches the visitor's ambient
//! access (their network position: a lab reachable only from their laptop). Without this
//! check any web page the visitor opens could drive the lab through their browser. A client
//! that sends no `Origin` at all is not a browser (the CLI, a test, a student's script) and
//! has no one else's access to borrow, so it is allowed.

use axum::http::{HeaderMap, header};

/// Which origins' pages may connect.
pub struct Pages<'a> {
    /// The origins this site is served at (`--public-origin`); empty: the request's `Host`.
    pub public: &'a [String],
    /// Other origins the operator allowed (`--allow-origin`).
    pub also: &'a [String],
}

/// `Ok` when the upgrade may proceed; otherwise the reason, for the 403 body.
pub fn check(headers: &HeaderMap, pages: &Pages<'_>) -> Result<(), String> {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let origin = origin
        .to_str()
        .map_err(|_| "the Origin header is not text".to_string())?;
    let listed = pages.public.iter().chain(pages.also);
    if listed.clone().any(|a| a.eq_ignore_ascii_case(origin)) {
        return Ok(());
    }
    if !pages.public.is_empty() {
        return Err(format!(
            "WebSocket from origin {origin:?} refused: this site is served at {}",
            pages.public.join(", ")
        ));
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

    /// The default pages (no `--public-origin`) plus `also`.
    fn check(headers: &HeaderMap, also: &[String]) -> Result<(), String> {
        super::check(headers, &Pages { public: &[], also })
    }

    #[test]
    fn a_public_origin_replaces_the_same_host_rule() {
        let public = vec!["https://lab.example".to_string()];
        let none: Vec<String> = vec![];
        let pages = Pages {
            public: &public,
            also: &none,
        };
        let site = headers(Some("https://lab.example"), "lab.example");
        assert!(super::check(&site, &pages).is_ok());
        // A rebinding page: its Origin names its own Host, which the default rule accepts.
        let rebound = headers(Some("http://evil.example"), "evil.example");
        assert!(
            check(&rebound, &none).is_ok(),
            "the default rule, for contrast"
        );
        let refused = super::check(&rebound, &pages).unwrap_err();
        assert!(refused.contains("https://lab.example"), "{refused}");
        // Not a browser: no Origin, no one else's access to borrow.
        assert!(super::check(&headers(None, "evil.example"), &pages).is_ok());
    }

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
