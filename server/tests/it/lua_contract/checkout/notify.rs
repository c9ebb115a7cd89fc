//! `holds_notify`'s scripts, each header line proved against a real Redis: a hold that is a
//! key with a TTL plus a shadow hash, confirmed or released once from the shadow. The
//! reserve proof also shows the mechanism the strategy leans on: the key's TTL runs out and
//! Redis publishes its name on `__keyevent@0__:expired` (on the test's own server, where
//! `notify-keyspace-events` may be set).

use std::time::Duration;

use futures_util::StreamExt;
use redis::aio::MultiplexedConnection;

use super::super::{BAD_QTY, BAD_STOCK, assert_pinned, del, get, pttl, set};
use super::{Keys, call, hget, hset, ints, refused, state};
use crate::common::TestRedis;
use oversold::store::scripts;

/// The shadows set of `k`'s run.
fn shadows(k: &Keys) -> String {
    format!("{}:shadows", k.tag)
}

/// The shadow hash of hold `id`.
fn shadow(k: &Keys, id: &str) -> String {
    format!("{}:shadow:{id}", k.tag)
}

/// Every key one of these scripts may touch, for holds `ids`: what "nothing changed" watches.
fn watched(k: &Keys, ids: &[&str]) -> Vec<String> {
    let mut all = vec![
        k.stock.clone(),
        shadows(k),
        k.held.clone(),
        k.customers.clone(),
        k.sold.clone(),
    ];
    for id in ids {
        all.extend([k.hold(id), shadow(k, id)]);
    }
    all
}

async fn is_member(c: &mut MultiplexedConnection, set: &str, member: &str) -> bool {
    redis::cmd("SISMEMBER")
        .arg(set)
        .arg(member)
        .query_async(c)
        .await
        .unwrap()
}

async fn exists(c: &mut MultiplexedConnection, key: &str) -> bool {
    redis::cmd("EXISTS").arg(key).query_async(c).await.unwrap()
}

/// A hold of `qty` for customer `c1` due at shop ms 1500, its key alive for a minute, its
/// units taken from the shelf: what `reserve_hold_ttl.lua` leaves behind.
async fn plant(c: &mut MultiplexedConnection, k: &Keys, id: &str, qty: i64) {
    let hold = k.hold(id);
    redis::cmd("SET")
        .arg(&hold)
        .arg(qty)
        .arg("PX")
        .arg(60_000)
        .query_async::<()>(c)
        .await
        .unwrap();
    let q = qty.to_string();
    let pairs = [
        ("qty", q.as_str()),
        ("customer", "c1"),
        ("request", id),
        ("expires_at", "1500"),
    ];
    hset(c, &shadow(k, id), &pairs).await;
    for cmd in [
        redis::cmd("SADD").arg(shadows(k)).arg(&hold).to_owned(),
        redis::cmd("INCRBY").arg(&k.held).arg(qty).to_owned(),
        redis::cmd("HINCRBY")
            .arg(&k.customers)
            .arg("c1")
            .arg(qty)
            .to_owned(),
    ] {
        cmd.query_async::<()>(c).await.unwrap();
    }
}

#[tokio::test]
async fn reserve_hold_ttl_header_is_its_contract() {
    let script = &scripts::RESERVE_HOLD_TTL;
    assert_pinned(
        script,
        &[
            "KEYS[1]  the available counter: a canonical integer. A missing key means 0 available.",
            "KEYS[2]  the shadows: a set of the hold keys whose units are not settled yet.",
            "KEYS[3]  the held counter: units in unsettled holds, a canonical integer (missing means 0).",
            "KEYS[4]  the customers: a hash of customer -> units held or bought (missing means 0).",
            "KEYS[5]  the new hold's key: must not exist yet; written with a TTL of `px` ms.",
            "KEYS[6]  the new hold's shadow hash: must not exist yet.",
            "ARGV[1]  qty: units wanted, a canonical integer >= 1.",
            "ARGV[2]  now: the shop clock in ms, a canonical integer >= 0.",
            "ARGV[3]  ttl: how long the hold lasts in shop ms, a canonical integer >= 1.",
            "ARGV[4]  customer: who orders (non-empty).",
            "ARGV[5]  request: the order's request id (non-empty).",
            "ARGV[6]  key_ttl: seconds the shadow and the counters may live, a canonical integer >= 1.",
            "ARGV[7]  px: the hold's life in real ms, a canonical integer >= 1.",
            "Returns  {1, available_after, expires_at, customer_units}  held: qty units are the customer's until expires_at",
            "         {0, available, 0, customer_units}                 sold out: too few units, nothing changed",
            "Errors   \"INVALID_QTY ...\"          ARGV[1] is missing or not a canonical integer >= 1",
            "         \"INVALID_TIME ...\"         ARGV[2], ARGV[3], ARGV[6] or ARGV[7] is missing or not a canonical integer in range",
            "         \"INVALID_ID ...\"           ARGV[4] or ARGV[5] is missing or empty",
            "         \"HOLD_EXISTS ...\"          KEYS[5] or KEYS[6] already exists: a hold is never overwritten",
            "         \"STOCK_NOT_INTEGER ...\"    KEYS[1] holds something other than a canonical integer",
            "         \"COUNTER_NOT_INTEGER ...\"  KEYS[3], or the customer's entry in KEYS[4], is not a canonical integer",
        ],
    );
    let redis = TestRedis::start();
    let c = &mut redis.raw().await;
    let k = Keys::new("reserve-ttl");
    let all = watched(&k, &["h1", "h2"]);
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let keys_for = |id: &str| {
        let (sh, s2) = (shadows(&k), shadow(&k, id));
        [
            k.stock.clone(),
            sh,
            k.held.clone(),
            k.customers.clone(),
            k.hold(id),
            s2,
        ]
    };
    let (k1, k2) = (keys_for("h1"), keys_for("h2"));
    let k1: Vec<&str> = k1.iter().map(String::as_str).collect();
    let k2: Vec<&str> = k2.iter().map(String::as_str).collect();
    let args =
        |qty: &'static str, req: &'static str| [qty, "1000", "500", "c1", req, "60", "60000"];
    // KEYS[1] A missing key means 0 available: sold out, and no hold is made.
    assert_eq!(
        call(c, script, &k1, &args("1", "ra")).await,
        ints(&[0, 0, 0, 0])
    );
    assert!(!exists(c, &k.hold("h1")).await && !exists(c, &shadow(&k, "h1")).await);
    // Returns {1, available_after, expires_at, customer_units}: held until now + ttl.
    set(c, &k.stock, "5").await;
    assert_eq!(
        call(c, script, &k1, &args("2", "rb")).await,
        ints(&[1, 3, 1500, 2])
    );
    // KEYS[5] the hold is a key living px ms; KEYS[6] its shadow has the units, customer,
    // request and expiry; KEYS[2..4] list it and count its units.
    assert_eq!(get(c, &k.hold("h1")).await.as_deref(), Some("2"));
    let ttl = pttl(c, &k.hold("h1")).await;
    assert!(ttl > 0 && ttl <= 60_000, "the hold key lives px ms: {ttl}");
    let s1 = shadow(&k, "h1");
    for (field, value) in [
        ("qty", "2"),
        ("customer", "c1"),
        ("request", "rb"),
        ("expires_at", "1500"),
    ] {
        assert_eq!(hget(c, &s1, field).await.as_deref(), Some(value), "{field}");
    }
    assert!(is_member(c, &shadows(&k), &k.hold("h1")).await);
    assert_eq!(get(c, &k.held).await.as_deref(), Some("2"));
    assert_eq!(hget(c, &k.customers, "c1").await.as_deref(), Some("2"));
    // ARGV[6] key_ttl: the shadow and the counters live at most that long.
    for key in [&s1, &shadows(&k), &k.held, &k.customers] {
        let ttl = pttl(c, key).await;
        assert!(ttl > 0 && ttl <= 60_000, "{key}: {ttl}");
    }
    // Returns {0, available, 0, customer_units}: too few units; nothing changed.
    let before = state(c, &all).await;
    assert_eq!(
        call(c, script, &k2, &args("4", "rc")).await,
        ints(&[0, 3, 0, 2])
    );
    assert_eq!(state(c, &all).await, before);
    // Errors INVALID_QTY, INVALID_TIME, INVALID_ID: nothing changed.
    for qty in BAD_QTY {
        let a = [qty, "1000", "500", "c1", "rd", "60", "60000"];
        refused(c, script, &k2, &a, "INVALID_QTY", &all).await;
    }
    refused(c, script, &k2, &[], "INVALID_QTY", &all).await;
    for (now, ttl, key_ttl, px) in [
        ("-1", "500", "60", "100"),
        ("1000", "0", "60", "100"),
        ("1000", "500", "0", "100"),
        ("1000", "500", "60", "0"),
        ("1000", "500", "60", "1.5"),
    ] {
        let a = ["1", now, ttl, "c1", "rd", key_ttl, px];
        refused(c, script, &k2, &a, "INVALID_TIME", &all).await;
    }
    let no_px = ["1", "1000", "500", "c1", "rd", "60"];
    refused(c, script, &k2, &no_px, "INVALID_TIME", &all).await;
    for (customer, request) in [("", "rd"), ("c1", "")] {
        let a = ["1", "1000", "500", customer, request, "60", "100"];
        refused(c, script, &k2, &a, "INVALID_ID", &all).await;
    }
    // Errors HOLD_EXISTS: the key, or only its shadow, is there already.
    refused(c, script, &k1, &args("1", "re"), "HOLD_EXISTS", &all).await;
    del(c, &[&k.hold("h1")]).await;
    refused(c, script, &k1, &args("1", "re"), "HOLD_EXISTS", &all).await;
    // Errors STOCK_NOT_INTEGER, COUNTER_NOT_INTEGER: nothing changed.
    for bad in BAD_STOCK {
        set(c, &k.stock, bad).await;
        refused(c, script, &k2, &args("1", "rf"), "STOCK_NOT_INTEGER", &all).await;
    }
    set(c, &k.stock, "3").await;
    set(c, &k.held, "2.0").await;
    refused(
        c,
        script,
        &k2,
        &args("1", "rg"),
        "COUNTER_NOT_INTEGER",
        &all,
    )
    .await;
    set(c, &k.held, "2").await;
    hset(c, &k.customers, &[("c1", "x")]).await;
    refused(
        c,
        script,
        &k2,
        &args("1", "rh"),
        "COUNTER_NOT_INTEGER",
        &all,
    )
    .await;
    // ARGV[7] px: the key dies px ms on, and Redis publishes its name as an `expired` event.
    hset(c, &k.customers, &[("c1", "2")]).await;
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("notify-keyspace-events")
        .arg("Ex")
        .query_async(c)
        .await
        .unwrap();
    let client = redis::Client::open(redis.server.url()).unwrap();
    let mut events = client.get_async_pubsub().await.unwrap();
    events.subscribe("__keyevent@0__:expired").await.unwrap();
    let short = ["1", "1000", "500", "c1", "ri", "60", "30"];
    assert_eq!(call(c, script, &k2, &short).await, ints(&[1, 2, 1500, 3]));
    let mut heard = events.on_message();
    let name = tokio::time::timeout(Duration::from_secs(5), heard.next())
        .await
        .expect("an expired event within 5 s")
        .unwrap();
    assert_eq!(name.get_payload::<String>().unwrap(), k.hold("h2"));
    // The shadow outlives it: the units are still written down.
    assert_eq!(
        hget(c, &shadow(&k, "h2"), "qty").await.as_deref(),
        Some("1")
    );
}

#[tokio::test]
async fn confirm_hold_ttl_header_is_its_contract() {
    let script = &scripts::CONFIRM_HOLD_TTL;
    assert_pinned(
        script,
        &[
            "KEYS[1]  the shadows: a set of the hold keys whose units are not settled yet.",
            "KEYS[2]  the hold's key (with its TTL).",
            "KEYS[3]  the hold's shadow hash.",
            "KEYS[4]  the held counter: units in unsettled holds, a canonical integer (missing means 0).",
            "KEYS[5]  the sold counter: units confirmed in Redis, a canonical integer (missing means 0).",
            "ARGV[1]  now: the shop clock in ms, a canonical integer >= 0.",
            "ARGV[2]  key_ttl: seconds the sold counter may live, a canonical integer >= 1.",
            "Returns  {1, qty}   confirmed: the hold is gone and its units count as sold",
            "         {0, 0}     gone: its shadow is gone (settled already); nothing changed",
            "         {-1, qty}  expired: its key is gone or now >= its expiry; left for the listener, nothing changed",
            "Errors   \"INVALID_TIME ...\"         ARGV[1] or ARGV[2] is missing or not a canonical integer in range",
            "         \"HOLD_CORRUPT ...\"         KEYS[3] exists but holds no canonical qty >= 1 and expires_at",
            "         \"COUNTER_NOT_INTEGER ...\"  KEYS[4] or KEYS[5] is not a canonical integer",
        ],
    );
    let redis = TestRedis::start();
    let c = &mut redis.raw().await;
    let k = Keys::new("confirm-ttl");
    let all = watched(&k, &["h1", "h2", "h3"]);
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let keys_for = |id: &str| {
        let (sh, s) = (shadows(&k), shadow(&k, id));
        [sh, k.hold(id), s, k.held.clone(), k.sold.clone()]
    };
    let (k1, k2, k3) = (keys_for("h1"), keys_for("h2"), keys_for("h3"));
    let k1: Vec<&str> = k1.iter().map(String::as_str).collect();
    let k2: Vec<&str> = k2.iter().map(String::as_str).collect();
    let k3: Vec<&str> = k3.iter().map(String::as_str).collect();
    plant(c, &k, "h1", 2).await;
    plant(c, &k, "h2", 1).await;
    // Returns {-1, qty}: at its expiry (and after) it is left for the listener; nothing changed.
    for now in ["1500", "1600"] {
        let before = state(c, &all).await;
        assert_eq!(call(c, script, &k1, &[now, "60"]).await, ints(&[-1, 2]));
        assert_eq!(state(c, &all).await, before);
    }
    // ...and so it is when its key is gone, whatever the shop clock says.
    del(c, &[&k.hold("h2")]).await;
    let before = state(c, &all).await;
    assert_eq!(call(c, script, &k2, &["1000", "60"]).await, ints(&[-1, 1]));
    assert_eq!(state(c, &all).await, before);
    // Returns {1, qty}: the key and the shadow are gone, the units count as sold.
    assert_eq!(call(c, script, &k1, &["1499", "60"]).await, ints(&[1, 2]));
    assert!(!exists(c, &k.hold("h1")).await && !exists(c, &shadow(&k, "h1")).await);
    assert!(!is_member(c, &shadows(&k), &k.hold("h1")).await);
    assert_eq!(get(c, &k.held).await.as_deref(), Some("1"));
    assert_eq!(get(c, &k.sold).await.as_deref(), Some("2"));
    let ttl = pttl(c, &k.sold).await;
    assert!(ttl > 0 && ttl <= 60_000, "{ttl}");
    // Returns {0, 0}: confirmed twice is confirmed once; a hold never made is gone too.
    let before = state(c, &all).await;
    assert_eq!(call(c, script, &k1, &["1000", "60"]).await, ints(&[0, 0]));
    assert_eq!(call(c, script, &k3, &["1000", "60"]).await, ints(&[0, 0]));
    assert_eq!(state(c, &all).await, before);
    // Errors INVALID_TIME.
    for args in [
        &["-1", "60"][..],
        &["1.5", "60"],
        &["1000", "0"],
        &["1000"],
        &[],
    ] {
        refused(c, script, &k2, args, "INVALID_TIME", &all).await;
    }
    // Errors HOLD_CORRUPT: a shadow with no canonical qty, or no expiry.
    plant(c, &k, "h3", 1).await;
    let s3 = shadow(&k, "h3");
    for bad in ["0", "x", "2.5"] {
        hset(c, &s3, &[("qty", bad)]).await;
        refused(c, script, &k3, &["1000", "60"], "HOLD_CORRUPT", &all).await;
    }
    hset(c, &s3, &[("qty", "1")]).await;
    let _: () = redis::cmd("HDEL")
        .arg(&s3)
        .arg("expires_at")
        .query_async(c)
        .await
        .unwrap();
    refused(c, script, &k3, &["1000", "60"], "HOLD_CORRUPT", &all).await;
    hset(c, &s3, &[("expires_at", "1500")]).await;
    // Errors COUNTER_NOT_INTEGER: held or sold.
    set(c, &k.held, "1.0").await;
    refused(c, script, &k3, &["1000", "60"], "COUNTER_NOT_INTEGER", &all).await;
    set(c, &k.held, "2").await;
    set(c, &k.sold, "two").await;
    refused(c, script, &k3, &["1000", "60"], "COUNTER_NOT_INTEGER", &all).await;
}

#[tokio::test]
async fn release_hold_ttl_header_is_its_contract() {
    let script = &scripts::RELEASE_HOLD_TTL;
    assert_pinned(
        script,
        &[
            "KEYS[1]  the available counter: a canonical integer.",
            "KEYS[2]  the shadows: a set of the hold keys whose units are not settled yet.",
            "KEYS[3]  the held counter: units in unsettled holds, a canonical integer.",
            "KEYS[4]  the customers: a hash of customer -> units held or bought.",
            "KEYS[5]  the hold's key (with its TTL, or already expired).",
            "KEYS[6]  the hold's shadow hash.",
            "Returns  {1, qty, available_after, expires_at}  released: qty units are back; the hold was due at expires_at",
            "         {0, 0, available, 0}                   gone: settled already, nothing changed",
            "Errors   \"HOLD_CORRUPT ...\"         KEYS[6] exists but holds no canonical qty >= 1, customer and expires_at",
            "         \"STOCK_NOT_INTEGER ...\"    KEYS[1] is missing or not a canonical integer",
            "         \"COUNTER_NOT_INTEGER ...\"  KEYS[3], or the customer's entry in KEYS[4], is missing or not a canonical integer",
        ],
    );
    let redis = TestRedis::start();
    let c = &mut redis.raw().await;
    let k = Keys::new("release-ttl");
    let all = watched(&k, &["h1", "h2", "h3"]);
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let keys_for = |id: &str| {
        let (sh, s) = (shadows(&k), shadow(&k, id));
        [
            k.stock.clone(),
            sh,
            k.held.clone(),
            k.customers.clone(),
            k.hold(id),
            s,
        ]
    };
    let (k1, k2, k3) = (keys_for("h1"), keys_for("h2"), keys_for("h3"));
    let k1: Vec<&str> = k1.iter().map(String::as_str).collect();
    let k2: Vec<&str> = k2.iter().map(String::as_str).collect();
    let k3: Vec<&str> = k3.iter().map(String::as_str).collect();
    set(c, &k.stock, "4").await;
    plant(c, &k, "h1", 2).await;
    plant(c, &k, "h2", 1).await;
    // Returns {1, qty, available_after, expires_at}: the app's release, the key still alive.
    assert_eq!(call(c, script, &k1, &[]).await, ints(&[1, 2, 6, 1500]));
    assert!(!exists(c, &k.hold("h1")).await && !exists(c, &shadow(&k, "h1")).await);
    assert!(!is_member(c, &shadows(&k), &k.hold("h1")).await);
    assert_eq!(get(c, &k.held).await.as_deref(), Some("1"));
    assert_eq!(hget(c, &k.customers, "c1").await.as_deref(), Some("1"));
    // ...and the listener's, the key already expired: only the shadow remembers the units.
    del(c, &[&k.hold("h2")]).await;
    assert_eq!(call(c, script, &k2, &[]).await, ints(&[1, 1, 7, 1500]));
    assert_eq!(get(c, &k.held).await.as_deref(), Some("0"));
    // Returns {0, 0, available, 0}: released twice is released once.
    let before = state(c, &all).await;
    assert_eq!(call(c, script, &k2, &[]).await, ints(&[0, 0, 7, 0]));
    assert_eq!(call(c, script, &k3, &[]).await, ints(&[0, 0, 7, 0]));
    assert_eq!(state(c, &all).await, before);
    // Errors HOLD_CORRUPT: no canonical qty, no customer, or no expiry in the shadow.
    plant(c, &k, "h3", 1).await;
    let s3 = shadow(&k, "h3");
    for (field, bad) in [("qty", "0"), ("qty", "x"), ("expires_at", "soon")] {
        hset(c, &s3, &[(field, bad)]).await;
        refused(c, script, &k3, &[], "HOLD_CORRUPT", &all).await;
        hset(c, &s3, &[("qty", "1"), ("expires_at", "1500")]).await;
    }
    let _: () = redis::cmd("HDEL")
        .arg(&s3)
        .arg("customer")
        .query_async(c)
        .await
        .unwrap();
    refused(c, script, &k3, &[], "HOLD_CORRUPT", &all).await;
    hset(c, &s3, &[("customer", "c1")]).await;
    // Errors STOCK_NOT_INTEGER: missing or not canonical.
    for bad in BAD_STOCK {
        set(c, &k.stock, bad).await;
        refused(c, script, &k3, &[], "STOCK_NOT_INTEGER", &all).await;
    }
    del(c, &[&k.stock]).await;
    refused(c, script, &k3, &[], "STOCK_NOT_INTEGER", &all).await;
    set(c, &k.stock, "7").await;
    // Errors COUNTER_NOT_INTEGER: the held counter missing or not canonical; the customer's
    // entry missing.
    set(c, &k.held, "1.0").await;
    refused(c, script, &k3, &[], "COUNTER_NOT_INTEGER", &all).await;
    del(c, &[&k.held]).await;
    refused(c, script, &k3, &[], "COUNTER_NOT_INTEGER", &all).await;
    set(c, &k.held, "1").await;
    let _: () = redis::cmd("HDEL")
        .arg(&k.customers)
        .arg("c1")
        .query_async(c)
        .await
        .unwrap();
    refused(c, script, &k3, &[], "COUNTER_NOT_INTEGER", &all).await;
}
