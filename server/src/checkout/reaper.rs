//! The reaper: gives back the units of holds nobody confirmed or released.
//!
//! Every tick it calls `reap_holds.lua` with the shop clock, and calls again at once while
//! the script says more holds are due. Each call returns at most [`BATCH`] holds: a script
//! blocks every other client of Redis while it runs, so ten thousand holds expiring at
//! once are returned in a hundred short calls, with buyers' commands served in between,
//! instead of one long one.
//!
//! It runs on a connection of its own, so its work never queues behind a buyer's (nor a
//! buyer's behind it) in the client, and it is not counted in any buyer's round trips.
//! When that connection breaks it says so to the run, as a buyer would: once every buyer is
//! done, the reaper is the only one still talking to Redis, and a Redis killed then must end
//! the run as promptly as one killed mid-crowd.

use std::time::{Duration, Instant};

use oversold_protocol::ReaperStats;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::clock::{ShopClock, micros};
use super::probe::LossReports;
use crate::store::holds::{self, MAX_REAP_BATCH};
use crate::store::{CheckoutKeys, RedisConn};
use crate::summary::latency;

/// Holds returned per script call at most.
pub const BATCH: u32 = 100;
const _: () = assert!(BATCH <= MAX_REAP_BATCH);

/// What the reaper did, and whether it ran dry.
#[derive(Debug, Clone, Default)]
pub struct ReaperReport {
    /// Script calls made.
    pub calls: u32,
    /// Holds returned.
    pub holds: u64,
    /// Units returned.
    pub units: u64,
    /// Most holds in one call.
    pub largest_batch: u32,
    /// Each call's time as the server saw it, µs.
    pub call_us: Vec<u64>,
    /// Each call's shop clock (what it asked to reap up to) and when it started.
    pub calls_at: Vec<(u64, Instant)>,
    /// Holds still listed when it stopped.
    pub holds_left: u64,
    /// The last error, if a call failed (the reaper keeps trying until it is stopped).
    pub error: Option<String>,
}

impl ReaperReport {
    /// The summary's view of it.
    pub fn stats(&self) -> ReaperStats {
        let l = latency(self.call_us.clone());
        ReaperStats {
            calls: self.calls,
            holds_returned: self.holds,
            largest_batch: self.largest_batch,
            batch_size: BATCH,
            p50_call_us: l.p50_us,
            p99_call_us: l.p99_us,
            max_call_us: l.max_us,
            late_p50_us: 0,
            late_max_us: 0,
        }
    }

    /// [`ReaperReport::stats`], with how late the reaper set about returning the holds due at
    /// `due` (shop ms) that nobody else could settle (a crashed app server's): each was
    /// returned by the first call that asked to reap up to its deadline or later, since the
    /// script returns every due hold, oldest first, before a sweep ends.
    pub fn stats_with_lateness(&self, clock: &ShopClock, due: &[u64]) -> ReaperStats {
        let late: Vec<u64> = due
            .iter()
            .filter_map(|&at| {
                let first = self.calls_at.partition_point(|&(now, _)| now < at);
                let (_, started) = self.calls_at.get(first)?;
                Some(micros(
                    started.saturating_duration_since(clock.instant_at(at)),
                ))
            })
            .collect();
        let late = latency(late);
        ReaperStats {
            late_p50_us: late.p50_us,
            late_max_us: late.max_us,
            ..self.stats()
        }
    }
}

/// The reaper of one run.
pub struct Reaper {
    /// Its own connection.
    pub conn: RedisConn,
    /// The run's keys.
    pub keys: CheckoutKeys,
    /// The shop clock.
    pub clock: ShopClock,
    /// Real time between ticks.
    pub every: Duration,
    /// Becomes true when every buyer is done: from then on the reaper stops as soon as
    /// no hold is left (or `drain_for` later).
    pub draining: watch::Receiver<bool>,
    /// The longest to wait for the last hold once draining.
    pub drain_for: Duration,
    /// Stops it at once (a cancelled run, or one that does not wait for expiry).
    pub stop: CancellationToken,
    /// Where it reports its connection broken, if anyone listens.
    pub losses: Option<LossReports>,
}

/// Real time between ticks for a hold of `hold_real`: a tenth of it, between 5 and 100 ms,
/// so a hold is returned at most a tenth of its life (or 100 ms) after it expires.
pub fn tick_for(hold_real: Duration) -> Duration {
    (hold_real / 10).clamp(Duration::from_millis(5), Duration::from_millis(100))
}

impl Reaper {
    /// Reap until stopped, or until draining and no hold is left.
    pub async fn run(mut self) -> ReaperReport {
        let mut report = ReaperReport::default();
        let mut tick = tokio::time::interval(self.every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut drain_by = None;
        loop {
            tokio::select! {
                biased;
                _ = self.stop.cancelled() => return report,
                _ = tick.tick() => {}
            }
            // Read "draining" before the sweep, not after: a sweep that began while buyers
            // were still reserving may report no hold left, then find draining set when it
            // returns (the last buyers finished during the call) while their holds landed
            // after it. Only a sweep that began once draining was set (after every buyer's
            // request had reached Redis) may end the reaper.
            let draining = *self.draining.borrow();
            let answered = self.sweep(&mut report).await;
            if draining {
                let by = *drain_by.get_or_insert_with(|| Instant::now() + self.drain_for);
                // A failed call says nothing about what is left: only an answer may end it.
                if (answered && report.holds_left == 0) || Instant::now() >= by {
                    return report;
                }
            }
        }
    }

    /// Call the script until no due hold is left (or a call fails). True when the last
    /// call was answered (so `report.holds_left` is current).
    async fn sweep(&mut self, report: &mut ReaperReport) -> bool {
        loop {
            let (started, now) = (Instant::now(), self.clock.now());
            let reaped = holds::reap(&mut self.conn, &self.keys, now, BATCH).await;
            report.calls += 1;
            report.calls_at.push((now, started));
            report.call_us.push(micros(started.elapsed()));
            match reaped {
                Ok(c) => {
                    let r = c.reply;
                    report.holds += u64::from(r.holds);
                    report.units += r.units;
                    report.largest_batch = report.largest_batch.max(r.holds);
                    report.holds_left = r.holds_left;
                    if r.still_due == 0 {
                        return true;
                    }
                }
                Err(f) => {
                    tracing::debug!(error = %f.error, "a reaper call failed; trying again next tick");
                    report.error = Some(f.error.short());
                    if let Some(losses) = self.losses.as_ref().filter(|_| f.error.is_outage()) {
                        // The run may be over already: then nobody needs to hear it.
                        let _ = losses.send(format!("the reaper: {}", f.error.short()));
                    }
                    return false;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_a_tenth_of_a_hold_within_bounds() {
        assert_eq!(tick_for(Duration::from_secs(3)), Duration::from_millis(100));
        assert_eq!(
            tick_for(Duration::from_millis(200)),
            Duration::from_millis(20)
        );
        assert_eq!(tick_for(Duration::from_millis(1)), Duration::from_millis(5));
    }
}
