//! The checkout scenario as the page reads it: plain Rust, tested on the host.
//!
//! # Layout
//! - [`knobs`]: the checkout's knobs in the form, and the request they make.
//! - [`clock`]: the shop clock and the real one, in words.
//! - [`books`]: where every unit is (`stock = available + held + sold + leaked`), live and at
//!   the end, the variance, and what a `reconcile` fixed; [`books::Live`] rides on the run.
//! - [`units`]: the inventory grid's unit states, dealt from the books.
//! - [`story`]: each buyer's whole story in words, and the audit trail's filter by ending.
//! - [`happened`]: what happened, in plain sentences per strategy; [`tradeoff`]: fail closed
//!   against fail open after an outage.

pub mod books;
pub mod clock;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod happened;
pub mod knobs;
pub mod story;
pub mod tradeoff;
pub mod units;
