//! The workshop: exercises a student solves by writing the Lua, a judge that races the
//! submission on a real Redis, and the sandbox that Redis runs in.
//!
//! - [`sandbox`]: a `redis-server` this process starts for untrusted Lua only: an ACL user
//!   per check, a watchdog, a restart.

pub mod sandbox;
