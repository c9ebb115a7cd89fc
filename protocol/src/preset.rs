//! Presets: a named crowd that opens a lesson in one click (`hello.presets`) and one link
//! (`/?preset=article`). The server writes every preset once (`server/src/presets.rs`); the
//! page and `oversold run|compare --preset NAME` read the same table.

use serde::{Deserialize, Serialize};

use crate::RunRequest;

/// One preset as `hello` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PresetInfo {
    /// The link's name, e.g. `article` (`/?preset=article`).
    pub name: String,
    /// The button's words, e.g. `100 phones, 121 orders`.
    pub label: String,
    /// One or two sentences: what it sets up and what to look at.
    pub description: String,
    /// The knobs it sets. `strategy` names the one run its click starts; with no strategy
    /// (`compare`), the click races every strategy instead. No seed: each click is a fresh
    /// crowd of the same shape.
    pub request: RunRequest,
    /// True when the click starts a comparison rather than one run.
    pub compare: bool,
}

/// The URL parameter naming a preset.
pub const PRESET_PARAM: &str = "preset";
