//! A race too large to stream buyer by buyer: its progress as running totals, its audit as a
//! record the server keeps and the page reads a page at a time.
//!
//! Up to [`LIVE_OUTCOMES_MAX`] buyers, every outcome reaches the page (`outcomes` frames) and
//! the page keeps them all: its grid, tape and audit are drawn from them. Past that (a flash
//! sale of a million, on a server started with `--max-buyers`), a million outcomes would be
//! ~150 MB of JSON and a page that stops answering. The server then folds them into a
//! [`RunProgress`] and sends it every [`PROGRESS_EVERY_MS`]; it keeps each outcome in a
//! compact record, and the page asks for the rows in view (`audit_page`, at most
//! [`MAX_AUDIT_PAGE`]) and gets them back as `audit_rows`.

use serde::{Deserialize, Serialize};

use crate::limits::MAX_BUYERS;
use crate::{BuyerOutcome, OutcomeResult};

/// Most buyers whose outcomes are streamed one by one; a larger race streams [`RunProgress`].
pub const LIVE_OUTCOMES_MAX: u32 = MAX_BUYERS;
/// How often a running race at scale sends its progress, ms.
pub const PROGRESS_EVERY_MS: u64 = 100;
/// Most audit rows one `audit_page` may ask for (a tall window shows about 40).
pub const MAX_AUDIT_PAGE: u32 = 200;

/// True for a race of `buyers` that streams progress rather than outcomes.
pub fn streams_progress(buyers: u32) -> bool {
    buyers > LIVE_OUTCOMES_MAX
}

/// A race at scale, so far: the same tallies the page keeps from `outcomes` frames, added up
/// on the server.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunProgress {
    /// Buyers that have answered.
    pub buyers_done: u32,
    /// Units across accepted orders.
    pub units_sold: u64,
    /// Accepted orders.
    pub orders_accepted: u32,
    /// Sold-out answers.
    pub rejected: u32,
    /// Failed buyers.
    pub errors: u32,
    /// Orders sent but never answered.
    pub unknown: u32,
    /// Units across those unanswered orders.
    pub in_doubt_units: u64,
    /// Buyers that stopped waiting their turn.
    pub gave_up: u32,
    /// `(end_us, stock_after)` of the accepted order that answered last: the counter as last
    /// written (the page's live "stock left").
    pub last_write: Option<(u64, i64)>,
}

impl RunProgress {
    /// Count one more outcome in.
    pub fn add(&mut self, o: &BuyerOutcome) {
        self.buyers_done += 1;
        match o.result {
            OutcomeResult::Reserved => {
                self.units_sold += u64::from(o.qty);
                self.orders_accepted += 1;
                if let Some(written) = o.stock_after
                    && self.last_write.is_none_or(|(t, _)| o.end_us >= t)
                {
                    self.last_write = Some((o.end_us, written));
                }
            }
            OutcomeResult::SoldOut => self.rejected += 1,
            OutcomeResult::Error => self.errors += 1,
            OutcomeResult::Unknown => {
                self.unknown += 1;
                self.in_doubt_units += u64::from(o.qty);
            }
            OutcomeResult::GaveUp => self.gave_up += 1,
        }
    }
}

/// A page of a race's audit record, in the order outcomes reached the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRows {
    /// Which run.
    pub run_id: String,
    /// 0-based position of the first row.
    pub from: u32,
    /// Rows in the record now (it grows while the race runs).
    pub total: u32,
    /// Units across accepted orders before `from`: with it the page tells which of these
    /// orders took units that never existed.
    pub units_sold_before: u64,
    /// The rows, from `from` on.
    pub outcomes: Vec<BuyerOutcome>,
}
