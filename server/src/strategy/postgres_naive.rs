//! `postgres_naive`: the lost update, in SQL. `BEGIN; SELECT stock` (no `FOR UPDATE`), the
//! app checks it and computes `stock - qty`, `UPDATE ... SET stock = <that number>; COMMIT`.
//!
//! It is `postgres` with two things taken out: the `FOR UPDATE` that locks the row while
//! the app decides, and the `stock = stock - qty` that would let the database do the
//! arithmetic on the row as it is. The transaction around it does not save it: at
//! PostgreSQL's default isolation (READ COMMITTED) a `SELECT` reads what was last
//! committed, so buyers on other connections read the same number, and each `UPDATE` waits
//! for the previous one's row lock only to write the same value over it.

use std::borrow::Cow;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};
use tokio::sync::Mutex;

use super::{Attempt, Backend, Order, PostgresBuyer, Strategy};
use crate::pg::{self, PgConn, StockRow};

/// Read, compute in the app, overwrite: in PostgreSQL.
pub const STRATEGY: Strategy = Strategy {
    about: StrategyAbout {
        name: text("postgres_naive"),
        label: text("PostgreSQL, no row lock (lost update)"),
        short_label: text("PostgreSQL, no lock"),
        description: text(
            "BEGIN; SELECT stock; UPDATE … SET stock = <read − qty>; COMMIT: buyers overwrite each other's sales.",
        ),
        unsafe_by_design: true,
        category: Category::CheckThenWrite,
        featured: false,
        scripts: Cow::Borrowed(&[]),
        explanation: Explanation {
            title: text("Why a transaction without FOR UPDATE loses updates"),
            how: text(
                "Each buyer opens a transaction, reads the stock row with a plain SELECT, checks it in the app, \
                 computes the new stock itself, and writes that number back with UPDATE … SET stock = <number>, then COMMITs.",
            ),
            why: text(
                "A plain SELECT takes no lock. At PostgreSQL's default isolation, READ COMMITTED, it reads the last \
                 committed value, so buyers on other connections read the same number at the same time. The second \
                 buyer's UPDATE waits for the first one's row lock, then writes its own number, computed from the old \
                 read, over the first one's: the row forgets a sale. Every buyer is told it bought; the stock barely \
                 moves, so far more orders are accepted than there are units, and the row never shows it.",
            ),
            cost: text(
                "Four statements per order, and a gap between the read and the write. Either fix closes it: SELECT … \
                 FOR UPDATE (the `postgres` strategy), or let the row do the arithmetic in one conditional statement \
                 (UPDATE … SET stock = stock - qty WHERE stock >= qty). REPEATABLE READ would refuse the second \
                 UPDATE with a serialization error instead, which the app must then retry.",
            ),
            steps: Cow::Borrowed(&[
                step("buyer #7", "SELECT stock → 1", "looks fine", Tone::A),
                step("buyer #12", "SELECT stock → 1", "looks fine too", Tone::B),
                step(
                    "buyer #7",
                    "UPDATE … SET stock = 0 · COMMIT",
                    "sold the last unit",
                    Tone::A,
                ),
                step(
                    "buyer #12",
                    "UPDATE … SET stock = 0 · COMMIT",
                    "sold it again; the row still says 0",
                    Tone::Bad,
                ),
            ]),
        },
        tape: TapeRule::SelectThenUpdate,
        scenario: Scenario::Race,
    },
    backend: Backend::Postgres(&PostgresNaive),
};

struct PostgresNaive;

impl PostgresBuyer for PostgresNaive {
    fn buy<'a>(
        &'a self,
        conn: &'a Mutex<PgConn>,
        order: Order<'a, StockRow>,
    ) -> BoxFuture<'a, Attempt> {
        async move {
            // One app server, one connection: buyers on it take turns, like a pool of one.
            // Buyers on the *other* app servers are what it races.
            let mut conn = conn.lock().await;
            let reply =
                pg::reserve_read_then_write(&mut conn, order.shelf, order.qty, order.race_window)
                    .await;
            match reply {
                Ok(pg::ReadThenWriteReply {
                    before,
                    written: Some(written),
                    round_trips,
                    read_at,
                }) => Attempt::reserved(Some(before), written, round_trips).with_read_at(read_at),
                Ok(pg::ReadThenWriteReply {
                    before,
                    written: None,
                    round_trips,
                    read_at,
                }) => Attempt::sold_out(Some(before), round_trips).with_read_at(read_at),
                Err(f) => Attempt::postgres_failed(&f.error, f.in_doubt, f.round_trips),
            }
        }
        .boxed()
    }
}
