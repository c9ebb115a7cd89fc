//! The `busy_script` scenario: one long script stops a whole Redis.
//!
//! A sale of ordinary `lua` buyers runs on a Redis the server started for the run alone,
//! with `busy-reply-threshold` (Redis 7's name for `lua-time-limit`) set low. Mid-sale a
//! *slow client* (the strategy says which) runs a long job inside Redis. Redis serves nobody
//! else while a script runs; past the threshold it answers every other command with `BUSY`.
//! The server's watchdog then ends the stall: `SCRIPT KILL` (or `FUNCTION KILL`) stops a job
//! that has written nothing; one that has written cannot be stopped (`UNKILLABLE`), and the
//! only way out is `SHUTDOWN NOSAVE`: the Redis restarts from its last snapshot, and every
//! sale acknowledged since then is gone.
//!
//! # Layout
//! - [`BusyTally`]: what the stall cost, flat in the run's summary.
//! - [`SlowJobEnd`]: how the slow client's job ended.

use serde::{Deserialize, Serialize};

use crate::wire_names::wire_names;

/// `arrival_spread_ms` when a `busy_script` request leaves it out: buyers keep arriving
/// before, during and after the stall.
pub const DEFAULT_SPREAD_MS: u32 = 2_000;

/// How the slow client's job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SlowJobEnd {
    /// It ran to its end (in small steps, or because nobody stopped it).
    Finished,
    /// `SCRIPT KILL` or `FUNCTION KILL` stopped it; it had written nothing.
    Killed,
    /// It had written, so Redis refused to kill it; `SHUTDOWN NOSAVE` ended it with the
    /// whole server.
    ShutDown,
    /// It failed for another reason (see the run's log).
    Failed,
}

wire_names! { SlowJobEnd {
    Finished = "finished",
    Killed = "killed",
    ShutDown = "shut_down",
    Failed = "failed",
} }

/// What a `busy_script` run's stall cost. Its fields sit flat in the summary.
///
/// The summary's own fields keep their meaning: `units_sold` counts every acknowledged
/// order, before the restart and after; `final_stock` is the counter read back from the
/// restarted Redis. After a restart, `lost_updates` equals `units_lost` (the counter forgot
/// them), and the sale may sell the same units twice (`oversold_units`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BusyTally {
    /// Buyers answered `BUSY`: Redis was running someone else's script past its threshold.
    /// Nothing was taken for them.
    pub busy_replies: u32,
    /// From the moment the slow job was sent until Redis answered a `PING` again, in ms;
    /// 0 when it never held Redis past the threshold.
    pub stalled_ms: u64,
    /// Jobs stopped by `SCRIPT KILL` or `FUNCTION KILL`.
    pub killed: u32,
    /// `UNKILLABLE` answers: the job had written, and Redis will not undo half a script.
    pub kill_refused: u32,
    /// Times the watchdog ended Redis with `SHUTDOWN NOSAVE` and started it again.
    pub restarted: u32,
    /// Orders acknowledged (`reserved`) before the restart whose units the restarted Redis
    /// no longer remembers: the buyers hold a confirmation the stock does not.
    pub acknowledged_lost: u32,
    /// Units across those orders.
    pub units_lost: u64,
    /// How the slow client's job ended.
    pub slow_job: SlowJobEnd,
    /// The slow job's length as asked, in ms (its steps' total, for a job in steps).
    pub slow_job_ms: u32,
    /// When the slow job was sent, ms after the gate opened.
    pub slow_job_at_ms: u32,
    /// Redis's `busy-reply-threshold`: how long a script runs before others get `BUSY`.
    pub busy_threshold_ms: u32,
    /// How long the watchdog lets Redis stay busy before it acts.
    pub watchdog_ms: u32,
}
