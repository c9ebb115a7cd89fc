//! The `cart` and `warehouses` scripts' contracts: `reserve_cart.lua`,
//! `compensate_line.lua`, `reserve_warehouse.lua`. Every `Returns` shape and every
//! `Errors` entry is called, and every refusal is shown to change nothing.

use super::{Answer, BAD_QTY, BAD_STOCK, assert_pinned, eval, get, set};
use crate::common::TestRedis;
use oversold::store::scripts;
use redis::aio::MultiplexedConnection;

const PHONE: &str = "oversold:{cart}:sku:phone";
const CASE: &str = "oversold:{cart}:sku:case";
const CHARGER: &str = "oversold:{cart}:sku:charger";
const UNDONE: &str = "oversold:{cart}:undone";

/// The values of `keys` now (None: missing).
async fn values(c: &mut MultiplexedConnection, keys: &[&str]) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for k in keys {
        out.push(get(c, k).await);
    }
    out
}

/// A call refused with `code`, which changed none of `keys`.
async fn refused(
    c: &mut MultiplexedConnection,
    body: &str,
    keys: &[&str],
    args: &[&str],
    code: &str,
) {
    let before = values(c, &[PHONE, CASE, CHARGER]).await;
    match eval(c, body, keys, args).await {
        Answer::Error(got, _) => assert_eq!(got, code, "{keys:?} {args:?}"),
        other => panic!("{keys:?} {args:?}: expected {code}, got {other:?}"),
    }
    assert_eq!(
        values(c, &[PHONE, CASE, CHARGER]).await,
        before,
        "{code} changed something"
    );
}

#[tokio::test]
async fn reserve_cart_header_is_its_contract() {
    let script = &scripts::RESERVE_CART;
    assert_pinned(
        script,
        &[
            "KEYS[i]  SKU i's counter, for each line i (1 to 8 lines): a canonical integer. A missing key means 0 in stock.",
            "ARGV[i]  line i's qty: units wanted, a canonical integer >= 1 (one ARGV per KEYS).",
            "Returns  {1, after_1, ..., after_n}  reserved: every line is the buyer's; each counter after its DECRBY",
            "         {0, stock_1, ..., stock_n}  sold out: some line has too few units, nothing changed",
            "Errors   \"INVALID_CART ...\"         no keys, more than 8, or not one ARGV per key",
            "         \"INVALID_QTY ...\"          some ARGV[i] is not a canonical integer >= 1",
            "         \"STOCK_NOT_INTEGER ...\"    some KEYS[i] holds something other than a canonical integer",
        ],
    );
    let redis = TestRedis::start();
    let c = &mut redis.raw().await;
    let body = script.source;
    set(c, PHONE, "1").await;
    set(c, CASE, "3").await;
    // Returns {1, after...}: every line taken.
    assert_eq!(
        eval(c, body, &[PHONE, CASE], &["1", "2"]).await,
        Answer::Reply(vec![1, 0, 1])
    );
    // Returns {0, stock...}: one short line refuses the whole cart, the others untouched.
    assert_eq!(
        eval(c, body, &[CASE, PHONE], &["1", "1"]).await,
        Answer::Reply(vec![0, 1, 0])
    );
    assert_eq!(
        values(c, &[PHONE, CASE]).await,
        [Some("0".into()), Some("1".into())]
    );
    // A missing key means 0 in stock.
    assert_eq!(
        eval(c, body, &[CHARGER], &["1"]).await,
        Answer::Reply(vec![0, 0])
    );
    assert_eq!(
        get(c, CHARGER).await,
        None,
        "a refusal writes nothing, not even a zero"
    );
    // Errors INVALID_CART: no keys, more than 8, or a qty count that does not match.
    refused(c, body, &[], &[], "INVALID_CART").await;
    refused(c, body, &[PHONE, CASE], &["1"], "INVALID_CART").await;
    refused(c, body, &[PHONE], &["1", "1"], "INVALID_CART").await;
    let nine: Vec<String> = (0..9)
        .map(|i| format!("oversold:{{cart}}:sku:{i}"))
        .collect();
    let nine: Vec<&str> = nine.iter().map(String::as_str).collect();
    refused(c, body, &nine, &["1"; 9], "INVALID_CART").await;
    // Errors INVALID_QTY: on any line, before anything is written.
    set(c, PHONE, "5").await;
    for bad in BAD_QTY {
        refused(c, body, &[PHONE, CASE], &["1", bad], "INVALID_QTY").await;
    }
    // Errors STOCK_NOT_INTEGER: on any line, even after a line that fits.
    for bad in BAD_STOCK {
        set(c, CASE, bad).await;
        refused(c, body, &[PHONE, CASE], &["1", "1"], "STOCK_NOT_INTEGER").await;
    }
}

#[tokio::test]
async fn compensate_line_header_is_its_contract() {
    let script = &scripts::COMPENSATE_LINE;
    assert_pinned(
        script,
        &[
            "KEYS[1]  the SKU's counter: a canonical integer. A missing key is an error (the run's stock is gone).",
            "KEYS[2]  the run's undone lines: a set of line ids (missing means none yet).",
            "ARGV[1]  qty: units to give back, a canonical integer >= 1.",
            "ARGV[2]  line: the line's id, e.g. \"b17:2\" (non-empty).",
            "ARGV[3]  key_ttl: seconds the set may live, a canonical integer >= 1.",
            "Returns  {1, stock_after}  given back: the line's units are on the shelf again",
            "         {0, stock}        already given back: this line was undone before, nothing changed",
            "Errors   \"INVALID_QTY ...\"          ARGV[1] is missing or not a canonical integer >= 1",
            "         \"INVALID_ID ...\"           ARGV[2] is missing or empty",
            "         \"INVALID_TIME ...\"         ARGV[3] is missing or not a canonical integer >= 1",
            "         \"NO_STOCK ...\"             KEYS[1] does not exist",
            "         \"STOCK_NOT_INTEGER ...\"    KEYS[1] holds something other than a canonical integer",
        ],
    );
    let redis = TestRedis::start();
    let c = &mut redis.raw().await;
    let body = script.source;
    let keys = [PHONE, UNDONE];
    set(c, PHONE, "0").await;
    // Returns {1, stock_after}: the units are back, and the set remembers the line (with a TTL).
    assert_eq!(
        eval(c, body, &keys, &["2", "b1:0", "600"]).await,
        Answer::Reply(vec![1, 2])
    );
    let ttl: i64 = redis::cmd("TTL").arg(UNDONE).query_async(c).await.unwrap();
    assert!((1..=600).contains(&ttl), "{ttl}");
    // Returns {0, stock}: the same line again gives nothing back, however often.
    for _ in 0..3 {
        assert_eq!(
            eval(c, body, &keys, &["2", "b1:0", "600"]).await,
            Answer::Reply(vec![0, 2])
        );
    }
    // Another line of the same buyer is its own undo.
    assert_eq!(
        eval(c, body, &keys, &["1", "b1:1", "600"]).await,
        Answer::Reply(vec![1, 3])
    );
    let undone: i64 = redis::cmd("SCARD")
        .arg(UNDONE)
        .query_async(c)
        .await
        .unwrap();
    assert_eq!(undone, 2);
    // Errors INVALID_QTY, INVALID_ID, INVALID_TIME: nothing given back, no line recorded.
    for bad in BAD_QTY {
        refused(c, body, &keys, &[bad, "b2:0", "600"], "INVALID_QTY").await;
    }
    refused(c, body, &keys, &["1", "", "600"], "INVALID_ID").await;
    refused(c, body, &keys, &["1"], "INVALID_ID").await;
    for bad in ["0", "-5", "x", ""] {
        refused(c, body, &keys, &["1", "b2:0", bad], "INVALID_TIME").await;
    }
    // Errors NO_STOCK: a vanished counter is not recreated from an undo.
    refused(
        c,
        body,
        &[CHARGER, UNDONE],
        &["1", "b2:0", "600"],
        "NO_STOCK",
    )
    .await;
    assert_eq!(get(c, CHARGER).await, None);
    // Errors STOCK_NOT_INTEGER.
    for bad in BAD_STOCK {
        set(c, PHONE, bad).await;
        refused(c, body, &keys, &["1", "b2:0", "600"], "STOCK_NOT_INTEGER").await;
    }
    let member: bool = redis::cmd("SISMEMBER")
        .arg(UNDONE)
        .arg("b2:0")
        .query_async(c)
        .await
        .unwrap();
    assert!(!member, "a refused undo must not be recorded as done");
}

#[tokio::test]
async fn reserve_warehouse_header_is_its_contract() {
    let script = &scripts::RESERVE_WAREHOUSE;
    assert_pinned(
        script,
        &[
            "KEYS[i]  warehouse i's counter, preferred first, then nearest first (1 to 8): a canonical integer. A missing key means 0.",
            "ARGV[1]  qty: units wanted, a canonical integer >= 1.",
            "ARGV[2]  split: \"1\" to allow taking from several warehouses, \"0\" for one only.",
            "Returns  {1, taken_1, ..., taken_n}  reserved: taken_i units came from warehouse i (they add up to qty)",
            "         {0, stock_1, ..., stock_n}  sold out: no warehouse (or, with split, not all together) can fill it, nothing changed",
            "Errors   \"INVALID_CART ...\"         no keys, or more than 8",
            "         \"INVALID_QTY ...\"          ARGV[1] is missing or not a canonical integer >= 1",
            "         \"INVALID_SPLIT ...\"        ARGV[2] is neither \"0\" nor \"1\"",
            "         \"STOCK_NOT_INTEGER ...\"    some KEYS[i] holds something other than a canonical integer",
        ],
    );
    let redis = TestRedis::start();
    let c = &mut redis.raw().await;
    let body = script.source;
    // Three warehouses, preferred first: PHONE (1), CASE (2), CHARGER (missing: 0).
    let keys = [PHONE, CASE, CHARGER];
    set(c, PHONE, "1").await;
    set(c, CASE, "2").await;
    // Returns {1, taken...}: the preferred one when it can fill the order.
    assert_eq!(
        eval(c, body, &keys, &["1", "0"]).await,
        Answer::Reply(vec![1, 1, 0, 0])
    );
    // Then the nearest that can: the preferred is empty now.
    assert_eq!(
        eval(c, body, &keys, &["2", "0"]).await,
        Answer::Reply(vec![1, 0, 2, 0])
    );
    // Returns {0, stock...}: none alone can fill it, no split: nothing changes.
    set(c, PHONE, "1").await;
    set(c, CASE, "1").await;
    assert_eq!(
        eval(c, body, &keys, &["2", "0"]).await,
        Answer::Reply(vec![0, 1, 1, 0])
    );
    // With split: what each has, in order, adding up to qty.
    assert_eq!(
        eval(c, body, &keys, &["2", "1"]).await,
        Answer::Reply(vec![1, 1, 1, 0])
    );
    assert_eq!(
        values(c, &[PHONE, CASE]).await,
        [Some("0".into()), Some("0".into())]
    );
    // Split or not, together they must have enough: never half an order.
    set(c, CASE, "1").await;
    assert_eq!(
        eval(c, body, &keys, &["2", "1"]).await,
        Answer::Reply(vec![0, 0, 1, 0])
    );
    assert_eq!(get(c, CHARGER).await, None, "a refusal writes nothing");
    // Errors INVALID_CART, INVALID_QTY, INVALID_SPLIT, STOCK_NOT_INTEGER.
    refused(c, body, &[], &["1", "0"], "INVALID_CART").await;
    let nine: Vec<String> = (0..9)
        .map(|i| format!("oversold:{{cart}}:wh:{i}"))
        .collect();
    let nine: Vec<&str> = nine.iter().map(String::as_str).collect();
    refused(c, body, &nine, &["1", "0"], "INVALID_CART").await;
    for bad in BAD_QTY {
        refused(c, body, &keys, &[bad, "0"], "INVALID_QTY").await;
    }
    for bad in ["", "2", "yes", "01"] {
        refused(c, body, &keys, &["1", bad], "INVALID_SPLIT").await;
    }
    refused(c, body, &keys, &["1"], "INVALID_SPLIT").await;
    for bad in BAD_STOCK {
        set(c, CHARGER, bad).await;
        refused(c, body, &keys, &["1", "1"], "STOCK_NOT_INTEGER").await;
    }
}

#[tokio::test]
async fn take_cart_lines_header_is_its_contract() {
    let script = &scripts::TAKE_CART_LINES;
    assert_pinned(
        script,
        &[
            "KEYS[i]  SKU i's counter, for each line i (1 to 8 lines): a canonical integer. A missing key means 0 in stock.",
            "ARGV[i]  line i's qty: units wanted, a canonical integer >= 1 (one ARGV per KEYS).",
            "Returns  {1, after_1, ..., after_n}  reserved: every line is the buyer's; each counter after its DECRBY",
            "Errors   \"SHORT_LINE i has s wants q\"  line i had only s units: the script stopped there, lines 1 to i-1 stay taken",
            "         \"INVALID_CART ...\"            no keys, more than 8, or not one ARGV per key; nothing changed",
            "         \"INVALID_QTY ...\"             some ARGV[i] is not a canonical integer >= 1; nothing changed",
            "         \"STOCK_NOT_INTEGER ...\"       KEYS[i] holds something other than a canonical integer: lines 1 to i-1 stay taken",
        ],
    );
    let redis = TestRedis::start();
    let c = &mut redis.raw().await;
    let body = script.source;
    set(c, PHONE, "2").await;
    set(c, CASE, "3").await;
    set(c, CHARGER, "0").await;
    // Returns {1, after...}: every line taken.
    assert_eq!(
        eval(c, body, &[PHONE, CASE], &["1", "2"]).await,
        Answer::Reply(vec![1, 1, 1])
    );
    // Errors SHORT_LINE: line 3 is short; lines 1 and 2 stay taken. No rollback.
    match eval(c, body, &[PHONE, CASE, CHARGER], &["1", "1", "1"]).await {
        Answer::Error(code, text) => {
            assert_eq!(code, "SHORT_LINE");
            assert!(text.starts_with("3 has 0 wants 1"), "{text}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        values(c, &[PHONE, CASE, CHARGER]).await,
        [Some("0".into()), Some("0".into()), Some("0".into())],
        "the error undid nothing"
    );
    // A short first line: nothing was taken before it. A missing key means 0 in stock.
    let missing = "oversold:{cart}:sku:none";
    match eval(c, body, &[missing, PHONE], &["1", "1"]).await {
        Answer::Error(code, text) => {
            assert_eq!(code, "SHORT_LINE");
            assert!(text.starts_with("1 has 0 wants 1"), "{text}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(get(c, missing).await, None);
    // Errors INVALID_CART and INVALID_QTY: before anything is written.
    set(c, PHONE, "5").await;
    set(c, CASE, "5").await;
    refused(c, body, &[], &[], "INVALID_CART").await;
    refused(c, body, &[PHONE, CASE], &["1"], "INVALID_CART").await;
    let nine: Vec<String> = (0..9)
        .map(|i| format!("oversold:{{cart}}:sku:{i}"))
        .collect();
    let nine: Vec<&str> = nine.iter().map(String::as_str).collect();
    refused(c, body, &nine, &["1"; 9], "INVALID_CART").await;
    for bad in BAD_QTY {
        refused(c, body, &[PHONE, CASE], &["1", bad], "INVALID_QTY").await;
    }
    // Errors STOCK_NOT_INTEGER: on line 2, after line 1 was taken, which stays taken.
    set(c, PHONE, "20").await;
    for (i, bad) in BAD_STOCK.iter().enumerate() {
        set(c, CASE, bad).await;
        match eval(c, body, &[PHONE, CASE], &["1", "1"]).await {
            Answer::Error(code, _) => assert_eq!(code, "STOCK_NOT_INTEGER"),
            other => panic!("{bad}: {other:?}"),
        }
        assert_eq!(get(c, PHONE).await, Some((19 - i).to_string()), "{bad}");
    }
}

/// What the header says of `redis.call` and `redis.pcall`, shown on Redis itself: a failing
/// `redis.call` stops the script and keeps its earlier writes; `redis.pcall` hands the error
/// back, and the script can give back what it took, because it does so itself.
#[tokio::test]
async fn a_failing_redis_call_keeps_earlier_writes_and_pcall_lets_the_script_undo_them() {
    let redis = TestRedis::start();
    let c = &mut redis.raw().await;
    set(c, PHONE, "5").await;
    // CASE as a list: the second line's DECRBY fails with WRONGTYPE.
    let _: i64 = redis::cmd("RPUSH")
        .arg(CASE)
        .arg("not a counter")
        .query_async(c)
        .await
        .unwrap();
    let with_call = "redis.call('DECRBY', KEYS[1], 1) return redis.call('DECRBY', KEYS[2], 1)";
    match eval(c, with_call, &[PHONE, CASE], &[]).await {
        Answer::Error(code, _) => assert_eq!(code, "WRONGTYPE"),
        other => panic!("{other:?}"),
    }
    assert_eq!(get(c, PHONE).await.as_deref(), Some("4"), "no rollback");
    let with_pcall = "redis.call('DECRBY', KEYS[1], 1) \
         local r = redis.pcall('DECRBY', KEYS[2], 1) \
         if type(r) == 'table' and r.err then redis.call('INCRBY', KEYS[1], 1) return r end \
         return r";
    match eval(c, with_pcall, &[PHONE, CASE], &[]).await {
        Answer::Error(code, _) => assert_eq!(code, "WRONGTYPE"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        get(c, PHONE).await.as_deref(),
        Some("4"),
        "the script undid its own line"
    );
}
