//! The workshop judge's Redis commands: a student's script loaded and called with raw
//! replies (the judge compares them with the contract's), plain key writes and reads for a
//! check's setup and read-back, markers on the `MONITOR` tape, and `SLOWLOG` for how long a
//! call held Redis. Only ever sent to a sandbox (see `workshop::sandbox`).

use redis::Value;

use super::{RedisConn, StoreError};

/// What a call of the script answered: a value, or an error reply's text.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptReply {
    /// A reply.
    Value(Value),
    /// An error reply: its code and text, e.g. `"BAD_INPUT qty must be…"`.
    Error(String),
}

/// `SCRIPT LOAD`: compile `source` without running it. `Ok(Err(text))` when it does not
/// compile.
pub async fn load(
    conn: &mut RedisConn,
    source: &str,
) -> Result<Result<String, String>, StoreError> {
    let cmd = redis::cmd("SCRIPT").arg("LOAD").arg(source).to_owned();
    match conn.query::<String>("SCRIPT LOAD", &cmd).await {
        Ok(sha) => Ok(Ok(sha)),
        Err(e) if e.reply_code().is_some() => Ok(Err(error_text(&e))),
        Err(e) => Err(e),
    }
}

/// `EVALSHA sha keys args`, sent again as `EVAL` after `NOSCRIPT`. An error reply is a
/// [`ScriptReply::Error`]; only a lost connection is an `Err`.
pub async fn call(
    conn: &mut RedisConn,
    sha: &str,
    source: &str,
    keys: &[String],
    args: &[String],
) -> Result<ScriptReply, StoreError> {
    let by_sha = redis::cmd("EVALSHA")
        .arg(sha)
        .arg(keys.len())
        .arg(keys)
        .arg(args)
        .to_owned();
    match conn.query::<Value>("EVALSHA exercise", &by_sha).await {
        Ok(v) => Ok(ScriptReply::Value(v)),
        Err(e) if e.reply_code() == Some("NOSCRIPT") => {
            let whole = redis::cmd("EVAL")
                .arg(source)
                .arg(keys.len())
                .arg(keys)
                .arg(args)
                .to_owned();
            match conn.query::<Value>("EVAL exercise", &whole).await {
                Ok(v) => Ok(ScriptReply::Value(v)),
                Err(e) if e.reply_code().is_some() => Ok(ScriptReply::Error(error_text(&e))),
                Err(e) => Err(e),
            }
        }
        Err(e) if e.reply_code().is_some() => Ok(ScriptReply::Error(error_text(&e))),
        Err(e) => Err(e),
    }
}

fn error_text(e: &StoreError) -> String {
    match (e.reply_code(), e.reply_detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        (Some(code), None) => code.to_string(),
        _ => e.short(),
    }
}

/// `PING message`: a marker on the `MONITOR` tape (which connection is which, where a
/// crowd ends).
pub async fn mark(conn: &mut RedisConn, message: &str) -> Result<(), StoreError> {
    let cmd = redis::cmd("PING").arg(message).to_owned();
    conn.query::<String>("PING marker", &cmd).await.map(drop)
}

/// `FLUSHALL` on a sandbox between crowds (the sandbox holds nothing else).
pub async fn wipe(conn: &mut RedisConn) -> Result<(), StoreError> {
    conn.query::<()>("FLUSHALL", &redis::cmd("FLUSHALL")).await
}

/// A check's setup: each key to a string, or a list of `n` units.
pub async fn set(conn: &mut RedisConn, key: &str, value: &str) -> Result<(), StoreError> {
    let cmd = redis::cmd("SET").arg(key).arg(value).to_owned();
    conn.query("SET setup", &cmd).await
}

/// A list of `n` unit ids (`u1` … `un`) at `key`, for the exercises that keep stock as units.
pub async fn units(conn: &mut RedisConn, key: &str, n: u32) -> Result<(), StoreError> {
    // In chunks: one RPUSH of 100,000 arguments is a large request.
    let mut next = 1;
    while next <= n {
        let last = (next + 4_999).min(n);
        let ids: Vec<String> = (next..=last).map(|i| format!("u{i}")).collect();
        let cmd = redis::cmd("RPUSH").arg(key).arg(ids).to_owned();
        conn.query::<i64>("RPUSH setup", &cmd).await?;
        next = last + 1;
    }
    Ok(())
}

/// A key read back as text (`None`: missing), whatever its type: a string as is, a list's
/// length as `len=N`, a hash as `field=value …`.
pub async fn read(conn: &mut RedisConn, key: &str) -> Result<Option<String>, StoreError> {
    let kind: String = conn.query("TYPE", redis::cmd("TYPE").arg(key)).await?;
    Ok(match kind.as_str() {
        "none" => None,
        "string" => conn.query("GET", redis::cmd("GET").arg(key)).await?,
        "list" => {
            let n: i64 = conn.query("LLEN", redis::cmd("LLEN").arg(key)).await?;
            Some(format!("len={n}"))
        }
        "hash" => {
            let all: Vec<(String, String)> = conn
                .query("HGETALL", redis::cmd("HGETALL").arg(key))
                .await?;
            Some(
                all.iter()
                    .map(|(f, v)| format!("{f}={v}"))
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        }
        other => Some(format!("a {other}")),
    })
}

/// Log every command from now on in `SLOWLOG`, emptied.
pub async fn slowlog_everything(conn: &mut RedisConn) -> Result<(), StoreError> {
    let cmd = redis::cmd("CONFIG")
        .arg("SET")
        .arg("slowlog-log-slower-than")
        .arg(0)
        .arg("slowlog-max-len")
        .arg(4_096)
        .to_owned();
    conn.query::<()>("CONFIG SET slowlog", &cmd).await?;
    conn.query::<()>("SLOWLOG RESET", redis::cmd("SLOWLOG").arg("RESET"))
        .await
}

/// The longest `EVALSHA`/`EVAL` in `SLOWLOG` since it was emptied, µs.
pub async fn longest_call_us(conn: &mut RedisConn) -> Result<u64, StoreError> {
    Ok(call_times_us(conn).await?.first().copied().unwrap_or(0))
}

/// How long each `EVALSHA`/`EVAL` in `SLOWLOG` since it was emptied held Redis, µs, the
/// longest first.
pub async fn call_times_us(conn: &mut RedisConn) -> Result<Vec<u64>, StoreError> {
    let cmd = redis::cmd("SLOWLOG").arg("GET").arg(4_096).to_owned();
    let entries: Value = conn.query("SLOWLOG GET", &cmd).await?;
    let Value::Array(entries) = entries else {
        return Ok(Vec::new());
    };
    let mut times = Vec::with_capacity(entries.len());
    for entry in entries {
        // [id, unix time, µs, [command, args…], client, name]
        let Value::Array(fields) = entry else {
            continue;
        };
        let (Some(Value::Int(us)), Some(Value::Array(argv))) = (fields.get(2), fields.get(3))
        else {
            continue;
        };
        let name = argv.first().and_then(|v| match v {
            Value::BulkString(b) => Some(String::from_utf8_lossy(b).to_ascii_uppercase()),
            _ => None,
        });
        if matches!(name.as_deref(), Some("EVALSHA" | "EVAL")) {
            times.push(u64::try_from(*us).unwrap_or(0));
        }
    }
    times.sort_unstable_by(|a, b| b.cmp(a));
    Ok(times)
}
