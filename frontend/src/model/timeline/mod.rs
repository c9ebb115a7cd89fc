//! The race timeline, as plain data: one row per buyer on a time axis since the start gate, the
//! moment the real stock ran out, the sentence that says what the picture shows, and the picture
//! itself as a list of shapes. The component only measures the canvas and paints the [`Scene`].
//!
//! # Layout
//! - [`race`]: the numbers, all from the run's Redis tape: when the stock ran out (the answer
//!   of the write the tape names), who read it before, who sold what did not exist.
//! - [`zoom`]: when a long run zooms to its race, and the note on who that leaves out.
//! - [`rows`]: bars in row order (by arrival or by app server), the zoom applied.
//! - [`caption`]: the one-line reading of the picture.
//! - [`time_axis`]: the axis under the bars and its tick labels.
//! - [`geometry`]: edges, row pitch and bar thickness in CSS px.
//! - [`scene`]: every rectangle, arrow and label, in drawing order.

pub mod caption;
pub mod geometry;
pub mod race;
pub mod rows;
pub mod scene;
pub mod time_axis;
pub mod zoom;

#[cfg(test)]
mod fixtures;

pub use caption::caption;
pub use race::{Race, TapeCounts, race};
pub use rows::{Bar, Group, RowOrder, Timeline, mark};
pub use scene::{Scene, scene, scene_marked};
pub use zoom::{Hidden, hidden, zoom_note};
