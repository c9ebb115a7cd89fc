//! The `busy_script` scenario's long jobs: `busy_read.lua`, `busy_write.lua` and the
//! `oversold_busy` library. Their stalls, kills and restarts are proved on whole runs in
//! `tests/it/busy.rs`; here each header line, with short calls.

use oversold::store::scripts;
use redis::aio::MultiplexedConnection;

use super::{Answer, assert_pinned, eval, get, set};
use crate::common::TestRedis;

const MS_ERROR: &str =
    "Errors   \"INVALID_MS ...\"  ARGV[1] is not a canonical integer from 1 to 10000";
const BAD_MS: [&str; 8] = ["0", "10001", "-5", "05", "1.5", " 5", "abc", ""];

async fn fcall(c: &mut MultiplexedConnection, keys: &[&str], ms: &str) -> Answer {
    let mut cmd = redis::cmd("FCALL");
    cmd.arg("oversold_busy_write")
        .arg(keys.len())
        .arg(keys)
        .arg(ms);
    super::answer(cmd.query_async::<redis::Value>(c).await)
}

#[tokio::test]
async fn busy_scripts_headers_are_their_contract() {
    let stock_line = "KEYS[1]  the stock counter, only read.";
    let job_line = "KEYS[2]  the job record: set to Redis's clock in µs when the job starts (expires in 600 s).";
    let ms_line = "ARGV[1]  ms to keep reading, a canonical integer from 1 to 10000.";
    let returns = "Returns  the number of reads made (at least 1).";
    assert_pinned(
        &scripts::BUSY_READ,
        &[
            "KEYS[1]  the stock counter, only read (a missing key reads as nil, which is fine).",
            ms_line,
            returns,
            MS_ERROR,
        ],
    );
    let write_error = format!("{MS_ERROR}; nothing written");
    assert_pinned(
        &scripts::BUSY_WRITE,
        &[stock_line, job_line, ms_line, returns, &write_error],
    );
    assert_pinned(
        &scripts::BUSY_FUNCTION,
        &[
            "Library  oversold_busy",
            "Function oversold_busy_write, called as: FCALL oversold_busy_write 2 <stock key> <job key> <ms>",
            stock_line,
            job_line,
            ms_line,
            returns,
            &write_error,
        ],
    );
    let redis = TestRedis::start();
    let mut c = redis.raw().await;
    let (stock, job) = ("oversold:{contract}:stock", "oversold:{contract}:job");
    set(&mut c, stock, "7").await;
    // busy_read: reads for the time asked, writes nothing (a missing key is fine too).
    for keys in [[stock], ["oversold:{contract}:missing"]] {
        match eval(&mut c, scripts::BUSY_READ.source, &keys, &["5"]).await {
            Answer::Int(n) => assert!(n >= 1, "{n}"),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(get(&mut c, stock).await.as_deref(), Some("7"));
    assert_eq!(get(&mut c, job).await, None);
    // busy_write and the function: the job record first (Redis's clock, with a TTL), then reads.
    redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg(scripts::BUSY_FUNCTION.source)
        .query_async::<String>(&mut c)
        .await
        .unwrap();
    for by_function in [false, true] {
        let answer = if by_function {
            fcall(&mut c, &[stock, job], "5").await
        } else {
            eval(&mut c, scripts::BUSY_WRITE.source, &[stock, job], &["5"]).await
        };
        assert!(matches!(answer, Answer::Int(n) if n >= 1), "{answer:?}");
        let stamp: i64 = get(&mut c, job).await.unwrap().parse().unwrap();
        assert!(stamp > 1_600_000_000_000_000, "{stamp} µs");
        let ttl: i64 = redis::cmd("TTL")
            .arg(job)
            .query_async(&mut c)
            .await
            .unwrap();
        assert!((1..=600).contains(&ttl), "{ttl}");
        redis::cmd("DEL")
            .arg(job)
            .query_async::<()>(&mut c)
            .await
            .unwrap();
        assert_eq!(get(&mut c, stock).await.as_deref(), Some("7"));
    }
    // Errors INVALID_MS, and nothing written.
    for ms in BAD_MS {
        for answer in [
            eval(&mut c, scripts::BUSY_READ.source, &[stock], &[ms]).await,
            eval(&mut c, scripts::BUSY_WRITE.source, &[stock, job], &[ms]).await,
            fcall(&mut c, &[stock, job], ms).await,
        ] {
            assert!(
                matches!(&answer, Answer::Error(code, _) if code == "INVALID_MS"),
                "{ms:?}: {answer:?}"
            );
        }
    }
    assert_eq!(get(&mut c, job).await, None);
}
