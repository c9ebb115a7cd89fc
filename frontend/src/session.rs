//! The page's reactive state, and the one place a server frame changes it.
//!
//! Components read these signals from context; only [`Session::apply`] (fed by the socket) and
//! a few user actions write them. Each signal holds a whole value (the run's `Vec` of rows, the
//! history), updated once per frame, so 10,000 buyers cost a few dozen updates, not 10,000.

use leptos::prelude::*;
use oversold_protocol::{Hello, RedisState, ServerMessage, StrategyInfo};

use crate::model::compare::CompareModel;
use crate::model::controls::Knobs;
use crate::model::history::{self, HistoryEntry};
use crate::model::run::RunModel;

/// The WebSocket's state, as the header shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// The first attempt is under way.
    Connecting,
    /// Open; frames flow.
    Open,
    /// Closed; the next attempt starts after `delay_ms`.
    Reconnecting {
        /// Attempts since the link was last healthy.
        attempt: u32,
        /// Wait before the next attempt.
        delay_ms: u32,
    },
}

/// An error the visitor has not dismissed yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// Key for the list and for dismissing.
    pub id: u64,
    /// The machine-readable code, shown small.
    pub code: String,
    /// The sentence for a human.
    pub message: String,
}

/// The `pending` value while a `start_compare` waits for its answer (no strategy has this name).
pub const COMPARE: &str = "compare";

/// How many notices stay on screen; older ones are dropped so errors cannot bury the page.
const MAX_NOTICES: usize = 4;

/// All page state. `Copy`: every field is an arena handle.
#[derive(Debug, Clone, Copy)]
pub struct Session {
    /// WebSocket state.
    pub link: RwSignal<Link>,
    /// The latest greeting (strategies, scripts, limits); `None` before the first one.
    pub hello: RwSignal<Option<Hello>>,
    /// Redis as last reported, by `hello` or `redis_status`.
    pub redis: RwSignal<Option<RedisState>>,
    /// The current (or last) run.
    pub run: RwSignal<Option<RunModel>>,
    /// The strategy of a `start_run` sent but not yet answered ([`COMPARE`] for `start_compare`).
    pub pending: RwSignal<Option<String>>,
    /// The current (or last) comparison of every strategy.
    pub compare: RwSignal<Option<CompareModel>>,
    /// The strategy the visitor picked in the "why" panel; cleared when a run starts, so the
    /// panel follows the race on screen again.
    pub focus: RwSignal<Option<String>>,
    /// Finished runs, newest first.
    pub history: RwSignal<Vec<HistoryEntry>>,
    /// Errors on screen.
    pub notices: RwSignal<Vec<Notice>>,
    /// The form.
    pub knobs: RwSignal<Knobs>,
    next_notice: StoredValue<u64>,
}

impl Session {
    /// Fresh state: connecting, nothing run yet, default knobs.
    pub fn new() -> Self {
        Self {
            link: RwSignal::new(Link::Connecting),
            hello: RwSignal::new(None),
            redis: RwSignal::new(None),
            run: RwSignal::new(None),
            pending: RwSignal::new(None),
            compare: RwSignal::new(None),
            focus: RwSignal::new(None),
            history: RwSignal::new(Vec::new()),
            notices: RwSignal::new(Vec::new()),
            knobs: RwSignal::new(Knobs::default()),
            next_notice: StoredValue::new(0),
        }
    }

    /// Fold one server frame into the signals.
    pub fn apply(&self, msg: ServerMessage) {
        match msg {
            ServerMessage::Hello(hello) => {
                self.redis.set(Some(hello.redis));
                let limits = hello.limits;
                self.knobs.update(|k| *k = k.clamped(&limits));
                self.hello.set(Some(hello));
            }
            ServerMessage::RedisStatus { redis } => self.redis.set(Some(redis)),
            ServerMessage::RunStarted { run_id, config } => {
                self.pending.set(None);
                self.focus.set(None);
                self.compare.update(|c| {
                    if let Some(c) = c {
                        c.race_started(&config.strategy);
                    }
                });
                self.run.set(Some(RunModel::new(run_id, config)));
            }
            ServerMessage::Outcomes { run_id, outcomes } => {
                // One update per frame, however many buyers it carries.
                self.run.update(|run| match run {
                    Some(run) if run.run_id == run_id => run.push_batch(outcomes),
                    _ => {}
                });
            }
            ServerMessage::RunCancelled { run_id, summary } => {
                self.run.update(|run| match run {
                    Some(run) if run.run_id == run_id => run.cancel(summary),
                    _ => {}
                });
            }
            ServerMessage::RunFinished { run_id, summary } => {
                let label = self.label_of(&summary.strategy);
                self.history.update(|h| {
                    history::record(
                        h,
                        HistoryEntry {
                            run_id: run_id.clone(),
                            strategy: summary.strategy.clone(),
                            short_label: history::short_label(&label),
                            summary: summary.clone(),
                        },
                    )
                });
                self.compare.update(|c| {
                    if let Some(c) = c {
                        c.race_finished(&summary);
                    }
                });
                self.run.update(|run| match run {
                    Some(run) if run.run_id == run_id => run.finish(summary),
                    _ => {}
                });
            }
            // The races in between arrive as ordinary runs; these two frames bracket them.
            ServerMessage::CompareStarted {
                compare_id,
                strategies,
                config,
            } => {
                self.pending.set(None);
                self.compare
                    .set(Some(CompareModel::new(compare_id, strategies, config)));
            }
            ServerMessage::CompareFinished {
                compare_id,
                summaries,
            } => self.compare.update(|c| match c {
                Some(c) if c.compare_id == compare_id => c.finish(summaries),
                _ => {}
            }),
            ServerMessage::Error(err) => {
                if let Some(id) = &err.run_id {
                    self.run.update(|run| match run {
                        Some(run) if &run.run_id == id => run.fail(err.message.clone()),
                        _ => {}
                    });
                } else {
                    // The server answers `start_run` with `run_started` or an error; this was the error.
                    self.pending.set(None);
                }
                self.notify(err.code.as_str(), &err.message);
            }
        }
    }

    /// The socket closed: a run in flight will get no more frames.
    pub fn disconnected(&self, attempt: u32, delay_ms: u32) {
        self.link.set(Link::Reconnecting { attempt, delay_ms });
        self.pending.set(None);
        self.run.update(|run| {
            if let Some(run) = run {
                run.interrupt();
            }
        });
        self.compare.update(|c| {
            if let Some(c) = c {
                c.interrupt();
            }
        });
    }

    /// Show an error until dismissed.
    pub fn notify(&self, code: &str, message: &str) {
        let id = self.next_notice.get_value();
        self.next_notice.set_value(id + 1);
        self.notices.update(|n| {
            n.push(Notice {
                id,
                code: code.to_string(),
                message: message.to_string(),
            });
            let extra = n.len().saturating_sub(MAX_NOTICES);
            n.drain(..extra);
        });
    }

    /// Remove one notice.
    pub fn dismiss(&self, id: u64) {
        self.notices.update(|n| n.retain(|x| x.id != id));
    }

    /// The strategies the server offers (empty before `hello`).
    pub fn strategies(&self) -> Vec<StrategyInfo> {
        self.hello
            .with(|h| h.as_ref().map(|h| h.strategies.clone()).unwrap_or_default())
    }

    /// A strategy's button label, or its name if the server did not list it.
    pub fn label_of(&self, strategy: &str) -> String {
        self.hello.with_untracked(|h| {
            h.as_ref()
                .and_then(|h| h.strategies.iter().find(|s| s.about.name == strategy))
                .map(|s| s.about.label.to_string())
                .unwrap_or_else(|| strategy.to_string())
        })
    }

    /// True while a run or comparison is in flight or being asked for: the run buttons wait.
    /// (Between two races of a comparison no run is in flight, but the comparison still is.)
    pub fn busy(&self) -> bool {
        self.pending.with(Option::is_some)
            || self
                .run
                .with(|r| r.as_ref().is_some_and(RunModel::is_running))
            || self.comparing()
    }

    /// True while a comparison is in flight.
    pub fn comparing(&self) -> bool {
        self.compare
            .with(|c| c.as_ref().is_some_and(CompareModel::is_running))
    }

    /// The strategy the "why" panel explains: the visitor's pick, else the run on screen, else
    /// the one the talk starts with.
    pub fn explained(&self) -> String {
        self.focus
            .get()
            .or_else(|| {
                self.run
                    .with(|r| r.as_ref().map(|r| r.config.strategy.clone()))
            })
            .unwrap_or_else(|| "naive".to_string())
    }
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}
