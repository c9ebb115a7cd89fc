//! `lock`: a per-SKU lock in Redis around the naive read-check-write.
//!
//! The buyer takes the lock with `SET lock token NX PX ttl` (only one caller can create
//! the key), then does exactly what `naive` does: GET, check in Rust, DECRBY. Because only
//! the lock holder reads and writes, the gap between read and write is harmless. It gives
//! the lock back with `release_lock.lua`, which deletes the key only if it still holds this
//! buyer's token: if the lock had expired and someone else took it, a bare DEL would free
//! *their* lock.
//!
//! Correct, but every buyer of the SKU queues behind one holder, and waiters poll: each
//! failed `SET NX` is a round trip and a retry. The wait shows up as latency.
//!
//! The lock expires after [`LOCK_TTL`] plus the race window, so a buyer that dies holding
//! it stalls the others only that long. The flip side: a holder stalled for longer than
//! that (a long GC pause, a network stall) would lose the lock while still working, and the
//! section would no longer be exclusive. Lua or WATCH have no such timing assumption.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{Category, Explanation, Guard, StrategyAbout, TapeRule, Tone, step, text};

use super::{Attempt, Backend, Order, RedisBuyer, Strategy};
use crate::store::{RedisConn, RunKeys, lock, stock};

/// How long the lock lives beyond the race window. Far longer than GET plus DECRBY.
pub const LOCK_TTL: Duration = Duration::from_millis(2000);
/// How long a buyer keeps trying to take the lock before it gives up with an error.
pub const MAX_WAIT: Duration = Duration::from_secs(10);
/// First pause after a failed try. Pauses double up to [`BACKOFF_CAP`], with jitter: with
/// thousands of waiters, fixed short polls flood Redis with `SET NX` and the holder's own
/// GET, DECRBY and release queue behind them, so the lock is held longer and nobody wins.
const BACKOFF_START: Duration = Duration::from_millis(1);
/// Longest pause between tries.
const BACKOFF_CAP: Duration = Duration::from_millis(40);

/// The lock-per-SKU strategy.
pub const STRATEGY: Strategy = Strategy {
    about: StrategyAbout {
        name: text("lock"),
        label: text("Lock per SKU (SET NX PX)"),
        short_label: text("Lock"),
        description: text(
            "Takes a Redis lock (SET NX PX), reads, checks and decrements, then releases it by token: buyers queue for the lock.",
        ),
        unsafe_by_design: false,
        category: Category::Lock,
        featured: false,
        scripts: Cow::Borrowed(&[text("release_lock.lua")]),
        explanation: Explanation {
            title: text("Why a lock per SKU cannot oversell (while the holder is quick)"),
            how: text(
                "Each buyer takes a lock with SET lock token NX PX, then does the naive GET, check, DECRBY, then releases the lock \
                 with release_lock.lua.",
            ),
            why: text(
                "Only one buyer can create the lock key, so only the holder reads and writes, and the gap between read and write \
                 no longer matters. The release script deletes the lock only if it still holds this buyer's token, so an expired \
                 holder cannot free someone else's lock.",
            ),
            cost: text(
                "Every buyer of the SKU queues behind one holder, and waiters poll: each failed SET NX is another round trip and a \
                 retry. And it assumes no holder stalls longer than the lock's expiry.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #7",
                    "SET lock t7 NX PX → OK",
                    "holds the lock",
                    Tone::A,
                ),
                step(
                    "buyer #12",
                    "SET lock t12 NX PX → nil",
                    "busy: waits, tries again",
                    Tone::B,
                ),
                step(
                    "buyer #7",
                    "GET → 1 · DECRBY → 0",
                    "sold the last unit",
                    Tone::A,
                ),
                step(
                    "buyer #7",
                    "EVALSHA release_lock t7 → 1",
                    "lets go",
                    Tone::A,
                ),
                step(
                    "buyer #12",
                    "SET lock t12 NX PX → OK · GET → 0",
                    "sold out",
                    Tone::B,
                ),
            ]),
        },
        tape: TapeRule::ReadThenDecrement { guard: Guard::Lock },
    },
    backend: Backend::SharedRedis(&Lock),
};

struct Lock;

impl RedisBuyer for Lock {
    fn buy<'a>(&'a self, mut conn: RedisConn, order: Order<'a, RunKeys>) -> BoxFuture<'a, Attempt> {
        async move {
            let Order {
                shelf: keys,
                qty,
                race_window,
                ..
            } = order;
            // Unique per attempt, so a release can never match another buyer's lock.
            let token = format!("{:016x}", rand::random::<u64>());
            let ttl = LOCK_TTL + race_window;

            let started = Instant::now();
            let mut round_trips = 0;
            let mut retries = 0;
            loop {
                round_trips += 1;
                match lock::try_lock(&mut conn, keys, &token, ttl).await {
                    Ok(true) => break,
                    Ok(false) => {}
                    Err(e) => {
                        return Attempt::read_failed(&e, None, round_trips).with_retries(retries);
                    }
                }
                if started.elapsed() >= MAX_WAIT {
                    let why = format!(
                        "gave up waiting for the lock after {} s ({round_trips} tries)",
                        MAX_WAIT.as_secs()
                    );
                    return Attempt::gave_up(why, round_trips).with_retries(retries);
                }
                tokio::time::sleep(backoff(retries)).await;
                retries += 1;
            }

            // Held: from here on nobody else reads or writes the stock.
            round_trips += 1;
            let observed = stock::get(&mut conn, keys).await;
            let read_at = Instant::now();
            let attempt = match observed {
                Err(e) => Attempt::read_failed(&e, None, round_trips),
                Ok(v) if v.unwrap_or(0) < i64::from(qty) => {
                    Attempt::sold_out(Some(v.unwrap_or(0)), round_trips)
                }
                Ok(v) => {
                    let observed = v.unwrap_or(0);
                    if !race_window.is_zero() {
                        tokio::time::sleep(race_window).await;
                    }
                    round_trips += 1;
                    match stock::decr_by(&mut conn, keys, qty).await {
                        Ok(after) => Attempt::reserved(Some(observed), after, round_trips),
                        Err(e) => Attempt::write_failed(&e, Some(observed), round_trips),
                    }
                }
            };

            match lock::release(&mut conn, keys, &token).await {
                Ok(released) => {
                    round_trips += released.round_trips;
                    // The sale (if any) stands; the lock simply expired under us.
                    if !released.reply {
                        tracing::warn!(
                            "lock expired before release: the critical section outlived its TTL"
                        );
                    }
                }
                // It expires on its own after `ttl`.
                Err(f) => {
                    round_trips += f.round_trips;
                    tracing::warn!(error = %f.error, "could not release the lock");
                }
            }
            Attempt {
                round_trips,
                ..attempt
            }
            .with_retries(retries)
            .with_read_at(read_at)
        }
        .boxed()
    }
}

/// The pause after the `retries`-th failed try: doubling, capped, and jittered into its upper
/// half so waiters that failed together do not all come back together.
fn backoff(retries: u32) -> Duration {
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
        assert!(backoff(3) >= Duration::from_millis(4) && backoff(3) <= Duration::from_millis(8));
        for r in [10, 20, 1000] {
            assert!(backoff(r) >= BACKOFF_CAP / 2 && backoff(r) <= BACKOFF_CAP);
        }
    }
}
