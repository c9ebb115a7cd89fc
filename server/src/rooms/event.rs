//! What a room's stream carries: frames for every screen, a frame for one phone, and the
//! requests that travel from whichever process a phone or presenter is on to the process
//! running the sale.

use oversold_protocol::ServerMessage;
use serde::{Deserialize, Serialize};

/// One entry of a room's stream (the JSON in its `e` field).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
pub enum Event {
    /// A frame every screen in the room gets.
    All {
        /// The frame.
        msg: ServerMessage,
    },
    /// A frame for one participant only (its `buy_result`).
    One {
        /// The participant id.
        to: u32,
        /// The frame.
        msg: ServerMessage,
    },
    /// The room's head count changed.
    Presence {
        /// Phones connected.
        phones: u32,
        /// Spectators and presenters connected.
        watchers: u32,
    },
    /// A phone pressed Buy: the sale's process runs it as a buyer.
    Click {
        /// The sale it was meant for.
        sale_id: String,
        /// Who.
        participant: u32,
        /// The phone's id for the click.
        request_id: String,
    },
    /// The presenter closed the sale (from any process).
    Close {
        /// Which sale.
        sale_id: String,
    },
    /// The presenter pressed a chaos button (from any process): the sale's process applies
    /// it to the sale's own Redis, the only Redis chaos may touch.
    Chaos {
        /// Which sale.
        sale_id: String,
        /// Which button.
        action: oversold_protocol::room::ChaosAction,
        /// When it was pressed, µs since the Unix epoch (its place on the sale's timeline).
        pressed_unix_us: u64,
    },
}

/// A stream id, `ms-seq`, as numbers so that ids compare in stream order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct StreamId(pub u64, pub u64);

impl StreamId {
    /// Parse `ms-seq`; `None` for anything else.
    pub fn parse(s: &str) -> Option<Self> {
        let (ms, seq) = s.split_once('-')?;
        Some(StreamId(ms.parse().ok()?, seq.parse().ok()?))
    }
}

impl std::fmt::Display for StreamId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.0, self.1)
    }
}

/// An event as read back, with its id.
#[derive(Debug, Clone)]
pub struct Stamped {
    /// Its place in the room's stream.
    pub id: StreamId,
    /// What it says.
    pub event: Event,
}

/// Decode stream entries; an entry that does not parse (written by a newer server, say) is
/// skipped with a warning rather than stopping the room.
pub fn decode(entries: Vec<(String, String)>) -> Vec<Stamped> {
    entries
        .into_iter()
        .filter_map(|(id, body)| {
            let id = StreamId::parse(&id)?;
            match serde_json::from_str(&body) {
                Ok(event) => Some(Stamped { id, event }),
                Err(e) => {
                    tracing::warn!(%id, error = %e, "skipping a room event this server cannot read");
                    None
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_order_numerically() {
        let a = StreamId::parse("999-5").unwrap();
        let b = StreamId::parse("1000-0").unwrap();
        assert!(a < b, "string order would say otherwise");
        assert_eq!(b.to_string(), "1000-0");
        assert_eq!(StreamId::parse("x-1"), None);
    }
}
