//! The page's state, and the one place a server frame changes it: [`PageState::apply`].
//!
//! Plain Rust, so the rules a live server exercises only now and then (a stale run id, a
//! terminal frame arriving twice, an error that ends a run) are pinned by host tests. The
//! Leptos session wraps one [`PageState`] in one signal and feeds it every decoded frame.
//!
//! The rules, in short: frames about a run only touch the run on screen, and only while it
//! runs (anything else is stale and ignored); every run ends once, by `run_finished`,
//! `run_cancelled` or an `error` carrying its id; a `start_*` waits in [`Pending`] until the
//! server answers it.

use oversold_protocol::{
    BuyerOutcome, Hello, RaceConfig, RedisState, RunConfig, RunSummary, SavedRun, Scenario,
    ServerMessage, StepState, StrategyAbout, StrategyInfo, WireError,
};

use std::sync::Arc;

use super::compare::CompareModel;
use super::history::{self, HistoryEntry, Kept, KeptRun, MAX_KEPT_OUTCOMES};
use super::run::RunModel;
use super::saved;
use super::step::log::StepLog;
use super::step::trail::StepTrail;
use super::strategies;
use super::tape_view::RunTape;
use super::tape_view::cache::{TapeCache, TapeKey};

/// How many notices stay on screen; older ones are dropped so errors cannot bury the page.
pub const MAX_NOTICES: usize = 4;

/// A request sent and not answered yet: the buttons wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pending {
    /// `start_run` for this strategy; answered by `run_started` or an `error`.
    Run(String),
    /// `start_compare`; answered by `compare_started` or an `error`.
    Compare,
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

/// Everything the page knows from the server, and what it asked for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageState {
    /// The latest greeting (strategies, scripts, limits); `None` before the first one.
    pub hello: Option<Hello>,
    /// Redis as last reported, by `hello` or `redis_status`.
    pub redis: Option<RedisState>,
    /// The current (or last) run.
    pub run: Option<RunModel>,
    /// A request waiting for its answer.
    pub pending: Option<Pending>,
    /// The current (or last) comparison of every strategy.
    pub compare: Option<CompareModel>,
    /// The strategy the visitor picked in the "why" panel; cleared when a run starts, so the
    /// panel follows the race on screen again.
    pub focus: Option<String>,
    /// Finished (or cancelled, with a summary) runs, newest first.
    pub history: Vec<HistoryEntry>,
    /// Errors on screen, oldest first.
    pub notices: Vec<Notice>,
    /// Step-through mode as the server last described it; `None` when it is not open.
    pub step: Option<StepState>,
    /// The outcomes behind [`PageState::history`], so a recent run can be reopened (bounded).
    pub kept: Kept,
    /// The strategies of saved runs loaded from files, in case `hello` does not list them
    /// (an older server, or no server at all since the page loaded).
    pub loaded: Vec<StrategyAbout>,
    /// The stock after every command of the step session (see [`StepTrail`]).
    pub step_trail: StepTrail,
    /// The run's tape, built once per batch for every panel that reads it ([`Self::run_tape`]).
    pub tape_cache: TapeCache,
    /// Every strategy `hello` listed, of every scenario, for looking one up by name
    /// ([`Self::known`]).
    known: Vec<StrategyInfo>,
    next_notice: u64,
}

impl PageState {
    /// Fold one server frame in. One arm per kind of frame, so every kind is seen here at a
    /// glance; an arm longer than a line hands its frame to a method named after it.
    pub fn apply(&mut self, msg: ServerMessage) {
        match msg {
            ServerMessage::Hello(hello) => self.hello(*hello),
            ServerMessage::RedisStatus { redis } => self.redis = Some(redis),
            ServerMessage::StepState(state) => {
                self.step_trail.observe(&state);
                self.step = Some(state);
            }
            ServerMessage::StepClosed { run_id } => self.step_closed(&run_id),
            ServerMessage::RunStarted { run_id, config } => self.run_started(run_id, config),
            ServerMessage::Outcomes { run_id, outcomes } => self.outcomes(&run_id, outcomes),
            // A race at scale: its totals while it runs, and the audit page asked for.
            ServerMessage::RunProgress { run_id, progress } => {
                if let Some(run) = self.running(&run_id) {
                    run.progress(progress);
                }
            }
            ServerMessage::AuditRows(rows) => {
                if let Some(run) = self.run.as_mut().filter(|r| r.run_id == rows.run_id) {
                    run.audit_rows(rows);
                }
            }
            ServerMessage::RunFinished { run_id, summary } => self.run_finished(run_id, summary),
            ServerMessage::RunCancelled { run_id, summary } => self.run_cancelled(run_id, summary),
            // The races in between arrive as ordinary runs; these two frames bracket them.
            ServerMessage::CompareStarted {
                compare_id,
                strategies,
                config,
            } => self.compare_started(compare_id, strategies, config),
            ServerMessage::CompareFinished {
                compare_id,
                summaries,
            } => self.compare_finished(&compare_id, summaries),
            ServerMessage::Error(err) => self.error(err),
            // A checkout's live books: like outcomes, only for the run on screen while it runs.
            ServerMessage::Reconciliation {
                run_id,
                reconciliation,
            } => {
                if let Some(run) = self.running(&run_id) {
                    run.checkout.observe(reconciliation);
                }
            }
            ServerMessage::Reconciled { run_id, report } => {
                if let Some(run) = self.running(&run_id) {
                    run.checkout.reconciled(report);
                }
            }
            // A room's sale is a run on every screen: its outcomes fill the same grid,
            // timeline and counters (`room.rs` keeps what only a room has).
            ServerMessage::SaleOpened(sale) => self.run_started(sale.sale_id, sale.run),
            ServerMessage::SaleClosed(closed) => self.sale_closed(closed.sale_id, closed.summary),
            ServerMessage::RoomCreated { .. }
            | ServerMessage::RoomJoined { .. }
            | ServerMessage::RoomPresence { .. }
            | ServerMessage::BuyResult(_)
            | ServerMessage::ChaosApplied(_) => {}
            // The workshop view keeps its own verdicts; a room's challenge is not on this page
            // yet (its leaderboard frames are ignored).
            ServerMessage::SolutionVerdict(_)
            | ServerMessage::ChallengeOpened(_)
            | ServerMessage::ChallengeEntry(_)
            | ServerMessage::ChallengeTape(_) => {}
        }
    }

    /// A phone's reading of the greeting (the phone page decodes no more of `hello`): Redis
    /// as it stands, and the strategies a room's sale may race, kept by name.
    pub fn greeted(&mut self, redis: RedisState, strategies: Vec<StrategyInfo>) {
        self.redis = Some(redis);
        self.known = strategies;
    }

    /// The server's greeting: Redis as it stands, and every strategy it lists, kept by name.
    fn hello(&mut self, hello: Hello) {
        self.redis = Some(hello.redis);
        self.known = super::strategies::every(&hello);
        self.hello = Some(hello);
    }

    /// Step-through mode closed; only the session on screen closes (an old one's frame is stale).
    fn step_closed(&mut self, run_id: &str) {
        if self.step.as_ref().is_some_and(|s| s.run_id == run_id) {
            self.step = None;
        }
    }

    /// An `outcomes` frame: into the run on screen, if it is `run_id` and still running. One
    /// fold per frame, however many buyers it carries.
    pub fn outcomes(&mut self, run_id: &str, outcomes: Vec<BuyerOutcome>) {
        if let Some(run) = self.running(run_id) {
            run.push_batch(outcomes);
        }
    }

    /// The run on screen finished: it ends, and joins the history.
    fn run_finished(&mut self, run_id: String, summary: RunSummary) {
        let Some(run) = self.running(&run_id) else {
            return;
        };
        run.finish(summary.clone());
        self.record(run_id, summary);
    }

    /// The run on screen was cancelled: it ends, and joins the history if it has a summary.
    fn run_cancelled(&mut self, run_id: String, summary: Option<RunSummary>) {
        let Some(run) = self.running(&run_id) else {
            return;
        };
        run.cancel(summary.clone());
        if let Some(summary) = summary {
            self.record(run_id, summary);
        }
    }

    /// A comparison began: it answers the pending `start_compare`, and starts with no races.
    fn compare_started(&mut self, compare_id: String, strategies: Vec<String>, config: RaceConfig) {
        if self.pending == Some(Pending::Compare) {
            self.pending = None;
        }
        if self
            .compare
            .as_ref()
            .is_some_and(|c| c.compare_id == compare_id)
        {
            return; // a replayed frame must not wipe the races so far
        }
        self.compare = Some(CompareModel::new(compare_id, strategies, config));
    }

    /// The comparison on screen is over, if it is this one and still running.
    fn compare_finished(&mut self, compare_id: &str, summaries: Vec<RunSummary>) {
        if let Some(c) = &mut self.compare
            && c.compare_id == compare_id
            && c.is_running()
        {
            c.finish(summaries);
        }
    }

    /// A room's sale closed: finished with a summary (into the history), or cancelled without.
    pub fn sale_closed(&mut self, sale_id: String, summary: Option<RunSummary>) {
        let Some(run) = self.running(&sale_id) else {
            return;
        };
        match summary {
            Some(summary) => {
                run.finish(summary.clone());
                self.record(sale_id, summary);
            }
            None => run.cancel(None),
        }
    }

    /// A run (or a room's sale) started: it answers the pending `start_run`, and takes the screen.
    pub fn run_started(&mut self, run_id: String, config: RunConfig) {
        if self.run.as_ref().is_some_and(|r| r.run_id == run_id) {
            return; // a replayed frame must not wipe the outcomes so far
        }
        if matches!(self.pending, Some(Pending::Run(_))) {
            self.pending = None;
        }
        self.focus = None;
        if let Some(c) = &mut self.compare {
            c.race_started(&config.strategy);
        }
        self.run = Some(RunModel::new(run_id, config));
    }

    /// An error ends the run whose id it carries. Without an id it answers a `start_*` (or some
    /// other frame) the server refused, so nothing is pending any more. With the id of a run
    /// the page never saw start, it can only be the answer to the start it waits for.
    pub fn error(&mut self, err: WireError) {
        let ours = match err.run_id.as_deref() {
            Some(id) => self.running(id),
            None => None,
        };
        match ours {
            Some(run) => run.fail(err.message.clone()),
            None => self.pending = None,
        }
        self.notify(err.code.as_str(), &err.message);
    }

    /// The run on screen, if it is `run_id` and still running: the only run a frame may change.
    fn running(&mut self, run_id: &str) -> Option<&mut RunModel> {
        self.run
            .as_mut()
            .filter(|r| r.run_id == run_id && r.is_running())
    }

    /// A run ended with a summary: into the history, and into the comparison it belongs to.
    fn record(&mut self, run_id: String, summary: RunSummary) {
        // Names repeat across scenarios (`lua` races, and fails over): the run's own list.
        let scenario = self
            .run
            .as_ref()
            .filter(|r| r.run_id == run_id)
            .map(|r| r.config.race.scenario());
        let short_label = strategies::short_label(self.known_for(scenario), &summary.strategy);
        let mut compare = None;
        if let Some(c) = &mut self.compare {
            if c.is_running() && c.strategies.contains(&summary.strategy) {
                compare = Some(c.compare_id.clone());
            }
            c.race_finished(&summary);
        }
        history::record(
            &mut self.history,
            HistoryEntry {
                run_id,
                strategy: summary.strategy.clone(),
                short_label,
                summary,
                compare,
            },
        );
        self.keep_run_on_screen();
    }

    /// Keep the outcomes of the run on screen, just recorded at the front of the history.
    fn keep_run_on_screen(&mut self) {
        // A race at scale has no outcomes on the page to keep (its audit is the server's).
        let Some(run) = self.run.as_ref().filter(|r| !r.at_scale()) else {
            return;
        };
        if self.history.first().is_none_or(|e| e.run_id != run.run_id) {
            return;
        }
        let kept = KeptRun {
            run_id: run.run_id.clone(),
            config: run.config.clone(),
            outcomes: run.rows.iter().map(|r| r.outcome.clone()).collect(),
        };
        self.kept.keep(kept, &self.history, MAX_KEPT_OUTCOMES);
    }

    /// Show a finished run from the history again (grid, counters, audit, timeline, tape).
    /// False while a run is in flight (its frames would have nowhere to go), or when the run's
    /// outcomes were dropped to stay under [`MAX_KEPT_OUTCOMES`].
    pub fn reopen(&mut self, run_id: &str) -> bool {
        if self.busy() {
            return false;
        }
        let Some(entry) = self.history.iter().find(|e| e.run_id == run_id) else {
            return false;
        };
        let Some(kept) = self.kept.get(run_id) else {
            return false;
        };
        let run = finished_run(
            run_id.to_string(),
            kept.config.clone(),
            kept.outcomes.clone(),
            entry.summary.clone(),
        );
        self.focus = None;
        self.run = Some(run);
        true
    }

    /// Show a saved run ([`saved::parse`] checked it) as a finished run, with no server round
    /// trip; it joins the history like any finished run. Refused, with a notice, while a run
    /// is in flight.
    pub fn load_saved(&mut self, saved: SavedRun) {
        if self.busy() {
            self.notify(
                "busy",
                "A run is in flight: load the saved run once it has finished.",
            );
            return;
        }
        let SavedRun {
            run_id,
            config,
            strategy,
            outcomes,
            summary,
            ..
        } = saved;
        // The server's words when it lists the strategy; the file's own otherwise.
        let short_label = strategies::find(self.known(), &strategy.name).map_or_else(
            || strategy.short_label.to_string(),
            |s| s.about.short_label.to_string(),
        );
        self.loaded.retain(|a| a.name != strategy.name);
        self.loaded.push(strategy);
        self.focus = None;
        self.run = Some(finished_run(
            run_id.clone(),
            config,
            outcomes,
            summary.clone(),
        ));
        history::record(
            &mut self.history,
            HistoryEntry {
                run_id,
                strategy: summary.strategy.clone(),
                short_label,
                summary,
                compare: None,
            },
        );
        self.keep_run_on_screen();
    }

    /// The run on screen as a saved-run file, once it has a summary and its strategy's words
    /// are known (from `hello`, or from the file it was loaded from).
    pub fn saved_run(&self) -> Option<SavedRun> {
        // A race at scale has no outcomes on the page: a file of it would be empty.
        let run = self.run.as_ref().filter(|r| !r.at_scale())?;
        saved::to_saved(run, self.about(&run.config.strategy)?)
    }

    /// A strategy's description: from `hello`, else from a saved run that brought it.
    pub fn about(&self, name: &str) -> Option<&StrategyAbout> {
        strategies::find(self.known(), name)
            .map(|s| &s.about)
            .or_else(|| self.loaded.iter().find(|a| a.name == name))
    }

    /// Clear the run on screen (the history stays). False while a run is in flight.
    pub fn clear_run(&mut self) -> bool {
        if self.busy() {
            return false;
        }
        self.run = None;
        self.focus = None;
        true
    }

    /// A `start_run` or `start_compare` was sent.
    pub fn asked(&mut self, pending: Pending) {
        self.pending = Some(pending);
    }

    /// The socket closed: a run or comparison in flight will get no more frames, and nothing
    /// sent will be answered.
    pub fn disconnected(&mut self) {
        self.pending = None;
        if let Some(run) = &mut self.run {
            run.interrupt();
        }
        if let Some(c) = &mut self.compare {
            c.interrupt();
        }
    }

    /// Show an error until dismissed (the oldest goes past [`MAX_NOTICES`]).
    pub fn notify(&mut self, code: &str, message: &str) {
        self.notices.push(Notice {
            id: self.next_notice,
            code: code.to_string(),
            message: message.to_string(),
        });
        self.next_notice += 1;
        let extra = self.notices.len().saturating_sub(MAX_NOTICES);
        self.notices.drain(..extra);
    }

    /// Remove one notice.
    pub fn dismiss(&mut self, id: u64) {
        self.notices.retain(|n| n.id != id);
    }

    /// The strategies the server offers (empty before `hello`).
    pub fn strategies(&self) -> &[StrategyInfo] {
        self.hello.as_ref().map_or(&[], |h| &h.strategies)
    }

    /// The strategies of `scenario`: the race's, or the checkout's.
    pub fn offered(&self, scenario: Scenario) -> &[StrategyInfo] {
        match scenario {
            Scenario::Race => self.strategies(),
            Scenario::Checkout => self.hello.as_ref().map_or(&[], |h| &h.checkout_strategies),
            Scenario::BusyScript => self.hello.as_ref().map_or(&[], |h| &h.busy_strategies),
            Scenario::Durability => self
                .hello
                .as_ref()
                .map_or(&[], |h| &h.durability_strategies),
            Scenario::Eviction => self.hello.as_ref().map_or(&[], |h| &h.eviction_strategies),
            Scenario::Failover => self.hello.as_ref().map_or(&[], |h| &h.failover_strategies),
            Scenario::Cart | Scenario::Warehouses => {
                let all = self.hello.as_ref().map_or(&[][..], |h| &h.cart_strategies);
                // The server lists each scenario's strategies together (see `Hello`).
                let start = all.iter().position(|s| s.about.scenario == scenario);
                let start = start.unwrap_or(all.len());
                let len = all[start..]
                    .iter()
                    .take_while(|s| s.about.scenario == scenario)
                    .count();
                &all[start..start + len]
            }
        }
    }

    /// The strategies of `scenario` when it is known and offers any, else every one: where a
    /// name from a run of that scenario is looked up (the same name may be in several).
    pub fn known_for(&self, scenario: Option<Scenario>) -> &[StrategyInfo] {
        match scenario.map(|s| self.offered(s)) {
            Some(list) if !list.is_empty() => list,
            _ => self.known(),
        }
    }

    /// Every strategy the server listed, race and checkout: where a strategy named by a run
    /// (of either scenario) is looked up.
    pub fn known(&self) -> &[StrategyInfo] {
        &self.known
    }

    /// True while a comparison is in flight.
    pub fn comparing(&self) -> bool {
        self.compare.as_ref().is_some_and(CompareModel::is_running)
    }

    /// True while a run or comparison is in flight or being asked for: the run buttons wait.
    /// (Between two races of a comparison no run is in flight, but the comparison still is.)
    pub fn busy(&self) -> bool {
        self.pending.is_some()
            || self.run.as_ref().is_some_and(RunModel::is_running)
            || self.comparing()
    }

    /// The Redis tape of the run on screen, from the outcomes received so far and the rule its
    /// strategy declares in `hello`; `None` before a run, or for a strategy `hello` did not list.
    /// Built once per batch (see [`TapeCache`]), whichever panel asks first.
    pub fn run_tape(&self) -> Option<Arc<RunTape>> {
        // A race at scale sends totals, not the outcomes a tape is drawn from.
        let run = self.run.as_ref().filter(|r| !r.at_scale())?;
        let rule = strategies::find(
            self.known_for(Some(run.config.race.scenario())),
            &run.config.strategy,
        )?
        .about
        .tape;
        let key = TapeKey {
            run_id: run.run_id.clone(),
            outcomes: run.rows.len(),
            rule,
        };
        Some(self.tape_cache.get_or_build(key, || {
            RunTape::build(
                run.config.race.stock,
                rule,
                run.rows.iter().map(|r| &r.outcome),
            )
        }))
    }

    /// How long the last tape build took, in ms, when the page gave the model a clock.
    pub fn tape_build_ms(&self) -> Option<f64> {
        self.tape_cache.build_ms()
    }

    /// The step session's log, read against the counter after every command; `None` when
    /// step mode is not open.
    pub fn step_log(&self) -> Option<StepLog> {
        self.step
            .as_ref()
            .map(|s| StepLog::read(s, &self.step_trail))
    }

    /// The strategy the "why" panel explains: the visitor's pick, else the run on screen, else
    /// the first one the server features. `None` before `hello`, with nothing run.
    pub fn explained(&self) -> Option<String> {
        self.explained_in(Scenario::Race)
    }

    /// [`Self::explained`] for a page showing `scenario`: the visitor's pick, else the run on
    /// screen when it is of that scenario, else the first strategy of it the server features.
    pub fn explained_in(&self, scenario: Scenario) -> Option<String> {
        self.focus
            .clone()
            .or_else(|| {
                self.run
                    .as_ref()
                    .filter(|r| r.config.race.scenario() == scenario)
                    .map(|r| r.config.strategy.clone())
            })
            .or_else(|| {
                strategies::featured(self.offered(scenario))
                    .next()
                    .map(|s| s.about.name.to_string())
            })
    }
}

/// A run that is over, rebuilt from its outcomes and summary exactly as the live frames built it.
fn finished_run(
    run_id: String,
    config: RunConfig,
    outcomes: Vec<oversold_protocol::BuyerOutcome>,
    summary: RunSummary,
) -> RunModel {
    let mut run = RunModel::new(run_id, config);
    run.push_batch(outcomes);
    if summary.cancelled {
        run.cancel(Some(summary));
    } else {
        run.finish(summary);
    }
    run
}

#[cfg(test)]
mod tests;
