//! `redlock`: `lock`'s lock, taken on a majority of three independent Redis masters.
//!
//! `lock` keeps its lock on one Redis: when that server dies, nobody can take the lock (and
//! a replica promoted in its place may never have heard of it). Redlock, the algorithm the
//! Redis documentation proposes for this, asks several masters that share nothing (no
//! replication between them) and counts the lock as held when a majority said yes in time.
//! Two majorities of three always share a master, and a master holds one token at a time,
//! so while the leases last no two buyers hold a majority. One master can die or stall and
//! the other two still grant the lock: that is what it fixes.
//!
//! # What it does not fix
//! "While the leases last": each master's copy is still a lease. A holder stalled past it
//! (a GC pause, a stalled network, the stock's Redis itself asleep) loses the lock on every
//! master while it still works, a waiter gathers a fresh majority, and both read the same
//! stock: oversold exactly as `lock` is. Checking the clock again before the write would
//! only move the gap (the pause can come right after the check), so the buyer checks it
//! once, when the votes are in, as the algorithm does. `fenced_lock` is the fix: the stock
//! itself turns a stale holder away. And every try costs a round trip per master.
//!
//! # One try at the lock
//! `SET lock token NX PX lease` on every master at once, each connection waiting at most
//! [`VOTE_TIMEOUT`] for an answer. The try is decided as soon as a majority said OK, or
//! as soon as too many cannot say OK any more; a master that has not answered by then is
//! not waited for. The lock is held when a majority said OK and some of the lease is left
//! ([`validity`]). Otherwise the buyer gives back what it may have got (compare-and-delete,
//! `release_lock.lua`, on every master that did not refuse) and tries again after
//! `lock`'s jittered backoff, within `lock`'s wait budget and in its app server's queue (see
//! `lock.rs`). When a majority of the masters' connections are lost for good, no majority
//! can ever form, and the buyer says so at once instead of polling for 10 s.
//!
//! # Where the masters come from
//! The run starts three `redis-server`s of its own and stops them when it ends
//! (`lock_service.rs`); the stock stays where every race strategy's stock is. Not the shared
//! Redis: one server is no majority of anything. Not a cluster's three masters: each serves
//! only its own slots, so the lock would need a key name per master chosen by slot, and
//! killing a lock master would take a third of the cluster (perhaps the stock) with it; the
//! lesson is a lock master lost while the stock stays up.

use std::borrow::Cow;
use std::task::Poll;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::{BoxFuture, join_all};
use oversold_protocol::{
    Category, Explanation, Guard, OutcomeResult, Scenario, StrategyAbout, TapeRule, Tone, step,
    text,
};
use tokio::sync::Mutex;

use super::lock::{MAX_WAIT, backoff, lease_for, max_wait_for, queue_turn, read_check_write};
use super::{Attempt, Backend, Order, QuorumRedisBuyer, QuorumSeat, Strategy};
use crate::backends::LOCK_MASTERS;
use crate::store::{RedisConn, RunKeys, StoreError, lock};

/// Masters that must say OK: a majority, so that any two majorities share a master.
pub const QUORUM: usize = LOCK_MASTERS / 2 + 1;
/// How long a master's answer may take before it is no vote: far below the 2 s lease, far
/// above a loopback round trip on a busy machine.
pub const VOTE_TIMEOUT: Duration = Duration::from_millis(100);

/// The quorum lock strategy.
pub const STRATEGY: Strategy = Strategy {
    about: StrategyAbout {
        name: text("redlock"),
        label: text("Redlock (a lock on 2 of 3 masters)"),
        short_label: text("Redlock"),
        description: text(
            "Takes lock's SET NX PX lock on three independent Redis masters and holds it when two said OK in time, then \
             reads, checks and decrements. Survives a dead lock master; like lock, safe only while no holder stalls past \
             its lease.",
        ),
        unsafe_by_design: false,
        category: Category::Lock,
        featured: false,
        scripts: Cow::Borrowed(&[text("release_lock.lua")]),
        explanation: Explanation {
            title: text(
                "Why a lock on a majority of masters survives a dead master, but not a stalled holder",
            ),
            how: text(
                "Each buyer waits its turn at its app server, then sends SET lock token NX PX 2000 to three Redis masters \
                 that share nothing, at once. A master silent for 100 ms is no vote. With two OKs and time left on the \
                 lease (2 s, less the time the votes took and 1 % for clock drift), it holds the lock and does the naive \
                 GET, check, DECRBY on the stock; otherwise it gives back what it got and tries again. It releases with \
                 release_lock.lua on every master, and gives up after 10 s.",
            ),
            why: text(
                "Two majorities of three share at least one master, and a master keeps one token at a time, so while the \
                 leases last only one buyer holds two OKs. Kill or freeze one master and the other two still grant the \
                 lock, where lock, kept on one Redis, stops with it. But every OK is a lease: a holder that stalls past it \
                 loses the lock on all three masters while it still works, a waiter gathers two fresh OKs, and both read \
                 the same stock. More masters do not change that; fencing the stock does (fenced_lock).",
            ),
            cost: text(
                "A round trip per master for every try and every release: an uncontended order is 8 requests where lock's \
                 is 4, and the busy tries of waiting buyers cost three each. Three more Redis servers to run. Safety still \
                 rests on the holder finishing within its lease.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #7",
                    "SET lock t7 NX PX 2000 → A: OK · B: OK · C: (dead)",
                    "2 of 3: it holds the lock",
                    Tone::A,
                ),
                step(
                    "buyer #12",
                    "SET lock t12 NX PX 2000 → A: nil · B: nil",
                    "no majority: waits its turn",
                    Tone::B,
                ),
                step(
                    "buyer #7",
                    "GET → 1 · … stalls for 3 s …",
                    "its lease runs out on A and B",
                    Tone::Bad,
                ),
                step(
                    "buyer #12",
                    "SET lock t12 NX PX 2000 → A: OK · B: OK · GET → 1",
                    "a majority again: one left",
                    Tone::B,
                ),
                step("buyer #7", "DECRBY → 0", "sold the last unit", Tone::A),
                step(
                    "buyer #12",
                    "DECRBY → -1",
                    "sold it again: oversold",
                    Tone::Bad,
                ),
            ]),
        },
        tape: TapeRule::ReadThenDecrement { guard: Guard::Lock },
        scenario: Scenario::Race,
    },
    backend: Backend::QuorumRedis(&Redlock),
};

struct Redlock;

impl QuorumRedisBuyer for Redlock {
    fn buy<'a>(
        &'a self,
        seat: &'a Mutex<QuorumSeat>,
        order: Order<'a, RunKeys>,
    ) -> BoxFuture<'a, Attempt> {
        async move {
            let arrived = Instant::now();
            let deadline = arrived + max_wait_for(&order);
            let mut seat = match queue_turn(seat, deadline).await {
                Ok(seat) => seat,
                Err(gave_up) => return gave_up,
            };
            let queued = arrived.elapsed();
            let QuorumSeat { stock, masters } = &mut *seat;
            // This buyer alone uses the seat's connections until it lets go of the seat,
            // so what they sent meanwhile is exactly what it sent to the masters.
            let sent_before = sent(masters);
            let masters_sent = |masters: &[RedisConn]| (sent(masters) - sent_before) as u32;
            // Unique per attempt, so a release can never match another buyer's lock.
            let token = format!("{:016x}", rand::random::<u64>());
            let lease = lease_for(&order);

            let mut tries = 0;
            let round = loop {
                tries += 1;
                let round = ask_masters(masters, order.shelf, &token, lease).await;
                if round.held(lease) {
                    break round;
                }
                // No majority in time: give back what it may have got, so that the next
                // try (its own or another buyer's) finds those masters free.
                release(masters, order.shelf, &token, &round).await;
                if let Some(why) = majority_lost(masters) {
                    return no_majority(why, masters_sent(masters)).with_retries(tries - 1);
                }
                let now = Instant::now();
                if now >= deadline {
                    let why = gave_up_at_quorum(queued, tries);
                    return Attempt::gave_up(why, masters_sent(masters)).with_retries(tries - 1);
                }
                tokio::time::sleep(backoff(tries - 1).min(deadline - now)).await;
            };

            // Held: while the lease lasts on a majority, nobody else reads or writes the stock.
            let attempt = read_check_write(stock, &order).await;
            let still_ours = release(masters, order.shelf, &token, &round).await;
            let attempt = attempt
                .plus_round_trips(masters_sent(masters))
                .with_retries(tries - 1);
            if still_ours >= QUORUM {
                return attempt;
            }
            tracing::warn!(
                still_ours,
                "the lock expired on a majority of masters before release: the critical section \
                 outlived its lease"
            );
            Attempt {
                lease_lost: true,
                ..attempt
            }
        }
        .boxed()
    }
}

/// What one master said to `SET lock token NX PX lease`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Vote {
    /// `OK`: this master now holds our token.
    Granted,
    /// Nothing of ours is there: another token was (nil), Redis answered an error, or the
    /// connection had broken before, so nothing was sent.
    Refused,
    /// No answer yet, none in time, or the connection broke under the request: the SET may
    /// have landed (or land later), so the release goes there too.
    Unsure,
}

impl Vote {
    fn of(answer: Result<bool, StoreError>) -> Vote {
        match answer {
            Ok(true) => Vote::Granted,
            Ok(false) => Vote::Refused,
            Err(e) if e.in_doubt() => Vote::Unsure,
            Err(_) => Vote::Refused,
        }
    }
}

/// One try at the lock: each master's vote (in master order), and how long they took.
#[derive(Debug)]
struct Round {
    votes: [Vote; LOCK_MASTERS],
    took: Duration,
}

impl Round {
    /// A majority said OK, and some of the lease is left ([`validity`]).
    fn held(&self, lease: Duration) -> bool {
        let granted = self.votes.iter().filter(|v| **v == Vote::Granted).count();
        granted >= QUORUM && !validity(lease, self.took).is_zero()
    }
}

/// What is left of the lease once the votes are in: the lease, less the time the votes took
/// (the first OK started its master's timer that long ago), less an allowance for the
/// masters' clocks running faster than ours (1 % of the lease, plus 2 ms). Zero: the
/// majority came too late to count.
pub fn validity(lease: Duration, took: Duration) -> Duration {
    let drift = lease / 100 + Duration::from_millis(2);
    lease.saturating_sub(took + drift)
}

/// Ask every master at once; stop listening as soon as the try is decided. A master still
/// silent then stays [`Vote::Unsure`]: its request is on its connection (counted, and
/// sent), ahead of the release that will follow it there.
///
/// Each pass polls every master still to answer, so every SET goes out on the first pass.
/// (A `FuturesUnordered` can hand back two answers before it first polls the third: that
/// master would never be asked, and the request count of a try would depend on timing.)
async fn ask_masters(
    masters: &mut [RedisConn],
    keys: &RunKeys,
    token: &str,
    lease: Duration,
) -> Round {
    let started = Instant::now();
    let mut asked: Vec<_> = masters
        .iter_mut()
        .map(|conn| Box::pin(lock::try_lock(conn, keys, token, lease)))
        .collect();
    let mut votes: [Option<Vote>; LOCK_MASTERS] = [None; LOCK_MASTERS];
    std::future::poll_fn(|cx| {
        for (m, request) in asked.iter_mut().enumerate() {
            if votes[m].is_none()
                && let Poll::Ready(answer) = request.as_mut().poll(cx)
            {
                votes[m] = Some(Vote::of(answer));
            }
        }
        let count = |wanted: &[Vote]| {
            votes
                .iter()
                .flatten()
                .filter(|v| wanted.contains(v))
                .count()
        };
        let granted = count(&[Vote::Granted]);
        let not_granted = count(&[Vote::Refused, Vote::Unsure]);
        if granted >= QUORUM || not_granted > LOCK_MASTERS - QUORUM {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    Round {
        votes: votes.map(|v| v.unwrap_or(Vote::Unsure)),
        took: started.elapsed(),
    }
}

/// Give the lock back with `release_lock.lua`, at once, on every master that may hold our
/// token (all but those that refused it). Compare-and-delete, so a master where our lease
/// ran out and another token now sits is left alone. Returns how many of the masters that
/// granted the lock still held our token.
///
/// A master that was silent for the vote is released too: our SET may still be on its way
/// there, and a connection runs its requests in order, so the release lands right after
/// it. Waiting for that answer costs at most [`VOTE_TIMEOUT`], and only this app server's
/// next buyer waits for it: the masters that answered are free as soon as they do.
async fn release(masters: &mut [RedisConn], keys: &RunKeys, token: &str, round: &Round) -> usize {
    let releases = masters
        .iter_mut()
        .enumerate()
        .filter(|(m, _)| round.votes[*m] != Vote::Refused)
        .map(|(m, conn)| async move { (m, lock::release(conn, keys, token).await) });
    let mut still_ours = 0;
    for (m, released) in join_all(releases).await {
        match released {
            Ok(r) if r.reply && round.votes[m] == Vote::Granted => still_ours += 1,
            Ok(_) => {}
            // It expires on its own after its lease.
            Err(f) => tracing::debug!(error = %f.error, "could not release the lock on a master"),
        }
    }
    still_ours
}

/// Requests sent so far on these connections.
fn sent(masters: &[RedisConn]) -> u64 {
    masters.iter().map(RedisConn::requests_sent).sum()
}

/// Why no majority can ever form, when too many masters' connections are lost for good (a
/// lost connection stays lost: see `RedisConn`).
fn majority_lost(masters: &[RedisConn]) -> Option<String> {
    let lost = masters.iter().filter(|c| c.is_broken()).count();
    (lost > LOCK_MASTERS - QUORUM).then(|| {
        format!(
            "{lost} of the {LOCK_MASTERS} lock masters are unreachable: no majority can grant \
             the lock, so nothing was taken"
        )
    })
}

/// The buyer took nothing because the lock service has no majority left. Not an outage of
/// the store: the stock is fine, the run goes on (and every buyer after it says the same).
fn no_majority(why: String, round_trips: u32) -> Attempt {
    Attempt {
        error: Some(why),
        ..Attempt::new(OutcomeResult::Error, None, round_trips)
    }
}

/// Why a buyer that reached the front of its queue gave up after `tries` tries.
fn gave_up_at_quorum(queued: Duration, tries: u32) -> String {
    format!(
        "gave up after {} s waiting for the lock: {:.1} s in its app server's queue, then no \
         majority of the {LOCK_MASTERS} lock masters at any of its {tries} tries",
        MAX_WAIT.as_secs(),
        queued.as_secs_f64(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_majority_counts_only_with_time_left_on_the_lease() {
        use Vote::{Granted, Refused, Unsure};
        let lease = Duration::from_millis(2000);
        let round = |votes, ms| Round {
            votes,
            took: Duration::from_millis(ms),
        };
        assert!(round([Granted, Granted, Refused], 5).held(lease));
        assert!(round([Unsure, Granted, Granted], 5).held(lease));
        assert!(!round([Granted, Unsure, Refused], 5).held(lease));
        // 2 s less 22 ms of drift allowance: a majority gathered in 1.978 s is too late.
        assert!(round([Granted, Granted, Granted], 1977).held(lease));
        assert!(!round([Granted, Granted, Granted], 1978).held(lease));
        assert_eq!(
            validity(lease, Duration::from_millis(78)),
            Duration::from_millis(1900)
        );
    }

    #[test]
    fn quorum_is_a_majority() {
        assert_eq!((LOCK_MASTERS, QUORUM), (3, 2));
        assert!(VOTE_TIMEOUT * 10 < super::super::lock::LEASE);
    }
}
