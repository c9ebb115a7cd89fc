//! The stock itself: putting it on the shelf, reading it back, clearing it, and the plain
//! commands buyers send to it (`GET`, `DECRBY`, `INCRBY`, `SET`, `WATCH`/`MULTI`/`EXEC`, and
//! `reserve.lua`).

use super::keys::RUN_KEY_TTL_SECS;
use redis::FromRedisValue;

use super::cluster::Route;
use super::scripts::{self, CallFailed, Called};
use super::{RedisConn, RunKeys, StockLayout, StoreError};

/// Put `stock` units on the shelf: `SET key n EX ttl` for the counter, or for each bucket in
/// one transaction (so no buyer ever sees half a shelf). On a cluster the buckets have
/// different slots, which no transaction may span: one `SET` each, all at once (buyers only
/// start once this has returned, so they still never see half a shelf).
pub async fn init(conn: &mut RedisConn, keys: &RunKeys, stock: u32) -> Result<(), StoreError> {
    if keys.layout() == StockLayout::Counter {
        return conn
            .query("SET stock", &set_with_ttl(&keys.stock, stock))
            .await;
    }
    let buckets = keys.stock_keys();
    set_all(
        conn,
        "SET stock",
        buckets
            .iter()
            .map(String::as_str)
            .zip(keys.layout().split(stock)),
    )
    .await
}

/// `SET key n EX ttl` for each `(key, n)`: one transaction on a single Redis (no buyer sees
/// half of them), one `SET` each, all at once, on a cluster, where keys of different slots
/// cannot share a transaction (callers let buyers start only once this has returned).
pub(super) async fn set_all<'k>(
    conn: &mut RedisConn,
    op: &'static str,
    units: impl IntoIterator<Item = (&'k str, u32)>,
) -> Result<(), StoreError> {
    let sets: Vec<redis::Cmd> = units
        .into_iter()
        .map(|(key, n)| set_with_ttl(key, n))
        .collect();
    if conn.is_cluster() {
        return each::<()>(conn, op, &sets).await.map(drop);
    }
    let mut pipe = redis::pipe();
    pipe.atomic();
    for set in sets {
        pipe.add_command(set).ignore();
    }
    conn.pipeline(op, &pipe).await
}

fn set_with_ttl(key: &str, units: u32) -> redis::Cmd {
    redis::cmd("SET")
        .arg(key)
        .arg(units)
        .arg("EX")
        .arg(RUN_KEY_TTL_SECS)
        .to_owned()
}

/// Send each command on its own, all at once, and collect the replies in order: for keys
/// on different cluster slots, where one pipeline cannot hold them all.
pub(super) async fn each<T: FromRedisValue>(
    conn: &RedisConn,
    op: &'static str,
    cmds: &[redis::Cmd],
) -> Result<Vec<T>, StoreError> {
    futures_util::future::try_join_all(cmds.iter().map(|cmd| {
        let mut conn = conn.clone();
        async move { conn.query(op, cmd).await }
    }))
    .await
}

/// What the stock keys held when read back after a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// Every counter was there; this is their sum.
    Units(i64),
    /// A counter was gone: Redis restarted, flushed or evicted it mid-run. No number read
    /// now would be the run's result.
    Missing(String),
    /// A counter held something that is not an integer.
    NotInteger {
        /// Which key.
        key: String,
        /// What it held.
        raw: String,
    },
}

/// Read every stock counter back in one round trip (a `GET` per counter, pipelined; on a
/// cluster, whose buckets sit on different slots, one `GET` per counter, all at once).
/// A key that now holds another type fails with Redis's `WRONGTYPE` error.
pub async fn read_back(conn: &mut RedisConn, keys: &RunKeys) -> Result<Reading, StoreError> {
    const OP: &str = "GET stock (read back)";
    let names = keys.stock_keys();
    let gets: Vec<redis::Cmd> = names
        .iter()
        .map(|key| redis::cmd("GET").arg(key).to_owned())
        .collect();
    let values: Vec<Option<String>> = if conn.is_cluster() {
        each(conn, OP, &gets).await?
    } else {
        let mut pipe = redis::pipe();
        for get in gets {
            pipe.add_command(get);
        }
        conn.pipeline(OP, &pipe).await?
    };
    let mut total: i64 = 0;
    for (key, value) in names.into_iter().zip(values) {
        let Some(raw) = value else {
            return Ok(Reading::Missing(key));
        };
        match raw.parse::<i64>() {
            Ok(n) => total += n,
            Err(_) => return Ok(Reading::NotInteger { key, raw }),
        }
    }
    Ok(Reading::Units(total))
}

/// Delete every key of a run. Only ever named keys: nothing global is flushed. (On a
/// cluster the client splits the `DEL` by slot and adds up the replies.)
pub async fn remove_run(conn: &mut RedisConn, keys: &RunKeys) -> Result<(), StoreError> {
    conn.query("DEL run keys", redis::cmd("DEL").arg(keys.all()))
        .await
}

/// `GET` the stock counter; a missing key reads as `None`.
pub async fn get(conn: &mut RedisConn, keys: &RunKeys) -> Result<Option<i64>, StoreError> {
    conn.query("GET stock", redis::cmd("GET").arg(&keys.stock))
        .await
}

/// `DECRBY` the stock counter; returns the value after.
pub async fn decr_by(conn: &mut RedisConn, keys: &RunKeys, qty: u32) -> Result<i64, StoreError> {
    conn.query(
        "DECRBY stock",
        redis::cmd("DECRBY").arg(&keys.stock).arg(qty),
    )
    .await
}

/// Every bucket's counter, as the app sees it (`sharded_sum`): one `GET` per bucket,
/// pipelined on a single Redis (one request), one `GET` each, all at once, on a cluster,
/// where the buckets sit on different slots (one request per bucket). The values come back
/// in bucket order, a missing bucket as 0; with them, the requests sent, which is what the
/// buyer reports as its round trips whether or not the read succeeded.
///
/// Each `GET` is atomic; the set of them is not: on a cluster they run on different nodes
/// at different moments, and even pipelined on one Redis another client's `DECRBY` of one
/// bucket may land between them. No single moment of Redis's order ever held their sum.
pub async fn get_buckets(
    conn: &mut RedisConn,
    keys: &RunKeys,
) -> (u32, Result<Vec<i64>, StoreError>) {
    const OP: &str = "GET bucket (each)";
    let gets: Vec<redis::Cmd> = keys
        .stock_keys()
        .iter()
        .map(|key| redis::cmd("GET").arg(key).to_owned())
        .collect();
    if conn.is_cluster() {
        let sent = gets.len() as u32;
        let values: Result<Vec<Option<i64>>, _> = each(conn, OP, &gets).await;
        return (
            sent,
            values.map(|v| v.into_iter().map(|n| n.unwrap_or(0)).collect()),
        );
    }
    let mut pipe = redis::pipe();
    for get in gets {
        pipe.add_command(get);
    }
    let values: Result<Vec<Option<i64>>, _> = conn.pipeline(OP, &pipe).await;
    (
        1,
        values.map(|v| v.into_iter().map(|n| n.unwrap_or(0)).collect()),
    )
}

/// `DECRBY` bucket `bucket`'s counter (a [`StockLayout::Buckets`] run); returns the bucket's
/// value after.
pub async fn decr_bucket(
    conn: &mut RedisConn,
    keys: &RunKeys,
    bucket: u32,
    qty: u32,
) -> Result<i64, StoreError> {
    conn.query(
        "DECRBY bucket",
        redis::cmd("DECRBY").arg(keys.bucket_key(bucket)).arg(qty),
    )
    .await
}

/// `INCRBY` the stock counter; returns the value after.
pub async fn incr_by(conn: &mut RedisConn, keys: &RunKeys, qty: u32) -> Result<i64, StoreError> {
    conn.query(
        "INCRBY stock",
        redis::cmd("INCRBY").arg(&keys.stock).arg(qty),
    )
    .await
}

/// `SET` the stock counter to `value`, keeping the key's TTL (`SET key value KEEPTTL`).
/// An unconditional overwrite: the `naive_set` strategy uses it to show a lost update.
pub async fn overwrite(conn: &mut RedisConn, keys: &RunKeys, value: i64) -> Result<(), StoreError> {
    let cmd = redis::cmd("SET")
        .arg(&keys.stock)
        .arg(value)
        .arg("KEEPTTL")
        .to_owned();
    conn.query("SET stock KEEPTTL", &cmd).await
}

/// `WATCH` the stock counter on this connection: the next `EXEC` on it is discarded if
/// anyone writes the key in between. Only meaningful on a connection one buyer holds.
pub async fn watch(conn: &mut RedisConn, keys: &RunKeys) -> Result<(), StoreError> {
    conn.query("WATCH stock", redis::cmd("WATCH").arg(&keys.stock))
        .await
}

/// `UNWATCH`: forget every key this connection watches. On a cluster it goes to the node
/// serving the run's stock, whose connection holds the `WATCH`.
pub async fn unwatch(conn: &mut RedisConn, keys: &RunKeys) -> Result<(), StoreError> {
    conn.query_routed(
        "UNWATCH",
        &redis::cmd("UNWATCH"),
        Route::KeyMaster(&keys.stock),
    )
    .await
}

/// On a cluster, the `host:port` of the master serving each stock counter (in the order of
/// [`RunKeys::stock_keys`]), from the slot map `conn` read when it opened; `None` each on a
/// single Redis. Which node served a buyer is the node of the counter it took from.
pub fn serving_nodes(conn: &RedisConn, keys: &RunKeys) -> Vec<Option<String>> {
    keys.stock_keys().iter().map(|k| conn.node_of(k)).collect()
}

/// `MULTI`, `DECRBY stock qty`, `EXEC`, sent as one pipeline (one round trip). `Some(stock
/// after)` when the transaction ran; `None` when `EXEC` answered nil because a watched key
/// changed.
pub async fn exec_decr_by(
    conn: &mut RedisConn,
    keys: &RunKeys,
    qty: u32,
) -> Result<Option<i64>, StoreError> {
    let mut pipe = redis::pipe();
    pipe.atomic().cmd("DECRBY").arg(&keys.stock).arg(qty);
    let ran: Option<(i64,)> = conn.pipeline("MULTI/DECRBY/EXEC", &pipe).await?;
    Ok(ran.map(|(after,)| after))
}

/// What `reserve.lua` (or the `oversold_v2_reserve` function) answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReserveReply {
    /// True when the units were taken.
    pub reserved: bool,
    /// The stock the script read.
    pub before: i64,
    /// The stock after (equal to `before` when nothing was taken).
    pub after: i64,
}

/// Decode the `{flag, before, after}` reply shared by `reserve.lua` and the function.
pub(super) fn reserve_reply(op: &'static str, reply: &[i64]) -> Result<ReserveReply, StoreError> {
    match *reply {
        [flag @ (0 | 1), before, after] => Ok(ReserveReply {
            reserved: flag == 1,
            before,
            after,
        }),
        _ => Err(StoreError::Unexpected {
            op,
            detail: format!("{reply:?}"),
        }),
    }
}

/// Run `reserve.lua` on the counter `key` for `qty` units.
pub async fn reserve(
    conn: &mut RedisConn,
    key: &str,
    qty: u32,
) -> Result<Called<ReserveReply>, CallFailed> {
    // `qty` goes out as its decimal digits, the same bytes as `qty.to_string()` without
    // the string: this is every `lua` buyer's one call.
    reserve_with(conn, key, qty).await
}

/// Run `reserve.lua` with a raw `qty` argument. Takes a string so the contract tests can send
/// what a buggy client might (`"0"`, `"2.5"`, `"0x10"`); buyers call [`reserve`].
pub async fn reserve_raw(
    conn: &mut RedisConn,
    key: &str,
    qty: &str,
) -> Result<Called<ReserveReply>, CallFailed> {
    reserve_with(conn, key, qty).await
}

async fn reserve_with(
    conn: &mut RedisConn,
    key: &str,
    qty: impl redis::ToRedisArgs,
) -> Result<Called<ReserveReply>, CallFailed> {
    // Decoded as three integers in place, not a `Vec` (one allocation less per buyer); a
    // reply of another shape fails the decode, as it failed `reserve_reply` before.
    let called: Called<(i64, i64, i64)> =
        scripts::call(conn, "reserve.lua", &scripts::RESERVE, &[key], qty).await?;
    let round_trips = called.round_trips;
    let (flag, before, after) = called.reply;
    match reserve_reply("reserve.lua", &[flag, before, after]) {
        Ok(reply) => Ok(Called { reply, round_trips }),
        Err(error) => Err(CallFailed { error, round_trips }),
    }
}

/// `reserve.lua`'s reply as Redis sends it: `{flag, before, after}`.
type RawReserveReply = (i64, i64, i64);

/// `n` orders of `qty` units on the counter `key`, each its own `reserve.lua` call, sent as
/// one pipeline (`oversold bench --pipeline`). Each order's reply, in order; see
/// [`scripts::call_batch`] for what the outer error means.
pub async fn reserve_batch(
    conn: &mut RedisConn,
    key: &str,
    qty: u32,
    n: usize,
) -> Result<Called<Vec<Result<ReserveReply, StoreError>>>, CallFailed> {
    let called: Called<Vec<Result<RawReserveReply, StoreError>>> =
        scripts::call_batch(conn, "reserve.lua", &scripts::RESERVE, &[key], qty, n).await?;
    let replies = called
        .reply
        .into_iter()
        .map(|r| {
            r.and_then(|(flag, before, after)| reserve_reply("reserve.lua", &[flag, before, after]))
        })
        .collect();
    Ok(Called {
        reply: replies,
        round_trips: called.round_trips,
    })
}

/// Write a raw value into `key` (contract and fault tests use it to plant bad data).
#[cfg(feature = "test-support")]
pub async fn set_raw(conn: &mut RedisConn, key: &str, raw: &str) -> Result<(), StoreError> {
    let cmd = redis::cmd("SET")
        .arg(key)
        .arg(raw)
        .arg("EX")
        .arg(RUN_KEY_TTL_SECS)
        .to_owned();
    conn.query("SET (raw)", &cmd).await
}

/// Does this key exist? (Tests check a run cleaned up after itself.)
#[cfg(feature = "test-support")]
pub async fn key_exists(conn: &mut RedisConn, key: &str) -> Result<bool, StoreError> {
    conn.query("EXISTS", redis::cmd("EXISTS").arg(key)).await
}
