//! The listener: `holds_notify`'s answer to the reaper. It gives back the units of each hold
//! Redis says it expired, and it is deliberately fallible in the two ways pub/sub is.
//!
//! It subscribes to `__keyevent@<db>__:expired` on the run's own Redis and, for every hold key
//! an event names, calls `release_hold_ttl.lua`, which returns the units from the hold's
//! shadow. Nothing scans, so:
//!
//! - **Lost while it is down.** At a seeded moment shortly before the first hold falls due the
//!   app server restarts its subscriber ([`Restart`]): the connection is dropped (Redis
//!   forgets the subscriber) and a new one subscribes [`LISTENER_DOWN`] later. Redis publishes to whoever is subscribed at that
//!   instant and keeps nothing, so a hold whose key is removed in the gap is never returned.
//!   The run finds it at the end as a shadow with no key: stranded, leaked.
//! - **Late under lazy expiry.** Redis publishes `expired` when it removes the key (when a
//!   command touches it, or when its background cycle, `hz` 10 times a second, samples it),
//!   not at the deadline. Each release's lateness is the event's arrival minus the hold's
//!   deadline, both read on the app's clock (the shop clock turned back into real time).
//!
//! Once every buyer is done it drains: it ends as soon as no hold is unsettled, or, at the
//! latest, a hold's life plus [`GRACE`] later (every hold is due by then). Before ending that
//! way it touches the remaining hold keys (what a read would do: Redis removes the expired
//! ones and publishes their events now), publishes a marker on the same channel and reads up
//! to it, so every event Redis published while it listened has been heard. Whatever is left
//! unsettled then was published while nobody listened.

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::clock::{ShopClock, micros};
use super::probe::LossReports;
use super::reaper::ReaperReport;
use crate::store::notify::{self, ExpiredEvents, TtlRelease};
use crate::store::{CheckoutKeys, RedisConn, Store, StoreError};

/// How long the app server's subscriber is gone when it restarts (a deploy, a crash loop).
pub const LISTENER_DOWN: Duration = Duration::from_secs(2);
/// The latest a restart begins before the first hold is due: it begins, seeded, within this
/// much before the earliest unsettled hold's key expires (its `PTTL`, Redis's count), so the
/// holds of the first arrivals expire while it is down (and later ones, with a spread of
/// arrivals, mostly after). Counted from that deadline, not from the gate or from when the
/// listener noticed the hold: on a busy machine the buyers may reach Redis a second or more
/// after the gate opens, and the listener may notice a hold late; a restart timed from either
/// could be over, or not yet begun, when the hold expired.
pub const RESTART_LEAD: Duration = Duration::from_secs(1);
/// How long past the last deadline the drain waits for Redis to remove the keys by itself.
pub const GRACE: Duration = Duration::from_secs(1);
/// How long the drain waits for its own marker to come back.
const MARKER_WAIT: Duration = Duration::from_secs(2);
/// How often a draining listener asks whether any hold is unsettled, and how often, before
/// the first hold, it asks whether there is one yet.
const DRAIN_CHECK: Duration = Duration::from_millis(20);
/// How soon it tries again after its connection broke by itself.
const RESUBSCRIBE_AFTER: Duration = Duration::from_millis(200);
/// Mixed into the run's seed for the restart's moment (its own stream: the crowd is untouched).
const SALT: u64 = 0x11c7_e4e4_0000_d0d0;

/// When the subscriber goes away, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Restart {
    /// How long before the first unsettled hold's key expires the connection is dropped.
    pub before_first_deadline: Duration,
    /// How long until a new one subscribes.
    pub down_for: Duration,
}

impl Restart {
    /// The run's restart: [`LISTENER_DOWN`] long, beginning at a seeded moment up to
    /// [`RESTART_LEAD`] before the first hold's deadline (never more than a hold's life,
    /// `hold_real`, before it).
    pub fn seeded(seed: u64, hold_real: Duration) -> Self {
        let lead = RESTART_LEAD.mul_f64(ChaCha8Rng::seed_from_u64(seed ^ SALT).random::<f64>());
        Restart {
            before_first_deadline: lead.min(hold_real),
            down_for: LISTENER_DOWN,
        }
    }
}

/// What the listener did.
#[derive(Debug, Clone, Default)]
pub struct ListenerReport {
    /// Holds it gave back.
    pub holds: u64,
    /// Units it gave back.
    pub units: u64,
    /// Each release's lateness: event arrival minus the hold's deadline, µs (0 if early).
    pub late_us: Vec<u64>,
    /// How long it was unsubscribed, µs.
    pub down_us: u64,
    /// The last error, if a release or a subscription failed.
    pub error: Option<String>,
}

/// What gave a run's expired holds back: the reaper's report, or the listener's.
#[derive(Debug, Clone, Default)]
pub struct ExpiryReport {
    /// The reaper's (empty when the listener did the work).
    pub reaper: ReaperReport,
    /// The listener's, for `holds_notify`.
    pub listener: Option<ListenerReport>,
}

impl ExpiryReport {
    /// Units given back on expiry, by whichever did it.
    pub fn units(&self) -> u64 {
        self.reaper.units + self.listener.as_ref().map_or(0, |l| l.units)
    }
}

/// The listener of one run.
pub struct Listener {
    /// The run's Redis, to subscribe again after the restart.
    pub store: Store,
    /// Its own connection for the release script and the drain's reads.
    pub conn: RedisConn,
    /// The run's keys.
    pub keys: CheckoutKeys,
    /// The shop clock.
    pub clock: ShopClock,
    /// The subscriber's restart.
    pub restart: Restart,
    /// Becomes true when every buyer is done.
    pub draining: watch::Receiver<bool>,
    /// The longest to wait once draining (then the final sweep).
    pub drain_for: Duration,
    /// Stops it at once.
    pub stop: CancellationToken,
    /// Where it reports its connection broken.
    pub losses: Option<LossReports>,
}

/// The subscriber: up (its events), or down until `back_at`.
struct Subscription {
    /// The subscription while it is up.
    events: Option<ExpiredEvents>,
    /// Until the first hold is seen: the restart still to be timed from it.
    awaiting_first_hold: Option<Restart>,
    /// When the seeded restart drops it (once).
    drop_at: Option<Instant>,
    /// When it subscribes again, while it is down.
    back_at: Option<Instant>,
    /// Since when it has been down.
    down_since: Option<Instant>,
}

impl Subscription {
    /// Drop the connection (Redis forgets the subscriber) and subscribe again `after`.
    fn go_down(&mut self, after: Duration) {
        self.events = None;
        let now = Instant::now();
        self.down_since.get_or_insert(now);
        self.back_at = Some(now + after);
    }

    /// Subscribe again; on failure, try again a little later.
    async fn come_back(
        &mut self,
        store: &Store,
        report: &mut ListenerReport,
    ) -> Result<(), StoreError> {
        match ExpiredEvents::subscribe(store).await {
            Ok(events) => {
                self.events = Some(events);
                self.back_at = None;
                report.down_us += self.down_since.take().map_or(0, |t| micros(t.elapsed()));
                Ok(())
            }
            Err(e) => {
                self.back_at = Some(Instant::now() + RESUBSCRIBE_AFTER);
                Err(e)
            }
        }
    }
}

/// Wait for the next event on `events`, or forever while unsubscribed.
async fn next_event(events: &mut Option<ExpiredEvents>) -> Option<String> {
    match events.as_mut() {
        Some(e) => e.next().await,
        None => std::future::pending().await,
    }
}

/// Sleep until `at`, or forever if there is nothing to wait for.
async fn until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

impl Listener {
    /// Listen on `events` (subscribed before the gate) until stopped, or until drained (see
    /// the module doc). One `select!` shows everything the listener waits for.
    pub async fn run(mut self, events: ExpiredEvents) -> ListenerReport {
        let mut report = ListenerReport::default();
        let mut sub = Subscription {
            events: Some(events),
            awaiting_first_hold: Some(self.restart),
            drop_at: None,
            back_at: None,
            down_since: None,
        };
        let mut drain_by = None::<Instant>;
        let mut check = tokio::time::interval(DRAIN_CHECK);
        check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut first_hold = tokio::time::interval(DRAIN_CHECK);
        first_hold.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                biased;
                _ = self.stop.cancelled() => break,
                key = next_event(&mut sub.events) => match key {
                    Some(key) => self.heard(&key, Instant::now(), &mut report).await,
                    None => {
                        // Not our restart: the connection broke by itself.
                        self.lost("the expired-event subscription closed", &mut report);
                        sub.go_down(RESUBSCRIBE_AFTER);
                    }
                },
                _ = first_hold.tick(), if sub.awaiting_first_hold.is_some() => {
                    self.time_the_restart(&mut sub, &mut report).await;
                }
                _ = until(sub.drop_at) => {
                    tracing::info!("listener: the app server restarts its subscriber");
                    sub.drop_at = None;
                    sub.go_down(self.restart.down_for);
                }
                _ = until(sub.back_at) => {
                    if let Err(e) = sub.come_back(&self.store, &mut report).await {
                        self.failed(&e, &mut report);
                    }
                }
                _ = check.tick(), if *self.draining.borrow() => {
                    let by = *drain_by.get_or_insert_with(|| Instant::now() + self.drain_for);
                    if self.drained(&mut sub, by, &mut report).await {
                        break;
                    }
                }
            }
        }
        report.down_us += sub.down_since.map_or(0, |t| micros(t.elapsed()));
        report
    }

    /// Before the first hold: once there is one, time the seeded restart from the life its key
    /// has left as Redis counts it (`PTTL`), not from when this saw it: on a loaded machine it
    /// may see the first hold late, and a restart timed from that moment could come after the
    /// hold had expired and been given back.
    async fn time_the_restart(&mut self, sub: &mut Subscription, report: &mut ListenerReport) {
        let due = match notify::unsettled(&mut self.conn, &self.keys).await {
            Ok(0) => return,
            Ok(_) => notify::first_expiry(&mut self.conn, &self.keys).await,
            Err(e) => Err(e),
        };
        match due {
            // Settled (or already expired) between the two reads: look again at the next tick.
            Ok(None) => {}
            Ok(Some(left)) => {
                if let Some(restart) = sub.awaiting_first_hold.take() {
                    let lead = restart.before_first_deadline;
                    sub.drop_at = Some(Instant::now() + left.saturating_sub(lead));
                }
            }
            Err(e) => self.failed(&e, report),
        }
    }

    /// A draining listener's check: true once no hold is unsettled, or once `by` has passed
    /// and, subscribed, it has swept up every event Redis published (see [`Listener::sweep`]).
    async fn drained(
        &mut self,
        sub: &mut Subscription,
        by: Instant,
        report: &mut ListenerReport,
    ) -> bool {
        match notify::unsettled(&mut self.conn, &self.keys).await {
            Ok(0) => true,
            Ok(_) if Instant::now() < by => false,
            Ok(_) => match sub.events.as_mut() {
                Some(events) => {
                    self.sweep(events, report).await;
                    true
                }
                None => false, // still down: wait until it is back, then sweep
            },
            Err(e) => {
                self.failed(&e, report);
                false
            }
        }
    }

    /// An event named `key` arrived at `at`: if it is one of this run's holds, give its units
    /// back and note how late that is.
    async fn heard(&mut self, key: &str, at: Instant, report: &mut ListenerReport) {
        let Some(hold) = self.keys.hold_at(key) else {
            return; // another key expired (the run's Redis holds only the run's keys)
        };
        match notify::release_hold_ttl(&mut self.conn, &self.keys, &hold).await {
            Ok(c) => {
                if let TtlRelease::Released {
                    qty, expires_at, ..
                } = c.reply
                {
                    report.holds += 1;
                    report.units += u64::from(qty);
                    let due = self.clock.instant_at(expires_at);
                    if at < due {
                        // Redis expires by its wall clock; this process times by a monotonic
                        // one. Early means the wall clock stepped forward (seen on a VM).
                        let early_us = micros(due.duration_since(at));
                        tracing::warn!(key, early_us, "Redis expired a hold before its deadline");
                    }
                    report
                        .late_us
                        .push(micros(at.saturating_duration_since(due)));
                }
            }
            Err(f) => self.failed(&f.error, report),
        }
    }

    /// The drain's last step: touch what is left, then read every event up to a marker.
    async fn sweep(&mut self, events: &mut ExpiredEvents, report: &mut ListenerReport) {
        let marker = notify::drain_marker(&self.keys);
        let sent = async {
            notify::touch(&mut self.conn, &self.keys).await?;
            notify::publish_marker(&mut self.conn, events.channel(), &marker).await
        };
        if let Err(e) = sent.await {
            self.failed(&e, report);
            return;
        }
        let deadline = tokio::time::Instant::now() + MARKER_WAIT;
        while let Ok(Some(key)) = tokio::time::timeout_at(deadline, events.next()).await {
            if key == marker {
                return;
            }
            self.heard(&key, Instant::now(), report).await;
        }
        report.error = Some("the drain's marker never came back".into());
    }

    /// A call failed: keep it, and tell the run if the connection broke.
    fn failed(&self, e: &StoreError, report: &mut ListenerReport) {
        tracing::debug!(error = %e, "a listener call failed");
        report.error = Some(e.short());
        if e.is_outage() {
            self.lost(&e.short(), report);
        }
    }

    /// Tell the run the listener lost Redis (the run judges whether Redis is gone).
    fn lost(&self, why: &str, report: &mut ListenerReport) {
        report.error = Some(why.to_string());
        if let Some(losses) = &self.losses {
            // The run may be over already: then nobody needs to hear it.
            let _ = losses.send(format!("the listener: {why}"));
        }
    }
}
