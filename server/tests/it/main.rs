//! The server's integration tests, as one test binary: every module below starts its own
//! private `redis-server` (and, where a test needs it, the real app on a free port).
//!
//! - `lua_contract`: each Lua file's header, line by line, against a real Redis.
//! - `strategies`: each strategy's contract; `invariants`, `all_strategies`: hundreds of
//!   seeded random races with their checkers.
//! - `ws`: the WebSocket with real clients; `http`: the HTTP routes with `oneshot`.

mod all_strategies;
mod common;
mod faults;
mod http;
mod invariants;
mod lua_contract;
mod strategies;
mod ws;
