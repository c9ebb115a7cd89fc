//! The oversold live page: a Leptos client-side app that drives real runs over one WebSocket.
//!
//! # Layout
//! - [`model`]: plain Rust, no DOM: the page's state and how each server frame changes it, runs,
//!   audit marks, tiles, history, verdicts, the scoreboard, the race timeline's scene, knobs.
//!   Everything a test should pin down lives here and runs with `cargo test -p oversold-frontend`.
//! - `session`: the page's reactive state: one signal around [`model::page::PageState`], whose
//!   `apply` is the one place server frames change it.
//! - `socket`: the only module that touches the WebSocket; decodes into typed frames (or hands
//!   them to a page's own reader: the phone's is [`model::phone`]) and offers a typed `send`,
//!   reconnecting with backoff.
//! - `app` and `components/`: the view, one file per panel, reading signals from context.
//!   The lab's rarely opened parts are wasm chunks loaded when first shown (`components::lazy`).
//! - `web` and `sync`: the rest of the browser (address bar, localStorage, `<body>`
//!   attributes, full screen, files), and the Effects that keep it in step with the session.
//! - `panic_hook`: a panic becomes a banner on the page, installed before mounting.
//! - `workshop_app` and `phone_app`: the workshop page and the phone page, each its own wasm
//!   (`src/bin/workshop.rs`, `src/bin/phone.rs`), so the lab's bundle carries neither and a
//!   phone downloads only what it shows.

pub mod app;
pub mod components;
pub mod model;
pub mod panic_hook;
pub mod phone_app;
pub mod session;
pub mod socket;
pub mod sync;
pub mod web;
pub mod workshop_app;
