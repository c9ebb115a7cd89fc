//! The wire contract between the oversold server and any client: JSON text frames over `/ws`.
//!
//! This crate is serde only, so it builds for the host and for `wasm32-unknown-unknown`
//! alike. Nothing here knows about Redis, axum or Leptos.
//!
//! # Layout
//! - [`ClientMessage`]: what a client may send (one enum, tagged by `type`).
//! - [`ServerMessage`]: what the server sends back (one enum, tagged by `type`).
//! - [`RunRequest`] / [`RaceConfig`] / [`RunConfig`]: a run's knobs, as asked for and as
//!   filled in (`start_compare` gets a [`RaceConfig`]: no strategy).
//! - [`StrategyInfo`] / [`StrategyAbout`]: how each strategy describes itself in `hello`.
//! - [`BuyerOutcome`] / [`RunSummary`]: what each buyer did, and the tally at the end.
//! - [`checkout`]: the checkout scenario (protocol version 3): [`Scenario`], each buyer's
//!   [`CheckoutStory`], the [`CheckoutTally`] flat in the summary, the live
//!   [`Reconciliation`] and the [`ReconcileReport`].
//! - [`cart`]: the `cart` and `warehouses` scenarios: several counters per run (one per SKU,
//!   or per warehouse), each buyer's [`CartStory`] line by line, the [`CartTally`] flat in the
//!   summary with one [`ShelfLedger`] per counter.
//! - [`room`]: rooms, where the audience's phones are the buyers: `create_room`,
//!   `join_room`, `open_sale`, `buy`, `close_sale`, `chaos` and their answers (drawn frame
//!   by frame there).
//! - [`StepState`]: step-through mode, one command per click, each logged as the typed
//!   [`RedisCall`] it sent and the [`RedisReply`] it got, with their text written once.
//! - [`preset`]: named crowds that open a lesson in one click and one link.
//! - [`limits`]: the accepted ranges, and [`RunRequest::validate`] which enforces them.
//! - [`tape`]: not a message but a pure function of them: a run's outcomes put back in the
//!   order Redis ran their commands, from Redis's replies alone ([`tape::Tape::build`]), with
//!   a replay that proves it ([`tape::Tape::verify`]) and a caption that agrees with the
//!   counters. The page draws it; `oversold run --tape N` prints it. Each strategy names its
//!   [`TapeRule`] in its [`StrategyAbout`].
//!
//! # A session, frame by frame
//! ```text
//! client                                   server
//!   | ---- (connect /ws) ------------------> |
//!   | <--- {"type":"hello", ...} ----------- |  protocol version, Redis status,
//!   |                                        |  strategies, Lua sources, limits
//!   | ---- {"type":"start_run","config":{"strategy":"naive"}} --> |
//!   | <--- {"type":"run_started","run_id":"r-…","config":{…}} --- |  defaults filled in
//!   | <--- {"type":"outcomes","run_id":"r-…","outcomes":[…]} ---- |  0..n batches
//!   | <--- {"type":"run_finished","run_id":"r-…","summary":{…}} - |  the terminal frame
//! ```
//!
//! # A checkout, frame by frame (protocol version 3)
//! ```text
//! client                                   server
//!   | <--- {"type":"hello", ..., "checkout_strategies":[…], "ledger":{"kind":"postgres",…}}
//!   | ---- {"type":"start_run","config":{"strategy":"holds","scenario":"checkout",
//!   |        "hold_ttl_ms":300000,"time_scale":100,"crash_fraction":0.1}} ---------> |
//!   | <--- {"type":"run_started","run_id":"r-…","config":{…,"scenario":"checkout",…}} |
//!   | <--- {"type":"reconciliation","run_id":"r-…","reconciliation":{"available":…}} |  a few a second
//!   | <--- {"type":"outcomes","run_id":"r-…","outcomes":[{…,"checkout":{"end":…}}]} |  as stories end
//!   | ---- {"type":"reconcile"} -------------------------------------------------> |  any time
//!   | <--- {"type":"reconciled","run_id":"r-…","report":{"fixed":…}} ------------- |
//!   | <--- {"type":"reconciliation",…}                                             |  the last one
//!   | <--- {"type":"run_finished","run_id":"r-…","summary":{…,"confirmed_units":…}} |
//! ```
//! A checkout run ends when every buyer's story has ended *and* every hold has been
//! confirmed, released, or expired and been returned by the reaper (unless
//! `no_wait_expiry`). `start_compare` with `"scenario":"checkout"` races every checkout
//! strategy. `reconcile` outside a checkout run is answered with `no_run_in_progress`.
//!
//! # A cart, frame by frame
//! ```text
//! client                                   server
//!   | <--- {"type":"hello", ..., "cart_strategies":[{"name":"naive_cart","scenario":"cart",…},…]}
//!   | ---- {"type":"start_run","config":{"strategy":"saga","scenario":"cart",
//!   |        "skus":4,"max_lines":2}} ------------------------------------------> |
//!   | <--- {"type":"run_started","run_id":"r-…","config":{…,"scenario":"cart","skus":4,"max_lines":2}}
//!   | <--- {"type":"outcomes","run_id":"r-…","outcomes":[{…,"cart":{"lines":[…],"partial":false,…}}]}
//!   | <--- {"type":"run_finished","run_id":"r-…","summary":{…,"partial_carts":0,
//!   |        "stranded_units":0,"compensations":7,"per_sku":[{"name":"phone",…},…]}} |
//! ```
//! `"scenario":"warehouses"` takes `warehouses` and `split` instead, and its summary has
//! `per_warehouse`. Each knob is refused outside its scenario. The shelves' names and stocks
//! are a pure function of the config ([`cart::catalogue`], [`cart::warehouses`]), so a client
//! draws them before the first outcome. On a Redis Cluster `cart_script_untagged` ends with
//! `run_failed` whose message contains `CROSSSLOT`: that is its lesson.
//!
//! Every accepted `start_run` gets exactly one terminal frame for its `run_id`, whatever
//! arrives after it: `run_finished`, `run_cancelled` (after `cancel_run`), or an `error`
//! carrying that `run_id` (`run_failed`: Redis lost mid-run, the stock key vanished;
//! `redis_unavailable` or `resource_exhausted`: it could not be set up). A refused
//! `start_run` gets one `error` without a `run_id`, and no `run_started`.
//!
//! Any bad frame is answered with `{"type":"error","code":"…","message":"…"}` and the socket
//! stays open. See [`ErrorCode`] for the codes.

use serde::{Deserialize, Serialize};

use crate::wire_names::wire_names;

pub mod at_scale;
pub mod busy;
pub mod cart;
mod cart_validate;
pub mod challenge;
pub mod checkout;
mod config;
mod decode;
pub use decode::{LATER_TYPES, LabFrame};
pub mod durability;
pub mod eviction;
pub mod failover;
pub mod limits;
mod outcome;
pub mod preset;
pub mod room;
mod step;
mod strategy;
pub mod tape;
mod validate;
mod wire_names;
pub mod workshop;

pub use busy::{BusyTally, SlowJobEnd};
pub use cart::{CartConfig, CartLine, CartStory, CartTally, LineEnd, ShelfLedger, WarehouseConfig};
pub use checkout::{
    CheckoutConfig, CheckoutEnd, CheckoutStep, CheckoutStory, CheckoutTally, FailMode, Fate,
    LedgerInfo, LedgerKind, NotifyStats, ReaperStats, ReconcileReport, Reconciliation, Scenario,
    Stage, StepOutcome,
};
pub use config::{FieldKind, Knobs, RaceConfig, RunConfig, RunRequest};
pub use durability::{DurabilityTally, Persistence};
pub use eviction::{EvictionConfig, EvictionPolicy, EvictionTally};
pub use failover::{FailoverTally, ReplicaGuard};
pub use outcome::{BuyerOutcome, Epoch, LatencySummary, OutcomeResult, RunSummary, SavedRun};
pub use preset::PresetInfo;
pub use step::{
    CommandArg, RedisCall, RedisCommand, RedisReply, StepBuyer, StepCommand, StepState,
};
pub use strategy::{
    AboutOnly, Category, Explanation, Step, StrategyAbout, StrategyInfo, Text, Tone, step, text,
};
pub use tape::{Guard, ScriptCall, TapeRule};
pub use validate::ConfigError;

/// Bumped whenever a message changes shape in a way an old client would misread.
///
/// Version 3: the checkout scenario. New config fields (`scenario` and the checkout knobs,
/// all optional: left out, a run is the version 2 race); `hello.checkout_strategies` and
/// `hello.ledger`; `strategies[].scenario`; `outcomes[].checkout` (each buyer's story);
/// the checkout fields flat in the summary (`confirmed_units`, `held_units`, ...); the
/// `reconciliation` and `reconciled` frames; the `reconcile` client message; the
/// `outage_not_allowed` error code; the `holds` category and the `story` tape rule. Every
/// version 2 field kept its name and meaning. Added since, without a bump (an old client
/// ignores it, and never sees the rest unless it asks for a new scenario):
/// `hello.outage_allowed`; the `cart` and `warehouses` scenarios (`hello.cart_strategies`,
/// `hello.limits.cart`, the `skus`, `max_lines`, `warehouses` and `split` knobs,
/// `outcomes[].cart`, the cart fields flat in the summary, the `saga` category); rooms
/// (the client messages `create_room`, `join_room`, `open_sale`, `buy`, `close_sale` and
/// `chaos`; the frames `room_created`, `room_joined`, `sale_opened`, `buy_result`,
/// `sale_closed`, `room_presence`, `chaos_applied` and the room error codes: see [`room`]); an
/// answer to every request frame, `rate_limited` included, and a socket closed with 1008
/// past a hard limit of refused frames; the typed step-through fields
/// (`step_state.log[].call` and `.answer`, `step_state.buyers[].next_call`: the text fields
/// beside them are built from these); `hello.chaos`, the chaos buttons; a race at scale
/// ([`at_scale`]: past 10,000 buyers, only on a server started with `--max-buyers`, so an old
/// client never sees it unless it asks for one) sends `run_progress` instead of `outcomes`,
/// and answers `audit_page` with `audit_rows`.
///
/// Version 2: strategies describe themselves in `hello` (label, short label, category, Lua
/// files, the "why" panel); `start_compare` takes no strategy; new outcome results `unknown`
/// and `gave_up`; new summary fields; the `run_cancelled` terminal frame. Every version 1
/// field kept its name and meaning. Added since, without a bump (an old client ignores
/// them): `strategies[].tape`, each strategy's [`TapeRule`], and `outcomes[].bucket`, which
/// `sharded` sets.
pub const PROTOCOL_VERSION: u32 = 3;

/// Every frame a client may send. Tagged by `type`, fields in `snake_case`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMessage {
    /// Start one run. Only `config.strategy` is required; the rest fall back to defaults.
    StartRun {
        /// The knobs for this run.
        config: RunRequest,
    },
    /// Race the same config (same seed, same arrivals) through every available strategy,
    /// one after another. `config` must not name a strategy. Each race streams as a normal
    /// run (`run_started`, `outcomes`, then its terminal frame), between `compare_started`
    /// and `compare_finished`.
    StartCompare {
        /// The knobs shared by every race.
        config: RunRequest,
    },
    /// Stop the run (or comparison) in flight on this connection; buyers not yet started are
    /// skipped, and a comparison runs no further strategies.
    CancelRun,
    /// Open step-through mode: 2 to 4 buyers of `config.strategy` stand ready on their own
    /// connections, each stopped before its first Redis command. Answered by `step_state`.
    StepOpen {
        /// `strategy` (a Redis one), `stock` and `buyers` (2–4); `qty` and `max_qty` apply;
        /// the other knobs do not (each buyer is its own app server, and decides instantly).
        config: RunRequest,
    },
    /// Let buyer `buyer` (1-based) send its next real Redis command. Answered by `step_state`
    /// once the reply is in and the buyer is waiting at its next command (or done).
    Step {
        /// Which buyer moves.
        buyer: u32,
    },
    /// Start the step-through over: same strategy and knobs, fresh keys, buyers back at the start.
    StepReset,
    /// Leave step-through mode; its keys are deleted. Answered by `step_closed`.
    StepClose,
    /// During a checkout run: recompute the available count from the ledger and the active
    /// holds, atomically, and put right whatever drifted. Answered by `reconciled`.
    Reconcile,
    /// A race at scale (see [`at_scale`]): `count` rows of its audit record from row `from`
    /// (0-based). Answered by `audit_rows`; works while the race runs and after, until this
    /// socket's next race at scale.
    AuditPage {
        /// The race's id.
        run_id: String,
        /// The first row wanted.
        from: u32,
        /// How many (1 to [`at_scale::MAX_AUDIT_PAGE`]).
        count: u32,
    },
    /// Create a room; this socket becomes its presenter. Answered by `room_created`.
    CreateRoom,
    /// Join a room as a phone (default), a spectator (`"as":"spectator"`), or, with the
    /// token, as its presenter again. Answered by `room_joined`, then the current sale.
    JoinRoom {
        /// The room code.
        room: String,
        /// Who joins.
        #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
        role: Option<room::RoomRole>,
        /// Required for `"as":"presenter"`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        presenter_token: Option<String>,
        /// A phone coming back (a reload, a new socket): its earlier `participant_id`…
        #[serde(default, skip_serializing_if = "Option::is_none")]
        participant_id: Option<u32>,
        /// …and the `seat_token` that came with it, so it keeps its id (and what it bought).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seat_token: Option<String>,
    },
    /// Presenter: open a sale. Everyone gets `sale_opened`.
    OpenSale {
        /// The room code.
        room: String,
        /// From `room_created`.
        presenter_token: String,
        /// The sale's knobs.
        config: room::SaleConfig,
    },
    /// Phone: one click of the Buy button. Answered by `buy_result` to this phone.
    Buy {
        /// The room code.
        room: String,
        /// The phone's own id for this click (1 to 64 of `[A-Za-z0-9_-]`).
        request_id: String,
    },
    /// Presenter: close the open sale now. Everyone gets `sale_closed`.
    CloseSale {
        /// The room code.
        room: String,
        /// From `room_created`.
        presenter_token: String,
    },
    /// Presenter: press a chaos button. Everyone gets `chaos_applied`.
    Chaos {
        /// The room code.
        room: String,
        /// From `room_created`.
        presenter_token: String,
        /// Which button.
        action: room::ChaosAction,
    },
    /// Workshop: judge `source` (Lua) against exercise `exercise`. Answered by one
    /// `solution_verdict` (see [`workshop`]).
    CheckSolution {
        /// The exercise id.
        exercise: String,
        /// The script (at most [`workshop::MAX_SOURCE_BYTES`]).
        source: String,
    },
    /// Presenter: open an exercise as the room's challenge. Everyone gets
    /// `challenge_opened` (see [`challenge`]).
    OpenChallenge {
        /// The room code.
        room: String,
        /// From `room_created`.
        presenter_token: String,
        /// The exercise id.
        exercise: String,
    },
    /// A participant in the room: submit a script to the open challenge. Answered by
    /// `solution_verdict` to them; everyone gets their `challenge_entry`.
    SubmitChallenge {
        /// The room code.
        room: String,
        /// The name the leaderboard shows ([`challenge::check_nickname`]).
        nickname: String,
        /// The script.
        source: String,
    },
    /// Presenter: put a participant's verdict (its tape) on every screen: `challenge_tape`.
    ShowCounterexample {
        /// The room code.
        room: String,
        /// From `room_created`.
        presenter_token: String,
        /// Whose submission.
        participant: u32,
    },
}

impl ClientMessage {
    /// Every `type` a client may send, with the fields it takes besides `type`: what a
    /// server checks a frame against before serde, so each mistake gets its own code.
    /// `tests::every_client_message_is_in_types` keeps it equal to the enum above.
    pub const TYPES: [(&'static str, &'static [&'static str]); 19] = [
        ("start_run", &["config"]),
        ("start_compare", &["config"]),
        ("cancel_run", &[]),
        ("step_open", &["config"]),
        ("step", &["buyer"]),
        ("step_reset", &[]),
        ("step_close", &[]),
        ("reconcile", &[]),
        ("audit_page", &["run_id", "from", "count"]),
        ("create_room", &[]),
        (
            "join_room",
            &[
                "room",
                "as",
                "presenter_token",
                "participant_id",
                "seat_token",
            ],
        ),
        ("open_sale", &["room", "presenter_token", "config"]),
        ("buy", &["room", "request_id"]),
        ("close_sale", &["room", "presenter_token"]),
        ("chaos", &["room", "presenter_token", "action"]),
        ("check_solution", &["exercise", "source"]),
        ("open_challenge", &["room", "presenter_token", "exercise"]),
        ("submit_challenge", &["room", "nickname", "source"]),
        (
            "show_counterexample",
            &["room", "presenter_token", "participant"],
        ),
    ];

    /// This message's `type`. A `match` that names every message: a new one does not
    /// compile until it is named here (and the test then wants it in [`Self::TYPES`]).
    pub fn type_name(&self) -> &'static str {
        match self {
            ClientMessage::StartRun { .. } => "start_run",
            ClientMessage::StartCompare { .. } => "start_compare",
            ClientMessage::CancelRun => "cancel_run",
            ClientMessage::StepOpen { .. } => "step_open",
            ClientMessage::Step { .. } => "step",
            ClientMessage::StepReset => "step_reset",
            ClientMessage::StepClose => "step_close",
            ClientMessage::Reconcile => "reconcile",
            ClientMessage::AuditPage { .. } => "audit_page",
            ClientMessage::CreateRoom => "create_room",
            ClientMessage::JoinRoom { .. } => "join_room",
            ClientMessage::OpenSale { .. } => "open_sale",
            ClientMessage::Buy { .. } => "buy",
            ClientMessage::CloseSale { .. } => "close_sale",
            ClientMessage::Chaos { .. } => "chaos",
            ClientMessage::CheckSolution { .. } => "check_solution",
            ClientMessage::OpenChallenge { .. } => "open_challenge",
            ClientMessage::SubmitChallenge { .. } => "submit_challenge",
            ClientMessage::ShowCounterexample { .. } => "show_counterexample",
        }
    }
}

/// Every frame the server sends. Tagged by `type`, fields in `snake_case`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// Sent once, right after the socket opens. Boxed: it is by far the largest frame, and
    /// every other frame would otherwise be as big in memory.
    Hello(Box<Hello>),
    /// Sent when Redis goes down or comes back, so a page can show it without polling.
    RedisStatus {
        /// The new state.
        redis: RedisState,
    },
    /// A run was accepted; `config` has every default filled in (including the seed).
    RunStarted {
        /// The id every later frame of this run carries.
        run_id: String,
        /// The full configuration the run uses.
        config: RunConfig,
    },
    /// A batch of buyer outcomes, in the order they finished.
    Outcomes {
        /// Which run these belong to.
        run_id: String,
        /// One entry per buyer that finished since the last batch.
        outcomes: Vec<BuyerOutcome>,
    },
    /// A race at scale (more buyers than [`at_scale::LIVE_OUTCOMES_MAX`]) sends this instead
    /// of `outcomes`: its running totals, every [`at_scale::PROGRESS_EVERY_MS`] while it runs
    /// and once more just before its terminal frame.
    RunProgress {
        /// Which run.
        run_id: String,
        /// The totals so far.
        progress: at_scale::RunProgress,
    },
    /// The answer to `audit_page`.
    AuditRows(at_scale::AuditRows),
    /// The run is over; no more `outcomes` frames follow for it. One of the three terminal
    /// frames: every `run_started` is followed by exactly one `run_finished`, `run_cancelled`
    /// or `error` carrying its `run_id`.
    RunFinished {
        /// Which run finished.
        run_id: String,
        /// The tally, with the final stock read back from Redis.
        summary: RunSummary,
    },
    /// The run was cancelled (`cancel_run`, the socket closing, or the server stopping).
    /// Buyers that had not started were skipped; the stock was still read back and cleared.
    RunCancelled {
        /// Which run.
        run_id: String,
        /// The tally of the buyers that did run, when the stock could be read back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<RunSummary>,
    },
    /// A comparison began: these strategies will race, in this order, with this config.
    CompareStarted {
        /// Identifies the comparison (each race still has its own `run_id`).
        compare_id: String,
        /// Strategy names, in the order they will race.
        strategies: Vec<String>,
        /// The knobs every race uses (each race's `run_started` adds its strategy).
        config: RaceConfig,
    },
    /// A comparison ended; one summary per race that completed, in order.
    CompareFinished {
        /// Which comparison.
        compare_id: String,
        /// The scoreboard.
        summaries: Vec<RunSummary>,
    },
    /// Step-through mode, as it stands now: sent after `step_open`, every `step` and
    /// `step_reset`.
    StepState(StepState),
    /// Step-through mode ended (`step_close`, or it sat idle too long); its keys are gone.
    StepClosed {
        /// The step session's id.
        run_id: String,
    },
    /// A checkout run's shelf, reconciled: sent a few times a second while it runs, and once
    /// more just before its terminal frame.
    Reconciliation {
        /// Which run.
        run_id: String,
        /// The numbers.
        reconciliation: Reconciliation,
    },
    /// The answer to `reconcile`: what the correction changed.
    Reconciled {
        /// Which run.
        run_id: String,
        /// Before, after, and what was fixed.
        report: ReconcileReport,
    },
    /// A room exists and this socket presents it. The token is the only way to act as the
    /// presenter: keep it secret.
    RoomCreated {
        /// The room code.
        room: String,
        /// The presenter's secret.
        presenter_token: String,
        /// What the QR code says (`GET /qr/ROOM.svg`): opens the phone view.
        join_url: String,
    },
    /// This socket is in the room.
    RoomJoined {
        /// The room code.
        room: String,
        /// This socket's id in the room (phones buy under it).
        participant_id: u32,
        /// As whom it joined.
        role: room::RoomRole,
        /// A phone's proof of its id: send it back with `participant_id` when joining again
        /// (after a reload), and the phone is the same buyer (one buy per sale still holds).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seat_token: Option<String>,
    },
    /// People in the room and clicks so far.
    RoomPresence {
        /// The room code.
        room: String,
        /// The counts.
        presence: room::Presence,
    },
    /// A sale opened: phones show the Buy button.
    SaleOpened(room::SaleOpened),
    /// A phone's own click, answered (to that phone only).
    BuyResult(room::BuyResult),
    /// The sale is over; no more `outcomes` for it follow.
    SaleClosed(room::SaleClosed),
    /// A chaos button was pressed, and what it did.
    ChaosApplied(room::ChaosApplied),
    /// The judge's verdict on a `check_solution` (or on this socket's `submit_challenge`).
    SolutionVerdict(workshop::SolutionVerdict),
    /// A room's challenge was opened.
    ChallengeOpened(challenge::ChallengeOpened),
    /// A participant's latest submission to the room's challenge.
    ChallengeEntry(challenge::ChallengeEntry),
    /// A submission's verdict, put on every screen by the presenter.
    ChallengeTape(challenge::ChallengeTape),
    /// Something the client sent could not be done. The connection stays open.
    Error(WireError),
}

/// The greeting: everything a page needs to draw its controls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// [`PROTOCOL_VERSION`] of the server.
    pub protocol_version: u32,
    /// The server's crate version, for display.
    pub server_version: String,
    /// Whether Redis answered at the time of connecting.
    pub redis: RedisState,
    /// The strategies a client may name in `start_run` (the `race` scenario).
    pub strategies: Vec<StrategyInfo>,
    /// The strategies of the `checkout` scenario (send `"scenario":"checkout"` with them).
    #[serde(default)]
    pub checkout_strategies: Vec<StrategyInfo>,
    /// The strategies of the `cart` and `warehouses` scenarios (each says which in its
    /// `scenario`; send that `scenario` with it): the cart ones first, then the warehouse
    /// ones, so each scenario's are one run of the list.
    #[serde(default)]
    pub cart_strategies: Vec<StrategyInfo>,
    /// The strategies of the `busy_script` scenario (send `"scenario":"busy_script"`).
    #[serde(default)]
    pub busy_strategies: Vec<StrategyInfo>,
    /// The strategies of the `durability` scenario, one per persistence setting (send
    /// `"scenario":"durability"`).
    #[serde(default)]
    pub durability_strategies: Vec<StrategyInfo>,
    /// The strategies of the `eviction` scenario (send `"scenario":"eviction"`).
    #[serde(default)]
    pub eviction_strategies: Vec<StrategyInfo>,
    /// The strategies of the `failover` scenario (send `"scenario":"failover"`).
    #[serde(default)]
    pub failover_strategies: Vec<StrategyInfo>,
    /// Where checkout runs settle their orders: PostgreSQL, or the Redis fallback.
    #[serde(default)]
    pub ledger: LedgerInfo,
    /// Whether a checkout may ask for an outage (`outage_ms > 0`): only when the server
    /// started its Redis itself; otherwise such a run is refused with `outage_not_allowed`.
    /// A page offers the outage knobs only when this is true (absent: false).
    #[serde(default)]
    pub outage_allowed: bool,
    /// The presenter's chaos buttons, in order, each with its words (absent from an older
    /// server: none).
    #[serde(default)]
    pub chaos: Vec<room::ChaosInfo>,
    /// The workshop's exercises, in order (absent from an older server: none).
    #[serde(default)]
    pub exercises: Vec<workshop::ExerciseInfo>,
    /// The lessons a click opens, in the order the page shows them (absent from an older
    /// server: none).
    #[serde(default)]
    pub presets: Vec<PresetInfo>,
    /// The Lua sources the server runs, exactly as loaded.
    pub scripts: Vec<ScriptSource>,
    /// The accepted ranges for every config field.
    pub limits: limits::Limits,
}

/// Whether the server can reach Redis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedisState {
    /// Redis answered the last health ping.
    Up,
    /// Redis did not answer; runs will fail until it is back.
    Down,
}

wire_names! { RedisState {
    Up = "up",
    Down = "down",
} }

/// A Lua file the server loads, shown verbatim on the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptSource {
    /// The file name under `lua/`, e.g. `"reserve.lua"`.
    pub file: String,
    /// The full source text.
    pub source: String,
}

/// An error frame's body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireError {
    /// Machine-readable reason.
    pub code: ErrorCode,
    /// A sentence for a human.
    pub message: String,
    /// The run this error concerns, when it concerns one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

impl WireError {
    /// An error that concerns no particular run.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        WireError {
            code,
            message: message.into(),
            run_id: None,
        }
    }
}

/// Machine-readable error codes. An error that carries a `run_id` ends that run (it is the
/// run's terminal frame); the connection always stays open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// The frame was not valid JSON, or not a JSON object.
    BadJson,
    /// The frame had no `type`, or one this server does not know.
    UnknownType,
    /// A required field (such as `config.strategy`) was missing.
    MissingField,
    /// A known `type` whose fields were mistyped or unknown.
    BadMessage,
    /// `config.strategy` names no strategy.
    UnknownStrategy,
    /// The strategy exists but cannot run here (see `hello.strategies[].unavailable_reason`).
    StrategyUnavailable,
    /// A config field is outside [`limits`].
    OutOfRange,
    /// This connection already has a run in flight.
    RunInProgress,
    /// The server is at its cap of concurrent runs; try again shortly.
    Busy,
    /// `cancel_run` with no run in flight.
    NoRunInProgress,
    /// Redis could not be reached to set the run up.
    RedisUnavailable,
    /// The run started but could not finish cleanly (outcomes so far were sent).
    RunFailed,
    /// Too many frames in a short time from this connection.
    RateLimited,
    /// The server is out of a budgeted resource (file descriptors, store connections) and
    /// refused the run instead of failing halfway through it.
    ResourceExhausted,
    /// `outage_ms` asks the server to pause a Redis it did not start: it only ever pauses
    /// its own private `redis-server`, never one other clients share.
    OutageNotAllowed,
    /// A presenter action without the room's presenter token. Nothing changed.
    NotPresenter,
    /// No room has that code (never made, or expired).
    NoSuchRoom,
    /// A room action from a socket that has not joined that room (or joined it as a
    /// spectator and tried to buy).
    NotInRoom,
    /// `buy` or `close_sale` while no sale is open; `open_sale` while one is.
    SaleState,
    /// A second `buy` from one phone in one sale that does not allow repeats.
    AlreadyBought,
    /// A chaos button on a server whose Redis it did not start itself.
    ChaosNotAllowed,
}

wire_names! { ErrorCode {
    BadJson = "bad_json",
    UnknownType = "unknown_type",
    MissingField = "missing_field",
    BadMessage = "bad_message",
    UnknownStrategy = "unknown_strategy",
    StrategyUnavailable = "strategy_unavailable",
    OutOfRange = "out_of_range",
    RunInProgress = "run_in_progress",
    Busy = "busy",
    NoRunInProgress = "no_run_in_progress",
    RedisUnavailable = "redis_unavailable",
    RunFailed = "run_failed",
    RateLimited = "rate_limited",
    ResourceExhausted = "resource_exhausted",
    OutageNotAllowed = "outage_not_allowed",
    NotPresenter = "not_presenter",
    NoSuchRoom = "no_such_room",
    NotInRoom = "not_in_room",
    SaleState = "sale_state",
    AlreadyBought = "already_bought",
    ChaosNotAllowed = "chaos_not_allowed",
} }

#[cfg(test)]
mod tests;
