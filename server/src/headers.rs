//! The security headers every response carries, and the page's Content-Security-Policy.
//!
//! The policy allows only what the page really loads, all of it from this server: Trunk's JS
//! glue and the wasm it instantiates (`'wasm-unsafe-eval'` is what compiling WebAssembly
//! needs; it does not allow `eval` of JavaScript), the stylesheet, the favicon, and the
//! WebSocket. Nothing may frame the page (`frame-ancestors 'none'`, and `X-Frame-Options`
//! for older browsers), and no page learns where its visitors came from.
//!
//! One inline script is unavoidable: Trunk ends `index.html` with a `<script type="module">`
//! that imports the glue and starts the wasm. Its text names the build's hashed files, so it
//! changes with every build; [`page_policy`] hashes the inline scripts of the `index.html`
//! it serves and allows exactly those (`'sha256-...'`), instead of `'unsafe-inline'`.

use axum::http::HeaderValue;
use base64::Engine;
use sha2::{Digest, Sha256};

/// `Referrer-Policy`: the page links nowhere that needs to know it was the referrer.
pub const REFERRER_POLICY: &str = "no-referrer";
/// `X-Frame-Options`: the pre-CSP spelling of `frame-ancestors 'none'`.
pub const X_FRAME_OPTIONS: &str = "DENY";

/// The policy for every response, with `script_hashes` (already `'sha256-...'`-quoted)
/// allowed as inline scripts and `extra_origins` (the `--allow-origin` pages) reachable by
/// WebSocket as well as `'self'`.
pub fn policy(extra_origins: &[String], script_hashes: &[String]) -> String {
    let mut script_src = vec!["'self'".to_string(), "'wasm-unsafe-eval'".to_string()];
    script_src.extend(script_hashes.iter().cloned());
    let mut connect_src = vec!["'self'".to_string()];
    connect_src.extend(extra_origins.iter().filter_map(|o| websocket_origin(o)));
    [
        "default-src 'self'".to_string(),
        format!("script-src {}", script_src.join(" ")),
        "style-src 'self'".to_string(),
        format!("connect-src {}", connect_src.join(" ")),
        "object-src 'none'".to_string(),
        "base-uri 'none'".to_string(),
        "form-action 'none'".to_string(),
        "frame-ancestors 'none'".to_string(),
    ]
    .join("; ")
}

/// The policy for `index.html`: [`policy`] plus the hashes of its inline scripts.
pub fn page_policy(extra_origins: &[String], html: &str) -> HeaderValue {
    let hashes: Vec<String> = inline_scripts(html)
        .into_iter()
        .map(|body| format!("'sha256-{}'", sha256_base64(body)))
        .collect();
    header_value(&policy(extra_origins, &hashes))
}

/// A policy as a header value. Origins come from the operator's flags; one that is not
/// valid header text is a bug in them, so it degrades to the strict policy, never to none.
pub fn header_value(policy: &str) -> HeaderValue {
    HeaderValue::from_str(policy).unwrap_or_else(|_| {
        tracing::warn!(
            "the Content-Security-Policy is not valid header text; using the strict one"
        );
        HeaderValue::from_str(&self::policy(&[], &[])).expect("the strict policy is ASCII")
    })
}

/// `http://host:port` as `ws://host:port`, `https://...` as `wss://...`.
fn websocket_origin(origin: &str) -> Option<String> {
    if let Some(rest) = origin.strip_prefix("https://") {
        Some(format!("wss://{rest}"))
    } else {
        origin
            .strip_prefix("http://")
            .map(|rest| format!("ws://{rest}"))
    }
}

/// The text of every `<script>` without a `src`, exactly as it stands between the tags
/// (what a browser hashes).
fn inline_scripts(html: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<script") {
        let tag_and_after = &rest[start..];
        let Some(tag_end) = tag_and_after.find('>') else {
            break;
        };
        let body_and_after = &tag_and_after[tag_end + 1..];
        let Some(body_end) = body_and_after.find("</script") else {
            break;
        };
        let tag = &tag_and_after[..tag_end];
        let body = &body_and_after[..body_end];
        if !tag.contains(" src=") && !body.is_empty() {
            found.push(body);
        }
        rest = &body_and_after[body_end..];
    }
    found
}

fn sha256_base64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_inline_scripts_are_hashed() {
        let html = "<head><script src=\"/a.js\"></script><link rel=modulepreload href=/x.js>\
                    </head><body><script type=\"module\">\nimport init from '/x.js';\n</script>\
                    <script></script></body>";
        assert_eq!(inline_scripts(html), vec!["\nimport init from '/x.js';\n"]);
    }

    #[test]
    fn the_hash_is_what_a_browser_computes() {
        // printf 'alert(1)' | openssl dgst -sha256 -binary | base64
        assert_eq!(
            sha256_base64("alert(1)"),
            "bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI="
        );
    }

    #[test]
    fn allowed_origins_become_websocket_sources() {
        let p = policy(
            &["http://127.0.0.1:8080".into(), "https://lab.example".into()],
            &[],
        );
        assert!(
            p.contains("connect-src 'self' ws://127.0.0.1:8080 wss://lab.example;"),
            "{p}"
        );
    }
}
