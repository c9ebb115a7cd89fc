//! The judge: race a submitted script in seeded crowds on a real Redis, compare every reply
//! and the keys after with the exercise's model, and on a failure shrink the crowd to the
//! smallest that still breaks and return it as a tape.
//!
//! 1. Small crowds, one call at a time: after each call the keys are read back, so a
//!    failure is caught at the call that caused it.
//! 2. Larger crowds spread over [`APP_SERVERS`] connections at once, as app servers would
//!    send them; `MONITOR` tells the order Redis ran them in (a script runs whole, so that
//!    order is a serial history), and the model is replayed in it.
//! 3. A failure from either is replayed one call at a time in its order, calls are dropped
//!    while it still fails, and the last replay is recorded as the counterexample's tape.
//! 4. A pass is timed (`SLOWLOG`) and set beside the reference solution, judged on the same
//!    crowds.
//!
//! Where an exercise has a script of the shop's own (a reaper the submission must live
//! beside), its calls are part of the same crowds: sent on the same connections, ordered by
//! the same `MONITOR`, replayed in the same model. The judge only picks, call by call, which
//! script's SHA to send.
//!
//! It judges what Redis answered, never the script's text.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use oversold_protocol::workshop::{
    Call, Counterexample, Figures, SolutionVerdict, TapeLine, VerdictCode,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use redis::Value;

use super::exercises::{
    self, Broken, CallSpec, Crowd, Exercise, Expected, Rules, Script, Size, Write,
};
use super::monitor;
use super::sandbox::ClusterNode;
use crate::store::exercise::{self as cmds, ScriptReply};
use crate::store::sandbox::{cluster_key_prefix, key_prefix};
use crate::store::{RedisConn, Store, StoreError};

/// Small crowds checked one call at a time.
pub const SERIAL_CROWDS: u64 = 60;
/// Larger crowds raced over several connections.
pub const CONCURRENT_CROWDS: u64 = 20;
/// Connections a concurrent crowd is spread over.
pub const APP_SERVERS: usize = 4;
/// Replays the shrinking may make.
const SHRINK_TRIES: usize = 300;
/// Longest wait for a crowd's end marker on the `MONITOR` tape.
const TAPE_WAIT: Duration = Duration::from_secs(10);

/// Where a check runs: an admin connection for setup and read-back, the student's (its own
/// ACL user in the sandbox) for the calls, and the hash tag every key lives under.
pub struct Target<'a> {
    /// Setup, read-back, `MONITOR`, `SLOWLOG`.
    pub admin: &'a Store,
    /// The calls of the script.
    pub student: &'a Store,
    /// The check's hash tag.
    pub tag: &'a str,
}

/// Where a check of an exercise judged on a Redis Cluster runs ([`Rules::on_cluster`]): the
/// whole cluster as its admin, and each master with the check's student on it. The calls go
/// to the master that serves the submission's first key, as a cluster client would send
/// them; that master is also the one whose `MONITOR` and `SLOWLOG` the judge reads.
pub struct ClusterTarget<'a> {
    /// The cluster through a cluster client, as its admin: setup, read-back (each key on
    /// its own master) and the wipe between crowds (`FLUSHALL` on every master).
    pub admin: &'a Store,
    /// Every master.
    pub nodes: &'a [ClusterNode],
    /// The check's tag: its keys are `oversold:TAG:` and the names the submission chose
    /// (no braces in the prefix, so the submission's own hash tag decides the slot).
    pub tag: &'a str,
}

/// Why a check could not be made (the sandbox's Redis failed, not the script).
#[derive(Debug, thiserror::Error)]
#[error("the sandbox's Redis failed during the check: {0}")]
pub struct JudgeError(#[from] StoreError);

/// A crowd that broke the script: where, and how.
struct Failure {
    setup: Vec<Write>,
    calls: Vec<CallSpec>,
    broken: Broken,
    verdict: VerdictCode,
}

/// The keys a check's calls get, in [`Rules::keys`] order, and the prefix the tape cuts.
struct Keys {
    names: Vec<String>,
    prefix: String,
}

/// A verdict with no counterexample and no figures.
fn plain(exercise: &Exercise, code: VerdictCode, message: String) -> SolutionVerdict {
    SolutionVerdict {
        exercise: exercise.id.into(),
        passed: code == VerdictCode::Passed,
        verdict: code,
        message,
        counterexample: None,
        figures: None,
        took_ms: 0,
    }
}

/// Judge `source` as a solution of `exercise` on one Redis. An exercise judged on a Redis
/// Cluster ([`Rules::on_cluster`]) is refused here: see [`check_on_cluster`].
pub async fn check(
    target: &Target<'_>,
    exercise: &Exercise,
    source: &str,
) -> Result<SolutionVerdict, JudgeError> {
    if exercise.rules.on_cluster() {
        return Err(JudgeError(StoreError::Unexpected {
            op: "judge",
            detail: format!("{} is judged on a Redis Cluster only", exercise.id),
        }));
    }
    let prefix = key_prefix(target.tag);
    let keys = Keys {
        names: exercise
            .rules
            .keys()
            .iter()
            .map(|name| format!("{prefix}{name}"))
            .collect(),
        prefix,
    };
    let admin = Admin {
        node: target.admin.connect().await?,
        data: None,
    };
    judge(target, admin, keys, exercise, source).await
}

/// Judge `source` as a solution of `exercise` on a Redis Cluster: its keys are the names
/// its `-- keys:` line chooses ([`exercises::chosen_keys`]), under `oversold:TAG:`; each
/// call goes to the master serving the first of them, which refuses keys on different
/// slots with `CROSSSLOT` before the script runs a line.
pub async fn check_on_cluster(
    target: &ClusterTarget<'_>,
    exercise: &Exercise,
    source: &str,
) -> Result<SolutionVerdict, JudgeError> {
    let started = Instant::now();
    let prefix = cluster_key_prefix(target.tag);
    let names = match exercises::chosen_keys(exercise, source, &prefix) {
        Ok(names) => names,
        Err(why) => {
            let message = format!("the script does not name its keys: {why}");
            return Ok(timed(
                plain(exercise, VerdictCode::ScriptError, message),
                started,
            ));
        }
    };
    let data = target.admin.connect().await?;
    let first = names.first().map(String::as_str).unwrap_or_default();
    let node = data
        .node_of(first)
        .and_then(|addr| target.nodes.iter().find(|n| n.addr == addr))
        .ok_or_else(|| StoreError::Unexpected {
            op: "judge",
            detail: format!("no master of the cluster serves {first}"),
        })?;
    let on_node = Target {
        admin: &node.admin,
        student: &node.student,
        tag: target.tag,
    };
    let admin = Admin {
        node: node.admin.connect().await?,
        data: Some(data),
    };
    let keys = Keys { names, prefix };
    let verdict = judge(&on_node, admin, keys, exercise, source).await?;
    Ok(timed(verdict, started))
}

/// The judge's own connections: to the server that runs the calls, and, on a cluster, to
/// the whole cluster, where each key lives on its own master.
struct Admin {
    /// The server the calls go to: `SCRIPT LOAD`, `SLOWLOG`, markers.
    node: RedisConn,
    /// The cluster, for setup and read-back (`None`: `node` holds every key).
    data: Option<RedisConn>,
}

impl Admin {
    /// The connection that reaches every key.
    fn data(&mut self) -> &mut RedisConn {
        match &mut self.data {
            Some(data) => data,
            None => &mut self.node,
        }
    }
}

/// The check itself, wherever it runs.
async fn judge(
    target: &Target<'_>,
    mut admin: Admin,
    keys: Keys,
    exercise: &Exercise,
    source: &str,
) -> Result<SolutionVerdict, JudgeError> {
    let started = Instant::now();
    let admin = &mut admin;
    let verdict = |code, message| plain(exercise, code, message);
    let sha = match cmds::load(&mut admin.node, source).await? {
        Ok(sha) => sha,
        Err(why) => {
            let message = format!("the script does not compile: {why}");
            return Ok(timed(verdict(VerdictCode::ScriptError, message), started));
        }
    };
    let shop = match exercise.rules.shop_script() {
        Some(shop) => Some(load_ours(&mut admin.node, shop, "SCRIPT LOAD shop").await?),
        None => None,
    };
    let judge = Judge {
        target,
        exercise,
        submitted: Loaded {
            sha,
            source: source.to_string(),
        },
        shop,
        keys,
    };
    if let Some(failure) = judge.serial_crowds(admin).await? {
        return Ok(timed(judge.report(admin, failure).await?, started));
    }
    cmds::slowlog_everything(&mut admin.node).await?;
    let (calls, spent) = match judge.concurrent_crowds(admin).await? {
        Ok(done) => done,
        Err(failure) => return Ok(timed(judge.report(admin, failure).await?, started)),
    };
    let times = cmds::call_times_us(&mut admin.node).await?;
    let longest_us = times.first().copied().unwrap_or(0);
    let held_us = held_us(&times);
    let reference = judge.reference_figures(admin).await?;
    let figures = Figures {
        calls,
        calls_per_s: per_second(calls, spent),
        longest_us,
        reference_calls_per_s: reference.0,
        reference_longest_us: reference.1,
    };
    let mut answer = match exercise.rules.time_limit_us() {
        Some(limit) if held_us > limit => verdict(
            VerdictCode::TooSlow,
            format!(
                "every answer was right, but {SLOW_CALLS} calls or more held Redis for \
                 {held_us} µs or longer (the longest {longest_us} µs), past this exercise's \
                 limit of {limit} µs (the reference: {} µs); while a script runs, every other \
                 client waits",
                reference.1
            ),
        ),
        _ => verdict(
            VerdictCode::Passed,
            format!(
                "{} crowds and {calls} raced calls gave the contract's answers: {:.0} calls/s, \
                 longest call {longest_us} µs (the reference: {:.0} calls/s, {} µs)",
                SERIAL_CROWDS + CONCURRENT_CROWDS,
                figures.calls_per_s,
                reference.0,
                reference.1
            ),
        ),
    };
    answer.figures = Some(figures);
    Ok(timed(answer, started))
}

fn timed(mut v: SolutionVerdict, started: Instant) -> SolutionVerdict {
    v.took_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    v
}

fn per_second(calls: u32, spent: Duration) -> f64 {
    f64::from(calls) / spent.as_secs_f64().max(1e-6)
}

/// One check's fixed parts.
struct Judge<'a> {
    target: &'a Target<'a>,
    exercise: &'a Exercise,
    /// The submission.
    submitted: Loaded,
    /// The shop's own script, when the exercise has one.
    shop: Option<Loaded>,
    /// The check's keys.
    keys: Keys,
}

/// A script in the sandbox's cache: its SHA, and its text for an `EVAL` after `NOSCRIPT`.
struct Loaded {
    sha: String,
    source: String,
}

/// `SCRIPT LOAD` one of the lab's own scripts (a reference, a shop script): one that does
/// not compile is the lab's bug, not the student's.
async fn load_ours(
    admin: &mut RedisConn,
    source: &str,
    op: &'static str,
) -> Result<Loaded, StoreError> {
    let sha = cmds::load(admin, source)
        .await?
        .map_err(|why| StoreError::Unexpected { op, detail: why })?;
    Ok(Loaded {
        sha,
        source: source.to_string(),
    })
}

/// What one call did, in a serial replay.
struct Step {
    reply: String,
    broken: Option<Broken>,
    after: Vec<Option<String>>,
}

impl Judge<'_> {
    /// The script `call` runs: `submitted` (the submission, or the reference being timed)
    /// unless it is the shop's.
    fn script_for<'s>(&'s self, call: &CallSpec, submitted: &'s Loaded) -> &'s Loaded {
        match (call.script, &self.shop) {
            (Script::Shop, Some(shop)) => shop,
            _ => submitted,
        }
    }

    /// The check's keys: `oversold:{TAG}:NAME`, or on a cluster the names the submission
    /// chose.
    fn keys(&self) -> Vec<String> {
        self.keys.names.clone()
    }

    /// The check's keys as a student reads them: without the check's prefix.
    fn short_keys(&self) -> Vec<String> {
        self.keys
            .names
            .iter()
            .map(|k| k.strip_prefix(&self.keys.prefix).unwrap_or(k).to_string())
            .collect()
    }

    /// Empty the sandbox and write a crowd's setup.
    async fn set_up(&self, admin: &mut Admin, setup: &[Write]) -> Result<(), StoreError> {
        cmds::wipe(admin.data()).await?;
        let keys = self.keys();
        for w in setup {
            match w {
                Write::Set(k, v) => cmds::set(admin.data(), &keys[*k], v).await?,
                Write::Units(k, n) => cmds::units(admin.data(), &keys[*k], *n).await?,
            }
        }
        Ok(())
    }

    /// Phase 1: small crowds, one call at a time.
    async fn serial_crowds(&self, admin: &mut Admin) -> Result<Option<Failure>, StoreError> {
        for seed in 0..SERIAL_CROWDS {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let crowd = self.exercise.rules.crowd(&mut rng, Size::Small);
            if let Some(f) = self.replay(admin, &crowd.setup, &crowd.calls).await? {
                return Ok(Some(f));
            }
        }
        Ok(None)
    }

    /// Run `calls` one at a time after `setup`; the first call that breaks the contract.
    async fn replay(
        &self,
        admin: &mut Admin,
        setup: &[Write],
        calls: &[CallSpec],
    ) -> Result<Option<Failure>, StoreError> {
        let steps = self.replay_steps(admin, setup, calls, true).await?;
        Ok(steps.into_iter().enumerate().find_map(|(i, s)| {
            s.broken.map(|broken| Failure {
                setup: setup.to_vec(),
                calls: calls[..=i].to_vec(),
                verdict: self.exercise.rules.classify(&broken),
                broken,
            })
        }))
    }

    /// Run `calls` one at a time, comparing each with the model (stopping at the first that
    /// breaks when `stop`).
    async fn replay_steps(
        &self,
        admin: &mut Admin,
        setup: &[Write],
        calls: &[CallSpec],
        stop: bool,
    ) -> Result<Vec<Step>, StoreError> {
        self.set_up(admin, setup).await?;
        let mut student = self.target.student.connect().await?;
        let mut model = self.exercise.rules.model(setup);
        let keys = self.keys();
        let mut steps = Vec::with_capacity(calls.len());
        for (i, call) in calls.iter().enumerate() {
            let script = self.script_for(call, &self.submitted);
            let reply =
                cmds::call(&mut student, &script.sha, &script.source, &keys, &call.args).await?;
            let expected = model.call(&call.args);
            let mut after = Vec::new();
            for key in &keys {
                after.push(cmds::read(admin.data(), key).await?);
            }
            let repeat = calls[..i].iter().any(|c| c.args == call.args);
            let checked = checked_keys(self.exercise.rules, &after, model.checked());
            let broken = compare(&call.args, &expected, &reply, checked, &keys, repeat);
            let done = broken.is_some() && stop;
            steps.push(Step {
                reply: words(&reply),
                broken,
                after,
            });
            if done {
                break;
            }
        }
        Ok(steps)
    }

    /// Phase 2: larger crowds raced over several connections. `Ok(Ok((calls, time)))` when
    /// every crowd held.
    async fn concurrent_crowds(
        &self,
        admin: &mut Admin,
    ) -> Result<Result<(u32, Duration), Failure>, StoreError> {
        let (mut calls, mut spent) = (0u32, Duration::ZERO);
        for seed in 0..CONCURRENT_CROWDS {
            let mut rng = ChaCha8Rng::seed_from_u64(1_000 + seed);
            let crowd = self.exercise.rules.crowd(&mut rng, Size::Large);
            let raced = self.race(admin, &crowd, &self.submitted).await?;
            calls += u32::try_from(crowd.calls.len()).unwrap_or(u32::MAX);
            spent += raced.spent;
            if let Some(f) = self.judge_order(admin, &crowd, &raced).await? {
                return Ok(Err(f));
            }
            // A script already past its time limit will not come back under it: stop here.
            if let Some(limit) = self.exercise.rules.time_limit_us()
                && held_us(&cmds::call_times_us(&mut admin.node).await?) > limit
            {
                break;
            }
        }
        Ok(Ok((calls, spent)))
    }

    /// Replay the model in the order Redis ran a raced crowd; a failure is then replayed
    /// one call at a time in that order (which reproduces it: each call ran whole).
    async fn judge_order(
        &self,
        admin: &mut Admin,
        crowd: &Crowd,
        raced: &Raced,
    ) -> Result<Option<Failure>, StoreError> {
        let mut model = self.exercise.rules.model(&crowd.setup);
        let keys = self.keys();
        let mut broke = false;
        for &i in &raced.order {
            let call = &crowd.calls[i];
            let expected = model.call(&call.args);
            if compare_reply(&expected, &raced.replies[i]).is_some() {
                broke = true;
                break;
            }
        }
        if !broke {
            let mut after = Vec::new();
            for key in &keys {
                after.push(cmds::read(admin.data(), key).await?);
            }
            let checked = checked_keys(self.exercise.rules, &after, model.checked());
            broke = first_state_mismatch(&checked, &keys).is_some();
        }
        if !broke {
            return Ok(None);
        }
        let in_order: Vec<CallSpec> = raced
            .order
            .iter()
            .map(|&i| crowd.calls[i].clone())
            .collect();
        self.replay(admin, &crowd.setup, &in_order).await
    }

    /// The reference solution through the same concurrent crowds: its calls a second and
    /// its longest call.
    async fn reference_figures(&self, admin: &mut Admin) -> Result<(f64, u64), StoreError> {
        let reference = load_ours(
            &mut admin.node,
            self.exercise.reference,
            "SCRIPT LOAD reference",
        )
        .await?;
        cmds::slowlog_everything(&mut admin.node).await?;
        let (mut calls, mut spent) = (0u32, Duration::ZERO);
        for seed in 0..CONCURRENT_CROWDS {
            let mut rng = ChaCha8Rng::seed_from_u64(1_000 + seed);
            let crowd = self.exercise.rules.crowd(&mut rng, Size::Large);
            spent += self.race(admin, &crowd, &reference).await?.spent;
            calls += u32::try_from(crowd.calls.len()).unwrap_or(u32::MAX);
        }
        Ok((
            per_second(calls, spent),
            cmds::longest_call_us(&mut admin.node).await?,
        ))
    }

    /// Shrink a failure: drop calls while it still fails, then replay the smallest with
    /// `MONITOR` on for its tape.
    async fn report(
        &self,
        admin: &mut Admin,
        failure: Failure,
    ) -> Result<SolutionVerdict, StoreError> {
        let failure = self.shrink(admin, failure).await?;
        let tape = self.tape(admin, &failure).await?;
        let message = sentence(&failure, &self.keys.prefix);
        Ok(SolutionVerdict {
            exercise: self.exercise.id.into(),
            passed: false,
            verdict: failure.verdict,
            message,
            counterexample: Some(Counterexample {
                setup: setup_words(&failure.setup, &self.short_keys()),
                calls: failure
                    .calls
                    .iter()
                    .map(|c| Call {
                        buyer: c.buyer,
                        keys: self.short_keys(),
                        args: c.args.clone(),
                    })
                    .collect(),
                tape,
            }),
            figures: None,
            took_ms: 0,
        })
    }

    async fn shrink(&self, admin: &mut Admin, mut best: Failure) -> Result<Failure, StoreError> {
        let mut tries = 0;
        let mut i = best.calls.len().saturating_sub(1);
        // The failing call is last; try dropping each call before it, latest first.
        while i > 0 && tries < SHRINK_TRIES {
            i -= 1;
            tries += 1;
            let mut fewer = best.calls.clone();
            fewer.remove(i);
            if let Some(f) = self.replay(admin, &best.setup, &fewer).await?
                && f.verdict == best.verdict
            {
                best = f;
                i = i.min(best.calls.len().saturating_sub(1));
            }
        }
        // Then a smaller stock, while it still fails the same way.
        while tries < SHRINK_TRIES {
            tries += 1;
            let Some(smaller) = smaller_setup(&best.setup) else {
                break;
            };
            match self.replay(admin, &smaller, &best.calls).await? {
                Some(f) if f.verdict == best.verdict => best = f,
                _ => break,
            }
        }
        Ok(best)
    }

    /// The failure replayed with `MONITOR` on: every call and every command its script ran,
    /// in Redis's order, with the replies and the keys after each call.
    async fn tape(&self, admin: &mut Admin, f: &Failure) -> Result<Vec<TapeLine>, StoreError> {
        let monitor = self.target.admin.monitor().await?;
        let mut lines = monitor.into_on_message::<String>();
        let steps = self.replay_steps(admin, &f.setup, &f.calls, false).await?;
        let end = format!("oversold-tape-end-{}", self.target.tag);
        cmds::mark(&mut admin.node, &end).await?;
        let names = self.short_keys();
        let prefix = &self.keys.prefix;
        // Call `i`'s own line: the command, the keys and `ARGV`, its reply and the stock after.
        let call_line = |cmd: &str, i: usize| {
            let c = &f.calls[i];
            let step = steps.get(i);
            let whose = match c.script {
                Script::Submitted => "",
                Script::Shop => " (the shop's script)",
            };
            TapeLine {
                buyer: c.buyer,
                inside: false,
                command: format!(
                    "{cmd}{whose} {} {}",
                    names.join(" "),
                    c.args
                        .iter()
                        .map(|a| format!("{a:?}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
                reply: step.map(|s| s.reply.clone()).unwrap_or_default(),
                stock_after: step.and_then(|s| s.after.first().cloned().flatten()),
                expected: step
                    .and_then(|s| s.broken.as_ref())
                    .map(|b| b.expected.to_string()),
            }
        };
        let mut tape = Vec::new();
        let mut call = 0usize;
        let deadline = tokio::time::Instant::now() + TAPE_WAIT;
        while let Ok(Some(raw)) = tokio::time::timeout_at(deadline, lines.next()).await {
            let Some(line) = monitor::parse(&raw) else {
                continue;
            };
            if line.words.last().is_some_and(|w| *w == end) {
                break;
            }
            let cmd = line.command();
            if line.is_inside_script() && call > 0 {
                tape.push(TapeLine {
                    buyer: f.calls[call - 1].buyer,
                    inside: true,
                    command: shorten(&line.words, prefix),
                    reply: String::new(),
                    stock_after: None,
                    expected: None,
                });
            } else if matches!(cmd.as_str(), "EVALSHA" | "EVAL") && call < f.calls.len() {
                tape.push(call_line(&cmd, call));
                call += 1;
            }
        }
        // A call Redis refused before running it (a cluster's CROSSSLOT) never reaches
        // MONITOR: its line comes from the replay, as the judge sent it.
        for i in call..f.calls.len() {
            tape.push(call_line("EVALSHA", i));
        }
        Ok(tape)
    }
}

/// A raced crowd: each call's reply (by its index in the crowd), the order Redis ran them
/// in, and the time the crowd took.
struct Raced {
    replies: Vec<ScriptReply>,
    order: Vec<usize>,
    spent: Duration,
}

impl Judge<'_> {
    /// Spread the crowd's calls over [`APP_SERVERS`] connections (call `i` on connection
    /// `i % APP_SERVERS`, each connection's calls one after another), all at once, with
    /// `MONITOR` recording the order.
    async fn race(
        &self,
        admin: &mut Admin,
        crowd: &Crowd,
        submitted: &Loaded,
    ) -> Result<Raced, StoreError> {
        self.set_up(admin, &crowd.setup).await?;
        let monitor = self.target.admin.monitor().await?;
        let mut lines = monitor.into_on_message::<String>();
        let mut conns = Vec::with_capacity(APP_SERVERS);
        for k in 0..APP_SERVERS {
            let mut c = self.target.student.connect().await?;
            cmds::mark(&mut c, &format!("oversold-app-{k}")).await?;
            conns.push(c);
        }
        let keys = self.keys();
        let started = Instant::now();
        let mut tasks = tokio::task::JoinSet::new();
        for (k, mut conn) in conns.into_iter().enumerate() {
            // Each call with its script's SHA and text.
            let mine: Vec<(usize, Vec<String>, String, String)> = crowd
                .calls
                .iter()
                .enumerate()
                .filter(|(i, _)| i % APP_SERVERS == k)
                .map(|(i, c)| {
                    let script = self.script_for(c, submitted);
                    (i, c.args.clone(), script.sha.clone(), script.source.clone())
                })
                .collect();
            let keys = keys.clone();
            tasks.spawn(async move {
                let mut out = Vec::with_capacity(mine.len());
                for (i, args, sha, source) in mine {
                    out.push((i, cmds::call(&mut conn, &sha, &source, &keys, &args).await?));
                }
                Ok::<_, StoreError>(out)
            });
        }
        let mut replies = vec![ScriptReply::Value(Value::Nil); crowd.calls.len()];
        while let Some(done) = tasks.join_next().await {
            let done = done.map_err(|e| StoreError::Unexpected {
                op: "race task",
                detail: e.to_string(),
            })??;
            for (i, reply) in done {
                replies[i] = reply;
            }
        }
        let spent = started.elapsed();
        let end = format!("oversold-race-end-{}", self.target.tag);
        cmds::mark(&mut admin.node, &end).await?;
        let order = read_order(&mut lines, &end, crowd.calls.len()).await;
        Ok(Raced {
            replies,
            order,
            spent,
        })
    }
}

/// The order Redis ran a raced crowd's calls in, from its `MONITOR` lines: which connection
/// is which by its marker, and each connection's calls in the order it sent them.
async fn read_order(
    lines: &mut (impl futures_util::Stream<Item = String> + Unpin),
    end: &str,
    calls: usize,
) -> Vec<usize> {
    let mut app_of: std::collections::HashMap<String, usize> = Default::default();
    let mut sent = [0usize; APP_SERVERS];
    let mut order = Vec::with_capacity(calls);
    let deadline = tokio::time::Instant::now() + TAPE_WAIT;
    while let Ok(Some(raw)) = tokio::time::timeout_at(deadline, lines.next()).await {
        let Some(line) = monitor::parse(&raw) else {
            continue;
        };
        if line.words.last().is_some_and(|w| w == end) {
            break;
        }
        let cmd = line.command();
        if cmd == "PING" {
            if let Some(k) = line
                .words
                .get(1)
                .and_then(|w| w.strip_prefix("oversold-app-"))
                .and_then(|k| k.parse::<usize>().ok())
                .filter(|k| *k < APP_SERVERS)
            {
                app_of.insert(line.client.clone(), k);
            }
        } else if matches!(cmd.as_str(), "EVALSHA" | "EVAL")
            && let Some(&k) = app_of.get(&line.client)
        {
            // The scripts are loaded before the crowd (SCRIPT LOAD), so an EVALSHA never
            // meets NOSCRIPT here and each call is one line, whichever script it runs.
            order.push(sent[k] * APP_SERVERS + k);
            sent[k] += 1;
        }
    }
    order.retain(|&i| i < calls);
    order
}

/// A reply as the tape and the messages show it.
fn words(reply: &ScriptReply) -> String {
    match reply {
        ScriptReply::Error(text) => format!("error: {text}"),
        ScriptReply::Value(v) => value_words(v),
    }
}

fn value_words(v: &Value) -> String {
    match v {
        Value::Nil => "nil".into(),
        Value::Int(n) => n.to_string(),
        Value::BulkString(b) => format!("{:?}", String::from_utf8_lossy(b)),
        Value::SimpleString(s) => s.clone(),
        Value::Okay => "OK".into(),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(value_words).collect::<Vec<_>>().join(", ")
        ),
        other => format!("{other:?}"),
    }
}

/// Does the reply match the contract's? `Some((got, got_error))` when it does not.
fn compare_reply(expected: &Expected, reply: &ScriptReply) -> Option<(String, bool)> {
    let ok = match (expected, reply) {
        (Expected::Int(n), ScriptReply::Value(Value::Int(m))) => n == m,
        (Expected::Error(prefix), ScriptReply::Error(text)) => text.starts_with(prefix),
        _ => false,
    };
    (!ok).then(|| (words(reply), matches!(reply, ScriptReply::Error(_))))
}

/// Every key the model checks, after a call: `(index, expected, found)`, both in the form
/// they are compared in (the exercise's [`Rules::normalize`], then a missing key read as 0).
fn checked_keys(
    rules: &dyn Rules,
    after: &[Option<String>],
    checked: Vec<(usize, Option<String>)>,
) -> Vec<(usize, Option<String>, Option<String>)> {
    checked
        .into_iter()
        .map(|(k, want)| {
            let found = normalize(rules.normalize(k, after.get(k).cloned().flatten()));
            (k, normalize(rules.normalize(k, want)), found)
        })
        .collect()
}

/// The first checked key that holds something else than the model says.
fn first_state_mismatch(
    checked: &[(usize, Option<String>, Option<String>)],
    keys: &[String],
) -> Option<(String, Option<String>, Option<String>)> {
    checked
        .iter()
        .find(|(_, want, found)| want != found)
        .map(|(k, want, found)| (keys[*k].clone(), want.clone(), found.clone()))
}

/// A missing counter and `"0"` are the same stock.
fn normalize(v: Option<String>) -> Option<String> {
    match v.as_deref() {
        None | Some("0") => Some("0".into()),
        _ => v,
    }
}

fn compare(
    args: &[String],
    expected: &Expected,
    reply: &ScriptReply,
    checked: Vec<(usize, Option<String>, Option<String>)>,
    keys: &[String],
    repeat: bool,
) -> Option<Broken> {
    let replied = compare_reply(expected, reply);
    let state = first_state_mismatch(&checked, keys);
    if replied.is_none() && state.is_none() {
        return None;
    }
    let (got, got_error) =
        replied.unwrap_or_else(|| (words(reply), matches!(reply, ScriptReply::Error(_))));
    Some(Broken {
        args: args.to_vec(),
        repeat,
        expected: expected.clone(),
        got,
        got_error,
        state,
        checked,
    })
}

/// The setup, smaller: the first numeric value one lower (not below 0), or a list shorter.
fn smaller_setup(setup: &[Write]) -> Option<Vec<Write>> {
    let mut out = setup.to_vec();
    for w in &mut out {
        match w {
            Write::Set(_, v) => {
                if let Ok(n) = v.parse::<i64>()
                    && n > 0
                    && super::exercises::canonical(v).is_some()
                {
                    *v = (n - 1).to_string();
                    return Some(out);
                }
            }
            Write::Units(_, n) if *n > 1 => {
                *n -= 1;
                return Some(out);
            }
            Write::Units(..) => {}
        }
    }
    None
}

fn setup_words(setup: &[Write], names: &[String]) -> Vec<String> {
    if setup.is_empty() {
        return names.iter().map(|n| format!("{n} missing")).collect();
    }
    setup
        .iter()
        .map(|w| match w {
            Write::Set(k, v) => format!("{} = {v:?}", names[*k]),
            Write::Units(k, n) => format!("{} = a list of {n} units", names[*k]),
        })
        .collect()
}

/// A command of the tape, with the check's key prefix cut.
fn shorten(words: &[String], prefix: &str) -> String {
    words
        .iter()
        .map(|w| w.strip_prefix(prefix).unwrap_or(w).to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The failure in one plain sentence (`prefix`: the check's, cut from a key's name).
fn sentence(f: &Failure, prefix: &str) -> String {
    let last = f.calls.last().expect("a failure has a call");
    let n = f.calls.len();
    let args = last
        .args
        .iter()
        .map(|a| format!("{a:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let b = &f.broken;
    let keys = b.state.as_ref().map(|(key, want, found)| {
        let key = key.strip_prefix(prefix).unwrap_or(key);
        format!(
            "{key} should hold {} but holds {}",
            want.as_deref().unwrap_or("nothing"),
            found.as_deref().unwrap_or("nothing")
        )
    });
    let state = keys.as_ref().map(|k| format!("; {k}")).unwrap_or_default();
    // The reaper's calls belong to no buyer; the shop's own script is not the student's.
    let who = match last.buyer {
        0 => "the reaper".to_string(),
        buyer => format!("buyer {buyer}"),
    };
    let yours = match last.script {
        Script::Submitted => "your script",
        Script::Shop => "the shop's script, after yours,",
    };
    let (got, want) = (&b.got, &b.expected);
    // The reply and the keys after; a step can break with the right reply and wrong keys.
    let answered = match &keys {
        Some(keys) if *got == want.to_string() => {
            format!("{yours} answered {got} as the contract does, yet {keys}")
        }
        _ => format!("the contract answers {want}, {yours} answered {got}{state}"),
    };
    match f.verdict {
        VerdictCode::Oversold => format!(
            "call {n} ({who}, ARGV {args}) was answered {got} although there were not enough \
             units: the contract answers {want}{state}: units that do not exist were sold"
        ),
        VerdictCode::SoldTwice => format!(
            "call {n} ({who}, ARGV {args}): {answered}: the shop now counts more units \
             than it has (on the shelf, held and sold together), so the same units can be \
             sold twice"
        ),
        VerdictCode::Duplicate => format!(
            "call {n} resent {who}'s request (ARGV {args}): the contract answers {want} again \
             and takes nothing; {yours} answered {got}{state}"
        ),
        VerdictCode::BadInputAccepted => format!(
            "call {n} ({who}, ARGV {args}) is bad input: the contract answers {want} and \
             changes nothing; {yours} answered {got}{state}"
        ),
        VerdictCode::PartialCart => format!(
            "call {n} ({who}, ARGV {args}) should take every line or none, and {yours} \
             answered {got} after taking some{state}: Redis does not undo what a script \
             already wrote"
        ),
        VerdictCode::LimitBroken => format!(
            "call {n} ({who}, ARGV {args}) would take its customer past the limit: the \
             contract answers {want}, {yours} answered {got}{state}"
        ),
        VerdictCode::Noperm => {
            format!("call {n}: {yours} used a command or a key it may not: {got}")
        }
        VerdictCode::ScriptError => format!("call {n} ({who}, ARGV {args}) raised an error: {got}"),
        VerdictCode::Crossslot => format!(
            "call {n} ({who}, ARGV {args}) was refused by the cluster before your script ran a \
             line ({got}): the names your `-- keys:` line gives hash to different slots, and a \
             script's keys must share one"
        ),
        _ => format!("call {n} ({who}, ARGV {args}): {answered}"),
    }
}

/// A script is too slow when this many of its calls (not one) are past the limit: on a busy
/// machine the scheduler can stretch any one call, while a slow script is slow on every call
/// on the long shelf.
const SLOW_CALLS: usize = 3;

/// The time that at least [`SLOW_CALLS`] calls held Redis for (`times` longest first), µs.
fn held_us(times: &[u64]) -> u64 {
    times
        .get(SLOW_CALLS - 1)
        .or(times.last())
        .copied()
        .unwrap_or(0)
}
