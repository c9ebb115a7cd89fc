//! The panels of the page, one file each. They read [`crate::session::Session`] from context
//! and send through [`crate::socket::Socket`]; none of them sees JSON.

pub mod audit;
pub mod carts;
pub mod checkout;
pub mod controls;
pub mod counters;
pub mod explainer;
pub mod failures;
pub mod files;
pub mod frames;
pub mod header;
pub mod history;
pub mod inventory;
pub mod lazy;
pub mod notices;
pub mod presets;
pub mod replay;
pub mod result;
pub mod room;
pub mod run_buttons;
pub mod scoreboard;
pub mod script;
pub mod shortcuts;
pub mod step;
pub mod tape;
pub mod timeline;
pub mod toggles;
pub mod workshop;
