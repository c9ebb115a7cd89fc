//! The workshop on the wire: an exercise as a client sees it, and the judge's verdict on a
//! submitted script.
//!
//! ```text
//! client                                   server
//!   | ---- {"type":"check_solution","exercise":"reserve","source":"local s = …"} -> |
//!   | <--- {"type":"solution_verdict","exercise":"reserve","passed":false,
//!   |        "verdict":"oversold","message":"…","counterexample":{"stock":1,
//!   |        "calls":[…],"tape":[…]}} -------------------------------------------- |
//! ```
//! One `check_solution` gets exactly one `solution_verdict` (or one `error`: a bad frame, an
//! unknown exercise, a script too big, the judge busy). The CLI's `oversold exercise check
//! --json` prints the same object.

use serde::{Deserialize, Serialize};

use crate::wire_names::wire_names;

/// Longest script a client may submit, in bytes: room to spare for a script, and, escaped
/// in JSON, still inside a socket's 16 KiB frame.
pub const MAX_SOURCE_BYTES: usize = 8 * 1024;

/// An exercise as a student sees it (the reference solution never leaves the server).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExerciseInfo {
    /// Stable id (`reserve`), used in links and in `check_solution`.
    pub id: String,
    /// A short title.
    pub title: String,
    /// What the shop needs, in a few sentences.
    pub story: String,
    /// The contract: the `KEYS`/`ARGV`/`Returns`/`Errors` header the script must keep.
    pub contract: String,
    /// The broken script a beginner would write, to start from.
    pub starter: String,
    /// Hints, to be shown one at a time.
    pub hints: Vec<String>,
}

/// What the judge found, as a short code (the CLI's `verdict`, the page's headline).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerdictCode {
    /// Every check held.
    Passed,
    /// More units left the shelf than it held.
    Oversold,
    /// A reply (or the stock after) differs from the contract's.
    WrongAnswer,
    /// A bad stock or quantity was accepted, or changed something.
    BadInputAccepted,
    /// A resent request took units again, or got a different answer.
    Duplicate,
    /// A customer got past their limit.
    LimitBroken,
    /// A cart left with some of its lines taken and not others.
    PartialCart,
    /// The same units counted twice: a hold's units back on the shelf while the hold still
    /// stands or was sold (a reaper that released a hold and kept it, a confirm of a hold the
    /// reaper had already given back), so the shop can sell more units than it has.
    SoldTwice,
    /// The script held Redis longer than the exercise allows.
    TooSlow,
    /// The script ran past the sandbox's busy threshold and was stopped with `SCRIPT KILL`.
    Killed,
    /// The sandbox had to be restarted (a script that wrote, then would not stop; memory).
    Restarted,
    /// The script called a command, or touched a key, it may not.
    Noperm,
    /// The script raised an error (a typo, a nil compared with a number, …).
    ScriptError,
    /// A Redis Cluster refused the call before running a line: its keys hash to different
    /// slots (`CROSSSLOT`), because they share no hash tag.
    Crossslot,
}

wire_names! { VerdictCode {
    Passed = "passed",
    Oversold = "oversold",
    WrongAnswer = "wrong_answer",
    BadInputAccepted = "bad_input_accepted",
    Duplicate = "duplicate",
    LimitBroken = "limit_broken",
    PartialCart = "partial_cart",
    SoldTwice = "sold_twice",
    TooSlow = "too_slow",
    Killed = "killed",
    Restarted = "restarted",
    Noperm = "noperm",
    ScriptError = "script_error",
    Crossslot = "crossslot",
} }

/// One call of the script, as the judge made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    /// The buyer (1-based) who made it, or 0 for the reaper.
    pub buyer: u32,
    /// `KEYS`, as sent.
    pub keys: Vec<String>,
    /// `ARGV`, as sent.
    pub args: Vec<String>,
}

/// One line of a counterexample's tape: a command as Redis ran it, in Redis's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TapeLine {
    /// The buyer whose call this is (its `EVALSHA`, and each command the script ran inside);
    /// 0 for the reaper, whose calls belong to no buyer.
    pub buyer: u32,
    /// True for a command the script ran (`redis.call`), false for the call itself.
    pub inside: bool,
    /// The command and its arguments, as Redis logged them.
    pub command: String,
    /// For a call: what the script answered. For a command inside: empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reply: String,
    /// For a call: the stock after it, when the exercise has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stock_after: Option<String>,
    /// For a call: what the contract answers here, when the script answered otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
}

/// The smallest crowd the judge found that still breaks the script, and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counterexample {
    /// What the keys held before the first call (`key = value`).
    pub setup: Vec<String>,
    /// The calls, in the order Redis ran them.
    pub calls: Vec<Call>,
    /// Every command, in Redis's order.
    pub tape: Vec<TapeLine>,
}

/// A passing script's figures beside the reference solution's, measured in the same check.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// Calls the judge made.
    pub calls: u32,
    /// Calls a second, over the concurrent crowds.
    pub calls_per_s: f64,
    /// The longest single call inside Redis, µs (`SLOWLOG`).
    pub longest_us: u64,
    /// The reference solution's calls a second, same crowds.
    pub reference_calls_per_s: f64,
    /// The reference solution's longest call, µs.
    pub reference_longest_us: u64,
}

/// The answer to `check_solution` (and what `oversold exercise check --json` prints).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SolutionVerdict {
    /// The exercise.
    pub exercise: String,
    /// True when every check held.
    pub passed: bool,
    /// What was found.
    pub verdict: VerdictCode,
    /// One sentence in plain words.
    pub message: String,
    /// On a fail that a crowd showed: the smallest such crowd, as a tape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counterexample: Option<Counterexample>,
    /// On a pass: throughput and longest call, beside the reference's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures: Option<Figures>,
    /// How long the check took, ms.
    pub took_ms: u64,
}

#[cfg(test)]
mod tests {
    use super::VerdictCode;

    #[test]
    fn a_verdict_code_is_written_as_its_name() {
        for code in [
            VerdictCode::Passed,
            VerdictCode::Oversold,
            VerdictCode::WrongAnswer,
            VerdictCode::BadInputAccepted,
            VerdictCode::Duplicate,
            VerdictCode::LimitBroken,
            VerdictCode::PartialCart,
            VerdictCode::SoldTwice,
            VerdictCode::TooSlow,
            VerdictCode::Killed,
            VerdictCode::Restarted,
            VerdictCode::Noperm,
            VerdictCode::ScriptError,
            VerdictCode::Crossslot,
        ] {
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
            assert_eq!(serde_json::from_str::<VerdictCode>(&json).unwrap(), code);
        }
    }
}
