//! The Lua files under `lua/`, embedded at compile time, and how a script is called.
//!
//! A script is sent as `EVALSHA` (only its SHA1 travels). When Redis answers `NOSCRIPT`
//! (after `SCRIPT FLUSH`, a restart, a failover), the same call is sent again as `EVAL` with
//! the whole body: that runs it and caches it, and no flush can refuse it. (The redis crate's
//! own `Script` answers `NOSCRIPT` with `SCRIPT LOAD` then `EVALSHA`, and a flush landing
//! between those two fails the buyer.)

use std::sync::OnceLock;

use redis::{FromRedisValue, ToRedisArgs};

use super::cluster::Route;
use super::{RedisConn, StoreError};

/// One Lua file: its name under `lua/`, its text (byte for byte what Redis runs and what the
/// page shows), and its SHA1 for `EVALSHA`.
pub struct LuaFile {
    /// The file name, e.g. `reserve.lua`.
    pub file: &'static str,
    /// The source text.
    pub source: &'static str,
    sha: OnceLock<String>,
}

impl LuaFile {
    const fn new(file: &'static str, source: &'static str) -> Self {
        LuaFile {
            file,
            source,
            sha: OnceLock::new(),
        }
    }

    /// True for a Function library (loaded with `FUNCTION LOAD`, not `SCRIPT LOAD`).
    pub fn is_library(&self) -> bool {
        self.source.starts_with("#!lua")
    }

    /// The SHA1 Redis knows the script by.
    pub fn sha(&self) -> &str {
        self.sha
            .get_or_init(|| redis::Script::new(self.source).get_hash().to_string())
    }
}

/// `lua/reserve.lua`: check the stock and take `qty` units in one step.
pub static RESERVE: LuaFile = LuaFile::new("reserve.lua", include_str!("../../../lua/reserve.lua"));
/// `lua/release_lock.lua`: delete the lock only if it still holds our token.
pub static RELEASE_LOCK: LuaFile = LuaFile::new(
    "release_lock.lua",
    include_str!("../../../lua/release_lock.lua"),
);
/// `lua/reserve_function.lua`: the reserve contract as a Redis Function library.
pub static RESERVE_FUNCTION: LuaFile = LuaFile::new(
    "reserve_function.lua",
    include_str!("../../../lua/reserve_function.lua"),
);

/// `lua/acquire_fenced_lock.lua`: take the lock and draw a fencing token in one step.
pub static ACQUIRE_FENCED_LOCK: LuaFile = LuaFile::new(
    "acquire_fenced_lock.lua",
    include_str!("../../../lua/acquire_fenced_lock.lua"),
);
/// `lua/fenced_get.lua`: read the stock, unless a newer token has touched it.
pub static FENCED_GET: LuaFile = LuaFile::new(
    "fenced_get.lua",
    include_str!("../../../lua/fenced_get.lua"),
);
/// `lua/fenced_decrby.lua`: take units, unless a newer token has touched the stock.
pub static FENCED_DECRBY: LuaFile = LuaFile::new(
    "fenced_decrby.lua",
    include_str!("../../../lua/fenced_decrby.lua"),
);

/// `lua/reserve_hold.lua`: take units into a hold that expires.
pub static RESERVE_HOLD: LuaFile = LuaFile::new(
    "reserve_hold.lua",
    include_str!("../../../lua/reserve_hold.lua"),
);
/// `lua/reserve_hold_once.lua`: the same, with the request id recorded (idempotent).
pub static RESERVE_HOLD_ONCE: LuaFile = LuaFile::new(
    "reserve_hold_once.lua",
    include_str!("../../../lua/reserve_hold_once.lua"),
);
/// `lua/reserve_hold_limited.lua`: the same, with a per-customer limit.
pub static RESERVE_HOLD_LIMITED: LuaFile = LuaFile::new(
    "reserve_hold_limited.lua",
    include_str!("../../../lua/reserve_hold_limited.lua"),
);
/// `lua/confirm_hold.lua`: a hold becomes a sale, if still held and not expired.
pub static CONFIRM_HOLD: LuaFile = LuaFile::new(
    "confirm_hold.lua",
    include_str!("../../../lua/confirm_hold.lua"),
);
/// `lua/release_hold.lua`: a hold's units go back, if still held.
pub static RELEASE_HOLD: LuaFile = LuaFile::new(
    "release_hold.lua",
    include_str!("../../../lua/release_hold.lua"),
);
/// `lua/reap_holds.lua`: a bounded batch of expired holds goes back.
pub static REAP_HOLDS: LuaFile = LuaFile::new(
    "reap_holds.lua",
    include_str!("../../../lua/reap_holds.lua"),
);
/// `lua/reconcile.lua`: available = stock - sold - held, in one step.
pub static RECONCILE: LuaFile =
    LuaFile::new("reconcile.lua", include_str!("../../../lua/reconcile.lua"));
/// `lua/ledger_record.lua`: one order into the Redis-side ledger, once.
pub static LEDGER_RECORD: LuaFile = LuaFile::new(
    "ledger_record.lua",
    include_str!("../../../lua/ledger_record.lua"),
);

/// `lua/reserve_cart.lua`: every line of a cart, or none.
pub static RESERVE_CART: LuaFile = LuaFile::new(
    "reserve_cart.lua",
    include_str!("../../../lua/reserve_cart.lua"),
);
/// `lua/compensate_line.lua`: one line's units back, once per line.
pub static COMPENSATE_LINE: LuaFile = LuaFile::new(
    "compensate_line.lua",
    include_str!("../../../lua/compensate_line.lua"),
);
/// `lua/reserve_warehouse.lua`: the preferred warehouse, else the nearest that can fill.
pub static RESERVE_WAREHOUSE: LuaFile = LuaFile::new(
    "reserve_warehouse.lua",
    include_str!("../../../lua/reserve_warehouse.lua"),
);
/// `lua/take_cart_lines.lua`: a cart line by line, stopped by an error at a short line (the
/// lines before it stay taken: Redis has no rollback).
pub static TAKE_CART_LINES: LuaFile = LuaFile::new(
    "take_cart_lines.lua",
    include_str!("../../../lua/take_cart_lines.lua"),
);
/// `lua/busy_read.lua`: a long read-only job (the `busy_script` scenario's slow reader).
pub static BUSY_READ: LuaFile =
    LuaFile::new("busy_read.lua", include_str!("../../../lua/busy_read.lua"));
/// `lua/busy_write.lua`: a long job that writes first, so it cannot be killed.
pub static BUSY_WRITE: LuaFile = LuaFile::new(
    "busy_write.lua",
    include_str!("../../../lua/busy_write.lua"),
);
/// `lua/busy_function.lua`: the same as a Function library (`oversold_busy`).
pub static BUSY_FUNCTION: LuaFile = LuaFile::new(
    "busy_function.lua",
    include_str!("../../../lua/busy_function.lua"),
);

/// `lua/reserve_strict.lua`: `reserve.lua`, except that a missing counter is an error
/// (`STOCK_MISSING`), not an empty shelf (the `eviction` scenario's fix).
pub static RESERVE_STRICT: LuaFile = LuaFile::new(
    "reserve_strict.lua",
    include_str!("../../../lua/reserve_strict.lua"),
);

/// `lua/reserve_hold_ttl.lua`: take units into a hold that Redis expires (a key with PX),
/// its units remembered in a shadow that does not expire with it (`holds_notify`).
pub static RESERVE_HOLD_TTL: LuaFile = LuaFile::new(
    "reserve_hold_ttl.lua",
    include_str!("../../../lua/reserve_hold_ttl.lua"),
);
/// `lua/confirm_hold_ttl.lua`: make such a hold a sale, if its key and shadow are still there.
pub static CONFIRM_HOLD_TTL: LuaFile = LuaFile::new(
    "confirm_hold_ttl.lua",
    include_str!("../../../lua/confirm_hold_ttl.lua"),
);
/// `lua/release_hold_ttl.lua`: give such a hold's units back, once, from its shadow (the
/// app's release, and the listener's on an `expired` event).
pub static RELEASE_HOLD_TTL: LuaFile = LuaFile::new(
    "release_hold_ttl.lua",
    include_str!("../../../lua/release_hold_ttl.lua"),
);

/// `lua/slow_script.lua`: the rooms' "slow script" chaos button. Not in [`all`]: no
/// strategy runs it, and only a presenter on a server that owns its Redis can.
pub static SLOW_SCRIPT: LuaFile = LuaFile::new(
    "slow_script.lua",
    include_str!("../../../lua/slow_script.lua"),
);

/// `lua/room_budget.lua`: take from an address's budget for rooms (created, sale time,
/// bots, seats, clicks) in one step, shared by every process. Not in [`all`]: no strategy
/// runs it.
pub static ROOM_BUDGET: LuaFile = LuaFile::new(
    "room_budget.lua",
    include_str!("../../../lua/room_budget.lua"),
);

/// `lua/room_join.lua`: count a person into a room unless it is full, in one step that
/// every process shares. Not in [`all`]: no strategy runs it.
pub static ROOM_JOIN: LuaFile =
    LuaFile::new("room_join.lua", include_str!("../../../lua/room_join.lua"));

/// The scripts rooms run that are no strategy's (the page's script list leaves them out).
pub fn room_scripts() -> [&'static LuaFile; 3] {
    [&SLOW_SCRIPT, &ROOM_BUDGET, &ROOM_JOIN]
}

/// Every Lua file the server runs, for the `hello` frame and the contract tests.
pub fn all() -> [&'static LuaFile; 25] {
    [
        &RESERVE,
        &RELEASE_LOCK,
        &RESERVE_FUNCTION,
        &ACQUIRE_FENCED_LOCK,
        &FENCED_GET,
        &FENCED_DECRBY,
        &RESERVE_HOLD,
        &RESERVE_HOLD_ONCE,
        &RESERVE_HOLD_LIMITED,
        &CONFIRM_HOLD,
        &RELEASE_HOLD,
        &REAP_HOLDS,
        &RECONCILE,
        &LEDGER_RECORD,
        &RESERVE_CART,
        &COMPENSATE_LINE,
        &RESERVE_WAREHOUSE,
        &TAKE_CART_LINES,
        &BUSY_READ,
        &BUSY_WRITE,
        &BUSY_FUNCTION,
        &RESERVE_STRICT,
        &RESERVE_HOLD_TTL,
        &CONFIRM_HOLD_TTL,
        &RELEASE_HOLD_TTL,
    ]
}

/// The Lua file called `file`, if the server has one.
pub fn by_name(file: &str) -> Option<&'static LuaFile> {
    all().into_iter().find(|f| f.file == file)
}

/// `SCRIPT LOAD` a script, so the first `EVALSHA` of a run finds it cached. (Not needed for
/// correctness: [`call`] falls back to `EVAL`. It keeps the first buyers' latency and round
/// trips the same as everyone else's.)
pub async fn preload(conn: &mut RedisConn, script: &LuaFile) -> Result<(), StoreError> {
    conn.query::<String>(
        "SCRIPT LOAD",
        redis::cmd("SCRIPT").arg("LOAD").arg(script.source),
    )
    .await
    .map(drop)
}

/// A script's reply, and the requests it took: 1, or 2 when Redis had lost the script.
pub struct Called<T> {
    /// The decoded reply.
    pub reply: T,
    /// Requests sent (`EVALSHA`, plus `EVAL` after a `NOSCRIPT`).
    pub round_trips: u32,
}

/// A script call that failed, and the requests it took before failing.
#[derive(Debug)]
pub struct CallFailed {
    /// What went wrong.
    pub error: StoreError,
    /// Requests sent before it went wrong.
    pub round_trips: u32,
}

/// Run `script` on `keys` with `args`: `EVALSHA`, and on `NOSCRIPT` the same call as `EVAL`.
pub async fn call<T: FromRedisValue>(
    conn: &mut RedisConn,
    op: &'static str,
    script: &LuaFile,
    keys: &[&str],
    args: impl ToRedisArgs,
) -> Result<Called<T>, CallFailed> {
    call_routed(conn, op, script, keys, args, Route::Auto).await
}

/// [`call`], sent to `route` on a cluster. Sent to its first key's master, a script whose
/// keys span slots reaches Redis, which refuses it with `CROSSSLOT` itself (the cluster
/// client, left to route it, would refuse it before sending).
pub(super) async fn call_routed<T: FromRedisValue>(
    conn: &mut RedisConn,
    op: &'static str,
    script: &LuaFile,
    keys: &[&str],
    args: impl ToRedisArgs,
    route: Route<'_>,
) -> Result<Called<T>, CallFailed> {
    let by_sha = eval_cmd("EVALSHA", script.sha(), keys, &args);
    match conn.query_routed(op, &by_sha, route).await {
        Ok(reply) => {
            return Ok(Called {
                reply,
                round_trips: 1,
            });
        }
        Err(e) if e.reply_code() == Some("NOSCRIPT") => {}
        Err(error) => {
            return Err(CallFailed {
                error,
                round_trips: 1,
            });
        }
    }
    let by_body = eval_cmd("EVAL", script.source, keys, &args);
    match conn.query_routed(op, &by_body, route).await {
        Ok(reply) => Ok(Called {
            reply,
            round_trips: 2,
        }),
        Err(error) => Err(CallFailed {
            error,
            round_trips: 2,
        }),
    }
}

/// `n` calls of `script` on `keys` with `args`, written as one pipeline and answered in one
/// read, the way `redis-benchmark -P n` sends: one request through the connection's queue,
/// one timer and one future for all `n`, where `n` separate calls pay each of those `n`
/// times. A pipeline is not a transaction: other clients' commands may run between its
/// calls, and each call is still atomic on its own.
///
/// Returns each call's own outcome, in order. A call answered `NOSCRIPT` did not run, so it
/// alone is sent again (as [`call`] would); the outer error is the pipeline failing as a
/// whole (a lost connection, a timeout), when no call's fate is known.
pub(super) async fn call_batch<T: FromRedisValue>(
    conn: &mut RedisConn,
    op: &'static str,
    script: &LuaFile,
    keys: &[&str],
    args: impl ToRedisArgs + Copy,
    n: usize,
) -> Result<Called<Vec<Result<T, StoreError>>>, CallFailed> {
    let mut pipe = redis::Pipeline::with_capacity(n);
    let by_sha = eval_cmd("EVALSHA", script.sha(), keys, &args);
    for _ in 0..n {
        pipe.add_command(by_sha.clone());
    }
    // Each reply is kept whole, errors included, so one refused call cannot hide the others.
    pipe.ignore_errors();
    let replies: Vec<redis::RedisResult<T>> =
        conn.pipeline(op, &pipe).await.map_err(|error| CallFailed {
            error,
            round_trips: 1,
        })?;
    let mut round_trips = 1;
    let mut outcomes = Vec::with_capacity(n);
    for reply in replies {
        outcomes.push(match reply {
            Ok(value) => Ok(value),
            Err(e) if e.code() == Some("NOSCRIPT") => {
                match call(conn, op, script, keys, args).await {
                    Ok(c) => {
                        round_trips += c.round_trips;
                        Ok(c.reply)
                    }
                    Err(f) => {
                        round_trips += f.round_trips;
                        Err(f.error)
                    }
                }
            }
            Err(source) => Err(StoreError::Command { op, source }),
        });
    }
    Ok(Called {
        reply: outcomes,
        round_trips,
    })
}

/// `EVALSHA sha n keys... args...` (or `EVAL body ...`), built in buffers sized once: on the
/// hot path (every `lua` buyer, every `bench` order) growing them arg by arg cost more
/// instructions than the rest of building the command (callgrind, issue 20).
fn eval_cmd(verb: &str, script: &str, keys: &[&str], args: &impl ToRedisArgs) -> redis::Cmd {
    let arg_count = 3 + keys.len() + args.num_of_args();
    // Each numeric argument is at most 20 digits; keys and the script are their length.
    let data = verb.len()
        + script.len()
        + 20 * (1 + args.num_of_args())
        + keys.iter().map(|k| k.len()).sum::<usize>();
    let mut cmd = redis::Cmd::with_capacity(arg_count, data);
    cmd.arg(verb)
        .arg(script)
        .arg(keys.len())
        .arg(keys)
        .arg(args);
    cmd
}

/// `SCRIPT FLUSH`: drop the server's script cache, as an operator (or a restart) would.
/// Tests and the fault suite use it to prove the atomic strategies never fail because of it.
pub async fn flush_cache(conn: &mut RedisConn) -> Result<(), StoreError> {
    conn.query("SCRIPT FLUSH", redis::cmd("SCRIPT").arg("FLUSH"))
        .await
}
