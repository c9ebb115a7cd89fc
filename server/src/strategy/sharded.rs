//! `sharded`: the stock split over [`BUCKETS`] counters, each reserved atomically by
//! `reserve.lua`. A buyer tries a bucket picked from its seeded ticket, then at most one
//! other, and is refused if both are short.
//!
//! One counter is one key, and one key lives on one Redis node: under a flash sale every
//! buyer queues on that node, however big the cluster. Splitting the stock spreads the
//! buyers over several keys (on a cluster, several nodes). Each bucket is still taken
//! atomically, so it never oversells. The price is the tail: when the buckets a buyer
//! probes are empty it is refused, although another bucket may still hold units. Those
//! refusals are counted in the summary as `false_sold_out`. Probing every bucket would end
//! them, at the cost of up to [`BUCKETS`] round trips per late buyer.

use std::borrow::Cow;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{Attempt, Backend, Order, RedisBuyer, Strategy};
use crate::store::{RedisConn, RunKeys, StockLayout, stock};

/// How many counters the stock is split over.
pub const BUCKETS: u32 = 4;
/// How many buckets a buyer tries before giving up: its first pick and one more.
pub const PROBES: u32 = 2;

/// The sharded-stock strategy.
pub const STRATEGY: Strategy = Strategy {
    about: StrategyAbout {
        name: text("sharded"),
        label: text("Sharded stock (4 buckets)"),
        short_label: text("Sharded"),
        description: text(
            "Splits the stock over 4 counters, each taken atomically by reserve.lua: a buyer tries two of them.",
        ),
        unsafe_by_design: false,
        category: Category::Sharded,
        featured: false,
        scripts: Cow::Borrowed(&[text("reserve.lua")]),
        explanation: Explanation {
            title: text("Why sharded stock never oversells, yet can refuse too early"),
            how: text(
                "The stock is dealt over 4 bucket counters. Each buyer runs reserve.lua on a bucket picked at random, and if \
                 that one is short, on one other bucket.",
            ),
            why: text(
                "Each bucket is reserved by one script, so no bucket is ever oversold, and the buckets together hold exactly \
                 the stock. The buyers no longer all queue on one key, which is what lets a cluster spread a hot product over \
                 several nodes.",
            ),
            cost: text(
                "Near the end, a buyer can find both of its buckets empty while another still holds units: a false sold-out \
                 (an undersell, counted in the summary). Probing every bucket fixes it and costs more round trips.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #7",
                    "EVALSHA reserve bucket:2 1 → {1, 1, 0}",
                    "took bucket 2's last unit",
                    Tone::A,
                ),
                step(
                    "buyer #12",
                    "EVALSHA reserve bucket:2 1 → {0, 0, 0}",
                    "bucket 2 is empty: try another",
                    Tone::B,
                ),
                step(
                    "buyer #12",
                    "EVALSHA reserve bucket:0 1 → {0, 0, 0}",
                    "refused, while bucket 3 still holds a unit",
                    Tone::Bad,
                ),
            ]),
        },
        tape: TapeRule::AtomicPerBucket { buckets: BUCKETS },
        scenario: Scenario::Race,
    },
    backend: Backend::SharedRedis(&Sharded),
};

struct Sharded;

/// The buckets a buyer tries, in order: two different ones, both picked from its ticket.
fn probe_order(ticket: u64) -> [u32; PROBES as usize] {
    let first = (ticket % u64::from(BUCKETS)) as u32;
    let step = 1 + ((ticket >> 32) % u64::from(BUCKETS - 1)) as u32;
    [first, (first + step) % BUCKETS]
}

impl RedisBuyer for Sharded {
    fn layout(&self) -> StockLayout {
        StockLayout::Buckets(BUCKETS)
    }

    fn buy<'a>(&'a self, mut conn: RedisConn, order: Order<'a, RunKeys>) -> BoxFuture<'a, Attempt> {
        async move {
            let mut round_trips = 0;
            // The last refusal: what that bucket held, and which bucket it was. The outcome
            // reports one reply, and the tape needs to know whose counter it came from.
            let mut last_seen = None;
            let mut last_bucket = None;
            for (i, bucket) in probe_order(order.ticket).into_iter().enumerate() {
                let key = order.shelf.bucket_key(bucket);
                match stock::reserve(&mut conn, &key, order.qty).await {
                    Ok(c) => {
                        round_trips += c.round_trips;
                        if c.reply.reserved {
                            return Attempt::reserved(
                                Some(c.reply.before),
                                c.reply.after,
                                round_trips,
                            )
                            .with_retries(i as u32)
                            .with_bucket(Some(bucket));
                        }
                        last_seen = Some(c.reply.before);
                        last_bucket = Some(bucket);
                    }
                    Err(f) => {
                        return Attempt::write_failed(
                            &f.error,
                            last_seen,
                            round_trips + f.round_trips,
                        )
                        .with_retries(i as u32)
                        .with_bucket(last_bucket);
                    }
                }
            }
            Attempt::sold_out(last_seen, round_trips)
                .with_retries(PROBES - 1)
                .with_bucket(last_bucket)
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buyer_probes_two_different_buckets() {
        let mut firsts = [0; BUCKETS as usize];
        for ticket in (0..4000u64).map(|t| t.wrapping_mul(0x9e37_79b9_7f4a_7c15)) {
            let [a, b] = probe_order(ticket);
            assert_ne!(a, b);
            assert!(a < BUCKETS && b < BUCKETS);
            firsts[a as usize] += 1;
        }
        // Spread over every bucket, not piled on one.
        assert!(firsts.iter().all(|&n| n > 500), "{firsts:?}");
    }
}
