//! How a strategy describes itself: every word the page shows about it travels in `hello`.
//!
//! The server declares each strategy's [`StrategyAbout`] once, as a `const` in the strategy's
//! own file (that is why the text fields are `Cow<'static, str>`: borrowed in the server's
//! constants, owned once a client has decoded them). The page holds no per-strategy text.

use std::borrow::Cow;
use std::fmt;

use crate::wire_names::wire_names;

use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeSeed, Deserializer, Error as _, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::{Scenario, TapeRule};

/// Text that is `&'static str` in the server's constants and a `String` after decoding.
pub type Text = Cow<'static, str>;

/// One strategy a client may pick, with its self-description and whether it can run here.
/// Read by [`read_info`], not by serde's `flatten` (see there).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StrategyInfo {
    /// Everything the strategy says about itself (flattened: `name`, `label`, ... sit at the
    /// top level of the JSON object, as in protocol version 1).
    #[serde(flatten)]
    pub about: StrategyAbout,
    /// False when the strategy needs something this server lacks (say, PostgreSQL).
    pub available: bool,
    /// Why it is unavailable, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable_reason: Option<String>,
    /// Why step-through (one command per click) cannot step it, when it cannot: the page
    /// leaves such a strategy out of its step picker rather than offer what the server refuses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_refusal: Option<String>,
}

impl StrategyInfo {
    /// The `hello` entry of a strategy that needs nothing this server might lack.
    pub fn always_available(about: StrategyAbout) -> Self {
        StrategyInfo {
            about,
            available: true,
            unavailable_reason: None,
            step_refusal: None,
        }
    }
}

impl<'de> Deserialize<'de> for StrategyInfo {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (about, availability) = deserializer.deserialize_map(InfoVisitor)?;
        let available = availability
            .available
            .ok_or_else(|| D::Error::missing_field("available"))?;
        Ok(StrategyInfo {
            about,
            available,
            unavailable_reason: availability.unavailable_reason,
            step_refusal: availability.step_refusal,
        })
    }
}

/// A saved run's strategy: a [`StrategyAbout`] read by the same reader as `hello`'s
/// [`StrategyInfo`] (a page then carries one reader of a strategy's words, not two).
#[derive(Debug, Clone, PartialEq)]
pub struct AboutOnly(pub StrategyAbout);

impl<'de> Deserialize<'de> for AboutOnly {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (about, _) = deserializer.deserialize_map(InfoVisitor)?;
        Ok(AboutOnly(about))
    }
}

/// The three keys a [`StrategyInfo`] adds to its [`StrategyAbout`]'s.
#[derive(Default)]
struct Availability {
    available: Option<bool>,
    unavailable_reason: Option<String>,
    step_refusal: Option<String>,
}

/// Reads a strategy's object in one pass: [`StrategyAbout`]'s own derived reader sees every
/// key except the three [`Availability`] keys, which [`Peel`] takes out on the way. serde's
/// `flatten` would first copy the object into an in-memory tree and read `StrategyAbout` out
/// of that, a second reader of every field type in a page's wasm.
struct InfoVisitor;

impl<'de> Visitor<'de> for InfoVisitor {
    type Value = (StrategyAbout, Availability);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a strategy's object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let mut peel = Peel {
            map,
            taken: Availability::default(),
        };
        let about = StrategyAbout::deserialize(MapAccessDeserializer::new(&mut peel))?;
        // StrategyAbout stops at the object's end, so every key has been seen.
        Ok((about, peel.taken))
    }
}

/// A map with the [`Availability`] keys read into `taken` and skipped.
struct Peel<A> {
    map: A,
    taken: Availability,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Peel<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        while let Some(key) = self.map.next_key::<Cow<'de, str>>()? {
            match &*key {
                "available" => self.taken.available = Some(self.map.next_value()?),
                "unavailable_reason" => self.taken.unavailable_reason = self.map.next_value()?,
                "step_refusal" => self.taken.step_refusal = self.map.next_value()?,
                _ => return seed.deserialize(key.into_deserializer()).map(Some),
            }
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// A strategy's description, written once in its file on the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StrategyAbout {
    /// The name to send in `config.strategy`, e.g. `"naive"`.
    pub name: Text,
    /// A button label, e.g. `"Naive (GET, then DECRBY)"`.
    pub label: Text,
    /// A short name for prose and tables, e.g. `"Naive"`.
    pub short_label: Text,
    /// One line on what it does.
    pub description: Text,
    /// Whether it goes wrong by design: oversells, loses updates, or (a checkout without
    /// holds) leaks units and takes a resent request twice. The page colours it as a warning
    /// everywhere it shows it.
    pub unsafe_by_design: bool,
    /// What kind of answer to the race it is.
    pub category: Category,
    /// Featured strategies get the big buttons: the two the talk is about.
    pub featured: bool,
    /// The files under `lua/` it runs, its main one first (empty when it runs none).
    pub scripts: Cow<'static, [Text]>,
    /// The "why" panel.
    pub explanation: Explanation,
    /// How its replies put its commands back in Redis's order (see [`crate::tape`]);
    /// [`TapeRule::Story`] for checkout strategies.
    pub tape: TapeRule,
    /// The scenario it runs in: `race` strategies are in `hello.strategies`, `checkout`
    /// ones in `hello.checkout_strategies` (absent in version 2: `race`).
    #[serde(default)]
    pub scenario: Scenario,
}

/// The family a strategy belongs to, shown as a small badge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    /// Reads, decides in the app, then writes: the race itself.
    CheckThenWrite,
    /// One atomic command or script does the check and the write.
    Atomic,
    /// Detects a conflicting write at commit time and retries (WATCH/MULTI/EXEC).
    Optimistic,
    /// Makes buyers take turns through a lock.
    Lock,
    /// A relational database's row lock.
    Database,
    /// The stock split over several counters, each taken atomically.
    Sharded,
    /// Checkout: reservations are holds that expire, confirmed or released exactly once.
    Holds,
    /// Several steps, each atomic, with the ones already done undone when a later one fails.
    Saga,
}

wire_names! { Category {
    CheckThenWrite = "check_then_write",
    Atomic = "atomic",
    Optimistic = "optimistic",
    Lock = "lock",
    Database = "database",
    Sharded = "sharded",
    Holds = "holds",
    Saga = "saga",
} }

impl Category {
    /// The badge text, e.g. `"check-then-write"` (the wire name is `"check_then_write"`).
    pub fn badge(self) -> &'static str {
        match self {
            Category::CheckThenWrite => "check-then-write",
            Category::Atomic => "atomic",
            Category::Optimistic => "optimistic",
            Category::Lock => "lock",
            Category::Database => "database",
            Category::Sharded => "sharded",
            Category::Holds => "holds",
            Category::Saga => "saga",
        }
    }
}

/// Why a strategy does (or does not) oversell, in plain words and one interleaving.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// The panel heading, e.g. `"Why check-then-write oversells"`.
    pub title: Text,
    /// What a buyer does, step by step.
    pub how: Text,
    /// Why that is (or is not) safe.
    pub why: Text,
    /// What it costs, or the catch.
    pub cost: Text,
    /// Two buyers racing for the last unit, one line per command.
    pub steps: Cow<'static, [Step]>,
}

/// One line of an interleaving: who sent what, what came back, what the buyer concluded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The buyer, e.g. `"buyer #7"`.
    pub who: Text,
    /// The command and its reply, e.g. `"GET stock → 1"`.
    pub command: Text,
    /// What it means for the buyer.
    pub note: Text,
    /// Which buyer (for colour), or the step where it goes wrong.
    pub tone: Tone,
}

/// The colour of a [`Step`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// The first buyer.
    A,
    /// The second buyer.
    B,
    /// The step where the race does its damage.
    Bad,
}

wire_names! { Tone {
    A = "a",
    B = "b",
    Bad = "bad",
} }

/// `Cow::Borrowed`, usable in a `const` (what the server's strategy files are written with).
pub const fn text(s: &'static str) -> Text {
    Cow::Borrowed(s)
}

/// One [`Step`], usable in a `const`.
pub const fn step(
    who: &'static str,
    command: &'static str,
    note: &'static str,
    tone: Tone,
) -> Step {
    Step {
        who: text(who),
        command: text(command),
        note: text(note),
        tone,
    }
}
