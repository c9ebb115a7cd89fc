//! The `cart` and `warehouses` scenarios: a run's stock on several counters (one per SKU,
//! or per warehouse), and the commands and scripts buyers send to them.
//!
//! Every counter of a run shares the run's hash tag (`oversold:{run-ID}:sku:phone`), so a
//! Redis Cluster keeps them on one slot and a script may touch them all. The one exception
//! is by design: [`Tagging::Untagged`] names them `oversold:run-ID:sku:phone`, with no tag,
//! so each hashes to a slot of its own and a cluster refuses a script over two of them
//! (`CROSSSLOT`). That is the lesson `cart_script_untagged` exists to show.

use super::cluster::Route;
use super::keys::RUN_KEY_TTL_SECS;
use super::scripts::{self, CallFailed, Called};
use super::{RedisConn, StoreError, stock};

/// What a run's shelves hold: a cart's SKUs, or one SKU's warehouses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShelfKind {
    /// One counter per SKU.
    Sku,
    /// One counter per warehouse.
    Warehouse,
}

/// Whether a run's shelf keys share its hash tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tagging {
    /// `oversold:{run-ID}:…`: one slot for the whole run.
    Shared,
    /// `oversold:run-ID:…`: a slot per key (the CROSSSLOT lesson).
    Untagged,
}

/// The keys of one multi-shelf run.
#[derive(Debug, Clone)]
pub struct ShelfKeys {
    counters: Vec<String>,
    undone: String,
    tagging: Tagging,
}

impl ShelfKeys {
    /// Keys for run `run_id`'s shelves, named `names` (`phone`, `north`...).
    pub fn new(run_id: &str, kind: ShelfKind, names: &[&str], tagging: Tagging) -> Self {
        let prefix = match tagging {
            Tagging::Shared => format!("oversold:{{{run_id}}}"),
            Tagging::Untagged => format!("oversold:{run_id}"),
        };
        let what = match kind {
            ShelfKind::Sku => "sku",
            ShelfKind::Warehouse => "wh",
        };
        ShelfKeys {
            counters: names
                .iter()
                .map(|n| format!("{prefix}:{what}:{n}"))
                .collect(),
            // The saga's record of undone lines always shares the run's tag: it sits beside
            // each counter it is checked with only on a single slot, which the saga keeps.
            undone: format!("oversold:{{{run_id}}}:undone"),
            tagging,
        }
    }

    /// Shelf `i`'s counter.
    pub fn counter(&self, i: u32) -> &str {
        &self.counters[i as usize]
    }

    /// Every counter, in shelf order.
    pub fn counters(&self) -> &[String] {
        &self.counters
    }

    /// The set of lines a saga has given back.
    pub fn undone_key(&self) -> &str {
        &self.undone
    }

    /// Whether the counters share one hash tag.
    pub fn tagging(&self) -> Tagging {
        self.tagging
    }

    /// Every key the run may create, for clean-up.
    pub fn all(&self) -> Vec<String> {
        let mut keys = self.counters.clone();
        keys.push(self.undone.clone());
        keys
    }
}

/// Put each shelf's units on it. On a single Redis one transaction (no buyer sees half
/// the shelves); on a cluster one `SET` per key, all at once (buyers start only after).
pub async fn init(
    conn: &mut RedisConn,
    keys: &ShelfKeys,
    stocks: &[u32],
) -> Result<(), StoreError> {
    let units = keys
        .counters
        .iter()
        .map(String::as_str)
        .zip(stocks.iter().copied());
    stock::set_all(conn, "SET shelves", units).await
}

/// Read every counter back: `None` for a key that is gone (Redis lost the run's stock).
pub async fn read_back(
    conn: &mut RedisConn,
    keys: &ShelfKeys,
) -> Result<Vec<Option<i64>>, StoreError> {
    let gets: Vec<redis::Cmd> = keys
        .counters
        .iter()
        .map(|k| redis::cmd("GET").arg(k).to_owned())
        .collect();
    stock::each(conn, "GET shelves (read back)", &gets).await
}

/// Delete every key of the run (on a cluster the client splits the `DEL` by slot).
pub async fn remove_run(conn: &mut RedisConn, keys: &ShelfKeys) -> Result<(), StoreError> {
    for key in keys.all() {
        conn.query::<()>("DEL shelves", redis::cmd("DEL").arg(key))
            .await?;
    }
    Ok(())
}

/// On a cluster, the node serving each shelf's counter; `None` each on a single Redis.
pub fn serving_nodes(conn: &RedisConn, keys: &ShelfKeys) -> Vec<Option<String>> {
    keys.counters.iter().map(|k| conn.node_of(k)).collect()
}

/// `GET` shelf `i`'s counter; a missing key reads as `None`.
pub async fn get(
    conn: &mut RedisConn,
    keys: &ShelfKeys,
    i: u32,
) -> Result<Option<i64>, StoreError> {
    conn.query("GET shelf", redis::cmd("GET").arg(keys.counter(i)))
        .await
}

/// `DECRBY` shelf `i`'s counter; the value after.
pub async fn decr_by(
    conn: &mut RedisConn,
    keys: &ShelfKeys,
    i: u32,
    qty: u32,
) -> Result<i64, StoreError> {
    conn.query(
        "DECRBY shelf",
        redis::cmd("DECRBY").arg(keys.counter(i)).arg(qty),
    )
    .await
}

/// What a multi-key script answered: its flag and one number per key (see the scripts'
/// headers for what the numbers are).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiReply {
    /// True when the order was taken.
    pub ok: bool,
    /// One number per key, in the keys' order.
    pub values: Vec<i64>,
}

fn multi_reply(op: &'static str, reply: Vec<i64>, n: usize) -> Result<MultiReply, StoreError> {
    match reply.split_first() {
        Some((&flag @ (0 | 1), rest)) if rest.len() == n => Ok(MultiReply {
            ok: flag == 1,
            values: rest.to_vec(),
        }),
        _ => Err(StoreError::Unexpected {
            op,
            detail: format!("{reply:?}"),
        }),
    }
}

async fn call_multi(
    conn: &mut RedisConn,
    op: &'static str,
    script: &scripts::LuaFile,
    keys: &[&str],
    args: Vec<String>,
) -> Result<Called<MultiReply>, CallFailed> {
    let route = keys.first().map_or(Route::Auto, |&k| Route::KeyMaster(k));
    let called: Called<Vec<i64>> =
        scripts::call_routed(conn, op, script, keys, args, route).await?;
    let round_trips = called.round_trips;
    match multi_reply(op, called.reply, keys.len()) {
        Ok(reply) => Ok(Called { reply, round_trips }),
        Err(error) => Err(CallFailed { error, round_trips }),
    }
}

/// `reserve_cart.lua` over `lines` (shelf, qty): every line or none.
pub async fn reserve_cart(
    conn: &mut RedisConn,
    keys: &ShelfKeys,
    lines: &[(u32, u32)],
) -> Result<Called<MultiReply>, CallFailed> {
    let names: Vec<&str> = lines.iter().map(|&(i, _)| keys.counter(i)).collect();
    let qtys = lines.iter().map(|&(_, q)| q.to_string()).collect();
    call_multi(
        conn,
        "reserve_cart.lua",
        &scripts::RESERVE_CART,
        &names,
        qtys,
    )
    .await
}

/// What `take_cart_lines.lua` did to a cart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinesTaken {
    /// Every line, each counter's value after its DECRBY.
    All(Vec<i64>),
    /// The script stopped with `SHORT_LINE` at line `line` (0-based), which held `had`
    /// units: the lines before it were taken and stay taken, that one and the rest were not.
    StoppedAt {
        /// The short line, 0-based.
        line: usize,
        /// Its counter when the script reached it.
        had: i64,
    },
}

/// `take_cart_lines.lua` over `lines` (shelf, qty): line by line, stopped by an error at
/// the first short line. Its `SHORT_LINE` error is an answer here (it says exactly what was
/// left taken), not a failure; any other error is.
pub async fn take_cart_lines(
    conn: &mut RedisConn,
    keys: &ShelfKeys,
    lines: &[(u32, u32)],
) -> Result<Called<LinesTaken>, CallFailed> {
    const OP: &str = "take_cart_lines.lua";
    let names: Vec<&str> = lines.iter().map(|&(i, _)| keys.counter(i)).collect();
    let qtys: Vec<String> = lines.iter().map(|&(_, q)| q.to_string()).collect();
    let route = names.first().map_or(Route::Auto, |&k| Route::KeyMaster(k));
    let script = &scripts::TAKE_CART_LINES;
    match scripts::call_routed::<Vec<i64>>(conn, OP, script, &names, qtys, route).await {
        Ok(called) => match called.reply.split_first() {
            Some((1, afters)) if afters.len() == names.len() => Ok(Called {
                reply: LinesTaken::All(afters.to_vec()),
                round_trips: called.round_trips,
            }),
            _ => Err(CallFailed {
                error: StoreError::Unexpected {
                    op: OP,
                    detail: format!("{:?}", called.reply),
                },
                round_trips: called.round_trips,
            }),
        },
        Err(f) if f.error.reply_code() == Some("SHORT_LINE") => {
            // "SHORT_LINE i has s wants q", then Redis's note on where the script stopped.
            let words: Vec<&str> = f.error.reply_detail().unwrap_or("").split(' ').collect();
            match (words.first(), words.get(1), words.get(2)) {
                (Some(i), Some(&"has"), Some(had)) => match (i.parse::<usize>(), had.parse()) {
                    (Ok(i @ 1..), Ok(had)) if i <= names.len() => Ok(Called {
                        reply: LinesTaken::StoppedAt { line: i - 1, had },
                        round_trips: f.round_trips,
                    }),
                    _ => Err(f),
                },
                _ => Err(f),
            }
        }
        Err(f) => Err(f),
    }
}

/// `reserve_warehouse.lua`: `qty` from the first of `order` (shelves, preferred first)
/// that can fill it, or split over them when `split`.
pub async fn reserve_warehouse(
    conn: &mut RedisConn,
    keys: &ShelfKeys,
    order: &[u32],
    qty: u32,
    split: bool,
) -> Result<Called<MultiReply>, CallFailed> {
    let names: Vec<&str> = order.iter().map(|&i| keys.counter(i)).collect();
    let args = vec![qty.to_string(), u8::from(split).to_string()];
    let script = &scripts::RESERVE_WAREHOUSE;
    call_multi(conn, "reserve_warehouse.lua", script, &names, args).await
}

/// `reserve.lua` on shelf `i`'s counter alone: one line, atomically.
pub async fn reserve_line(
    conn: &mut RedisConn,
    keys: &ShelfKeys,
    i: u32,
    qty: u32,
) -> Result<Called<super::stock::ReserveReply>, CallFailed> {
    super::stock::reserve(conn, keys.counter(i), qty).await
}

/// `compensate_line.lua`: give line `line` (`qty` units of shelf `i`) back, once.
/// `Ok(Some(after))` when given back now, `Ok(None)` when it had been already.
pub async fn compensate(
    conn: &mut RedisConn,
    keys: &ShelfKeys,
    i: u32,
    qty: u32,
    line: &str,
) -> Result<Called<Option<i64>>, CallFailed> {
    let names = [keys.counter(i), keys.undone_key()];
    let args = (qty, line, RUN_KEY_TTL_SECS);
    let called: Called<Vec<i64>> = scripts::call(
        conn,
        "compensate_line.lua",
        &scripts::COMPENSATE_LINE,
        &names,
        args,
    )
    .await?;
    let round_trips = called.round_trips;
    match called.reply[..] {
        [1, after] => Ok(Called {
            reply: Some(after),
            round_trips,
        }),
        [0, _] => Ok(Called {
            reply: None,
            round_trips,
        }),
        _ => Err(CallFailed {
            error: StoreError::Unexpected {
                op: "compensate_line.lua",
                detail: format!("{:?}", called.reply),
            },
            round_trips,
        }),
    }
}
