//! The `cart` and `warehouses` scenarios against a real Redis and a real local cluster.
//!
//! - `checks`: the per-run checker: one outcome per buyer, every line consistent with its
//!   order's result, every shelf's ledger adding up against the counters read back, and
//!   (for the safe strategies) no shelf oversold and no partial cart left. It can fail: the
//!   unsafe strategies trip it, and `invariants` proves they do.
//! - `invariants`: hundreds of seeded random runs of every safe strategy on a single Redis
//!   and on a three-master cluster; the unsafe ones show their failure in nearly every run
//!   with the defaults (a measured bound).
//! - `crossslot`: the untagged cart script refused by a cluster with `CROSSSLOT` (as the
//!   run's error, on the CLI and on the socket), and running on a single Redis with the
//!   warning; bad knobs refused before Redis is touched.
//! - `cli`: `run --json` and `compare` of the binary.
//! - `faults`: Redis killed mid-run: the run ends promptly and says so; the next one behaves.

mod checks;
mod cli;
mod crossslot;
mod faults;
mod invariants;
