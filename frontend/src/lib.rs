//! The oversold live page: a Leptos client-side app that drives real runs over one WebSocket.
//!
//! # Layout
//! - [`model`]: plain Rust, no DOM: runs, audit marks, tiles, history, knobs, backoff.
//!   Everything a test should pin down lives here and runs with `cargo test -p oversold-frontend`.
//! - `session`: the page's reactive state (signals) and the one place server frames are applied.
//! - `socket`: the only module that touches the WebSocket or JSON; decodes into typed frames and
//!   offers a typed `send`, reconnecting with backoff.
//! - `app` and `components/`: the view, one file per panel, reading signals from context.

pub mod app;
pub mod components;
pub mod model;
pub mod session;
pub mod socket;
