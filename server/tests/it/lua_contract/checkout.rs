//! The checkout scenario's scripts, each header line proved against a real Redis: the three
//! reserve scripts, confirm, release, the reaper, reconciliation and the Redis ledger;
//! `holds_notify`'s three (a hold that is a key with a TTL, and its shadow) in [`notify`].
//!
//! "Nothing changed" is checked by reading every key the call could touch before and after
//! ([`state`]), so a script that wrote half its changes before failing would be caught.

use redis::Value;
use redis::aio::MultiplexedConnection;

mod notify;

use super::{BAD_QTY, BAD_STOCK, assert_pinned, del, get, pttl, set};
use crate::common::TestRedis;
use oversold::store::scripts::{self, LuaFile};

/// One item of a script's reply.
#[derive(Debug, Clone, PartialEq)]
enum V {
    I(i64),
    S(String),
}

/// A script's reply, or its error's code and text.
#[derive(Debug, PartialEq)]
enum Got {
    Items(Vec<V>),
    Err(String, String),
}

fn ints(v: &[i64]) -> Got {
    Got::Items(v.iter().map(|&n| V::I(n)).collect())
}

async fn call(
    c: &mut MultiplexedConnection,
    script: &LuaFile,
    keys: &[&str],
    args: &[&str],
) -> Got {
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(script.source).arg(keys.len()).arg(keys).arg(args);
    match cmd.query_async::<Value>(c).await {
        Ok(Value::Array(items)) => Got::Items(
            items
                .into_iter()
                .map(|v| match v {
                    Value::Int(n) => V::I(n),
                    Value::BulkString(b) => V::S(String::from_utf8(b).unwrap()),
                    other => panic!("unexpected item {other:?}"),
                })
                .collect(),
        ),
        Ok(other) => panic!("unexpected reply {other:?}"),
        Err(e) => Got::Err(
            e.code().unwrap_or("").to_string(),
            e.detail().unwrap_or("").to_string(),
        ),
    }
}

/// Every key's content, to prove a call changed nothing.
async fn state(c: &mut MultiplexedConnection, keys: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for key in keys {
        let kind: String = redis::cmd("TYPE").arg(key).query_async(c).await.unwrap();
        let content = match kind.as_str() {
            "string" => format!("{:?}", get(c, key).await),
            "hash" => {
                let mut h: Vec<(String, String)> =
                    redis::cmd("HGETALL").arg(key).query_async(c).await.unwrap();
                h.sort();
                format!("{h:?}")
            }
            "set" => {
                let mut m: Vec<String> = redis::cmd("SMEMBERS")
                    .arg(key)
                    .query_async(c)
                    .await
                    .unwrap();
                m.sort();
                format!("{m:?}")
            }
            "zset" => {
                let z: Vec<(String, String)> = redis::cmd("ZRANGE")
                    .arg(key)
                    .arg(0)
                    .arg(-1)
                    .arg("WITHSCORES")
                    .query_async(c)
                    .await
                    .unwrap();
                format!("{z:?}")
            }
            _ => String::new(),
        };
        out.push(format!("{key} {kind} {content}"));
    }
    out
}

/// Expect `code`, and prove the call changed none of `watched`.
async fn refused(
    c: &mut MultiplexedConnection,
    script: &LuaFile,
    keys: &[&str],
    args: &[&str],
    code: &str,
    watched: &[&str],
) {
    let before = state(c, watched).await;
    match call(c, script, keys, args).await {
        Got::Err(got, detail) => assert_eq!(got, code, "{} {args:?}: {detail}", script.file),
        other => panic!("{} {args:?} gave {other:?}, expected {code}", script.file),
    }
    assert_eq!(
        state(c, watched).await,
        before,
        "{} {args:?} changed something",
        script.file
    );
}

async fn hget(c: &mut MultiplexedConnection, key: &str, field: &str) -> Option<String> {
    redis::cmd("HGET")
        .arg(key)
        .arg(field)
        .query_async(c)
        .await
        .unwrap()
}

async fn zscore(c: &mut MultiplexedConnection, key: &str, member: &str) -> Option<i64> {
    redis::cmd("ZSCORE")
        .arg(key)
        .arg(member)
        .query_async(c)
        .await
        .unwrap()
}

async fn hset(c: &mut MultiplexedConnection, key: &str, pairs: &[(&str, &str)]) {
    let mut cmd = redis::cmd("HSET");
    cmd.arg(key);
    for (f, v) in pairs {
        cmd.arg(f).arg(v);
    }
    cmd.query_async::<()>(c).await.unwrap();
}

async fn zadd(c: &mut MultiplexedConnection, key: &str, score: i64, member: &str) {
    redis::cmd("ZADD")
        .arg(key)
        .arg(score)
        .arg(member)
        .query_async::<()>(c)
        .await
        .unwrap();
}

/// The keys of one contract's run.
struct Keys {
    stock: String,
    holds: String,
    held: String,
    customers: String,
    sold: String,
    record: String,
    ledger: String,
    totals: String,
    tag: String,
}

impl Keys {
    fn new(name: &str) -> Self {
        let tag = format!("oversold:{{contract-{name}}}");
        Keys {
            stock: format!("{tag}:stock"),
            holds: format!("{tag}:holds"),
            held: format!("{tag}:held"),
            customers: format!("{tag}:customers"),
            sold: format!("{tag}:sold"),
            record: format!("{tag}:requests"),
            ledger: format!("{tag}:ledger"),
            totals: format!("{tag}:ledger_totals"),
            tag,
        }
    }

    fn hold(&self, id: &str) -> String {
        format!("{}:hold:{id}", self.tag)
    }

    /// Every key of the run and the holds `ids`: what "nothing changed" watches.
    fn all(&self, ids: &[&str]) -> Vec<String> {
        let mut all = vec![
            self.stock.clone(),
            self.holds.clone(),
            self.held.clone(),
            self.customers.clone(),
            self.sold.clone(),
            self.record.clone(),
        ];
        all.extend(ids.iter().map(|id| self.hold(id)));
        all
    }
}

/// How a reserve script is called: its file, whether it takes the record key, and the
/// limit argument it takes (the limited one).
#[derive(Clone, Copy)]
struct Reserve {
    script: &'static LuaFile,
    record: bool,
    limit: Option<&'static str>,
}

impl Reserve {
    fn keys<'a>(&self, k: &'a Keys, hold: &'a str) -> Vec<&'a str> {
        let mut keys = vec![k.stock.as_str(), &k.holds, &k.held, &k.customers, hold];
        if self.record {
            keys.push(&k.record);
        }
        keys
    }

    fn args<'a>(&self, base: &[&'a str]) -> Vec<&'a str> {
        let mut args = base.to_vec();
        // The limited script takes one more argument after key_ttl.
        if args.len() == 6
            && let Some(limit) = self.limit
        {
            args.push(limit);
        }
        args
    }

    async fn call(
        &self,
        c: &mut MultiplexedConnection,
        k: &Keys,
        hold: &str,
        base: &[&str],
    ) -> Got {
        call(c, self.script, &self.keys(k, hold), &self.args(base)).await
    }

    async fn refused(
        &self,
        c: &mut MultiplexedConnection,
        k: &Keys,
        hold: &str,
        base: &[&str],
        code: &str,
        watched: &[&str],
    ) {
        refused(
            c,
            self.script,
            &self.keys(k, hold),
            &self.args(base),
            code,
            watched,
        )
        .await;
    }
}

/// The first four items of a reserve reply (the idempotent one adds two).
fn head(got: Got) -> Vec<V> {
    match got {
        Got::Items(mut items) => {
            items.truncate(4);
            items
        }
        other => panic!("expected a reply, got {other:?}"),
    }
}

fn iv(v: &[i64]) -> Vec<V> {
    v.iter().map(|&n| V::I(n)).collect()
}

/// The lines every reserve script shares: KEYS[1..5], ARGV[1..6], the held and sold-out
/// replies, and every error but the script's own. Every call that could change something
/// uses a request id of its own, so the idempotent script never answers from its record here.
async fn prove_reserve_basics(c: &mut MultiplexedConnection, r: Reserve, name: &str) {
    let k = Keys::new(name);
    let (h1, h2) = (k.hold("h1"), k.hold("h2"));
    let watched = k.all(&["h1", "h2"]);
    let watched: Vec<&str> = watched.iter().map(String::as_str).collect();
    // KEYS[1] A missing key means 0 available: sold out, and no hold is made.
    assert_eq!(
        head(
            r.call(c, &k, &h1, &["1", "1000", "500", "c1", "ra", "60"])
                .await
        ),
        iv(&[0, 0, 0, 0])
    );
    assert_eq!(get(c, &k.stock).await, None);
    assert_eq!(zscore(c, &k.holds, &h1).await, None);
    // Returns {1, available_after, expires_at, customer_units}: held until now + ttl.
    set(c, &k.stock, "5").await;
    assert_eq!(
        head(
            r.call(c, &k, &h1, &["2", "1000", "500", "c1", "rb", "60"])
                .await
        ),
        iv(&[1, 3, 1500, 2])
    );
    // KEYS[2..5]: the hold is a hash listed by its expiry; the counters moved with it.
    assert_eq!(get(c, &k.stock).await.as_deref(), Some("3"));
    assert_eq!(zscore(c, &k.holds, &h1).await, Some(1500));
    assert_eq!(hget(c, &h1, "qty").await.as_deref(), Some("2"));
    assert_eq!(hget(c, &h1, "customer").await.as_deref(), Some("c1"));
    assert_eq!(hget(c, &h1, "request").await.as_deref(), Some("rb"));
    assert_eq!(hget(c, &h1, "expires_at").await.as_deref(), Some("1500"));
    assert_eq!(get(c, &k.held).await.as_deref(), Some("2"));
    assert_eq!(hget(c, &k.customers, "c1").await.as_deref(), Some("2"));
    // ARGV[6] key_ttl: every key written lives at most that long.
    for key in [&h1, &k.holds, &k.held, &k.customers] {
        let ttl = pttl(c, key).await;
        assert!(ttl > 0 && ttl <= 60_000, "{key}: {ttl}");
    }
    // Returns {0, available, 0, customer_units}: too few units; no hold, no counter moves.
    assert_eq!(
        head(
            r.call(c, &k, &h2, &["4", "1000", "500", "c1", "rc", "60"])
                .await
        ),
        iv(&[0, 3, 0, 2])
    );
    assert_eq!(zscore(c, &k.holds, &h2).await, None);
    assert_eq!(get(c, &k.held).await.as_deref(), Some("2"));
    // A negative count (what naive_checkout leaves behind) is too few for anyone.
    set(c, &k.stock, "-4").await;
    assert_eq!(
        head(
            r.call(c, &k, &h2, &["1", "1000", "500", "c2", "rd", "60"])
                .await
        ),
        iv(&[0, -4, 0, 0])
    );
    set(c, &k.stock, "3").await;
    let ok = |qty: &'static str| [qty, "1000", "500", "c2", "rx", "60"];
    // Errors INVALID_QTY ...
    for bad in BAD_QTY {
        r.refused(c, &k, &h2, &ok(bad), "INVALID_QTY", &watched)
            .await;
    }
    r.refused(c, &k, &h2, &[], "INVALID_QTY", &watched).await;
    // Errors INVALID_TIME: now, ttl or key_ttl.
    for args in [
        &["1", "-1", "500", "c2", "rx", "60"][..],
        &["1", "1.5", "500", "c2", "rx", "60"],
        &["1", "1000", "0", "c2", "rx", "60"],
        &["1", "1000", "x", "c2", "rx", "60"],
        &["1", "1000", "500", "c2", "rx", "0"],
        &["1", "1000", "500", "c2", "rx", "07"],
        &["1", "1000", "500", "c2", "rx"],
        &["1"],
    ] {
        r.refused(c, &k, &h2, args, "INVALID_TIME", &watched).await;
    }
    // Errors INVALID_ID: customer or request empty.
    for args in [
        &["1", "1000", "500", "", "rx", "60"][..],
        &["1", "1000", "500", "c2", "", "60"],
    ] {
        r.refused(c, &k, &h2, args, "INVALID_ID", &watched).await;
    }
    // Errors HOLD_EXISTS: h1 is a hold already.
    r.refused(c, &k, &h1, &ok("1"), "HOLD_EXISTS", &watched)
        .await;
    // Errors STOCK_NOT_INTEGER.
    for bad in BAD_STOCK {
        set(c, &k.stock, bad).await;
        r.refused(c, &k, &h2, &ok("1"), "STOCK_NOT_INTEGER", &watched)
            .await;
    }
    set(c, &k.stock, "3").await;
    // Errors COUNTER_NOT_INTEGER: the held counter, or this customer's entry.
    set(c, &k.held, "2.0").await;
    r.refused(c, &k, &h2, &ok("1"), "COUNTER_NOT_INTEGER", &watched)
        .await;
    set(c, &k.held, "2").await;
    hset(c, &k.customers, &[("c2", "lots")]).await;
    r.refused(c, &k, &h2, &ok("1"), "COUNTER_NOT_INTEGER", &watched)
        .await;
}

const RESERVE_SHARED: [&str; 13] = [
    "KEYS[1]  the available counter: a canonical integer. A missing key means 0 available.",
    "KEYS[2]  the holds: a sorted set of hold keys, each scored by its expiry (shop ms).",
    "KEYS[3]  the held counter: units in active holds, a canonical integer (missing means 0).",
    "KEYS[4]  the customers: a hash of customer -> units held or bought (missing means 0).",
    "ARGV[1]  qty: units wanted, a canonical integer >= 1.",
    "ARGV[2]  now: the shop clock in ms, a canonical integer >= 0.",
    "ARGV[3]  ttl: how long the hold lasts in shop ms, a canonical integer >= 1.",
    "ARGV[4]  customer: who orders (non-empty).",
    "ARGV[6]  key_ttl: seconds any key written here may live, a canonical integer >= 1.",
    "Errors   \"INVALID_QTY ...\"          ARGV[1] is missing or not a canonical integer >= 1",
    "         \"INVALID_TIME ...\"         ARGV[2], ARGV[3] or ARGV[6] is missing or not a canonical integer in range",
    "         \"INVALID_ID ...\"           ARGV[4] or ARGV[5] is missing or empty",
    "         \"STOCK_NOT_INTEGER ...\"    KEYS[1] holds something other than a canonical integer",
];

fn pinned(own: &[&'static str]) -> Vec<&'static str> {
    let mut all = RESERVE_SHARED.to_vec();
    all.push(
        "         \"COUNTER_NOT_INTEGER ...\"  KEYS[3], or the customer's entry in KEYS[4], is not a canonical integer",
    );
    all.extend_from_slice(own);
    all
}

#[tokio::test]
async fn reserve_hold_header_is_its_contract() {
    let script = &scripts::RESERVE_HOLD;
    assert_pinned(
        script,
        &pinned(&[
            "KEYS[5]  the new hold's hash: must not exist yet.",
            "ARGV[5]  request: the order's request id (non-empty).",
            "Returns  {1, available_after, expires_at, customer_units}  held: qty units are the customer's until expires_at",
            "         {0, available, 0, customer_units}                 sold out: too few units, nothing changed",
            "         \"HOLD_EXISTS ...\"          KEYS[5] already exists: a hold is never overwritten",
        ]),
    );
    let redis = TestRedis::start();
    let r = Reserve {
        script,
        record: false,
        limit: None,
    };
    prove_reserve_basics(&mut redis.raw().await, r, "reserve-hold").await;
}

#[tokio::test]
async fn reserve_hold_once_header_is_its_contract() {
    let script = &scripts::RESERVE_HOLD_ONCE;
    assert_pinned(
        script,
        &pinned(&[
            "KEYS[5]  the new hold's hash: must not exist yet (unless the request is recorded).",
            "KEYS[6]  the record: a hash of request id -> the answer it got.",
            "ARGV[5]  request: the order's request id (non-empty); the record's key.",
            "Returns  {1, available_after, expires_at, customer_units, hold, 0}  held now: hold is KEYS[5]",
            "         {0, available, 0, customer_units, \"\", 0}                   sold out now; the refusal is recorded too",
            "         {1, available, expires_at, customer_units, hold, 1}        from the record: the hold the first call made; nothing changed",
            "         {0, available, 0, customer_units, \"\", 1}                   from the record: the first call was sold out; nothing changed",
            "         \"RECORD_CORRUPT ...\"       the request's entry in KEYS[6] is not an answer this script wrote",
            "         \"HOLD_EXISTS ...\"          KEYS[5] already exists and the request is not recorded",
        ]),
    );
    let redis = TestRedis::start();
    let c = &mut redis.raw().await;
    let r = Reserve {
        script,
        record: true,
        limit: None,
    };
    // The shared lines use a fresh request id each time they expect a change.
    prove_reserve_basics(c, r, "once-basics").await;

    let k = Keys::new("once");
    let (h1, h2, h3) = (k.hold("h1"), k.hold("h2"), k.hold("h3"));
    let watched = k.all(&["h1", "h2", "h3"]);
    let watched: Vec<&str> = watched.iter().map(String::as_str).collect();
    set(c, &k.stock, "3").await;
    // Returns {1, available_after, expires_at, customer_units, hold, 0}: held now.
    assert_eq!(
        r.call(c, &k, &h1, &["2", "1000", "500", "c1", "r1", "60"])
            .await,
        Got::Items(vec![
            V::I(1),
            V::I(1),
            V::I(1500),
            V::I(2),
            V::S(h1.clone()),
            V::I(0)
        ])
    );
    // Returns ... from the record: the same request again (another hold key, later clock)
    // gets the first hold back, and nothing changes.
    let before = state(c, &watched).await;
    assert_eq!(
        r.call(c, &k, &h2, &["2", "1400", "500", "c1", "r1", "60"])
            .await,
        Got::Items(vec![
            V::I(1),
            V::I(1),
            V::I(1500),
            V::I(2),
            V::S(h1.clone()),
            V::I(1)
        ])
    );
    assert_eq!(state(c, &watched).await, before);
    // KEYS[6]: the record holds the answer.
    assert_eq!(hget(c, &k.record, "r1").await, Some(format!("1 1500 {h1}")));
    // Returns {0, available, 0, customer_units, "", 0}: sold out now, and recorded.
    assert_eq!(
        r.call(c, &k, &h2, &["2", "1000", "500", "c2", "r2", "60"])
            .await,
        Got::Items(vec![
            V::I(0),
            V::I(1),
            V::I(0),
            V::I(0),
            V::S(String::new()),
            V::I(0)
        ])
    );
    assert_eq!(hget(c, &k.record, "r2").await.as_deref(), Some("0"));
    // Returns {0, ..., 1}: from the record, even once units are back.
    set(c, &k.stock, "9").await;
    let before = state(c, &watched).await;
    assert_eq!(
        r.call(c, &k, &h3, &["2", "1000", "500", "c2", "r2", "60"])
            .await,
        Got::Items(vec![
            V::I(0),
            V::I(9),
            V::I(0),
            V::I(0),
            V::S(String::new()),
            V::I(1)
        ])
    );
    assert_eq!(state(c, &watched).await, before);
    // KEYS[5] may exist when the request is recorded: the record answers first.
    assert!(matches!(
        r.call(c, &k, &h1, &["2", "1000", "500", "c1", "r1", "60"]).await,
        Got::Items(items) if items[5] == V::I(1)
    ));
    // Errors RECORD_CORRUPT: an entry this script did not write.
    for bad in ["", "1", "1 x h", "yes", "2 1500 h"] {
        hset(c, &k.record, &[("r7", bad)]).await;
        refused(
            c,
            script,
            &r.keys(&k, &h3),
            &["1", "1000", "500", "c1", "r7", "60"],
            "RECORD_CORRUPT",
            &watched,
        )
        .await;
    }
}

#[tokio::test]
async fn reserve_hold_limited_header_is_its_contract() {
    let script = &scripts::RESERVE_HOLD_LIMITED;
    assert_pinned(
        script,
        &pinned(&[
            "KEYS[5]  the new hold's hash: must not exist yet.",
            "ARGV[5]  request: the order's request id (non-empty).",
            "ARGV[7]  limit: most units the customer may hold or have bought, a canonical integer >= 1.",
            "Returns  {1, available_after, expires_at, customer_units}  held: qty units are the customer's until expires_at",
            "         {0, available, 0, customer_units}                 sold out: too few units, nothing changed",
            "         {2, available, 0, customer_units}                 over the limit: customer_units + qty > limit, nothing changed",
            "         \"INVALID_LIMIT ...\"        ARGV[7] is missing or not a canonical integer >= 1",
            "         \"HOLD_EXISTS ...\"          KEYS[5] already exists: a hold is never overwritten",
        ]),
    );
    let redis = TestRedis::start();
    let c = &mut redis.raw().await;
    let r = Reserve {
        script,
        record: false,
        limit: Some("100"),
    };
    prove_reserve_basics(c, r, "limited-basics").await;

    let k = Keys::new("limited");
    let (h1, h2, h3) = (k.hold("h1"), k.hold("h2"), k.hold("h3"));
    let watched = k.all(&["h1", "h2", "h3"]);
    let watched: Vec<&str> = watched.iter().map(String::as_str).collect();
    set(c, &k.stock, "9").await;
    let one = Reserve {
        limit: Some("2"),
        ..r
    };
    // Returns {1, ...}: within the limit; the customer's tally grows.
    assert_eq!(
        head(
            one.call(c, &k, &h1, &["2", "1000", "500", "c1", "r1", "60"])
                .await
        ),
        iv(&[1, 7, 1500, 2])
    );
    // Returns {2, available, 0, customer_units}: one more would pass it; nothing changed.
    let before = state(c, &watched).await;
    assert_eq!(
        head(
            one.call(c, &k, &h2, &["1", "1000", "500", "c1", "r2", "60"])
                .await
        ),
        iv(&[2, 7, 0, 2])
    );
    assert_eq!(state(c, &watched).await, before);
    // The limit is checked first: over it and out of stock is "over the limit".
    set(c, &k.stock, "0").await;
    assert_eq!(
        head(
            one.call(c, &k, &h2, &["1", "1000", "500", "c1", "r2", "60"])
                .await
        ),
        iv(&[2, 0, 0, 2])
    );
    // Another customer is not limited by c1's tally.
    set(c, &k.stock, "9").await;
    assert_eq!(
        head(
            one.call(c, &k, &h3, &["2", "1000", "500", "c2", "r3", "60"])
                .await
        ),
        iv(&[1, 7, 1500, 2])
    );
    // Errors INVALID_LIMIT.
    for bad in ["0", "-1", "1.5", "x", ""] {
        refused(
            c,
            script,
            &r.keys(&k, &h2),
            &["1", "1000", "500", "c9", "r9", "60", bad],
            "INVALID_LIMIT",
            &watched,
        )
        .await;
    }
    refused(
        c,
        script,
        &r.keys(&k, &h2),
        &["1", "1000", "500", "c9", "r9", "60"],
        "INVALID_LIMIT",
        &watched,
    )
    .await;
}

/// A hold of `qty` for `customer`, listed with `expires_at`, its units taken from the shelf.
async fn plant(
    c: &mut MultiplexedConnection,
    k: &Keys,
    id: &str,
    qty: i64,
    customer: &str,
    expires_at: i64,
) {
    let hold = k.hold(id);
    hset(
        c,
        &hold,
        &[
            ("qty", &qty.to_string()),
            ("customer", customer),
            ("request", id),
            ("expires_at", &expires_at.to_string()),
        ],
    )
    .await;
    zadd(c, &k.holds, expires_at, &hold).await;
    redis::cmd("INCRBY")
        .arg(&k.held)
        .arg(qty)
        .query_async::<()>(c)
        .await
        .unwrap();
    redis::cmd("HINCRBY")
        .arg(&k.customers)
        .arg(customer)
        .arg(qty)
        .query_async::<()>(c)
        .await
        .unwrap();
}

#[tokio::test]
async fn confirm_hold_header_is_its_contract() {
    let script = &scripts::CONFIRM_HOLD;
    assert_pinned(
        script,
        &[
            "KEYS[1]  the holds: a sorted set of hold keys, each scored by its expiry (shop ms).",
            "KEYS[2]  the hold's hash.",
            "KEYS[3]  the held counter: units in active holds, a canonical integer (missing means 0).",
            "KEYS[4]  the sold counter: units confirmed in Redis, a canonical integer (missing means 0).",
            "ARGV[1]  now: the shop clock in ms, a canonical integer >= 0.",
            "ARGV[2]  key_ttl: seconds the sold counter may live, a canonical integer >= 1.",
            "Returns  {1, qty}   confirmed: the hold is gone and its units count as sold",
            "         {0, 0}     gone: released, confirmed, or expired and returned already; nothing changed",
            "         {-1, qty}  expired: now >= its expiry; it is left for the reaper, nothing changed",
            "Errors   \"INVALID_TIME ...\"         ARGV[1] or ARGV[2] is missing or not a canonical integer in range",
            "         \"HOLD_CORRUPT ...\"         KEYS[2] is listed in KEYS[1] but holds no canonical qty >= 1",
            "         \"COUNTER_NOT_INTEGER ...\"  KEYS[3] or KEYS[4] is not a canonical integer",
        ],
    );
    let redis = TestRedis::start();
    let c = &mut redis.raw().await;
    let k = Keys::new("confirm");
    let (h1, h2) = (k.hold("h1"), k.hold("h2"));
    let watched = k.all(&["h1", "h2"]);
    let watched: Vec<&str> = watched.iter().map(String::as_str).collect();
    let keys = |h: &str| {
        [
            k.holds.clone(),
            h.to_string(),
            k.held.clone(),
            k.sold.clone(),
        ]
    };
    let k1 = keys(&h1);
    let k1: Vec<&str> = k1.iter().map(String::as_str).collect();
    plant(c, &k, "h1", 2, "c1", 1500).await;
    plant(c, &k, "h2", 1, "c1", 1500).await;
    // Returns {-1, qty}: at its expiry (and after) it is expired; nothing changed.
    for now in ["1500", "1600"] {
        let before = state(c, &watched).await;
        assert_eq!(call(c, script, &k1, &[now, "60"]).await, ints(&[-1, 2]));
        assert_eq!(state(c, &watched).await, before);
    }
    // Returns {1, qty}: before its expiry the hold becomes sold units.
    assert_eq!(call(c, script, &k1, &["1499", "60"]).await, ints(&[1, 2]));
    assert_eq!(zscore(c, &k.holds, &h1).await, None);
    assert_eq!(state(c, &[&h1]).await.concat().matches("none").count(), 1);
    assert_eq!(get(c, &k.held).await.as_deref(), Some("1"));
    assert_eq!(get(c, &k.sold).await.as_deref(), Some("2"));
    let ttl = pttl(c, &k.sold).await;
    assert!(ttl > 0 && ttl <= 60_000);
    // The customer's tally keeps bought units.
    assert_eq!(hget(c, &k.customers, "c1").await.as_deref(), Some("3"));
    // Returns {0, 0}: confirmed twice is confirmed once; a hold never made is gone too.
    let before = state(c, &watched).await;
    assert_eq!(call(c, script, &k1, &["1000", "60"]).await, ints(&[0, 0]));
    let never = keys(&k.hold("nope"));
    let never: Vec<&str> = never.iter().map(String::as_str).collect();
    assert_eq!(
        call(c, script, &never, &["1000", "60"]).await,
        ints(&[0, 0])
    );
    assert_eq!(state(c, &watched).await, before);
    // Errors INVALID_TIME.
    let k2 = keys(&h2);
    let k2: Vec<&str> = k2.iter().map(String::as_str).collect();
    for args in [
        &["-1", "60"][..],
        &["1.5", "60"],
        &["1000", "0"],
        &["1000"],
        &[],
    ] {
        refused(c, script, &k2, args, "INVALID_TIME", &watched).await;
    }
    // Errors HOLD_CORRUPT: listed, with no canonical qty.
    for bad in ["0", "x", "2.5"] {
        hset(c, &h2, &[("qty", bad)]).await;
        refused(c, script, &k2, &["1000", "60"], "HOLD_CORRUPT", &watched).await;
    }
    del(c, &[&h2]).await;
    refused(c, script, &k2, &["1000", "60"], "HOLD_CORRUPT", &watched).await;
    // Errors COUNTER_NOT_INTEGER: held or sold.
    hset(c, &h2, &[("qty", "1")]).await;
    set(c, &k.held, "1.0").await;
    refused(
        c,
        script,
        &k2,
        &["1000", "60"],
        "COUNTER_NOT_INTEGER",
        &watched,
    )
    .await;
    set(c, &k.held, "1").await;
    set(c, &k.sold, "two").await;
    refused(
        c,
        script,
        &k2,
        &["1000", "60"],
        "COUNTER_NOT_INTEGER",
        &watched,
    )
    .await;
}

#[tokio::test]
async fn release_hold_header_is_its_contract() {
    let script = &scripts::RELEASE_HOLD;
    assert_pinned(
        script,
        &[
            "KEYS[1]  the available counter: a canonical integer.",
            "KEYS[2]  the holds: a sorted set of hold keys, each scored by its expiry (shop ms).",
            "KEYS[3]  the held counter: units in active holds, a canonical integer.",
            "KEYS[4]  the customers: a hash of customer -> units held or bought.",
            "KEYS[5]  the hold's hash.",
            "Returns  {1, qty, available_after}  released: qty units are back on the shelf",
            "         {0, 0, available}          gone: nothing changed",
            "Errors   \"HOLD_CORRUPT ...\"         KEYS[5] is listed in KEYS[2] but holds no canonical qty >= 1 and a customer",
            "         \"STOCK_NOT_INTEGER ...\"    KEYS[1] is missing or not a canonical integer",
            "         \"COUNTER_NOT_INTEGER ...\"  KEYS[3], or the customer's entry in KEYS[4], is missing or not a canonical integer",
        ],
    );
    let redis = TestRedis::start();
    let c = &mut redis.raw().await;
    let k = Keys::new("release");
    let (h1, h2) = (k.hold("h1"), k.hold("h2"));
    let watched = k.all(&["h1", "h2"]);
    let watched: Vec<&str> = watched.iter().map(String::as_str).collect();
    let keys = |h: &str| {
        [
            k.stock.clone(),
            k.holds.clone(),
            k.held.clone(),
            k.customers.clone(),
            h.to_string(),
        ]
    };
    let k1 = keys(&h1);
    let k1: Vec<&str> = k1.iter().map(String::as_str).collect();
    set(c, &k.stock, "4").await;
    plant(c, &k, "h1", 2, "c1", 1500).await;
    plant(c, &k, "h2", 1, "c2", 10).await;
    // Returns {1, qty, available_after}: the units are back, the hold and its tally gone.
    assert_eq!(call(c, script, &k1, &[]).await, ints(&[1, 2, 6]));
    assert_eq!(zscore(c, &k.holds, &h1).await, None);
    assert_eq!(get(c, &k.held).await.as_deref(), Some("1"));
    assert_eq!(hget(c, &k.customers, "c1").await.as_deref(), Some("0"));
    assert_eq!(state(c, &[&h1]).await.concat().matches("none").count(), 1);
    // Returns {0, 0, available}: released twice returns the units once.
    let before = state(c, &watched).await;
    assert_eq!(call(c, script, &k1, &[]).await, ints(&[0, 0, 6]));
    assert_eq!(state(c, &watched).await, before);
    // A hold past its expiry that nobody reaped yet is still a hold: released once.
    let k2 = keys(&h2);
    let k2: Vec<&str> = k2.iter().map(String::as_str).collect();
    set(c, &k.stock, "x").await;
    // Errors STOCK_NOT_INTEGER (and missing).
    refused(c, script, &k2, &[], "STOCK_NOT_INTEGER", &watched).await;
    del(c, &[&k.stock]).await;
    refused(c, script, &k2, &[], "STOCK_NOT_INTEGER", &watched).await;
    set(c, &k.stock, "6").await;
    // Errors COUNTER_NOT_INTEGER: held, or the customer's entry (bad or missing).
    set(c, &k.held, "one").await;
    refused(c, script, &k2, &[], "COUNTER_NOT_INTEGER", &watched).await;
    set(c, &k.held, "1").await;
    hset(c, &k.customers, &[("c2", "1.0")]).await;
    refused(c, script, &k2, &[], "COUNTER_NOT_INTEGER", &watched).await;
    redis::cmd("HDEL")
        .arg(&k.customers)
        .arg("c2")
        .query_async::<()>(c)
        .await
        .unwrap();
    refused(c, script, &k2, &[], "COUNTER_NOT_INTEGER", &watched).await;
    hset(c, &k.customers, &[("c2", "1")]).await;
    // Errors HOLD_CORRUPT: no canonical qty, or no customer.
    hset(c, &h2, &[("qty", "0")]).await;
    refused(c, script, &k2, &[], "HOLD_CORRUPT", &watched).await;
    hset(c, &h2, &[("qty", "1")]).await;
    redis::cmd("HDEL")
        .arg(&h2)
        .arg("customer")
        .query_async::<()>(c)
        .await
        .unwrap();
    refused(c, script, &k2, &[], "HOLD_CORRUPT", &watched).await;
    hset(c, &h2, &[("customer", "c2")]).await;
    assert_eq!(call(c, script, &k2, &[]).await, ints(&[1, 1, 7]));
    assert_eq!(get(c, &k.held).await.as_deref(), Some("0"));
}

#[tokio::test]
async fn reap_holds_header_is_its_contract() {
    let script = &scripts::REAP_HOLDS;
    assert_pinned(
        script,
        &[
            "KEYS[1]  the available counter: a canonical integer.",
            "KEYS[2]  the holds: a sorted set of hold keys, each scored by its expiry (shop ms).",
            "KEYS[3]  the held counter: units in active holds, a canonical integer.",
            "KEYS[4]  the customers: a hash of customer -> units held or bought.",
            "ARGV[1]  now: the shop clock in ms, a canonical integer >= 0; a hold with expiry <= now is due.",
            "ARGV[2]  batch: most holds to return in this call, a canonical integer from 1 to 1000.",
            "Returns  {holds_returned, units_returned, still_due, holds_left}  still_due: due holds left for the next call",
            "Errors   \"INVALID_TIME ...\"         ARGV[1] is missing or not a canonical integer >= 0",
            "         \"INVALID_BATCH ...\"        ARGV[2] is missing or not a canonical integer from 1 to 1000",
            "         \"HOLD_CORRUPT ...\"         a due hold holds no canonical qty >= 1 and a customer",
            "         \"STOCK_NOT_INTEGER ...\"    KEYS[1] is missing or not a canonical integer, with holds due",
            "         \"COUNTER_NOT_INTEGER ...\"  KEYS[3], or a due hold's customer entry in KEYS[4], is not a canonical integer",
        ],
    );
    let redis = TestRedis::start();
    let c = &mut redis.raw().await;
    let k = Keys::new("reap");
    let keys = [k.stock.as_str(), &k.holds, &k.held, &k.customers];
    let ids = ["a", "b", "c", "d", "late"];
    let watched = k.all(&ids);
    let watched: Vec<&str> = watched.iter().map(String::as_str).collect();
    set(c, &k.stock, "0").await;
    plant(c, &k, "a", 1, "c1", 100).await;
    plant(c, &k, "b", 2, "c1", 200).await;
    plant(c, &k, "c", 3, "c2", 300).await;
    plant(c, &k, "d", 1, "c2", 300).await;
    plant(c, &k, "late", 5, "c3", 10_000).await;
    // Returns {holds_returned, units_returned, still_due, holds_left}: oldest first, at
    // most `batch`; a hold at exactly `now` is due.
    assert_eq!(
        call(c, script, &keys, &["300", "2"]).await,
        ints(&[2, 3, 2, 3])
    );
    assert_eq!(zscore(c, &k.holds, &k.hold("a")).await, None);
    assert_eq!(zscore(c, &k.holds, &k.hold("b")).await, None);
    assert_eq!(get(c, &k.stock).await.as_deref(), Some("3"));
    assert_eq!(get(c, &k.held).await.as_deref(), Some("9"));
    assert_eq!(hget(c, &k.customers, "c1").await.as_deref(), Some("0"));
    assert_eq!(
        call(c, script, &keys, &["300", "2"]).await,
        ints(&[2, 4, 0, 1])
    );
    assert_eq!(hget(c, &k.customers, "c2").await.as_deref(), Some("0"));
    // Nothing due: nothing changes, and the holds left are counted.
    let before = state(c, &watched).await;
    assert_eq!(
        call(c, script, &keys, &["9999", "1000"]).await,
        ints(&[0, 0, 0, 1])
    );
    assert_eq!(state(c, &watched).await, before);
    assert_eq!(get(c, &k.stock).await.as_deref(), Some("7"));
    // Errors INVALID_TIME, INVALID_BATCH.
    for args in [&["-1", "10"][..], &["x", "10"], &[]] {
        refused(c, script, &keys, args, "INVALID_TIME", &watched).await;
    }
    for args in [&["10", "0"][..], &["10", "1001"], &["10", "x"], &["10"]] {
        refused(c, script, &keys, args, "INVALID_BATCH", &watched).await;
    }
    // Errors HOLD_CORRUPT: a due hold without a qty or a customer, even beside good ones:
    // the good ones are not returned either.
    plant(c, &k, "a", 1, "c1", 100).await;
    zadd(c, &k.holds, 150, &k.hold("ghost")).await;
    let watched = k.all(&["a", "ghost", "late"]);
    let watched: Vec<&str> = watched.iter().map(String::as_str).collect();
    refused(c, script, &keys, &["20000", "10"], "HOLD_CORRUPT", &watched).await;
    hset(c, &k.hold("ghost"), &[("qty", "1")]).await;
    refused(c, script, &keys, &["20000", "10"], "HOLD_CORRUPT", &watched).await;
    redis::cmd("ZREM")
        .arg(&k.holds)
        .arg(k.hold("ghost"))
        .query_async::<()>(c)
        .await
        .unwrap();
    // Errors STOCK_NOT_INTEGER, with holds due; with none due there is nothing to check.
    set(c, &k.stock, "7.0").await;
    refused(
        c,
        script,
        &keys,
        &["20000", "10"],
        "STOCK_NOT_INTEGER",
        &watched,
    )
    .await;
    assert_eq!(
        call(c, script, &keys, &["10", "10"]).await,
        ints(&[0, 0, 0, 2])
    );
    set(c, &k.stock, "7").await;
    // Errors COUNTER_NOT_INTEGER: held, or a due hold's customer entry.
    set(c, &k.held, "lots").await;
    refused(
        c,
        script,
        &keys,
        &["20000", "10"],
        "COUNTER_NOT_INTEGER",
        &watched,
    )
    .await;
    set(c, &k.held, "6").await;
    hset(c, &k.customers, &[("c3", "5.0")]).await;
    refused(
        c,
        script,
        &keys,
        &["20000", "10"],
        "COUNTER_NOT_INTEGER",
        &watched,
    )
    .await;
    hset(c, &k.customers, &[("c3", "5")]).await;
    assert_eq!(
        call(c, script, &keys, &["20000", "10"]).await,
        ints(&[2, 6, 0, 0])
    );
    assert_eq!(get(c, &k.stock).await.as_deref(), Some("13"));
    assert_eq!(get(c, &k.held).await.as_deref(), Some("0"));
}

#[tokio::test]
async fn reconcile_header_is_its_contract() {
    let script = &scripts::RECONCILE;
    assert_pinned(
        script,
        &[
            "KEYS[1]  the available counter: a canonical integer; must exist.",
            "KEYS[2]  the held counter: units in active holds, a canonical integer (missing means 0).",
            "KEYS[3]  the sold counter: units confirmed in Redis, a canonical integer (missing means 0).",
            "ARGV[1]  stock: units on the shelf before the run, a canonical integer >= 0.",
            "ARGV[2]  ledger: units in the ledger's confirmed rows, a canonical integer >= 0.",
            "Returns  {available_before, available_after, sold, held}  the counter now reads available_after",
            "Errors   \"INVALID_COUNT ...\"        ARGV[1] or ARGV[2] is missing or not a canonical integer >= 0",
            "         \"STOCK_MISSING ...\"        KEYS[1] does not exist: there is no run to reconcile",
            "         \"STOCK_NOT_INTEGER ...\"    KEYS[1] holds something other than a canonical integer",
            "         \"COUNTER_NOT_INTEGER ...\"  KEYS[2] or KEYS[3] is not a canonical integer",
        ],
    );
    let redis = TestRedis::start();
    let c = &mut redis.raw().await;
    let k = Keys::new("reconcile");
    let keys = [k.stock.as_str(), &k.held, &k.sold];
    let watched = [k.stock.as_str(), &k.held, &k.sold];
    // Returns {before, after, sold, held}: stock 10, 3 held, 2 sold, 1 available: 4 leaked
    // units go back, and the counter keeps its TTL.
    redis::cmd("SET")
        .arg(&k.stock)
        .arg("1")
        .arg("EX")
        .arg(60)
        .query_async::<()>(c)
        .await
        .unwrap();
    set(c, &k.held, "3").await;
    set(c, &k.sold, "2").await;
    assert_eq!(
        call(c, script, &keys, &["10", "2"]).await,
        ints(&[1, 5, 2, 3])
    );
    assert_eq!(get(c, &k.stock).await.as_deref(), Some("5"));
    let ttl = pttl(c, &k.stock).await;
    assert!(ttl > 0 && ttl <= 60_000, "{ttl}");
    // Sold is the larger of the ledger's count and Redis's own.
    assert_eq!(
        call(c, script, &keys, &["10", "4"]).await,
        ints(&[5, 3, 4, 3])
    );
    assert_eq!(
        call(c, script, &keys, &["10", "0"]).await,
        ints(&[3, 5, 2, 3])
    );
    // KEYS[2], KEYS[3]: missing means 0.
    del(c, &[&k.held, &k.sold]).await;
    assert_eq!(
        call(c, script, &keys, &["10", "0"]).await,
        ints(&[5, 10, 0, 0])
    );
    // An oversold counter is put right too (down, here).
    set(c, &k.stock, "-3").await;
    set(c, &k.sold, "10").await;
    assert_eq!(
        call(c, script, &keys, &["10", "12"]).await,
        ints(&[-3, -2, 12, 0])
    );
    // Errors INVALID_COUNT.
    for args in [&["-1", "0"][..], &["10", "x"], &["10"], &[]] {
        refused(c, script, &keys, args, "INVALID_COUNT", &watched).await;
    }
    // Errors STOCK_NOT_INTEGER, STOCK_MISSING.
    for bad in BAD_STOCK {
        set(c, &k.stock, bad).await;
        refused(
            c,
            script,
            &keys,
            &["10", "0"],
            "STOCK_NOT_INTEGER",
            &watched,
        )
        .await;
    }
    del(c, &[&k.stock]).await;
    refused(c, script, &keys, &["10", "0"], "STOCK_MISSING", &watched).await;
    // Errors COUNTER_NOT_INTEGER.
    set(c, &k.stock, "1").await;
    set(c, &k.held, "2.0").await;
    refused(
        c,
        script,
        &keys,
        &["10", "0"],
        "COUNTER_NOT_INTEGER",
        &watched,
    )
    .await;
    set(c, &k.held, "2").await;
    set(c, &k.sold, "x").await;
    refused(
        c,
        script,
        &keys,
        &["10", "0"],
        "COUNTER_NOT_INTEGER",
        &watched,
    )
    .await;
}

#[tokio::test]
async fn ledger_record_header_is_its_contract() {
    let script = &scripts::LEDGER_RECORD;
    assert_pinned(
        script,
        &[
            "KEYS[1]  the ledger: a hash of order id -> \"state customer qty\".",
            "KEYS[2]  the totals: a hash of state -> units, and \"orders:\" .. state -> rows.",
            "ARGV[1]  order: the order's request id (non-empty).",
            "ARGV[2]  customer: who ordered (non-empty, no spaces).",
            "ARGV[3]  qty: units, a canonical integer >= 1.",
            "ARGV[4]  state: \"confirmed\" or \"backorder\".",
            "ARGV[5]  key_ttl: seconds either key may live, a canonical integer >= 1.",
            "Returns  {1, units_in_state}  recorded: a new row",
            "         {0, units_in_state}  already recorded under this order id: nothing changed",
            "Errors   \"INVALID_ID ...\"     ARGV[1] or ARGV[2] is missing or empty, or ARGV[2] has a space",
            "         \"INVALID_QTY ...\"    ARGV[3] is missing or not a canonical integer >= 1",
            "         \"INVALID_STATE ...\"  ARGV[4] is neither \"confirmed\" nor \"backorder\"",
            "         \"INVALID_TIME ...\"   ARGV[5] is missing or not a canonical integer >= 1",
        ],
    );
    let redis = TestRedis::start();
    let c = &mut redis.raw().await;
    let k = Keys::new("ledger");
    let keys = [k.ledger.as_str(), &k.totals];
    let watched = [k.ledger.as_str(), &k.totals];
    // Returns {1, units_in_state}: a new row, and the state's totals.
    assert_eq!(
        call(c, script, &keys, &["r1", "7", "2", "confirmed", "60"]).await,
        ints(&[1, 2])
    );
    assert_eq!(
        call(c, script, &keys, &["r2", "7", "3", "confirmed", "60"]).await,
        ints(&[1, 5])
    );
    assert_eq!(
        call(c, script, &keys, &["r3", "8", "1", "backorder", "60"]).await,
        ints(&[1, 1])
    );
    assert_eq!(
        hget(c, &k.ledger, "r1").await.as_deref(),
        Some("confirmed 7 2")
    );
    assert_eq!(
        hget(c, &k.totals, "orders:confirmed").await.as_deref(),
        Some("2")
    );
    assert_eq!(hget(c, &k.totals, "backorder").await.as_deref(), Some("1"));
    for key in keys {
        let ttl = pttl(c, key).await;
        assert!(ttl > 0 && ttl <= 60_000);
    }
    // Returns {0, units_in_state}: the same order id again, whatever it says, is one row.
    let before = state(c, &watched).await;
    assert_eq!(
        call(c, script, &keys, &["r1", "7", "2", "confirmed", "60"]).await,
        ints(&[0, 5])
    );
    assert_eq!(
        call(c, script, &keys, &["r1", "9", "4", "backorder", "60"]).await,
        ints(&[0, 1])
    );
    assert_eq!(state(c, &watched).await, before);
    // Errors.
    for (args, code) in [
        (&["", "7", "1", "confirmed", "60"][..], "INVALID_ID"),
        (&["r9", "", "1", "confirmed", "60"], "INVALID_ID"),
        (&["r9", "7 8", "1", "confirmed", "60"], "INVALID_ID"),
        (&[], "INVALID_ID"),
        (&["r9", "7"], "INVALID_QTY"),
        (&["r9", "7", "0", "confirmed", "60"], "INVALID_QTY"),
        (&["r9", "7", "1.5", "confirmed", "60"], "INVALID_QTY"),
        (&["r9", "7", "1", "sold", "60"], "INVALID_STATE"),
        (&["r9", "7", "1"], "INVALID_STATE"),
        (&["r9", "7", "1", "confirmed", "0"], "INVALID_TIME"),
        (&["r9", "7", "1", "confirmed"], "INVALID_TIME"),
    ] {
        refused(c, script, &keys, args, code, &watched).await;
    }
}
