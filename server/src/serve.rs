//! Serving the app on a listener: one hyper connection per accepted socket, with the timeouts
//! a public site needs, and a graceful shutdown that drains for a bounded time.
//!
//! This is what `oversold serve` runs and what the tests start on port 0. It is written out
//! (instead of `axum::serve`) for three things axum's helper does not do:
//! - a **header read timeout**: a client that opens a connection and sends half a request
//!   (or keeps an idle keep-alive connection) is dropped after [`HEADER_READ_TIMEOUT`],
//!   instead of holding a file descriptor forever (a slow-loris client);
//! - the **peer address** in every request, for the per-client caps;
//! - a shutdown that stops accepting, asks open connections and WebSockets to finish, and
//!   gives up on them after [`DRAIN_TIMEOUT`].

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::app::app;
use crate::state::AppState;

/// Longest a client may take to send a request's headers, and longest an idle keep-alive
/// connection is kept waiting for its next request.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest a shutdown waits for open connections and sockets before closing them.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// The timeouts of [`serve_with`]. Tests shorten them; `oversold serve` uses the defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServeOptions {
    /// See [`HEADER_READ_TIMEOUT`].
    pub header_read_timeout: Duration,
    /// See [`DRAIN_TIMEOUT`].
    pub drain_timeout: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            header_read_timeout: HEADER_READ_TIMEOUT,
            drain_timeout: DRAIN_TIMEOUT,
        }
    }
}

/// Serve `state`'s app on `listener` until `shutdown` resolves, then drain.
pub async fn serve(
    listener: TcpListener,
    state: Arc<AppState>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    serve_with(listener, state, shutdown, ServeOptions::default()).await
}

/// [`serve`] with other timeouts.
pub async fn serve_with(
    listener: TcpListener,
    state: Arc<AppState>,
    shutdown: impl Future<Output = ()>,
    options: ServeOptions,
) -> std::io::Result<()> {
    let router = app(state.clone());
    let mut connections = JoinSet::new();
    let closing = CancellationToken::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            // Reap finished connections as we go, so the set stays small.
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    // Out of file descriptors, say: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let connection = serve_connection(
            stream,
            peer,
            router.clone(),
            options.header_read_timeout,
            closing.clone(),
        );
        connections.spawn(connection);
    }

    // New clients are refused from here on, instead of waiting in the backlog for nothing.
    drop(listener);
    drain(&state, connections, &closing, options.drain_timeout).await;
    Ok(())
}

/// One accepted connection, served by hyper with the header read timeout and the peer's
/// address in every request, until it ends or `closing` asks it to finish gracefully.
async fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    router: Router,
    header_read_timeout: Duration,
    closing: CancellationToken,
) {
    let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        req.extensions_mut().insert(ConnectInfo(peer));
        router.clone().oneshot(req)
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout);
    let conn = builder
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::pin!(conn);
    let result = tokio::select! {
        r = conn.as_mut() => r,
        _ = closing.cancelled() => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = result {
        tracing::debug!(%peer, error = %e, "connection ended with an error");
    }
}

/// The shutdown, once the listener is closed: ask every connection, socket and run to
/// finish, wait for them at most `drain_timeout`, then close what is left.
async fn drain(
    state: &AppState,
    mut connections: JoinSet<()>,
    closing: &CancellationToken,
    drain_timeout: Duration,
) {
    tracing::info!("shutting down: closing sockets and cancelling runs");
    closing.cancel();
    state.shutdown.cancel();
    let drained = tokio::time::timeout(drain_timeout, async {
        while connections.join_next().await.is_some() {}
        state.sockets_closed().await;
    })
    .await;
    if drained.is_err() {
        tracing::warn!("connections still open after {drain_timeout:?}; closing them");
        connections.abort_all();
    }
}

/// The peer address of a connection served by [`serve`], for the per-client caps.
pub type Peer = ConnectInfo<SocketAddr>;
