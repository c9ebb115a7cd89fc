//! `watch`: optimistic concurrency with `WATCH` / `MULTI` / `EXEC`.
//!
//! The buyer WATCHes the stock key, reads it, checks it in Rust, and then sends the
//! decrement inside MULTI/EXEC. If anyone wrote the key after the WATCH, Redis discards the
//! transaction and EXEC answers nil; the buyer's read was stale, so it starts over. Nothing
//! is locked while the app thinks: conflicts are detected at commit time instead of
//! prevented. Correct, but under contention most attempts are thrown away, and each retry
//! costs three more round trips.
//!
//! WATCH state belongs to a connection, so this strategy uses
//! [`LinkKind::ExclusiveRedis`]: a buyer holds its app server's connection for one attempt
//! (WATCH to EXEC) and lets go between attempts so the other buyers on that app server get
//! a turn. Requests per attempt: WATCH, GET, then either UNWATCH (sold out) or one
//! pipelined MULTI/DECRBY/EXEC (counted as one round trip).

use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use super::{Attempt, Order, Strategy};
use crate::shelf::{Link, LinkKind};
use crate::store;

/// Attempts before a buyer gives up. Every discarded EXEC means another buyer's
/// decrement landed, so a buyer can only lose as many times as there were sales in
/// between; 50 lets small shelves always finish and bounds the work on big, hot ones.
pub const MAX_ATTEMPTS: u32 = 50;

/// Longest pause between attempts (the pause is random in `0..MAX_BACKOFF`), so buyers
/// that just collided do not collide again in lockstep.
const MAX_BACKOFF: Duration = Duration::from_millis(2);

/// The optimistic transaction strategy.
pub struct Watch;

impl Strategy for Watch {
    fn name(&self) -> &'static str {
        "watch"
    }
    fn label(&self) -> &'static str {
        "WATCH / MULTI / EXEC"
    }
    fn description(&self) -> &'static str {
        "Watches the stock, reads and checks it, then decrements in MULTI/EXEC; retries when another write got in first."
    }
    fn link_kind(&self) -> LinkKind {
        LinkKind::ExclusiveRedis
    }

    fn buy<'a>(&'a self, order: Order<'a>) -> BoxFuture<'a, Attempt> {
        async move {
            let Link::RedisExclusive(link) = &order.link else {
                return Attempt::failed("internal: watch strategy got the wrong kind of link", None, 0);
            };
            let Order {
                keys,
                qty,
                race_window,
                ..
            } = order;
            let mut round_trips = 0;
            for attempt in 0..MAX_ATTEMPTS {
                if attempt > 0 {
                    let pause = MAX_BACKOFF.mul_f64(rand::random::<f64>());
                    tokio::time::sleep(pause).await;
                }
                // Held from WATCH to EXEC; dropped at the end of each attempt.
                let mut conn = link.lock().await;
                round_trips += 1;
                if let Err(e) = store::watch_stock(&mut conn, keys).await {
                    return Attempt::failed(e.short(), None, round_trips).with_retries(attempt);
                }
                round_trips += 1;
                let observed = match store::read_stock(&mut conn, keys).await {
                    Ok(v) => v.unwrap_or(0),
                    Err(e) => {
                        return Attempt::failed(e.short(), None, round_trips)
                            .with_retries(attempt);
                    }
                };
                let read_at = Instant::now();
                if observed < i64::from(qty) {
                    // Leave the connection clean for the next buyer on this app server.
                    round_trips += 1;
                    return match store::unwatch(&mut conn).await {
                        Ok(()) => Attempt::sold_out(Some(observed), round_trips),
                        Err(e) => Attempt::failed(e.short(), Some(observed), round_trips),
                    }
                    .with_retries(attempt)
                    .with_read_at(read_at);
                }
                if !race_window.is_zero() {
                    tokio::time::sleep(race_window).await;
                }
                round_trips += 1;
                match store::exec_decr_by(&mut conn, keys, qty).await {
                    Ok(Some(after)) => {
                        return Attempt::reserved(Some(observed), after, round_trips)
                            .with_retries(attempt)
                            .with_read_at(read_at);
                    }
                    // Someone wrote the stock after our WATCH: our read is stale. EXEC has
                    // already cleared the watch, so the connection is clean.
                    Ok(None) => {}
                    Err(e) => {
                        return Attempt::failed(e.short(), Some(observed), round_trips)
                            .with_retries(attempt);
                    }
                }
            }
            Attempt::failed(
                format!(
                    "gave up after {} optimistic retries ({MAX_ATTEMPTS} attempts): the stock kept changing",
                    MAX_ATTEMPTS - 1
                ),
                None,
                round_trips,
            )
            .with_retries(MAX_ATTEMPTS - 1)
        }
        .boxed()
    }
}
