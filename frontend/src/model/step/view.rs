//! [`StepView`]: everything the open step panel shows, as plain data, computed in one pass from
//! the page. The panel is a few dozen nodes, so it is drawn afresh from this on every answer
//! (one reactive closure) rather than wired node by node: a smaller page, and nothing on
//! screen can disagree with the state.

use super::buyers::{Button, buttons};
use super::narrate::{Told, narrate};
use super::nudge::nudge;
use super::story::Line;
use crate::model::page::PageState;
use crate::model::strategies;

/// The open step panel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepView {
    /// The strategy being stepped, as `hello` names it.
    pub strategy: String,
    /// Units in stock at the start.
    pub stock: u32,
    /// The most units the server accepts.
    pub max_stock: u32,
    /// Buyers standing ready (2–4).
    pub buyers: u32,
    /// The strategies on offer: (name, label, available). Only those the server says it can
    /// step (`hello`'s `step_refusal` is empty): a `database` strategy keeps its stock in
    /// PostgreSQL and `redlock` votes on three lock masters at once, so the server refuses
    /// them; a choice that can only fail is noise on a projector, so it is left out rather
    /// than offered and answered with an error. Strategies this server cannot run are kept,
    /// disabled, like the run buttons.
    pub choices: Vec<(String, String, bool)>,
    /// One button per buyer.
    pub buttons: Vec<Button>,
    /// Every click in one line, oldest first.
    pub told: Vec<Told>,
    /// Once every buyer is done and nothing went wrong: what to try next.
    pub nudge: Option<Line>,
}

impl StepView {
    /// The panel for `page`'s step session; `None` when step mode is not open.
    pub fn of(page: &PageState) -> Option<Self> {
        let state = page.step.as_ref()?;
        let log = page.step_log()?;
        let infos = page.strategies();
        let about = strategies::find(infos, &state.config.strategy).map(|i| &i.about);
        let category = about.map(|a| a.category);
        Some(Self {
            strategy: state.config.strategy.clone(),
            stock: state.config.race.stock,
            max_stock: page.hello.as_ref().map_or(u32::MAX, |h| h.limits.stock.max),
            buyers: state.config.race.buyers,
            choices: infos
                .iter()
                .filter(|s| s.step_refusal.is_none())
                .map(|s| {
                    (
                        s.about.name.to_string(),
                        s.about.label.to_string(),
                        s.available,
                    )
                })
                .collect(),
            buttons: buttons(state, &log),
            told: narrate(state, &log, category),
            nudge: nudge(state, &log, about),
        })
    }

    /// The strategy step mode opens on: the first one the server features.
    pub fn first(page: &PageState) -> Option<String> {
        strategies::featured(page.strategies())
            .next()
            .map(|s| s.about.name.to_string())
    }
}

#[cfg(test)]
mod tests {
    use oversold_protocol::{Category, ServerMessage, StrategyInfo};

    use super::super::fixtures::naive_oversell;
    use super::*;
    use crate::model::fixtures::{hello, info};

    #[test]
    fn the_panel_offers_redis_strategies_and_says_what_happened() {
        let mut page = PageState::default();
        assert_eq!(StepView::first(&page), None);
        let mut h = hello();
        let pg: StrategyInfo = info(
            "postgres",
            "PostgreSQL row lock",
            "PostgreSQL",
            Category::Database,
            false,
            &[],
        );
        h.strategies.push(pg);
        page.apply(ServerMessage::Hello(Box::new(h)));
        assert_eq!(StepView::first(&page).as_deref(), Some("naive"));
        assert_eq!(StepView::of(&page), None, "closed");
        let (_, _) = naive_oversell();
        // Replay the session's answers through the reducer, as the socket would.
        let (last, trail) = naive_oversell();
        assert_eq!(trail.stocks.len(), 5);
        for n in 0..=last.log.len() {
            let mut s = last.clone();
            s.log.truncate(n);
            s.stock = trail.stocks[n];
            page.apply(ServerMessage::StepState(s));
        }
        let v = StepView::of(&page).expect("open");
        assert_eq!((v.strategy.as_str(), v.stock, v.buyers), ("naive", 1, 2));
        assert!(
            v.choices.iter().all(|c| c.0 != "postgres"),
            "strategies the server refuses to step are left out"
        );
        assert_eq!(v.choices.len(), 6);
        assert_eq!(v.buttons.len(), 2);
        assert_eq!(v.told.len(), 4, "one line per click");
        assert!(
            v.told[3]
                .text
                .starts_with("buyer 2 sold a unit that did not exist")
        );
        assert_eq!(v.nudge, None, "it went wrong: nothing to nudge towards");
    }
}
