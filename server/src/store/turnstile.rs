//! A turnstile on one connection, for step-through mode: every command the strategy's real
//! code sends waits at the turnstile until the visitor lets it through, one command per click.
//!
//! Nothing about a strategy changes in step-through mode: its own `buy` runs, on connections
//! that carry a turnstile. So what the visitor steps through is exactly what a race sends,
//! retries and polls included, and every reply is Redis's own.

use oversold_protocol::{CommandArg, RedisCall, RedisCommand, RedisReply};
use redis::Value;
use tokio::sync::{Semaphore, mpsc, watch};

use super::scripts;

/// Where a buyer stands at its turnstile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn {
    /// Between commands: deciding in the app, sleeping before a retry, or not started.
    Busy,
    /// Waiting to send this call.
    Waiting(RedisCall),
}

/// One call that went through, and Redis's reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passed {
    /// What was sent, e.g. `DECRBY stock 1`.
    pub call: RedisCall,
    /// The reply, e.g. `-1`, `nil`, `[1, 1, 0]`, or the request's error.
    pub answer: RedisReply,
}

/// The turnstile of one buyer's connection.
pub struct Turnstile {
    buyer: u32,
    turn: watch::Sender<Turn>,
    go: Semaphore,
    passed: mpsc::UnboundedSender<(u32, Passed)>,
}

impl Turnstile {
    /// A closed turnstile for `buyer`; what passes it goes to `log`, tagged with the buyer,
    /// before the reply reaches the buyer's code (so the log is never behind the buyer).
    pub fn new(buyer: u32, log: mpsc::UnboundedSender<(u32, Passed)>) -> Turnstile {
        Turnstile {
            buyer,
            turn: watch::Sender::new(Turn::Busy),
            go: Semaphore::new(0),
            passed: log,
        }
    }

    /// Watch where the buyer stands.
    pub fn turn(&self) -> watch::Receiver<Turn> {
        self.turn.subscribe()
    }

    /// Let exactly one command through.
    pub fn let_one_through(&self) {
        self.go.add_permits(1);
    }

    /// Called by the connection before it sends `call`: wait for a click.
    pub(super) async fn wait(&self, call: RedisCall) {
        self.turn.send_replace(Turn::Waiting(call));
        if let Ok(permit) = self.go.acquire().await {
            permit.forget();
        }
        self.turn.send_replace(Turn::Busy);
    }

    /// Called by the connection once the reply is in.
    pub(super) fn passed(&self, call: RedisCall, answer: RedisReply) {
        let _ = self.passed.send((self.buyer, Passed { call, answer }));
    }
}

/// A command as a person reads it, typed: the run's key prefix dropped
/// (`oversold:{r-1}:stock` is the key `stock`), a script called by its file name instead of
/// its SHA1 or its whole body, a canonical integer as a number.
pub fn command(args: impl IntoIterator<Item = Vec<u8>>) -> RedisCommand {
    let mut words = args
        .into_iter()
        .map(|a| String::from_utf8_lossy(&a).into_owned());
    let name = words.next().unwrap_or_default();
    RedisCommand {
        name,
        args: words.map(|w| arg(&w)).collect(),
    }
}

/// One argument, said for what it is.
fn arg(w: &str) -> CommandArg {
    if let Some(file) = scripts::all()
        .into_iter()
        .find(|f| f.sha() == w || f.source == w)
    {
        return CommandArg::Script(file.file.to_string());
    }
    match w.split_once("}:") {
        Some((prefix, key)) if prefix.starts_with("oversold:{") => CommandArg::Key(key.into()),
        _ => match canonical_integer(w) {
            Some(n) => CommandArg::Integer(n),
            None => CommandArg::Word(w.into()),
        },
    }
}

/// `w` as a number when Redis itself would write it so (`7`, `-1`; not `07`, `+1` or `-0`),
/// so the number's text is `w` again.
fn canonical_integer(w: &str) -> Option<i64> {
    w.parse::<i64>().ok().filter(|n| n.to_string() == w)
}

/// A reply, typed: `OK`, `nil`, `7`, `[1, 1, 0]`. A string that is a canonical integer (a
/// counter read with `GET`) is a number: Redis keeps counters as strings.
pub fn reply(value: &Value) -> RedisReply {
    match value {
        Value::Nil => RedisReply::Nil,
        Value::Okay => RedisReply::Status("OK".into()),
        Value::Int(n) => RedisReply::Integer(*n),
        Value::SimpleString(s) => RedisReply::Status(s.clone()),
        Value::BulkString(b) => {
            let text = String::from_utf8_lossy(b).into_owned();
            match canonical_integer(&text) {
                Some(n) => RedisReply::Integer(n),
                None => RedisReply::Text(text),
            }
        }
        Value::Array(items) | Value::Set(items) => {
            RedisReply::Array(items.iter().map(reply).collect())
        }
        Value::ServerError(e) => {
            RedisReply::Error(format!("{} {}", e.code(), e.details().unwrap_or("")))
        }
        other => RedisReply::Text(format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_read_like_the_article() {
        let args = ["DECRBY", "oversold:{r-1a}:stock", "1"].map(|s| s.as_bytes().to_vec());
        let decr = command(args);
        assert_eq!(decr, RedisCommand::new("DECRBY").key("stock").int(1));
        assert_eq!(decr.to_string(), "DECRBY stock 1");
        let sha = scripts::RESERVE.sha().to_string();
        let args =
            ["EVALSHA", &sha, "1", "oversold:{r-1a}:stock", "2"].map(|s| s.as_bytes().to_vec());
        assert_eq!(command(args).to_string(), "EVALSHA reserve.lua 1 stock 2");
        let args = ["SET", "oversold:{r-1a}:lock", "0ab1", "NX", "PX", "007"]
            .map(|s| s.as_bytes().to_vec());
        let set = command(args);
        assert_eq!(
            set.to_string(),
            "SET lock 0ab1 NX PX 007",
            "as sent, byte for byte"
        );
        assert_eq!(set.args[4], CommandArg::Word("007".into()));
        assert_eq!(
            reply(&Value::Array(vec![
                Value::Int(1),
                Value::Int(1),
                Value::Int(0)
            ]))
            .to_string(),
            "[1, 1, 0]"
        );
        assert_eq!(reply(&Value::Nil), RedisReply::Nil);
        assert_eq!(
            reply(&Value::BulkString(b"-3".to_vec())),
            RedisReply::Integer(-3)
        );
        assert_eq!(
            reply(&Value::BulkString(b"03".to_vec())),
            RedisReply::Text("03".into())
        );
        assert_eq!(reply(&Value::Okay).to_string(), "OK");
    }
}
