//! A race at scale on a socket (more buyers than `LIVE_OUTCOMES_MAX`, see
//! `oversold_protocol::at_scale`): its outcomes become running totals sent every
//! `PROGRESS_EVERY_MS`, and rows of a compact record the page reads a page at a time.
//!
//! Why compact: a `BuyerOutcome` is ~150 bytes with its strings; a [`Row`] is 44, and the few
//! distinct error texts and node names are kept once each ([`Strings`]). A million-buyer
//! race's record is ~44 MB, allocated once when the race starts. A socket keeps the record
//! of its latest race at scale only; the next one (or the socket's close) drops it.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use oversold_protocol::at_scale::{AuditRows, MAX_AUDIT_PAGE, PROGRESS_EVERY_MS, RunProgress};
use oversold_protocol::{BuyerOutcome, ErrorCode, OutcomeResult, ServerMessage, WireError};
use tokio::sync::mpsc;

/// Rows between two checkpoints of the units sold so far: a page finds the units sold before
/// its first row by adding up at most this many rows.
const CHECKPOINT_EVERY: usize = 1024;
/// Distinct error texts (and node names) one record keeps; later new ones share one text.
const MAX_STRINGS: usize = 256;
/// Outcomes taken from the channel at once.
const DRAIN: usize = 4096;

/// The socket's record of its latest race at scale, shared by the job that writes it and the
/// session that answers `audit_page` from it.
#[derive(Clone, Default)]
pub struct Shelf(Arc<Mutex<Option<Record>>>);

impl Shelf {
    /// Put a new, empty record for `run_id` on the shelf (dropping the previous one).
    fn start(&self, run_id: &str, buyers: u32) {
        let record = Record {
            run_id: run_id.to_string(),
            rows: Vec::with_capacity(buyers as usize),
            checkpoints: Vec::new(),
            units_sold: 0,
            strings: Strings::default(),
        };
        *self.lock() = Some(record);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Record>> {
        // A panic while holding the lock leaves a record that is merely incomplete.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The answer to `audit_page`.
    pub fn page(&self, run_id: &str, from: u32, count: u32) -> Result<AuditRows, WireError> {
        if !(1..=MAX_AUDIT_PAGE).contains(&count) {
            return Err(WireError::new(
                ErrorCode::OutOfRange,
                format!("count must be 1 to {MAX_AUDIT_PAGE} rows"),
            ));
        }
        let guard = self.lock();
        let Some(record) = guard.as_ref().filter(|r| r.run_id == run_id) else {
            // No `run_id` on this error: an error carrying one is that run's terminal frame.
            return Err(WireError::new(
                ErrorCode::NoRunInProgress,
                format!(
                    "no audit record for run {run_id:?}: this connection keeps its latest race \
                     at scale only"
                ),
            ));
        };
        record.page(from, count)
    }
}

/// One buyer's outcome, compact: `None` is a sentinel, strings are indices into [`Strings`].
#[derive(Debug, Clone, Copy)]
struct Row {
    buyer: u32,
    latency_us: u32,
    start_us: u32,
    end_us: u32,
    read_us: u32,
    observed_stock: i32,
    stock_after: i32,
    app_server: u16,
    qty: u16,
    round_trips: u16,
    retries: u16,
    bucket: u16,
    error: u16,
    node: u16,
    result: OutcomeResult,
}

const NO_U32: u32 = u32::MAX;
const NO_I32: i32 = i32::MIN;
const NO_U16: u16 = u16::MAX;

/// Every race the page can start keeps its numbers within these types (a stock of at most
/// 100,000, an oversell of at most a million orders of 100, runs of minutes); a value that
/// does not fit is clamped rather than wrapped.
fn u32_of(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(NO_U32 - 1)
}

fn i32_of(v: i64) -> i32 {
    i32::try_from(v).unwrap_or(if v < 0 { NO_I32 + 1 } else { i32::MAX })
}

fn u16_of(v: u32) -> u16 {
    u16::try_from(v).unwrap_or(NO_U16 - 1)
}

/// The distinct strings of a record, each kept once.
#[derive(Default)]
struct Strings(Vec<String>);

impl Strings {
    fn index(&mut self, s: Option<&str>) -> u16 {
        let Some(s) = s else { return NO_U16 };
        if let Some(i) = self.0.iter().position(|k| k == s) {
            return i as u16;
        }
        if self.0.len() < MAX_STRINGS {
            self.0.push(s.to_string());
        } else if self.0.len() == MAX_STRINGS {
            self.0
                .push("(one of many distinct texts; this record keeps the first 256)".into());
        }
        (self.0.len() - 1) as u16
    }

    fn get(&self, i: u16) -> Option<String> {
        self.0.get(usize::from(i)).cloned()
    }
}

/// The rows of one race at scale, in the order their outcomes reached the socket.
struct Record {
    run_id: String,
    rows: Vec<Row>,
    /// Units sold before row `k * CHECKPOINT_EVERY`.
    checkpoints: Vec<u64>,
    units_sold: u64,
    strings: Strings,
}

impl Record {
    fn push(&mut self, o: &BuyerOutcome) {
        if self.rows.len().is_multiple_of(CHECKPOINT_EVERY) {
            self.checkpoints.push(self.units_sold);
        }
        if o.result == OutcomeResult::Reserved {
            self.units_sold += u64::from(o.qty);
        }
        let row = Row {
            buyer: o.buyer,
            latency_us: u32_of(o.latency_us),
            start_us: u32_of(o.start_us),
            end_us: u32_of(o.end_us),
            read_us: o.read_us.map_or(NO_U32, u32_of),
            observed_stock: o.observed_stock.map_or(NO_I32, i32_of),
            stock_after: o.stock_after.map_or(NO_I32, i32_of),
            app_server: u16_of(o.app_server),
            qty: u16_of(o.qty),
            round_trips: u16_of(o.round_trips),
            retries: u16_of(o.retries),
            bucket: o.bucket.map_or(NO_U16, u16_of),
            error: self.strings.index(o.error.as_deref()),
            node: self.strings.index(o.node.as_deref()),
            result: o.result,
        };
        self.rows.push(row);
    }

    fn page(&self, from: u32, count: u32) -> Result<AuditRows, WireError> {
        let total = self.rows.len();
        let start = from as usize;
        if start > total {
            return Err(WireError::new(
                ErrorCode::OutOfRange,
                format!("from {from} is past the {total} rows recorded so far"),
            ));
        }
        let end = (start + count as usize).min(total);
        let base = (start / CHECKPOINT_EVERY) * CHECKPOINT_EVERY;
        let units_sold_before = self
            .checkpoints
            .get(start / CHECKPOINT_EVERY)
            .copied()
            .unwrap_or(self.units_sold)
            + self.rows[base.min(total)..start]
                .iter()
                .filter(|r| r.result == OutcomeResult::Reserved)
                .map(|r| u64::from(r.qty))
                .sum::<u64>();
        Ok(AuditRows {
            run_id: self.run_id.clone(),
            from,
            total: total as u32,
            units_sold_before,
            outcomes: self.rows[start..end]
                .iter()
                .map(|r| self.outcome(r))
                .collect(),
        })
    }

    fn outcome(&self, r: &Row) -> BuyerOutcome {
        let some_u64 = |v: u32| (v != NO_U32).then_some(u64::from(v));
        let some_i64 = |v: i32| (v != NO_I32).then_some(i64::from(v));
        BuyerOutcome {
            buyer: r.buyer,
            app_server: u32::from(r.app_server),
            qty: u32::from(r.qty),
            observed_stock: some_i64(r.observed_stock),
            result: r.result,
            error: self.strings.get(r.error),
            stock_after: some_i64(r.stock_after),
            latency_us: u64::from(r.latency_us),
            start_us: u64::from(r.start_us),
            end_us: u64::from(r.end_us),
            read_us: some_u64(r.read_us),
            round_trips: u32::from(r.round_trips),
            retries: u32::from(r.retries),
            bucket: (r.bucket != NO_U16).then_some(u32::from(r.bucket)),
            node: self.strings.get(r.node),
            checkout: None,
            cart: None,
            epoch: None,
        }
    }
}

/// Fold a race's outcomes into progress frames and the shelf's record until every sender is
/// gone, then send the last totals. Returns false if the socket went away first.
///
/// A progress frame never waits for a slow reader: when the socket's queue is full it is
/// skipped (the next one carries newer totals), so the outcomes never pile up in memory
/// behind the socket. Only the last one waits for its turn.
pub async fn forward(
    run_id: String,
    buyers: u32,
    mut outcomes: mpsc::UnboundedReceiver<BuyerOutcome>,
    outbound: mpsc::Sender<ServerMessage>,
    shelf: Shelf,
) -> bool {
    shelf.start(&run_id, buyers);
    let mut progress = RunProgress::default();
    let mut tick = tokio::time::interval(Duration::from_millis(PROGRESS_EVERY_MS));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut batch = Vec::with_capacity(DRAIN);
    let mut unsent = false;
    let frame = |progress: &RunProgress| ServerMessage::RunProgress {
        run_id: run_id.clone(),
        progress: progress.clone(),
    };
    loop {
        tokio::select! {
            taken = outcomes.recv_many(&mut batch, DRAIN) => {
                if taken == 0 {
                    break;
                }
                let mut guard = shelf.lock();
                for o in batch.drain(..) {
                    progress.add(&o);
                    if let Some(record) = guard.as_mut() {
                        record.push(&o);
                    }
                }
                unsent = true;
            }
            _ = tick.tick(), if unsent => {
                match outbound.try_send(frame(&progress)) {
                    Ok(()) | Err(mpsc::error::TrySendError::Full(_)) => unsent = false,
                    Err(mpsc::error::TrySendError::Closed(_)) => return false,
                }
            }
        }
    }
    outbound.send(frame(&progress)).await.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(buyer: u32, result: OutcomeResult, qty: u32) -> BuyerOutcome {
        BuyerOutcome {
            buyer,
            app_server: buyer % 3,
            qty,
            observed_stock: Some(5),
            result,
            error: (result == OutcomeResult::Error).then(|| format!("refused ({})", buyer % 3)),
            stock_after: (result == OutcomeResult::Reserved).then_some(-(buyer as i64)),
            latency_us: 1234,
            start_us: 10,
            end_us: 1244,
            read_us: None,
            round_trips: 1,
            retries: 0,
            bucket: None,
            node: None,
            checkout: None,
            cart: None,
            epoch: None,
        }
    }

    fn record_of(outcomes: &[BuyerOutcome]) -> Record {
        let shelf = Shelf::default();
        shelf.start("r-1", outcomes.len() as u32);
        let mut guard = shelf.lock();
        let record = guard.as_mut().unwrap();
        for o in outcomes {
            record.push(o);
        }
        guard.take().unwrap()
    }

    #[test]
    fn a_row_comes_back_as_the_outcome_it_was() {
        let all: Vec<_> = (1..=5000)
            .map(|b| {
                let result = [
                    OutcomeResult::Reserved,
                    OutcomeResult::SoldOut,
                    OutcomeResult::Error,
                    OutcomeResult::Unknown,
                ][b as usize % 4];
                outcome(b, result, 1 + b % 3)
            })
            .collect();
        let record = record_of(&all);
        for from in [0, 1, 1023, 1024, 1025, 4990] {
            let page = record.page(from, 10).unwrap();
            assert_eq!(
                page.outcomes,
                all[from as usize..(from as usize + 10).min(5000)]
            );
            let before: u64 = all[..from as usize]
                .iter()
                .filter(|o| o.result == OutcomeResult::Reserved)
                .map(|o| u64::from(o.qty))
                .sum();
            assert_eq!(page.units_sold_before, before, "from {from}");
            assert_eq!(page.total, 5000);
        }
        assert_eq!(record.page(5000, 10).unwrap().outcomes, vec![]);
        assert_eq!(
            record.page(5001, 10).unwrap_err().code,
            ErrorCode::OutOfRange
        );
        assert_eq!(
            record.strings.0.len(),
            3,
            "three distinct error texts, kept once each"
        );
        assert_eq!(std::mem::size_of::<Row>(), 44);
    }

    #[test]
    fn a_page_is_bounded_and_only_for_the_latest_race() {
        let shelf = Shelf::default();
        shelf.start("r-1", 10);
        assert_eq!(
            shelf.page("r-1", 0, 0).unwrap_err().code,
            ErrorCode::OutOfRange
        );
        assert_eq!(
            shelf.page("r-1", 0, MAX_AUDIT_PAGE + 1).unwrap_err().code,
            ErrorCode::OutOfRange
        );
        assert_eq!(shelf.page("r-1", 0, MAX_AUDIT_PAGE).unwrap().total, 0);
        let e = shelf.page("r-0", 0, 1).unwrap_err();
        assert_eq!((e.code, e.run_id), (ErrorCode::NoRunInProgress, None));
    }
}
