//! `fenced_lock`: the per-SKU lock, plus a fencing token that the stock checks.
//!
//! `lock` is exclusive only while no holder stalls past its lease. Here the lock is taken
//! with `acquire_fenced_lock.lua`, which also hands out a *fencing token*: a number one
//! higher than any holder got before. The buyer then reads with `fenced_get.lua` and writes
//! with `fenced_decrby.lua`, both of which refuse a token older than the newest the stock
//! has seen, and record the caller's token as the newest. A holder whose lease ran out
//! while it stalled comes back with an old token and is turned away.
//!
//! # Why the read is fenced too
//! The buyer reads, decides in the app, then writes. Fencing only the write would not do:
//! stale A reads with token 33 and stalls; B takes the lock with 34 and reads the same
//! stock; A wakes and writes with 33, which is accepted because no 34 has *written* yet; B
//! then writes from its now stale read: oversold. Because B's read records 34, A's write
//! is refused. Between a holder's fenced read and its fenced write, no other holder's read
//! or write can be accepted, so the read-check-write is as good as atomic, stall or not.
//!
//! # A fenced-out buyer starts over
//! A refused read or write changed nothing, so the buyer never wrote: it takes the lock
//! again from the start, within the same wait budget as everyone else (`lock`'s
//! [`MAX_WAIT`]), and ends `gave_up` if that runs out. It skips the release: a newer token
//! exists only because someone else took the lock after ours expired.
//!
//! Waiting works exactly as in `lock` (see its module doc): the buyers of one app server
//! take turns at its connection ([`Backend::ExclusiveRedis`]) so at most one per app server
//! polls Redis, and each has [`MAX_WAIT`] from its arrival to get the lock.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, Guard, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};
use tokio::sync::Mutex;

use super::lock::{backoff, gave_up_at_lock, lease_for, max_wait_for, queue_turn, settle};
use super::{Attempt, Backend, ExclusiveRedisBuyer, Order, Strategy};
use crate::store::fence::{self, Fenced};
use crate::store::scripts::Called;
use crate::store::{RedisConn, RunKeys, StoreError};

/// The fenced lock strategy.
pub const STRATEGY: Strategy = Strategy {
    about: StrategyAbout {
        name: text("fenced_lock"),
        label: text("Fenced lock (lock + fencing token)"),
        short_label: text("Fenced lock"),
        description: text(
            "Takes the lock together with a fencing token, then reads and decrements with scripts that refuse any token older \
             than the newest the stock has seen: a holder whose lease ran out cannot sell.",
        ),
        unsafe_by_design: false,
        category: Category::Lock,
        featured: false,
        // The fencing keeps a holder's read and write adjacent in the write order, stalls or
        // not: drawn exactly like the plain lock.
        tape: TapeRule::ReadThenDecrement { guard: Guard::Lock },
        scripts: Cow::Borrowed(&[
            text("acquire_fenced_lock.lua"),
            text("fenced_get.lua"),
            text("fenced_decrby.lua"),
            text("release_lock.lua"),
        ]),
        explanation: Explanation {
            title: text("Why a fenced lock cannot oversell, even when a holder stalls"),
            how: text(
                "Each buyer waits its turn at its app server, takes the lock with acquire_fenced_lock.lua, which also hands it a \
                 token one higher than any before. It reads the stock with fenced_get.lua, checks it in the app, decrements with \
                 fenced_decrby.lua, and releases the lock with release_lock.lua.",
            ),
            why: text(
                "The lock's lease can still run out under a stalled holder, and then two buyers believe they hold it. But the \
                 stock remembers the newest token that read or wrote it, and both scripts refuse an older one. The late holder's \
                 write is turned away and changes nothing, so it never sold; it starts over. Reads are fenced too: if only writes \
                 were, the late holder could write before the new holder does, and the new holder would then write from a stale \
                 read.",
            ),
            cost: text(
                "Everything lock costs (turns, polling, giving up after 10 s), and every read and write is a script that checks a \
                 token. A stalled holder's work is thrown away and done again.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #7",
                    "acquire_fenced_lock → 33 · fenced_get 33 → 1",
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
                    "acquire_fenced_lock → 34 · fenced_get 34 → 1",
                    "one left; the stock now knows 34",
                    Tone::B,
                ),
                step(
                    "buyer #7",
                    "fenced_decrby 33 → refused (newest is 34)",
                    "fenced out: never wrote, starts over",
                    Tone::A,
                ),
                step(
                    "buyer #12",
                    "fenced_decrby 34 → 0 · release_lock 34 → 1",
                    "sold the last unit",
                    Tone::B,
                ),
                step(
                    "buyer #7",
                    "acquire_fenced_lock → 35 · fenced_get 35 → 0",
                    "sold out: one unit, sold once",
                    Tone::A,
                ),
            ]),
        },
        scenario: Scenario::Race,
    },
    backend: Backend::ExclusiveRedis(&FencedLock),
};

struct FencedLock;

impl ExclusiveRedisBuyer for FencedLock {
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
            let lease = lease_for(&order);
            // Requests sent, tries at the lock (busy or not), and passes fenced out.
            let (mut round_trips, mut tries, mut fenced_out) = (0, 0, 0);
            loop {
                let take = take(&mut conn, order.shelf, lease, deadline).await;
                (round_trips, tries) = (round_trips + take.round_trips, tries + take.tries);
                let token = match take.end {
                    TakeEnd::Token(token) => token,
                    TakeEnd::Busy => {
                        let why = gave_up_at_lock(queued, tries - fenced_out);
                        let attempt = Attempt::gave_up(why, round_trips);
                        return note_fenced_out(attempt, fenced_out).with_retries(tries - 1);
                    }
                    TakeEnd::Failed(e) => {
                        let attempt = Attempt::read_failed(&e, None, round_trips);
                        return note_fenced_out(attempt, fenced_out).with_retries(tries - 1);
                    }
                };
                match fenced_read_check_write(&mut conn, &order, token).await {
                    Pass::Done(attempt) => {
                        let released = fence::release(&mut conn, order.shelf, token).await;
                        return settle(attempt.plus_round_trips(round_trips), released)
                            .with_retries(tries - 1);
                    }
                    // Our lease ran out and a newer holder touched the stock; we never wrote.
                    Pass::FencedOut { round_trips: spent } => {
                        round_trips += spent;
                        fenced_out += 1;
                    }
                }
            }
        }
        .boxed()
    }
}

/// How one round of trying to take the lock went.
struct Take {
    /// Tries at the lock (one script call each).
    tries: u32,
    /// Requests sent (a try is two when Redis had lost the script).
    round_trips: u32,
    /// How it ended.
    end: TakeEnd,
}

/// How a [`Take`] ended.
enum TakeEnd {
    /// Taken, with this fencing token.
    Token(u64),
    /// Busy at every try until the deadline.
    Busy,
    /// Redis failed.
    Failed(StoreError),
}

/// Poll `acquire_fenced_lock.lua` until it hands out a token or `deadline` passes.
async fn take(conn: &mut RedisConn, keys: &RunKeys, lease: Duration, deadline: Instant) -> Take {
    let (mut tries, mut round_trips) = (0, 0);
    loop {
        tries += 1;
        let end = match fence::try_lock(conn, keys, lease).await {
            Ok(Called {
                reply: Some(token),
                round_trips: sent,
            }) => Some((TakeEnd::Token(token), sent)),
            Ok(Called {
                reply: None,
                round_trips: sent,
            }) => {
                round_trips += sent;
                None
            }
            Err(f) => Some((TakeEnd::Failed(f.error), f.round_trips)),
        };
        if let Some((end, sent)) = end {
            return Take {
                tries,
                round_trips: round_trips + sent,
                end,
            };
        }
        let now = Instant::now();
        if now >= deadline {
            return Take {
                tries,
                round_trips,
                end: TakeEnd::Busy,
            };
        }
        tokio::time::sleep(backoff(tries - 1).min(deadline - now)).await;
    }
}

/// How one pass holding the lock ended.
enum Pass {
    /// Finished: reserved, sold out, or failed (the lock still needs releasing).
    Done(Attempt),
    /// Refused by the stock: a newer token has touched it. Nothing was written.
    FencedOut { round_trips: u32 },
}

/// GET, check, DECRBY, each fenced with `token`.
async fn fenced_read_check_write(
    conn: &mut RedisConn,
    order: &Order<'_, RunKeys>,
    token: u64,
) -> Pass {
    let (keys, qty) = (order.shelf, order.qty);
    let (observed, mut round_trips) = match fence::get(conn, keys, token).await {
        Ok(Called {
            reply: Fenced::Done(v),
            round_trips,
        }) => (v, round_trips),
        Ok(Called {
            reply: Fenced::Stale { .. },
            round_trips,
        }) => return Pass::FencedOut { round_trips },
        Err(f) => return Pass::Done(Attempt::read_failed(&f.error, None, f.round_trips)),
    };
    let read_at = Instant::now();
    if observed < i64::from(qty) {
        return Pass::Done(Attempt::sold_out(Some(observed), round_trips).with_read_at(read_at));
    }
    // The app thinks (or stalls) here. If the lease runs out meanwhile and a newer holder
    // touches the stock, the write below is refused.
    if !order.race_window.is_zero() {
        tokio::time::sleep(order.race_window).await;
    }
    let attempt = match fence::decr_by(conn, keys, token, qty).await {
        Ok(called) => {
            round_trips += called.round_trips;
            match called.reply {
                Fenced::Done(after) => Attempt::reserved(Some(observed), after, round_trips),
                Fenced::Stale { .. } => return Pass::FencedOut { round_trips },
            }
        }
        Err(f) => Attempt::write_failed(&f.error, Some(observed), round_trips + f.round_trips),
    };
    Pass::Done(attempt.with_read_at(read_at))
}

/// Say in a gave-up or failed attempt's reason how often the buyer was fenced out first.
fn note_fenced_out(mut attempt: Attempt, times: u32) -> Attempt {
    if times > 0 {
        let why = attempt.error.take().unwrap_or_default();
        attempt.error = Some(format!(
            "{why} (fenced out {times} time(s) before: its lease ran out mid-order, so the stock refused it)"
        ));
    }
    attempt
}
