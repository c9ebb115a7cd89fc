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
//! - [`challenge`]: the room's workshop challenge and its leaderboard.
//! - [`chaos`]: the presenter's chaos buttons, only against the sale's own Redis
//!   ([`sale_redis`]).
//! - [`secret`]: room codes and presenter tokens; [`qr`]: `GET /qr/ROOM.svg`.
//!
//! # What lives where
//! Everything a presenter needs to come back lives in Redis (`store::rooms`): the room's
//! record (the token's hash, participant ids, head counts), its event stream, the open
//! sale's lease. A process holds only what it can lose: its readers, its sockets, the sales
//! it runs. Any process can serve any participant.

pub mod challenge;
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
pub mod watch;

use std::sync::Arc;
use std::time::Duration;

use oversold_protocol::{ErrorCode, WireError};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::backends::Backends;
use crate::client::Caller;
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
    /// Admit a sale as a run of `app_servers` app servers for `caller`'s address: its share
    /// of runs, a run slot, its connections (and `extra` more: `redlock`'s to its lock
    /// masters); refused with the same words a run gets.
    fn admit_sale(
        &self,
        caller: &Caller,
        app_servers: u32,
        extra: u32,
    ) -> Result<sale::Admitted, WireError>;
    /// The process's workshop judge (a room's challenge is judged like `check_solution`).
    fn workshop(&self) -> &Arc<crate::workshop::service::Workshop>;
}

/// A room nobody touches for this long is gone (its keys expire).
pub const DEFAULT_TTL: Duration = Duration::from_secs(30 * 60);
/// Rooms one process follows at once (each costs a blocking reader connection).
pub const DEFAULT_MAX_ROOMS: usize = 64;
/// People in one room (phones, spectators and presenters, across every process).
pub const DEFAULT_MAX_PARTICIPANTS: u32 = 1_000;
/// Rooms one address may create per [`CREATE_WINDOW`], counted in Redis: every process
/// sees the same count.
const CREATES_PER_WINDOW: u64 = 10;
const CREATE_WINDOW: Duration = Duration::from_secs(600);
/// Sale time one address may open per [`SALE_WINDOW`], all its rooms on every process.
pub const SALE_MS_PER_WINDOW: u64 = 30 * 60 * 1_000;
/// Bots one address may send into its sales per [`SALE_WINDOW`].
pub const BOTS_PER_WINDOW: u64 = 20_000;
/// The window of [`SALE_MS_PER_WINDOW`] and [`BOTS_PER_WINDOW`].
pub const SALE_WINDOW: Duration = Duration::from_secs(3_600);
/// New seats one address may take in one room, by default: twice the sockets it may hold
/// at once (`--max-sockets-per-address`, 32), so every phone may lose its seat token once.
pub const DEFAULT_SEATS_PER_ADDRESS: u64 = 64;
/// Clicks one seat may send in one sale (a phone taps a few times a second at most).
pub const CLICKS_PER_SEAT: u64 = 40;
/// Clicks one address may send in one sale, per seat it may take: one address's flood
/// cannot use up a sale's clicks for everyone else.
pub const CLICKS_PER_ADDRESS_SEAT: u64 = 8;
/// A seat whose socket left waits this long for it to come back (a reload), then expires.
pub const SEAT_GRACE: Duration = Duration::from_secs(300);

/// The process's one multiplexed connection for room commands (never a blocking read),
/// opened again once broken; cloned handles share it (the hubs' replays use it too).
#[derive(Clone, Default)]
pub struct SharedConn(Arc<tokio::sync::Mutex<Option<RedisConn>>>);

impl SharedConn {
    /// The connection, (re)opened on `store` if there is none or it broke.
    pub async fn get(&self, store: &Store) -> Result<RedisConn, StoreError> {
        let mut shared = self.0.lock().await;
        if let Some(conn) = shared.as_ref().filter(|c| !c.is_broken()) {
            return Ok(conn.clone());
        }
        let conn = store.connect().await?;
        *shared = Some(conn.clone());
        Ok(conn)
    }
}

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
    shared: SharedConn,
    /// New seats one address may take in one room.
    pub seats_per_address: u64,
    /// Each sale runs on a `redis-server` of its own (and chaos is allowed on it).
    pub own_sale_redis: bool,
    /// This process's id among the processes sharing the Redis (its head counts, its sales'
    /// lease, its heartbeat).
    pub process_id: String,
    /// The watch ([`watch`]) has been started.
    watching: std::sync::atomic::AtomicBool,
}

impl Default for Rooms {
    fn default() -> Self {
        Rooms {
            ttl: DEFAULT_TTL,
            max_rooms: DEFAULT_MAX_ROOMS,
            max_participants: DEFAULT_MAX_PARTICIPANTS,
            hubs: hub::Hubs::default(),
            tracker: TaskTracker::new(),
            shared: SharedConn::default(),
            seats_per_address: DEFAULT_SEATS_PER_ADDRESS,
            own_sale_redis: false,
            process_id: crate::run::new_id("p"),
            watching: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

impl Rooms {
    /// Rooms expire after `ttl` without activity (at least a second).
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_secs(1));
        self
    }

    /// Let `n` people into one room (`--max-room-people`; at least one).
    pub fn with_max_participants(mut self, n: u32) -> Self {
        self.max_participants = n.max(1);
        self
    }

    /// Let one address take `n` new seats per room (a venue whose phones share one
    /// address needs more than the default).
    pub fn with_seats_per_address(mut self, n: u64) -> Self {
        self.seats_per_address = n.max(1);
        self
    }

    /// Clicks one address may send in one sale.
    pub fn clicks_per_address(&self) -> u64 {
        (self.seats_per_address * CLICKS_PER_ADDRESS_SEAT).min(u64::from(sale::MAX_CLICKS))
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

    /// The head-count field of `role` (`phones` or `watchers`) for this process.
    pub fn count_field(&self, role: &str) -> String {
        format!("{}:{role}", self.process_id)
    }

    /// Start this process's watch over its rooms, once ([`watch::run`]).
    pub fn watch(&self, state: &Arc<dyn Host>) {
        use std::sync::atomic::Ordering;
        if !self.watching.swap(true, Ordering::AcqRel) {
            self.tracker.spawn(watch::run(state.clone()));
        }
    }

    /// Rooms this process follows right now.
    pub fn live_rooms(&self) -> usize {
        self.hubs.live()
    }

    /// The process's shared (multiplexed) connection for room commands, opened again once
    /// broken. Never used for a blocking read.
    pub async fn conn(&self, store: &Store) -> Result<RedisConn, WireError> {
        self.shared.get(store).await.map_err(unavailable)
    }

    /// The hub of room `code` (started if needed), or `busy` at the cap.
    pub async fn hub(&self, code: &str, store: &Store) -> Result<Arc<hub::Hub>, WireError> {
        self.hubs
            .get(code, store, &self.shared, &self.tracker, self.max_rooms)
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

/// Take `amount` from address `addr`'s budget `what` (`cap` per `window`), shared by
/// every process; `rate_limited` with `why` and the wait when it is spent.
pub async fn take_address_budget(
    conn: &mut RedisConn,
    key: &str,
    (amount, cap, window): (u64, u64, Duration),
    why: &str,
) -> Result<(), WireError> {
    let window_ms = u64::try_from(window.as_millis()).unwrap_or(u64::MAX);
    let taken = store::take_budget(conn, key, amount, cap, window_ms)
        .await
        .map_err(unavailable)?;
    if taken.granted {
        return Ok(());
    }
    Err(WireError::new(
        ErrorCode::RateLimited,
        format!(
            "{why} (this address's budget is {cap} per {} min, {} used); try again in {} s",
            window.as_secs() / 60,
            taken.taken,
            taken.ms_left.div_ceil(1_000).max(1)
        ),
    ))
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
