//! Is Redis gone, or only slow? One question, asked two ways during a checkout, answered by
//! the engine's outage probe (a fresh connection must read the run's stock within
//! [`PROBE_TIMEOUT`]).
//!
//! - A buyer whose reservation got no answer by the deadline asks [`Probe::ask`]: if Redis
//!   answers a fresh connection, it is slow, and the reservation timed out (in doubt: it may
//!   still be applied); if not, it is unreachable and the shop's fail mode decides.
//! - The run asks through [`LossWatch`] when a buyer's connection broke (a refused or dropped
//!   connection, never a slow answer): if Redis is gone, the run stops releasing buyers, stops
//!   the reaper and fails, within seconds of the loss instead of after the last arrival.
//!
//! A slow answer never ends a run: a paused Redis (the outage knob) comes back, and the run
//! goes on.

use std::time::Instant;

use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;

use crate::engine::{PROBE_TIMEOUT, probe_redis};
use crate::store::{RedisConn, RunKeys, Store};

/// The run's probe, shared by its buyers and the run itself.
pub struct Probe {
    store: Store,
    keys: RunKeys,
    /// The last verdict. A lock, not a flag: a crowd whose reservations all timed out at
    /// once queues behind the one probe in flight and shares its verdict, rather than
    /// opening a connection each on a Redis that is already struggling.
    last: Mutex<Option<Verdict>>,
}

/// What one probe found, and when.
#[derive(Debug, Clone)]
struct Verdict {
    /// When the probe ended.
    at: Instant,
    /// `None`: Redis answered. Else why it could not be reached.
    gone: Option<String>,
}

impl Probe {
    /// The probe of the run whose stock is `keys`' on `store`.
    pub fn new(store: Store, keys: RunKeys) -> Self {
        Probe {
            store,
            keys,
            last: Mutex::new(None),
        }
    }

    /// `None` when Redis answered a fresh connection on a probe that ended at or after
    /// `since`, else why it could not be reached. A verdict from before `since` says nothing
    /// about the caller's wait, so it probes again (one caller at a time).
    pub async fn ask(&self, since: Instant) -> Option<String> {
        let mut last = self.last.lock().await;
        if let Some(v) = last.as_ref().filter(|v| v.at >= since) {
            return v.gone.clone();
        }
        let gone = probe_redis(&self.store, &self.keys).await;
        *last = Some(Verdict {
            at: Instant::now(),
            gone: gone.clone(),
        });
        gone
    }
}

/// The run's side: buyers (and the reaper) report a broken connection here, and the run
/// decides whether Redis is gone. Once it is, the run's `stop` is cancelled (no buyer
/// arrives any more, stories end at their next wait, the reaper stops), [`LossWatch::lost`]
/// says why, and no more reports are read.
pub struct LossWatch {
    reports: mpsc::UnboundedReceiver<String>,
    stop: CancellationToken,
    last_probe: Option<Instant>,
    lost: Option<String>,
}

/// Where a buyer reports that its connection to Redis broke.
pub type LossReports = mpsc::UnboundedSender<String>;

impl LossWatch {
    /// A watch that cancels `stop` once Redis is gone, and the sender to report on.
    pub fn new(stop: CancellationToken) -> (LossReports, LossWatch) {
        let (tx, reports) = mpsc::unbounded_channel();
        let watch = LossWatch {
            reports,
            stop,
            last_probe: None,
            lost: None,
        };
        (tx, watch)
    }

    /// Why the run cannot go on, once it cannot.
    pub fn lost(&self) -> Option<&str> {
        self.lost.as_deref()
    }

    /// Take why the run was lost, if it was.
    pub fn into_lost(self) -> Option<String> {
        self.lost
    }

    /// The next report; never, once the run is lost (or no one can report any more).
    pub async fn next(&mut self) -> String {
        match self.lost {
            None => match self.reports.recv().await {
                Some(why) => why,
                None => std::future::pending().await,
            },
            Some(_) => std::future::pending().await,
        }
    }

    /// Someone found a connection broken (`why`): if that means Redis is gone, stop the run.
    /// One broken connection is not a lost Redis (a killed app server's connection, the
    /// chaos button's): every app server's connection broken, or a failed probe, is. Many
    /// buyers report the same break at once, so this probes at most once per
    /// [`PROBE_TIMEOUT`], as the race does.
    pub async fn heard(&mut self, why: String, fleet: &[RedisConn], probe: &Probe) {
        if self.lost.is_some() || self.last_probe.is_some_and(|t| t.elapsed() < PROBE_TIMEOUT) {
            return;
        }
        let asked = Instant::now();
        self.last_probe = Some(asked);
        let all_broken = !fleet.is_empty() && fleet.iter().all(RedisConn::is_broken);
        let gone = match all_broken {
            true => Some("every app server's connection to Redis is lost".to_string()),
            false => probe.ask(asked).await,
        };
        let Some(gone) = gone else {
            return;
        };
        tracing::warn!(
            reason = gone,
            "the checkout cannot go on: releasing no more buyers"
        );
        self.lost = Some(format!("{gone}; first seen: {why}"));
        self.stop.cancel();
    }
}
