//! One socket's place in a room, and the room messages' handlers: `create_room`,
//! `join_room` and `buy` here, the sale controls in [`super::control`], chaos in
//! [`super::chaos`].
//!
//! A seat owns a forwarding task ([`super::forward`]) that turns the room's events into this
//! socket's frames. Dropping the seat stops it.
//!
//! A phone is a seat, not a socket: one buy per seat per sale, whichever socket it comes
//! back on. A phone keeps its seat by showing its seat token, and a socket that rejoins a
//! room it sat in keeps its seat even without it ([`Seats`]). Only a socket that is new to
//! the room and shows no token takes a new seat, within its address's seat budget for the
//! room. Clicks are budgeted per seat and per address in each sale (in Redis, so every
//! process counts the same), and a repeated `request_id` is answered from its first answer.

use std::sync::Arc;

use oversold_protocol::room::{self, RoomRole};
use oversold_protocol::{ClientMessage, ErrorCode, ServerMessage, WireError};
use tokio::sync::{broadcast, mpsc};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::event::{Event, Stamped, StreamId};
use super::hub::Hub;
use super::sale::SaleRecord;
use super::{Host, check_presenter, no_such_room, secret, unavailable};
use crate::client::Caller;
use crate::store::rooms as store;

/// A phone's Buy button: a burst of this many clicks…
const BUY_BURST: f64 = 3.0;
/// …refilled at this many a second.
const BUYS_PER_SEC: f64 = 2.0;

/// Seats one socket remembers (rooms it left), so rejoining one is not a new seat.
const KEPT_SEATS: usize = 4;

/// A socket's place in rooms: the seat it is in now, and the phone seats it had before.
#[derive(Default)]
pub struct Seats {
    now: Option<Seat>,
    /// `(room, participant id, seat token)`, newest last.
    kept: Vec<(String, u32, String)>,
}

impl Seats {
    /// True while the socket is in a room.
    pub fn is_seated(&self) -> bool {
        self.now.is_some()
    }

    /// The phone seat this socket had in `room`, if any.
    fn kept_in(&self, room: &str) -> Option<(u32, String)> {
        self.kept
            .iter()
            .rev()
            .find(|(r, _, _)| r == room)
            .map(|(_, id, token)| (*id, token.clone()))
    }

    fn keep(&mut self, room: &str, id: u32, token: &str) {
        self.kept.retain(|(r, _, _)| r != room);
        if self.kept.len() >= KEPT_SEATS {
            self.kept.remove(0);
        }
        self.kept.push((room.to_string(), id, token.to_string()));
    }
}

/// A socket in a room.
pub struct Seat {
    pub(super) hub: Arc<Hub>,
    role: RoomRole,
    participant: u32,
    forwarder: Option<JoinHandle<()>>,
    /// The live feed and where the replay starts, until forwarding starts.
    pending: Option<(broadcast::Receiver<Arc<Stamped>>, Option<StreamId>)>,
    tokens: f64,
    refilled: Instant,
    /// The address the socket came from (its budgets).
    addr: String,
    /// The head-count field it counts in (`<process>:<role>`).
    count_field: String,
}

impl Drop for Seat {
    fn drop(&mut self) {
        if let Some(task) = &self.forwarder {
            task.abort();
        }
    }
}

impl Seat {
    /// Start turning the room's events into this socket's frames: called once the socket
    /// has been told it is in, so its first room frame is always `room_created` or
    /// `room_joined`, then the replay.
    fn start_forwarding(&mut self, state: &Arc<dyn Host>, frames: &mpsc::Sender<ServerMessage>) {
        if let Some((live, replay_from)) = self.pending.take() {
            self.forwarder = Some(state.rooms().tracker.spawn(super::forward::forward(
                self.hub.clone(),
                live,
                self.participant,
                replay_from,
                frames.clone(),
            )));
        }
    }

    /// The participant id.
    pub(super) fn participant(&self) -> u32 {
        self.participant
    }

    /// One click's worth of the per-phone token bucket.
    fn allow_buy(&mut self) -> bool {
        let now = Instant::now();
        let refill = now.duration_since(self.refilled).as_secs_f64() * BUYS_PER_SEC;
        self.tokens = (self.tokens + refill).min(BUY_BURST);
        self.refilled = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

fn field(role: RoomRole) -> &'static str {
    match role {
        RoomRole::Phone => "phones",
        RoomRole::Spectator | RoomRole::Presenter => "watchers",
    }
}

/// Answer one room message. Errors go back as `error` frames; the socket stays open.
pub async fn handle(
    state: &Arc<dyn Host>,
    caller: &Caller,
    msg: ClientMessage,
    frames: &mpsc::Sender<ServerMessage>,
    seats: &mut Seats,
) {
    let answered = match msg {
        ClientMessage::CreateRoom => create(state, caller, frames, seats).await,
        ClientMessage::JoinRoom {
            room,
            role,
            presenter_token,
            participant_id,
            seat_token,
        } => {
            let back = participant_id.zip(seat_token);
            let asked = Asked {
                caller,
                role: role.unwrap_or_default(),
                token: presenter_token,
                back,
            };
            join(state, &room, asked, frames, seats).await
        }
        ClientMessage::Buy { room, request_id } => {
            buy(state, &room, &request_id, frames, &mut seats.now).await
        }
        ClientMessage::OpenSale {
            room,
            presenter_token,
            config,
        } => {
            super::control::open_sale(state, caller, &room, &presenter_token, config, &seats.now)
                .await
        }
        ClientMessage::CloseSale {
            room,
            presenter_token,
        } => super::control::close_sale(state, &room, &presenter_token).await,
        ClientMessage::Chaos {
            room,
            presenter_token,
            action,
        } => super::chaos::press(state, &room, &presenter_token, action).await,
        ClientMessage::OpenChallenge {
            room,
            presenter_token,
            exercise,
        } => super::challenge::open(state, &room, &presenter_token, &exercise).await,
        ClientMessage::SubmitChallenge {
            room,
            nickname,
            source,
        } => {
            let asked = (room.as_str(), nickname.as_str(), source);
            super::challenge::submit(state, caller, asked, frames, &seats.now).await
        }
        ClientMessage::ShowCounterexample {
            room,
            presenter_token,
            participant,
        } => super::challenge::show(state, &room, &presenter_token, participant).await,
        // Not a room's: the socket's dispatch sends these elsewhere. Named, not `_`, so a
        // new message must be placed here too.
        ClientMessage::StartRun { .. }
        | ClientMessage::StartCompare { .. }
        | ClientMessage::CancelRun
        | ClientMessage::StepOpen { .. }
        | ClientMessage::Step { .. }
        | ClientMessage::StepReset
        | ClientMessage::StepClose
        | ClientMessage::Reconcile
        | ClientMessage::AuditPage { .. }
        | ClientMessage::CheckSolution { .. } => {
            Err(WireError::new(ErrorCode::BadMessage, "not a room message"))
        }
    };
    if let Err(e) = answered {
        let _ = frames.send(ServerMessage::Error(e)).await;
    }
}

/// The keys of room `code`, or `out_of_range` for a string that is no room code.
pub(super) fn room_keys(code: &str) -> Result<store::RoomKeys, WireError> {
    if room::is_room_code(code) {
        Ok(store::RoomKeys::new(code))
    } else {
        Err(WireError::new(
            ErrorCode::OutOfRange,
            format!(
                "a room code is {} letters of {}",
                room::ROOM_CODE_LEN,
                room::ROOM_ALPHABET
            ),
        ))
    }
}

async fn create(
    state: &Arc<dyn Host>,
    caller: &Caller,
    frames: &mpsc::Sender<ServerMessage>,
    seats: &mut Seats,
) -> Result<(), WireError> {
    let rooms = state.rooms();
    let mut conn = rooms.conn(&state.backends().redis).await?;
    let addr = caller.addr.to_string();
    let budget = (1, super::CREATES_PER_WINDOW, super::CREATE_WINDOW);
    let key = store::address_budget(&addr, "rooms-created");
    super::take_address_budget(
        &mut conn,
        &key,
        budget,
        "this address has created its share of rooms",
    )
    .await?;
    let token = secret::new_token();
    let hash = secret::hash(&token);
    // 31^5 codes: a clash is rare, eight in a row means something else is wrong.
    for _ in 0..8 {
        let code = secret::new_code();
        let keys = store::RoomKeys::new(&code);
        if store::create(&mut conn, &keys, &hash, rooms.ttl_s())
            .await
            .map_err(unavailable)?
        {
            tracing::info!(room = %code, "room created");
            let join_url = format!("{}/r/{code}", caller.base_url);
            let created = ServerMessage::RoomCreated {
                room: code.clone(),
                presenter_token: token,
                join_url,
            };
            leave(state, seats).await;
            let mut taken = match take_seat(state, &code, RoomRole::Presenter, None, &addr).await {
                Ok(taken) => taken,
                Err(e) => {
                    // Not followable here (the room cap): no record is left behind.
                    let _ = store::delete_room(&mut conn, &keys).await;
                    return Err(e);
                }
            };
            let _ = frames.send(created).await;
            taken.start_forwarding(state, frames);
            seats.now = Some(taken);
            return Ok(());
        }
    }
    Err(WireError::new(
        ErrorCode::Busy,
        "no free room code was found; try again",
    ))
}

/// What a `join_room` asks for.
struct Asked<'a> {
    caller: &'a Caller,
    role: RoomRole,
    /// The presenter token, for a presenter.
    token: Option<String>,
    /// A phone's earlier id and seat token.
    back: Option<(u32, String)>,
}

async fn join(
    state: &Arc<dyn Host>,
    code: &str,
    asked: Asked<'_>,
    frames: &mpsc::Sender<ServerMessage>,
    seats: &mut Seats,
) -> Result<(), WireError> {
    let keys = room_keys(code)?;
    let role = asked.role;
    let mut conn = state.rooms().conn(&state.backends().redis).await?;
    admit_to_room(state, &mut conn, &keys, role, asked.token.as_deref()).await?;
    // The token shown, else the seat this socket had here: a rejoin is the same phone.
    let shown = asked.back.or_else(|| seats.kept_in(code));
    let back = match shown {
        Some(back) if role == RoomRole::Phone => resume(&mut conn, &keys, back).await?,
        _ => None,
    };
    let addr = asked.caller.addr.to_string();
    if role == RoomRole::Phone && back.is_none() {
        let budget = (1, state.rooms().seats_per_address, state.rooms().ttl);
        super::take_address_budget(
            &mut conn,
            &keys.seats_of(&addr),
            budget,
            "this address has taken its share of new seats in this room (a phone keeps its \
             seat by joining with its seat token)",
        )
        .await?;
    }
    leave(state, seats).await;
    let mut taken = take_seat(state, code, role, back.as_ref().map(|b| b.0), &addr).await?;
    let ttl = state.rooms().ttl_s();
    let seat_token = match (role, back) {
        (RoomRole::Phone, Some((id, token))) => {
            let _ = store::seat_expires_in(&mut conn, &keys, id, ttl).await;
            Some(token)
        }
        (RoomRole::Phone, None) => {
            let token = secret::new_token();
            store::remember_seat(
                &mut conn,
                &keys,
                taken.participant,
                &secret::hash(&token),
                ttl,
            )
            .await
            .map_err(unavailable)?;
            Some(token)
        }
        _ => None,
    };
    if let Some(token) = &seat_token {
        seats.keep(code, taken.participant, token);
    }
    let _ = frames
        .send(ServerMessage::RoomJoined {
            room: code.to_string(),
            participant_id: taken.participant,
            role,
            seat_token,
        })
        .await;
    super::challenge::catch_up(state, &keys, code, frames).await;
    taken.start_forwarding(state, frames);
    seats.now = Some(taken);
    Ok(())
}

/// May this socket join as `role`: the room exists (and the token is right, for the
/// presenter), and it is not full.
async fn admit_to_room(
    state: &Arc<dyn Host>,
    conn: &mut crate::store::RedisConn,
    keys: &store::RoomKeys,
    role: RoomRole,
    token: Option<&str>,
) -> Result<(), WireError> {
    if role == RoomRole::Presenter {
        check_presenter(conn, keys, token.unwrap_or("")).await?;
    } else if store::token_hash(conn, keys)
        .await
        .map_err(unavailable)?
        .is_none()
    {
        return Err(no_such_room());
    }
    // A quick look first, so a full room costs no seat budget; the count that decides is
    // taken in one step with the cap, in `take_seat`.
    let (phones, watchers) = store::presence(conn, keys).await.map_err(unavailable)?;
    if phones.saturating_add(watchers) >= state.rooms().max_participants {
        return Err(room_full(state));
    }
    Ok(())
}

fn room_full(state: &Arc<dyn Host>) -> WireError {
    WireError::new(
        ErrorCode::ResourceExhausted,
        format!(
            "the room is full ({} people)",
            state.rooms().max_participants
        ),
    )
}

/// A phone that proves its earlier id keeps it: a reload is not a second buyer. `None`
/// (a fresh seat) when the token does not match.
async fn resume(
    conn: &mut crate::store::RedisConn,
    keys: &store::RoomKeys,
    (id, token): (u32, String),
) -> Result<Option<(u32, String)>, WireError> {
    let stored = store::seat_hash(conn, keys, id)
        .await
        .map_err(unavailable)?;
    Ok(stored
        .is_some_and(|h| secret::matches(&token, &h))
        .then_some((id, token)))
}

/// Count the socket in, announce the new head count, start forwarding.
async fn take_seat(
    state: &Arc<dyn Host>,
    code: &str,
    role: RoomRole,
    back: Option<u32>,
    addr: &str,
) -> Result<Seat, WireError> {
    let hub = state.rooms().hub(code, &state.backends().redis).await?;
    let mut conn = state.rooms().conn(&state.backends().redis).await?;
    let ttl = state.rooms().ttl_s();
    let count_field = state.rooms().count_field(field(role));
    let cap = state.rooms().max_participants;
    let joined = store::join(&mut conn, &hub.keys, &count_field, cap, back.is_none(), ttl)
        .await
        .map_err(|e| match e.reply_code() {
            Some("NO_ROOM") => no_such_room(),
            _ => unavailable(e),
        })?;
    let Some((id, _)) = joined else {
        return Err(room_full(state));
    };
    let participant = back.unwrap_or(id);
    state.rooms().watch(state);
    announce_presence(state, &mut conn, &hub).await;
    let replay_from = store::sale_start(&mut conn, &hub.keys)
        .await
        .ok()
        .flatten()
        .and_then(|id| StreamId::parse(&id));
    // Subscribed now, so nothing published from here on is missed; forwarding starts once
    // the socket has had its `room_created`/`room_joined` (see `Seat::start_forwarding`).
    let live = hub.subscribe();
    Ok(Seat {
        hub,
        role,
        participant,
        forwarder: None,
        pending: Some((live, replay_from)),
        tokens: BUY_BURST,
        refilled: Instant::now(),
        addr: addr.to_string(),
        count_field,
    })
}

/// Leave the room this socket is in, if any (another room joined, or the socket closed).
pub async fn leave(state: &Arc<dyn Host>, seats: &mut Seats) {
    let Some(left) = seats.now.take() else {
        return;
    };
    let Ok(mut conn) = state.rooms().conn(&state.backends().redis).await else {
        return; // the counts are off until the room expires; nothing else depends on them
    };
    let _ = store::leave(&mut conn, &left.hub.keys, &left.count_field).await;
    if left.role == RoomRole::Phone {
        // The seat waits a while for a reload, then is gone: a room's seats stay bounded.
        let grace = super::SEAT_GRACE.as_secs();
        let _ = store::seat_expires_in(&mut conn, &left.hub.keys, left.participant, grace).await;
    }
    announce_presence(state, &mut conn, &left.hub).await;
}

async fn announce_presence(state: &Arc<dyn Host>, conn: &mut crate::store::RedisConn, hub: &Hub) {
    if let Ok((phones, watchers)) = store::presence(conn, &hub.keys).await {
        let _ = state
            .rooms()
            .publish(conn, &hub.keys, &Event::Presence { phones, watchers })
            .await;
    }
}

async fn buy(
    state: &Arc<dyn Host>,
    code: &str,
    request_id: &str,
    frames: &mpsc::Sender<ServerMessage>,
    seat: &mut Option<Seat>,
) -> Result<(), WireError> {
    let Some(me) = seat.as_mut().filter(|s| s.hub.code == code) else {
        return Err(WireError::new(
            ErrorCode::NotInRoom,
            "join the room before buying",
        ));
    };
    if me.role != RoomRole::Phone {
        return Err(WireError::new(
            ErrorCode::NotInRoom,
            "only phones buy; this socket joined as a spectator or presenter",
        ));
    }
    if !room::is_request_id(request_id) {
        return Err(WireError::new(
            ErrorCode::OutOfRange,
            format!(
                "request_id must be 1 to {} of A-Z a-z 0-9 - _",
                room::MAX_REQUEST_ID_LEN
            ),
        ));
    }
    if !me.allow_buy() {
        return Err(WireError::new(
            ErrorCode::RateLimited,
            "too many clicks; slow down",
        ));
    }
    let mut conn = state.rooms().conn(&state.backends().redis).await?;
    let keys = me.hub.keys.clone();
    let record = open_sale_record(&mut conn, &keys).await?;
    let field = request_field(me.participant, request_id);
    // A repeat of a request already answered gets that answer again, and never buys.
    if let Some(first) = store::answer_of(&mut conn, &keys, &record.sale_id, &field)
        .await
        .map_err(unavailable)?
        .and_then(|json| serde_json::from_str::<ServerMessage>(&json).ok())
    {
        let _ = frames.send(first).await;
        return Ok(());
    }
    let ttl = state.rooms().ttl_s();
    if !record.allow_repeat
        && !store::claim_buy(&mut conn, &keys, &record.sale_id, me.participant, ttl)
            .await
            .map_err(unavailable)?
    {
        return Err(WireError::new(
            ErrorCode::AlreadyBought,
            "you have already bought in this sale",
        ));
    }
    take_click_budgets(state, &mut conn, &keys, &record.sale_id, me).await?;
    if !store::first_request(&mut conn, &keys, &record.sale_id, &field, ttl)
        .await
        .map_err(unavailable)?
    {
        // A repeat of a request still in flight: never a second buy; its one answer is on
        // its way to this phone.
        return Ok(());
    }
    let click = Event::Click {
        sale_id: record.sale_id,
        participant: me.participant,
        request_id: request_id.to_string(),
    };
    state.rooms().publish(&mut conn, &keys, &click).await?;
    Ok(())
}

/// Where a request's answer is kept: `participant:request_id`.
pub fn request_field(participant: u32, request_id: &str) -> String {
    format!("{participant}:{request_id}")
}

/// The open sale, or `sale_state` when none is.
async fn open_sale_record(
    conn: &mut crate::store::RedisConn,
    keys: &store::RoomKeys,
) -> Result<SaleRecord, WireError> {
    match store::sale(conn, keys).await.map_err(unavailable)? {
        Some(json) => serde_json::from_str(&json)
            .map_err(|e| WireError::new(ErrorCode::SaleState, format!("unreadable sale: {e}"))),
        None => Err(WireError::new(
            ErrorCode::SaleState,
            "no sale is open right now",
        )),
    }
}

/// One click off this seat's budget in the sale and off its address's.
async fn take_click_budgets(
    state: &Arc<dyn Host>,
    conn: &mut crate::store::RedisConn,
    keys: &store::RoomKeys,
    sale_id: &str,
    me: &Seat,
) -> Result<(), WireError> {
    let window = state.rooms().ttl;
    let per_seat = (1, super::CLICKS_PER_SEAT, window);
    let seat_key = keys.clicks_of_seat(sale_id, me.participant);
    super::take_address_budget(
        conn,
        &seat_key,
        per_seat,
        "this phone has clicked its share in this sale",
    )
    .await?;
    let per_address = (1, state.rooms().clicks_per_address(), window);
    let addr_key = keys.clicks_of_address(sale_id, &me.addr);
    super::take_address_budget(
        conn,
        &addr_key,
        per_address,
        "phones on this address have clicked their share in this sale",
    )
    .await
}
