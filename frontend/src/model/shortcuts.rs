//! The keyboard shortcuts, and which key does what: one table the key handler and the `?`
//! overlay both read, so the overlay cannot say something the keys do not do.
//!
//! The two run keys never name a strategy: N runs the featured strategy of the scenario on
//! screen that is unsafe by design, L the featured one that is not, both as `hello` lists
//! them ([`featured_pair`]). Digits belong to step-through mode, which binds its own.

use oversold_protocol::{Category, StrategyInfo};

use super::strategies;

/// What a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Run the featured strategy that is unsafe by design.
    RunUnsafe,
    /// Run the featured strategy that is not.
    RunSafe,
    /// Race every strategy with the same crowd.
    Compare,
    /// Open step-through mode on the first featured strategy.
    Step,
    /// The form back to its defaults, the run on screen cleared.
    Reset,
    /// Full screen on or off.
    FullScreen,
    /// Show or hide the list of shortcuts.
    Help,
    /// Hide the list.
    Close,
}

/// Every shortcut, in the order the overlay lists them: the key as printed, and its action.
pub const SHORTCUTS: [(&str, Action); 8] = [
    ("N", Action::RunUnsafe),
    ("L", Action::RunSafe),
    ("C", Action::Compare),
    ("S", Action::Step),
    ("R", Action::Reset),
    ("F", Action::FullScreen),
    ("?", Action::Help),
    ("Esc", Action::Close),
];

/// The action for a key press. `key` is `KeyboardEvent.key`; nothing happens while Ctrl, Alt
/// or Meta is held (those are the browser's), or while the visitor types into a field (except
/// Escape, which only ever closes the list). Shift is allowed: it is how `?` is typed.
pub fn action(key: &str, modifier: bool, typing: bool) -> Option<Action> {
    if modifier {
        return None;
    }
    if key == "Escape" {
        return Some(Action::Close);
    }
    if typing {
        return None;
    }
    Some(match key {
        "n" | "N" => Action::RunUnsafe,
        "l" | "L" => Action::RunSafe,
        "c" | "C" => Action::Compare,
        "s" | "S" => Action::Step,
        "r" | "R" => Action::Reset,
        "f" | "F" => Action::FullScreen,
        "?" => Action::Help,
        _ => return None,
    })
}

/// The strategies N and L run: the featured one that is unsafe by design and the featured
/// one that is not. A scenario whose featured pair are both safe gives N the first of them
/// and L the other.
pub fn featured_pair(infos: &[StrategyInfo]) -> (Option<&StrategyInfo>, Option<&StrategyInfo>) {
    let first = strategies::featured(infos)
        .find(|s| s.about.unsafe_by_design)
        .or_else(|| strategies::featured(infos).next());
    let other = strategies::featured(infos)
        .find(|s| !s.about.unsafe_by_design && first.is_none_or(|f| f.about.name != s.about.name));
    (first, other)
}

/// The strategy step-through mode opens on: the first the server features.
pub fn step_strategy(infos: &[StrategyInfo]) -> Option<&StrategyInfo> {
    strategies::featured(infos).next()
}

/// What the overlay says `action` does, with the strategies' own short labels: N and L run
/// the featured pair of the scenario on screen (`offered`), step-through races only (`race`).
pub fn describe(action: Action, offered: &[StrategyInfo], race: &[StrategyInfo]) -> String {
    let (unsafe_one, safe_one) = featured_pair(offered);
    let short = |s: Option<&StrategyInfo>| s.map(|s| s.about.short_label.to_string());
    match action {
        Action::RunUnsafe => match unsafe_one {
            Some(s) if !s.about.unsafe_by_design => {
                format!("Run {}, the first featured strategy", s.about.short_label)
            }
            Some(s) if s.about.category == Category::CheckThenWrite => format!(
                "Run {}, the featured strategy that oversells by design",
                s.about.short_label
            ),
            Some(s) => format!(
                "Run {}, the featured strategy that is unsafe by design",
                s.about.short_label
            ),
            None => "Run the featured unsafe strategy (this server features none)".into(),
        },
        Action::RunSafe => match short(safe_one) {
            Some(who) => format!("Run {who}, the featured strategy that is safe by design"),
            None => "Run the featured safe strategy (this server features none)".into(),
        },
        Action::Compare => "Compare every strategy: the same crowd, one after another".into(),
        Action::Step => match short(step_strategy(race)) {
            Some(who) => format!("Step through {who}: you pick who sends the next command"),
            None => "Step through a race (this server features no strategy)".into(),
        },
        Action::Reset => "Reset: settings back to their defaults, the run on screen cleared \
                          (recent runs stay; not while a run is in flight)"
            .into(),
        Action::FullScreen => "Full screen on or off".into(),
        Action::Help => "Show or hide this list".into(),
        Action::Close => "Close this list".into(),
    }
}

/// The `?` list as markup: one `<dt data-key>`/`<dd>` pair per shortcut, in [`SHORTCUTS`]
/// order, with the strategies' labels escaped. Plain markup set once when the list opens:
/// it never changes while open, and a view per row would cost the wasm more than the list.
pub fn list_html(offered: &[StrategyInfo], race: &[StrategyInfo]) -> String {
    let mut html = String::new();
    for (key, action) in SHORTCUTS {
        html.push_str(&format!(
            "<dt data-key=\"{key}\"><kbd>{key}</kbd></dt><dd>{}</dd>",
            escape(&describe(action, offered, race))
        ));
    }
    html
}

/// Text made safe to place between tags.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixtures::strategies;

    #[test]
    fn keys_map_to_actions_unless_typing_or_modified() {
        assert_eq!(action("n", false, false), Some(Action::RunUnsafe));
        assert_eq!(action("N", false, false), Some(Action::RunUnsafe));
        assert_eq!(action("?", false, false), Some(Action::Help));
        assert_eq!(action("n", true, false), None);
        assert_eq!(action("n", false, true), None);
        assert_eq!(action("Escape", false, true), Some(Action::Close));
        assert_eq!(action("Escape", true, false), None);
        // Digits are step-through's.
        for d in ["1", "2", "3", "4"] {
            assert_eq!(action(d, false, false), None);
        }
        // Every listed key does what the list says.
        for (key, act) in SHORTCUTS {
            let key = if key == "Esc" { "Escape" } else { key };
            assert_eq!(action(key, false, false), Some(act), "{key}");
            if key.len() == 1 {
                assert_eq!(
                    action(&key.to_lowercase(), false, false),
                    Some(act),
                    "{key}"
                );
            }
        }
    }

    #[test]
    fn the_list_is_one_pair_per_key_with_labels_escaped() {
        let mut infos = strategies();
        infos[0].about.short_label = "<b>Naive</b> & co".into();
        let html = list_html(&infos, &infos);
        assert!(html.starts_with(
            "<dt data-key=\"N\"><kbd>N</kbd></dt><dd>Run &lt;b&gt;Naive&lt;/b&gt; &amp; co, the featured"
        ));
        assert_eq!(html.matches("<dt ").count(), SHORTCUTS.len());
        assert!(html.ends_with("<dt data-key=\"Esc\"><kbd>Esc</kbd></dt><dd>Close this list</dd>"));
    }

    #[test]
    fn run_keys_follow_what_hello_features() {
        let mut infos = strategies();
        let (n, l) = featured_pair(&infos);
        assert_eq!(
            (&*n.unwrap().about.name, &*l.unwrap().about.name),
            ("naive", "lua")
        );
        assert_eq!(
            describe(Action::RunUnsafe, &infos, &infos),
            "Run Naive, the featured strategy that oversells by design"
        );
        assert_eq!(
            describe(Action::Step, &infos, &infos),
            "Step through Naive: you pick who sends the next command"
        );
        // With the checkout on screen, N and L run the checkout's pair; stepping stays a race.
        let checkout = crate::model::checkout::fixtures::checkout_strategies();
        let (n, l) = featured_pair(&checkout);
        let (n, l) = (n.unwrap(), l.unwrap());
        assert_eq!(
            (&*n.about.name, &*l.about.name),
            ("atomic_no_holds", "idempotent_holds"),
            "N the one that leaks, L the one that does not"
        );
        assert_eq!(
            describe(Action::RunUnsafe, &checkout, &infos),
            "Run Atomic, no holds, the featured strategy that is unsafe by design"
        );
        assert_eq!(
            describe(Action::RunSafe, &checkout, &infos),
            "Run Idempotent holds, the featured strategy that is safe by design"
        );
        assert_eq!(
            describe(Action::Step, &checkout, &infos),
            "Step through Naive: you pick who sends the next command"
        );
        // Feature other strategies and the keys follow, names unseen.
        for s in &mut infos {
            s.about.featured = matches!(&*s.about.name, "lock" | "naive_set");
        }
        let (n, l) = featured_pair(&infos);
        assert_eq!(
            (&*n.unwrap().about.name, &*l.unwrap().about.name),
            ("naive_set", "lock")
        );
        assert_eq!(&*step_strategy(&infos).unwrap().about.name, "naive_set");
        assert_eq!(
            describe(Action::RunSafe, &[], &[]),
            "Run the featured safe strategy (this server features none)"
        );
    }
}
