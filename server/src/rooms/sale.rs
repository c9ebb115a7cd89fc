//! A room's sale, run by the process whose presenter opened it: the stock on the shelf, the
//! app servers' connections, the bots, every phone's click as a real buyer of the chosen
//! strategy, outcomes out in batches, each phone's own result, and the summary at the end.
//!
//! The sale's lease (`SET … NX PX`) is what "a sale is open" means to every process: a
//! phone's process checks it before passing a click on, and the lease runs out by itself
//! if this process dies, so the presenter can open the next sale. Clicks reach this task
//! through the room's stream, whichever process the phone is on.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use oversold_protocol::room::{
    BOT_ARRIVALS_MS, BuyResult, ChaosAction, SaleClosed, SaleConfig, SaleOpened,
};
use oversold_protocol::{
    BuyerOutcome, ErrorCode, OutcomeResult, RunConfig, RunRequest, ServerMessage, WireError,
};
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::Host;
use super::chaos;
use super::event::{Event, Stamped, StreamId};
use super::hub::Hub;
use super::sale_redis::SaleRedis;
use crate::engine::{self, Arena, OrderTerms};
use crate::plan::plan;
use crate::store::RedisConn;
use crate::store::rooms as store;
use crate::strategy::Strategy;
use crate::summary::summarize;

/// Clicks one sale takes; later ones are refused (a room has at most its participant cap
/// of phones, each allowed a few clicks a second).
pub const MAX_CLICKS: u32 = 5_000;
/// How often outcomes go out as one `outcomes` frame.
const BATCH_EVERY: Duration = Duration::from_millis(50);
/// After the lease ends, clicks that were already on their way are still answered (with
/// "the sale closed") for this long.
const LATE_CLICKS: Duration = Duration::from_secs(1);
/// The lease outlives the sale's timer by this much, so a sale that is closing is still
/// "open" to everyone until this process ends it; if the process died, the room is free
/// again this long after the timer.
const LEASE_GRACE: Duration = Duration::from_secs(30);
/// Longest the end of a sale waits for buyers still in flight (each has its own deadline).
const MAX_DRAIN: Duration = Duration::from_secs(25);
/// At most one "is the store still there?" probe per this long.
const PROBE_EVERY: Duration = Duration::from_secs(1);

/// The open sale, as every process reads it from the lease.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SaleRecord {
    /// The sale's id (its keys' hash tag, its `outcomes` frames' `run_id`).
    pub sale_id: String,
    /// May a phone buy twice.
    pub allow_repeat: bool,
    /// When it was asked for, µs since the Unix epoch (before its set-up; the sale's clock
    /// starts after, see `store::rooms::sale_clock`).
    pub opened_unix_us: u64,
    /// The server process running it: when that process's heartbeat runs out, another
    /// process closes the sale for everyone ([`super::watch`]).
    #[serde(default)]
    pub holder: String,
}

/// What admission reserved for a sale (its address's share, a run slot, its connections),
/// held as one opaque value: rooms need not know what a run's permits are. Released when
/// the sale ends.
pub struct Admitted(#[allow(dead_code)] Arc<dyn Send + Sync>);

impl Admitted {
    /// Hold `permits` until the sale ends.
    pub fn new(permits: Arc<dyn Send + Sync>) -> Self {
        Admitted(permits)
    }
}

/// µs since the Unix epoch, now.
pub fn unix_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Open a sale in `hub`'s room and start running it. Every check on the presenter and the
/// config has been made; this takes the lease, sets the shelf up and announces the sale.
pub async fn open(
    state: &Arc<dyn Host>,
    hub: Arc<Hub>,
    config: SaleConfig,
    strategy: &'static Strategy,
    admitted: Admitted,
) -> Result<(), WireError> {
    let sale_id = crate::run::new_id("s");
    let run = run_config(&config)?;
    let record = SaleRecord {
        sale_id: sale_id.clone(),
        allow_repeat: config.allow_repeat,
        opened_unix_us: unix_us(),
        holder: state.rooms().process_id.clone(),
    };
    let record = serde_json::to_string(&record).expect("a record serializes");
    let mut conn = state.rooms().conn(&state.backends().redis).await?;
    // Alive before the lease names this process: no other process may take it for dead.
    super::watch::beat_now(state, &mut conn).await?;
    state.rooms().watch(state);
    take_lease(&mut conn, &hub, &config, &record).await?;
    let redis = match sale_redis(state).await {
        Ok(redis) => Arc::new(redis),
        Err(e) => {
            let _ = store::end_sale(&mut conn, &hub.keys, &record).await;
            return Err(e);
        }
    };
    let set_up = Arena::set_up(
        &redis.backends,
        strategy,
        &sale_id,
        config.stock,
        config.app_servers,
    );
    let arena = match set_up.await {
        Ok(arena) => arena,
        Err(e) => {
            let _ = store::end_sale(&mut conn, &hub.keys, &record).await;
            return Err(WireError::new(ErrorCode::RedisUnavailable, e.to_string()));
        }
    };
    let reloads_before = reload_calls(&redis).await.unwrap_or(0);
    // Subscribe before announcing, so no click can come before this task listens.
    let events = hub.subscribe();
    let opened = Instant::now();
    let opened_unix_us = unix_us();
    let announced = SaleOpened {
        room: hub.code.clone(),
        sale_id: sale_id.clone(),
        config: config.clone(),
        run: run.clone(),
        opened_unix_us,
    };
    announce(state, &mut conn, &hub, announced).await?;
    let sale = Sale {
        state: state.clone(),
        hub,
        arena: Arc::new(arena),
        sale_id,
        config,
        run,
        record,
        opened,
        opened_unix_us,
        reloads_before,
        redis,
        chaos_busy: Arc::new(AtomicBool::new(false)),
        _admitted: admitted,
    };
    state.rooms().tracker.spawn(sale.run(events));
    Ok(())
}

/// The sale's own Redis when this server starts them, else the shared one.
async fn sale_redis(state: &Arc<dyn Host>) -> Result<SaleRedis, WireError> {
    if state.rooms().own_sale_redis {
        SaleRedis::start_own().await
    } else {
        Ok(SaleRedis::shared(state.backends()))
    }
}

/// Scripts the sale's Redis had to be sent again so far (see `store::rooms::reload_calls`).
async fn reload_calls(redis: &SaleRedis) -> Option<u64> {
    let mut conn = redis.store().connect().await.ok()?;
    store::reload_calls(&mut conn).await.ok()
}

/// Take the sale's lease (what "a sale is open" means to every process), for the sale's
/// length plus [`LEASE_GRACE`]; refused when another sale holds it.
async fn take_lease(
    conn: &mut RedisConn,
    hub: &Hub,
    config: &SaleConfig,
    record: &str,
) -> Result<(), WireError> {
    let lease = Duration::from_millis(u64::from(config.duration_ms)) + LEASE_GRACE;
    let taken = store::open_sale(conn, &hub.keys, record, millis(lease))
        .await
        .map_err(super::unavailable)?;
    if !taken {
        return Err(WireError::new(
            ErrorCode::SaleState,
            "a sale is already open in this room; close it first",
        ));
    }
    Ok(())
}

/// Tell the whole room the sale is open, and note on the room where its stream starts.
async fn announce(
    state: &Arc<dyn Host>,
    conn: &mut RedisConn,
    hub: &Hub,
    opened: SaleOpened,
) -> Result<(), WireError> {
    let opened_unix_us = opened.opened_unix_us;
    let msg = ServerMessage::SaleOpened(opened);
    let id = state
        .rooms()
        .publish(conn, &hub.keys, &Event::All { msg })
        .await?;
    let _ = store::set_sale_start(conn, &hub.keys, &id, opened_unix_us).await;
    Ok(())
}

/// The run config the shelf, the bots and the summary use: `buyers` is the bots (phones are
/// counted in at the end), their arrivals spread over the sale's first half, at most
/// [`BOT_ARRIVALS_MS`].
fn run_config(config: &SaleConfig) -> Result<RunConfig, WireError> {
    let spread = (config.duration_ms / 2).min(BOT_ARRIVALS_MS);
    let request = RunRequest {
        strategy: Some(config.strategy.clone()),
        stock: Some(config.stock),
        buyers: Some(config.bots.max(1)),
        app_servers: Some(config.app_servers),
        arrival_spread_ms: Some(spread),
        race_window_ms: Some(config.race_window_ms),
        ..RunRequest::default()
    };
    let mut run = request
        .validate(rand::random())
        .map_err(|e| WireError::new(ErrorCode::OutOfRange, e.to_string()))?;
    run.race.buyers = config.bots;
    Ok(run)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A buyer that has finished: who asked (a phone, or `None` for a bot) and how it went.
struct Finished {
    phone: Option<(u32, String)>,
    outcome: BuyerOutcome,
    outage: Option<String>,
}

/// A running sale.
struct Sale {
    state: Arc<dyn Host>,
    hub: Arc<Hub>,
    arena: Arc<Arena>,
    sale_id: String,
    config: SaleConfig,
    run: RunConfig,
    record: String,
    opened: Instant,
    /// When the sale's clock started, µs since the Unix epoch (what `at_us` counts from).
    opened_unix_us: u64,
    reloads_before: u64,
    /// The Redis the stock lives on (the sale's own, when it has one).
    redis: Arc<SaleRedis>,
    /// A chaos action is being applied (one at a time).
    chaos_busy: Arc<AtomicBool>,
    _admitted: Admitted,
}

/// What the sale loop keeps between events.
struct Tally {
    outcomes: Vec<BuyerOutcome>,
    batch: Vec<BuyerOutcome>,
    clicks: u32,
    /// When the lease was ended (the sale is closing).
    closing: Option<Instant>,
    /// Why the sale cannot go on (the store was lost).
    lost: Option<String>,
    last_probe: Option<Instant>,
    last_event: Option<StreamId>,
    /// The server's script reloads when the sale closed.
    reloads_end: Option<u64>,
}

impl Sale {
    async fn run(self, mut events: broadcast::Receiver<Arc<Stamped>>) {
        let stop_bots = self.state.shutdown().child_token();
        let (done, mut finished) = mpsc::unbounded_channel::<Finished>();
        let mut buyers = JoinSet::new();
        self.spawn_bots(&mut buyers, &stop_bots, &done);
        let timer = tokio::time::sleep_until(
            (self.opened + Duration::from_millis(u64::from(self.config.duration_ms))).into(),
        );
        tokio::pin!(timer);
        let mut tick = tokio::time::interval(BATCH_EVERY);
        let mut t = Tally {
            outcomes: Vec::new(),
            batch: Vec::new(),
            clicks: 0,
            closing: None,
            lost: None,
            last_probe: None,
            last_event: None,
            reloads_end: None,
        };
        loop {
            if let Some(since) = t.closing
                && ((buyers.is_empty() && since.elapsed() >= LATE_CLICKS)
                    || since.elapsed() >= MAX_DRAIN)
            {
                break;
            }
            tokio::select! {
                _ = &mut timer, if t.closing.is_none() => self.close(&mut t, &stop_bots).await,
                _ = self.state.shutdown().cancelled(), if t.closing.is_none() => self.close(&mut t, &stop_bots).await,
                ev = events.recv() => match ev {
                    Ok(s) => self.on_event(&s, &mut t, &mut buyers, &done, &stop_bots).await,
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        // Catch up from the stream, page by page: a click must never be
                        // skipped.
                        loop {
                            let page = self.hub.since(t.last_event, false).await.unwrap_or_default();
                            let full = page.len() >= super::hub::READ_BATCH;
                            for s in page {
                                self.on_event(&Arc::new(s), &mut t, &mut buyers, &done, &stop_bots).await;
                            }
                            if !full {
                                break;
                            }
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                },
                Some(f) = finished.recv() => self.on_finished(f, &mut t, &stop_bots).await,
                Some(_) = buyers.join_next() => {}
                _ = tick.tick() => self.flush(&mut t).await,
                // Once closing with no buyers left, wake up to end after LATE_CLICKS.
                _ = tokio::time::sleep(LATE_CLICKS), if t.closing.is_some() => {}
            }
        }
        buyers.shutdown().await;
        while let Ok(f) = finished.try_recv() {
            self.on_finished(f, &mut t, &stop_bots).await;
        }
        self.flush(&mut t).await;
        self.finish(t).await;
    }

    /// The seeded bots, each waiting for its arrival time (or the sale's end).
    fn spawn_bots(
        &self,
        buyers: &mut JoinSet<()>,
        stop: &CancellationToken,
        done: &mpsc::UnboundedSender<Finished>,
    ) {
        for p in plan(&self.run.race) {
            buyers.spawn(bot(
                self.arena.clone(),
                p.buyer,
                p.app_server,
                self.line(p.qty, p.ticket),
                self.opened,
                self.opened + p.arrival,
                stop.clone(),
                done.clone(),
            ));
        }
    }

    fn line(&self, qty: u32, ticket: u64) -> OrderTerms {
        OrderTerms {
            qty,
            race_window: Duration::from_millis(u64::from(self.config.race_window_ms)),
            ticket,
            by_hand: false,
        }
    }

    async fn on_event(
        &self,
        s: &Stamped,
        t: &mut Tally,
        buyers: &mut JoinSet<()>,
        done: &mpsc::UnboundedSender<Finished>,
        stop_bots: &CancellationToken,
    ) {
        if t.last_event.is_some_and(|last| s.id <= last) {
            return; // seen already (a catch-up overlaps the live feed)
        }
        t.last_event = Some(s.id);
        match &s.event {
            Event::Click {
                sale_id,
                participant,
                request_id,
            } if *sale_id == self.sale_id => {
                if t.closing.is_some() || t.clicks >= MAX_CLICKS {
                    let why = if t.closing.is_some() {
                        "the sale closed before your click reached it"
                    } else {
                        "this sale has taken all the clicks it can"
                    };
                    self.refuse(*participant, request_id, why).await;
                    return;
                }
                t.clicks += 1;
                let buyer = self.run.race.buyers + t.clicks;
                let line = self.line(1, rand::random());
                let (arena, done) = (self.arena.clone(), done.clone());
                let phone = (*participant, request_id.clone());
                let (app_server, opened) = (participant % self.config.app_servers, self.opened);
                buyers.spawn(async move {
                    let (outcome, outage) =
                        engine::buy_once(&arena, buyer, app_server, line, opened).await;
                    let _ = done.send(Finished {
                        phone: Some(phone),
                        outcome,
                        outage,
                    });
                });
            }
            Event::Close { sale_id } if *sale_id == self.sale_id && t.closing.is_none() => {
                self.close(t, stop_bots).await;
            }
            Event::Chaos {
                sale_id,
                action,
                pressed_unix_us,
            } if *sale_id == self.sale_id => self.chaos(*action, *pressed_unix_us),
            _ => {}
        }
    }

    /// Apply a chaos press to the sale's own Redis in the background (the sale goes on
    /// meanwhile), then announce what it did, placed on the sale's timeline.
    fn chaos(&self, action: ChaosAction, pressed_unix_us: u64) {
        let at_us = Some(pressed_unix_us.saturating_sub(self.opened_unix_us));
        let (state, keys) = (self.state.clone(), self.hub.keys.clone());
        let (code, sale_id) = (self.hub.code.clone(), self.sale_id.clone());
        if self.chaos_busy.swap(true, Ordering::AcqRel) {
            let detail = format!(
                "{} was not applied: the previous chaos action is still running",
                action.as_str()
            );
            let msg = chaos::applied(&code, action, Some(sale_id), at_us, 0, detail);
            self.state
                .rooms()
                .tracker
                .spawn(async move { super::announce(&state, &keys, &Event::All { msg }).await });
            return;
        }
        let (redis, busy) = (self.redis.clone(), self.chaos_busy.clone());
        self.state.rooms().tracker.spawn(async move {
            let started = Instant::now();
            let detail = match chaos::apply(&redis, &sale_id, action).await {
                Ok(detail) => detail,
                Err(e) => format!("{} failed: {}", action.as_str(), e.message),
            };
            busy.store(false, Ordering::Release);
            let took_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            tracing::info!(room = %code, action = action.as_str(), %detail, "chaos");
            let msg = chaos::applied(&code, action, Some(sale_id), at_us, took_us, detail);
            super::announce(&state, &keys, &Event::All { msg }).await;
        });
    }

    /// End the lease (no new clicks get through) and stop bots that have not arrived.
    async fn close(&self, t: &mut Tally, stop_bots: &CancellationToken) {
        stop_bots.cancel();
        t.closing = Some(Instant::now());
        // Counted before the lease's own compare-and-delete script, which may itself have
        // to be sent again after a flush (when the sale shares the Redis): that reload is
        // ours, not the strategy's.
        t.reloads_end = reload_calls(&self.redis).await;
        if let Ok(mut conn) = self.state.rooms().conn(&self.state.backends().redis).await {
            let _ = store::end_sale(&mut conn, &self.hub.keys, &self.record).await;
        }
    }

    async fn on_finished(&self, f: Finished, t: &mut Tally, stop_bots: &CancellationToken) {
        if let Some(why) = &f.outage
            && t.lost.is_none()
            && t.last_probe.is_none_or(|p| p.elapsed() >= PROBE_EVERY)
        {
            t.last_probe = Some(Instant::now());
            if let Some(gone) = self.arena.lost().await {
                tracing::warn!(sale = %self.sale_id, reason = %gone, "the sale cannot go on");
                t.lost = Some(format!("{gone}; the first buyer to notice: {why}"));
                if t.closing.is_none() {
                    self.close(t, stop_bots).await;
                }
            }
        }
        if let Some((to, request_id)) = f.phone {
            let o = &f.outcome;
            let unit = (o.result == OutcomeResult::Reserved)
                .then(|| o.stock_after.map(|s| s + i64::from(o.qty)))
                .flatten();
            let msg = ServerMessage::BuyResult(BuyResult {
                room: self.hub.code.clone(),
                request_id,
                sale_id: self.sale_id.clone(),
                result: o.result,
                unit,
                outcome: Some(o.clone()),
                message: o.error.clone(),
            });
            self.answer(to, msg).await;
        }
        t.batch.push(f.outcome.clone());
        t.outcomes.push(f.outcome);
    }

    async fn refuse(&self, to: u32, request_id: &str, why: &str) {
        let msg = ServerMessage::BuyResult(BuyResult {
            room: self.hub.code.clone(),
            request_id: request_id.to_string(),
            sale_id: self.sale_id.clone(),
            result: OutcomeResult::Error,
            unit: None,
            outcome: None,
            message: Some(why.to_string()),
        });
        self.answer(to, msg).await;
    }

    /// Send phone `to` its `buy_result`, and keep it for a repeat of the same request.
    async fn answer(&self, to: u32, msg: ServerMessage) {
        if let ServerMessage::BuyResult(r) = &msg
            && let Ok(mut conn) = self.state.rooms().conn(&self.state.backends().redis).await
        {
            let field = super::seat::request_field(to, &r.request_id);
            let json = serde_json::to_string(&msg).expect("a frame serializes");
            let _ =
                store::keep_answer(&mut conn, &self.hub.keys, &self.sale_id, &field, &json).await;
        }
        self.send(Event::One { to, msg }).await;
    }

    async fn flush(&self, t: &mut Tally) {
        if t.batch.is_empty() {
            return;
        }
        let outcomes = std::mem::take(&mut t.batch);
        let msg = ServerMessage::Outcomes {
            run_id: self.sale_id.clone(),
            outcomes,
        };
        self.send(Event::All { msg }).await;
    }

    /// Append to the room's stream. A failure is logged: the screens miss this event, but
    /// the sale's own books (and the summary) still have it.
    async fn send(&self, event: Event) {
        super::announce(&self.state, &self.hub.keys, &event).await;
    }

    /// Read the stock back, clear the shelf, send the summary.
    async fn finish(self, t: Tally) {
        let Sale {
            state,
            hub,
            arena,
            sale_id,
            mut run,
            redis,
            ..
        } = self;
        let Some(arena) = Arc::into_inner(arena) else {
            tracing::error!(sale = %sale_id, "a buyer still holds the sale's arena");
            return;
        };
        let final_stock = arena.finish(&redis.backends, &sale_id).await;
        let reloads = t
            .reloads_end
            .unwrap_or(0)
            .saturating_sub(self.reloads_before);
        if let Ok(mut conn) = state.rooms().conn(&state.backends().redis).await {
            let _ = store::touch(&mut conn, &hub.keys, state.rooms().ttl_s()).await;
        }
        run.race.buyers = u32::try_from(t.outcomes.len()).unwrap_or(u32::MAX);
        let (summary, error) = match (t.lost, final_stock) {
            (Some(why), _) => (None, Some(why)),
            (None, Err(e)) => (None, Some(e.to_string())),
            (None, Ok(stock)) => (Some(summarize(&run, &t.outcomes, stock)), None),
        };
        let msg = ServerMessage::SaleClosed(SaleClosed {
            room: hub.code.clone(),
            sale_id: sale_id.clone(),
            summary,
            error,
            reloads,
        });
        match state.rooms().conn(&state.backends().redis).await {
            Ok(mut conn) => {
                if let Err(e) = state
                    .rooms()
                    .publish(&mut conn, &hub.keys, &Event::All { msg })
                    .await
                {
                    tracing::warn!(sale = %sale_id, error = %e.message, "sale_closed could not be sent");
                }
            }
            Err(e) => {
                tracing::warn!(sale = %sale_id, error = %e.message, "sale_closed could not be sent")
            }
        }
    }
}

/// A simulated buyer: arrives on its schedule unless the sale closes first.
#[allow(clippy::too_many_arguments)] // one spawn site; a struct would only rename them
async fn bot(
    arena: Arc<Arena>,
    buyer: u32,
    app_server: u32,
    line: OrderTerms,
    opened: Instant,
    arrives: Instant,
    stop: CancellationToken,
    done: mpsc::UnboundedSender<Finished>,
) {
    tokio::select! {
        biased;
        _ = stop.cancelled() => return,
        _ = tokio::time::sleep_until(arrives.into()) => {}
    }
    let (outcome, outage) = engine::buy_once(&arena, buyer, app_server, line, opened).await;
    let _ = done.send(Finished {
        phone: None,
        outcome,
        outage,
    });
}
