//! One reader per room per process: it follows the room's Redis stream and hands each event
//! to the sockets of this process that are in the room.
//!
//! A hub lives as long as something in this process holds it (a seat, a sale): the registry
//! keeps only a `Weak`, and dropping the last `Arc` stops the reader. The reader has its own
//! connection, because `XREAD BLOCK` holds a connection for the whole wait.
//!
//! Locally events go out on a `broadcast` channel. A receiver that falls behind (a slow
//! phone's socket) does not slow the others: it gets `Lagged`, and catches up from the
//! stream itself ([`Hub::since`]), which keeps every event by its id.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use oversold_protocol::ServerMessage;
use oversold_protocol::room::Presence;
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

use super::event::{self, Event, Stamped, StreamId};
use crate::store::rooms::{self as store, RoomKeys};
use crate::store::{RedisConn, Store, StoreError};

/// Events the local channel buffers before a slow receiver lags. A sale of 2,000 phones is
/// about 6,000 events (clicks, outcomes, answers); with 4,096, under load most of a
/// process's 500 receivers lagged, and each then read the stream's tail from Redis on its own
/// (hundreds of 1,000-entry `XRANGE`s at once, the clicks queued behind them): 1,853 of
/// 2,000 clicks went unanswered before the sale ended (`examples/room_bench --participants
/// 2000 --servers 4`); with 16,384, 150. The slots hold `Arc`s of events the hub decoded
/// anyway: a few MB per busy room.
const LOCAL_BUFFER: usize = 16_384;
/// How long one `XREAD` waits for something new.
const BLOCK_MS: u64 = 1_000;
/// Entries one read (or one catch-up) takes at most.
pub const READ_BATCH: usize = 1_000;
/// Wait between attempts to reach Redis again.
const RECONNECT_EVERY: Duration = Duration::from_millis(250);

/// A room as this process follows it.
pub struct Hub {
    /// The room code.
    pub code: String,
    /// Its keys.
    pub keys: RoomKeys,
    events: broadcast::Sender<Arc<Stamped>>,
    presence: watch::Receiver<Presence>,
    store: Store,
    /// The process's shared connection: replays read on it, not on a connection of their own.
    shared: super::SharedConn,
    stop: CancellationToken,
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Hub {
    /// Start following room `code` from its newest event on. Returns once the reader knows
    /// where "now" is, so an event appended after this returns reaches the subscribers, and
    /// one appended before can be read with [`Hub::since`]: nothing falls in between.
    pub async fn start(
        code: &str,
        store: Store,
        shared: super::SharedConn,
        tracker: &tokio_util::task::TaskTracker,
    ) -> Result<Arc<Hub>, StoreError> {
        let keys = RoomKeys::new(code);
        let mut conn = store.connect().await?;
        let now = store::last_id(&mut conn, &keys)
            .await?
            .and_then(|id| StreamId::parse(&id))
            .unwrap_or_default();
        let (events, _) = broadcast::channel(LOCAL_BUFFER);
        let (presence_tx, presence) = watch::channel(Presence::default());
        let stop = CancellationToken::new();
        let reader = Reader {
            keys: keys.clone(),
            store: store.clone(),
            events: events.clone(),
            presence: presence_tx,
            stop: stop.clone(),
        };
        tracker.spawn(reader.run(conn, now));
        Ok(Arc::new(Hub {
            code: code.to_string(),
            keys,
            events,
            presence,
            store,
            shared,
            stop,
        }))
    }

    /// Live events from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Stamped>> {
        self.events.subscribe()
    }

    /// Head count and clicks, as last seen on the stream.
    pub fn presence(&self) -> watch::Receiver<Presence> {
        self.presence.clone()
    }

    /// Events from `from` on (inclusive or not; the whole stream when `None`), read from
    /// Redis: how a late joiner or a lagging receiver catches up. At most [`READ_BATCH`].
    pub async fn since(
        &self,
        from: Option<StreamId>,
        inclusive: bool,
    ) -> Result<Vec<Stamped>, StoreError> {
        let from = match (from, inclusive) {
            (Some(id), true) => id.to_string(),
            (Some(id), false) => format!("({id}"),
            (None, _) => "-".to_string(),
        };
        let mut conn = self.shared.get(&self.store).await?;
        Ok(event::decode(
            store::range(&mut conn, &self.keys, &from, READ_BATCH).await?,
        ))
    }
}

/// The reader's ends: where it reads, where it hands events, when it stops.
struct Reader {
    keys: RoomKeys,
    store: Store,
    events: broadcast::Sender<Arc<Stamped>>,
    presence: watch::Sender<Presence>,
    stop: CancellationToken,
}

impl Reader {
    /// `XREAD BLOCK` in a loop, reconnecting after an error. After a reconnect it checks
    /// that the stream has not gone backwards (Redis restarted empty): if it has, it starts
    /// again from the beginning of the new stream instead of waiting for ids that will not
    /// come for a long time.
    async fn run(self, conn: RedisConn, mut last: StreamId) {
        let mut conn = Some(conn);
        while !self.stop.is_cancelled() {
            let c = match conn.as_mut() {
                Some(c) => c,
                None => match self.reconnect(&mut last).await {
                    Ok(c) => conn.insert(c),
                    Err(e) => {
                        tracing::debug!(error = %e, "room reader cannot reach Redis yet");
                        pause(&self.stop).await;
                        continue;
                    }
                },
            };
            let after = last.to_string();
            let read = tokio::select! {
                _ = self.stop.cancelled() => break,
                read = store::read_after(c, &self.keys, &after, BLOCK_MS, READ_BATCH) => read,
            };
            match read {
                Ok(entries) => {
                    for stamped in event::decode(entries) {
                        last = stamped.id;
                        count(&self.presence, &stamped.event);
                        // No receivers is fine: nobody local is listening right now.
                        let _ = self.events.send(Arc::new(stamped));
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "room reader lost Redis; reconnecting");
                    conn = None;
                    pause(&self.stop).await;
                }
            }
        }
    }

    async fn reconnect(&self, last: &mut StreamId) -> Result<RedisConn, StoreError> {
        let mut conn = self.store.connect().await?;
        let top = store::last_id(&mut conn, &self.keys)
            .await?
            .and_then(|id| StreamId::parse(&id));
        if top.is_none_or(|t| t < *last) {
            *last = StreamId::default();
        }
        Ok(conn)
    }
}

async fn pause(stop: &CancellationToken) {
    tokio::select! {
        _ = stop.cancelled() => {}
        _ = tokio::time::sleep(RECONNECT_EVERY) => {}
    }
}

/// Keep the head count and the click count current from the events themselves.
fn count(presence: &watch::Sender<Presence>, event: &Event) {
    match event {
        Event::Presence { phones, watchers } => presence.send_modify(|p| {
            p.phones = *phones;
            p.watchers = *watchers;
        }),
        Event::Click { .. } => presence.send_modify(|p| p.clicks += 1),
        Event::All {
            msg: ServerMessage::SaleOpened(_),
        } => presence.send_modify(|p| p.clicks = 0),
        _ => {}
    }
}

/// This process's hubs, by room code. Only `Weak`s: a hub nobody holds is gone.
#[derive(Default)]
pub struct Hubs {
    rooms: Mutex<std::collections::HashMap<String, std::sync::Weak<Hub>>>,
}

impl Hubs {
    /// The hub of room `code`, started if needed. `Ok(None)` when this process already
    /// follows `cap` rooms.
    pub async fn get(
        &self,
        code: &str,
        store: &Store,
        shared: &super::SharedConn,
        tracker: &tokio_util::task::TaskTracker,
        cap: usize,
    ) -> Result<Option<Arc<Hub>>, StoreError> {
        {
            let mut rooms = self.rooms.lock().expect("hub registry poisoned");
            if let Some(hub) = rooms.get(code).and_then(std::sync::Weak::upgrade) {
                return Ok(Some(hub));
            }
            rooms.retain(|_, hub| hub.strong_count() > 0);
            if rooms.len() >= cap {
                return Ok(None);
            }
        }
        let hub = Hub::start(code, store.clone(), shared.clone(), tracker).await?;
        let mut rooms = self.rooms.lock().expect("hub registry poisoned");
        // Another socket may have started one meanwhile: keep theirs, ours stops on drop.
        if let Some(theirs) = rooms.get(code).and_then(std::sync::Weak::upgrade) {
            return Ok(Some(theirs));
        }
        rooms.insert(code.to_string(), Arc::downgrade(&hub));
        Ok(Some(hub))
    }

    /// Every room this process follows now.
    pub fn all(&self) -> Vec<Arc<Hub>> {
        let rooms = self.rooms.lock().expect("hub registry poisoned");
        rooms
            .values()
            .filter_map(std::sync::Weak::upgrade)
            .collect()
    }

    /// Rooms this process follows now.
    pub fn live(&self) -> usize {
        let rooms = self.rooms.lock().expect("hub registry poisoned");
        rooms.values().filter(|h| h.strong_count() > 0).count()
    }
}
