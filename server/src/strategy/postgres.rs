//! `postgres`: the database answer. `SELECT ... FOR UPDATE` locks the stock row, the app
//! checks it, `UPDATE` takes the units, `COMMIT` releases the lock. Correct, and the row
//! lock makes every buyer wait in line behind a disk-backed commit.

use std::borrow::Cow;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, Guard, Scenario, StrategyAbout, TapeRule, Tone, step, text,
};
use tokio::sync::Mutex;

use super::{Attempt, Backend, Order, PostgresBuyer, Strategy};
use crate::pg::{self, PgConn, StockRow};

/// Row-lock transactions in PostgreSQL.
pub const STRATEGY: Strategy = Strategy {
    about: StrategyAbout {
        name: text("postgres"),
        label: text("PostgreSQL row lock"),
        short_label: text("PostgreSQL"),
        description: text(
            "BEGIN; SELECT ... FOR UPDATE; UPDATE; COMMIT: the row lock queues buyers behind each commit.",
        ),
        unsafe_by_design: false,
        category: Category::Database,
        featured: false,
        scripts: Cow::Borrowed(&[]),
        explanation: Explanation {
            title: text("Why a row lock cannot oversell"),
            how: text(
                "Each buyer opens a transaction, reads the stock row with SELECT … FOR UPDATE, checks it, UPDATEs it and COMMITs.",
            ),
            why: text(
                "FOR UPDATE locks the row: a second buyer's SELECT waits until the first one commits, then reads the new value. \
                 Read and write happen under the same lock, so no decision is made on a stale number.",
            ),
            cost: text(
                "Buyers wait in line behind each commit, and a commit is a disk write: correct, and the slowest here.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #7",
                    "SELECT stock … FOR UPDATE → 1",
                    "row locked",
                    Tone::A,
                ),
                step(
                    "buyer #12",
                    "SELECT stock … FOR UPDATE",
                    "waits for #7",
                    Tone::B,
                ),
                step(
                    "buyer #7",
                    "UPDATE … · COMMIT",
                    "sold, lock released",
                    Tone::A,
                ),
                step("buyer #12", "… → 0", "sold out", Tone::B),
            ]),
        },
        tape: TapeRule::ReadThenDecrement {
            guard: Guard::RowLock,
        },
        scenario: Scenario::Race,
    },
    backend: Backend::Postgres(&Postgres),
};

struct Postgres;

impl PostgresBuyer for Postgres {
    fn buy<'a>(
        &'a self,
        conn: &'a Mutex<PgConn>,
        order: Order<'a, StockRow>,
    ) -> BoxFuture<'a, Attempt> {
        async move {
            // One app server, one connection: buyers on it take turns, like a pool of one.
            let mut conn = conn.lock().await;
            let reply =
                pg::reserve_for_update(&mut conn, order.shelf, order.qty, order.race_window).await;
            match reply {
                Ok(pg::RowLockReply {
                    before,
                    after: Some(after),
                    round_trips,
                }) => Attempt::reserved(Some(before), after, round_trips),
                Ok(pg::RowLockReply {
                    before,
                    after: None,
                    round_trips,
                }) => Attempt::sold_out(Some(before), round_trips),
                Err(f) => Attempt::postgres_failed(&f.error, f.in_doubt, f.round_trips),
            }
        }
        .boxed()
    }
}
