//! Rooms: a presenter, a roomful of phones that are the buyers, and spectators, on any
//! number of `oversold serve` processes sharing one Redis.
//!
//! # Layout
//! - this file: [`Rooms`], the per-process part (caps, the shared connection, the task
//!   tracker, the Redis this process may restart) and the helpers every handler uses.
//! - [`seat`]: one socket's place in a room, and the handlers of `create_room`, `join_room`
//!   and `buy`; [`control`]: `open_sale` and `close_sale`; [`forward`]: a seat's task that
//!   turns the room's events into its socket's frames.
//! - [`hub`]: one reader of a room's Redis stream per process, handing events to the
//!   process's sockets; [`event`]: what the stream carries.
//! - [`sale`]: a sale, run by the process that opened it (clicks reach it through the stream).
//! - [`chaos`]: the presenter's chaos buttons, only against the sale's own Redis
//!   ([`sale_redis`]).
//! - [`secret`]: room codes and presenter tokens; [`qr`]: `GET /qr/ROOM.svg`.
//!
//! # What lives where
//! Everything a presenter needs to come back lives in Redis (`store::rooms`): the room's
//! record (the token's hash, participant ids, head counts), its event stream, the open
//! sale's lease. A process holds only what it can lose: its readers, its sockets, the sales
//! it runs. Any process can serve any participant.

pub mod chaos;
pub mod control;
pub mod event;
pub mod forward;
pub mod hub;
pub mod qr;
pub mod sale;
pub mod sale_redis;
pub mod seat;
pub mod secret;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use oversold_protocol::{ErrorCode, WireError};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::backends::Backends;
use crate::budget::Budget;
use crate::client::ClientAddr;
use crate::store::rooms::{self as store, RoomKeys};
use crate::store::{RedisConn, Store, StoreError};

use event::Event;

/// What rooms need from the server they run in. The app's state implements it; rooms name
/// no type of the layers above them (the socket, the router), so the module graph has no
/// cycle through them.
pub trait Host: Send + Sync + 'static {
    /// The stores.
    fn backends(&self) -> &Backends;
    /// This process's rooms.
    fn rooms(&self) -> &Rooms;
    /// Cancelled on shutdown.
    fn shutdown(&self) -> &CancellationToken;
    /// The server's run cap (a sale takes a slot like a run).
    fn run_slots(&self) -> &Arc<tokio::sync::Semaphore>;
    /// The connection budget (a sale reserves its connections from it).
    fn connections(&self) -> &Budget;
}

/// A room nobody touches for this long is gone (its keys expire).
pub const DEFAULT_TTL: Duration = Duration::from_secs(30 * 60);
/// Rooms one process follows at once (each costs a blocking reader connection).
pub const DEFAULT_MAX_ROOMS: usize = 64;
/// People in one room (phones, spectators and presenters, across every process).
pub const DEFAULT_MAX_PARTICIPANTS: u32 = 1_000;
/// Rooms one address may create per [`CREATE_WINDOW`].
const CREATES_PER_WINDOW: u32 = 10;
const CREATE_WINDOW: Duration = Duration::from_secs(600);
/// Addresses the creation limiter remembers; past this it forgets the oldest windows.
const CREATE_ADDRESSES: usize = 10_000;

/// The rooms side of one server process.
pub struct Rooms {
    ttl: Duration,
    /// Cap on rooms this process follows.
    pub max_rooms: usize,
    /// Cap on people per room.
    pub max_participants: u32,
    hubs: hub::Hubs,
    /// Every task rooms start (readers, sales, chaos): tracked, never fire-and-forget.
    pub tracker: TaskTracker,
    shared: tokio::sync::Mutex<Option<RedisConn>>,
    creations: Mutex<HashMap<ClientAddr, (Instant, u32)>>,
    /// Each sale runs on a `redis-server` of its own (and chaos is allowed on it).
    pub own_sale_redis: bool,
}

impl Default for Rooms {
    fn default() -> Self {
        Rooms {
            ttl: DEFAULT_TTL,
            max_rooms: DEFAULT_MAX_ROOMS,
            max_participants: DEFAULT_MAX_PARTICIPANTS,
            hubs: hub::Hubs::default(),
            tracker: TaskTracker::new(),
            shared: tokio::sync::Mutex::new(None),
            creations: Mutex::new(HashMap::new()),
            own_sale_redis: false,
        }
    }
}

impl Rooms {
    /// Rooms expire after `ttl` without activity (at least a second).
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_secs(1));
        self
    }

    /// Run each sale on a `redis-server` of its own, started with the sale and stopped
    /// with it, and allow the chaos buttons on it (see [`sale_redis`]).
    pub fn with_own_sale_redis(mut self) -> Self {
        self.own_sale_redis = true;
        self
    }

    /// The inactivity expiry in whole seconds (what `EXPIRE` takes).
    pub fn ttl_s(&self) -> u64 {
        self.ttl.as_secs().max(1)
    }

    /// Rooms this process follows right now.
    pub fn live_rooms(&self) -> usize {
        self.hubs.live()
    }

    /// The process's shared (multiplexed) connection for room commands, opened again once
    /// broken. Never used for a blocking read.
    pub async fn conn(&self, store: &Store) -> Result<RedisConn, WireError> {
        let mut shared = self.shared.lock().await;
        if let Some(conn) = shared.as_ref().filter(|c| !c.is_broken()) {
            return Ok(conn.clone());
        }
        let conn = store.connect().await.map_err(unavailable)?;
        *shared = Some(conn.clone());
        Ok(conn)
    }

    /// The hub of room `code` (started if needed), or `busy` at the cap.
    pub async fn hub(&self, code: &str, store: &Store) -> Result<Arc<hub::Hub>, WireError> {
        self.hubs
            .get(code, store, &self.tracker, self.max_rooms)
            .await
            .map_err(unavailable)?
            .ok_or_else(|| {
                WireError::new(
                    ErrorCode::Busy,
                    format!(
                        "this server follows its maximum of {} rooms; try again later",
                        self.max_rooms
                    ),
                )
            })
    }

    /// May `addr` create another room now? At most [`CREATES_PER_WINDOW`] per window.
    fn allow_creation(&self, addr: ClientAddr) -> bool {
        let mut seen = self.creations.lock().expect("creation limiter poisoned");
        if seen.len() >= CREATE_ADDRESSES {
            seen.retain(|_, (since, _)| since.elapsed() < CREATE_WINDOW);
        }
        if seen.len() >= CREATE_ADDRESSES {
            return false; // bounded memory beats one more room
        }
        let entry = seen.entry(addr).or_insert((Instant::now(), 0));
        if entry.0.elapsed() >= CREATE_WINDOW {
            *entry = (Instant::now(), 0);
        }
        entry.1 += 1;
        entry.1 <= CREATES_PER_WINDOW
    }
}

impl Rooms {
    /// Append `event` to the room's stream (renewing the room's TTL); returns its id.
    pub async fn publish(
        &self,
        conn: &mut RedisConn,
        keys: &RoomKeys,
        event: &Event,
    ) -> Result<String, WireError> {
        let body = serde_json::to_string(event).expect("room events serialize");
        store::append(conn, keys, &body, self.ttl_s())
            .await
            .map_err(unavailable)
    }
}

/// Append `event` to room `keys`'s stream on the process's shared connection; a failure is
/// logged (the screens miss this one event; nothing else depends on it).
pub async fn announce(state: &Arc<dyn Host>, keys: &RoomKeys, event: &Event) {
    let sent = match state.rooms().conn(&state.backends().redis).await {
        Ok(mut conn) => state
            .rooms()
            .publish(&mut conn, keys, event)
            .await
            .map(drop),
        Err(e) => Err(e),
    };
    if let Err(e) = sent {
        tracing::warn!(error = %e.message, "a room event could not be sent");
    }
}

/// Redis could not do what a room needed.
pub fn unavailable(e: StoreError) -> WireError {
    WireError::new(
        ErrorCode::RedisUnavailable,
        format!("Redis could not be reached: {}", e.short()),
    )
}

/// Is `token` this room's presenter token? `no_such_room` when the room is gone,
/// `not_presenter` when the token is wrong. Checked before anything else a presenter
/// action does, so a refusal changes nothing.
pub async fn check_presenter(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    token: &str,
) -> Result<(), WireError> {
    match store::token_hash(conn, keys).await.map_err(unavailable)? {
        None => Err(no_such_room()),
        Some(stored) if secret::matches(token, &stored) => Ok(()),
        Some(_) => Err(WireError::new(
            ErrorCode::NotPresenter,
            "only the room's presenter may do that (the presenter token does not match)",
        )),
    }
}

/// The room does not exist (or expired).
pub fn no_such_room() -> WireError {
    WireError::new(
        ErrorCode::NoSuchRoom,
        "no room has that code (it may have expired)",
    )
}
