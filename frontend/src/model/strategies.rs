//! The strategies `hello` listed, looked up by name: labels, the featured ones, and so on.
//!
//! Every word the page says about a strategy comes through here from the server's `hello`; the
//! page holds no strategy names or labels of its own. A name the server did not list is shown
//! as itself (it came from the server too, in a `run_started` or a summary).

use oversold_protocol::StrategyInfo;

/// The strategy called `name`, if `hello` listed it.
pub fn find<'a>(infos: &'a [StrategyInfo], name: &str) -> Option<&'a StrategyInfo> {
    infos.iter().find(|s| s.about.name == name)
}

/// The button label, e.g. `Naive (GET, then DECRBY)`; the name itself if unlisted.
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
}
