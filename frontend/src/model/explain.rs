//! Why each strategy does (or does not) oversell: a few plain sentences, one interleaving of two
//! buyers, and the Lua file it runs, if any. Static text, one entry per strategy the server offers.

/// One line of an interleaving: who sent what, what came back, what the buyer concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The buyer.
    pub who: &'static str,
    /// The command and its reply.
    pub cmd: &'static str,
    /// What it means.
    pub note: &'static str,
    /// `a`, `b` (which buyer, for colour) or `bad` (the step where it goes wrong).
    pub tone: &'static str,
}

/// The "why" panel for one strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Explanation {
    /// Strategy name, as in `hello.strategies[].name`.
    pub strategy: &'static str,
    /// The panel heading.
    pub title: &'static str,
    /// What a buyer does, step by step.
    pub how: &'static str,
    /// Why that is (or is not) safe.
    pub why: &'static str,
    /// What it costs, or the catch.
    pub cost: &'static str,
    /// Two buyers, one unit left.
    pub steps: &'static [Step],
    /// The file under `lua/` the strategy runs, when it runs one.
    pub script: Option<&'static str>,
}

const fn s(who: &'static str, cmd: &'static str, note: &'static str, tone: &'static str) -> Step {
    Step {
        who,
        cmd,
        note,
        tone,
    }
}

/// Every explanation, in the order the server lists its strategies.
pub const ALL: [Explanation; 8] = [
    Explanation {
        strategy: "naive",
        title: "Why check-then-write oversells",
        how: "Each buyer sends GET stock, decides in the app whether the number is big enough, then sends DECRBY stock qty.",
        why: "Redis runs each command whole, but nothing ties the two together. Between one buyer's GET and its DECRBY, \
              the other buyers' commands run. With one unit left, fifty buyers can all read 1, all decide yes, and all \
              decrement: the check was true when it was made and false when the write landed. The counter sinks below zero.",
        cost: "Two round trips per order, and a gap between them that any amount of app work makes wider.",
        steps: &[
            s("buyer #7", "GET stock → 1", "looks fine", "a"),
            s("buyer #12", "GET stock → 1", "looks fine too", "b"),
            s("buyer #7", "DECRBY stock 1 → 0", "sold the last unit", "a"),
            s(
                "buyer #12",
                "DECRBY stock 1 → -1",
                "sold a unit that does not exist",
                "bad",
            ),
        ],
        script: None,
    },
    Explanation {
        strategy: "naive_set",
        title: "Why GET-then-SET loses sales",
        how: "Each buyer reads the stock, subtracts its order in the app, and writes the result back with SET: an absolute value, not a change.",
        why: "Two buyers that read the same number both write the same answer. The second SET does not subtract again; it \
              just repeats the first, so one sale vanishes from the counter. The counter stays at zero or above and looks \
              healthy, while far more orders were accepted than units existed. Compare orders with stock, not the counter.",
        cost: "The failure is silent: no negative number, no error. Only the order count (or the lost-updates tally) gives it away.",
        steps: &[
            s("buyer #7", "GET stock → 10", "will write 9", "a"),
            s("buyer #12", "GET stock → 10", "will also write 9", "b"),
            s("buyer #7", "SET stock 9", "sold one", "a"),
            s(
                "buyer #12",
                "SET stock 9",
                "sold one more; the counter moved once",
                "bad",
            ),
        ],
        script: None,
    },
    Explanation {
        strategy: "lua",
        title: "Why the Lua script cannot oversell",
        how: "Each buyer sends one EVALSHA. reserve.lua reads the stock, compares it with the order and decrements, all inside Redis.",
        why: "Redis runs a script from first line to last before it serves any other client, so no other buyer's command can \
              land between the check and the write. The last unit goes to exactly one buyer; everyone after reads 0 and is refused.",
        cost: "One round trip per order, so the safe version is also the fast one. A long script would stall every client, so keep it tiny.",
        steps: &[
            s(
                "buyer #7",
                "EVALSHA reserve 1 → {1, 1, 0}",
                "took the last unit",
                "a",
            ),
            s(
                "buyer #12",
                "EVALSHA reserve 1 → {0, 0, 0}",
                "ran after #7's whole script: refused",
                "b",
            ),
        ],
        script: Some("reserve.lua"),
    },
    Explanation {
        strategy: "decr_compensate",
        title: "Why decrement-first cannot oversell",
        how: "Each buyer sends DECRBY straight away and looks at the answer. At zero or above, the units are its own. \
              Below zero, it sends INCRBY to give them back and reports sold out.",
        why: "DECRBY is one atomic command that returns the new value, so the decrement itself is the decision: two buyers \
              can never both land on the last unit. No separate read means no stale read.",
        cost: "While an overshoot waits for its undo the counter reads too low, so a buyer can be refused although units exist. \
               And if the app dies between DECRBY and INCRBY, those units never come back.",
        steps: &[
            s("buyer #7", "DECRBY stock 1 → 0", "0 or more: sold", "a"),
            s(
                "buyer #12",
                "DECRBY stock 1 → -1",
                "below zero: not mine",
                "b",
            ),
            s(
                "buyer #12",
                "INCRBY stock 1 → 0",
                "gives it back, sold out",
                "b",
            ),
        ],
        script: None,
    },
    Explanation {
        strategy: "watch",
        title: "Why WATCH / MULTI / EXEC cannot oversell",
        how: "Each buyer WATCHes the stock key, reads it, checks it in the app, then sends DECRBY inside MULTI/EXEC.",
        why: "If anyone wrote the key after the WATCH, Redis throws the transaction away and EXEC answers nil. A decision made \
              on a stale read can never commit: the buyer starts over with a fresh read. Nothing is locked while the app thinks.",
        cost: "Under contention most attempts are discarded, and each retry is more round trips. Buyers that keep losing give up \
               after a few attempts (the audit trail shows them as errors).",
        steps: &[
            s("buyer #7", "WATCH stock · GET → 1", "looks fine", "a"),
            s("buyer #12", "WATCH stock · GET → 1", "looks fine too", "b"),
            s("buyer #7", "MULTI · DECRBY · EXEC → [0]", "committed", "a"),
            s(
                "buyer #12",
                "MULTI · DECRBY · EXEC → nil",
                "stock changed: discarded, retry",
                "b",
            ),
            s("buyer #12", "WATCH stock · GET → 0", "sold out", "b"),
        ],
        script: None,
    },
    Explanation {
        strategy: "lock",
        title: "Why a lock per SKU cannot oversell",
        how: "Each buyer takes a lock with SET lock token NX PX, then does the naive GET, check, DECRBY, then releases the lock \
              with release_lock.lua.",
        why: "Only one buyer can create the lock key, so only the holder reads and writes, and the gap between read and write \
              no longer matters. The release script deletes the lock only if it still holds this buyer's token, so an expired \
              holder cannot free someone else's lock.",
        cost: "Every buyer of the SKU queues behind one holder, and waiters poll: each failed SET NX is another round trip and a \
               retry. And it assumes no holder stalls longer than the lock's expiry.",
        steps: &[
            s("buyer #7", "SET lock t7 NX PX → OK", "holds the lock", "a"),
            s(
                "buyer #12",
                "SET lock t12 NX PX → nil",
                "busy: waits, tries again",
                "b",
            ),
            s(
                "buyer #7",
                "GET → 1 · DECRBY → 0",
                "sold the last unit",
                "a",
            ),
            s("buyer #7", "EVALSHA release_lock t7 → 1", "lets go", "a"),
            s(
                "buyer #12",
                "SET lock t12 NX PX → OK · GET → 0",
                "sold out",
                "b",
            ),
        ],
        script: Some("release_lock.lua"),
    },
    Explanation {
        strategy: "function",
        title: "Why a Redis Function cannot oversell",
        how: "The same check-and-decrement as the Lua script, registered once with FUNCTION LOAD and called by name with one FCALL.",
        why: "Redis runs a function exactly as it runs a script: start to finish on its command thread, nothing in between. \
              The last unit goes to one buyer; the rest read 0.",
        cost: "One round trip, like EVALSHA. The difference is operational: the library lives in the dataset, survives SCRIPT \
               FLUSH and is replicated, but FUNCTION FLUSH removes it and callers must load it again.",
        steps: &[
            s(
                "buyer #7",
                "FCALL oversold_reserve 1 stock 1 → {1, 1, 0}",
                "took the last unit",
                "a",
            ),
            s(
                "buyer #12",
                "FCALL oversold_reserve 1 stock 1 → {0, 0, 0}",
                "refused",
                "b",
            ),
        ],
        script: Some("reserve_function.lua"),
    },
    Explanation {
        strategy: "postgres",
        title: "Why a row lock cannot oversell",
        how: "Each buyer opens a transaction, reads the stock row with SELECT … FOR UPDATE, checks it, UPDATEs it and COMMITs.",
        why: "FOR UPDATE locks the row: a second buyer's SELECT waits until the first one commits, then reads the new value. \
              Read and write happen under the same lock, so no decision is made on a stale number.",
        cost: "Buyers wait in line behind each commit, and a commit is a disk write: correct, and the slowest here.",
        steps: &[
            s(
                "buyer #7",
                "SELECT stock … FOR UPDATE → 1",
                "row locked",
                "a",
            ),
            s(
                "buyer #12",
                "SELECT stock … FOR UPDATE",
                "waits for #7",
                "b",
            ),
            s("buyer #7", "UPDATE … · COMMIT", "sold, lock released", "a"),
            s("buyer #12", "… → 0", "sold out", "b"),
        ],
        script: None,
    },
];

/// The explanation for `strategy`, if the page has one.
pub fn explain(strategy: &str) -> Option<&'static Explanation> {
    ALL.iter().find(|e| e.strategy == strategy)
}

/// The Lua file shown for `strategy`: its own, or `reserve.lua` as the contrast for the rest.
pub fn script_for(strategy: &str) -> &'static str {
    explain(strategy)
        .and_then(|e| e.script)
        .unwrap_or("reserve.lua")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_strategy_has_its_own_explanation() {
        let names = [
            "naive",
            "naive_set",
            "lua",
            "decr_compensate",
            "watch",
            "lock",
            "function",
            "postgres",
        ];
        for name in names {
            let e = explain(name).unwrap_or_else(|| panic!("no explanation for {name}"));
            assert!(!e.title.is_empty() && !e.how.is_empty() && !e.why.is_empty());
            assert!(e.steps.len() >= 2, "{name} needs an interleaving");
        }
        let mut titles: Vec<&str> = ALL.iter().map(|e| e.title).collect();
        titles.dedup();
        assert_eq!(titles.len(), ALL.len());
        assert!(explain("nope").is_none());
    }

    #[test]
    fn shows_the_file_each_strategy_runs() {
        assert_eq!(script_for("lua"), "reserve.lua");
        assert_eq!(script_for("function"), "reserve_function.lua");
        assert_eq!(script_for("lock"), "release_lock.lua");
        assert_eq!(explain("naive").and_then(|e| e.script), None);
        // Strategies without a script show the atomic one for contrast.
        assert_eq!(script_for("naive"), "reserve.lua");
        assert_eq!(script_for("unknown"), "reserve.lua");
    }
}
