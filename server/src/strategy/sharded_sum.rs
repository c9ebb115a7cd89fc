//! `sharded_sum`: the stock split over [`BUCKETS`] counters like `sharded`, but checked the
//! way an app is tempted to: GET every bucket, add them up in the app, and if the sum covers
//! the order, DECRBY the fullest bucket.
//!
//! `sharded` stays safe because each bucket is checked and taken inside one script: the
//! check is about the very counter the write changes. Here the check is about a *sum*, and
//! no single Redis command ever sees a sum: it is computed in the app, from replies that
//! come back one round trip before the write. That is `naive` again, with four keys instead
//! of one, so it oversells the same way, and harder to see: each bucket's counter looks like
//! a small number, only their total says the shelf is oversold.

use std::borrow::Cow;
use std::time::Instant;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};

use super::sharded::BUCKETS;
use super::{Attempt, Backend, Order, RedisBuyer, Strategy};
use crate::store::{RedisConn, RunKeys, StockLayout, stock};

/// Sharded stock, checked by summing the buckets in the app.
pub const STRATEGY: Strategy = Strategy {
    about: StrategyAbout {
        name: text("sharded_sum"),
        label: text("Sharded, sum checked in the app"),
        short_label: text("Sharded sum"),
        description: text(
            "Splits the stock over 4 counters, GETs them all, checks their sum in the app, then DECRBYs one: the sum is a stale read.",
        ),
        unsafe_by_design: true,
        category: Category::CheckThenWrite,
        featured: false,
        scripts: Cow::Borrowed(&[]),
        explanation: Explanation {
            title: text("Why checking the sum of the buckets oversells"),
            how: text(
                "The stock is dealt over 4 bucket counters. Each buyer GETs all 4, adds them up in the app, and if the \
                 total covers its order, sends DECRBY to the bucket that looked fullest.",
            ),
            why: text(
                "Sharding spreads a hot counter over several keys (on a cluster, several nodes) so the buyers stop \
                 queueing on one. But the check is now a sum, and no Redis command computes it: the app adds up replies \
                 that are already old when the DECRBY lands. Every buyer whose GETs came back before the last unit went \
                 sees stock, and decrements anyway; a bucket sinks below zero while the others look normal. It is the \
                 naive race again, spread over four keys, and harder to spot on a dashboard of small per-bucket numbers. \
                 Compare `sharded`, which checks and takes inside one script per bucket, and never oversells.",
            ),
            cost: text(
                "Two round trips per order on one Redis (the GETs pipelined, then the DECRBY), five on a cluster, and \
                 the same gap as naive. The only fix is to keep each check atomic with its write: one script per \
                 bucket, as `sharded` does, at the price of refusing some buyers while another bucket still has units.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #7",
                    "GET bucket:0..3 → 0, 0, 1, 0",
                    "sum 1: looks fine",
                    Tone::A,
                ),
                step(
                    "buyer #12",
                    "GET bucket:0..3 → 0, 0, 1, 0",
                    "sum 1: looks fine too",
                    Tone::B,
                ),
                step(
                    "buyer #7",
                    "DECRBY bucket:2 1 → 0",
                    "sold the last unit",
                    Tone::A,
                ),
                step(
                    "buyer #12",
                    "DECRBY bucket:2 1 → -1",
                    "sold a unit that does not exist",
                    Tone::Bad,
                ),
            ]),
        },
        // The check reads four keys, each at its own moment, so no reply places a buyer at
        // one point of Redis's order: there is no tape to rebuild, only the summary.
        tape: TapeRule::Story,
        scenario: Scenario::Race,
    },
    backend: Backend::SharedRedis(&ShardedSum),
};

struct ShardedSum;

/// The bucket the app decrements: the one that looked fullest, ties broken from the buyer's
/// ticket so equal buckets share the load.
fn fullest(values: &[i64], ticket: u64) -> u32 {
    let n = values.len().max(1);
    let start = (ticket % n as u64) as usize;
    let mut best = start;
    for i in (0..n).map(|k| (start + k) % n) {
        if values.get(i) > values.get(best) {
            best = i;
        }
    }
    best as u32
}

impl RedisBuyer for ShardedSum {
    fn layout(&self) -> StockLayout {
        StockLayout::Buckets(BUCKETS)
    }

    fn buy<'a>(&'a self, mut conn: RedisConn, order: Order<'a, RunKeys>) -> BoxFuture<'a, Attempt> {
        async move {
            let keys = order.shelf;
            let (reads, values) = stock::get_buckets(&mut conn, keys).await;
            let values = match values {
                Ok(v) => v,
                Err(e) => return Attempt::read_failed(&e, None, reads),
            };
            let read_at = Instant::now();
            // The whole check, in the app: a sum no Redis command ever saw.
            let observed: i64 = values.iter().sum();
            if observed < i64::from(order.qty) {
                return Attempt::sold_out(Some(observed), reads).with_read_at(read_at);
            }
            let bucket = fullest(&values, order.ticket);
            if !order.race_window.is_zero() {
                tokio::time::sleep(order.race_window).await;
            }
            match stock::decr_bucket(&mut conn, keys, bucket, order.qty).await {
                Ok(after) => Attempt::reserved(Some(observed), after, reads + 1),
                Err(e) => Attempt::write_failed(&e, Some(observed), reads + 1),
            }
            .with_read_at(read_at)
            .with_bucket(Some(bucket))
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_app_decrements_the_bucket_that_looked_fullest() {
        assert_eq!(fullest(&[0, 0, 1, 0], 0), 2);
        assert_eq!(fullest(&[3, 3, 2, 2], 0), 0);
        assert_eq!(fullest(&[3, 3, 2, 2], 1), 1);
        // Ties from the ticket's start, wrapping.
        assert_eq!(fullest(&[2, 2, 2, 2], 3), 3);
        assert_eq!(fullest(&[-1, 0, 0, 0], 0), 1);
    }
}
