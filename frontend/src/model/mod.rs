//! Plain-Rust logic behind the page: no Leptos, no web-sys, so it compiles and tests on the host.
//!
//! Every rule a visitor can check by eye (which line is "oversold", what a tile shows, what the
//! result line says, how the scoreboard's bars are scaled) lives here, where
//! `cargo test -p oversold-frontend` can pin it down.
//!
//! # Layout
//! - [`page`]: the page's state and [`page::PageState::apply`], the one place a server frame
//!   changes it; [`strategies`]: every word about a strategy, looked up in `hello`.
//! - [`run`], [`compare`], [`history`]: one run, one comparison, the runs so far.
//! - [`room`]: what a room adds (role, head count, this phone's results, chaos); [`phone`]: the
//!   phone page's reading of the server's frames (only those it shows), folded into the same
//!   state by the same rules.
//! - [`checkout`]: the checkout scenario: its knobs, the books, unit states, stories, and
//!   what happened in words. [`carts`]: the cart and warehouse scenarios: a row of tiles
//!   and a ledger per shelf, partial carts, the CROSSSLOT lesson.
//! - [`audit`], [`tiles`], [`verdict`], [`scoreboard`], [`timeline`]: what each panel shows.
//! - [`tape_view`]: the Redis tape of the run on screen (`oversold_protocol::tape`) as a picture,
//!   and the step-through log in the same picture; [`step`]: step-through mode read from its
//!   state (buttons, what the visitor just did, keys 1–4).
//! - [`canvas`]: the shapes both canvases are made of.
//! - [`axis`] (1-2-5 steps), [`chart`] (percentages, log scale), [`text`] (numbers and
//!   durations in words): the arithmetic the panels share, each in one place.
//! - [`controls`] (the form's knobs), [`backoff`] (reconnect delays).
//! - [`failures`]: the facts a "Redis fails" scenario adds to a run (busy replies, what a crash,
//!   an eviction or a failover took back), in the page's words.
//! - [`presets`] (a preset's knobs into the form; the preset a link names),
//!   [`url`] (a run's knobs in the address, and back), [`saved`] (saved-run files),
//!   [`shortcuts`] (which key does what), [`theme`] and [`view`] (dark or light; the normal
//!   page or the stage view).
//! - [`workshop`]: the Lua exercises the server judges: the exercise on screen, the student's
//!   scripts and progress, the check in flight, the verdict and its tape; the editor's
//!   keys and gutter; the panels' markup.

pub mod audit;
pub mod axis;
pub mod backoff;
pub mod canvas;
pub mod carts;
pub mod chart;
pub mod checkout;
pub mod compare;
pub mod controls;
pub mod failures;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod history;
pub mod page;
pub mod phone;
pub mod presets;
pub mod room;
pub mod run;
pub mod saved;
pub mod scoreboard;
pub mod shortcuts;
pub mod step;
pub mod strategies;
pub mod tape_view;
pub mod text;
pub mod theme;
pub mod tiles;
pub mod timeline;
pub mod url;
pub mod verdict;
pub mod view;
pub mod workshop;
