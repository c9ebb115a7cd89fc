//! The exercises: one folder each (its words, its starter and reference scripts, and its
//! rules: the crowds it is judged on and the contract as a model), one line in [`all`].
//!
//! The judge never reads a script's text to decide: it runs the submission and compares
//! what Redis answered, and what the keys hold after, with the model. So any correct script
//! passes, however it is written.

mod cart;
mod cluster_tags;
mod confirm;
mod counter;
mod customer_limit;
mod hold;
mod holds;
mod idempotent;
mod quantity;
mod reserve;
mod short_script;

pub use counter::canonical;

use oversold_protocol::workshop::{ExerciseInfo, VerdictCode};
use rand_chacha::ChaCha8Rng;

/// One exercise.
pub struct Exercise {
    /// Stable id, used in links, the CLI and `check_solution`.
    pub id: &'static str,
    /// A short title.
    pub title: &'static str,
    /// What the shop needs.
    pub story: &'static str,
    /// The broken version a beginner would write.
    pub starter: &'static str,
    /// A correct solution, kept on the server (never sent to a client).
    pub reference: &'static str,
    /// Hints, shown one at a time.
    pub hints: &'static [&'static str],
    /// How it is judged.
    pub rules: &'static dyn Rules,
}

impl Exercise {
    /// The contract: the reference's header from its `KEYS` line to the code (the starter
    /// carries the same header; a test holds them equal).
    pub fn contract(&self) -> String {
        header(self.reference)
    }

    /// What a client may see of it (no reference).
    pub fn info(&self) -> ExerciseInfo {
        ExerciseInfo {
            id: self.id.into(),
            title: self.title.into(),
            story: self.story.into(),
            contract: self.contract(),
            starter: self.starter.into(),
            hints: self.hints.iter().map(|h| h.to_string()).collect(),
        }
    }
}

/// Every exercise, in the order a workshop takes them.
pub fn all() -> [&'static Exercise; 9] {
    [
        &reserve::EXERCISE,
        &quantity::EXERCISE,
        &idempotent::EXERCISE,
        &customer_limit::EXERCISE,
        &hold::EXERCISE,
        &confirm::EXERCISE,
        &cart::EXERCISE,
        &short_script::EXERCISE,
        &cluster_tags::EXERCISE,
    ]
}

/// The exercise called `id`.
pub fn find(id: &str) -> Option<&'static Exercise> {
    all().into_iter().find(|e| e.id == id)
}

/// A script's contract header: its comment lines from the first `KEYS` (or `ARGV`) line
/// to the first line of code, without the `-- `.
pub fn header(source: &str) -> String {
    source
        .lines()
        .skip_while(|l| !(l.starts_with("-- KEYS") || l.starts_with("-- ARGV")))
        .take_while(|l| l.starts_with("--"))
        .map(|l| {
            l.trim_start_matches("--")
                .strip_prefix(' ')
                .unwrap_or("")
                .trim_end()
        })
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_string()
}

/// The longest pattern a `-- keys:` line may give.
pub const MAX_PATTERN_BYTES: usize = 64;

/// The keys a submission of an exercise judged on a cluster ([`Rules::on_cluster`]) names:
/// its first line that starts `-- keys:` gives a pattern, and each of [`Rules::keys`] (a
/// product's id) put where the pattern says `%sku`, after `prefix`, is one key. `Err` says
/// what is wrong with the line, in a student's words.
pub fn chosen_keys(exercise: &Exercise, source: &str, prefix: &str) -> Result<Vec<String>, String> {
    let line = source
        .lines()
        .find_map(|l| l.trim_end().strip_prefix("-- keys:"))
        .ok_or("it needs a line `-- keys: PATTERN` before the code, with %sku in PATTERN")?;
    let pattern = line.trim();
    if pattern.is_empty() || pattern.len() > MAX_PATTERN_BYTES {
        return Err(format!(
            "the pattern after `-- keys:` must be 1 to {MAX_PATTERN_BYTES} characters"
        ));
    }
    if !pattern.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("the pattern after `-- keys:` may hold letters, digits and punctuation                     only, no spaces"
            .into());
    }
    if !pattern.contains("%sku") {
        return Err(format!(
            "the pattern {pattern:?} has no %sku, so every product would get the same key"
        ));
    }
    Ok(exercise
        .rules
        .keys()
        .iter()
        .map(|sku| format!("{prefix}{}", pattern.replace("%sku", sku)))
        .collect())
}

/// What a key holds before the first call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// Key `k` (an index into [`Rules::keys`]) set to a string.
    Set(usize, String),
    /// Key `k` a list of this many unit ids.
    Units(usize, u32),
}

/// One call of a crowd: who makes it, which script it runs, and its `ARGV` (its `KEYS` are
/// always all the keys).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallSpec {
    /// The buyer (1-based), or 0 for the reaper, whose calls belong to no buyer.
    pub buyer: u32,
    /// `ARGV`.
    pub args: Vec<String>,
    /// Whose script runs it.
    pub script: Script,
}

/// Which script a call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    /// The one the student submitted (or the reference, when the judge times it).
    Submitted,
    /// The shop's own script ([`Rules::shop_script`]), raced beside the submission the way a
    /// resend is raced beside its original: the same crowds, connections and order.
    Shop,
}

/// A seeded crowd: the setup and the calls, in the order they are sent (a concurrent run
/// spreads them over several connections, and Redis decides the order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crowd {
    /// What the keys hold first.
    pub setup: Vec<Write>,
    /// The calls.
    pub calls: Vec<CallSpec>,
}

/// How big a crowd to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// A handful of calls: quick, and easy to read when it breaks.
    Small,
    /// Dozens of calls, for the concurrent runs and the figures.
    Large,
}

/// The contract's answer to one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// An integer reply.
    Int(i64),
    /// An error reply whose text starts with this.
    Error(&'static str),
}

impl std::fmt::Display for Expected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expected::Int(n) => write!(f, "{n}"),
            Expected::Error(prefix) => write!(f, "an error starting {prefix}"),
        }
    }
}

/// The contract as a model, applied call by call in Redis's order.
pub trait Model: Send {
    /// The contract's reply to a call with `args`, and the model's state moved on.
    fn call(&mut self, args: &[String]) -> Expected;
    /// What each checked key must hold now (by index into [`Rules::keys`]), as
    /// `store::exercise::read` shows it; keys left out are the script's own business.
    fn checked(&self) -> Vec<(usize, Option<String>)>;
}

/// One step where the script and the contract parted.
#[derive(Debug, Clone)]
pub struct Broken {
    /// The call's `ARGV`.
    pub args: Vec<String>,
    /// True when an earlier call had the same `ARGV` (a resend).
    pub repeat: bool,
    /// What the contract answers.
    pub expected: Expected,
    /// What the script answered, in words.
    pub got: String,
    /// True when the script's answer was an error reply.
    pub got_error: bool,
    /// A checked key that holds something else than the contract says, after this call:
    /// `(key name, expected, found)`.
    pub state: Option<(String, Option<String>, Option<String>)>,
    /// Every checked key after this call, as compared: `(index into [`Rules::keys`],
    /// expected, found)`; what a verdict that weighs all the keys together reads (units
    /// counted twice show only in the sum).
    pub checked: Vec<(usize, Option<String>, Option<String>)>,
}

/// How an exercise is judged.
pub trait Rules: Send + Sync {
    /// Its keys' names (each becomes `oversold:{TAG}:NAME`).
    fn keys(&self) -> &'static [&'static str];
    /// A seeded crowd.
    fn crowd(&self, rng: &mut ChaCha8Rng, size: Size) -> Crowd;
    /// A fresh model of the contract after `setup`.
    fn model(&self, setup: &[Write]) -> Box<dyn Model>;
    /// Which verdict a broken step is.
    fn classify(&self, broken: &Broken) -> VerdictCode {
        counter::classify(broken)
    }
    /// The most one call may hold Redis, µs (`None`: only the sandbox's busy threshold).
    fn time_limit_us(&self) -> Option<u64> {
        None
    }
    /// A script of the shop's own that the crowd's [`Script::Shop`] calls run (a reaper the
    /// submission races), or `None` when every call runs the submission.
    fn shop_script(&self) -> Option<&'static str> {
        None
    }
    /// True when the submission names its keys (a `-- keys:` line, [`chosen_keys`]) and is
    /// judged on a Redis Cluster, where names on different slots are refused (`CROSSSLOT`);
    /// [`Rules::keys`] are then the ids the names are built from.
    fn on_cluster(&self) -> bool {
        false
    }
    /// A key's value (as `store::exercise::read` shows it, or as [`Model::checked`] writes
    /// it) in the form the two are compared in: as it is, unless the exercise says
    /// otherwise (a hash's fields come back in Redis's order, not the model's).
    fn normalize(&self, _key: usize, value: Option<String>) -> Option<String> {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exercise_keeps_one_contract_in_both_scripts() {
        let ids: Vec<&str> = all().iter().map(|e| e.id).collect();
        let mut unique = ids.clone();
        unique.dedup();
        assert_eq!(ids, unique, "ids are unique");
        for e in all() {
            let contract = e.contract();
            assert!(contract.starts_with("KEYS[1]"), "{}: {contract}", e.id);
            assert!(contract.contains("Returns"), "{}", e.id);
            assert_eq!(
                header(e.starter),
                contract,
                "{}: the starter's header differs",
                e.id
            );
            assert_ne!(e.starter, e.reference, "{}", e.id);
            assert!(e.hints.len() >= 2, "{}", e.id);
            assert_eq!(find(e.id).map(|f| f.id), Some(e.id));
        }
    }

    #[test]
    fn a_keys_line_names_the_keys_and_only_a_shared_tag_shares_a_slot() {
        use crate::store::cluster::slot_of;
        let ex = find("cluster_tags").unwrap();
        let prefix = crate::store::sandbox::cluster_key_prefix("ws-0a1b2c");
        let slots = |source: &str| -> Vec<u16> {
            let keys = chosen_keys(ex, source, &prefix).unwrap();
            assert!(keys.iter().all(|k| k.starts_with("oversold:ws-0a1b2c:")));
            keys.iter().map(|k| slot_of(k)).collect()
        };
        let one = |v: Vec<u16>| v.windows(2).all(|w| w[0] == w[1]);
        assert!(one(slots(ex.reference)));
        assert!(!one(slots(ex.starter)));
        assert!(!one(slots("-- keys: stock:{%sku}\nreturn 1")));
        assert!(!one(slots("-- keys: {}stock:%sku\nreturn 1")));
        assert!(one(slots("-- keys: {cart}%sku\nreturn 1")));
        assert_eq!(
            chosen_keys(ex, "-- keys: s:{t}:%sku\n", "p:").unwrap(),
            ["p:s:{t}:phone", "p:s:{t}:case", "p:s:{t}:charger"]
        );
        for bad in [
            "return 1",
            "-- keys:\n",
            "-- keys: stock:{shop}\n",
            "-- keys: stock {shop} %sku\n",
        ] {
            assert!(chosen_keys(ex, bad, "p:").is_err(), "{bad}");
        }
        for e in all() {
            assert_eq!(e.rules.on_cluster(), e.id == "cluster_tags", "{}", e.id);
        }
    }

    #[test]
    fn only_an_exercise_with_a_shop_script_races_one() {
        use rand::SeedableRng;
        for e in all() {
            let (mut shop, mut submitted) = (0, 0);
            for seed in 0..20 {
                for size in [Size::Small, Size::Large] {
                    let crowd = e.rules.crowd(&mut ChaCha8Rng::seed_from_u64(seed), size);
                    for call in &crowd.calls {
                        match call.script {
                            Script::Shop => shop += 1,
                            Script::Submitted => submitted += 1,
                        }
                    }
                }
            }
            assert!(submitted > 0, "{}", e.id);
            assert_eq!(shop > 0, e.rules.shop_script().is_some(), "{}", e.id);
        }
    }

    #[test]
    fn what_a_client_sees_never_holds_the_reference() {
        for e in all() {
            let json = serde_json::to_string(&e.info()).unwrap();
            let body = e
                .reference
                .lines()
                .filter(|l| !l.starts_with("--") && l.trim().len() > 12)
                .collect::<Vec<_>>();
            // Lines shared with the starter (a `local qty = …`) are no secret.
            for line in body.iter().filter(|l| !e.starter.contains(**l)) {
                let escaped = serde_json::to_string(line).unwrap();
                assert!(
                    !json.contains(escaped.trim_matches('"')),
                    "{}: {line}",
                    e.id
                );
            }
        }
    }
}
