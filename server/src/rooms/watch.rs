//! A process's watch over the rooms it follows, so that a process that dies leaves no room
//! hanging.
//!
//! Every [`BEAT_EVERY`] the watch renews this process's heartbeat (a key that expires
//! [`BEAT_TTL`] after the last beat), and for each room this process follows:
//! - takes back the head counts of processes whose heartbeat ran out (their sockets are
//!   gone with them), and tells the room the new count;
//! - closes a sale whose process's heartbeat ran out: one process wins the lease's
//!   compare-and-delete, frees the room for the next sale, and tells every screen what is
//!   known, from the room's stream: what the dead process reported before it died, and what
//!   is in doubt (clicks that got no answer, bots that were never reported). Each phone with
//!   a click in doubt gets a `buy_result` saying so.
//!
//! A process that is alive but cannot reach Redis for [`BEAT_TTL`] looks dead to the others:
//! its sale is closed for everyone, and its own close later changes nothing (the lease is
//! gone).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use oversold_protocol::room::{BuyResult, SaleClosed};
use oversold_protocol::{OutcomeResult, ServerMessage, WireError};

use super::event::{Event, Stamped, StreamId};
use super::hub::{Hub, READ_BATCH};
use super::sale::SaleRecord;
use super::{Host, unavailable};
use crate::store::RedisConn;
use crate::store::rooms as store;

/// How often the watch runs.
pub const BEAT_EVERY: Duration = Duration::from_secs(2);
/// A process whose heartbeat is this old is taken for dead.
pub const BEAT_TTL: Duration = Duration::from_secs(10);

/// Renew this process's heartbeat now.
pub async fn beat_now(state: &Arc<dyn Host>, conn: &mut RedisConn) -> Result<(), WireError> {
    let ms = u64::try_from(BEAT_TTL.as_millis()).unwrap_or(u64::MAX);
    store::beat(conn, &state.rooms().process_id, ms)
        .await
        .map_err(unavailable)
}

/// The watch's loop, until shutdown.
pub async fn run(state: Arc<dyn Host>) {
    let mut tick = tokio::time::interval(BEAT_EVERY);
    loop {
        tokio::select! {
            _ = state.shutdown().cancelled() => return,
            _ = tick.tick() => {}
        }
        let Ok(mut conn) = state.rooms().conn(&state.backends().redis).await else {
            continue;
        };
        if beat_now(&state, &mut conn).await.is_err() {
            continue;
        }
        for hub in state.rooms().hubs.all() {
            if let Err(e) = watch_room(&state, &mut conn, &hub).await {
                tracing::debug!(room = %hub.code, error = %e, "room watch could not finish");
            }
        }
    }
}

async fn watch_room(
    state: &Arc<dyn Host>,
    conn: &mut RedisConn,
    hub: &Hub,
) -> Result<(), crate::store::StoreError> {
    take_back_counts(state, conn, hub).await?;
    close_orphaned_sale(state, conn, hub).await
}

/// Delete the head counts of dead processes, and announce the room's new count.
async fn take_back_counts(
    state: &Arc<dyn Host>,
    conn: &mut RedisConn,
    hub: &Hub,
) -> Result<(), crate::store::StoreError> {
    let me = &state.rooms().process_id;
    let mut by_process: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (field, _) in store::head_counts(conn, &hub.keys).await? {
        if let Some((process, _)) = field.rsplit_once(':')
            && process != me
        {
            by_process
                .entry(process.to_string())
                .or_default()
                .push(field);
        }
    }
    let mut dead = Vec::new();
    for (process, fields) in by_process {
        if !store::is_alive(conn, &process).await? {
            tracing::info!(room = %hub.code, %process, "a dead process's head counts taken back");
            dead.extend(fields);
        }
    }
    if dead.is_empty() {
        return Ok(());
    }
    store::forget_counts(conn, &hub.keys, &dead).await?;
    let (phones, watchers) = store::presence(conn, &hub.keys).await?;
    let ttl = state.rooms().ttl_s();
    let body = serde_json::to_string(&Event::Presence { phones, watchers }).expect("serializes");
    store::append(conn, &hub.keys, &body, ttl).await.map(drop)
}

/// Close the room's open sale if the process running it is dead (see the module doc).
async fn close_orphaned_sale(
    state: &Arc<dyn Host>,
    conn: &mut RedisConn,
    hub: &Hub,
) -> Result<(), crate::store::StoreError> {
    let Some(json) = store::sale(conn, &hub.keys).await? else {
        return Ok(());
    };
    let Ok(record) = serde_json::from_str::<SaleRecord>(&json) else {
        return Ok(());
    };
    if record.holder.is_empty()
        || record.holder == state.rooms().process_id
        || store::is_alive(conn, &record.holder).await?
    {
        return Ok(());
    }
    // Exactly one process wins this compare-and-delete; the room can sell again after it.
    if !store::end_sale(conn, &hub.keys, &json).await? {
        return Ok(());
    }
    tracing::warn!(room = %hub.code, sale = %record.sale_id, holder = %record.holder,
        "the process running this sale died; closing it for everyone");
    let start = store::sale_start(conn, &hub.keys)
        .await?
        .and_then(|id| StreamId::parse(&id));
    let known = read_sale(hub, start, &record.sale_id).await?;
    if known.closed {
        return Ok(()); // it had closed after all (its last act was to end the lease)
    }
    for (to, request_id) in known.in_doubt() {
        let msg = in_doubt(&hub.code, &record.sale_id, request_id);
        super::announce(state, &hub.keys, &Event::One { to, msg }).await;
    }
    let msg = ServerMessage::SaleClosed(SaleClosed {
        room: hub.code.clone(),
        sale_id: record.sale_id.clone(),
        summary: None,
        error: Some(known.words()),
        reloads: 0,
    });
    super::announce(state, &hub.keys, &Event::All { msg }).await;
    Ok(())
}

/// What the room's stream says about one sale.
#[derive(Default)]
struct Known {
    bots: u32,
    /// Outcomes the sale's process published, by result.
    reported: BTreeMap<&'static str, u32>,
    units_sold: u64,
    clicks: BTreeSet<(u32, String)>,
    answered: BTreeSet<(u32, String)>,
    closed: bool,
}

impl Known {
    fn take(&mut self, s: &Stamped, sale_id: &str) {
        match &s.event {
            Event::All { msg } => match msg {
                ServerMessage::SaleOpened(o) if o.sale_id == sale_id => self.bots = o.config.bots,
                ServerMessage::Outcomes { run_id, outcomes } if run_id == sale_id => {
                    for o in outcomes {
                        *self.reported.entry(in_words(o.result)).or_default() += 1;
                        if o.result == OutcomeResult::Reserved {
                            self.units_sold += u64::from(o.qty);
                        }
                    }
                }
                ServerMessage::SaleClosed(c) if c.sale_id == sale_id => self.closed = true,
                _ => {}
            },
            Event::One {
                to,
                msg: ServerMessage::BuyResult(r),
            } if r.sale_id == sale_id => {
                self.answered.insert((*to, r.request_id.clone()));
            }
            Event::Click {
                sale_id: of,
                participant,
                request_id,
            } if of == sale_id => {
                self.clicks.insert((*participant, request_id.clone()));
            }
            _ => {}
        }
    }

    fn in_doubt(&self) -> impl Iterator<Item = (u32, &str)> {
        self.clicks
            .difference(&self.answered)
            .map(|(to, id)| (*to, id.as_str()))
    }

    /// The honest words for the close.
    fn words(&self) -> String {
        let reported: u32 = self.reported.values().sum();
        let phones_reported = u32::try_from(self.answered.len()).unwrap_or(u32::MAX);
        let bots_unreported = self
            .bots
            .saturating_sub(reported.saturating_sub(phones_reported));
        let doubt = self.in_doubt().count();
        let by_result = self
            .reported
            .iter()
            .map(|(result, n)| format!("{n} {result}"))
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "the server process running this sale stopped before the sale ended, so there is \
             no summary. Before it stopped it reported {reported} buyers ({by}): {} units \
             sold. In doubt: {doubt} clicks that got no answer and up to {bots_unreported} \
             bots never reported; whether they bought is unknown, because the sale's stock \
             went with its process.",
            self.units_sold,
            by = if by_result.is_empty() {
                "none".to_string()
            } else {
                by_result
            },
        )
    }
}

/// A result as the close's sentence says it.
fn in_words(result: OutcomeResult) -> &'static str {
    match result {
        OutcomeResult::Reserved => "bought",
        OutcomeResult::SoldOut => "sold out",
        OutcomeResult::Error => "failed",
        OutcomeResult::Unknown => "in doubt",
        OutcomeResult::GaveUp => "gave up",
    }
}

/// Every event of the sale from its start, page by page.
async fn read_sale(
    hub: &Hub,
    start: Option<StreamId>,
    sale_id: &str,
) -> Result<Known, crate::store::StoreError> {
    let mut known = Known::default();
    let Some(start) = start else {
        return Ok(known);
    };
    let mut page = hub.since(Some(start), true).await?;
    loop {
        let full = page.len() >= READ_BATCH;
        let last = page.last().map(|s| s.id);
        for s in &page {
            known.take(s, sale_id);
        }
        match (full, last) {
            (true, Some(last)) => page = hub.since(Some(last), false).await?,
            _ => return Ok(known),
        }
    }
}

/// The `buy_result` of a click whose fate is unknown.
fn in_doubt(room: &str, sale_id: &str, request_id: &str) -> ServerMessage {
    ServerMessage::BuyResult(BuyResult {
        room: room.to_string(),
        request_id: request_id.to_string(),
        sale_id: sale_id.to_string(),
        result: OutcomeResult::Unknown,
        unit: None,
        outcome: None,
        message: Some(
            "in doubt: the server running the sale stopped before answering this click; \
             whether it bought is unknown"
                .to_string(),
        ),
    })
}
