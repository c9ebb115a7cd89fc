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

use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use super::{Attempt, Order, Strategy};
use crate::store;

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
pub struct Lock;

impl Strategy for Lock {
    fn name(&self) -> &'static str {
        "lock"
    }
    fn label(&self) -> &'static str {
        "Lock per SKU (SET NX PX)"
    }
    fn description(&self) -> &'static str {
        "Takes a Redis lock (SET NX PX), reads, checks and decrements, then releases it by token: buyers queue for the lock."
    }

    fn buy<'a>(&'a self, order: Order<'a>) -> BoxFuture<'a, Attempt> {
        async move {
            let mut conn = match order.shared_redis() {
                Ok(c) => c,
                Err(a) => return a,
            };
            let Order {
                run_id,
                keys,
                qty,
                race_window,
                ..
            } = order;
            // Unique per attempt, so a release can never match another buyer's lock.
            let token = format!("{run_id}:{:016x}", rand::random::<u64>());
            let ttl = LOCK_TTL + race_window;

            let started = Instant::now();
            let mut round_trips = 0;
            let mut retries = 0;
            loop {
                round_trips += 1;
                match store::try_lock(&mut conn, keys, &token, ttl).await {
                    Ok(true) => break,
                    Ok(false) => {}
                    Err(e) => {
                        return Attempt::failed(e.short(), None, round_trips).with_retries(retries);
                    }
                }
                if started.elapsed() >= MAX_WAIT {
                    let why = format!(
                        "gave up waiting for the lock after {} s ({round_trips} tries)",
                        MAX_WAIT.as_secs()
                    );
                    return Attempt::failed(why, None, round_trips).with_retries(retries);
                }
                tokio::time::sleep(backoff(retries)).await;
                retries += 1;
            }

            // Held: from here on nobody else reads or writes the stock.
            round_trips += 1;
            let observed = store::read_stock(&mut conn, keys).await;
            let read_at = Instant::now();
            let attempt = match observed {
                Err(e) => Attempt::failed(e.short(), None, round_trips),
                Ok(v) if v.unwrap_or(0) < i64::from(qty) => {
                    Attempt::sold_out(Some(v.unwrap_or(0)), round_trips)
                }
                Ok(v) => {
                    let observed = v.unwrap_or(0);
                    if !race_window.is_zero() {
                        tokio::time::sleep(race_window).await;
                    }
                    round_trips += 1;
                    match store::decr_by(&mut conn, keys, qty).await {
                        Ok(after) => Attempt::reserved(Some(observed), after, round_trips),
                        Err(e) => Attempt::failed(e.short(), Some(observed), round_trips),
                    }
                }
            };

            round_trips += 1;
            match store::release_lock(&mut conn, keys, &token).await {
                Ok(true) => {}
                // The sale (if any) stands; the lock simply expired under us.
                Ok(false) => tracing::warn!(
                    run_id,
                    "lock expired before release: the critical section outlived its TTL"
                ),
                // It expires on its own after `ttl`.
                Err(e) => tracing::warn!(run_id, error = %e, "could not release the lock"),
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
