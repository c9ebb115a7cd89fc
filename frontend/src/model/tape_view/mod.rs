//! The Redis tape on the page: a run's commands in the order Redis ran them, rebuilt from its
//! replies by `oversold_protocol::tape`, as a picture; and the step-through log in the same
//! picture. Plain Rust with no DOM: the component only measures its canvas and paints the
//! [`scene::Scene`].
//!
//! # Layout
//! - [`run_tape`]: [`RunTape`], the tape of the run on screen with the caption, zoom and
//!   run-out write the tape panel and the race timeline both read.
//! - [`cache`]: one build per batch of outcomes, shared by every reader.
//! - [`strip`]: the picture before pixels: bands, lanes, columns in Redis's order, marks, links.
//! - [`from_tape`] and [`from_step`]: a run's tape, or the step log, as a strip.
//! - [`scene`]: the strip laid out in CSS px, every drawing decision made.
//! - [`caption`]: the numbers line, the tape's sentence, and the notes on what is not drawn.

pub mod cache;
pub mod caption;
pub mod from_step;
pub mod from_tape;
pub mod run_tape;
pub mod scene;
pub mod strip;

#[cfg(test)]
mod tests;

pub use run_tape::RunTape;
pub use strip::Strip;
