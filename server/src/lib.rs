//! oversold: real concurrent buyers against a real Redis, racing for a few units of stock.
//!
//! # Layout
//! - [`cli`]: the command-line flags. `main.rs` only wires things together.
//! - [`redis_source`] picks the Redis (a URL or a cluster's nodes, local, or a
//!   [`private_redis`] or [`private_cluster`] we start); [`backends`] holds it and the
//!   optional PostgreSQL; [`lock_service`] the three lock masters a `redlock` run starts.
//! - [`store`]: the only module that knows Redis key names, commands and the Lua scripts,
//!   and whether Redis is one server or a cluster;
//!   [`pg`] is its PostgreSQL twin. [`shelf`] is a run's stock in one or the other.
//! - [`strategy`]: one file per way of buying, each a `const` that describes itself and
//!   names the kind of connection it needs.
//! - [`plan`]: the seeded schedule (who buys how much, when, through which app server);
//!   [`presets`]: named crowds that open a lesson in one click and one link.
//! - [`engine`]: runs a race: shelf, connections, start gate, buyer tasks, read-back, cleanup.
//! - [`checkout`]: runs a checkout (the scenario past the click): reserve, pay, confirm or
//!   release, crashes, resends, holds that expire and their reaper (or, for `holds_notify`,
//!   a listener on Redis's `expired` events, on a Redis of the run's own), the ledger, live
//!   reconciliation. Its strategies are in `strategy::checkout`.
//! - [`cart`]: runs a `cart` or `warehouses` race: several counters, orders that touch
//!   several of them, a ledger per counter. Its strategies are in `strategy::cart`.
//! - [`busy`] and [`failover`]: sales on `redis-server`s of the run's own: one stalled by a
//!   long script, one whose primary dies before its replica caught up (`strategy::busy`,
//!   `strategy::failover`).
//! - [`summary`]: outcomes to counts and latency percentiles.
//! - [`app`]: the axum router (`/healthz`, `/ws`, static files); [`ws`]: the WebSocket session;
//!   [`serve`]: the listener loop with its timeouts and graceful shutdown.
//! - [`rooms`]: rooms, where the audience's phones are the buyers: a sale per room, events
//!   fanned out over a Redis stream to every server process, chaos buttons, the QR code.
//! - [`stepper`]: step-through mode, one real command per click, behind turnstiles.
//! - [`client`]: who a client is (its address) and the per-address caps; [`budget`]: the
//!   open-file and PostgreSQL budgets a run reserves from before it opens anything;
//!   [`headers`]: the security headers and Content-Security-Policy on every response.
//! - [`health`]: pings Redis every second and publishes up/down, with the reason.
//! - [`headless`]: `oversold run` and `oversold compare`, races on the command line.
//! - [`bench`]: `oversold bench`, a closed-loop load for throughput and latency.
//!
//! The wire types live in the `oversold-protocol` crate, shared with the wasm page.

pub mod app;
pub mod backends;
pub mod bench;
pub mod budget;
pub mod busy;
pub mod cart;
pub mod checkout;
pub mod cli;
pub mod client;
pub mod durability;
pub mod engine;
pub mod eviction;
pub mod failover;
pub mod gate;
pub mod headers;
pub mod headless;
pub mod health;
pub mod lock_service;
pub mod pg;
pub mod plan;
pub mod presets;
pub mod private_cluster;
pub mod private_redis;
pub mod redis_source;
pub mod rooms;
pub mod run;
pub mod scenario;
pub mod serve;
pub mod shelf;
pub mod state;
pub mod stepper;
pub mod store;
pub mod strategy;
pub mod summary;
pub mod workshop;
pub mod ws;
