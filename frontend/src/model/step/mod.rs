//! Step-through mode ("you are the scheduler"), read from the server's [`StepState`]: what each
//! buyer's button says, what every logged command did to the counter, and what the visitor just
//! made happen, in words. Plain Rust, tested on the host; `components/step.rs` only shows it.
//!
//! Nothing here names a strategy: what a command did is read from the counter before and after
//! it (the [`trail`]), from its reply (`nil`: Redis refused it), and from the buyer's outcome;
//! the few words that depend on the kind of strategy go by its [`Category`] from `hello`.
//!
//! # Layout
//! - [`trail`]: the stock after every command (each click's answer reads the key afresh).
//! - [`log`]: each command classified (read, write, undo, refused...), reads joined to writes.
//! - [`story`]: the sentences: an oversell, a lost update, one command that cannot be split, a
//!   `nil`.
//! - [`narrate`]: every click in one line (who sent what, what Redis answered, what it means
//!   for the race), [`story`]'s sentence where it has one.
//! - [`nudge`]: once every buyer is done and nothing went wrong, the order of clicks that breaks
//!   the strategy, or why none does.
//! - [`buyers`]: each buyer's button: its next command or how it ended.
//! - [`tally`]: the page's counters while step mode is open (the stock is the real key), and
//!   units sold against the stock in words.
//! - [`keys`]: keys 1–4 while step mode is open.
//! - [`view`]: the open panel as one plain value, drawn afresh on every answer.
//!
//! [`StepState`]: oversold_protocol::StepState
//! [`Category`]: oversold_protocol::Category

pub mod buyers;
pub mod keys;
pub mod log;
pub mod narrate;
pub mod nudge;
pub mod story;
pub mod tally;
pub mod trail;
pub mod view;

#[cfg(test)]
pub(crate) mod fixtures;
