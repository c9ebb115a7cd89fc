//! Pins the contract in `lua/reserve.lua`'s header against a real Redis: every return shape
//! and every documented error.

mod common;

use common::{TestRedis, reply};
use oversold::store::{self, RESERVE_LUA, RunKeys};

#[tokio::test]
async fn reserve_lua_contract() {
    let redis = TestRedis::start();
    let mut c = redis.conn().await;
    let keys = RunKeys::new("contract");

    // A missing key means nothing in stock, and the script must not create it.
    assert_eq!(
        store::reserve_raw(&mut c, &keys, "1").await.unwrap(),
        reply(false, 0, 0)
    );
    assert!(!store::key_exists(&mut c, keys.stock_key()).await.unwrap());

    // stock == qty: reserved, down to exactly zero.
    store::init_stock(&mut c, &keys, 3).await.unwrap();
    assert_eq!(
        store::reserve_raw(&mut c, &keys, "3").await.unwrap(),
        reply(true, 3, 0)
    );
    assert_eq!(store::read_stock(&mut c, &keys).await.unwrap(), Some(0));

    // stock < qty: sold out and unchanged.
    store::init_stock(&mut c, &keys, 2).await.unwrap();
    assert_eq!(
        store::reserve_raw(&mut c, &keys, "3").await.unwrap(),
        reply(false, 2, 2)
    );
    assert_eq!(store::read_stock(&mut c, &keys).await.unwrap(), Some(2));

    // stock > qty: reserved.
    assert_eq!(
        store::reserve_raw(&mut c, &keys, "1").await.unwrap(),
        reply(true, 2, 1)
    );

    // Invalid quantities are refused by the script itself, and change nothing.
    for bad in ["0", "-1", "abc", "1.5", "", "nan"] {
        let err = store::reserve_raw(&mut c, &keys, bad)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("INVALID_QTY"), "qty {bad:?} gave {err}");
    }
    assert_eq!(store::read_stock(&mut c, &keys).await.unwrap(), Some(1));

    // A stock key holding garbage is reported, not treated as zero.
    store::set_stock_raw(&mut c, &keys, "lots").await.unwrap();
    let err = store::reserve_raw(&mut c, &keys, "1")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("STOCK_NOT_NUMBER"), "{err}");

    // After SCRIPT FLUSH the next call reloads the script transparently.
    store::init_stock(&mut c, &keys, 1).await.unwrap();
    store::flush_script_cache(&mut c).await.unwrap();
    assert_eq!(
        store::reserve_raw(&mut c, &keys, "1").await.unwrap(),
        reply(true, 1, 0)
    );
    // The connection is still fine after all those errors.
    store::ping(&mut c).await.unwrap();
}

#[test]
fn reserve_lua_header_documents_its_contract() {
    for needle in [
        "KEYS[1]",
        "ARGV[1]",
        "Returns",
        "{1, stock_before, stock_after}",
        "INVALID_QTY",
        "STOCK_NOT_NUMBER",
    ] {
        assert!(
            RESERVE_LUA.contains(needle),
            "reserve.lua header lacks {needle}"
        );
    }
}
