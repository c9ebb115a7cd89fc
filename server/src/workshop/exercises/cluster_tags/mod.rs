//! `cluster_tags`: the cart again, on a Redis Cluster, where the student names the keys. A
//! script's keys must hash to one slot, and only a shared hash tag (`{…}`) puts three
//! products' counters there; names without one are refused with `CROSSSLOT` by the master
//! before the script runs. The names come from the submission's `-- keys:` line
//! ([`super::chosen_keys`]); the crowds, model and verdicts are `cart`'s.

use oversold_protocol::workshop::VerdictCode;
use rand_chacha::ChaCha8Rng;

use super::cart::CART;
use super::{Broken, Crowd, Exercise, Model, Rules, Size, Write};

/// The exercise.
pub static EXERCISE: Exercise = Exercise {
    id: "cluster_tags",
    title: "Keys that share a slot",
    story: "The shop moved to a Redis Cluster of three masters. A cart of a phone, a case and \
            a charger is still taken whole or not at all, by one script over the three stock \
            counters, but now you name the counters. A cluster splits keys over 16,384 hash \
            slots, and a script's keys must all sit in one slot: otherwise the master refuses \
            the call with CROSSSLOT before the script runs a line. Your script's first line, \
            `-- keys: PATTERN`, spells a product's counter with %sku where its id goes \
            (`stock:%sku` names stock:phone, stock:case and stock:charger); the judge puts \
            its own prefix oversold:CHECK: in front, and runs your script on a cluster of \
            its own.",
    starter: include_str!("starter.lua"),
    reference: include_str!("reference.lua"),
    hints: &[
        "A key's slot is the CRC16 of its name, mod 16384: stock:phone and stock:case land \
         wherever their names send them.",
        "If a name holds {braces}, only the part between the first { and the next } is \
         hashed: its hash tag.",
        "Give the three names the same tag, around a part they share (not around %sku), \
         e.g. stock:{something}:%sku.",
    ],
    rules: &CLUSTER_TAGS,
};

struct ClusterTags;
static CLUSTER_TAGS: ClusterTags = ClusterTags;

impl Rules for ClusterTags {
    /// The products' ids: what `%sku` becomes in each name, in `KEYS` order.
    fn keys(&self) -> &'static [&'static str] {
        &["phone", "case", "charger"]
    }

    fn crowd(&self, rng: &mut ChaCha8Rng, size: Size) -> Crowd {
        CART.crowd(rng, size)
    }

    fn model(&self, setup: &[Write]) -> Box<dyn Model> {
        CART.model(setup)
    }

    fn classify(&self, broken: &Broken) -> VerdictCode {
        if broken.got_error && broken.got.contains("CROSSSLOT") {
            VerdictCode::Crossslot
        } else {
            CART.classify(broken)
        }
    }

    fn on_cluster(&self) -> bool {
        true
    }
}
