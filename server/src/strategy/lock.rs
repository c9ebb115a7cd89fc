//! `lock`: a per-SKU lock in Redis around the naive read-check-write.
//!
//! The buyer takes the lock with `SET lock token NX PX lease` (only one caller can create
//! the key), then does exactly what `naive` does: GET, check in Rust, DECRBY. Because only
//! the lock holder reads and writes, the gap between read and write is harmless. It gives
//! the lock back with `release_lock.lua`, which deletes the key only if it still holds this
//! buyer's token: if the lock had expired and someone else took it, a bare DEL would free
//! *their* lock.
//!
//! # Safe only while no holder stalls past its lease
//! The lock expires after [`LEASE`] plus the race window, so a buyer that dies holding it
//! stalls the others only that long. The flip side is the real lesson of a lease: a holder
//! stalled for longer than that (a GC pause, a network stall, Redis itself paused) loses
//! the lock while it is still working, someone else takes it, and two buyers read and write
//! at once; at the last unit, both sell it. The buyer notices only afterwards, when the
//! release finds the lock gone ([`Attempt::lease_lost`]). `fenced_lock` closes that hole;
//! Lua or WATCH never had it.
//!
//! # Waiting is bounded, and queued locally first
//! Waiters poll: each failed `SET NX` is a round trip. If every buyer polled, ten thousand
//! waiters would flood Redis with `SET NX` and the holder's own GET, DECRBY and release
//! would queue behind them, so the lock would be held longer and almost nobody would get it.
//! So the buyers of one app server take turns at their app server's connection first (a
//! FIFO queue, like a connection pool of one): at most one buyer per app server polls the
//! lock, and it keeps the connection until it has given the lock back. That per-app-server
//! queue is why this strategy uses [`Backend::ExclusiveRedis`]: the engine already gives
//! each app server one `Mutex<RedisConn>` that buyers hold one at a time (tokio's mutex is
//! first come, first served), so no state outside the run is needed.
//!
//! Each buyer has [`MAX_WAIT`] from its arrival to get the lock, in the queue and at the
//! lock together; after that it ends `gave_up` (it took nothing) and says where it waited.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, Guard, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};
use tokio::sync::{Mutex, MutexGuard};

use super::{Attempt, Backend, ExclusiveRedisBuyer, Order, Strategy};
use crate::store::scripts::{CallFailed, Called};
use crate::store::{RedisConn, RunKeys, lock, stock};

/// How long the lock lives beyond the race window. Far longer than GET plus DECRBY; a
/// holder stalled longer than this loses the lock while it still works.
pub const LEASE: Duration = Duration::from_millis(2000);
/// How long a buyer waits for the lock, from its arrival, before it gives up: its turn in
/// its app server's queue and its tries at the lock together.
pub const MAX_WAIT: Duration = Duration::from_secs(10);

/// The lease a buyer's lock gets: [`LEASE`] plus its race window, or, stepped by hand, the
/// step session's whole idle limit (a person thinking between two clicks must not watch the
/// lock expire under the first buyer: that is a stall lesson, told by the stall tests).
pub fn lease_for<S>(order: &Order<'_, S>) -> Duration {
    if order.by_hand {
        super::BY_HAND_IDLE
    } else {
        LEASE + order.race_window
    }
}

/// How long a buyer may wait for the lock, from its arrival (see [`lease_for`]).
pub fn max_wait_for<S>(order: &Order<'_, S>) -> Duration {
    if order.by_hand {
        super::BY_HAND_IDLE
    } else {
        MAX_WAIT
    }
}
/// First pause after a busy answer. Pauses double up to [`BACKOFF_CAP`], with jitter.
const BACKOFF_START: Duration = Duration::from_millis(1);
/// Longest pause between tries. Short, because at most one buyer per app server polls: a
/// long pause would leave the lock idle after each release.
const BACKOFF_CAP: Duration = Duration::from_millis(8);

/// The lock-per-SKU strategy.
pub const STRATEGY: Strategy = Strategy {
    about: StrategyAbout {
        name: text("lock"),
        label: text("Lock per SKU (SET NX PX)"),
        short_label: text("Lock"),
        description: text(
            "Takes a Redis lock (SET NX PX), reads, checks and decrements, then releases it by token. Buyers take turns; \
             safe only while no holder stalls past the lock's lease.",
        ),
        unsafe_by_design: false,
        category: Category::Lock,
        featured: false,
        scripts: Cow::Borrowed(&[text("release_lock.lua")]),
        explanation: Explanation {
            title: text("Why a lock per SKU is safe only while no holder stalls past its lease"),
            how: text(
                "Each buyer waits its turn at its app server, takes a lock with SET lock token NX PX (a lease of 2 s), then does \
                 the naive GET, check, DECRBY, then releases the lock with release_lock.lua. A buyer that has not got the lock \
                 10 s after arriving gives up.",
            ),
            why: text(
                "Only one buyer can create the lock key, so while the lease lasts only the holder reads and writes, and the gap \
                 between read and write no longer matters. But the lease is a timer: if the holder stalls longer than that (a GC \
                 pause, a network stall, Redis paused), the lock expires under it, a second buyer takes it, and both read the \
                 same stock. The release script deletes the lock only if it still holds this buyer's token, so the late holder \
                 at least does not free someone else's lock; it cannot undo its sale.",
            ),
            cost: text(
                "Every buyer of the SKU queues behind one holder, and the waiting head of each app server's queue polls: each \
                 busy SET NX is another round trip. When the queue is longer than 10 s of turns, the buyers at its back give up. \
                 Safety rests on a timing assumption that Lua, WATCH and fenced_lock do not make.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #7",
                    "SET lock t7 NX PX 2000 → OK · GET → 1",
                    "holds the lock; one left",
                    Tone::A,
                ),
                step(
                    "buyer #7",
                    "… stalls for 3 s …",
                    "its lease runs out under it",
                    Tone::Bad,
                ),
                step(
                    "buyer #12",
                    "SET lock t12 NX PX 2000 → OK · GET → 1",
                    "the lock was free: one left",
                    Tone::B,
                ),
                step("buyer #7", "DECRBY → 0", "sold the last unit", Tone::A),
                step(
                    "buyer #12",
                    "DECRBY → -1",
                    "sold it again: oversold",
                    Tone::Bad,
                ),
                step(
                    "buyer #7",
                    "EVALSHA release_lock t7 → 0",
                    "not its lock any more: too late",
                    Tone::A,
                ),
            ]),
        },
        tape: TapeRule::ReadThenDecrement { guard: Guard::Lock },
        scenario: Scenario::Race,
    },
    backend: Backend::ExclusiveRedis(&Lock),
};

struct Lock;

impl ExclusiveRedisBuyer for Lock {
    fn buy<'a>(
        &'a self,
        link: &'a Mutex<RedisConn>,
        order: Order<'a, RunKeys>,
    ) -> BoxFuture<'a, Attempt> {
        async move {
            let arrived = Instant::now();
            let deadline = arrived + max_wait_for(&order);
            let mut conn = match queue_turn(link, deadline).await {
                Ok(conn) => conn,
                Err(gave_up) => return gave_up,
            };
            let queued = arrived.elapsed();
            // Unique per attempt, so a release can never match another buyer's lock.
            let token = format!("{:016x}", rand::random::<u64>());
            let lease = lease_for(&order);

            let mut round_trips = 0;
            let mut busy = 0;
            loop {
                round_trips += 1;
                match lock::try_lock(&mut conn, order.shelf, &token, lease).await {
                    Ok(true) => break,
                    Ok(false) => busy += 1,
                    Err(e) => {
                        return Attempt::read_failed(&e, None, round_trips).with_retries(busy);
                    }
                }
                let now = Instant::now();
                if now >= deadline {
                    let why = gave_up_at_lock(queued, busy);
                    return Attempt::gave_up(why, round_trips).with_retries(busy - 1);
                }
                tokio::time::sleep(backoff(busy - 1).min(deadline - now)).await;
            }

            // Held: while the lease lasts, nobody else reads or writes the stock.
            let attempt = read_check_write(&mut conn, &order).await;
            let released = lock::release(&mut conn, order.shelf, &token).await;
            settle(attempt.plus_round_trips(round_trips), released).with_retries(busy)
        }
        .boxed()
    }
}

/// The naive GET, check, DECRBY, done while holding the lock (`redlock`'s too).
pub(super) async fn read_check_write(conn: &mut RedisConn, order: &Order<'_, RunKeys>) -> Attempt {
    let (keys, qty) = (order.shelf, order.qty);
    let observed = match stock::get(conn, keys).await {
        Ok(v) => v.unwrap_or(0),
        Err(e) => return Attempt::read_failed(&e, None, 1),
    };
    let read_at = Instant::now();
    if observed < i64::from(qty) {
        return Attempt::sold_out(Some(observed), 1).with_read_at(read_at);
    }
    // The app thinks (or stalls) here, holding the lock.
    if !order.race_window.is_zero() {
        tokio::time::sleep(order.race_window).await;
    }
    match stock::decr_by(conn, keys, qty).await {
        Ok(after) => Attempt::reserved(Some(observed), after, 2),
        Err(e) => Attempt::write_failed(&e, Some(observed), 2),
    }
    .with_read_at(read_at)
}

/// Wait for this buyer's turn at its app server's connection (or `redlock`'s seat of
/// connections), until `deadline`. Tokio's mutex serves waiters in arrival order, so this is
/// the app server's FIFO queue for the lock. A buyer whose time runs out here (or whose turn
/// comes too late) has sent nothing.
pub(super) async fn queue_turn<T>(
    link: &Mutex<T>,
    deadline: Instant,
) -> Result<MutexGuard<'_, T>, Attempt> {
    match tokio::time::timeout_at(deadline.into(), link.lock()).await {
        Ok(conn) if Instant::now() < deadline => Ok(conn),
        _ => Err(Attempt::gave_up(
            format!(
                "gave up after {} s in its app server's queue for the lock: \
                 the buyers ahead of it on that app server took all that time",
                MAX_WAIT.as_secs()
            ),
            0,
        )),
    }
}

/// Why a buyer that reached the front of its queue gave up: the lock was busy `tries` times.
pub(super) fn gave_up_at_lock(queued: Duration, tries: u32) -> String {
    format!(
        "gave up after {} s waiting for the lock: {:.1} s in its app server's queue, \
         then the lock was busy at all {tries} tries",
        MAX_WAIT.as_secs(),
        queued.as_secs_f64(),
    )
}

/// Add the release to the attempt: its round trips, and whether the lock was still ours.
/// A sale made under an expired lock stands (it cannot be undone here), but it is flagged:
/// another buyer may have been inside at the same time.
pub(super) fn settle(attempt: Attempt, released: Result<Called<bool>, CallFailed>) -> Attempt {
    match released {
        Ok(released) => {
            let attempt = attempt.plus_round_trips(released.round_trips);
            if released.reply {
                return attempt;
            }
            tracing::warn!(
                "the lock expired before release: the critical section outlived its lease"
            );
            Attempt {
                lease_lost: true,
                ..attempt
            }
        }
        // It expires on its own after its lease.
        Err(f) => {
            tracing::warn!(error = %f.error, "could not release the lock");
            attempt.plus_round_trips(f.round_trips)
        }
    }
}

/// The pause after the `retries`-th busy answer: doubling, capped, and jittered into its
/// upper half so app servers that failed together do not all come back together.
pub(super) fn backoff(retries: u32) -> Duration {
    let ceiling = BACKOFF_START
        .saturating_mul(1 << retries.min(16))
        .min(BACKOFF_CAP);
    let micros = ceiling.as_micros() as u64;
    Duration::from_micros(rand::random_range(micros / 2..=micros))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_then_caps() {
        assert!(backoff(0) <= Duration::from_millis(1));
        assert!(backoff(2) >= Duration::from_millis(2) && backoff(2) <= Duration::from_millis(4));
        for r in [10, 20, 1000] {
            assert!(backoff(r) >= BACKOFF_CAP / 2 && backoff(r) <= BACKOFF_CAP);
        }
    }
}
