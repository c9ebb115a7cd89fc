//! The phone's reading of the server's frames: only the frames a phone shows, decoded into
//! the same state the full page keeps ([`PageState`], [`RoomState`]), by the same rules.
//!
//! Why a reading of its own: decoding [`oversold_protocol::ServerMessage`] whole links a
//! decoder for every frame and every scenario's types (a checkout's story, a cart's lines,
//! each failure scenario's tally, step-through, the workshop, tapes), most of the lab's wasm.
//! A phone in a room only ever shows a race: the greeting, the room's frames, the sale's
//! outcomes and its end. [`Frame::decode`] reads a frame's `type` first and decodes only those;
//! any other frame is [`Frame::Other`], skipped without building anything.
//!
//! A room's sale is a race, so its run config, outcomes and summary are read as a race's:
//! every field the protocol sends for a race, into the protocol's own types, and nothing of
//! another scenario (a run config of another scenario is refused). The greeting's strategies
//! are read as a phone's `hello` carries them: names, labels, flags and tape rule, without the
//! words (description, explanation, scripts), which the server leaves out for a phone. The
//! tests below decode what the protocol writes and compare it with what went in, so the two
//! cannot drift apart.

use std::borrow::Cow;

use oversold_protocol::room::{BuyResult, Presence, RoomRole, SaleConfig};
use oversold_protocol::{
    BuyerOutcome, Category, Epoch, Explanation, Knobs, LatencySummary, OutcomeResult, RaceConfig,
    RedisState, RunConfig, RunSummary, Scenario, StrategyAbout, StrategyInfo, TapeRule, WireError,
};
use serde::Deserialize;

use super::page::PageState;
use super::room::RoomState;

/// A frame as a phone reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// `hello`: Redis as it stands, and the strategies (a sale's verdict names its strategy by
    /// its short label). The rest of the greeting is the lab's.
    Hello {
        /// Redis as the server sees it.
        redis: RedisState,
        /// The race's strategies.
        strategies: Vec<StrategyInfo>,
    },
    /// `redis_status`.
    RedisStatus(RedisState),
    /// `room_joined`.
    RoomJoined {
        /// The room code.
        room: String,
        /// This socket's id in the room.
        participant_id: u32,
        /// As whom it joined.
        role: RoomRole,
        /// A phone's proof of its id.
        seat_token: Option<String>,
    },
    /// `room_presence`.
    RoomPresence(Presence),
    /// `sale_opened`.
    SaleOpened {
        /// The sale's id (its outcomes' run id).
        sale_id: String,
        /// The presenter's knobs.
        config: SaleConfig,
        /// The race it runs.
        run: RunConfig,
    },
    /// `outcomes` of the sale (or any run: only the run on screen takes them).
    Outcomes {
        /// The run (sale) they belong to.
        run_id: String,
        /// The buyers, in arrival order.
        outcomes: Vec<BuyerOutcome>,
    },
    /// `buy_result`: this phone's click answered.
    BuyResult(BuyResult),
    /// `sale_closed`.
    SaleClosed {
        /// The sale.
        sale_id: String,
        /// Its summary, when it ended with one.
        summary: Option<RunSummary>,
        /// Why it ended without one.
        error: Option<String>,
        /// Scripts reloaded during the sale.
        reloads: u64,
    },
    /// `error`.
    Error(WireError),
    /// Any other frame (a run or comparison of the lab's, step-through, chaos, the workshop's,
    /// a challenge's): nothing a phone shows.
    Other,
}

impl Frame {
    /// Read one frame: its `type`, then the body of a frame a phone shows. `Err` says why a
    /// frame could not be read.
    pub fn decode(text: &str) -> Result<Frame, String> {
        /// Just the tag; every other field is skipped unread.
        #[derive(Deserialize)]
        struct Tag<'a> {
            #[serde(rename = "type", borrow)]
            kind: Cow<'a, str>,
        }
        let tag: Tag = body(text)?;
        Ok(match &*tag.kind {
            "hello" => {
                let HelloBody { redis, strategies } = body(text)?;
                let strategies = strategies.into_iter().map(StrategyBody::into_info);
                Frame::Hello {
                    redis,
                    strategies: strategies.collect::<Result<_, _>>()?,
                }
            }
            "redis_status" => Frame::RedisStatus(body::<RedisStatusBody>(text)?.redis),
            "room_joined" => {
                let JoinedBody {
                    room,
                    participant_id,
                    role,
                    seat_token,
                } = body(text)?;
                Frame::RoomJoined {
                    room,
                    participant_id,
                    role,
                    seat_token,
                }
            }
            "room_presence" => Frame::RoomPresence(body::<PresenceBody>(text)?.presence),
            "sale_opened" => {
                let SaleOpenedBody {
                    sale_id,
                    config,
                    run,
                } = body(text)?;
                Frame::SaleOpened {
                    sale_id,
                    config,
                    run: run.into_config()?,
                }
            }
            "outcomes" => {
                let OutcomesBody { run_id, outcomes } = body(text)?;
                Frame::Outcomes {
                    run_id,
                    outcomes: outcomes
                        .into_iter()
                        .map(RaceOutcome::into_outcome)
                        .collect(),
                }
            }
            "buy_result" => {
                let b: BuyResultBody = body(text)?;
                Frame::BuyResult(BuyResult {
                    room: b.room,
                    request_id: b.request_id,
                    sale_id: b.sale_id,
                    result: b.result,
                    unit: b.unit,
                    outcome: b.outcome.map(RaceOutcome::into_outcome),
                    message: b.message,
                })
            }
            "sale_closed" => {
                let SaleClosedBody {
                    sale_id,
                    summary,
                    error,
                    reloads,
                } = body(text)?;
                Frame::SaleClosed {
                    sale_id,
                    summary: summary.map(RaceSummary::into_summary),
                    error,
                    reloads,
                }
            }
            "error" => Frame::Error(body(text)?),
            _ => Frame::Other,
        })
    }

    /// The server's greeting.
    pub fn is_hello(&self) -> bool {
        matches!(self, Frame::Hello { .. })
    }

    /// Frames the room's state reads (an error may answer a room action).
    pub fn is_room_frame(&self) -> bool {
        matches!(
            self,
            Frame::RoomJoined { .. }
                | Frame::RoomPresence(_)
                | Frame::SaleOpened { .. }
                | Frame::SaleClosed { .. }
                | Frame::BuyResult(_)
                | Frame::Error(_)
        )
    }

    /// Frames the page's state reads.
    pub fn is_page_frame(&self) -> bool {
        matches!(
            self,
            Frame::Hello { .. }
                | Frame::RedisStatus(_)
                | Frame::SaleOpened { .. }
                | Frame::Outcomes { .. }
                | Frame::SaleClosed { .. }
                | Frame::Error(_)
        )
    }

    /// Fold into the room's state, as [`RoomState::apply`] does the whole frame.
    pub fn fold_room(&self, room: &mut RoomState) {
        match self {
            Frame::RoomJoined {
                room: code,
                participant_id,
                role,
                seat_token,
            } => room.joined(code, *participant_id, *role, seat_token.clone()),
            Frame::RoomPresence(presence) => room.presence = *presence,
            Frame::SaleOpened {
                sale_id, config, ..
            } => room.sale_opened(sale_id, config),
            Frame::SaleClosed {
                sale_id,
                summary,
                error,
                reloads,
            } => room.sale_closed(
                sale_id,
                summary.as_ref().map(|s| s.oversold_units),
                error.clone(),
                *reloads,
            ),
            Frame::BuyResult(result) => room.bought(result.clone()),
            Frame::Error(e) => room.error(e),
            Frame::Hello { .. } | Frame::RedisStatus(_) | Frame::Outcomes { .. } | Frame::Other => {
            }
        }
    }

    /// Fold into the page's state, as [`PageState::apply`] does the whole frame: a sale is a
    /// run on every screen (its outcomes fill the counters and the grid).
    pub fn fold_page(self, page: &mut PageState) {
        match self {
            Frame::Hello { redis, strategies } => page.greeted(redis, strategies),
            Frame::RedisStatus(redis) => page.redis = Some(redis),
            Frame::SaleOpened { sale_id, run, .. } => page.run_started(sale_id, run),
            Frame::Outcomes { run_id, outcomes } => page.outcomes(&run_id, outcomes),
            Frame::SaleClosed {
                sale_id, summary, ..
            } => page.sale_closed(sale_id, summary),
            Frame::Error(e) => page.error(e),
            Frame::RoomJoined { .. }
            | Frame::RoomPresence(_)
            | Frame::BuyResult(_)
            | Frame::Other => {}
        }
    }
}

/// One frame's body as `T` (its `type` and anything `T` does not name are skipped).
fn body<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|err| err.to_string())
}

#[derive(Deserialize)]
struct HelloBody {
    redis: RedisState,
    #[serde(default)]
    strategies: Vec<StrategyBody>,
}

/// A [`StrategyInfo`] as a phone's `hello` carries it: everything but the words, which the
/// server sends only to the lab (a phone shows a strategy by its short label alone).
#[derive(Deserialize)]
struct StrategyBody {
    name: String,
    label: String,
    short_label: String,
    unsafe_by_design: bool,
    category: Category,
    featured: bool,
    tape: TapeRule,
    #[serde(default)]
    scenario: Scenario,
    available: bool,
    #[serde(default)]
    unavailable_reason: Option<String>,
    #[serde(default)]
    step_refusal: Option<String>,
}

impl StrategyBody {
    fn into_info(self) -> Result<StrategyInfo, String> {
        let no_words = || Cow::Borrowed("");
        Ok(StrategyInfo {
            about: StrategyAbout {
                name: self.name.into(),
                label: self.label.into(),
                short_label: self.short_label.into(),
                description: no_words(),
                unsafe_by_design: self.unsafe_by_design,
                category: self.category,
                featured: self.featured,
                scripts: Cow::Borrowed(&[]),
                explanation: Explanation {
                    title: no_words(),
                    how: no_words(),
                    why: no_words(),
                    cost: no_words(),
                    steps: Cow::Borrowed(&[]),
                },
                tape: self.tape,
                scenario: self.scenario,
            },
            available: self.available,
            unavailable_reason: self.unavailable_reason,
            step_refusal: self.step_refusal,
        })
    }
}

#[derive(Deserialize)]
struct RedisStatusBody {
    redis: RedisState,
}

#[derive(Deserialize)]
struct JoinedBody {
    room: String,
    participant_id: u32,
    role: RoomRole,
    #[serde(default)]
    seat_token: Option<String>,
}

#[derive(Deserialize)]
struct PresenceBody {
    presence: Presence,
}

#[derive(Deserialize)]
struct SaleOpenedBody {
    sale_id: String,
    config: SaleConfig,
    run: RaceRun,
}

#[derive(Deserialize)]
struct OutcomesBody {
    run_id: String,
    outcomes: Vec<RaceOutcome>,
}

#[derive(Deserialize)]
struct BuyResultBody {
    room: String,
    request_id: String,
    sale_id: String,
    result: OutcomeResult,
    #[serde(default)]
    unit: Option<i64>,
    #[serde(default)]
    outcome: Option<RaceOutcome>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Deserialize)]
struct SaleClosedBody {
    sale_id: String,
    #[serde(default)]
    summary: Option<RaceSummary>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    reloads: u64,
}

/// A [`RunConfig`] as a race's is written: the race's knobs, flat, and `scenario` (which must
/// be the race: a room's sale is one).
#[derive(Deserialize)]
struct RaceRun {
    strategy: String,
    stock: u32,
    buyers: u32,
    qty: u32,
    #[serde(default)]
    max_qty: Option<u32>,
    app_servers: u32,
    arrival_spread_ms: u32,
    race_window_ms: u32,
    seed: u64,
    #[serde(default)]
    scenario: Scenario,
}

impl RaceRun {
    fn into_config(self) -> Result<RunConfig, String> {
        if self.scenario != Scenario::Race {
            return Err(format!(
                "a sale of the {} scenario (a room's sale is a race)",
                self.scenario.as_str()
            ));
        }
        Ok(RaceConfig {
            stock: self.stock,
            buyers: self.buyers,
            qty: self.qty,
            max_qty: self.max_qty,
            app_servers: self.app_servers,
            arrival_spread_ms: self.arrival_spread_ms,
            race_window_ms: self.race_window_ms,
            seed: self.seed,
            knobs: Knobs::Race,
        }
        .with_strategy(&self.strategy))
    }
}

/// A [`BuyerOutcome`] as a race's is written: every field but a checkout's or a cart's story,
/// which a race never has.
#[derive(Deserialize)]
struct RaceOutcome {
    buyer: u32,
    app_server: u32,
    qty: u32,
    observed_stock: Option<i64>,
    result: OutcomeResult,
    #[serde(default)]
    error: Option<String>,
    stock_after: Option<i64>,
    latency_us: u64,
    start_us: u64,
    end_us: u64,
    #[serde(default)]
    read_us: Option<u64>,
    round_trips: u32,
    #[serde(default)]
    retries: u32,
    #[serde(default)]
    bucket: Option<u32>,
    #[serde(default)]
    node: Option<String>,
    #[serde(default)]
    epoch: Option<Epoch>,
}

impl RaceOutcome {
    fn into_outcome(self) -> BuyerOutcome {
        BuyerOutcome {
            buyer: self.buyer,
            app_server: self.app_server,
            qty: self.qty,
            observed_stock: self.observed_stock,
            result: self.result,
            error: self.error,
            stock_after: self.stock_after,
            latency_us: self.latency_us,
            start_us: self.start_us,
            end_us: self.end_us,
            read_us: self.read_us,
            round_trips: self.round_trips,
            retries: self.retries,
            bucket: self.bucket,
            node: self.node,
            checkout: None,
            cart: None,
            epoch: self.epoch,
        }
    }
}

/// A [`RunSummary`] as a race's is written: every field but the other scenarios' tallies,
/// which a race never has.
#[derive(Deserialize)]
struct RaceSummary {
    strategy: String,
    stock: u32,
    buyers: u32,
    orders_accepted: u32,
    units_sold: u64,
    final_stock: i64,
    oversold_units: u64,
    lost_updates: i64,
    rejected: u32,
    errors: u32,
    #[serde(default)]
    unknown: u32,
    #[serde(default)]
    gave_up: u32,
    #[serde(default)]
    in_doubt_units: u64,
    #[serde(default)]
    in_doubt_taken: u64,
    #[serde(default)]
    false_sold_out: u32,
    duration_ms: f64,
    throughput_per_s: f64,
    latency: LatencySummary,
    round_trips: u64,
    retries: u64,
    #[serde(default)]
    cancelled: bool,
}

impl RaceSummary {
    fn into_summary(self) -> RunSummary {
        RunSummary {
            strategy: self.strategy,
            stock: self.stock,
            buyers: self.buyers,
            orders_accepted: self.orders_accepted,
            units_sold: self.units_sold,
            final_stock: self.final_stock,
            oversold_units: self.oversold_units,
            lost_updates: self.lost_updates,
            rejected: self.rejected,
            errors: self.errors,
            unknown: self.unknown,
            gave_up: self.gave_up,
            in_doubt_units: self.in_doubt_units,
            in_doubt_taken: self.in_doubt_taken,
            false_sold_out: self.false_sold_out,
            duration_ms: self.duration_ms,
            throughput_per_s: self.throughput_per_s,
            latency: self.latency,
            round_trips: self.round_trips,
            retries: self.retries,
            cancelled: self.cancelled,
            checkout: None,
            cart: None,
            busy: None,
            durability: None,
            eviction: None,
            failover: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixtures;
    use oversold_protocol::room::{SaleClosed, SaleOpened};
    use oversold_protocol::{ErrorCode, Guard, ScriptCall, ServerMessage};

    /// What the server writes for `msg`, read by the phone.
    fn read(msg: &ServerMessage) -> Frame {
        Frame::decode(&serde_json::to_string(msg).unwrap()).unwrap()
    }

    fn sale_config() -> SaleConfig {
        serde_json::from_str(r#"{"strategy":"naive","stock":2,"bots":50,"allow_repeat":true}"#)
            .unwrap()
    }

    /// An outcome with every field a race sends set to something of its own.
    fn full_outcome() -> BuyerOutcome {
        BuyerOutcome {
            buyer: 26,
            app_server: 3,
            qty: 2,
            observed_stock: Some(1),
            result: OutcomeResult::Reserved,
            error: Some("slow".into()),
            stock_after: Some(-1),
            latency_us: 900,
            start_us: 100,
            end_us: 1_000,
            read_us: Some(400),
            round_trips: 2,
            retries: 1,
            bucket: Some(2),
            node: Some("127.0.0.1:7001".into()),
            checkout: None,
            cart: None,
            epoch: Some(Epoch {
                n: 1,
                began_at: Some(5),
                evicted: false,
            }),
        }
    }

    /// A summary with every field a race sends set to something of its own.
    fn full_summary() -> RunSummary {
        let mut s = fixtures::summary(10, 12, -2);
        s.orders_accepted = 11;
        s.oversold_units = 2;
        s.lost_updates = 3;
        s.rejected = 4;
        s.errors = 5;
        s.unknown = 6;
        s.gave_up = 7;
        s.in_doubt_units = 8;
        s.in_doubt_taken = 9;
        s.false_sold_out = 10;
        s.duration_ms = 12.5;
        s.throughput_per_s = 880.25;
        s.latency = LatencySummary {
            p50_us: 1,
            p95_us: 2,
            p99_us: 3,
            max_us: 4,
        };
        s.round_trips = 24;
        s.retries = 2;
        s.cancelled = true;
        s
    }

    #[test]
    fn a_race_reads_back_exactly_as_the_protocol_wrote_it() {
        let run = fixtures::config(2, 0);
        let opened = ServerMessage::SaleOpened(SaleOpened {
            room: "AB3CD".into(),
            sale_id: "s-1".into(),
            config: sale_config(),
            run: run.clone(),
            opened_unix_us: 7,
        });
        assert_eq!(
            read(&opened),
            Frame::SaleOpened {
                sale_id: "s-1".into(),
                config: sale_config(),
                run
            }
        );
        let outcomes = vec![
            full_outcome(),
            fixtures::outcome(3, 1, OutcomeResult::SoldOut),
        ];
        let batch = ServerMessage::Outcomes {
            run_id: "s-1".into(),
            outcomes: outcomes.clone(),
        };
        assert_eq!(
            read(&batch),
            Frame::Outcomes {
                run_id: "s-1".into(),
                outcomes
            }
        );
        let closed = ServerMessage::SaleClosed(SaleClosed {
            room: "AB3CD".into(),
            sale_id: "s-1".into(),
            summary: Some(full_summary()),
            error: Some("why".into()),
            reloads: 2,
        });
        assert_eq!(
            read(&closed),
            Frame::SaleClosed {
                sale_id: "s-1".into(),
                summary: Some(full_summary()),
                error: Some("why".into()),
                reloads: 2
            }
        );
        let result = BuyResult {
            room: "AB3CD".into(),
            request_id: "p1-c1".into(),
            sale_id: "s-1".into(),
            result: OutcomeResult::Reserved,
            unit: Some(-1),
            outcome: Some(full_outcome()),
            message: Some("m".into()),
        };
        assert_eq!(
            read(&ServerMessage::BuyResult(result.clone())),
            Frame::BuyResult(result)
        );
    }

    /// A strategy as a phone's `hello` carries it: without its words.
    fn wordless(mut s: StrategyInfo) -> StrategyInfo {
        s.about.description = "".into();
        s.about.scripts = Cow::Borrowed(&[]);
        s.about.explanation = Explanation {
            title: "".into(),
            how: "".into(),
            why: "".into(),
            cost: "".into(),
            steps: Cow::Borrowed(&[]),
        };
        s
    }

    /// Every tape rule there is (a new one fails to compile here until it is listed).
    fn every_tape_rule() -> Vec<TapeRule> {
        let rules = vec![
            TapeRule::ReadThenDecrement {
                guard: Guard::Unguarded,
            },
            TapeRule::ReadThenDecrement { guard: Guard::Lock },
            TapeRule::ReadThenDecrement {
                guard: Guard::Watch,
            },
            TapeRule::ReadThenDecrement {
                guard: Guard::RowLock,
            },
            TapeRule::ReadThenSet,
            TapeRule::SelectThenUpdate,
            TapeRule::AtomicCall {
                call: ScriptCall::Evalsha,
            },
            TapeRule::AtomicCall {
                call: ScriptCall::Fcall,
            },
            TapeRule::AtomicPerBucket { buckets: 4 },
            TapeRule::DecrementThenUndo,
            TapeRule::Story,
        ];
        for rule in &rules {
            match rule {
                TapeRule::ReadThenDecrement { .. }
                | TapeRule::ReadThenSet
                | TapeRule::SelectThenUpdate
                | TapeRule::AtomicCall { .. }
                | TapeRule::AtomicPerBucket { .. }
                | TapeRule::DecrementThenUndo
                | TapeRule::Story => {}
            }
        }
        rules
    }

    #[test]
    fn the_greeting_room_frames_and_errors_are_read() {
        let mut hello = fixtures::hello();
        let mut strategies: Vec<StrategyInfo> = hello.strategies.drain(..).map(wordless).collect();
        strategies[0].unavailable_reason = Some("no PostgreSQL".into());
        strategies[0].available = false;
        strategies[1].step_refusal = Some("not stepped".into());
        // Every tape rule, so each reads back as itself.
        for (i, tape) in every_tape_rule().into_iter().enumerate() {
            let mut s = strategies[i % strategies.len()].clone();
            s.about.name = format!("s{i}").into();
            s.about.tape = tape;
            strategies.push(s);
        }
        hello.strategies = strategies.clone();
        assert_eq!(
            read(&ServerMessage::Hello(Box::new(hello))),
            Frame::Hello {
                redis: RedisState::Up,
                strategies
            }
        );
        // A lab's greeting, words and all, reads too (the words are not kept).
        assert_eq!(
            read(&ServerMessage::Hello(Box::new(fixtures::hello()))),
            Frame::Hello {
                redis: RedisState::Up,
                strategies: fixtures::strategies().into_iter().map(wordless).collect()
            }
        );
        assert_eq!(
            read(&ServerMessage::RedisStatus {
                redis: RedisState::Down
            }),
            Frame::RedisStatus(RedisState::Down)
        );
        let joined = ServerMessage::RoomJoined {
            room: "AB3CD".into(),
            participant_id: 4,
            role: RoomRole::Phone,
            seat_token: Some("ab12".into()),
        };
        assert_eq!(
            read(&joined),
            Frame::RoomJoined {
                room: "AB3CD".into(),
                participant_id: 4,
                role: RoomRole::Phone,
                seat_token: Some("ab12".into())
            }
        );
        let presence = Presence {
            phones: 3,
            watchers: 1,
            clicks: 2,
        };
        assert_eq!(
            read(&ServerMessage::RoomPresence {
                room: "AB3CD".into(),
                presence
            }),
            Frame::RoomPresence(presence)
        );
        let err = WireError {
            code: ErrorCode::AlreadyBought,
            message: "you have already bought in this sale".into(),
            run_id: Some("s-1".into()),
        };
        assert_eq!(read(&ServerMessage::Error(err.clone())), Frame::Error(err));
    }

    #[test]
    fn frames_a_phone_does_not_show_are_skipped_unread() {
        for msg in [
            ServerMessage::RunStarted {
                run_id: "r-1".into(),
                config: fixtures::config(10, 50),
            },
            ServerMessage::RunFinished {
                run_id: "r-1".into(),
                summary: full_summary(),
            },
            ServerMessage::StepClosed {
                run_id: "r-1".into(),
            },
        ] {
            assert_eq!(read(&msg), Frame::Other);
        }
        // Whatever is in it: only the tag is read.
        assert_eq!(
            Frame::decode(r#"{"type":"challenge_tape","tape":{"not":"a tape"}}"#),
            Ok(Frame::Other)
        );
        assert!(Frame::decode("not json").is_err());
        assert!(Frame::decode(r#"{"type":"room_presence"}"#).is_err());
        let mut other = fixtures::config(10, 50);
        other.race.knobs = Knobs::BusyScript;
        let sale = ServerMessage::SaleOpened(SaleOpened {
            room: "AB3CD".into(),
            sale_id: "s-1".into(),
            config: sale_config(),
            run: other,
            opened_unix_us: 0,
        });
        let text = serde_json::to_string(&sale).unwrap();
        assert!(
            Frame::decode(&text)
                .unwrap_err()
                .contains("a room's sale is a race")
        );
    }

    /// The phone's folding, against the full page's: the same frames leave the same state.
    #[test]
    fn a_phone_folds_a_sale_as_the_full_page_does() {
        let frames = [
            ServerMessage::Hello(Box::new(fixtures::hello())),
            ServerMessage::RoomJoined {
                room: "AB3CD".into(),
                participant_id: 4,
                role: RoomRole::Phone,
                seat_token: Some("ab12".into()),
            },
            ServerMessage::SaleOpened(SaleOpened {
                room: "AB3CD".into(),
                sale_id: "s-1".into(),
                config: sale_config(),
                run: fixtures::config(2, 0),
                opened_unix_us: 0,
            }),
            ServerMessage::Outcomes {
                run_id: "s-1".into(),
                outcomes: vec![
                    full_outcome(),
                    fixtures::outcome(51, 1, OutcomeResult::Reserved),
                ],
            },
            ServerMessage::BuyResult(BuyResult {
                room: "AB3CD".into(),
                request_id: "p4-c1".into(),
                sale_id: "s-1".into(),
                result: OutcomeResult::Reserved,
                unit: Some(-1),
                outcome: Some(full_outcome()),
                message: None,
            }),
            ServerMessage::Error(WireError {
                code: ErrorCode::AlreadyBought,
                message: "you have already bought in this sale".into(),
                run_id: None,
            }),
            ServerMessage::RedisStatus {
                redis: RedisState::Down,
            },
            ServerMessage::SaleClosed(SaleClosed {
                room: "AB3CD".into(),
                sale_id: "s-1".into(),
                summary: Some(full_summary()),
                error: None,
                reloads: 1,
            }),
        ];
        let (mut page, mut room) = (PageState::default(), RoomState::default());
        let (mut phone_page, mut phone_room) = (PageState::default(), RoomState::default());
        for msg in frames {
            let frame = read(&msg);
            if frame.is_room_frame() {
                frame.fold_room(&mut phone_room);
            }
            if frame.is_page_frame() {
                frame.fold_page(&mut phone_page);
            }
            room.apply(&msg);
            page.apply(msg);
        }
        assert_eq!(phone_room, room);
        assert_eq!(phone_page.run, page.run);
        assert_eq!(phone_page.redis, page.redis);
        assert_eq!(phone_page.notices, page.notices);
        assert_eq!(phone_page.history, page.history);
        // The same short labels (the verdict's words), the rest of the words left out.
        let scenario = Some(Scenario::Race);
        let wordless_page: Vec<_> = page
            .known_for(scenario)
            .iter()
            .cloned()
            .map(wordless)
            .collect();
        assert_eq!(phone_page.known_for(scenario), wordless_page);
        assert_eq!(
            room.verdict().as_deref(),
            Some("you were sold a unit that does not exist: you are one of the 2 oversold")
        );
    }
}
