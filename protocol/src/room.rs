//! Rooms: a presenter, a roomful of phones that are the buyers, and spectators, all watching
//! one sale. The messages are variants of [`crate::ClientMessage`] and
//! [`crate::ServerMessage`]; this module holds their bodies and their bounds.
//!
//! # A room, frame by frame
//! ```text
//! presenter                     server(s)                         phone
//!   | -- create_room ------------> |                                |
//!   | <- room_created {room, presenter_token, join_url}             |
//!   |                              | <--- join_room {room} -------- |
//!   |                              | ---- room_joined {room, participant_id} -> |
//!   | <- room_presence {phones: 1, …} ---------------------------> |  (everyone)
//!   | -- open_sale {room, presenter_token, config:{strategy, stock, bots, duration_ms}}
//!   | <- sale_opened {room, sale_id, config, run} ---------------> |  (everyone)
//!   |                              | <--- buy {room, request_id} -- |
//!   |                              | ---- buy_result {request_id, result, …} -> |  (that phone)
//!   | <- outcomes {run_id: sale_id, outcomes} -------------------> |  (everyone)
//!   | -- close_sale (or the timer) |                                |
//!   | <- sale_closed {room, sale_id, summary} -------------------> |  (everyone)
//! ```
//! Every room event is appended to one Redis stream per room and read back by every server
//! process that has a socket in the room, so all screens see the same events in the same
//! order, whichever process they are on. A late joiner gets the current sale replayed.

use serde::{Deserialize, Serialize};

use crate::wire_names::wire_names;

use crate::{BuyerOutcome, OutcomeResult, RunConfig, RunSummary};

/// Letters a room code is made of: no `0`/`O`, `1`/`I`/`L`, so a code read off a projector
/// is typed right.
pub const ROOM_ALPHABET: &str = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
/// Characters in a room code.
pub const ROOM_CODE_LEN: usize = 5;
/// Longest `request_id` a phone may send.
pub const MAX_REQUEST_ID_LEN: usize = 64;
/// Longest presenter token accepted (the server issues 32 hex digits).
pub const MAX_TOKEN_LEN: usize = 64;
/// Bots a sale may add.
pub const MAX_BOTS: u32 = 2_000;
/// Units a sale may put on sale.
pub const MAX_SALE_STOCK: u32 = 10_000;
/// Shortest and longest sale, ms.
pub const MIN_SALE_MS: u32 = 1_000;
/// Longest sale, ms (the presenter can always close it earlier).
pub const MAX_SALE_MS: u32 = 300_000;
/// App servers (Redis connections) a sale may spread its buyers over.
pub const MAX_SALE_APP_SERVERS: u32 = 16;
/// A sale's bots arrive over its first half, but never later than this, ms: a crowd that
/// shows up together, as the audience's taps do when the Buy button appears.
pub const BOT_ARRIVALS_MS: u32 = 3_000;
/// A sale's simulated app work between a buyer's read and its write, ms, when the presenter
/// gives none. People's taps land tens of milliseconds apart, not microseconds: a read-to-write
/// gap of a Redis round trip would almost never let two taps meet in it, and a naive sale in a
/// room of twenty would sell exactly its stock. Half a second makes the race show up on stage
/// every time (measured in the README) and is still short enough to feel like one tap.
pub const DEFAULT_SALE_APP_WORK_MS: u32 = 500;

/// Who a socket is in a room.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RoomRole {
    /// A buyer: may send `buy` while a sale is open.
    #[default]
    Phone,
    /// Read-only: a second projector, a remote viewer.
    Spectator,
    /// Holds the presenter token (sent with `join_room` to come back after a reconnect).
    Presenter,
}

wire_names! { RoomRole {
    Phone = "phone",
    Spectator = "spectator",
    Presenter = "presenter",
} }

/// A sale as the presenter asks for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaleConfig {
    /// A race strategy (`hello.strategies[].name`) that uses Redis.
    pub strategy: String,
    /// Units on sale (1 to [`MAX_SALE_STOCK`]).
    pub stock: u32,
    /// Simulated buyers joining the phones, spread over the sale's first half and at most its
    /// first [`BOT_ARRIVALS_MS`] (0 to
    /// [`MAX_BOTS`]), so a small room still races.
    #[serde(default)]
    pub bots: u32,
    /// The sale closes by itself after this long ([`MIN_SALE_MS`] to [`MAX_SALE_MS`]).
    #[serde(default = "default_duration")]
    pub duration_ms: u32,
    /// App servers the buyers are spread over (1 to [`MAX_SALE_APP_SERVERS`], default 4):
    /// phone `n` is app server `n mod app_servers`'s customer.
    #[serde(default = "default_app_servers")]
    pub app_servers: u32,
    /// Simulated app work between a read and its write, ms (widens the naive gap; default
    /// [`DEFAULT_SALE_APP_WORK_MS`]).
    #[serde(default = "default_app_work")]
    pub race_window_ms: u32,
    /// Let a phone buy more than once in this sale.
    #[serde(default)]
    pub allow_repeat: bool,
}

fn default_duration() -> u32 {
    30_000
}

fn default_app_servers() -> u32 {
    4
}

fn default_app_work() -> u32 {
    DEFAULT_SALE_APP_WORK_MS
}

impl SaleConfig {
    /// Every bound checked; the error names the field.
    pub fn check(&self) -> Result<(), String> {
        let within = |name: &str, v: u32, lo: u32, hi: u32| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(format!("{name} = {v} is out of range {lo}..={hi}"))
            }
        };
        within("stock", self.stock, 1, MAX_SALE_STOCK)?;
        within("bots", self.bots, 0, MAX_BOTS)?;
        within("duration_ms", self.duration_ms, MIN_SALE_MS, MAX_SALE_MS)?;
        within("app_servers", self.app_servers, 1, MAX_SALE_APP_SERVERS)?;
        within(
            "race_window_ms",
            self.race_window_ms,
            0,
            crate::limits::MAX_RACE_WINDOW_MS,
        )?;
        if self.strategy.is_empty() || self.strategy.len() > 32 {
            return Err("strategy must be a strategy's name".into());
        }
        Ok(())
    }
}

/// A chaos button. Only the presenter may press one, and only against a Redis the server
/// started itself (`hello.outage_allowed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChaosAction {
    /// `SCRIPT FLUSH` and `FUNCTION FLUSH` mid-sale: atomic strategies reload, nobody fails.
    ScriptFlush,
    /// `CLIENT KILL` one app server's connection: its buyers fail, the others go on.
    KillAppServer,
    /// `CLIENT PAUSE` for a second: latency spikes, nothing is lost.
    PauseRedis,
    /// Stop the server's own Redis and start it again: buyers get errors, the room recovers.
    RestartRedis,
    /// A deliberately slow Lua script: everyone else waits behind it.
    SlowScript,
    /// A read-only script past `busy-reply-threshold`: buyers get `BUSY` until the server's
    /// `SCRIPT KILL` stops it; the sale goes on.
    BusyScript,
    /// A script that wrote before it spun: `SCRIPT KILL` is refused (`UNKILLABLE`), and only
    /// `SHUTDOWN NOSAVE` stops it: the sale's Redis restarts empty, the sale fails closed.
    UnkillableScript,
}

wire_names! { ChaosAction {
    ScriptFlush = "script_flush",
    KillAppServer = "kill_app_server",
    PauseRedis = "pause_redis",
    RestartRedis = "restart_redis",
    SlowScript = "slow_script",
    BusyScript = "busy_script",
    UnkillableScript = "unkillable_script",
} }

impl ChaosAction {
    /// Every chaos button, in the order the server lists them in `hello.chaos`.
    pub const ALL: [ChaosAction; 7] = [
        ChaosAction::ScriptFlush,
        ChaosAction::KillAppServer,
        ChaosAction::PauseRedis,
        ChaosAction::RestartRedis,
        ChaosAction::SlowScript,
        ChaosAction::BusyScript,
        ChaosAction::UnkillableScript,
    ];
}

/// A chaos button as the server describes it in `hello.chaos`: every word a page shows about
/// it, written once on the server (the page holds none of its own), like a strategy's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChaosInfo {
    /// What pressing it sends as `chaos.action`.
    pub action: ChaosAction,
    /// The button's words, e.g. `Pause Redis 1 s`.
    pub label: String,
    /// One line on what it does and what to watch for.
    pub description: String,
    /// Refused (`chaos_not_allowed`) unless the server started its Redis itself
    /// (`hello.outage_allowed`).
    pub needs_own_redis: bool,
}

/// What one phone's click came to, sent to that phone only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BuyResult {
    /// The room.
    pub room: String,
    /// The phone's own id for this click.
    pub request_id: String,
    /// The sale it belonged to.
    pub sale_id: String,
    /// reserved, sold_out, error, …
    pub result: OutcomeResult,
    /// For a reserved unit: its number, counted down from the stock (the last unit is #1).
    /// Zero or below means the unit does not exist: an oversell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<i64>,
    /// The buyer's whole outcome, as the grid shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<BuyerOutcome>,
    /// Why it failed, for `error` results and refusals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// People in the room and clicks so far, sent to everyone when it changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Presence {
    /// Phones connected (across every server process).
    pub phones: u32,
    /// Spectators and presenters connected.
    pub watchers: u32,
    /// Clicks accepted in the current sale.
    pub clicks: u32,
}

/// A chaos action as it happened, for the audit trail and the timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChaosApplied {
    /// The room.
    pub room: String,
    /// What was done.
    pub action: ChaosAction,
    /// The sale it hit, if one was open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sale_id: Option<String>,
    /// When, in µs after the sale opened (the timeline's origin).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_us: Option<u64>,
    /// How long the action itself took, µs (a slow script's stall, a restart's downtime).
    pub took_us: u64,
    /// What happened, in words.
    pub detail: String,
}

/// Bodies of the sale frames every screen gets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SaleOpened {
    /// The room.
    pub room: String,
    /// The sale's id; its `outcomes` frames carry it as `run_id`.
    pub sale_id: String,
    /// As the presenter asked.
    pub config: SaleConfig,
    /// The run's full config, as a normal run's `run_started` has it (the grid draws it).
    pub run: RunConfig,
    /// When the sale's clock started (every outcome's `start_us`/`end_us` counts from it),
    /// µs since the Unix epoch on the server that runs the sale: a client on the same
    /// machine can tell how long an outcome took to reach it.
    #[serde(default)]
    pub opened_unix_us: u64,
}

/// The end of a sale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SaleClosed {
    /// The room.
    pub room: String,
    /// Which sale.
    pub sale_id: String,
    /// The tally (phones and bots), with the final stock read back; `None` when the store
    /// was lost and no honest summary exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<RunSummary>,
    /// Why there is no summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Scripts the strategy had to load again after a flush, summed over its buyers.
    #[serde(default)]
    pub reloads: u64,
}

/// True for a well-formed room code: [`ROOM_CODE_LEN`] letters of [`ROOM_ALPHABET`].
pub fn is_room_code(s: &str) -> bool {
    s.len() == ROOM_CODE_LEN && s.chars().all(|c| ROOM_ALPHABET.contains(c))
}

/// True for a usable request id: 1 to [`MAX_REQUEST_ID_LEN`] of `[A-Za-z0-9_-]`.
pub fn is_request_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_REQUEST_ID_LEN
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_ids_are_bounded() {
        assert!(is_room_code("AB3CD"));
        assert!(!is_room_code("AB0CD"), "0 is not in the alphabet");
        assert!(!is_room_code("ABCDEF"));
        assert!(!is_room_code("abcde"));
        assert!(is_request_id("p1-click_2"));
        assert!(!is_request_id(""));
        assert!(!is_request_id(&"x".repeat(MAX_REQUEST_ID_LEN + 1)));
        assert!(!is_request_id("a b"));
    }

    #[test]
    fn wire_names_are_the_documented_ones() {
        use crate::{ClientMessage, ServerMessage};
        let join: ClientMessage =
            serde_json::from_str(r#"{"type":"join_room","room":"AB3CD","as":"spectator"}"#)
                .unwrap();
        assert_eq!(
            join,
            ClientMessage::JoinRoom {
                room: "AB3CD".into(),
                role: Some(RoomRole::Spectator),
                presenter_token: None,
                participant_id: None,
                seat_token: None,
            }
        );
        let chaos: ClientMessage = serde_json::from_str(
            r#"{"type":"chaos","room":"AB3CD","presenter_token":"t","action":"kill_app_server"}"#,
        )
        .unwrap();
        assert!(matches!(
            chaos,
            ClientMessage::Chaos {
                action: ChaosAction::KillAppServer,
                ..
            }
        ));
        let created = ServerMessage::RoomCreated {
            room: "AB3CD".into(),
            presenter_token: "t".into(),
            join_url: "http://h/r/AB3CD".into(),
        };
        let v = serde_json::to_value(&created).unwrap();
        assert_eq!(v["type"], "room_created");
        assert_eq!(v["join_url"], "http://h/r/AB3CD");
        let result = ServerMessage::BuyResult(BuyResult {
            room: "AB3CD".into(),
            request_id: "r1".into(),
            sale_id: "s".into(),
            result: OutcomeResult::SoldOut,
            unit: None,
            outcome: None,
            message: None,
        });
        let v = serde_json::to_value(&result).unwrap();
        assert_eq!(
            (v["type"].as_str(), v["request_id"].as_str()),
            (Some("buy_result"), Some("r1"))
        );
        for a in ChaosAction::ALL {
            assert_eq!(serde_json::to_value(a).unwrap(), a.as_str());
        }
    }

    #[test]
    fn every_chaos_action_is_listed_once_in_all() {
        // A new action fails to compile here until it has a place in `ALL`.
        fn place(a: ChaosAction) -> usize {
            match a {
                ChaosAction::ScriptFlush => 0,
                ChaosAction::KillAppServer => 1,
                ChaosAction::PauseRedis => 2,
                ChaosAction::RestartRedis => 3,
                ChaosAction::SlowScript => 4,
                ChaosAction::BusyScript => 5,
                ChaosAction::UnkillableScript => 6,
            }
        }
        for (i, a) in ChaosAction::ALL.into_iter().enumerate() {
            assert_eq!(place(a), i, "{a:?}");
        }
    }

    #[test]
    fn chaos_info_is_flat_and_round_trips() {
        let info = ChaosInfo {
            action: ChaosAction::PauseRedis,
            label: "Pause Redis 1 s".into(),
            description: "CLIENT PAUSE: every command waits.".into(),
            needs_own_redis: true,
        };
        let v = serde_json::to_value(&info).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "action": "pause_redis",
                "label": "Pause Redis 1 s",
                "description": "CLIENT PAUSE: every command waits.",
                "needs_own_redis": true
            })
        );
        assert_eq!(serde_json::from_value::<ChaosInfo>(v).unwrap(), info);
    }

    #[test]
    fn sale_config_fills_defaults_and_checks_bounds() {
        let c: SaleConfig = serde_json::from_str(r#"{"strategy":"naive","stock":10}"#).unwrap();
        assert_eq!((c.bots, c.duration_ms, c.app_servers), (0, 30_000, 4));
        assert_eq!(c.race_window_ms, DEFAULT_SALE_APP_WORK_MS);
        assert!(c.check().is_ok());
        let big = SaleConfig {
            bots: MAX_BOTS + 1,
            ..c.clone()
        };
        assert!(big.check().unwrap_err().contains("bots"));
        let short = SaleConfig {
            duration_ms: 10,
            ..c
        };
        assert!(short.check().unwrap_err().contains("duration_ms"));
    }
}
