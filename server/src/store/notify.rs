//! `holds_notify`'s side of Redis: holds that Redis itself expires, and the `expired`
//! keyspace events that are meant to bring their units back.
//!
//! A hold here is a key with a TTL (`SET … PX`). Nothing lists it by expiry and nothing scans:
//! when Redis removes the key it publishes `expired` on `__keyevent@<db>__:expired`, and the
//! run's listener ([`ExpiredEvents`]) calls `release_hold_ttl.lua`. The key's contents die with
//! it, so each hold has a *shadow* hash (qty, customer, request, expiry) that lives as long as
//! the run, listed in the run's `shadows` set; the scripts settle a hold by deleting its shadow
//! in the step that moves its units. A shadow whose hold key is gone is a release nobody
//! heard: its units are stranded ([`Shadows`]).
//!
//! Redis publishes keyspace events only when `notify-keyspace-events` says so, a server-wide
//! setting: the runner starts a `redis-server` of its own with it (never `CONFIG SET` on a
//! shared Redis), so this module never changes a server's configuration.

use std::time::Duration;

use redis::Value;
use redis::aio::PubSubStream;

use super::holds::{ConfirmReply, HoldReply, HoldRequest, confirm_reply, decoded, hold_reply};
use super::holds::{int, qty, unexpected};
use super::keys::{CheckoutKeys, HoldKey, RUN_KEY_TTL_SECS};
use super::scripts::{self, CallFailed, Called};
use super::{CONNECT_TIMEOUT, Deployment, RedisConn, Store, StoreError};

/// What `release_hold_ttl.lua` answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TtlRelease {
    /// `qty` units are back.
    Released {
        /// Units returned.
        qty: u32,
        /// The available counter after.
        available_after: i64,
        /// When the hold was due, on the shop clock (ms).
        expires_at: u64,
    },
    /// Settled already (confirmed, released, or returned on an earlier event).
    Gone {
        /// The available counter.
        available: i64,
    },
}

/// The run's shadows at one instant: holds whose key still ticks, and holds whose key is
/// gone with nobody having returned their units (a lost `expired` event).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shadows {
    /// Holds whose key Redis still has.
    pub live_holds: u64,
    /// Units in them.
    pub live_units: u64,
    /// Holds whose key is gone and whose shadow is still there: stranded.
    pub stranded_holds: u64,
    /// Units in them.
    pub stranded_units: u64,
}

/// `reserve_hold_ttl.lua`: take `r.qty` units into a hold whose key lives `px` real ms.
pub async fn reserve_hold_ttl(
    conn: &mut RedisConn,
    keys: &CheckoutKeys,
    r: &HoldRequest<'_>,
    px: u64,
) -> Result<Called<HoldReply>, CallFailed> {
    const OP: &str = "reserve_hold_ttl.lua";
    let shadow = keys.shadow_of(r.hold);
    let k = [
        keys.run.stock_key(),
        &keys.shadows,
        &keys.held,
        &keys.customers,
        &r.hold.key,
        &shadow,
    ];
    let args = [
        r.qty.to_string(),
        r.now.to_string(),
        r.ttl.to_string(),
        r.customer.to_string(),
        r.request.to_string(),
        RUN_KEY_TTL_SECS.to_string(),
        px.max(1).to_string(),
    ];
    let called = scripts::call(conn, OP, &scripts::RESERVE_HOLD_TTL, &k, &args[..]).await;
    decoded(called, |v| hold_reply(OP, keys, r.hold, v))
}

/// `confirm_hold_ttl.lua`: make `hold` a sale, if it is unsettled and not yet expired.
pub async fn confirm_hold_ttl(
    conn: &mut RedisConn,
    keys: &CheckoutKeys,
    hold: &HoldKey,
    now: u64,
) -> Result<Called<ConfirmReply>, CallFailed> {
    const OP: &str = "confirm_hold_ttl.lua";
    let shadow = keys.shadow_of(hold);
    let k = [
        keys.shadows.as_str(),
        &hold.key,
        &shadow,
        &keys.held,
        &keys.sold,
    ];
    let args = (now, RUN_KEY_TTL_SECS);
    let called = scripts::call(conn, OP, &scripts::CONFIRM_HOLD_TTL, &k, args).await;
    decoded(called, |v| confirm_reply(OP, v))
}

/// `release_hold_ttl.lua`: give `hold`'s units back from its shadow, if it is still there.
pub async fn release_hold_ttl(
    conn: &mut RedisConn,
    keys: &CheckoutKeys,
    hold: &HoldKey,
) -> Result<Called<TtlRelease>, CallFailed> {
    const OP: &str = "release_hold_ttl.lua";
    let shadow = keys.shadow_of(hold);
    let k = [
        keys.run.stock_key(),
        &keys.shadows,
        &keys.held,
        &keys.customers,
        &hold.key,
        &shadow,
    ];
    let none = Vec::<String>::new();
    let called = scripts::call(conn, OP, &scripts::RELEASE_HOLD_TTL, &k, none).await;
    decoded(
        called,
        |v| match v.iter().map(int).collect::<Vec<_>>()[..] {
            [Some(1), Some(n), Some(after), Some(due)] => Ok(TtlRelease::Released {
                qty: qty(OP, n, v)?,
                available_after: after,
                expires_at: u64::try_from(due).map_err(|_| unexpected(OP, v))?,
            }),
            [Some(0), Some(0), Some(available), Some(0)] => Ok(TtlRelease::Gone { available }),
            _ => Err(unexpected(OP, v)),
        },
    )
}

/// The hold keys whose shadow is still there.
async fn shadowed(conn: &mut RedisConn, keys: &CheckoutKeys) -> Result<Vec<String>, StoreError> {
    let cmd = redis::cmd("SMEMBERS").arg(&keys.shadows).to_owned();
    conn.query("SMEMBERS shadows", &cmd).await
}

/// How many holds are unsettled (their shadow is there), whether their key is or not.
pub async fn unsettled(conn: &mut RedisConn, keys: &CheckoutKeys) -> Result<u64, StoreError> {
    let cmd = redis::cmd("SCARD").arg(&keys.shadows).to_owned();
    conn.query("SCARD shadows", &cmd).await
}

/// How long until the first unsettled hold's key expires, as Redis counts it (`PTTL`); `None`
/// when no unsettled hold has a live key. Redis's own count, not the shop clock: Redis
/// expires keys by its wall clock, which need not keep pace with this process's monotonic
/// one. Read in pages: it is called once, when the first hold is seen.
pub async fn first_expiry(
    conn: &mut RedisConn,
    keys: &CheckoutKeys,
) -> Result<Option<Duration>, StoreError> {
    let mut first = None::<u64>;
    for page in shadowed(conn, keys).await?.chunks(250) {
        let mut pipe = redis::pipe();
        for key in page {
            let hold = keys
                .hold_at(key)
                .ok_or_else(|| unexpected("first expiry", key))?;
            pipe.cmd("PTTL").arg(&hold.key);
        }
        let read: Vec<i64> = conn.pipeline("PTTL the holds", &pipe).await?;
        // -2: the key is gone (expired or settled since the SMEMBERS); -1 never happens here.
        for ms in read.into_iter().filter_map(|ms| u64::try_from(ms).ok()) {
            first = Some(first.map_or(ms, |f| f.min(ms)));
        }
    }
    Ok(first.map(Duration::from_millis))
}

/// Split the shadows into live holds and stranded ones, in pages. `EXISTS` on a key whose
/// TTL has passed makes Redis remove it (and publish its `expired` event) now: call this once
/// nobody listens any more, or after [`touch`], so that counts as stranded.
pub async fn shadows(conn: &mut RedisConn, keys: &CheckoutKeys) -> Result<Shadows, StoreError> {
    let mut out = Shadows::default();
    for page in shadowed(conn, keys).await?.chunks(250) {
        let mut pipe = redis::pipe();
        let mut holds = Vec::with_capacity(page.len());
        for key in page {
            let hold = keys
                .hold_at(key)
                .ok_or_else(|| unexpected("shadows", key))?;
            pipe.cmd("EXISTS").arg(&hold.key);
            pipe.cmd("HGET").arg(keys.shadow_of(&hold)).arg("qty");
            holds.push(hold);
        }
        let read: Vec<(bool, Option<u64>)> = conn.pipeline("read the shadows", &pipe).await?;
        for (live, units) in read {
            let units = units.unwrap_or(0);
            if live {
                (out.live_holds, out.live_units) = (out.live_holds + 1, out.live_units + units);
            } else {
                out.stranded_holds += 1;
                out.stranded_units += units;
            }
        }
    }
    Ok(out)
}

/// Touch every unsettled hold's key (`EXISTS`): a key past its TTL that Redis has not got
/// round to removing is removed now, and its `expired` event published now. What lazy
/// expiry would do on the next read, done once so the run does not wait on Redis's sampling.
pub async fn touch(conn: &mut RedisConn, keys: &CheckoutKeys) -> Result<(), StoreError> {
    for page in shadowed(conn, keys).await?.chunks(250) {
        let mut pipe = redis::pipe();
        for key in page {
            pipe.cmd("EXISTS").arg(key).ignore();
        }
        conn.pipeline::<()>("touch the holds", &pipe).await?;
    }
    Ok(())
}

/// Publish `marker` on the `expired` channel. Redis runs one command at a time and publishes
/// an `expired` event the moment it removes the key, so a listener that reads the marker has
/// read every event published before it.
pub async fn publish_marker(
    conn: &mut RedisConn,
    channel: &str,
    marker: &str,
) -> Result<(), StoreError> {
    let cmd = redis::cmd("PUBLISH").arg(channel).arg(marker).to_owned();
    conn.query::<u64>("PUBLISH marker", &cmd).await.map(drop)
}

/// What the drain publishes after its touch, to know it has read every event before it: a
/// name no key of the run has.
pub fn drain_marker(keys: &CheckoutKeys) -> String {
    format!("{}:drained", keys.run.tag())
}

/// Delete every hold Redis expires and its shadow (clean-up), in pages.
pub(super) async fn remove_shadowed(
    conn: &mut RedisConn,
    keys: &CheckoutKeys,
) -> Result<(), StoreError> {
    for page in shadowed(conn, keys).await?.chunks(250) {
        let mut del = redis::cmd("DEL");
        for key in page {
            del.arg(key);
            if let Some(hold) = keys.hold_at(key) {
                del.arg(keys.shadow_of(&hold));
            }
        }
        conn.query::<()>("DEL shadowed holds", &del).await?;
    }
    Ok(())
}

/// A subscription to one database's `expired` keyspace events: the key names Redis removed
/// for having expired, in the order it removed them.
pub struct ExpiredEvents {
    channel: String,
    /// The messages; dropping it closes the connection (Redis forgets the subscriber).
    stream: PubSubStream,
}

/// The channel Redis publishes database `db`'s `expired` events on.
fn expired_channel(db: i64) -> String {
    format!("__keyevent@{db}__:expired")
}

impl ExpiredEvents {
    /// Open a connection of its own and `SUBSCRIBE` to `expired` events (a single Redis
    /// only: a cluster publishes each node's events on that node alone). Redis publishes them
    /// only if its `notify-keyspace-events` includes `Ex`; nothing here checks or sets it.
    pub async fn subscribe(store: &Store) -> Result<Self, StoreError> {
        let Deployment::Single(client) = &store.deployment else {
            return Err(unexpected("SUBSCRIBE", "expired events on a Redis Cluster"));
        };
        let db = client.get_connection_info().redis_settings().db();
        let channel = expired_channel(db);
        let addr = store.display_addr();
        let timed_out = |what: &str| StoreError::Connect {
            addr: addr.clone(),
            source: std::io::Error::new(std::io::ErrorKind::TimedOut, what.to_string()).into(),
        };
        let mut pubsub = tokio::time::timeout(CONNECT_TIMEOUT, client.get_async_pubsub())
            .await
            .map_err(|_| timed_out("no subscriber connection in time"))?
            .map_err(|source| StoreError::Connect {
                addr: addr.clone(),
                source,
            })?;
        tokio::time::timeout(CONNECT_TIMEOUT, pubsub.subscribe(&channel))
            .await
            .map_err(|_| timed_out("SUBSCRIBE unanswered"))?
            .map_err(|source| StoreError::Command {
                op: "SUBSCRIBE expired",
                source,
            })?;
        Ok(ExpiredEvents {
            channel,
            stream: pubsub.into_on_message(),
        })
    }

    /// The channel it listens on (where [`publish_marker`] must publish).
    pub fn channel(&self) -> &str {
        &self.channel
    }

    /// The next key Redis expired (or a marker), or `None` once the connection is gone.
    pub async fn next(&mut self) -> Option<String> {
        use futures_util::StreamExt;
        loop {
            let msg = self.stream.next().await?;
            match msg.get_payload::<Value>() {
                Ok(Value::BulkString(b)) => {
                    if let Ok(key) = String::from_utf8(b) {
                        return Some(key);
                    }
                }
                other => tracing::debug!(?other, "an expired event with no key name"),
            }
        }
    }
}
