//! The workshop: the sandbox a student's Lua runs in, and the judge.
//!
//! - `sandbox`: escape attempts as a check's student (commands, keys, Lua, loops, memory),
//!   each refused or stopped, with the sandbox ready for the next check and a Redis outside
//!   it untouched; the watchdog's kills and restarts; exclusive leases; no password shown.

mod sandbox;
