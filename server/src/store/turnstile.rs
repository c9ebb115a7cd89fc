//! A turnstile on one connection, for step-through mode: every command the strategy's real
//! code sends waits at the turnstile until the visitor lets it through, one command per click.
//!
//! Nothing about a strategy changes in step-through mode: its own `buy` runs, on connections
//! that carry a turnstile. So what the visitor steps through is exactly what a race sends,
//! retries and polls included, and every reply is Redis's own.

use redis::Value;
use tokio::sync::{Semaphore, mpsc, watch};

use super::scripts;

/// Where a buyer stands at its turnstile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn {
    /// Between commands: deciding in the app, sleeping before a retry, or not started.
    Busy,
    /// Waiting to send this command (as a person would read it, e.g. `GET stock`).
    Waiting(String),
}

/// One command that went through, and Redis's reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passed {
    /// The command, e.g. `DECRBY stock 1`.
    pub command: String,
    /// The reply, e.g. `-1`, `nil`, `[1, 1, 0]`, or an error's text.
    pub reply: String,
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

    /// Called by the connection before it sends `command`: wait for a click.
    pub(super) async fn wait(&self, command: String) {
        self.turn.send_replace(Turn::Waiting(command));
        if let Ok(permit) = self.go.acquire().await {
            permit.forget();
        }
        self.turn.send_replace(Turn::Busy);
    }

    /// Called by the connection once the reply is in.
    pub(super) fn passed(&self, command: String, reply: String) {
        let _ = self.passed.send((self.buyer, Passed { command, reply }));
    }
}

/// A command as a person reads it: the run's key prefix dropped (`oversold:{r-1}:stock` is
/// `stock`), a script called by its file name instead of its SHA1 or its whole body.
pub fn describe(args: impl IntoIterator<Item = Vec<u8>>) -> String {
    let words: Vec<String> = args
        .into_iter()
        .map(|a| String::from_utf8_lossy(&a).into_owned())
        .collect();
    words
        .iter()
        .map(|w| {
            if let Some(file) = scripts::all()
                .into_iter()
                .find(|f| f.sha() == w || f.source == w)
            {
                return file.file.to_string();
            }
            match w.split_once("}:") {
                Some((prefix, key)) if prefix.starts_with("oversold:{") => key.to_string(),
                _ => w.clone(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A reply as a person reads it: `OK`, `nil`, `7`, `[1, 1, 0]`.
pub fn show(value: &Value) -> String {
    match value {
        Value::Nil => "nil".into(),
        Value::Okay => "OK".into(),
        Value::Int(n) => n.to_string(),
        Value::SimpleString(s) => s.clone(),
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Array(items) | Value::Set(items) => {
            let inner: Vec<String> = items.iter().map(show).collect();
            format!("[{}]", inner.join(", "))
        }
        Value::ServerError(e) => format!("{} {}", e.code(), e.details().unwrap_or("")),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_read_like_the_article() {
        let args = ["DECRBY", "oversold:{r-1a}:stock", "1"].map(|s| s.as_bytes().to_vec());
        assert_eq!(describe(args), "DECRBY stock 1");
        let sha = scripts::RESERVE.sha().to_string();
        let args =
            ["EVALSHA", &sha, "1", "oversold:{r-1a}:stock", "2"].map(|s| s.as_bytes().to_vec());
        assert_eq!(describe(args), "EVALSHA reserve.lua 1 stock 2");
        assert_eq!(
            show(&Value::Array(vec![
                Value::Int(1),
                Value::Int(1),
                Value::Int(0)
            ])),
            "[1, 1, 0]"
        );
        assert_eq!(show(&Value::Nil), "nil");
    }
}
