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
//! [`Backend::ExclusiveRedis`]: a buyer holds its app server's connection for one attempt
//! (WATCH to EXEC) and lets go between attempts so the other buyers on that app server get
//! a turn. Requests per attempt: WATCH, GET, then either UNWATCH (sold out) or one
//! pipelined MULTI/DECRBY/EXEC (counted as one round trip).

use std::borrow::Cow;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, Guard, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};
use tokio::sync::Mutex;

use super::{Attempt, Backend, ExclusiveRedisBuyer, Order, Strategy};
use crate::store::{RedisConn, RunKeys, stock};

/// Attempts before a buyer gives up. Every discarded EXEC means another buyer's
/// decrement landed, so a buyer can only lose as many times as there were sales in
/// between; 50 lets small shelves always finish and bounds the work on big, hot ones.
pub const MAX_ATTEMPTS: u32 = 50;

/// Longest pause between attempts (the pause is random in `0..MAX_BACKOFF`), so buyers
/// that just collided do not collide again in lockstep.
const MAX_BACKOFF: Duration = Duration::from_millis(2);

/// The optimistic transaction strategy.
pub const STRATEGY: Strategy = Strategy {
    about: StrategyAbout {
        name: text("watch"),
        label: text("WATCH / MULTI / EXEC"),
        short_label: text("WATCH"),
        description: text(
            "Watches the stock, reads and checks it, then decrements in MULTI/EXEC; retries when another write got in first.",
        ),
        unsafe_by_design: false,
        category: Category::Optimistic,
        featured: false,
        scripts: Cow::Borrowed(&[]),
        explanation: Explanation {
            title: text("Why WATCH / MULTI / EXEC cannot oversell"),
            how: text(
                "Each buyer WATCHes the stock key, reads it, checks it in the app, then sends DECRBY inside MULTI/EXEC.",
            ),
            why: text(
                "If anyone wrote the key after the WATCH, Redis throws the transaction away and EXEC answers nil. A decision made \
                 on a stale read can never commit: the buyer starts over with a fresh read. Nothing is locked while the app thinks.",
            ),
            cost: text(
                "Under contention most attempts are discarded, and each retry is more round trips. A buyer that keeps losing \
                 gives up after 50 attempts (the audit trail shows it as gave up).",
            ),
            steps: Cow::Borrowed(&[
                step("buyer #7", "WATCH stock · GET → 1", "looks fine", Tone::A),
                step(
                    "buyer #12",
                    "WATCH stock · GET → 1",
                    "looks fine too",
                    Tone::B,
                ),
                step(
                    "buyer #7",
                    "MULTI · DECRBY · EXEC → [0]",
                    "committed",
                    Tone::A,
                ),
                step(
                    "buyer #12",
                    "MULTI · DECRBY · EXEC → nil",
                    "stock changed: discarded, retry",
                    Tone::B,
                ),
                step("buyer #12", "WATCH stock · GET → 0", "sold out", Tone::B),
            ]),
        },
        tape: TapeRule::ReadThenDecrement {
            guard: Guard::Watch,
        },
        scenario: Scenario::Race,
    },
    backend: Backend::ExclusiveRedis(&Watch),
};

struct Watch;

impl ExclusiveRedisBuyer for Watch {
    fn buy<'a>(
        &'a self,
        link: &'a Mutex<RedisConn>,
        order: Order<'a, RunKeys>,
    ) -> BoxFuture<'a, Attempt> {
        async move {
            let mut round_trips = 0;
            for attempt in 0..MAX_ATTEMPTS {
                if attempt > 0 {
                    let pause = MAX_BACKOFF.mul_f64(rand::random::<f64>());
                    tokio::time::sleep(pause).await;
                }
                if let Some(done) = try_once(link, &order, attempt, &mut round_trips).await {
                    return done;
                }
            }
            Attempt::gave_up(
                format!(
                    "gave up after {MAX_ATTEMPTS} attempts: another buyer's write landed first every time"
                ),
                round_trips,
            )
            .with_retries(MAX_ATTEMPTS - 1)
        }
        .boxed()
    }
}

/// One attempt, WATCH to EXEC, holding the app server's connection throughout: how the
/// order ended, or `None` when EXEC was discarded (another write landed after our WATCH) and
/// the buyer starts over. Adds the requests it sent to `round_trips`.
async fn try_once(
    link: &Mutex<RedisConn>,
    order: &Order<'_, RunKeys>,
    attempt: u32,
    round_trips: &mut u32,
) -> Option<Attempt> {
    let Order {
        shelf: keys,
        qty,
        race_window,
        ..
    } = *order;
    // Held from WATCH to EXEC; dropped at the end of each attempt.
    let mut conn = link.lock().await;
    *round_trips += 1;
    if let Err(e) = stock::watch(&mut conn, keys).await {
        return Some(Attempt::read_failed(&e, None, *round_trips).with_retries(attempt));
    }
    *round_trips += 1;
    let observed = match stock::get(&mut conn, keys).await {
        Ok(v) => v.unwrap_or(0),
        Err(e) => {
            return Some(Attempt::read_failed(&e, None, *round_trips).with_retries(attempt));
        }
    };
    let read_at = Instant::now();
    if observed < i64::from(qty) {
        // Leave the connection clean for the next buyer on this app server.
        *round_trips += 1;
        let sold_out = match stock::unwatch(&mut conn, keys).await {
            Ok(()) => Attempt::sold_out(Some(observed), *round_trips),
            Err(e) => Attempt::read_failed(&e, Some(observed), *round_trips),
        };
        return Some(sold_out.with_retries(attempt).with_read_at(read_at));
    }
    if !race_window.is_zero() {
        tokio::time::sleep(race_window).await;
    }
    *round_trips += 1;
    match stock::exec_decr_by(&mut conn, keys, qty).await {
        Ok(Some(after)) => Some(
            Attempt::reserved(Some(observed), after, *round_trips)
                .with_retries(attempt)
                .with_read_at(read_at),
        ),
        // Someone wrote the stock after our WATCH: our read is stale. EXEC has already
        // cleared the watch, so the connection is clean.
        Ok(None) => None,
        Err(e) => {
            Some(Attempt::write_failed(&e, Some(observed), *round_trips).with_retries(attempt))
        }
    }
}
