//! Reading a server frame by its `type` first: [`ServerMessage::from_json`].
//!
//! serde's derived reader for an internally tagged enum cannot know a frame's type before it
//! has read the whole object, so it copies every frame into an in-memory tree first and then
//! reads the variant out of that tree. That is a second complete reader for every type a frame
//! can hold, and in a wasm page it is most of the protocol's code: the lab's `ServerMessage`
//! reader was its largest function. This reads the `type` field alone, then reads the payload
//! straight from the text as the one struct that `type` names (its `type` key is skipped like
//! any key a struct does not name). The result is the same value the derived reader gives
//! (`the_tag_first_reader_agrees_with_serde` below; the server's integration tests check both
//! on every frame they receive), and a malformed frame is an error from either.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::Error as _;

use crate::ServerMessage;

/// The frames every page reads ([`ServerMessage::from_json`]'s first group). With
/// [`LATER_TYPES`] and [`WORKSHOP_TYPES`] they are every frame's `type`, as
/// [`ServerMessage`]'s serde attributes spell it, each listed once.
const COMMON_TYPES: &[&str] = &[
    "hello",
    "redis_status",
    "run_started",
    "outcomes",
    "run_finished",
    "run_cancelled",
    "compare_started",
    "compare_finished",
    "error",
];

/// A struct variant read straight from the text: its fields, as the variant declares them
/// (the compiler checks both lists agree: the variant is built from the struct's fields). A
/// missing `Option` field reads as `None`, as it does in the derived reader.
macro_rules! struct_variant {
    ($text:expr => $variant:ident { $($field:ident: $ty:ty),+ $(,)? }) => {{
        #[derive(Deserialize)]
        struct Fields {
            $($field: $ty,)+
        }
        let Fields { $($field),+ } = serde_json::from_str($text)?;
        ServerMessage::$variant { $($field),+ }
    }};
}

/// What the lab's main reader made of a frame ([`ServerMessage::from_json_in_lab`]).
#[derive(Debug, PartialEq)]
// Returned and matched at once: a box would cost every frame an allocation to save nothing.
#[allow(clippy::large_enum_variant)]
pub enum LabFrame {
    /// A frame read.
    Read(ServerMessage),
    /// One of [`LATER_TYPES`]: read it with [`ServerMessage::from_json_later`], whose code
    /// the lab fetches the first time one arrives.
    Later,
    /// A workshop's frame: the lab ignores it.
    Skipped,
}

/// Frames the lab reads with code it fetches when the first one arrives: step-through's, a
/// reconciliation's, a million-buyer run's progress, a room's. A plain race, a comparison
/// and a checkout never send one.
pub const LATER_TYPES: &[&str] = &[
    "run_progress",
    "audit_rows",
    "step_state",
    "step_closed",
    "reconciliation",
    "reconciled",
    "room_created",
    "room_joined",
    "room_presence",
    "sale_opened",
    "buy_result",
    "sale_closed",
    "chaos_applied",
];

/// The workshop's frames, which the lab ignores.
const WORKSHOP_TYPES: &[&str] = &[
    "solution_verdict",
    "challenge_opened",
    "challenge_entry",
    "challenge_tape",
];

/// A frame's `type`, read alone.
fn kind_of(text: &str) -> Result<Cow<'_, str>, serde_json::Error> {
    #[derive(Deserialize)]
    struct Tag<'a> {
        #[serde(rename = "type", borrow)]
        kind: Cow<'a, str>,
    }
    Ok(serde_json::from_str::<Tag>(text)?.kind)
}

/// Every frame's `type`, group by group.
fn every_type() -> impl Iterator<Item = &'static str> {
    [COMMON_TYPES, LATER_TYPES, WORKSHOP_TYPES]
        .into_iter()
        .flatten()
        .copied()
}

/// serde's own words for a tag it does not know, naming every type there is.
fn unknown(kind: &str) -> serde_json::Error {
    // Pushed piece by piece: a `format!` per type costs the page's wasm more code.
    let mut expected = String::new();
    for t in every_type() {
        if !expected.is_empty() {
            expected.push_str(", ");
        }
        expected.push('`');
        expected.push_str(t);
        expected.push('`');
    }
    serde_json::Error::custom(format_args!(
        "unknown variant `{kind}`, expected one of {expected}"
    ))
}

impl ServerMessage {
    /// One frame's text, read `type` first (see the module's words): the same value
    /// `serde_json::from_str::<ServerMessage>` gives, with a fraction of its code. A page
    /// reads frames with this; anything else may use either.
    pub fn from_json(text: &str) -> Result<ServerMessage, serde_json::Error> {
        let kind = kind_of(text)?;
        Self::read_common(&kind, text)
            .or_else(|| Self::read_later(&kind, text))
            .or_else(|| Self::read_workshop(&kind, text))
            .unwrap_or_else(|| Err(unknown(&kind)))
    }

    /// The lab's main reader: the frames every run sends, read; the [`LATER_TYPES`] left for
    /// [`ServerMessage::from_json_later`] (so the lab's first download carries none of their
    /// readers); a workshop's frame skipped unread.
    pub fn from_json_in_lab(text: &str) -> Result<LabFrame, serde_json::Error> {
        let kind = kind_of(text)?;
        if let Some(read) = Self::read_common(&kind, text) {
            return read.map(LabFrame::Read);
        }
        if LATER_TYPES.contains(&&*kind) {
            Ok(LabFrame::Later)
        } else if WORKSHOP_TYPES.contains(&&*kind) {
            Ok(LabFrame::Skipped)
        } else {
            Err(unknown(&kind))
        }
    }

    /// One of the [`LATER_TYPES`]' frames (any other is an error).
    pub fn from_json_later(text: &str) -> Result<ServerMessage, serde_json::Error> {
        let kind = kind_of(text)?;
        Self::read_later(&kind, text).unwrap_or_else(|| Err(unknown(&kind)))
    }

    /// The frames every page reads; `None` for another `kind`.
    fn read_common(kind: &str, text: &str) -> Option<Result<ServerMessage, serde_json::Error>> {
        use crate::{BuyerOutcome, RaceConfig, RedisState, RunConfig, RunSummary};
        let read = || -> Result<ServerMessage, serde_json::Error> {
            Ok(match kind {
                "hello" => ServerMessage::Hello(serde_json::from_str(text)?),
                "redis_status" => struct_variant!(text => RedisStatus { redis: RedisState }),
                "run_started" => {
                    struct_variant!(text => RunStarted { run_id: String, config: RunConfig })
                }
                "outcomes" => struct_variant!(text => Outcomes {
                    run_id: String,
                    outcomes: Vec<BuyerOutcome>,
                }),
                "run_finished" => {
                    struct_variant!(text => RunFinished { run_id: String, summary: RunSummary })
                }
                "run_cancelled" => struct_variant!(text => RunCancelled {
                    run_id: String,
                    summary: Option<RunSummary>,
                }),
                "compare_started" => struct_variant!(text => CompareStarted {
                    compare_id: String,
                    strategies: Vec<String>,
                    config: RaceConfig,
                }),
                "compare_finished" => struct_variant!(text => CompareFinished {
                    compare_id: String,
                    summaries: Vec<RunSummary>,
                }),
                "error" => ServerMessage::Error(serde_json::from_str(text)?),
                _ => unreachable!("listed in COMMON_TYPES"),
            })
        };
        COMMON_TYPES.contains(&kind).then(read)
    }

    /// The [`LATER_TYPES`]' frames; `None` for another `kind`.
    fn read_later(kind: &str, text: &str) -> Option<Result<ServerMessage, serde_json::Error>> {
        use crate::{ReconcileReport, Reconciliation, at_scale, room};
        let read = || -> Result<ServerMessage, serde_json::Error> {
            Ok(match kind {
                "run_progress" => struct_variant!(text => RunProgress {
                    run_id: String,
                    progress: at_scale::RunProgress,
                }),
                "audit_rows" => ServerMessage::AuditRows(serde_json::from_str(text)?),
                "step_state" => ServerMessage::StepState(serde_json::from_str(text)?),
                "step_closed" => struct_variant!(text => StepClosed { run_id: String }),
                "reconciliation" => struct_variant!(text => Reconciliation {
                    run_id: String,
                    reconciliation: Reconciliation,
                }),
                "reconciled" => struct_variant!(text => Reconciled {
                    run_id: String,
                    report: ReconcileReport,
                }),
                "room_created" => struct_variant!(text => RoomCreated {
                    room: String,
                    presenter_token: String,
                    join_url: String,
                }),
                "room_joined" => struct_variant!(text => RoomJoined {
                    room: String,
                    participant_id: u32,
                    role: room::RoomRole,
                    seat_token: Option<String>,
                }),
                "room_presence" => struct_variant!(text => RoomPresence {
                    room: String,
                    presence: room::Presence,
                }),
                "sale_opened" => ServerMessage::SaleOpened(serde_json::from_str(text)?),
                "buy_result" => ServerMessage::BuyResult(serde_json::from_str(text)?),
                "sale_closed" => ServerMessage::SaleClosed(serde_json::from_str(text)?),
                "chaos_applied" => ServerMessage::ChaosApplied(serde_json::from_str(text)?),
                _ => unreachable!("listed in LATER_TYPES"),
            })
        };
        LATER_TYPES.contains(&kind).then(read)
    }

    /// The workshop's frames; `None` for another `kind`.
    fn read_workshop(kind: &str, text: &str) -> Option<Result<ServerMessage, serde_json::Error>> {
        let read = || -> Result<ServerMessage, serde_json::Error> {
            Ok(match kind {
                "solution_verdict" => ServerMessage::SolutionVerdict(serde_json::from_str(text)?),
                "challenge_opened" => ServerMessage::ChallengeOpened(serde_json::from_str(text)?),
                "challenge_entry" => ServerMessage::ChallengeEntry(serde_json::from_str(text)?),
                "challenge_tape" => ServerMessage::ChallengeTape(serde_json::from_str(text)?),
                _ => unreachable!("listed in WORKSHOP_TYPES"),
            })
        };
        WORKSHOP_TYPES.contains(&kind).then(read)
    }

    /// This frame's `type`, as the wire spells it.
    pub fn kind(&self) -> &'static str {
        match self {
            ServerMessage::Hello(_) => "hello",
            ServerMessage::RedisStatus { .. } => "redis_status",
            ServerMessage::RunStarted { .. } => "run_started",
            ServerMessage::Outcomes { .. } => "outcomes",
            ServerMessage::RunProgress { .. } => "run_progress",
            ServerMessage::AuditRows(_) => "audit_rows",
            ServerMessage::RunFinished { .. } => "run_finished",
            ServerMessage::RunCancelled { .. } => "run_cancelled",
            ServerMessage::CompareStarted { .. } => "compare_started",
            ServerMessage::CompareFinished { .. } => "compare_finished",
            ServerMessage::StepState(_) => "step_state",
            ServerMessage::StepClosed { .. } => "step_closed",
            ServerMessage::Reconciliation { .. } => "reconciliation",
            ServerMessage::Reconciled { .. } => "reconciled",
            ServerMessage::RoomCreated { .. } => "room_created",
            ServerMessage::RoomJoined { .. } => "room_joined",
            ServerMessage::RoomPresence { .. } => "room_presence",
            ServerMessage::SaleOpened(_) => "sale_opened",
            ServerMessage::BuyResult(_) => "buy_result",
            ServerMessage::SaleClosed(_) => "sale_closed",
            ServerMessage::ChaosApplied(_) => "chaos_applied",
            ServerMessage::SolutionVerdict(_) => "solution_verdict",
            ServerMessage::ChallengeOpened(_) => "challenge_opened",
            ServerMessage::ChallengeEntry(_) => "challenge_entry",
            ServerMessage::ChallengeTape(_) => "challenge_tape",
            ServerMessage::Error(_) => "error",
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{COMMON_TYPES, LATER_TYPES, LabFrame, WORKSHOP_TYPES, every_type};
    use crate::ServerMessage;

    /// Both readers on one text: the same value, or both an error.
    fn both(frame: serde_json::Value) -> Option<ServerMessage> {
        let text = frame.to_string();
        let derived = serde_json::from_str::<ServerMessage>(&text);
        let tag_first = ServerMessage::from_json(&text);
        match (derived, tag_first) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, b, "{text}");
                assert_eq!(b.kind(), frame["type"], "{text}");
                assert!(every_type().any(|t| t == b.kind()));
                Some(b)
            }
            (Err(_), Err(_)) => None,
            (a, b) => panic!("the readers disagree on {text}: {a:?} / {b:?}"),
        }
    }

    #[test]
    fn the_tag_first_reader_agrees_with_serde() {
        let outcome = json!({
            "buyer": 3, "app_server": 1, "qty": 1, "observed_stock": 4, "result": "reserved",
            "stock_after": 3, "latency_us": 120, "start_us": 0, "end_us": 120,
            "round_trips": 2, "retries": 0
        });
        let frames = [
            json!({"type": "redis_status", "redis": "down"}),
            json!({"type": "outcomes", "run_id": "r1", "outcomes": [outcome]}),
            json!({"type": "run_cancelled", "run_id": "r1"}),
            json!({"type": "step_closed", "run_id": "s1"}),
            json!({"type": "room_created", "room": "ABCD", "presenter_token": "t", "join_url": "/j"}),
            json!({"type": "room_joined", "room": "ABCD", "participant_id": 7, "role": "phone"}),
            json!({"type": "room_joined", "room": "ABCD", "participant_id": 7, "role": "phone",
                   "seat_token": "s"}),
            json!({"type": "error", "code": "out_of_range", "message": "no", "run_id": "r2"}),
            json!({"type": "hello", "protocol_version": 3, "server_version": "0.1.0",
                   "redis": "up", "strategies": [], "scripts": [],
                   "limits": serde_json::to_value(crate::limits::LIMITS).unwrap()}),
            // Keys in any order, the type last; a key no struct names is skipped by both.
            json!({"redis": "up", "extra": [1, 2], "type": "redis_status"}),
        ];
        for frame in frames {
            assert!(both(frame.clone()).is_some(), "{frame}");
        }
    }

    #[test]
    fn a_malformed_frame_is_an_error_from_both_readers() {
        for frame in [
            json!({"type": "no_such_frame"}),
            json!({"redis": "up"}),
            json!({"type": 7, "redis": "up"}),
            json!({"type": "redis_status"}),
            json!({"type": "redis_status", "redis": "sideways"}),
            json!({"type": "room_joined", "room": "ABCD", "participant_id": -1, "role": "phone"}),
            json!({"type": "error", "code": "out_of_range"}),
            json!(["type", "error"]),
        ] {
            assert!(both(frame.clone()).is_none(), "{frame}");
        }
        assert!(ServerMessage::from_json("{\"type\":\"redis_status\",").is_err());
        let unknown = ServerMessage::from_json(r#"{"type":"no_such_frame"}"#).unwrap_err();
        assert!(unknown.to_string().contains("no_such_frame"), "{unknown}");
    }

    #[test]
    fn the_lab_reader_reads_the_common_frames_leaves_the_later_ones_and_skips_the_workshops() {
        let verdict = r#"{"type":"challenge_entry","room":"ABCD","nope":1}"#;
        assert_eq!(
            ServerMessage::from_json_in_lab(verdict).unwrap(),
            LabFrame::Skipped
        );
        let status = r#"{"type":"redis_status","redis":"up"}"#;
        assert_eq!(
            ServerMessage::from_json_in_lab(status).unwrap(),
            LabFrame::Read(ServerMessage::from_json(status).unwrap())
        );
        let closed = r#"{"type":"step_closed","run_id":"s1"}"#;
        assert_eq!(
            ServerMessage::from_json_in_lab(closed).unwrap(),
            LabFrame::Later
        );
        assert_eq!(
            ServerMessage::from_json_later(closed).unwrap(),
            ServerMessage::from_json(closed).unwrap()
        );
        assert!(ServerMessage::from_json_later(status).is_err());
        assert!(ServerMessage::from_json_in_lab(r#"{"type":"nope"}"#).is_err());
        // Each group's reader reads its own group's types and no other's.
        for kind in every_type() {
            assert_eq!(
                ServerMessage::read_common(kind, "{}").is_some(),
                COMMON_TYPES.contains(&kind),
                "{kind}"
            );
            assert_eq!(
                ServerMessage::read_later(kind, "{}").is_some(),
                LATER_TYPES.contains(&kind),
                "{kind}"
            );
            assert_eq!(
                ServerMessage::read_workshop(kind, "{}").is_some(),
                WORKSHOP_TYPES.contains(&kind),
                "{kind}"
            );
        }
    }

    #[test]
    fn every_type_is_listed_once() {
        let mut sorted: Vec<&str> = every_type().collect();
        let listed = sorted.len();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), listed);
    }
}
