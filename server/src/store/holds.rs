//! The checkout scenario's side of Redis: holds (reserve, confirm, release), the reaper,
//! reconciliation, the run's counters, and pausing a Redis we own.
//!
//! Each operation is one script call whose reply is decoded here into a Rust enum, so a
//! strategy never sees a raw reply (or a key name). The scripts' headers in `lua/` are the
//! contracts; `server/tests/it/lua_contract.rs` proves them.

use redis::Value;

use super::keys::{CheckoutKeys, HoldKey, RUN_KEY_TTL_SECS};
use super::scripts::{self, CallFailed, Called, LuaFile};
use super::{RedisConn, StoreError};

/// What a reservation is for: everything a reserve script needs besides the keys.
#[derive(Debug, Clone, Copy)]
pub struct HoldRequest<'a> {
    /// Units wanted.
    pub qty: u32,
    /// The shop clock now, ms.
    pub now: u64,
    /// How long the hold lasts, shop ms.
    pub ttl: u64,
    /// Who orders.
    pub customer: u32,
    /// The order's request id.
    pub request: &'a str,
    /// The key a new hold goes under.
    pub hold: &'a HoldKey,
}

/// What a reserve script answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HoldReply {
    /// The units are held until `expires_at` (shop ms).
    Held {
        /// The available counter after.
        available_after: i64,
        /// The hold's expiry on the shop clock.
        expires_at: u64,
        /// The customer's units held or bought, after.
        customer_units: i64,
        /// The hold: the one just made, or (from the record) the one the first call made.
        hold: HoldKey,
        /// True when this was a resent request answered from the record: nothing changed.
        from_record: bool,
    },
    /// Too few units; nothing changed.
    SoldOut {
        /// The available counter.
        available: i64,
        /// The customer's units held or bought.
        customer_units: i64,
        /// True when answered from the record of the first call.
        from_record: bool,
    },
    /// The customer would go over its limit; nothing changed.
    OverLimit {
        /// The available counter.
        available: i64,
        /// The customer's units held or bought.
        customer_units: i64,
    },
}

/// What `confirm_hold.lua` answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmReply {
    /// The hold is now `qty` sold units.
    Confirmed {
        /// Units sold.
        qty: u32,
    },
    /// Its expiry had passed; it is left for the reaper.
    Expired {
        /// Units in it.
        qty: u32,
    },
    /// Already released, confirmed, or reaped.
    Gone,
}

/// What `release_hold.lua` answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReleaseReply {
    /// `qty` units are back.
    Released {
        /// Units returned.
        qty: u32,
        /// The available counter after.
        available_after: i64,
    },
    /// Already released, confirmed, or reaped.
    Gone {
        /// The available counter.
        available: i64,
    },
}

/// What one call of `reap_holds.lua` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reaped {
    /// Holds returned.
    pub holds: u32,
    /// Units returned.
    pub units: u64,
    /// Holds due that this call left for the next.
    pub still_due: u64,
    /// Holds left in the set (due or not).
    pub holds_left: u64,
}

/// What `reconcile.lua` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reconciled {
    /// The available counter before.
    pub before: i64,
    /// The available counter after.
    pub after: i64,
    /// The sold units it used.
    pub sold: u64,
    /// The held units it used.
    pub held: i64,
}

/// The run's counters, read together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    /// The available counter, `None` if the key is gone.
    pub available: Option<i64>,
    /// Units in active holds.
    pub held: i64,
    /// Units confirmed in Redis.
    pub sold: i64,
    /// Active holds.
    pub holds: u64,
}

/// The most holds one reaper call may return (the script refuses more).
pub const MAX_REAP_BATCH: u32 = 1_000;

pub(super) fn unexpected(op: &'static str, detail: impl std::fmt::Debug) -> StoreError {
    StoreError::Unexpected {
        op,
        detail: format!("{detail:?}"),
    }
}

pub(super) fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(n) => Some(*n),
        _ => None,
    }
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::BulkString(b) => String::from_utf8(b.clone()).ok(),
        Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

/// Decode a call's reply with `decode`, keeping its round trips either way.
pub(super) fn decoded<T>(
    called: Result<Called<Vec<Value>>, CallFailed>,
    decode: impl FnOnce(&[Value]) -> Result<T, StoreError>,
) -> Result<Called<T>, CallFailed> {
    let called = called?;
    let round_trips = called.round_trips;
    match decode(&called.reply) {
        Ok(reply) => Ok(Called { reply, round_trips }),
        Err(error) => Err(CallFailed { error, round_trips }),
    }
}

/// The five keys every reserve script starts with.
fn reserve_keys<'a>(keys: &'a CheckoutKeys, hold: &'a HoldKey) -> [&'a str; 5] {
    [
        keys.run.stock_key(),
        &keys.holds,
        &keys.held,
        &keys.customers,
        &hold.key,
    ]
}

async fn reserve_with(
    conn: &mut RedisConn,
    keys: &CheckoutKeys,
    script: &LuaFile,
    extra_key: Option<&str>,
    r: &HoldRequest<'_>,
    limit: Option<u32>,
) -> Result<Called<HoldReply>, CallFailed> {
    let mut k: Vec<&str> = reserve_keys(keys, r.hold).to_vec();
    k.extend(extra_key);
    let mut args = vec![
        r.qty.to_string(),
        r.now.to_string(),
        r.ttl.to_string(),
        r.customer.to_string(),
        r.request.to_string(),
        RUN_KEY_TTL_SECS.to_string(),
    ];
    args.extend(limit.map(|l| l.to_string()));
    let called = scripts::call(conn, script.file, script, &k, args).await;
    decoded(called, |v| hold_reply(script.file, keys, r.hold, v))
}

/// Decode `{flag, available, expires_at, customer_units[, hold, from_record]}`.
pub(super) fn hold_reply(
    op: &'static str,
    keys: &CheckoutKeys,
    asked: &HoldKey,
    v: &[Value],
) -> Result<HoldReply, StoreError> {
    let nums: Vec<Option<i64>> = v.iter().take(4).map(int).collect();
    let (Some(flag), Some(available), Some(expires_at), Some(customer_units)) = (
        nums.first().copied().flatten(),
        nums.get(1).copied().flatten(),
        nums.get(2).copied().flatten(),
        nums.get(3).copied().flatten(),
    ) else {
        return Err(unexpected(op, v));
    };
    // The idempotent script adds the hold it answers with and whether it came from the record.
    let (hold, from_record) = match v.get(4..) {
        Some([]) => (asked.clone(), false),
        Some([hold, from_record]) => {
            let from_record = int(from_record) == Some(1);
            let key = text(hold).ok_or_else(|| unexpected(op, v))?;
            let hold = match key.as_str() {
                "" => asked.clone(),
                key => keys.hold_at(key).ok_or_else(|| unexpected(op, v))?,
            };
            (hold, from_record)
        }
        _ => return Err(unexpected(op, v)),
    };
    Ok(match flag {
        1 => HoldReply::Held {
            available_after: available,
            expires_at: u64::try_from(expires_at).map_err(|_| unexpected(op, v))?,
            customer_units,
            hold,
            from_record,
        },
        0 => HoldReply::SoldOut {
            available,
            customer_units,
            from_record,
        },
        2 => HoldReply::OverLimit {
            available,
            customer_units,
        },
        _ => return Err(unexpected(op, v)),
    })
}

/// `reserve_hold.lua`: take `qty` units into a new hold.
pub async fn reserve_hold(
    conn: &mut RedisConn,
    keys: &CheckoutKeys,
    r: &HoldRequest<'_>,
) -> Result<Called<HoldReply>, CallFailed> {
    reserve_with(conn, keys, &scripts::RESERVE_HOLD, None, r, None).await
}

/// `reserve_hold_once.lua`: the same, answered from the record if the request was seen.
pub async fn reserve_hold_once(
    conn: &mut RedisConn,
    keys: &CheckoutKeys,
    r: &HoldRequest<'_>,
) -> Result<Called<HoldReply>, CallFailed> {
    let record = Some(keys.requests.as_str());
    reserve_with(conn, keys, &scripts::RESERVE_HOLD_ONCE, record, r, None).await
}

/// `reserve_hold_limited.lua`: the same, refused past `limit` units for the customer.
pub async fn reserve_hold_limited(
    conn: &mut RedisConn,
    keys: &CheckoutKeys,
    r: &HoldRequest<'_>,
    limit: u32,
) -> Result<Called<HoldReply>, CallFailed> {
    let script = &scripts::RESERVE_HOLD_LIMITED;
    reserve_with(conn, keys, script, None, r, Some(limit)).await
}

pub(super) fn qty(op: &'static str, n: i64, v: &[Value]) -> Result<u32, StoreError> {
    u32::try_from(n).map_err(|_| unexpected(op, v))
}

/// `confirm_hold.lua`: make `hold` a sale, if it is still held and `now` is before its expiry.
pub async fn confirm_hold(
    conn: &mut RedisConn,
    keys: &CheckoutKeys,
    hold: &HoldKey,
    now: u64,
) -> Result<Called<ConfirmReply>, CallFailed> {
    const OP: &str = "confirm_hold.lua";
    let k = [keys.holds.as_str(), &hold.key, &keys.held, &keys.sold];
    let args = (now, RUN_KEY_TTL_SECS);
    let called = scripts::call(conn, OP, &scripts::CONFIRM_HOLD, &k, args).await;
    decoded(called, |v| confirm_reply(OP, v))
}

/// Decode a confirm script's `{1, qty}`, `{-1, qty}` or `{0, 0}`.
pub(super) fn confirm_reply(op: &'static str, v: &[Value]) -> Result<ConfirmReply, StoreError> {
    match v.iter().map(int).collect::<Vec<_>>()[..] {
        [Some(1), Some(n)] => Ok(ConfirmReply::Confirmed {
            qty: qty(op, n, v)?,
        }),
        [Some(-1), Some(n)] => Ok(ConfirmReply::Expired {
            qty: qty(op, n, v)?,
        }),
        [Some(0), Some(0)] => Ok(ConfirmReply::Gone),
        _ => Err(unexpected(op, v)),
    }
}

/// `release_hold.lua`: give `hold`'s units back, if it is still held.
pub async fn release_hold(
    conn: &mut RedisConn,
    keys: &CheckoutKeys,
    hold: &HoldKey,
) -> Result<Called<ReleaseReply>, CallFailed> {
    const OP: &str = "release_hold.lua";
    let k = [
        keys.run.stock_key(),
        &keys.holds,
        &keys.held,
        &keys.customers,
        &hold.key,
    ];
    let called = scripts::call(conn, OP, &scripts::RELEASE_HOLD, &k, Vec::<String>::new()).await;
    decoded(
        called,
        |v| match v.iter().map(int).collect::<Vec<_>>()[..] {
            [Some(1), Some(n), Some(after)] => Ok(ReleaseReply::Released {
                qty: qty(OP, n, v)?,
                available_after: after,
            }),
            [Some(0), Some(0), Some(available)] => Ok(ReleaseReply::Gone { available }),
            _ => Err(unexpected(OP, v)),
        },
    )
}

/// `reap_holds.lua`: return at most `batch` holds whose expiry is at or before `now`.
pub async fn reap(
    conn: &mut RedisConn,
    keys: &CheckoutKeys,
    now: u64,
    batch: u32,
) -> Result<Called<Reaped>, CallFailed> {
    const OP: &str = "reap_holds.lua";
    let k = [
        keys.run.stock_key(),
        &keys.holds,
        &keys.held,
        &keys.customers,
    ];
    let called = scripts::call(conn, OP, &scripts::REAP_HOLDS, &k, (now, batch)).await;
    decoded(called, |v| {
        let n: Vec<Option<u64>> = v
            .iter()
            .map(|x| int(x).and_then(|n| u64::try_from(n).ok()))
            .collect();
        match n[..] {
            [Some(holds), Some(units), Some(still_due), Some(holds_left)] => Ok(Reaped {
                holds: u32::try_from(holds).map_err(|_| unexpected(OP, v))?,
                units,
                still_due,
                holds_left,
            }),
            _ => Err(unexpected(OP, v)),
        }
    })
}

/// `reconcile.lua`: set the available counter to `stock - max(ledger, sold) - held`.
pub async fn reconcile(
    conn: &mut RedisConn,
    keys: &CheckoutKeys,
    stock: u32,
    ledger_units: u64,
) -> Result<Called<Reconciled>, CallFailed> {
    const OP: &str = "reconcile.lua";
    let k = [keys.run.stock_key(), keys.held.as_str(), &keys.sold];
    let called = scripts::call(conn, OP, &scripts::RECONCILE, &k, (stock, ledger_units)).await;
    decoded(
        called,
        |v| match v.iter().map(int).collect::<Vec<_>>()[..] {
            [Some(before), Some(after), Some(sold), Some(held)] => Ok(Reconciled {
                before,
                after,
                sold: u64::try_from(sold).map_err(|_| unexpected(OP, v))?,
                held,
            }),
            _ => Err(unexpected(OP, v)),
        },
    )
}

/// `HGET` a customer's units held or bought (0 when it has none): the read half of the
/// check-then-write per-customer limit.
pub async fn customer_units(
    conn: &mut RedisConn,
    keys: &CheckoutKeys,
    customer: u32,
) -> Result<i64, StoreError> {
    let cmd = redis::cmd("HGET")
        .arg(&keys.customers)
        .arg(customer)
        .to_owned();
    let units: Option<i64> = conn.query("HGET customers", &cmd).await?;
    Ok(units.unwrap_or(0))
}

/// The run's counters in one round trip: available, held, sold, and how many holds.
pub async fn counters(conn: &mut RedisConn, keys: &CheckoutKeys) -> Result<Counters, StoreError> {
    let mut pipe = redis::pipe();
    pipe.cmd("GET")
        .arg(keys.run.stock_key())
        .cmd("GET")
        .arg(&keys.held)
        .cmd("GET")
        .arg(&keys.sold)
        .cmd("ZCARD")
        .arg(&keys.holds)
        .cmd("SCARD")
        .arg(&keys.shadows);
    type Read = (Option<i64>, Option<i64>, Option<i64>, u64, u64);
    let (available, held, sold, listed, shadowed): Read =
        conn.pipeline("read the counters", &pipe).await?;
    Ok(Counters {
        available,
        held: held.unwrap_or(0),
        sold: sold.unwrap_or(0),
        // Holds the reaper lists, or holds Redis expires (one of the two is always empty).
        holds: listed + shadowed,
    })
}

/// Units in the holds still listed, summed from the holds themselves (not the counter),
/// in pages: what `held_units` reports at the end of a run.
pub async fn units_in_holds(conn: &mut RedisConn, keys: &CheckoutKeys) -> Result<u64, StoreError> {
    let mut total = 0u64;
    for page in hold_keys(conn, keys).await?.chunks(500) {
        let mut pipe = redis::pipe();
        for key in page {
            pipe.cmd("HGET").arg(key).arg("qty");
        }
        let qtys: Vec<Option<u64>> = conn.pipeline("HGET hold qty", &pipe).await?;
        total += qtys.into_iter().flatten().sum::<u64>();
    }
    Ok(total)
}

async fn hold_keys(conn: &mut RedisConn, keys: &CheckoutKeys) -> Result<Vec<String>, StoreError> {
    let cmd = redis::cmd("ZRANGE")
        .arg(&keys.holds)
        .arg(0)
        .arg(-1)
        .to_owned();
    conn.query("ZRANGE holds", &cmd).await
}

/// Delete every key of a checkout run: the fixed ones, every hold still listed, and every
/// hold that Redis expires with its shadow.
pub async fn remove_run(conn: &mut RedisConn, keys: &CheckoutKeys) -> Result<(), StoreError> {
    for page in hold_keys(conn, keys).await?.chunks(500) {
        conn.query::<()>("DEL holds", redis::cmd("DEL").arg(page))
            .await?;
    }
    super::notify::remove_shadowed(conn, keys).await?;
    conn.query("DEL run keys", redis::cmd("DEL").arg(keys.fixed()))
        .await
}

/// `CLIENT PAUSE <ms> ALL`: every client's commands wait until the pause ends (this
/// connection's too). Only ever sent to a Redis this process started: the caller checks.
pub async fn pause(conn: &mut RedisConn, real_ms: u64) -> Result<(), StoreError> {
    let cmd = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(real_ms)
        .arg("ALL")
        .to_owned();
    conn.query("CLIENT PAUSE", &cmd).await
}

/// Plant a hold directly, with no script and no counters (the reaper-under-load test
/// fills Redis with thousands of expired holds this way).
#[cfg(feature = "test-support")]
pub async fn plant_holds(
    conn: &mut RedisConn,
    keys: &CheckoutKeys,
    holds: &[(HoldKey, u32, u32, u64)],
) -> Result<(), StoreError> {
    for page in holds.chunks(500) {
        let mut pipe = redis::pipe();
        let mut units = 0u64;
        for (hold, qty, customer, expires_at) in page {
            pipe.cmd("HSET")
                .arg(&hold.key)
                .arg("qty")
                .arg(qty)
                .arg("customer")
                .arg(customer)
                .arg("request")
                .arg(hold.id())
                .arg("expires_at")
                .arg(expires_at)
                .ignore();
            pipe.cmd("EXPIRE")
                .arg(&hold.key)
                .arg(RUN_KEY_TTL_SECS)
                .ignore();
            pipe.cmd("ZADD")
                .arg(&keys.holds)
                .arg(expires_at)
                .arg(&hold.key)
                .ignore();
            pipe.cmd("HINCRBY")
                .arg(&keys.customers)
                .arg(customer)
                .arg(qty)
                .ignore();
            units += u64::from(*qty);
        }
        pipe.cmd("INCRBY").arg(&keys.held).arg(units).ignore();
        conn.pipeline::<()>("plant holds", &pipe).await?;
    }
    Ok(())
}
