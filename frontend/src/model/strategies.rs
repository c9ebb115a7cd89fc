//! The strategies `hello` listed, looked up by name: labels, the featured ones, and so on.
//!
//! Every word the page says about a strategy comes through here from the server's `hello`; the
//! page holds no strategy names or labels of its own. A name the server did not list is shown
//! as itself (it came from the server too, in a `run_started` or a summary).

use oversold_protocol::{Category, Hello, StrategyInfo};

/// Every strategy `hello` lists, of every scenario, in its order. Names repeat across
/// scenarios (`lua` races, and fails over): look one up with its scenario ([`find_in`]).
pub fn every(hello: &Hello) -> Vec<StrategyInfo> {
    hello
        .strategies
        .iter()
        .chain(&hello.checkout_strategies)
        .chain(&hello.cart_strategies)
        .chain(&hello.busy_strategies)
        .chain(&hello.durability_strategies)
        .chain(&hello.eviction_strategies)
        .chain(&hello.failover_strategies)
        .cloned()
        .collect()
}

/// The strategy called `name` in `scenario`, if `hello` listed it there.
pub fn find_in<'a>(
    infos: &'a [StrategyInfo],
    scenario: oversold_protocol::Scenario,
    name: &str,
) -> Option<&'a StrategyInfo> {
    infos
        .iter()
        .find(|s| s.about.name == name && s.about.scenario == scenario)
}

/// The strategy called `name`, if `hello` listed it.
pub fn find<'a>(infos: &'a [StrategyInfo], name: &str) -> Option<&'a StrategyInfo> {
    infos.iter().find(|s| s.about.name == name)
}

/// The button label `hello` gives; the name itself if unlisted.
pub fn label(infos: &[StrategyInfo], name: &str) -> String {
    find(infos, name).map_or_else(|| name.to_string(), |s| s.about.label.to_string())
}

/// The short label for prose and tables, e.g. `Naive`; the name itself if unlisted.
pub fn short_label(infos: &[StrategyInfo], name: &str) -> String {
    find(infos, name).map_or_else(|| name.to_string(), |s| s.about.short_label.to_string())
}

/// The strategies that get the big buttons, in the server's order.
pub fn featured(infos: &[StrategyInfo]) -> impl Iterator<Item = &StrategyInfo> {
    infos.iter().filter(|s| s.about.featured)
}

/// What the Lua panel opens for a strategy, and the heading over it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptChoice {
    /// The file under `lua/` to show first; `None` when no strategy here runs any.
    pub file: Option<String>,
    /// E.g. `Atomic: the Lua it runs`, or `Naive runs no Lua · the Lua Atomic runs, for contrast`.
    pub heading: String,
}

/// The strategy's own main script; for a strategy that runs none, the script of the first
/// featured safe strategy that runs one, as the contrast.
pub fn script_for(infos: &[StrategyInfo], name: &str) -> ScriptChoice {
    let who = short_label(infos, name);
    if let Some(file) = find(infos, name).and_then(|s| s.about.scripts.first()) {
        return ScriptChoice {
            file: Some(file.to_string()),
            heading: format!("{who}: the Lua it runs"),
        };
    }
    let contrast = featured(infos)
        .find(|s| !s.about.unsafe_by_design && !s.about.scripts.is_empty())
        .and_then(|s| Some((&s.about.short_label, s.about.scripts.first()?)));
    match contrast {
        Some((other, file)) => ScriptChoice {
            file: Some(file.to_string()),
            heading: format!("{who} runs no Lua · the Lua {other} runs, for contrast"),
        },
        None => ScriptChoice {
            file: None,
            heading: format!("{who} runs no Lua"),
        },
    }
}

/// The header's claim, from the featured strategies: `Naive oversells; Atomic does not.`
/// when the unsafe one reads then writes (the race), else `Atomic, no holds is unsafe by
/// design; Idempotent holds is not.` (a checkout that leaks, a script that loses units on a
/// restart: neither oversells). `None` unless the server features one unsafe and one safe
/// strategy.
pub fn pitch(infos: &[StrategyInfo]) -> Option<String> {
    let unsafe_one = featured(infos).find(|s| s.about.unsafe_by_design)?;
    let safe_one = featured(infos).find(|s| !s.about.unsafe_by_design)?;
    let (u, s) = (&unsafe_one.about.short_label, &safe_one.about.short_label);
    Some(if unsafe_one.about.category == Category::CheckThenWrite {
        format!("{u} oversells; {s} does not.")
    } else {
        format!("{u} is unsafe by design; {s} is not.")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixtures::strategies;

    #[test]
    fn labels_come_from_hello_or_fall_back_to_the_name() {
        let infos = strategies();
        assert_eq!(label(&infos, "naive"), "Naive (GET, then DECRBY)");
        assert_eq!(short_label(&infos, "naive"), "Naive");
        assert_eq!(short_label(&infos, "naive_set"), "Lost update");
        assert_eq!(short_label(&infos, "mystery"), "mystery");
        assert_eq!(label(&[], "lua"), "lua");
        assert!(find(&infos, "mystery").is_none());
    }

    #[test]
    fn featured_strategies_keep_the_servers_order() {
        let infos = strategies();
        let names: Vec<&str> = featured(&infos).map(|s| &*s.about.name).collect();
        assert_eq!(names, ["naive", "lua"]);
        assert_eq!(featured(&[]).count(), 0);
    }

    #[test]
    fn the_lua_panel_opens_the_strategys_own_script_or_the_featured_safe_one() {
        let infos = strategies();
        let lock = script_for(&infos, "lock");
        assert_eq!(lock.file.as_deref(), Some("release_lock.lua"));
        assert_eq!(lock.heading, "Lock: the Lua it runs");
        // The main script comes first.
        assert_eq!(
            script_for(&infos, "sharded").file.as_deref(),
            Some("reserve_shard.lua")
        );
        let naive = script_for(&infos, "naive");
        assert_eq!(naive.file.as_deref(), Some("reserve.lua"));
        assert_eq!(
            naive.heading,
            "Naive runs no Lua · the Lua Atomic runs, for contrast"
        );
        // No featured safe strategy with a script: nothing to contrast with.
        let alone: Vec<_> = infos
            .into_iter()
            .filter(|s| s.about.scripts.is_empty())
            .collect();
        assert_eq!(
            script_for(&alone, "watch"),
            ScriptChoice {
                file: None,
                heading: "WATCH runs no Lua".into()
            }
        );
    }

    #[test]
    fn the_pitch_names_the_featured_pair() {
        assert_eq!(
            pitch(&strategies()).as_deref(),
            Some("Naive oversells; Atomic does not.")
        );
        assert_eq!(pitch(&[]), None);
        // The checkout's unsafe one leaks; it does not oversell.
        let checkout = crate::model::checkout::fixtures::checkout_strategies();
        assert_eq!(
            pitch(&checkout).as_deref(),
            Some("Atomic, no holds is unsafe by design; Idempotent holds is not.")
        );
    }
}
