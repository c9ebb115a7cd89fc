//! A room in Redis: its record, its event stream, its open sale's lease, who has bought, and
//! the chaos buttons' commands.
//!
//! Every key of room `CODE` is `oversold:{room-CODE}:…`: one hash tag, so on a Redis Cluster
//! the whole room (and any command that touches two of its keys) sits on one slot. Every
//! key has a TTL that activity renews; a room nobody touches disappears on its own.
//!
//! Why a stream and not pub/sub for the events: a phone that joins late (or reconnects, or
//! whose process restarted) reads the current sale back from the stream with `XRANGE`,
//! and a process that missed entries while its connection was down resumes from the last
//! id it saw. Pub/sub forgets a message the instant it is delivered, so neither is possible
//! there. The stream also gives each event one id, the same on every process, so every
//! screen sees the same events in the same order and a duplicate is recognisable.

use redis::Value;

use super::{RedisConn, StoreError, functions, holds, scripts};

/// Entries a room's stream keeps (approximately: `MAXLEN ~`). A sale of 500 phones and
/// 2,000 bots fits many times over; a late joiner is replayed at most this much.
pub const STREAM_MAXLEN: usize = 20_000;

/// The keys of one room.
#[derive(Debug, Clone)]
pub struct RoomKeys {
    meta: String,
    events: String,
    sale: String,
    /// Head counts, one field per process and role (`room_join.lua`).
    here: String,
    tag: String,
}

impl RoomKeys {
    /// Keys of room `code` (already checked to be a room code).
    pub fn new(code: &str) -> Self {
        let tag = format!("oversold:{{room-{code}}}");
        RoomKeys {
            meta: format!("{tag}:meta"),
            events: format!("{tag}:events"),
            sale: format!("{tag}:sale"),
            here: format!("{tag}:here"),
            tag,
        }
    }

    fn buyers(&self, sale_id: &str) -> String {
        format!("{}:buyers:{sale_id}", self.tag)
    }

    /// Phone `id`'s seat: its token's hash, with a TTL (a seat nobody uses expires).
    fn seat(&self, id: u32) -> String {
        format!("{}:seat:{id}", self.tag)
    }

    /// New seats address `addr` took in this room (a [`take_budget`] counter).
    pub fn seats_of(&self, addr: &str) -> String {
        format!("{}:seats-of:{addr}", self.tag)
    }

    /// Clicks seat `id` sent in sale `sale_id` (a [`take_budget`] counter).
    pub fn clicks_of_seat(&self, sale_id: &str, id: u32) -> String {
        format!("{}:clicks:{sale_id}:seat:{id}", self.tag)
    }

    /// Clicks address `addr` sent in sale `sale_id` (a [`take_budget`] counter).
    pub fn clicks_of_address(&self, sale_id: &str, addr: &str) -> String {
        format!("{}:clicks:{sale_id}:addr:{addr}", self.tag)
    }

    /// The room's challenge: `exercise` -> id.
    fn challenge(&self) -> String {
        format!("{}:challenge", self.tag)
    }

    /// The challenge's leaderboard (participant -> entry JSON) or verdicts (participant ->
    /// verdict JSON).
    fn board(&self, what: &str) -> String {
        format!("{}:challenge:{what}", self.tag)
    }

    /// Sale `sale_id`'s requests seen (`participant:request_id`) and their answers.
    fn requests(&self, sale_id: &str) -> String {
        format!("{}:requests:{sale_id}", self.tag)
    }
}

/// What address `addr` has taken of a room budget shared by every process (rooms created,
/// sale time, bots): a [`take_budget`] counter of its own.
pub fn address_budget(addr: &str, what: &str) -> String {
    format!("oversold:{{addr-{addr}}}:{what}")
}

/// A [`take_budget`] answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Taken {
    /// True when the amount was taken.
    pub granted: bool,
    /// The counter now.
    pub taken: u64,
    /// Until the window ends, ms.
    pub ms_left: u64,
}

/// Take `amount` from the budget counted at `key` (`cap` per `window_ms`), in one step
/// that every process shares (`room_budget.lua`).
pub async fn take_budget(
    conn: &mut RedisConn,
    key: &str,
    amount: u64,
    cap: u64,
    window_ms: u64,
) -> Result<Taken, StoreError> {
    let args = [amount, cap.max(1), window_ms.max(1)].map(|n| n.to_string());
    let called = scripts::call::<Vec<i64>>(
        conn,
        "room budget",
        &scripts::ROOM_BUDGET,
        &[key],
        args.as_slice(),
    )
    .await
    .map_err(|f| f.error)?;
    let n = |i: usize| u64::try_from(called.reply.get(i).copied().unwrap_or(0)).unwrap_or(0);
    Ok(Taken {
        granted: n(0) == 1,
        taken: n(1),
        ms_left: n(2),
    })
}

/// One stream entry: its id and its JSON body.
pub type Entry = (String, String);

/// Create the room's record with the presenter token's hash, unless the code is taken.
/// Returns false when it was.
pub async fn create(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    token_hash: &str,
    ttl_s: u64,
) -> Result<bool, StoreError> {
    let mut pipe = redis::pipe();
    pipe.atomic()
        .cmd("HSETNX")
        .arg(&keys.meta)
        .arg("token")
        .arg(token_hash)
        .cmd("EXPIRE")
        .arg(&keys.meta)
        .arg(ttl_s);
    let (created, _): (i64, i64) = conn.pipeline("create room", &pipe).await?;
    Ok(created == 1)
}

/// Delete a room that was just created and cannot be followed (no record is left behind).
pub async fn delete_room(conn: &mut RedisConn, keys: &RoomKeys) -> Result<(), StoreError> {
    let cmd = redis::cmd("DEL")
        .arg(&keys.meta)
        .arg(&keys.events)
        .arg(&keys.here)
        .to_owned();
    conn.query::<i64>("DEL room", &cmd).await.map(drop)
}

/// The presenter token's hash, or `None` when the room does not exist (or expired).
pub async fn token_hash(
    conn: &mut RedisConn,
    keys: &RoomKeys,
) -> Result<Option<String>, StoreError> {
    let cmd = redis::cmd("HGET").arg(&keys.meta).arg("token").to_owned();
    conn.query("HGET room token", &cmd).await
}

/// Renew the TTL of the room's record and stream: the room was just used.
pub async fn touch(conn: &mut RedisConn, keys: &RoomKeys, ttl_s: u64) -> Result<(), StoreError> {
    let mut pipe = redis::pipe();
    for key in [&keys.meta, &keys.events, &keys.here] {
        pipe.cmd("EXPIRE").arg(key).arg(ttl_s).ignore();
    }
    conn.pipeline("touch room", &pipe).await
}

/// Count one person into the room as `field` (`<process>:<role>`), unless it already holds
/// `cap` people (`room_join.lua`: the sum, the check and the add are one step). With
/// `new_id`, also draw a participant id. Returns `(id, people)` (id 0 without `new_id`), or
/// `None` when the room is full.
pub async fn join(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    field: &str,
    cap: u32,
    new_id: bool,
    ttl_s: u64,
) -> Result<Option<(u32, u32)>, StoreError> {
    let args = [
        field.to_string(),
        cap.max(1).to_string(),
        u8::from(new_id).to_string(),
        ttl_s.max(1).to_string(),
    ];
    let called = scripts::call::<Vec<i64>>(
        conn,
        "join room",
        &scripts::ROOM_JOIN,
        &[keys.meta.as_str(), keys.here.as_str()],
        args.as_slice(),
    )
    .await
    .map_err(|f| f.error)?;
    Ok(match called.reply.as_slice() {
        [1, id, people] => Some((clamp(*id), clamp(*people))),
        _ => None,
    })
}

/// Keep the hash of phone `id`'s seat token for `ttl_s`, so it can come back as itself.
pub async fn remember_seat(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    id: u32,
    token_hash: &str,
    ttl_s: u64,
) -> Result<(), StoreError> {
    let cmd = redis::cmd("SET")
        .arg(keys.seat(id))
        .arg(token_hash)
        .arg("EX")
        .arg(ttl_s.max(1))
        .to_owned();
    conn.query("SET seat", &cmd).await
}

/// The hash of phone `id`'s seat token, if the seat is still there.
pub async fn seat_hash(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    id: u32,
) -> Result<Option<String>, StoreError> {
    let cmd = redis::cmd("GET").arg(keys.seat(id)).to_owned();
    conn.query("GET seat", &cmd).await
}

/// Let phone `id`'s seat expire `ttl_s` from now (it left: long enough to come back after
/// a reload, and then it is gone); or keep it for the room's TTL again (it came back).
pub async fn seat_expires_in(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    id: u32,
    ttl_s: u64,
) -> Result<(), StoreError> {
    let cmd = redis::cmd("EXPIRE")
        .arg(keys.seat(id))
        .arg(ttl_s.max(1))
        .to_owned();
    conn.query::<i64>("EXPIRE seat", &cmd).await.map(drop)
}

/// Note `participant`'s `request_id` in sale `sale_id`. False when it was seen before (a
/// repeat: it must not buy again).
pub async fn first_request(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    sale_id: &str,
    field: &str,
    ttl_s: u64,
) -> Result<bool, StoreError> {
    let key = keys.requests(sale_id);
    let mut pipe = redis::pipe();
    pipe.cmd("HSETNX")
        .arg(&key)
        .arg(field)
        .arg("")
        .cmd("EXPIRE")
        .arg(&key)
        .arg(ttl_s.max(1))
        .ignore();
    let (added,): (i64,) = conn.pipeline("HSETNX request", &pipe).await?;
    Ok(added == 1)
}

/// Keep the answer a request got (its `buy_result` JSON), for a repeat of it.
pub async fn keep_answer(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    sale_id: &str,
    field: &str,
    answer: &str,
) -> Result<(), StoreError> {
    let cmd = redis::cmd("HSET")
        .arg(keys.requests(sale_id))
        .arg(field)
        .arg(answer)
        .to_owned();
    conn.query::<i64>("HSET answer", &cmd).await.map(drop)
}

/// The answer a request got, if it has one yet (`None`: unseen or still in flight).
pub async fn answer_of(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    sale_id: &str,
    field: &str,
) -> Result<Option<String>, StoreError> {
    let cmd = redis::cmd("HGET")
        .arg(keys.requests(sale_id))
        .arg(field)
        .to_owned();
    let got: Option<String> = conn.query("HGET answer", &cmd).await?;
    Ok(got.filter(|a| !a.is_empty()))
}

/// Count `field` (`<process>:<role>`) down by one: a socket left.
pub async fn leave(conn: &mut RedisConn, keys: &RoomKeys, field: &str) -> Result<(), StoreError> {
    let cmd = redis::cmd("HINCRBY")
        .arg(&keys.here)
        .arg(field)
        .arg(-1)
        .to_owned();
    conn.query::<i64>("leave room", &cmd).await.map(drop)
}

/// Every head-count field of the room (`<process>:<role>`) with its count.
pub async fn head_counts(
    conn: &mut RedisConn,
    keys: &RoomKeys,
) -> Result<Vec<(String, i64)>, StoreError> {
    let cmd = redis::cmd("HGETALL").arg(&keys.here).to_owned();
    conn.query("HGETALL here", &cmd).await
}

/// The room's phones and watchers, summed over every process.
pub async fn presence(conn: &mut RedisConn, keys: &RoomKeys) -> Result<(u32, u32), StoreError> {
    let (mut phones, mut watchers) = (0i64, 0i64);
    for (field, n) in head_counts(conn, keys).await? {
        match field.rsplit_once(':').map(|(_, role)| role) {
            Some("phones") => phones += n.max(0),
            Some(_) => watchers += n.max(0),
            None => {}
        }
    }
    Ok((clamp(phones), clamp(watchers)))
}

/// Take back head counts: delete these `<process>:<role>` fields (their process is dead).
pub async fn forget_counts(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    fields: &[String],
) -> Result<(), StoreError> {
    if fields.is_empty() {
        return Ok(());
    }
    let cmd = redis::cmd("HDEL").arg(&keys.here).arg(fields).to_owned();
    conn.query::<i64>("HDEL here", &cmd).await.map(drop)
}

/// The key that says server process `process` is alive while it exists.
fn process_key(process: &str) -> String {
    format!("oversold:process:{process}")
}

/// Say this process is alive for `ms` more.
pub async fn beat(conn: &mut RedisConn, process: &str, ms: u64) -> Result<(), StoreError> {
    let cmd = redis::cmd("SET")
        .arg(process_key(process))
        .arg(1)
        .arg("PX")
        .arg(ms.max(1))
        .to_owned();
    conn.query("SET process beat", &cmd).await
}

/// Is server process `process` alive (its heartbeat has not run out)?
pub async fn is_alive(conn: &mut RedisConn, process: &str) -> Result<bool, StoreError> {
    let cmd = redis::cmd("EXISTS").arg(process_key(process)).to_owned();
    let n: i64 = conn.query("EXISTS process", &cmd).await?;
    Ok(n == 1)
}

fn clamp(n: i64) -> u32 {
    u32::try_from(n.max(0)).unwrap_or(u32::MAX)
}

/// Append one event and renew the room's TTL (an event is activity); returns its id.
pub async fn append(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    body: &str,
    ttl_s: u64,
) -> Result<String, StoreError> {
    let mut pipe = redis::pipe();
    pipe.cmd("XADD")
        .arg(&keys.events)
        .arg("MAXLEN")
        .arg("~")
        .arg(STREAM_MAXLEN)
        .arg("*")
        .arg("e")
        .arg(body)
        .cmd("EXPIRE")
        .arg(&keys.events)
        .arg(ttl_s)
        .ignore()
        .cmd("EXPIRE")
        .arg(&keys.meta)
        .arg(ttl_s)
        .ignore()
        .cmd("EXPIRE")
        .arg(&keys.here)
        .arg(ttl_s)
        .ignore();
    let (id,): (String,) = conn.pipeline("XADD room event", &pipe).await?;
    Ok(id)
}

/// Events after `after`, waiting up to `block_ms` for the first (at most `count`). An empty
/// answer means nothing arrived in time. The connection is blocked meanwhile: use one that
/// nothing else shares.
pub async fn read_after(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    after: &str,
    block_ms: u64,
    count: usize,
) -> Result<Vec<Entry>, StoreError> {
    let cmd = redis::cmd("XREAD")
        .arg("COUNT")
        .arg(count)
        .arg("BLOCK")
        .arg(block_ms)
        .arg("STREAMS")
        .arg(&keys.events)
        .arg(after)
        .to_owned();
    let reply: Value = conn.query("XREAD room events", &cmd).await?;
    // [[key, [entry, ...]]], or nil when the block timed out.
    let entries = match reply {
        Value::Array(mut streams) if !streams.is_empty() => match streams.swap_remove(0) {
            Value::Array(mut pair) if pair.len() == 2 => pair.swap_remove(1),
            _ => Value::Nil,
        },
        _ => Value::Nil,
    };
    parse_entries(entries)
}

/// Events from `from` (inclusive) on, at most `count`.
pub async fn range(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    from: &str,
    count: usize,
) -> Result<Vec<Entry>, StoreError> {
    let cmd = redis::cmd("XRANGE")
        .arg(&keys.events)
        .arg(from)
        .arg("+")
        .arg("COUNT")
        .arg(count)
        .to_owned();
    let reply: Value = conn.query("XRANGE room events", &cmd).await?;
    parse_entries(reply)
}

/// The id of the stream's newest entry, if it has one.
pub async fn last_id(conn: &mut RedisConn, keys: &RoomKeys) -> Result<Option<String>, StoreError> {
    let cmd = redis::cmd("XREVRANGE")
        .arg(&keys.events)
        .arg("+")
        .arg("-")
        .arg("COUNT")
        .arg(1)
        .to_owned();
    let reply: Value = conn.query("XREVRANGE room events", &cmd).await?;
    Ok(parse_entries(reply)?.into_iter().next().map(|(id, _)| id))
}

fn parse_entries(v: Value) -> Result<Vec<Entry>, StoreError> {
    let bad = |what: &str| StoreError::Unexpected {
        op: "room events",
        detail: what.to_string(),
    };
    let list = match v {
        Value::Nil => return Ok(Vec::new()),
        Value::Array(list) => list,
        other => return Err(bad(&format!("expected entries, got {other:?}"))),
    };
    let mut out = Vec::with_capacity(list.len());
    for entry in list {
        let Value::Array(mut parts) = entry else {
            return Err(bad("an entry that is not [id, fields]"));
        };
        if parts.len() != 2 {
            return Err(bad("an entry that is not [id, fields]"));
        }
        let fields: Vec<String> =
            redis::from_redis_value(parts.swap_remove(1)).map_err(|e| bad(&e.to_string()))?;
        let id: String =
            redis::from_redis_value(parts.swap_remove(0)).map_err(|e| bad(&e.to_string()))?;
        if let [name, body] = fields.as_slice()
            && name == "e"
        {
            out.push((id, body.clone()));
        }
    }
    Ok(out)
}

/// Take the room's sale lease: `SET sale <record> NX PX lease_ms`. False when a sale is
/// already open (and its lease has not run out).
pub async fn open_sale(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    record: &str,
    lease_ms: u64,
) -> Result<bool, StoreError> {
    let cmd = redis::cmd("SET")
        .arg(&keys.sale)
        .arg(record)
        .arg("NX")
        .arg("PX")
        .arg(lease_ms)
        .to_owned();
    let set: Option<String> = conn.query("SET room sale NX", &cmd).await?;
    Ok(set.is_some())
}

/// The open sale's record, if one is open.
pub async fn sale(conn: &mut RedisConn, keys: &RoomKeys) -> Result<Option<String>, StoreError> {
    let cmd = redis::cmd("GET").arg(&keys.sale).to_owned();
    conn.query("GET room sale", &cmd).await
}

/// End the sale whose record is `record`, and only that one (compare-and-delete: the same
/// script that releases a lock, since a sale's record is its lease's token).
pub async fn end_sale(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    record: &str,
) -> Result<bool, StoreError> {
    let called = scripts::call::<i64>(
        conn,
        "end room sale",
        &scripts::RELEASE_LOCK,
        &[keys.sale.as_str()],
        record,
    )
    .await
    .map_err(|f| f.error)?;
    Ok(called.reply == 1)
}

/// Note where the current sale's events start (for late joiners) and when its clock
/// started, µs since the Unix epoch (chaos is placed on that clock).
pub async fn set_sale_start(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    id: &str,
    opened_unix_us: u64,
) -> Result<(), StoreError> {
    let cmd = redis::cmd("HSET")
        .arg(&keys.meta)
        .arg("sale_start")
        .arg(id)
        .arg("sale_clock")
        .arg(opened_unix_us)
        .to_owned();
    conn.query("HSET sale_start", &cmd).await
}

/// When the current (or last) sale's clock started, µs since the Unix epoch.
pub async fn sale_clock(conn: &mut RedisConn, keys: &RoomKeys) -> Result<Option<u64>, StoreError> {
    let cmd = redis::cmd("HGET")
        .arg(&keys.meta)
        .arg("sale_clock")
        .to_owned();
    conn.query("HGET sale_clock", &cmd).await
}

/// Where the current (or last) sale's events start.
pub async fn sale_start(
    conn: &mut RedisConn,
    keys: &RoomKeys,
) -> Result<Option<String>, StoreError> {
    let cmd = redis::cmd("HGET")
        .arg(&keys.meta)
        .arg("sale_start")
        .to_owned();
    conn.query("HGET sale_start", &cmd).await
}

/// Record that `participant` bought in `sale_id`. False when it already had.
pub async fn claim_buy(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    sale_id: &str,
    participant: u32,
    ttl_s: u64,
) -> Result<bool, StoreError> {
    let key = keys.buyers(sale_id);
    let mut pipe = redis::pipe();
    pipe.cmd("SADD")
        .arg(&key)
        .arg(participant)
        .cmd("EXPIRE")
        .arg(&key)
        .arg(ttl_s)
        .ignore();
    let (added,): (i64,) = conn.pipeline("SADD room buyer", &pipe).await?;
    Ok(added == 1)
}

/// The whole record, to put back after a restart wiped it.
pub async fn record(
    conn: &mut RedisConn,
    keys: &RoomKeys,
) -> Result<Vec<(String, String)>, StoreError> {
    let cmd = redis::cmd("HGETALL").arg(&keys.meta).to_owned();
    conn.query("HGETALL room", &cmd).await
}

/// Put a record read by [`record`] back (after `restart_redis`), with its TTL.
pub async fn restore(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    fields: &[(String, String)],
    ttl_s: u64,
) -> Result<(), StoreError> {
    if fields.is_empty() {
        return Ok(());
    }
    let mut pipe = redis::pipe();
    pipe.atomic().cmd("HSET").arg(&keys.meta);
    for (k, v) in fields {
        pipe.arg(k).arg(v);
    }
    pipe.ignore()
        .cmd("EXPIRE")
        .arg(&keys.meta)
        .arg(ttl_s)
        .ignore();
    conn.pipeline("restore room", &pipe).await
}

/// Scripts Redis had to be sent again (an `EVAL` after `NOSCRIPT`, a `FUNCTION LOAD`),
/// server-wide so far: the difference across a sale is its reload count.
pub async fn reload_calls(conn: &mut RedisConn) -> Result<u64, StoreError> {
    let cmd = redis::cmd("INFO").arg("commandstats").to_owned();
    let info: String = conn.query("INFO commandstats", &cmd).await?;
    Ok(["cmdstat_eval:", "cmdstat_function|load:"]
        .iter()
        .filter_map(|stat| info.lines().find_map(|l| l.strip_prefix(stat)))
        .filter_map(|rest| rest.split(',').find_map(|f| f.strip_prefix("calls=")))
        .filter_map(|n| n.parse::<u64>().ok())
        .sum())
}

/// Chaos: `SCRIPT FLUSH` and `FUNCTION FLUSH`.
pub async fn flush_scripts(conn: &mut RedisConn) -> Result<(), StoreError> {
    scripts::flush_cache(conn).await?;
    functions::flush(conn).await
}

/// Chaos: `CLIENT KILL ID` the connection named `name`. False when none has that name.
pub async fn kill_client_named(conn: &mut RedisConn, name: &str) -> Result<bool, StoreError> {
    let list: String = conn
        .query("CLIENT LIST", redis::cmd("CLIENT").arg("LIST"))
        .await?;
    let wanted = format!("name={name}");
    let Some(id) = list
        .lines()
        .find(|l| l.split(' ').any(|field| field == wanted))
        .and_then(|l| l.split(' ').find_map(|field| field.strip_prefix("id=")))
    else {
        return Ok(false);
    };
    let cmd = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("ID")
        .arg(id)
        .to_owned();
    let killed: i64 = conn.query("CLIENT KILL", &cmd).await?;
    Ok(killed == 1)
}

/// Chaos: `CLIENT PAUSE ms ALL`.
pub async fn pause(conn: &mut RedisConn, ms: u64) -> Result<(), StoreError> {
    holds::pause(conn, ms).await
}

/// Chaos: run `slow_script.lua` for `ms`; returns the µs Redis spent in it.
pub async fn slow_script(conn: &mut RedisConn, ms: u64) -> Result<u64, StoreError> {
    let called = scripts::call::<i64>(conn, "slow script", &scripts::SLOW_SCRIPT, &[], ms)
        .await
        .map_err(|f| f.error)?;
    Ok(u64::try_from(called.reply).unwrap_or(0))
}

/// A sale's own Redis: `CONFIG SET maxmemory` (never sent to a Redis we do not own).
pub async fn cap_memory(conn: &mut RedisConn, maxmemory: &str) -> Result<(), StoreError> {
    let cmd = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(maxmemory)
        .to_owned();
    conn.query("CONFIG SET maxmemory", &cmd).await
}

/// Open exercise `id` as the room's challenge: a fresh leaderboard.
pub async fn open_challenge(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    id: &str,
    ttl_s: u64,
) -> Result<(), StoreError> {
    let mut pipe = redis::pipe();
    pipe.atomic()
        .cmd("DEL")
        .arg(keys.board("entries"))
        .arg(keys.board("verdicts"))
        .ignore()
        .cmd("HSET")
        .arg(keys.challenge())
        .arg("exercise")
        .arg(id)
        .ignore()
        .cmd("EXPIRE")
        .arg(keys.challenge())
        .arg(ttl_s.max(1))
        .ignore();
    conn.pipeline("open challenge", &pipe).await
}

/// The open challenge's exercise id, if any.
pub async fn challenge(
    conn: &mut RedisConn,
    keys: &RoomKeys,
) -> Result<Option<String>, StoreError> {
    let cmd = redis::cmd("HGET")
        .arg(keys.challenge())
        .arg("exercise")
        .to_owned();
    conn.query("HGET challenge", &cmd).await
}

/// Keep a participant's latest entry and verdict (JSON each).
pub async fn keep_submission(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    participant: u32,
    entry: &str,
    verdict: &str,
    ttl_s: u64,
) -> Result<(), StoreError> {
    let mut pipe = redis::pipe();
    for (what, json) in [("entries", entry), ("verdicts", verdict)] {
        pipe.cmd("HSET")
            .arg(keys.board(what))
            .arg(participant)
            .arg(json)
            .ignore()
            .cmd("EXPIRE")
            .arg(keys.board(what))
            .arg(ttl_s.max(1))
            .ignore();
    }
    conn.pipeline("keep submission", &pipe).await
}

/// Every entry of the leaderboard (JSON each).
pub async fn board(conn: &mut RedisConn, keys: &RoomKeys) -> Result<Vec<String>, StoreError> {
    let cmd = redis::cmd("HVALS").arg(keys.board("entries")).to_owned();
    conn.query("HVALS board", &cmd).await
}

/// A participant's latest verdict (JSON), if they submitted.
pub async fn verdict_of(
    conn: &mut RedisConn,
    keys: &RoomKeys,
    participant: u32,
) -> Result<Option<String>, StoreError> {
    let cmd = redis::cmd("HGET")
        .arg(keys.board("verdicts"))
        .arg(participant)
        .to_owned();
    conn.query("HGET verdict", &cmd).await
}
