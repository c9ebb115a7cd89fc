//! Budgets: how much of a scarce resource (open files, PostgreSQL connections) the server
//! may hand out, sized once at start-up and reserved by a run *before* it opens anything.
//!
//! A run that opens 257 connections and meets "Too many open files" on the 200th has already
//! put stock on a shelf and started work it cannot finish; worse, the error reaches the page
//! as "Redis unavailable". So every run reserves what it will open from a [`Budget`] at
//! admission, and a run that does not fit is refused up front with `resource_exhausted` and
//! a sentence saying which budget and by how much.
//!
//! # Layout
//! - [`Budget`]: a counted pool of units (a `Semaphore` with a name and a total, for messages).
//! - [`raise_fd_limit`] and [`plan`]: the open-file limit, and the caps that fit under it.
//! - [`fit_pg_pool`]: the PostgreSQL pool, kept well below the server's `max_connections`.

use std::sync::Arc;

use oversold_protocol::limits::MAX_APP_SERVERS;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// File descriptors kept out of every budget: stdin/out/err, the listener, tokio's own
/// (epoll, wakers), the health monitor's Redis connection, a private redis-server's pipes,
/// PostgreSQL's start-up connection, log files, and plain HTTP requests being read (those
/// are not WebSockets, so `--max-sockets` does not count them; the header timeout bounds
/// how long each may stay).
pub const RESERVED_FDS: usize = 128;
/// Open files one run may need at worst: an app-server connection each (at most
/// [`MAX_APP_SERVERS`]), the admin connection, one more for the admin connection's
/// reconnect when reading the stock back (the old one closes after the new one opens), and
/// a checkout's two more: its reaper's connection and its ledger's PostgreSQL connection.
pub const FDS_PER_RUN: usize = MAX_APP_SERVERS as usize + 4;
/// Fewest WebSockets worth serving; below this the open-file limit is split instead.
const MIN_SOCKETS: usize = 16;
/// Default PostgreSQL pool: a handful of `postgres` runs at the default 8 app servers (9
/// connections each, with the admin one), far below PostgreSQL's usual `max_connections` of
/// 100, so the lab never crowds out the database's other users.
pub const DEFAULT_PG_MAX_CONNECTIONS: usize = 20;

/// A pool of `total` units of one resource. Cheap to share: the units live in an `Arc`.
#[derive(Debug, Clone)]
pub struct Budget {
    what: &'static str,
    total: usize,
    units: Arc<Semaphore>,
}

/// Why a reservation did not fit: enough to write the sentence the client gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shortfall {
    /// Units asked for.
    pub wanted: usize,
    /// Units free right now.
    pub free: usize,
    /// The budget's size.
    pub total: usize,
}

impl Shortfall {
    /// True when the request could never fit, however idle the server.
    pub fn never_fits(&self) -> bool {
        self.wanted > self.total
    }
}

impl Budget {
    /// A budget of `total` units of `what` (e.g. "connections").
    pub fn new(what: &'static str, total: usize) -> Self {
        Budget {
            what,
            total,
            units: Arc::new(Semaphore::new(total)),
        }
    }

    /// What it counts, for messages.
    pub fn what(&self) -> &'static str {
        self.what
    }

    /// Its size.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Units reserved right now.
    pub fn in_use(&self) -> usize {
        self.total - self.units.available_permits()
    }

    /// Reserve `wanted` units now, or say why not. Never waits: a run that does not fit is
    /// refused, not queued behind runs that may take minutes.
    pub fn try_reserve(&self, wanted: usize) -> Result<OwnedSemaphorePermit, Shortfall> {
        let shortfall = Shortfall {
            wanted,
            free: self.units.available_permits(),
            total: self.total,
        };
        let n = u32::try_from(wanted).map_err(|_| shortfall)?;
        self.units
            .clone()
            .try_acquire_many_owned(n)
            .map_err(|_| shortfall)
    }
}

/// The open-file limit this process runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdLimit {
    /// The soft limit in force (what `open` and `accept` are held to).
    pub soft: u64,
    /// The ceiling the soft limit may be raised to without privileges.
    pub hard: u64,
    /// The soft limit before we raised it, when we did.
    pub raised_from: Option<u64>,
}

/// Where to stop when the hard limit is "unlimited": Linux refuses a soft limit above
/// `fs.nr_open`, whose default is this.
const NR_OPEN_DEFAULT: u64 = 1 << 20;

/// Read `RLIMIT_NOFILE` and raise the soft limit to the hard one (allowed without
/// privileges). Many systems start processes at a soft 1024 with a hard limit far above it.
pub fn raise_fd_limit() -> std::io::Result<FdLimit> {
    use rlimit::Resource;
    let (soft, hard) = Resource::NOFILE.get()?;
    let target = hard.min(NR_OPEN_DEFAULT);
    if soft >= target {
        return Ok(FdLimit {
            soft,
            hard,
            raised_from: None,
        });
    }
    match Resource::NOFILE.set(target, hard) {
        Ok(()) => Ok(FdLimit {
            soft: target,
            hard,
            raised_from: Some(soft),
        }),
        Err(e) => {
            tracing::debug!(error = %e, "could not raise the open-file limit");
            Ok(FdLimit {
                soft,
                hard,
                raised_from: None,
            })
        }
    }
}

/// The caps the server runs with, once they fit under the open-file limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Runs in flight at once.
    pub max_runs: usize,
    /// WebSockets open at once.
    pub max_sockets: usize,
    /// File descriptors the runs' connections may hold together (the live budget).
    pub connection_budget: usize,
    /// What was lowered, and why: one sentence each, for a start-up warning.
    pub lowered: Vec<String>,
}

/// Fit `max_runs` and `max_sockets` under `fd_limit`: the worst case, `max_sockets` sockets
/// plus `max_runs` runs of [`FDS_PER_RUN`] each, must fit in what [`RESERVED_FDS`] leaves.
/// Runs are lowered first (down to 1: they are the expensive ones), then sockets. What is
/// left after the sockets becomes the runs' live connection budget. An operator's explicit
/// 0 runs (a server that accepts sockets and races nothing) is kept, never raised.
pub fn plan(fd_limit: u64, max_runs: usize, max_sockets: usize) -> Plan {
    let limit = usize::try_from(fd_limit).unwrap_or(usize::MAX);
    let usable = limit.saturating_sub(RESERVED_FDS);
    let mut lowered = Vec::new();
    let (mut runs, mut sockets) = (max_runs, max_sockets.max(1));
    let why = |what: &str, from: usize, to: usize| {
        format!(
            "lowered {what} from {from} to {to}: the open-file limit is {fd_limit}, and \
             {RESERVED_FDS} are kept for the server itself, each socket needs 1 and each run \
             up to {FDS_PER_RUN} ({MAX_APP_SERVERS} app servers + 4)"
        )
    };
    if sockets + runs * FDS_PER_RUN > usable {
        let fitting = (usable.saturating_sub(sockets) / FDS_PER_RUN).clamp(1, runs.max(1));
        if fitting < runs {
            lowered.push(why("--max-runs", runs, fitting));
            runs = fitting;
        }
    }
    if sockets + runs * FDS_PER_RUN > usable {
        // Even one run does not fit beside the sockets: lower the sockets to what one run
        // leaves, unless that leaves almost none; then split what there is, and the live
        // connection budget refuses the runs too large for their half.
        let fitting = usable
            .checked_sub(runs * FDS_PER_RUN)
            .filter(|&left| left >= MIN_SOCKETS)
            .unwrap_or(usable / 2)
            .max(1);
        if fitting < sockets {
            lowered.push(why("--max-sockets", sockets, fitting));
            sockets = fitting;
        }
    }
    Plan {
        max_runs: runs,
        max_sockets: sockets,
        connection_budget: usable.saturating_sub(sockets),
        lowered,
    }
}

/// At start-up: raise the open-file limit, fit the caps under it, and log what was lowered.
pub fn startup_plan(max_runs: usize, max_sockets: usize) -> Plan {
    let limit = match raise_fd_limit() {
        Ok(limit) => {
            if let Some(from) = limit.raised_from {
                tracing::info!(
                    from,
                    to = limit.soft,
                    "raised the open-file limit to the hard limit"
                );
            }
            limit.soft
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the open-file limit; assuming 1024");
            1024
        }
    };
    let plan = plan(limit, max_runs, max_sockets);
    for why in &plan.lowered {
        tracing::warn!("{why}");
    }
    tracing::info!(
        open_files = limit,
        max_runs = plan.max_runs,
        max_sockets = plan.max_sockets,
        connection_budget = plan.connection_budget,
        "budgets"
    );
    plan
}

/// At start-up, when PostgreSQL answered: the pool size to use, checked against what the
/// database allows (kept as asked, with a warning, if it cannot tell).
pub async fn startup_pg_pool(db: &crate::pg::PgDb, asked: usize) -> usize {
    match db.server_max_connections().await {
        Ok(server_max) => {
            let (pool, lowered) = fit_pg_pool(asked, server_max);
            if let Some(why) = lowered {
                tracing::warn!("{why}");
            }
            tracing::info!(pool, server_max, "PostgreSQL connection pool");
            pool
        }
        Err(e) => {
            tracing::warn!(error = %e, pool = asked, "cannot read PostgreSQL's max_connections");
            asked
        }
    }
}

/// Keep the PostgreSQL pool `asked` for strictly below `server_max` (what `SHOW
/// max_connections` said, superuser slots included). A pool that does not fit is halved to
/// `server_max / 2`, so the lab never takes the last slots other clients of that database
/// need. Returns the pool size and, when lowered, why.
pub fn fit_pg_pool(asked: usize, server_max: usize) -> (usize, Option<String>) {
    if asked < server_max {
        return (asked, None);
    }
    let pool = (server_max / 2).max(1);
    let why = format!(
        "lowered --pg-max-connections from {asked} to {pool}: PostgreSQL allows only \
         {server_max} connections in all (SHOW max_connections), and its other clients need some"
    );
    (pool, Some(why))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_refuses_what_does_not_fit_and_gets_it_back_on_drop() {
        let budget = Budget::new("connections", 10);
        let held = budget.try_reserve(7).unwrap();
        assert_eq!(budget.in_use(), 7);
        let no = budget.try_reserve(4).unwrap_err();
        assert_eq!(
            no,
            Shortfall {
                wanted: 4,
                free: 3,
                total: 10
            }
        );
        assert!(!no.never_fits());
        assert!(budget.try_reserve(11).unwrap_err().never_fits());
        drop(held);
        assert!(budget.try_reserve(10).is_ok());
    }

    #[test]
    fn a_large_limit_keeps_every_cap() {
        let plan = plan(20_000, 8, 512);
        assert_eq!((plan.max_runs, plan.max_sockets), (8, 512));
        // Zero runs is a setting (race nothing), not a mistake to correct.
        assert_eq!(super::plan(20_000, 0, 512).max_runs, 0);
        assert_eq!(plan.connection_budget, 20_000 - RESERVED_FDS - 512);
        assert!(plan.lowered.is_empty());
    }

    #[test]
    fn a_small_limit_lowers_runs_first_and_says_so() {
        // 1024 - 128 = 896 usable; 512 sockets leave 384: one run of 260.
        let plan = plan(1024, 8, 512);
        assert_eq!((plan.max_runs, plan.max_sockets), (1, 512));
        assert_eq!(plan.connection_budget, 384);
        assert_eq!(plan.lowered.len(), 1);
        assert!(
            plan.lowered[0].starts_with("lowered --max-runs from 8 to 1"),
            "{:?}",
            plan.lowered
        );
        assert!(plan.lowered[0].contains("open-file limit is 1024"));
    }

    #[test]
    fn a_tiny_limit_lowers_sockets_too() {
        // 384 usable: one run of 260 leaves 124 sockets.
        let plan = plan(512, 8, 512);
        assert_eq!((plan.max_runs, plan.max_sockets), (1, 124));
        assert_eq!(plan.connection_budget, 260);
        assert_eq!(plan.lowered.len(), 2);
        // 256 usable cannot hold one largest run at all: split, and let the budget refuse.
        let plan = super::plan(384, 8, 512);
        assert_eq!((plan.max_runs, plan.max_sockets), (1, 128));
        assert_eq!(plan.connection_budget, 128);
    }

    #[test]
    fn the_pg_pool_stays_below_the_server_max() {
        assert_eq!(fit_pg_pool(20, 100), (20, None));
        let (pool, why) = fit_pg_pool(100, 100);
        assert_eq!(pool, 50);
        assert!(why.unwrap().contains("SHOW max_connections"));
        assert_eq!(fit_pg_pool(5, 1).0, 1);
    }
}
