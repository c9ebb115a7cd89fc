//! Step-through mode's frames: the session's whole state, each buyer, and each command that
//! went through with Redis's reply, typed.
//!
//! A client reads what a step did from [`RedisCall`] and [`RedisReply`] (a `nil`, an
//! integer, a script's array) instead of parsing the text. The text a person reads
//! (`MULTI · DECRBY stock 1 · EXEC`, `[1, 1, 0]`) is their [`Display`](fmt::Display), written
//! here once: the server fills the older `command`, `reply` and `next` strings from it, and a
//! page shows it, so the two can never disagree.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{BuyerOutcome, RunConfig};

/// Step-through mode's whole state: small (at most 4 buyers), so every answer carries all of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepState {
    /// Identifies the step session (its keys carry it as their hash tag).
    pub run_id: String,
    /// The knobs in use (`buyers` is the number of buyers standing ready).
    pub config: RunConfig,
    /// Each buyer: the command it will send next, or how it ended.
    pub buyers: Vec<StepBuyer>,
    /// Every command that went through, in the order Redis ran them (exact: each was sent
    /// alone, on a click).
    pub log: Vec<StepCommand>,
    /// The stock as Redis holds it now (read after the last command), or `None` if the key
    /// is gone.
    pub stock: Option<i64>,
    /// Units sold so far by buyers that finished `reserved`.
    pub units_sold: u64,
}

/// One buyer in step-through mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepBuyer {
    /// 1-based buyer number.
    pub buyer: u32,
    /// `next_call` as a person reads it (`DECRBY stock 1`); `None` while it is between
    /// commands or when it is done.
    pub next: Option<String>,
    /// The command it will send on its next click; `None` while it is between commands or
    /// when it is done. (Absent from a server older than this field: `None`.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_call: Option<RedisCall>,
    /// How it ended, once it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<BuyerOutcome>,
}

/// One command in step-through mode's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepCommand {
    /// Who sent it.
    pub buyer: u32,
    /// `call` as a person reads it, e.g. `GET stock`.
    pub command: String,
    /// `answer` as a person reads it, e.g. `1`, `nil`, `[1, 1, 0]`.
    pub reply: String,
    /// What was sent.
    pub call: RedisCall,
    /// What Redis answered.
    pub answer: RedisReply,
}

impl StepCommand {
    /// The log entry for `call` answered by `answer`, its text filled in from them.
    pub fn new(buyer: u32, call: RedisCall, answer: RedisReply) -> Self {
        StepCommand {
            buyer,
            command: call.to_string(),
            reply: answer.to_string(),
            call,
            answer,
        }
    }
}

/// What one click sent: one command, or several in one request.
///
/// On the wire, one key names the kind: `{"command":{"name":"GET","args":[{"key":"stock"}]}}`,
/// `{"transaction":[…]}` (sent as `MULTI`, the commands, `EXEC`), `{"pipeline":[…]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RedisCall {
    /// A single command.
    Command(RedisCommand),
    /// `MULTI`, these commands, `EXEC`, in one request: the reply is `EXEC`'s.
    Transaction(Vec<RedisCommand>),
    /// These commands in one request, no transaction: the reply lists each one's.
    Pipeline(Vec<RedisCommand>),
}

impl RedisCall {
    /// The command, when the call is a single one.
    pub fn single(&self) -> Option<&RedisCommand> {
        match self {
            RedisCall::Command(c) => Some(c),
            RedisCall::Transaction(_) | RedisCall::Pipeline(_) => None,
        }
    }
}

impl From<RedisCommand> for RedisCall {
    fn from(c: RedisCommand) -> Self {
        RedisCall::Command(c)
    }
}

/// `GET stock`; `MULTI · DECRBY stock 1 · EXEC`; `GET stock:b0 · GET stock:b1`.
impl fmt::Display for RedisCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (open, commands, close) = match self {
            RedisCall::Command(c) => return c.fmt(f),
            RedisCall::Transaction(cs) => (Some("MULTI"), cs, Some("EXEC")),
            RedisCall::Pipeline(cs) => (None, cs, None),
        };
        let parts: Vec<String> = open
            .map(str::to_string)
            .into_iter()
            .chain(commands.iter().map(RedisCommand::to_string))
            .chain(close.map(str::to_string))
            .collect();
        f.write_str(&parts.join(" · "))
    }
}

/// One Redis command: its name and its arguments, each said for what it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedisCommand {
    /// The command's name as sent, e.g. `GET`, `EVALSHA`.
    pub name: String,
    /// Its arguments, in order.
    pub args: Vec<CommandArg>,
}

impl RedisCommand {
    /// `name` with no arguments yet.
    pub fn new(name: impl Into<String>) -> Self {
        RedisCommand {
            name: name.into(),
            args: Vec::new(),
        }
    }

    /// Add a key (the run's prefix dropped).
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.args.push(CommandArg::Key(key.into()));
        self
    }

    /// Add an integer.
    pub fn int(mut self, n: i64) -> Self {
        self.args.push(CommandArg::Integer(n));
        self
    }

    /// Add a script, by its file name.
    pub fn script(mut self, file: impl Into<String>) -> Self {
        self.args.push(CommandArg::Script(file.into()));
        self
    }

    /// Add any other word (an option such as `NX`, a lock's token).
    pub fn word(mut self, word: impl Into<String>) -> Self {
        self.args.push(CommandArg::Word(word.into()));
        self
    }

    /// True when `word` is one of its plain-word arguments (an option such as `NX`).
    pub fn has_word(&self, word: &str) -> bool {
        self.args
            .iter()
            .any(|a| matches!(a, CommandArg::Word(w) if w == word))
    }
}

/// `DECRBY stock 1`, `EVALSHA reserve.lua 1 stock 1`.
impl fmt::Display for RedisCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        for a in &self.args {
            write!(f, " {a}")?;
        }
        Ok(())
    }
}

/// One argument of a command. On the wire: `{"key":"stock"}`, `{"integer":1}`,
/// `{"script":"reserve.lua"}`, `{"word":"NX"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandArg {
    /// One of the session's keys, without its run prefix (`oversold:{s-…}:stock` is `stock`).
    Key(String),
    /// A whole number, as Redis reads a canonical integer argument.
    Integer(i64),
    /// One of the server's Lua scripts, by file name (sent as its SHA1 or its whole body).
    Script(String),
    /// Anything else: an option (`NX`, `PX`, `KEEPTTL`), a lock's token.
    Word(String),
}

impl fmt::Display for CommandArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandArg::Integer(n) => n.fmt(f),
            CommandArg::Key(s) | CommandArg::Script(s) | CommandArg::Word(s) => f.write_str(s),
        }
    }
}

/// Redis's reply to one call. On the wire: `"nil"`, `{"integer":-1}`, `{"status":"OK"}`,
/// `{"text":"…"}`, `{"array":[…]}`, `{"error":"…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RedisReply {
    /// No value: a missing key, a `SET NX` that found the key taken, a discarded `EXEC`.
    Nil,
    /// A whole number: an integer reply (`DECRBY`), or a string Redis holds as a canonical
    /// integer (a counter read with `GET`: Redis stores it as a string, and `INCRBY` and
    /// `DECRBY` treat it as the number it spells).
    Integer(i64),
    /// A status reply, e.g. `OK`.
    Status(String),
    /// Any other string.
    Text(String),
    /// A list: a script's result (`[1, 1, 0]`), `EXEC`'s replies, a pipeline's.
    Array(Vec<RedisReply>),
    /// An error reply, or the request failing (`CROSSSLOT …`, a timeout).
    Error(String),
}

impl RedisReply {
    /// The number, for an integer reply.
    pub fn integer(&self) -> Option<i64> {
        match self {
            RedisReply::Integer(n) => Some(*n),
            _ => None,
        }
    }
}

/// `nil`, `7`, `OK`, `[1, 1, 0]`.
impl fmt::Display for RedisReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RedisReply::Nil => f.write_str("nil"),
            RedisReply::Integer(n) => n.fmt(f),
            RedisReply::Status(s) | RedisReply::Text(s) | RedisReply::Error(s) => f.write_str(s),
            RedisReply::Array(items) => {
                let inner: Vec<String> = items.iter().map(RedisReply::to_string).collect();
                write!(f, "[{}]", inner.join(", "))
            }
        }
    }
}
