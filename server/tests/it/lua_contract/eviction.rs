//! The `eviction` scenario's script: `reserve_strict.lua`, line by line. What eviction does
//! to a whole sale is proved in `tests/it/eviction.rs`.

use oversold::store::scripts;
use redis::aio::MultiplexedConnection;

use super::{Answer, BAD_QTY, BAD_STOCK, assert_pinned, eval, get, set};
use crate::common::TestRedis;

async fn strict(c: &mut MultiplexedConnection, key: &str, args: &[&str]) -> Answer {
    eval(c, scripts::RESERVE_STRICT.source, &[key], args).await
}

#[tokio::test]
async fn reserve_strict_header_is_its_contract() {
    assert_pinned(
        &scripts::RESERVE_STRICT,
        &[
            "KEYS[1]  the stock counter: a string holding a canonical integer. It must exist.",
            "ARGV[1]  qty: units wanted, a canonical integer >= 1 (digits only, no sign, no leading zero).",
            "Returns  {1, stock_before, stock_after}  reserved: the caller now owns qty units",
            "         {0, stock_before, stock_before} sold out: too few units, nothing changed",
            "Errors   \"INVALID_QTY ...\"        ARGV[1] is missing or not a canonical integer >= 1",
            "         \"STOCK_MISSING ...\"      KEYS[1] does not exist; nothing changed",
            "         \"STOCK_NOT_INTEGER ...\"  KEYS[1] holds something other than a canonical integer",
        ],
    );
    let redis = TestRedis::start();
    let c = &mut redis.raw().await;
    let key = "oversold:{contract}:stock";
    // KEYS[1] ... It must exist. / Errors "STOCK_MISSING ..." KEYS[1] does not exist;
    // nothing changed (the key is not created, whatever the qty).
    for qty in ["1", "7"] {
        match strict(c, key, &[qty]).await {
            Answer::Error(code, detail) => {
                assert_eq!(code, "STOCK_MISSING");
                assert!(detail.contains(key), "{detail}");
            }
            other => panic!("a missing counter gave {other:?}"),
        }
    }
    assert_eq!(get(c, key).await, None);
    // Returns {1, stock_before, stock_after}: the units are taken, down to exactly 0.
    set(c, key, "5").await;
    assert_eq!(strict(c, key, &["2"]).await, Answer::Reply(vec![1, 5, 3]));
    assert_eq!(strict(c, key, &["3"]).await, Answer::Reply(vec![1, 3, 0]));
    assert_eq!(get(c, key).await.as_deref(), Some("0"));
    // Returns {0, stock_before, stock_before}: a counter at 0 is sold out, not missing; too
    // few, or below zero, changes nothing.
    assert_eq!(strict(c, key, &["1"]).await, Answer::Reply(vec![0, 0, 0]));
    set(c, key, "2").await;
    assert_eq!(strict(c, key, &["3"]).await, Answer::Reply(vec![0, 2, 2]));
    set(c, key, "-4").await;
    assert_eq!(strict(c, key, &["1"]).await, Answer::Reply(vec![0, -4, -4]));
    assert_eq!(get(c, key).await.as_deref(), Some("-4"));
    set(c, key, "999999999999999").await;
    assert_eq!(
        strict(c, key, &["999999999999999"]).await,
        Answer::Reply(vec![1, 999_999_999_999_999, 0])
    );
    // Errors "INVALID_QTY ...": checked first, so a missing counter with a bad qty is
    // INVALID_QTY; nothing changes.
    set(c, key, "4").await;
    for bad in BAD_QTY {
        match strict(c, key, &[bad]).await {
            Answer::Error(code, _) => assert_eq!(code, "INVALID_QTY", "qty {bad:?}"),
            other => panic!("qty {bad:?} gave {other:?}"),
        }
    }
    match strict(c, key, &[]).await {
        Answer::Error(code, _) => assert_eq!(code, "INVALID_QTY", "no qty"),
        other => panic!("no qty gave {other:?}"),
    }
    assert_eq!(get(c, key).await.as_deref(), Some("4"));
    match strict(c, "oversold:{contract}:none", &["0"]).await {
        Answer::Error(code, _) => assert_eq!(code, "INVALID_QTY"),
        other => panic!("gave {other:?}"),
    }
    // Errors "STOCK_NOT_INTEGER ...": whatever the qty, nothing changes.
    for bad in BAD_STOCK {
        set(c, key, bad).await;
        for qty in ["1", "3"] {
            match strict(c, key, &[qty]).await {
                Answer::Error(code, detail) => {
                    assert_eq!(code, "STOCK_NOT_INTEGER", "stock {bad:?}");
                    assert!(detail.contains(key), "{detail}");
                }
                other => panic!("stock {bad:?} qty {qty} gave {other:?}"),
            }
        }
        assert_eq!(get(c, key).await.as_deref(), Some(bad));
    }
    // The comment under the header: over maxmemory with noeviction, Redis refuses the
    // script's first write with OOM, so nothing is taken; a sold-out answer needs no write
    // and still comes.
    set(c, key, "3").await;
    config_set(c, "maxmemory-policy", "noeviction").await;
    config_set(c, "maxmemory", "1").await;
    match strict(c, key, &["1"]).await {
        Answer::Error(code, _) => assert_eq!(code, "OOM"),
        other => panic!("over maxmemory gave {other:?}"),
    }
    assert_eq!(strict(c, key, &["9"]).await, Answer::Reply(vec![0, 3, 3]));
    config_set(c, "maxmemory", "0").await;
    assert_eq!(get(c, key).await.as_deref(), Some("3"));
}

async fn config_set(c: &mut MultiplexedConnection, name: &str, value: &str) {
    redis::cmd("CONFIG")
        .arg("SET")
        .arg(name)
        .arg(value)
        .query_async::<()>(c)
        .await
        .unwrap();
}
