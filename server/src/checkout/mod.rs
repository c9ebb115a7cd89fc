//! Running one checkout: the race's crowd, carried past the click. Each buyer reserves,
//! then pays and confirms, or gives the units back, or its app server dies; holds expire
//! and a reaper returns them; a ledger settles the orders; the shelf is reconciled live.
//!
//! # Layout
//! - this file: [`run`]: set up (the available count, the app servers' connections, the
//!   ledger), the loop that releases the buyers and, while they check out, sends live
//!   [`Reconciliation`] numbers, answers `reconcile` and pauses Redis for an outage; then
//!   the wait for the last hold, the read-back, the summary, and clean-up.
//! - [`crowd`]: who each buyer is and what it will do (seeded).
//! - [`clock`]: the shop clock.
//! - [`buyer`]: one buyer's story.
//! - [`reaper`]: returns expired holds in small batches.
//! - [`listener`]: `holds_notify`'s instead: returns each hold Redis says it expired, on
//!   a Redis of the run's own (keyspace events are a server-wide setting); loses the holds
//!   that expire while its subscriber restarts, and is late by however long Redis takes.
//! - [`probe`]: is Redis gone (the run fails within seconds) or only slow (a reservation
//!   timed out, in doubt)?
//! - [`ledger`]: PostgreSQL, or the Redis fallback.
//! - [`tally`]: the summary.
//!
//! # Lifecycle invariants
//! For every strategy, at every instant: `stock = available + held + sold + leaked`.
//! A hold is settled once: confirmed, released, or expired and reaped, whichever comes
//! first; the others find it gone. A run ends when every story has ended and (unless
//! `no_wait_expiry`) every hold has been settled, so the holds strategies that keep a reaper
//! end with `leaked = 0` however many app servers crashed. `holds_notify` ends with exactly
//! the units of the holds whose `expired` event nobody heard leaked (`notify.units_lost`).
//!
//! A run whose Redis is gone (killed, restarted empty) ends with
//! [`RunError::StoreLost`] as soon as a buyer's broken connection and a failed probe show
//! it: no more arrivals, no reaper, no summary with numbers that were never read.

use std::sync::Arc;
use std::time::{Duration, Instant};

use oversold_protocol::{
    BuyerOutcome, CheckoutConfig, ReconcileReport, Reconciliation, RunConfig, Scenario,
};
use tokio::sync::{mpsc, watch};
use tokio::task::{JoinError, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::backends::Backends;
use crate::gate::StartGate;
use crate::private_redis::{ExtraConfig, PrivateRedis};
use crate::run::{Control, Event, RunError, RunReport, Watchers, tell};
use crate::shelf::ShelfError;
use crate::store::holds::Counters;
use crate::store::notify::{self, ExpiredEvents};
use crate::store::{CheckoutKeys, RedisConn, Store, holds, scripts, stock};
use crate::strategy::checkout::{CheckoutStrategy, Expiry};

pub mod buyer;
pub mod clock;
pub mod crowd;
pub mod ledger;
pub mod listener;
pub mod probe;
pub mod reaper;
pub mod tally;

use buyer::{Buyer, Shop};
use clock::{ShopClock, micros};
use ledger::{Ledger, LedgerTotals};
use listener::{ExpiryReport, Listener, Restart};
use probe::{LossReports, LossWatch, Probe};
use reaper::Reaper;
use tally::Closing;

/// How often live numbers go out while a run has someone watching.
pub const SNAPSHOT_EVERY: Duration = Duration::from_millis(250);
/// Longest the end-of-crowd barrier waits for one app server's connection.
const IN_FLIGHT_WAIT: Duration = Duration::from_secs(2);
/// Extra real time allowed for the last hold to be reaped once it is due.
const DRAIN_SLACK: Duration = Duration::from_secs(5);

/// The knobs of a checkout config, or the error saying it is another scenario's.
pub fn knobs<'a>(
    strategy: &CheckoutStrategy,
    config: &'a RunConfig,
) -> Result<&'a CheckoutConfig, RunError> {
    config
        .race
        .checkout()
        .ok_or_else(|| RunError::WrongScenario {
            strategy: strategy.name().to_string(),
            expected: Scenario::Checkout,
            got: config.race.scenario(),
        })
}

/// Run one checkout to its end (or cancellation). `config` must be validated and name a
/// checkout; `outage_ms > 0` needs a Redis this process started.
pub async fn run(
    backends: &Backends,
    strategy: &'static CheckoutStrategy,
    config: &RunConfig,
    run_id: &str,
    watchers: Watchers<'_>,
    cancel: CancellationToken,
) -> Result<RunReport, RunError> {
    let knobs = knobs(strategy, config)?.clone();
    // `holds_notify` runs on a Redis of its own; it lives until this function returns.
    let own = own_redis(strategy, backends).await?;
    let backends = own.as_ref().map_or(backends, |(_, b)| b);
    if knobs.outage_ms > 0 && !backends.owns_redis {
        return Err(RunError::Setup(ShelfError::OutageNotAllowed));
    }
    let (shop, mut admin) = set_up(backends, strategy, config, knobs, run_id)
        .await
        .map_err(RunError::Setup)?;
    let shop = Arc::new(shop);
    let race = Race {
        shop: shop.clone(),
        admin: admin.clone(),
        config,
        watchers,
        reconciled: 0,
    };
    let ran = race.run(backends, run_id, cancel).await;
    // The buyers' requests, without the end-of-crowd barrier's reads (see `settle_in_flight`).
    let barrier = ran.as_ref().map_or(0, |r| r.barrier_requests);
    let redis_requests = shop.fleet.iter().map(RedisConn::requests_sent).sum::<u64>() - barrier;
    // The race part fails only before any buyer is released (opening the reaper).
    let closing = match ran {
        Ok(ran) => close_or_lost(&shop, &mut admin, ran, config.race.buyers).await,
        Err(e) => Err(RunError::Setup(e)),
    };
    // Clean up whatever happened; keys expire by TTL if this fails too.
    if let Err(e) = holds::remove_run(&mut admin, &shop.keys).await {
        tracing::warn!(run_id, error = %e, "could not delete the run's keys; they expire on their own");
    }
    if let Err(e) = shop.ledger.clear().await {
        tracing::warn!(run_id, error = %e, "could not delete the run's ledger rows");
    }
    let (closing, outcomes, watchers) = closing?;
    tell(&watchers.events, Event::Snapshot(closing.snapshot(config)));
    Ok(RunReport {
        run_id: run_id.to_string(),
        summary: tally::summarize(config, &outcomes, &closing.closing),
        outcomes,
        redis_requests,
    })
}

/// A `redis-server` of the run's own, and the stores to use with it, when the strategy's
/// expired holds come back by keyspace notification: `notify-keyspace-events` is a
/// server-wide setting, so it is set on a server nobody else uses (at start, never with
/// `CONFIG SET`), and the run (which owns it) may pause it for an outage.
async fn own_redis(
    strategy: &CheckoutStrategy,
    backends: &Backends,
) -> Result<Option<(PrivateRedis, Backends)>, RunError> {
    if !(strategy.buyer.keeps_holds() && strategy.buyer.expiry() == Expiry::Notifications) {
        return Ok(None);
    }
    let own_redis = |e: String| RunError::Setup(ShelfError::OwnRedis(e));
    let extra = ExtraConfig {
        // `E`: keyevent channels; `x`: expired events. Nothing else is published.
        args: vec!["--notify-keyspace-events".into(), "Ex".into()],
        ..ExtraConfig::default()
    };
    let redis = tokio::task::spawn_blocking(move || PrivateRedis::start_with(extra))
        .await
        .map_err(|e| own_redis(e.to_string()))?
        .map_err(|e| own_redis(e.to_string()))?;
    let store = Store::open(&redis.url()).map_err(|e| RunError::Setup(e.into()))?;
    let own = Backends {
        redis: store,
        postgres: backends.postgres.clone(),
        owns_redis: true,
        lock_masters: backends.lock_masters.clone(),
    };
    Ok(Some((redis, own)))
}

/// Put the stock on the shelf, load the scripts, open the app servers and the ledger.
async fn set_up(
    backends: &Backends,
    strategy: &'static CheckoutStrategy,
    config: &RunConfig,
    knobs: CheckoutConfig,
    run_id: &str,
) -> Result<(Shop, RedisConn), ShelfError> {
    let mut admin = backends
        .redis
        .connect_named(&format!("oversold:{run_id}:admin"))
        .await?;
    let keys = CheckoutKeys::new(run_id);
    let opened = async {
        stock::init(&mut admin, keys.run(), config.race.stock).await?;
        for name in strategy.about.scripts.iter() {
            if let Some(file) = scripts::by_name(name) {
                scripts::preload(&mut admin, file).await?;
            }
        }
        let fleet = backends
            .redis
            .connect_fleet(run_id, config.race.app_servers)
            .await?;
        let ledger = Ledger::open(backends, run_id, &keys, &admin).await?;
        Ok::<_, ShelfError>((fleet, ledger))
    }
    .await;
    match opened {
        Ok((fleet, ledger)) => Ok((
            Shop {
                strategy,
                fleet,
                ledger,
                knobs,
                race_window: Duration::from_millis(u64::from(config.race.race_window_ms)),
                probe: Probe::new(backends.redis.clone(), keys.run().clone()),
                keys,
            },
            admin,
        )),
        Err(e) => {
            let _ = holds::remove_run(&mut admin, &keys).await;
            Err(e)
        }
    }
}

/// The run between set-up and read-back.
struct Race<'a, 'w> {
    shop: Arc<Shop>,
    admin: RedisConn,
    config: &'a RunConfig,
    watchers: Watchers<'w>,
    reconciled: i64,
}

/// What the race part of a run hands to the read-back.
struct Ran<'w> {
    outcomes: Vec<BuyerOutcome>,
    /// Requests the end-of-crowd barrier sent on the app servers' connections.
    barrier_requests: u64,
    reaper: ExpiryReport,
    reconciled: i64,
    clock: ShopClock,
    watchers: Watchers<'w>,
    /// Why Redis was given up on mid-run, if it was.
    lost: Option<String>,
}

/// The end of a run, and the counters for its last live frame.
struct Closed {
    closing: Closing,
    counters: Counters,
}

impl Closed {
    fn snapshot(&self, config: &RunConfig) -> Reconciliation {
        let c = &self.closing;
        let at = (c.shop_ms, c.real_ms);
        reconciliation(
            config.race.stock,
            at,
            c.final_stock,
            &self.counters,
            &c.ledger,
        )
    }
}

/// The shelf at one instant: `stock = available + held + sold + settling + leaked`, where
/// `sold` is the ledger's and `settling` the units Redis counts as confirmed that the
/// ledger does not have yet.
fn reconciliation(
    stock: u32,
    (shop_ms, real_ms): (u64, u64),
    available: i64,
    counters: &Counters,
    ledger: &LedgerTotals,
) -> Reconciliation {
    let sold = ledger.confirmed_units;
    let settling = (counters.sold - sold as i64).max(0);
    Reconciliation {
        shop_ms,
        real_ms,
        stock,
        available,
        held: counters.held,
        holds: u32::try_from(counters.holds).unwrap_or(u32::MAX),
        sold,
        settling,
        leaked: i64::from(stock) - available - counters.held - sold as i64 - settling,
        backorders: ledger.backorder_units,
    }
}

/// What returns a run's expired holds, opened before the gate.
enum ExpiryConn {
    /// The strategy keeps no holds.
    Nothing,
    /// The reaper's connection.
    Reaper(RedisConn),
    /// The listener's: the run's Redis (to subscribe again), its connection, and the
    /// subscription.
    Listener(Store, RedisConn, ExpiredEvents),
}

/// The run's reaper (or listener) task, when its strategy keeps holds, and how the race loop
/// steers it.
struct ReaperTask {
    /// The reaper or the listener; empty when the strategy keeps no holds.
    task: JoinSet<ExpiryReport>,
    /// No reaper at all: the loop never waits for one.
    absent: bool,
    /// Set once every buyer is done: return what is still held, then stop.
    drain: watch::Sender<bool>,
    /// Stops the reaper at once.
    stop: CancellationToken,
    /// Its report, once it has ended.
    report: Option<ExpiryReport>,
}

impl ReaperTask {
    /// True while the loop still waits for the reaper to end.
    fn running(&self) -> bool {
        !self.absent && self.report.is_none()
    }

    /// Every buyer is done: the reaper drains what is still held, unless nobody will wait
    /// for it.
    fn buyers_done(&self, wait_for_holds: bool) {
        if wait_for_holds {
            self.drain.send_replace(true);
        } else {
            self.stop.cancel();
        }
    }

    /// The reaper ended: keep its report (an empty one if its task failed).
    fn ended(&mut self, done: Option<Result<ExpiryReport, JoinError>>) {
        self.report = Some(match done {
            Some(Ok(report)) => report,
            _ => ExpiryReport::default(),
        });
    }
}

/// Keep a joined buyer's outcome; `false` once every buyer has been joined.
fn keep_outcome(
    outcomes: &mut Vec<BuyerOutcome>,
    joined: Option<Result<Option<BuyerOutcome>, JoinError>>,
) -> bool {
    match joined {
        Some(Ok(Some(o))) => outcomes.push(o),
        Some(Ok(None)) => {} // skipped: the run stopped first
        Some(Err(e)) => tracing::error!(error = %e, "a checkout buyer task panicked"),
        None => return false,
    }
    true
}

/// The next request from whoever watches, or never when nobody can send one.
async fn next_request(control: &mut Option<&mut mpsc::Receiver<Control>>) -> Option<Control> {
    match control.as_mut() {
        Some(c) => c.recv().await,
        None => std::future::pending().await,
    }
}

impl<'w> Race<'_, 'w> {
    /// Release the crowd, run the reaper beside it, and serve snapshots, reconcile requests
    /// and the outage until the last buyer is done and the reaper has drained; or, once a
    /// buyer's broken connection shows Redis is gone, stop releasing buyers and the reaper
    /// and wait only for the stories already under way (each ends at its next request, which
    /// fails at once on a broken connection, or at its next wait).
    ///
    /// The loop is one `tokio::select!` on purpose: it shows in one place everything a
    /// running checkout waits for.
    async fn run(
        mut self,
        backends: &Backends,
        run_id: &str,
        cancel: CancellationToken,
    ) -> Result<Ran<'w>, ShelfError> {
        let knobs = self.shop.knobs.clone();
        // Everything is opened before the first buyer is released.
        let reaper_conn = self.open_expiry(backends, run_id).await?;
        let stop = cancel.child_token();
        let (losses, mut loss) = LossWatch::new(stop.clone());
        let (mut buyers, clock) = self.release_crowd(&stop, losses.clone()).await;
        let opened = clock.opened();
        let mut reaper = self.start_reaper(reaper_conn, clock, &stop, losses);
        let events = self.watchers.events.clone();
        let mut outage = (knobs.outage_ms > 0).then(|| clock.instant_at(knobs.outage_at_ms.into()));
        let mut snapshots =
            tokio::time::interval_at((opened + SNAPSHOT_EVERY).into(), SNAPSHOT_EVERY);
        let mut control = self.watchers.control.take();
        let mut outcomes = Vec::with_capacity(self.config.race.buyers as usize);
        let mut buying = true;
        let mut barrier_requests = 0;
        while buying || reaper.running() {
            tokio::select! {
                joined = buyers.join_next(), if buying => {
                    buying = keep_outcome(&mut outcomes, joined);
                    if !buying {
                        barrier_requests = self.crowd_done(&reaper, &stop, loss.lost()).await;
                    }
                }
                done = reaper.task.join_next(), if reaper.running() => reaper.ended(done),
                why = loss.next() => loss.heard(why, &self.shop.fleet, &self.shop.probe).await,
                _ = snapshots.tick(), if events.is_some() && loss.lost().is_none() => {
                    if let Some(r) = self.snapshot(clock).await {
                        tell(&events, Event::Snapshot(r));
                    }
                }
                Some(Control::Reconcile) = next_request(&mut control) => {
                    let event = self.reconcile(clock).await;
                    tell(&events, event);
                }
                _ = tokio::time::sleep_until(outage.unwrap_or(opened).into()), if outage.is_some() => {
                    outage = None;
                    self.pause(&clock, &knobs).await;
                }
            }
        }
        self.watchers.control = control;
        Ok(Ran {
            outcomes,
            barrier_requests,
            reaper: reaper.report.unwrap_or_default(),
            reconciled: self.reconciled,
            clock,
            watchers: self.watchers,
            lost: loss.into_lost(),
        })
    }

    /// Every buyer is done: wait for what they sent to reach Redis (not on a Redis that is
    /// gone), and tell the reaper; returns the requests the wait took.
    async fn crowd_done(
        &self,
        reaper: &ReaperTask,
        stop: &CancellationToken,
        lost: Option<&str>,
    ) -> u64 {
        let barrier = match lost {
            None => self.settle_in_flight().await,
            Some(_) => 0,
        };
        reaper.buyers_done(!(self.shop.knobs.no_wait_expiry || stop.is_cancelled()));
        barrier
    }

    /// The reaper's own connection, or the listener's and its subscription, when the
    /// strategy keeps holds.
    async fn open_expiry(
        &self,
        backends: &Backends,
        run_id: &str,
    ) -> Result<ExpiryConn, ShelfError> {
        let buyer = self.shop.strategy.buyer;
        if !buyer.keeps_holds() {
            return Ok(ExpiryConn::Nothing);
        }
        let redis = &backends.redis;
        Ok(match buyer.expiry() {
            Expiry::Reaper => ExpiryConn::Reaper(
                redis
                    .connect_named(&format!("oversold:{run_id}:reaper"))
                    .await?,
            ),
            Expiry::Notifications => {
                let conn = redis
                    .connect_named(&format!("oversold:{run_id}:listener"))
                    .await?;
                let events = ExpiredEvents::subscribe(redis).await?;
                ExpiryConn::Listener(redis.clone(), conn, events)
            }
        })
    }

    /// Start the reaper (or the listener) beside the buyers on `conn`, if there is one (the
    /// strategy keeps holds); it reports a broken connection on `losses`.
    fn start_reaper(
        &self,
        conn: ExpiryConn,
        clock: ShopClock,
        stop: &CancellationToken,
        losses: LossReports,
    ) -> ReaperTask {
        let (drain, draining) = watch::channel(false);
        let stop_reaper = stop.child_token();
        let mut task = JoinSet::new();
        match conn {
            ExpiryConn::Nothing => {}
            ExpiryConn::Reaper(conn) => {
                let reaper = self.reaper(conn, clock, draining, stop_reaper.clone(), losses);
                task.spawn(async move {
                    ExpiryReport {
                        reaper: reaper.run().await,
                        listener: None,
                    }
                });
            }
            ExpiryConn::Listener(store, conn, events) => {
                let listener = self.listener(store, conn, clock, draining, &stop_reaper, losses);
                task.spawn(async move {
                    ExpiryReport {
                        listener: Some(listener.run(events).await),
                        ..ExpiryReport::default()
                    }
                });
            }
        }
        ReaperTask {
            absent: task.is_empty(),
            task,
            drain,
            stop: stop_reaper,
            report: None,
        }
    }

    /// Wait until every request the buyers sent has reached Redis, and return how many
    /// requests that took.
    ///
    /// A buyer that stopped waiting for a reply (its deadline passed under load, or its app
    /// server "crashed") ends its story, but its request may still be on the wire and land
    /// later, making a hold after the reaper's last sweep: the run would then end with units
    /// held that nobody will ever return. Redis answers one connection's requests in order,
    /// so one read of the run's counters per app-server connection (its keys share the run's
    /// slot, so on a cluster it goes to the same node) is answered only after everything sent
    /// before it. Bounded: a Redis that does not answer in time is the outage's problem.
    async fn settle_in_flight(&self) -> u64 {
        let reads = self.shop.fleet.iter().map(|conn| {
            let (mut conn, keys) = (conn.clone(), &self.shop.keys);
            async move {
                let before = conn.requests_sent();
                let _ =
                    tokio::time::timeout(IN_FLIGHT_WAIT, holds::counters(&mut conn, keys)).await;
                conn.requests_sent() - before
            }
        });
        futures_util::future::join_all(reads)
            .await
            .into_iter()
            .sum()
    }

    /// One task per buyer, all waiting at a gate, then the gate opened: the shop clock starts
    /// at that instant.
    async fn release_crowd(
        &self,
        stop: &CancellationToken,
        losses: LossReports,
    ) -> (JoinSet<Option<BuyerOutcome>>, ShopClock) {
        let (gate, turn) = StartGate::new();
        let mut buyers = JoinSet::new();
        for shopper in crowd::crowd(&self.config.race, &self.shop.knobs) {
            let buyer = Buyer {
                shopper,
                shop: self.shop.clone(),
                stop: stop.clone(),
                sink: self.watchers.events.clone(),
                losses: losses.clone(),
            };
            buyers.spawn(buyer.run(turn.clone()));
        }
        let opened = gate.open().await;
        let clock = ShopClock::start(opened, self.shop.knobs.time_scale);
        (buyers, clock)
    }

    /// The reaper for this run: it ticks a few times per hold lifetime, and once told to drain
    /// it keeps going until the last hold has expired and been returned.
    fn reaper(
        &self,
        conn: RedisConn,
        clock: ShopClock,
        draining: watch::Receiver<bool>,
        stop: CancellationToken,
        losses: LossReports,
    ) -> Reaper {
        let knobs = &self.shop.knobs;
        let hold_real = clock.real(u64::from(knobs.hold_ttl_ms));
        Reaper {
            conn,
            keys: self.shop.keys.clone(),
            clock,
            every: reaper::tick_for(hold_real),
            draining,
            drain_for: drain_time(&clock, knobs),
            stop,
            losses: Some(losses),
        }
    }

    /// The listener for this run: it restarts its subscriber at the seeded moment, and once
    /// told to drain it waits at most a hold's life (plus an outage) and [`listener::GRACE`].
    fn listener(
        &self,
        store: Store,
        conn: RedisConn,
        clock: ShopClock,
        draining: watch::Receiver<bool>,
        stop: &CancellationToken,
        losses: LossReports,
    ) -> Listener {
        let knobs = &self.shop.knobs;
        let hold_real = clock.real(u64::from(knobs.hold_ttl_ms));
        Listener {
            store,
            conn,
            keys: self.shop.keys.clone(),
            clock,
            restart: Restart::seeded(self.config.race.seed, hold_real),
            draining,
            drain_for: hold_real + clock.real(u64::from(knobs.outage_ms)) + listener::GRACE,
            stop: stop.clone(),
            losses: Some(losses),
        }
    }

    /// The shelf now, reconciled (`None` if Redis or the ledger did not answer).
    async fn snapshot(&mut self, clock: ShopClock) -> Option<Reconciliation> {
        let now = Instant::now();
        let counters = holds::counters(&mut self.admin, &self.shop.keys)
            .await
            .ok()?;
        let ledger = self.shop.ledger.totals().await.ok()?;
        let at = (clock.shop_ms(now), clock.real_us(now) / 1_000);
        let stock = self.config.race.stock;
        Some(reconciliation(
            stock,
            at,
            counters.available?,
            &counters,
            &ledger,
        ))
    }

    /// The guide's correction: available = stock - sold - held, by one script.
    async fn reconcile(&mut self, clock: ShopClock) -> Event {
        let ledger = match self.shop.ledger.totals().await {
            Ok(t) => t,
            Err(e) => return Event::ReconcileFailed(format!("the ledger did not answer: {e}")),
        };
        let stock = self.config.race.stock;
        let keys = &self.shop.keys;
        match holds::reconcile(&mut self.admin, keys, stock, ledger.confirmed_units).await {
            Ok(c) => {
                let r = c.reply;
                self.reconciled += r.after - r.before;
                let now = Instant::now();
                // The shelf right after; if it cannot be read, what the script itself saw.
                let after = self.snapshot(clock).await.unwrap_or_else(|| {
                    let seen = Counters {
                        available: Some(r.after),
                        held: r.held,
                        sold: r.sold as i64,
                        holds: 0,
                    };
                    let at = (clock.shop_ms(now), clock.real_us(now) / 1_000);
                    reconciliation(stock, at, r.after, &seen, &ledger)
                });
                Event::Reconciled(ReconcileReport {
                    available_before: r.before,
                    available_after: r.after,
                    fixed: r.after - r.before,
                    sold: r.sold,
                    held: r.held,
                    after,
                })
            }
            Err(f) => Event::ReconcileFailed(f.error.short()),
        }
    }

    /// Pause our own Redis for the outage (set-up refused a Redis we do not own).
    async fn pause(&mut self, clock: &ShopClock, knobs: &CheckoutConfig) {
        let real = clock.real(knobs.outage_ms.into());
        tracing::info!(
            real_ms = real.as_millis() as u64,
            "outage: pausing our own Redis"
        );
        if let Err(e) = holds::pause(&mut self.admin, micros(real) / 1_000).await {
            tracing::warn!(error = %e, "could not pause Redis for the outage");
        }
    }
}

/// How long to wait for the last hold once every buyer is done: every reservation has
/// been made by then, so every hold is due within a hold's life (plus an outage), and slack.
fn drain_time(clock: &ShopClock, knobs: &CheckoutConfig) -> Duration {
    clock.real(u64::from(knobs.hold_ttl_ms)) + clock.real(u64::from(knobs.outage_ms)) + DRAIN_SLACK
}

/// The read-back of a run that kept its Redis; of one that lost it, why (rather than what
/// a read of a dead Redis would say).
async fn close_or_lost<'w>(
    shop: &Shop,
    admin: &mut RedisConn,
    mut ran: Ran<'w>,
    buyers: u32,
) -> Result<(Closed, Vec<BuyerOutcome>, Watchers<'w>), RunError> {
    match ran.lost.take() {
        Some(why) => Err(RunError::StoreLost {
            why,
            ran: ran.outcomes.len(),
            buyers,
        }),
        None => close(shop, admin, ran).await.map_err(RunError::ReadBack),
    }
}

/// Read the shelf and the ledger back, and tally.
async fn close<'w>(
    shop: &Shop,
    admin: &mut RedisConn,
    ran: Ran<'w>,
) -> Result<(Closed, Vec<BuyerOutcome>, Watchers<'w>), ShelfError> {
    let now = Instant::now();
    let mut counters = holds::counters(admin, &shop.keys).await?;
    let available = counters
        .available
        .ok_or_else(|| ShelfError::Vanished(shop.keys.run().stock_key().to_string()))?;
    // A shadow whose hold key is gone is a release nobody heard: not held, stranded.
    let shadows = notify::shadows(admin, &shop.keys).await?;
    let held_units = holds::units_in_holds(admin, &shop.keys).await? + shadows.live_units;
    // The last frame counts the holds themselves, as the summary does: the held counter
    // still counts a stranded hold's units, which are leaked.
    counters.held = held_units as i64;
    counters.holds = counters.holds.saturating_sub(shadows.stranded_holds);
    let ledger = shop.ledger.read_all().await?;
    let closing = Closing {
        final_stock: available,
        held_units,
        ledger,
        ledger_kind: shop.ledger.kind(),
        expired_units: ran.reaper.units(),
        reaper: (ran.reaper.reaper)
            .stats_with_lateness(&ran.clock, &tally::crashed_due(&ran.outcomes)),
        notify: tally::notify_stats(ran.reaper.listener.as_ref(), &shadows),
        reconciled_units: ran.reconciled,
        shop_ms: ran.clock.shop_ms(now),
        real_ms: ran.clock.real_us(now) / 1_000,
    };
    Ok((Closed { closing, counters }, ran.outcomes, ran.watchers))
}
