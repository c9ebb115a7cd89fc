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

/// The `type` of every frame, as [`ServerMessage`]'s serde attributes spell it.
const TYPES: &[&str] = &[
    "hello",
    "redis_status",
    "run_started",
    "outcomes",
    "run_progress",
    "audit_rows",
    "run_finished",
    "run_cancelled",
    "compare_started",
    "compare_finished",
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
    "solution_verdict",
    "challenge_opened",
    "challenge_entry",
    "challenge_tape",
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

impl ServerMessage {
    /// One frame's text, read `type` first (see the module's words): the same value
    /// `serde_json::from_str::<ServerMessage>` gives, with a fraction of its code. A page
    /// reads frames with this; anything else may use either.
    pub fn from_json(text: &str) -> Result<ServerMessage, serde_json::Error> {
        Self::read::<true>(text)?
            .ok_or_else(|| serde_json::Error::custom("a workshop frame was skipped"))
    }

    /// As [`ServerMessage::from_json`], except that a workshop's frame (a verdict, a
    /// challenge's) is `None`, unread: the lab ignores them, and its wasm then carries none of
    /// their readers.
    pub fn from_json_without_workshop(
        text: &str,
    ) -> Result<Option<ServerMessage>, serde_json::Error> {
        Self::read::<false>(text)
    }

    /// The reader behind both: `WORKSHOP` is a constant, so the compiler drops the workshop's
    /// arms from a page that reads without them.
    fn read<const WORKSHOP: bool>(text: &str) -> Result<Option<ServerMessage>, serde_json::Error> {
        #[derive(Deserialize)]
        struct Tag<'a> {
            #[serde(rename = "type", borrow)]
            kind: Cow<'a, str>,
        }
        use crate::{
            BuyerOutcome, RaceConfig, ReconcileReport, Reconciliation, RedisState, RunConfig,
            RunSummary, at_scale, room,
        };
        let Tag { kind } = serde_json::from_str(text)?;
        Ok(Some(match &*kind {
            "hello" => ServerMessage::Hello(serde_json::from_str(text)?),
            "redis_status" => struct_variant!(text => RedisStatus { redis: RedisState }),
            "run_started" => {
                struct_variant!(text => RunStarted { run_id: String, config: RunConfig })
            }
            "outcomes" => {
                struct_variant!(text => Outcomes { run_id: String, outcomes: Vec<BuyerOutcome> })
            }
            "run_progress" => struct_variant!(text => RunProgress {
                run_id: String,
                progress: at_scale::RunProgress,
            }),
            "audit_rows" => ServerMessage::AuditRows(serde_json::from_str(text)?),
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
            "step_state" => ServerMessage::StepState(serde_json::from_str(text)?),
            "step_closed" => struct_variant!(text => StepClosed { run_id: String }),
            "reconciliation" => struct_variant!(text => Reconciliation {
                run_id: String,
                reconciliation: Reconciliation,
            }),
            "reconciled" => {
                struct_variant!(text => Reconciled { run_id: String, report: ReconcileReport })
            }
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
            "room_presence" => {
                struct_variant!(text => RoomPresence { room: String, presence: room::Presence })
            }
            "sale_opened" => ServerMessage::SaleOpened(serde_json::from_str(text)?),
            "buy_result" => ServerMessage::BuyResult(serde_json::from_str(text)?),
            "sale_closed" => ServerMessage::SaleClosed(serde_json::from_str(text)?),
            "chaos_applied" => ServerMessage::ChaosApplied(serde_json::from_str(text)?),
            "solution_verdict" | "challenge_opened" | "challenge_entry" | "challenge_tape"
                if !WORKSHOP =>
            {
                return Ok(None);
            }
            "solution_verdict" => ServerMessage::SolutionVerdict(serde_json::from_str(text)?),
            "challenge_opened" => ServerMessage::ChallengeOpened(serde_json::from_str(text)?),
            "challenge_entry" => ServerMessage::ChallengeEntry(serde_json::from_str(text)?),
            "challenge_tape" => ServerMessage::ChallengeTape(serde_json::from_str(text)?),
            "error" => ServerMessage::Error(serde_json::from_str(text)?),
            other => return Err(serde_json::Error::unknown_variant(other, TYPES)),
        }))
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

    use super::TYPES;
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
                assert!(TYPES.contains(&b.kind()));
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
    fn the_lab_reader_skips_only_the_workshop_frames() {
        let verdict = r#"{"type":"challenge_entry","room":"ABCD","nope":1}"#;
        assert_eq!(
            ServerMessage::from_json_without_workshop(verdict).unwrap(),
            None
        );
        let status = r#"{"type":"redis_status","redis":"up"}"#;
        assert_eq!(
            ServerMessage::from_json_without_workshop(status).unwrap(),
            Some(ServerMessage::from_json(status).unwrap())
        );
        assert!(ServerMessage::from_json_without_workshop(r#"{"type":"nope"}"#).is_err());
    }

    #[test]
    fn every_type_is_listed_once() {
        let mut sorted = TYPES.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), TYPES.len());
    }
}
