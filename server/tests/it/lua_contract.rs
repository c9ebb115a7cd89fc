//! Each Lua file's header is its contract; this pins it line by line against a real Redis.
//!
//! For every script, the header lines that state the contract (`KEYS`, `ARGV`, each
//! `Returns` shape, each `Errors` entry, and for the library its name and function) are
//! listed here verbatim, each with the calls that prove it. Change a line in a file, add
//! one, or drop one, and the listing no longer matches: the test fails until the proof is
//! updated with it.

use std::collections::BTreeSet;

use crate::common::TestRedis;
use oversold::store::scripts::{self, LuaFile};
use redis::Value;
use redis::aio::MultiplexedConnection;

/// The header lines of `file` that state its contract.
fn contract_lines(file: &LuaFile) -> BTreeSet<String> {
    const STARTS: [&str; 6] = ["KEYS[", "ARGV[", "Returns", "Errors", "Library", "Function"];
    file.source
        .lines()
        .filter_map(|l| l.strip_prefix("-- "))
        .filter(|l| STARTS.iter().any(|s| l.starts_with(s)) || l.starts_with("         "))
        .map(|l| l.trim_end().to_string())
        .collect()
}

fn assert_pinned(file: &LuaFile, pinned: &[&str]) {
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
enum Answer {
    Reply(Vec<i64>),
    Int(i64),
    Error(String, String),
}

async fn eval(c: &mut MultiplexedConnection, body: &str, keys: &[&str], args: &[&str]) -> Answer {
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

fn answer(reply: redis::RedisResult<Value>) -> Answer {
    match reply {
        Ok(Value::Array(items)) => Answer::Reply(
            items
                .iter()
                .map(|v| redis::from_redis_value_ref(v).unwrap())
                .collect(),
        ),
        Ok(Value::Int(n)) => Answer::Int(n),
        Ok(other) => panic!("unexpected reply {other:?}"),
        Err(e) => Answer::Error(
            e.code().unwrap_or("").to_string(),
            e.detail().unwrap_or("").to_string(),
        ),
    }
}

async fn set(c: &mut MultiplexedConnection, key: &str, value: &str) {
    redis::cmd("SET")
        .arg(key)
        .arg(value)
        .query_async::<()>(c)
        .await
        .unwrap();
}

async fn get(c: &mut MultiplexedConnection, key: &str) -> Option<String> {
    redis::cmd("GET").arg(key).query_async(c).await.unwrap()
}

/// Quantities that are not a canonical integer >= 1. Lua's `tonumber` takes several of them.
const BAD_QTY: [&str; 13] = [
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
const BAD_STOCK: [&str; 8] = [
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

#[tokio::test]
async fn every_script_the_server_runs_has_its_contract_pinned() {
    let files: Vec<&str> = scripts::all().iter().map(|f| f.file).collect();
    assert_eq!(
        files,
        ["reserve.lua", "release_lock.lua", "reserve_function.lua"],
        "a new script needs its own *_header_is_its_contract test here"
    );
    for f in scripts::all() {
        assert!(
            !contract_lines(f).is_empty(),
            "{} has no KEYS/ARGV/Returns header",
            f.file
        );
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
