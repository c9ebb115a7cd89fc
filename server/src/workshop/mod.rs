//! The workshop: exercises a student solves by writing the Lua, a judge that races the
//! submission on a real Redis, and the sandbox that Redis runs in.
//!
//! - [`exercises`]: one folder per exercise (words, starter, reference, the rules it is
//!   judged by), one line in the registry.
//! - [`judge`]: seeded crowds on a real Redis, the model replayed in Redis's order, a
//!   failure shrunk to a tape ([`monitor`] reads it).
//! - [`cli`]: `oversold exercise list | show | check`.
//! - [`service`]: checks as a public site offers them (queue, budgets, one sandbox per
//!   process) and the CLI's one-off check.
//! - [`sandbox`]: a `redis-server` this process starts for untrusted Lua only: an ACL user
//!   per check, a watchdog, a restart.

pub mod cli;
pub mod exercises;
pub mod judge;
pub mod monitor;
pub mod sandbox;
pub mod service;
