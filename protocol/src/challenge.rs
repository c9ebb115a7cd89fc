//! A workshop challenge in a room: the presenter opens an exercise for everyone, each
//! participant submits a script from their own laptop under a nickname, and the projector
//! shows a live leaderboard; the presenter can put any submission's counterexample tape on
//! the projector.
//!
//! ```text
//! presenter                     server(s)                        participant
//!   | -- open_challenge {room, presenter_token, exercise} ->     |
//!   | <- challenge_opened {room, exercise:{id, title, …}} -----> |  (everyone)
//!   |                              | <- submit_challenge {room, nickname, source}
//!   |                              | -> solution_verdict {…} --> |  (that participant)
//!   | <- challenge_entry {room, participant, nickname, passed, verdict, …} -> |  (everyone)
//!   | -- show_counterexample {room, presenter_token, participant} ->
//!   | <- challenge_tape {room, participant, nickname, verdict:{…}} -> |  (everyone)
//! ```
//! A participant who joins late gets `challenge_opened` and every entry so far.

use serde::{Deserialize, Serialize};

use crate::workshop::{ExerciseInfo, SolutionVerdict, VerdictCode};

/// Longest nickname, in characters.
pub const MAX_NICKNAME_CHARS: usize = 24;

/// A nickname as shown on the projector: trimmed, 1 to [`MAX_NICKNAME_CHARS`] characters,
/// no control characters (a page shows it as text, never as markup).
pub fn check_nickname(raw: &str) -> Result<String, String> {
    let name = raw.trim();
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_NICKNAME_CHARS {
        return Err(format!(
            "a nickname is 1 to {MAX_NICKNAME_CHARS} characters"
        ));
    }
    if name.chars().any(char::is_control) {
        return Err("a nickname has no control characters".into());
    }
    Ok(name.to_string())
}

/// The presenter opened an exercise for the room.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChallengeOpened {
    /// The room.
    pub room: String,
    /// The exercise (no reference solution).
    pub exercise: ExerciseInfo,
}

/// One participant's latest submission, as the leaderboard shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChallengeEntry {
    /// The room.
    pub room: String,
    /// Who submitted (their participant id in the room).
    pub participant: u32,
    /// The name they chose.
    pub nickname: String,
    /// True when it passed.
    pub passed: bool,
    /// What the judge found.
    pub verdict: VerdictCode,
    /// On a pass: calls a second in the judge's raced crowds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls_per_s: Option<f64>,
    /// How long the check took, ms.
    pub took_ms: u64,
}

/// A submission's whole verdict (its counterexample tape), put on every screen by the
/// presenter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChallengeTape {
    /// The room.
    pub room: String,
    /// Whose.
    pub participant: u32,
    /// Their nickname.
    pub nickname: String,
    /// The verdict, tape included.
    pub verdict: SolutionVerdict,
}
