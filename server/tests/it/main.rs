//! The server's integration tests, as one test binary: every module below starts its own
//! private `redis-server` or cluster (and, where a test needs it, the real app on a free port).
//! The suites that race every strategy take them from the registries (`common::registry`),
//! never from a list of names.
//!
//! - `lua_contract`: each Lua file's header, line by line, against a real Redis.
//! - `carts`: the cart and warehouse scenarios: random runs with their checker per safe
//!   strategy on a single Redis and a cluster, the unsafe ones measured, CROSSSLOT.
//! - `checkout`: the checkout scenario: random races with their checkers per strategy,
//!   confirm/release/reaper racing on the same holds, the reaper under load, fail modes,
//!   reconciliation, the socket and the CLI.
//! - `busy`, `failover`: sales on `redis-server`s each run starts for itself: a long
//!   script mid-sale; a primary killed before its replica caught up, the replica promoted.
//! - `strategies`: each strategy's contract; `invariants`, `all_strategies`: hundreds of
//!   seeded random races with their checkers.
//! - `stalls`: Redis frozen past the lock's lease: `lock` loses exclusion, `fenced_lock`
//!   does not oversell.
//! - `redlock`: the quorum lock with a lock master killed or frozen (the other two still
//!   grant it), two gone (no majority, no oversell), and a holder stalled past its lease
//!   (sold twice, as with `lock`); its round trips beside `lock`'s.
//! - `cluster`: the same invariants, round trips and a killed master on a three-master
//!   Redis Cluster each test starts for itself.
//! - `tape`: real runs rebuilt into Redis's order from their replies, and replayed.
//! - `ws`: the WebSocket with real clients; `http`: the HTTP routes with `oneshot`;
//!   `hostile`: another origin's page, a start and a cancel in one write, floods of frames.
//! - `budgets`: per-address caps, the comparison share, the connection and PostgreSQL
//!   budgets; `timeouts`: half-sent requests and shutdown; `cli`: the binary's help and logs
//!   never show a password, and `serve --public` keeps its profile.
//! - `modules`: the module graph has no cycle and keeps ARCHITECTURE.md's dependency rules;
//!   `leftovers`: a SIGKILLed server leaves no private `redis-server` (nor, after the next
//!   start, its scratch directory).
//! - `scale`: issue 20's flash sale at test size (200,000 buyers): `lua` is its serial
//!   replay and the CLI's streaming tally agrees, `naive` oversells, a crowd past the
//!   in-flight cap, and `--max-buyers` on the socket.
//! - `no_postgres`: without PostgreSQL its tests skip in one line (see
//!   `common::postgres`), but fail when `CI` is set.

mod all_strategies;
mod budgets;
mod busy;
mod carts;
mod checkout;
mod cli;
mod cluster;
mod common;
mod durability;
mod eviction;
mod exercises;
mod failover;
mod faults;
mod hostile;
mod http;
mod invariants;
mod leftovers;
mod lua_contract;
mod modules;
mod no_postgres;
mod redlock;
mod rooms;
mod scale;
mod stalls;
mod step;
mod strategies;
mod tape;
mod timeouts;
mod workshop;
mod ws;
