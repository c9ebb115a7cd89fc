//! Each Lua file's header is its contract; this pins it line by line against a real Redis.
//!
//! For every script, the header lines that state the contract (`KEYS`, `ARGV`, each
//! `Returns` shape, each `Errors` entry, and for the library its name and function) are
//! listed here verbatim, each with the calls that prove it. Change a line in a file, add
//! one, or drop one, and the listing no longer matches: the test fails until the proof is
//! updated with it.
//!
//! The checkout scenario's scripts (holds, the reaper, reconciliation, the Redis ledger)
//! are proved in [`checkout`]; the cart and warehouse scripts in [`cart`]; that the helper
//! every script carries its own copy of is the same in every file, in [`copies`]; the rooms'
//! budget script in [`rooms`]; the eviction scenario's `reserve_strict.lua` in [`eviction`].

use std::collections::BTreeSet;

mod busy;
mod cart;
mod checkout;
mod copies;
mod eviction;
mod rooms;

use crate::common::TestRedis;
use oversold::store::scripts::{self, LuaFile};
use redis::Value;
use redis::aio::MultiplexedConnection;

/// The header lines of `file` that state its contract. (`KEYS ` without an index is a
/// script that takes no key, like `slow_script.lua`: that is its contract too.)
pub(super) fn contract_lines(file: &LuaFile) -> BTreeSet<String> {
    const STARTS: [&str; 7] = [
        "KEYS[", "KEYS ", "ARGV[", "Returns", "Errors", "Library", "Function",
    ];
    file.source
        .lines()
        .filter_map(|l| l.strip_prefix("-- "))
        .filter(|l| STARTS.iter().any(|s| l.starts_with(s)) || l.starts_with("         "))
        .map(|l| l.trim_end().to_string())
        .collect()
}

pub(super) fn assert_pinned(file: &LuaFile, pinned: &[&str]) {
    let pinned: BTreeSet<String> = pinned.iter().map(|l| l.to_string()).collect();
    let found = contract_lines(file);
    assert_eq!(
        found, pinned,
        "{}: the header's contract lines changed; update their proofs in lua_contract.rs",
        file.file
    );
}

/// What a script call answered: the reply, or the error's first word and its text.
#[derive(Debug, PartialEq)]
pub(super) enum Answer {
    Reply(Vec<i64>),
    Int(i64),
    Nil,
    Error(String, String),
}

pub(super) async fn eval(
    c: &mut MultiplexedConnection,
    body: &str,
    keys: &[&str],
    args: &[&str],
) -> Answer {
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(body).arg(keys.len()).arg(keys).arg(args);
    answer(cmd.query_async::<Value>(c).await)
}

async fn fcall(c: &mut MultiplexedConnection, keys: &[&str], args: &[&str]) -> Answer {
    let mut cmd = redis::cmd("FCALL");
    cmd.arg("oversold_v2_reserve")
        .arg(keys.len())
        .arg(keys)
        .arg(args);
    answer(cmd.query_async::<Value>(c).await)
}

pub(super) fn answer(reply: redis::RedisResult<Value>) -> Answer {
    match reply {
        Ok(Value::Array(items)) => Answer::Reply(
            items
                .iter()
                .map(|v| redis::from_redis_value_ref(v).unwrap())
                .collect(),
        ),
        Ok(Value::Int(n)) => Answer::Int(n),
        Ok(Value::Nil) => Answer::Nil,
        Ok(other) => panic!("unexpected reply {other:?}"),
        Err(e) => Answer::Error(
            e.code().unwrap_or("").to_string(),
            e.detail().unwrap_or("").to_string(),
        ),
    }
}

pub(super) async fn set(c: &mut MultiplexedConnection, key: &str, value: &str) {
    redis::cmd("SET")
        .arg(key)
        .arg(value)
        .query_async::<()>(c)
        .await
        .unwrap();
}

pub(super) async fn get(c: &mut MultiplexedConnection, key: &str) -> Option<String> {
    redis::cmd("GET").arg(key).query_async(c).await.unwrap()
}

/// Quantities that are not a canonical integer >= 1. Lua's `tonumber` takes several of them.
pub(super) const BAD_QTY: [&str; 13] = [
    "0",
    "-1",
    "abc",
    "1.5",
    "2.5",
    " 5",
    "5 ",
    "0x10",
    "1e2",
    "+5",
    "05",
    "",
    "1000000000000000",
];
/// Stock values that are not a canonical integer.
pub(super) const BAD_STOCK: [&str; 8] = [
    "2.5",
    " 5",
    "0x10",
    "lots",
    "-0",
    "007",
    "1e3",
    "1000000000000000",
];

/// How the reserve contract is called: `reserve.lua` by EVAL, or the Function by FCALL.
#[derive(Clone, Copy)]
enum Via {
    Eval,
    Fcall,
}

async fn reserve(c: &mut MultiplexedConnection, via: Via, key: &str, args: &[&str]) -> Answer {
    match via {
        Via::Eval => eval(c, scripts::RESERVE.source, &[key], args).await,
        Via::Fcall => fcall(c, &[key], args).await,
    }
}

/// Every line of the reserve contract, shared by `reserve.lua` and the Function.
async fn prove_reserve_contract(c: &mut MultiplexedConnection, via: Via) {
    let key = "oversold:{contract}:stock";
    // KEYS[1] ... A missing key means 0 in stock (and is not created).
    assert_eq!(
        reserve(c, via, key, &["1"]).await,
        Answer::Reply(vec![0, 0, 0])
    );
    assert_eq!(get(c, key).await, None);
    // Returns {1, stock_before, stock_after}: the units are taken.
    set(c, key, "5").await;
    assert_eq!(
        reserve(c, via, key, &["2"]).await,
        Answer::Reply(vec![1, 5, 3])
    );
    assert_eq!(
        reserve(c, via, key, &["3"]).await,
        Answer::Reply(vec![1, 3, 0])
    );
    assert_eq!(get(c, key).await.as_deref(), Some("0"));
    // Returns {0, stock_before, stock_before}: too few, nothing changed; a negative stock
    // (what naive leaves behind) is too few for anyone.
    set(c, key, "2").await;
    assert_eq!(
        reserve(c, via, key, &["3"]).await,
        Answer::Reply(vec![0, 2, 2])
    );
    assert_eq!(get(c, key).await.as_deref(), Some("2"));
    set(c, key, "-24").await;
    assert_eq!(
        reserve(c, via, key, &["1"]).await,
        Answer::Reply(vec![0, -24, -24])
    );
    // The largest canonical integers are still exact.
    set(c, key, "999999999999999").await;
    assert_eq!(
        reserve(c, via, key, &["999999999999999"]).await,
        Answer::Reply(vec![1, 999_999_999_999_999, 0])
    );
    // Errors "INVALID_QTY ..." for a missing or non-canonical qty; nothing changes.
    set(c, key, "4").await;
    for bad in BAD_QTY {
        match reserve(c, via, key, &[bad]).await {
            Answer::Error(code, _) => assert_eq!(code, "INVALID_QTY", "qty {bad:?}"),
            other => panic!("qty {bad:?} gave {other:?}"),
        }
    }
    match reserve(c, via, key, &[]).await {
        Answer::Error(code, _) => assert_eq!(code, "INVALID_QTY", "no qty"),
        other => panic!("no qty gave {other:?}"),
    }
    assert_eq!(get(c, key).await.as_deref(), Some("4"));
    // Errors "STOCK_NOT_INTEGER ..." for a stock that is not a canonical integer, whatever
    // the qty (Lua's tonumber would have read "2.5" as 2.5).
    for bad in BAD_STOCK {
        set(c, key, bad).await;
        for qty in ["1", "3"] {
            match reserve(c, via, key, &[qty]).await {
                Answer::Error(code, detail) => {
                    assert_eq!(code, "STOCK_NOT_INTEGER", "stock {bad:?}");
                    assert!(detail.contains(key), "{detail}");
                }
                other => panic!("stock {bad:?} qty {qty} gave {other:?}"),
            }
        }
        assert_eq!(get(c, key).await.as_deref(), Some(bad));
    }
}

#[tokio::test]
async fn reserve_lua_header_is_its_contract() {
    assert_pinned(
        &scripts::RESERVE,
        &[
            "KEYS[1]  the stock counter: a string holding a canonical integer. A missing key means 0 in stock.",
            "ARGV[1]  qty: units wanted, a canonical integer >= 1 (digits only, no sign, no leading zero).",
            "Returns  {1, stock_before, stock_after}  reserved: the caller now owns qty units",
            "         {0, stock_before, stock_before} sold out: too few units, nothing changed",
            "Errors   \"INVALID_QTY ...\"        ARGV[1] is missing or not a canonical integer >= 1",
            "         \"STOCK_NOT_INTEGER ...\"  KEYS[1] holds something other than a canonical integer",
        ],
    );
    let redis = TestRedis::start();
    prove_reserve_contract(&mut redis.raw().await, Via::Eval).await;
}

#[tokio::test]
async fn reserve_function_header_is_its_contract() {
    assert_pinned(
        &scripts::RESERVE_FUNCTION,
        &[
            "Library  oversold_v2",
            "Function oversold_v2_reserve, called as: FCALL oversold_v2_reserve 1 <stock key> <qty>",
            "KEYS[1]  the stock counter: a string holding a canonical integer. A missing key means 0 in stock.",
            "ARGV[1]  qty: units wanted, a canonical integer >= 1 (digits only, no sign, no leading zero).",
            "Returns  {1, stock_before, stock_after}  reserved: the caller now owns qty units",
            "         {0, stock_before, stock_before} sold out: too few units, nothing changed",
            "Errors   \"INVALID_QTY ...\"        ARGV[1] is missing or not a canonical integer >= 1",
            "         \"STOCK_NOT_INTEGER ...\"  KEYS[1] holds something other than a canonical integer",
        ],
    );
    assert!(
        scripts::RESERVE_FUNCTION
            .source
            .starts_with("#!lua name=oversold_v2\n")
    );
    let redis = TestRedis::start();
    let mut c = redis.raw().await;
    // Library oversold_v2 / Function oversold_v2_reserve: loading registers exactly that.
    let name: String = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg(scripts::RESERVE_FUNCTION.source)
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(name, "oversold_v2");
    prove_reserve_contract(&mut c, Via::Fcall).await;
}

#[tokio::test]
async fn release_lock_header_is_its_contract() {
    assert_pinned(
        &scripts::RELEASE_LOCK,
        &[
            "KEYS[1]  the lock key.",
            "ARGV[1]  token: the value this holder wrote when it took the lock (non-empty).",
            "Returns  1  the lock held this token and is now deleted",
            "         0  the lock is gone or belongs to someone else: nothing changed",
            "Errors   \"INVALID_TOKEN ...\"  ARGV[1] is missing or empty",
        ],
    );
    let redis = TestRedis::start();
    let mut c = redis.raw().await;
    let body = scripts::RELEASE_LOCK.source;
    let key = "oversold:{contract}:lock";
    // Returns 0: the lock is gone.
    assert_eq!(eval(&mut c, body, &[key], &["a"]).await, Answer::Int(0));
    // Returns 0: it belongs to someone else, and stays theirs.
    set(&mut c, key, "b").await;
    assert_eq!(eval(&mut c, body, &[key], &["a"]).await, Answer::Int(0));
    assert_eq!(get(&mut c, key).await.as_deref(), Some("b"));
    // Returns 1: it held this token, and is now deleted.
    assert_eq!(eval(&mut c, body, &[key], &["b"]).await, Answer::Int(1));
    assert_eq!(get(&mut c, key).await, None);
    // KEYS[1] the lock key: only that key is touched.
    set(&mut c, key, "b").await;
    set(&mut c, "oversold:{contract}:other", "b").await;
    assert_eq!(eval(&mut c, body, &[key], &["b"]).await, Answer::Int(1));
    assert_eq!(
        get(&mut c, "oversold:{contract}:other").await.as_deref(),
        Some("b")
    );
    // Errors INVALID_TOKEN: missing or empty; nothing changes.
    set(&mut c, key, "").await;
    for args in [&[][..], &[""][..]] {
        match eval(&mut c, body, &[key], args).await {
            Answer::Error(code, _) => assert_eq!(code, "INVALID_TOKEN", "{args:?}"),
            other => panic!("{args:?} gave {other:?}"),
        }
    }
    assert_eq!(get(&mut c, key).await.as_deref(), Some(""));
}

pub(super) async fn pttl(c: &mut MultiplexedConnection, key: &str) -> i64 {
    redis::cmd("PTTL").arg(key).query_async(c).await.unwrap()
}

pub(super) async fn del(c: &mut MultiplexedConnection, keys: &[&str]) {
    redis::cmd("DEL")
        .arg(keys)
        .query_async::<()>(c)
        .await
        .unwrap();
}

/// Expect the error `code` from `script` with `args`; the caller checks nothing changed.
async fn refused(
    c: &mut MultiplexedConnection,
    script: &LuaFile,
    keys: &[&str],
    args: &[&str],
    code: &str,
) {
    match eval(c, script.source, keys, args).await {
        Answer::Error(got, detail) => assert_eq!(got, code, "{args:?}: {detail}"),
        other => panic!("{} {args:?} gave {other:?}, expected {code}", script.file),
    }
}

/// Values that are not a canonical integer >= 0 (what a fence key must hold).
const BAD_FENCE: [&str; 9] = [
    "2.5",
    " 5",
    "0x10",
    "lots",
    "-0",
    "007",
    "1e3",
    "1000000000000000",
    "-3",
];

#[tokio::test]
async fn acquire_fenced_lock_header_is_its_contract() {
    let script = &scripts::ACQUIRE_FENCED_LOCK;
    assert_pinned(
        script,
        &[
            "KEYS[1]  the lock key: holds the holder's token while the lock is taken.",
            "KEYS[2]  the fence counter: the last token handed out, a canonical integer (missing means none yet).",
            "ARGV[1]  lease_ms: how long the lock lives, a canonical integer >= 1.",
            "ARGV[2]  key_ttl_s: how long KEYS[2] lives after this call, a canonical integer >= 1.",
            "Returns  token  taken: KEYS[1] holds this token for lease_ms, and so does KEYS[2]",
            "         nil    busy: someone holds the lock; nothing changed",
            "Errors   \"INVALID_LEASE ...\"      ARGV[1] is missing or not a canonical integer >= 1",
            "         \"INVALID_TTL ...\"        ARGV[2] is missing or not a canonical integer >= 1",
            "         \"FENCE_NOT_INTEGER ...\"  KEYS[2] holds something other than a canonical integer >= 0",
        ],
    );
    let redis = TestRedis::start();
    let mut c = redis.raw().await;
    let (lock, fence) = ("oversold:{contract}:lock", "oversold:{contract}:fence");
    let keys = [lock, fence];
    // Returns token: the first is 1 (a missing counter means none yet); the lock and the
    // counter both hold it, the lock for lease_ms and the counter for key_ttl_s.
    assert_eq!(
        eval(&mut c, script.source, &keys, &["5000", "60"]).await,
        Answer::Int(1)
    );
    assert_eq!(get(&mut c, lock).await.as_deref(), Some("1"));
    assert_eq!(get(&mut c, fence).await.as_deref(), Some("1"));
    assert!((1..=5000).contains(&pttl(&mut c, lock).await));
    assert!((1..=60_000).contains(&pttl(&mut c, fence).await));
    // Returns nil: busy, whoever holds it; nothing changed.
    assert_eq!(
        eval(&mut c, script.source, &keys, &["5000", "60"]).await,
        Answer::Nil
    );
    set(&mut c, lock, "someone-else").await;
    assert_eq!(
        eval(&mut c, script.source, &keys, &["5000", "60"]).await,
        Answer::Nil
    );
    assert_eq!(get(&mut c, lock).await.as_deref(), Some("someone-else"));
    assert_eq!(get(&mut c, fence).await.as_deref(), Some("1"));
    // Free again (released, or its lease ran out): the next token is one more than before.
    del(&mut c, &[lock]).await;
    assert_eq!(
        eval(&mut c, script.source, &keys, &["5000", "60"]).await,
        Answer::Int(2)
    );
    redis::cmd("PEXPIRE")
        .arg(lock)
        .arg(1)
        .query_async::<()>(&mut c)
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    assert_eq!(
        eval(&mut c, script.source, &keys, &["5000", "60"]).await,
        Answer::Int(3)
    );
    // The largest canonical integers are still exact.
    del(&mut c, &[lock]).await;
    set(&mut c, fence, "999999999999998").await;
    assert_eq!(
        eval(&mut c, script.source, &keys, &["5000", "60"]).await,
        Answer::Int(999_999_999_999_999)
    );
    assert_eq!(get(&mut c, lock).await.as_deref(), Some("999999999999999"));
    // KEYS: only the two keys are touched.
    del(&mut c, &keys).await;
    assert_eq!(
        eval(&mut c, script.source, &keys, &["5000", "60"]).await,
        Answer::Int(1)
    );
    assert_eq!(crate::common::run_keys(&mut c).await.len(), 2);
    // Errors INVALID_LEASE, INVALID_TTL: missing or not canonical; nothing changes (a free
    // lock stays free, the counter keeps its value).
    del(&mut c, &[lock]).await;
    for bad in BAD_QTY {
        refused(&mut c, script, &keys, &[bad, "60"], "INVALID_LEASE").await;
        refused(&mut c, script, &keys, &["5000", bad], "INVALID_TTL").await;
    }
    refused(&mut c, script, &keys, &[], "INVALID_LEASE").await;
    refused(&mut c, script, &keys, &["5000"], "INVALID_TTL").await;
    assert_eq!(get(&mut c, lock).await, None);
    assert_eq!(get(&mut c, fence).await.as_deref(), Some("1"));
    // Errors FENCE_NOT_INTEGER: the counter holds anything else; nothing changes.
    for bad in BAD_FENCE {
        set(&mut c, fence, bad).await;
        refused(&mut c, script, &keys, &["5000", "60"], "FENCE_NOT_INTEGER").await;
        assert_eq!(get(&mut c, lock).await, None);
        assert_eq!(get(&mut c, fence).await.as_deref(), Some(bad));
    }
}

/// Every way a fenced read or write is called with a bad token or TTL (the `args` builder
/// puts the bad value in its place); nothing may change.
async fn prove_fenced_argument_errors(
    c: &mut MultiplexedConnection,
    script: &LuaFile,
    keys: &[&str],
    args: impl Fn(&str, &str) -> Vec<String>,
) {
    for bad in BAD_QTY {
        let token_bad = args(bad, "60");
        let ttl_bad = args("9", bad);
        let token_bad: Vec<&str> = token_bad.iter().map(String::as_str).collect();
        let ttl_bad: Vec<&str> = ttl_bad.iter().map(String::as_str).collect();
        refused(c, script, keys, &token_bad, "INVALID_TOKEN").await;
        refused(c, script, keys, &ttl_bad, "INVALID_TTL").await;
    }
    refused(c, script, keys, &[], "INVALID_TOKEN").await;
}

#[tokio::test]
async fn fenced_get_header_is_its_contract() {
    let script = &scripts::FENCED_GET;
    assert_pinned(
        script,
        &[
            "KEYS[1]  the stock counter: a canonical integer. A missing key means 0 in stock.",
            "KEYS[2]  the stock's fence: the newest token that has touched the stock (missing means none yet).",
            "ARGV[1]  token: the caller's fencing token, a canonical integer >= 1.",
            "ARGV[2]  key_ttl_s: how long KEYS[2] lives after this call, a canonical integer >= 1.",
            "Returns  {1, stock}   read: the token is the newest, and KEYS[2] now holds it",
            "         {0, newest}  fenced out: KEYS[2] holds a newer token; nothing changed",
            "Errors   \"INVALID_TOKEN ...\"      ARGV[1] is missing or not a canonical integer >= 1",
            "         \"INVALID_TTL ...\"        ARGV[2] is missing or not a canonical integer >= 1",
            "         \"FENCE_NOT_INTEGER ...\"  KEYS[2] holds something other than a canonical integer >= 0",
            "         \"STOCK_NOT_INTEGER ...\"  KEYS[1] holds something other than a canonical integer",
        ],
    );
    let redis = TestRedis::start();
    let mut c = redis.raw().await;
    let (stock, seen) = (
        "oversold:{contract}:stock",
        "oversold:{contract}:stock_fence",
    );
    let keys = [stock, seen];
    // KEYS[1] ... A missing key means 0 in stock (and is not created); KEYS[2] missing means
    // no token yet, so any token reads, and is recorded with key_ttl_s.
    assert_eq!(
        eval(&mut c, script.source, &keys, &["1", "60"]).await,
        Answer::Reply(vec![1, 0])
    );
    assert_eq!(get(&mut c, stock).await, None);
    assert_eq!(get(&mut c, seen).await.as_deref(), Some("1"));
    assert!((1..=60_000).contains(&pttl(&mut c, seen).await));
    // Returns {1, stock}: a newer token reads and becomes the newest; the same token again
    // still reads; any stock level reads as it is (even negative).
    set(&mut c, stock, "5").await;
    assert_eq!(
        eval(&mut c, script.source, &keys, &["3", "60"]).await,
        Answer::Reply(vec![1, 5])
    );
    assert_eq!(get(&mut c, seen).await.as_deref(), Some("3"));
    assert_eq!(
        eval(&mut c, script.source, &keys, &["3", "60"]).await,
        Answer::Reply(vec![1, 5])
    );
    set(&mut c, stock, "-24").await;
    assert_eq!(
        eval(&mut c, script.source, &keys, &["4", "60"]).await,
        Answer::Reply(vec![1, -24])
    );
    // Returns {0, newest}: an older token is refused and nothing changes.
    assert_eq!(
        eval(&mut c, script.source, &keys, &["3", "60"]).await,
        Answer::Reply(vec![0, 4])
    );
    assert_eq!(get(&mut c, seen).await.as_deref(), Some("4"));
    assert_eq!(get(&mut c, stock).await.as_deref(), Some("-24"));
    // The largest canonical integers are still exact.
    set(&mut c, stock, "999999999999999").await;
    assert_eq!(
        eval(&mut c, script.source, &keys, &["999999999999999", "60"]).await,
        Answer::Reply(vec![1, 999_999_999_999_999])
    );
    assert_eq!(
        eval(&mut c, script.source, &keys, &["999999999999998", "60"]).await,
        Answer::Reply(vec![0, 999_999_999_999_999])
    );
    // Errors INVALID_TOKEN, INVALID_TTL: missing or not canonical; nothing changes.
    set(&mut c, stock, "5").await;
    set(&mut c, seen, "4").await;
    prove_fenced_argument_errors(&mut c, script, &keys, |token, ttl| {
        vec![token.into(), ttl.into()]
    })
    .await;
    refused(&mut c, script, &keys, &["9"], "INVALID_TTL").await;
    assert_eq!(get(&mut c, seen).await.as_deref(), Some("4"));
    // Errors FENCE_NOT_INTEGER: the fence holds anything else; nothing changes.
    for bad in BAD_FENCE {
        set(&mut c, seen, bad).await;
        refused(&mut c, script, &keys, &["9", "60"], "FENCE_NOT_INTEGER").await;
        assert_eq!(get(&mut c, seen).await.as_deref(), Some(bad));
    }
    // Errors STOCK_NOT_INTEGER: for a token that would read; the fence keeps its token.
    set(&mut c, seen, "4").await;
    for bad in BAD_STOCK {
        set(&mut c, stock, bad).await;
        refused(&mut c, script, &keys, &["9", "60"], "STOCK_NOT_INTEGER").await;
        assert_eq!(get(&mut c, seen).await.as_deref(), Some("4"));
        assert_eq!(get(&mut c, stock).await.as_deref(), Some(bad));
    }
}

#[tokio::test]
async fn fenced_decrby_header_is_its_contract() {
    let script = &scripts::FENCED_DECRBY;
    assert_pinned(
        script,
        &[
            "KEYS[1]  the stock counter: a canonical integer. It must exist (the read saw the units).",
            "KEYS[2]  the stock's fence: the newest token that has touched the stock (missing means none yet).",
            "ARGV[1]  token: the caller's fencing token, a canonical integer >= 1.",
            "ARGV[2]  qty: units to take, a canonical integer >= 1.",
            "ARGV[3]  key_ttl_s: how long KEYS[2] lives after this call, a canonical integer >= 1.",
            "Returns  {1, stock_after}  written: KEYS[1] is qty lower, and KEYS[2] now holds the token",
            "         {0, newest}       fenced out: KEYS[2] holds a newer token; nothing changed",
            "Errors   \"INVALID_TOKEN ...\"      ARGV[1] is missing or not a canonical integer >= 1",
            "         \"INVALID_QTY ...\"        ARGV[2] is missing or not a canonical integer >= 1",
            "         \"INVALID_TTL ...\"        ARGV[3] is missing or not a canonical integer >= 1",
            "         \"FENCE_NOT_INTEGER ...\"  KEYS[2] holds something other than a canonical integer >= 0",
            "         \"STOCK_MISSING ...\"      KEYS[1] does not exist (the run's stock is gone)",
            "         \"STOCK_NOT_INTEGER ...\"  KEYS[1] holds something other than a canonical integer",
        ],
    );
    let redis = TestRedis::start();
    let mut c = redis.raw().await;
    let (stock, seen) = (
        "oversold:{contract}:stock",
        "oversold:{contract}:stock_fence",
    );
    let keys = [stock, seen];
    // Returns {1, stock_after}: qty lower, the token recorded with key_ttl_s, the stock's
    // own TTL kept.
    redis::cmd("SET")
        .arg(stock)
        .arg("5")
        .arg("EX")
        .arg(600)
        .query_async::<()>(&mut c)
        .await
        .unwrap();
    assert_eq!(
        eval(&mut c, script.source, &keys, &["1", "2", "60"]).await,
        Answer::Reply(vec![1, 3])
    );
    assert_eq!(get(&mut c, stock).await.as_deref(), Some("3"));
    assert_eq!(get(&mut c, seen).await.as_deref(), Some("1"));
    assert!((1..=60_000).contains(&pttl(&mut c, seen).await));
    assert!(pttl(&mut c, stock).await > 60_000);
    // The check is the caller's (on its fenced read): the write takes what it is told.
    assert_eq!(
        eval(&mut c, script.source, &keys, &["2", "4", "60"]).await,
        Answer::Reply(vec![1, -1])
    );
    assert_eq!(get(&mut c, seen).await.as_deref(), Some("2"));
    // Returns {0, newest}: an older token is refused and nothing changes.
    assert_eq!(
        eval(&mut c, script.source, &keys, &["1", "1", "60"]).await,
        Answer::Reply(vec![0, 2])
    );
    assert_eq!(get(&mut c, stock).await.as_deref(), Some("-1"));
    assert_eq!(get(&mut c, seen).await.as_deref(), Some("2"));
    // The largest canonical integers are still exact.
    set(&mut c, stock, "999999999999999").await;
    assert_eq!(
        eval(
            &mut c,
            script.source,
            &keys,
            &["999999999999999", "999999999999999", "60"]
        )
        .await,
        Answer::Reply(vec![1, 0])
    );
    // Errors INVALID_TOKEN, INVALID_QTY, INVALID_TTL: missing or not canonical; nothing changes.
    set(&mut c, stock, "5").await;
    set(&mut c, seen, "4").await;
    prove_fenced_argument_errors(&mut c, script, &keys, |token, ttl| {
        vec![token.into(), "1".into(), ttl.into()]
    })
    .await;
    for bad in BAD_QTY {
        refused(&mut c, script, &keys, &["9", bad, "60"], "INVALID_QTY").await;
    }
    refused(&mut c, script, &keys, &["9"], "INVALID_QTY").await;
    refused(&mut c, script, &keys, &["9", "1"], "INVALID_TTL").await;
    assert_eq!(get(&mut c, stock).await.as_deref(), Some("5"));
    assert_eq!(get(&mut c, seen).await.as_deref(), Some("4"));
    // Errors FENCE_NOT_INTEGER: the fence holds anything else; nothing changes.
    for bad in BAD_FENCE {
        set(&mut c, seen, bad).await;
        refused(
            &mut c,
            script,
            &keys,
            &["9", "1", "60"],
            "FENCE_NOT_INTEGER",
        )
        .await;
        assert_eq!(get(&mut c, seen).await.as_deref(), Some(bad));
        assert_eq!(get(&mut c, stock).await.as_deref(), Some("5"));
    }
    // Errors STOCK_MISSING, STOCK_NOT_INTEGER: for a token that would write; nothing is
    // created or changed.
    set(&mut c, seen, "4").await;
    for bad in BAD_STOCK {
        set(&mut c, stock, bad).await;
        refused(
            &mut c,
            script,
            &keys,
            &["9", "1", "60"],
            "STOCK_NOT_INTEGER",
        )
        .await;
        assert_eq!(get(&mut c, stock).await.as_deref(), Some(bad));
    }
    del(&mut c, &[stock]).await;
    refused(&mut c, script, &keys, &["9", "1", "60"], "STOCK_MISSING").await;
    assert_eq!(get(&mut c, stock).await, None);
    assert_eq!(get(&mut c, seen).await.as_deref(), Some("4"));
}

#[tokio::test]
async fn slow_script_header_is_its_contract() {
    let script = &scripts::SLOW_SCRIPT;
    assert_pinned(
        script,
        &[
            "KEYS     none.",
            "ARGV[1]  ms to spin, a canonical integer from 1 to 1000.",
            "Returns  the µs actually spent (Redis's clock).",
            "Errors   \"INVALID_MS ...\"  ARGV[1] is not a canonical integer from 1 to 1000",
        ],
    );
    let redis = TestRedis::start();
    let mut c = redis.raw().await;
    // KEYS none: it runs with no key, and writes nothing.
    set(&mut c, "oversold:{contract}:bystander", "7").await;
    let keys_before = dbsize(&mut c).await;
    // Returns the µs spent on Redis's clock: at least what was asked, and no more than
    // Redis's own clock saw pass around the call.
    for ms in ["1", "20"] {
        let before = redis_time_us(&mut c).await;
        let spent = match eval(&mut c, script.source, &[], &[ms]).await {
            Answer::Int(us) => us,
            other => panic!("{ms} ms gave {other:?}"),
        };
        let after = redis_time_us(&mut c).await;
        let asked: i64 = ms.parse::<i64>().unwrap() * 1000;
        assert!(spent >= asked, "asked {asked} µs, spent {spent}");
        assert!(
            spent <= after - before,
            "spent {spent} µs of {}",
            after - before
        );
    }
    // ARGV[1] from 1 to 1000: the upper bound is accepted (and spun: a whole second, longer
    // than a plain connection waits for an answer).
    let config = redis::AsyncConnectionConfig::new()
        .set_response_timeout(Some(std::time::Duration::from_secs(10)));
    let mut patient = redis::Client::open(redis.server.url())
        .unwrap()
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .unwrap();
    match eval(&mut patient, script.source, &[], &["1000"]).await {
        Answer::Int(us) => assert!(us >= 1_000_000, "{us}"),
        other => panic!("1000 ms gave {other:?}"),
    }
    // Errors INVALID_MS: missing, not canonical, or out of range.
    for args in [
        &[][..],
        &[""],
        &["0"],
        &["1001"],
        &["-5"],
        &["05"],
        &["1.5"],
        &[" 5"],
        &["0x10"],
        &["1e2"],
        &["abc"],
        &["1000000000000000000000"],
    ] {
        refused(&mut c, script, &[], args, "INVALID_MS").await;
    }
    assert_eq!(dbsize(&mut c).await, keys_before);
    assert_eq!(
        get(&mut c, "oversold:{contract}:bystander")
            .await
            .as_deref(),
        Some("7")
    );
}

async fn dbsize(c: &mut MultiplexedConnection) -> i64 {
    redis::cmd("DBSIZE").query_async(c).await.unwrap()
}

/// Redis's own clock (`TIME`), in µs.
async fn redis_time_us(c: &mut MultiplexedConnection) -> i64 {
    let (s, us): (i64, i64) = redis::cmd("TIME").query_async(c).await.unwrap();
    s * 1_000_000 + us
}

#[tokio::test]
async fn every_script_the_server_runs_has_its_contract_pinned() {
    let files: Vec<&str> = scripts::all().iter().map(|f| f.file).collect();
    assert_eq!(
        files,
        [
            "reserve.lua",
            "release_lock.lua",
            "reserve_function.lua",
            "acquire_fenced_lock.lua",
            "fenced_get.lua",
            "fenced_decrby.lua",
            "reserve_hold.lua",
            "reserve_hold_once.lua",
            "reserve_hold_limited.lua",
            "confirm_hold.lua",
            "release_hold.lua",
            "reap_holds.lua",
            "reconcile.lua",
            "ledger_record.lua",
            "reserve_cart.lua",
            "compensate_line.lua",
            "reserve_warehouse.lua",
            "take_cart_lines.lua",
            "busy_read.lua",
            "busy_write.lua",
            "busy_function.lua",
            "reserve_strict.lua",
            "reserve_hold_ttl.lua",
            "confirm_hold_ttl.lua",
            "release_hold_ttl.lua",
        ],
        "a new script needs its own *_header_is_its_contract test here"
    );
    // The one script no strategy runs (a chaos button's) has its own test above; with it,
    // every file under lua/ is one the server embeds and has its header pinned.
    let pinned: BTreeSet<&str> = scripts::all()
        .into_iter()
        .chain(scripts::room_scripts())
        .map(|f| f.file)
        .collect();
    let on_disk: BTreeSet<String> = std::fs::read_dir(copies::LUA_DIR)
        .expect("the lua/ folder")
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".lua"))
        .collect();
    assert_eq!(
        on_disk.iter().map(String::as_str).collect::<BTreeSet<_>>(),
        pinned,
        "every file under lua/ is embedded by store::scripts and pinned here"
    );
    for f in scripts::all().into_iter().chain(scripts::room_scripts()) {
        // Not ARGV: a script may take no argument (`release_hold.lua` takes only its keys).
        for part in ["KEYS", "Returns"] {
            assert!(
                contract_lines(f).iter().any(|l| l.starts_with(part)),
                "{} has no {part} line in its header",
                f.file
            );
        }
    }
}

#[tokio::test]
async fn the_store_survives_a_script_flush_between_evalsha_and_eval() {
    // EVALSHA on a flushed cache answers NOSCRIPT; the store then sends EVAL with the body,
    // which no flush can refuse, and the next EVALSHA finds the script cached again.
    let redis = TestRedis::start();
    let mut c = redis.conn().await;
    let key = "oversold:{contract}:stock";
    oversold::store::stock::set_raw(&mut c, key, "3")
        .await
        .unwrap();
    scripts::flush_cache(&mut c).await.unwrap();
    let first = oversold::store::stock::reserve(&mut c, key, 1)
        .await
        .unwrap();
    assert_eq!((first.reply.after, first.round_trips), (2, 2));
    let second = oversold::store::stock::reserve(&mut c, key, 1)
        .await
        .unwrap();
    assert_eq!((second.reply.after, second.round_trips), (1, 1));
}
