//! oversold: real concurrent buyers against a real Redis, racing for a few units of stock.
//!
//! # Layout
//! - [`cli`]: the command-line flags. [`main.rs`] only wires things together.
//! - [`redis_source`] picks the Redis (given, local, or a [`private_redis`] we start).
//! - [`store`]: the only module that knows Redis key names, commands and the Lua scripts;
//!   [`pg`] is its PostgreSQL twin. [`shelf`] hides which of the two holds a run's stock.
//! - [`strategy`]: one file per way of buying, behind one trait.
//! - [`plan`]: the seeded schedule (who buys how much, when, through which app server).
//! - [`engine`]: runs a race: fleet of connections, start gate, buyer tasks, read-back, cleanup.
//! - [`summary`]: outcomes to counts and latency percentiles.
//! - [`app`]: the axum router (`/healthz`, `/ws`, static files); [`ws`]: the WebSocket session.
//! - [`health`]: pings Redis every second and publishes up/down.
//! - [`headless`]: `oversold run` and `oversold compare`, races on the command line.
//! - [`bench`]: `oversold bench`, a closed-loop load for throughput and latency.
//!
//! The wire types live in the `oversold-protocol` crate, shared with the wasm page.

pub mod app;
pub mod bench;
pub mod cli;
pub mod engine;
pub mod headless;
pub mod health;
pub mod pg;
pub mod plan;
pub mod private_redis;
pub mod redis_source;
pub mod shelf;
pub mod store;
pub mod strategy;
pub mod summary;
pub mod ws;
