//! Checks as a service a public site can offer: one sandbox per process (started at the
//! first check), one check at a time per address, a bounded queue, a per-address budget
//! of checks a minute, a time budget per check; and the CLI's one-off check on a sandbox
//! of its own.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use oversold_protocol::workshop::{MAX_SOURCE_BYTES, SolutionVerdict, VerdictCode};
use oversold_protocol::{ErrorCode, WireError};
use tokio::sync::{OnceCell, Semaphore};

use super::exercises::{self, Exercise};
use super::judge::{self, ClusterTarget, Target};
use super::sandbox::{ClusterSandbox, Incident, Sandbox};
use crate::client::ClientAddr;
use crate::store::sandbox::cluster_key_prefix;

/// Checks waiting for the sandbox at once, beyond the one running; more are `busy`.
pub const MAX_WAITING: usize = 8;
/// Checks one address may start a minute.
pub const CHECKS_PER_MINUTE: u32 = 10;
/// The most one check may take, the judge's crowds and the reference's together.
pub const CHECK_BUDGET: Duration = Duration::from_secs(20);
/// How long a check waits for the sandbox before it is `busy`.
const QUEUE_WAIT: Duration = Duration::from_secs(30);

/// The process's workshop: its sandbox and its budgets.
pub struct Workshop {
    sandbox: OnceCell<Result<Sandbox, String>>,
    /// The cluster sandbox, for the exercises judged on a Redis Cluster (started at the
    /// first such check).
    cluster: OnceCell<Result<ClusterSandbox, String>>,
    /// The check running and the ones waiting for the sandbox.
    queue: Semaphore,
    running: Mutex<HashSet<ClientAddr>>,
    recent: Mutex<HashMap<ClientAddr, (Instant, u32)>>,
}

impl Default for Workshop {
    fn default() -> Self {
        Workshop {
            sandbox: OnceCell::new(),
            cluster: OnceCell::new(),
            queue: Semaphore::new(MAX_WAITING + 1),
            running: Mutex::new(HashSet::new()),
            recent: Mutex::new(HashMap::new()),
        }
    }
}

impl Workshop {
    /// Judge `source` as a solution of `exercise` for `addr`: every refusal (unknown
    /// exercise, too big, a check already running for this address, its budget spent, the
    /// queue full) is a [`WireError`] and runs nothing.
    pub async fn check(
        &self,
        addr: ClientAddr,
        exercise: &str,
        source: &str,
    ) -> Result<SolutionVerdict, WireError> {
        let exercise = admit(exercise, source)?;
        let _queued = self.queue.try_acquire().map_err(|_| {
            WireError::new(
                ErrorCode::Busy,
                "the judge's queue is full; try again in a few seconds",
            )
        })?;
        self.take_budget(addr)?;
        let _running = self.running_for(addr)?;
        if exercise.rules.on_cluster() {
            let cluster = self
                .cluster
                .get_or_init(|| async { ClusterSandbox::start().await.map_err(|e| e.to_string()) })
                .await
                .as_ref()
                .map_err(|why| WireError::new(ErrorCode::RedisUnavailable, why.clone()))?;
            return judge_on_cluster(cluster, exercise, source).await;
        }
        let sandbox = self
            .sandbox
            .get_or_init(|| async { Sandbox::start().await.map_err(|e| e.to_string()) })
            .await
            .as_ref()
            .map_err(|why| WireError::new(ErrorCode::RedisUnavailable, why.clone()))?;
        judge_in(sandbox, exercise, source).await
    }

    fn take_budget(&self, addr: ClientAddr) -> Result<(), WireError> {
        let mut recent = self.recent.lock().expect("workshop budget poisoned");
        if recent.len() > 10_000 {
            recent.retain(|_, (since, _)| since.elapsed() < Duration::from_secs(60));
        }
        let entry = recent.entry(addr).or_insert((Instant::now(), 0));
        if entry.0.elapsed() >= Duration::from_secs(60) {
            *entry = (Instant::now(), 0);
        }
        if entry.1 >= CHECKS_PER_MINUTE {
            return Err(WireError::new(
                ErrorCode::RateLimited,
                format!("{CHECKS_PER_MINUTE} checks a minute per address; try again shortly"),
            ));
        }
        entry.1 += 1;
        Ok(())
    }

    fn running_for(&self, addr: ClientAddr) -> Result<Running<'_>, WireError> {
        let mut running = self.running.lock().expect("workshop running poisoned");
        if !running.insert(addr) {
            return Err(WireError::new(
                ErrorCode::RunInProgress,
                "a check from this address is still running; wait for its verdict",
            ));
        }
        Ok(Running {
            set: &self.running,
            addr,
        })
    }
}

/// This address's check is running; dropping it says it ended.
struct Running<'a> {
    set: &'a Mutex<HashSet<ClientAddr>>,
    addr: ClientAddr,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if let Ok(mut set) = self.set.lock() {
            set.remove(&self.addr);
        }
    }
}

/// The exercise, or why this submission is refused before anything runs.
pub fn admit(exercise: &str, source: &str) -> Result<&'static Exercise, WireError> {
    let found = exercises::find(exercise).ok_or_else(|| {
        let ids: Vec<&str> = exercises::all().iter().map(|e| e.id).collect();
        WireError::new(
            ErrorCode::OutOfRange,
            format!(
                "no exercise is called {exercise:?}; there are: {}",
                ids.join(", ")
            ),
        )
    })?;
    if source.len() > MAX_SOURCE_BYTES {
        return Err(WireError::new(
            ErrorCode::OutOfRange,
            format!(
                "the script is {} bytes; at most {MAX_SOURCE_BYTES} are judged",
                source.len()
            ),
        ));
    }
    if source.trim().is_empty() {
        return Err(WireError::new(ErrorCode::OutOfRange, "the script is empty"));
    }
    Ok(found)
}

/// One check in `sandbox`, under its watchdog and the check's time budget.
pub async fn judge_in(
    sandbox: &Sandbox,
    exercise: &'static Exercise,
    source: &str,
) -> Result<SolutionVerdict, WireError> {
    let started = Instant::now();
    let mut lease = sandbox
        .lease(QUEUE_WAIT)
        .await
        .map_err(|e| WireError::new(ErrorCode::Busy, format!("the sandbox is busy: {e}")))?;
    let (admin, student, tag) = (
        lease.admin().clone(),
        lease.student().clone(),
        lease.tag().to_string(),
    );
    let target = Target {
        admin: &admin,
        student: &student,
        tag: &tag,
    };
    let (judged, incidents) = lease
        .guard(CHECK_BUDGET, judge::check(&target, exercise, source))
        .await;
    settle(exercise, judged, incidents, started)
}

/// One check on the cluster sandbox, under its watchdog (watching the master that serves
/// the submission's keys) and the check's time budget.
pub async fn judge_on_cluster(
    sandbox: &ClusterSandbox,
    exercise: &'static Exercise,
    source: &str,
) -> Result<SolutionVerdict, WireError> {
    let started = Instant::now();
    let mut lease = sandbox
        .lease(QUEUE_WAIT)
        .await
        .map_err(|e| WireError::new(ErrorCode::Busy, format!("the sandbox is busy: {e}")))?;
    let (admin, nodes, tag) = (
        lease.admin().clone(),
        lease.nodes().to_vec(),
        lease.tag().to_string(),
    );
    // The master the calls go to (a submission whose keys line is wrong runs nothing).
    let node = exercises::chosen_keys(exercise, source, &cluster_key_prefix(&tag))
        .ok()
        .and_then(|keys| keys.first().map(|k| lease.node_serving(k)))
        .unwrap_or(0);
    let target = ClusterTarget {
        admin: &admin,
        nodes: &nodes,
        tag: &tag,
    };
    let (judged, incidents) = lease
        .guard(
            node,
            CHECK_BUDGET,
            judge::check_on_cluster(&target, exercise, source),
        )
        .await;
    settle(exercise, judged, incidents, started)
}

/// A guarded check's verdict: the watchdog's first incident if it had one, else the judge's.
fn settle(
    exercise: &Exercise,
    judged: Option<Result<SolutionVerdict, judge::JudgeError>>,
    incidents: Vec<Incident>,
    started: Instant,
) -> Result<SolutionVerdict, WireError> {
    if let Some(incident) = incidents.first() {
        return Ok(incident_verdict(exercise, incident, started));
    }
    match judged {
        Some(Ok(verdict)) => Ok(verdict),
        Some(Err(e)) => Err(WireError::new(ErrorCode::RunFailed, e.to_string())),
        None => Ok(incident_verdict(
            exercise,
            &Incident::Restarted {
                why: format!(
                    "the check ran past its budget of {} s",
                    CHECK_BUDGET.as_secs()
                ),
            },
            started,
        )),
    }
}

/// What the watchdog had to do, as the verdict.
fn incident_verdict(exercise: &Exercise, incident: &Incident, started: Instant) -> SolutionVerdict {
    let (verdict, message) = match incident {
        Incident::Killed { after } => (
            VerdictCode::Killed,
            format!(
                "your script ran for {} ms without finishing (a loop that never ends?), so it \
                 was stopped with SCRIPT KILL: while it ran, Redis answered nobody else",
                after.as_millis()
            ),
        ),
        Incident::Restarted { why } => (
            VerdictCode::Restarted,
            format!("the sandbox had to be restarted: {why}"),
        ),
    };
    SolutionVerdict {
        exercise: exercise.id.into(),
        passed: false,
        verdict,
        message,
        counterexample: None,
        figures: None,
        took_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }
}

/// The CLI's check: a sandbox of its own, one check, stopped after.
pub async fn check_once(exercise: &str, source: &str) -> Result<SolutionVerdict, WireError> {
    let exercise = admit(exercise, source)?;
    if exercise.rules.on_cluster() {
        let cluster = ClusterSandbox::start()
            .await
            .map_err(|e| WireError::new(ErrorCode::RedisUnavailable, e.to_string()))?;
        return judge_on_cluster(&cluster, exercise, source).await;
    }
    let sandbox = Sandbox::start()
        .await
        .map_err(|e| WireError::new(ErrorCode::RedisUnavailable, e.to_string()))?;
    judge_in(&sandbox, exercise, source).await
}
