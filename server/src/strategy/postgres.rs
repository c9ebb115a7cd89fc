//! `postgres`: the database answer. `SELECT ... FOR UPDATE` locks the stock row, the app
//! checks it, `UPDATE` takes the units, `COMMIT` releases the lock. Correct, and the row
//! lock makes every buyer wait in line behind a disk-backed commit.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use super::{Attempt, Order, Strategy};
use crate::pg;
use crate::shelf::{Link, LinkKind};

/// Row-lock transactions in PostgreSQL.
pub struct Postgres;

impl Strategy for Postgres {
    fn name(&self) -> &'static str {
        "postgres"
    }
    fn label(&self) -> &'static str {
        "PostgreSQL row lock"
    }
    fn description(&self) -> &'static str {
        "BEGIN; SELECT ... FOR UPDATE; UPDATE; COMMIT: the row lock queues buyers behind each commit."
    }
    fn link_kind(&self) -> LinkKind {
        LinkKind::Postgres
    }

    fn buy<'a>(&'a self, order: Order<'a>) -> BoxFuture<'a, Attempt> {
        async move {
            let Link::Postgres(conn) = order.link else {
                return Attempt::failed("internal: postgres strategy got a Redis link", None, 0);
            };
            // One app server, one connection: buyers on it take turns, like a pool of one.
            let mut conn = conn.lock().await;
            match pg::reserve_for_update(
                &mut conn.client,
                order.run_id,
                order.qty,
                order.race_window,
            )
            .await
            {
                // BEGIN, SELECT, UPDATE, COMMIT.
                Ok(pg::RowLockReply {
                    before,
                    after: Some(after),
                }) => Attempt::reserved(Some(before), after, 4),
                // BEGIN, SELECT, ROLLBACK.
                Ok(pg::RowLockReply {
                    before,
                    after: None,
                }) => Attempt::sold_out(Some(before), 3),
                Err(e) => Attempt::failed(e.short(), None, 1),
            }
        }
        .boxed()
    }
}
