//! Saved runs ([`SavedRun`], `"format": "oversold-run"`): reading one from a file, checking it
//! before the page trusts it, and writing the run on screen as one.
//!
//! A speaker loads a prepared run when the venue's network fails, so a bad file must say what
//! is wrong with it in one sentence, and a good one must draw exactly as the live run did.

use oversold_protocol::{
    BuyerOutcome, PROTOCOL_VERSION, RunConfig, RunSummary, SavedRun, StrategyAbout,
};
use serde::Deserialize;

use super::controls::replay_request;
use super::run::RunModel;

/// Files past this size are refused before parsing: a full 10,000-buyer run is about 3 MB.
pub const MAX_FILE_BYTES: usize = 32 * 1024 * 1024;

/// The field that says what a file is, read before anything else, as the socket reads a
/// frame's `type` first (`ServerMessage::from_json`): the body is then read straight from the
/// text, with the same decoding the socket's frames already carry into the wasm.
#[derive(Deserialize)]
struct Format<'a> {
    #[serde(borrow, default)]
    format: Option<std::borrow::Cow<'a, str>>,
}

/// [`SavedRun`] without its `format`, which was read first.
#[derive(Deserialize)]
struct Body {
    protocol_version: u32,
    run_id: String,
    config: RunConfig,
    strategy: oversold_protocol::AboutOnly,
    outcomes: Vec<BuyerOutcome>,
    summary: RunSummary,
}

/// Parse and check a saved run; `Err` is the sentence to show.
pub fn parse(text: &str) -> Result<SavedRun, String> {
    if text.len() > MAX_FILE_BYTES {
        return Err(format!(
            "This file is {} MB; a saved run is at most {} MB.",
            text.len() / (1024 * 1024),
            MAX_FILE_BYTES / (1024 * 1024)
        ));
    }
    let not_json =
        |e: serde_json::Error| format!("This file is not a saved oversold run (not JSON: {e}).");
    let format = serde_json::from_str::<Format>(text).map_err(|e| {
        if e.is_syntax() || e.is_eof() {
            not_json(e)
        } else {
            not_ours()
        }
    })?;
    if format.format.as_deref() != Some(SavedRun::FORMAT) {
        return Err(not_ours());
    }
    let b = serde_json::from_str::<Body>(text).map_err(|e| {
        if e.is_syntax() || e.is_eof() {
            not_json(e)
        } else {
            format!("This saved run is damaged, incomplete, or from a newer oversold: {e}.")
        }
    })?;
    if b.protocol_version > PROTOCOL_VERSION {
        return Err(format!(
            "This run was saved by a newer oversold (protocol {}); this page reads protocol {PROTOCOL_VERSION} and older.",
            b.protocol_version
        ));
    }
    let saved = SavedRun {
        format: SavedRun::FORMAT.to_string(),
        protocol_version: b.protocol_version,
        run_id: b.run_id,
        config: b.config,
        strategy: b.strategy.0,
        outcomes: b.outcomes,
        summary: b.summary,
    };
    check(&saved)?;
    Ok(saved)
}

/// The sentence for a file that does not say it is a saved run.
fn not_ours() -> String {
    format!(
        "This file is not a saved oversold run: it has no \"format\": \"{}\".",
        SavedRun::FORMAT
    )
}

/// The checks serde cannot make: one strategy throughout, knobs in range, one outcome per buyer.
fn check(s: &SavedRun) -> Result<(), String> {
    let c = &s.config;
    if c.strategy != s.summary.strategy || c.strategy != s.strategy.name {
        return Err(format!(
            "This saved run disagrees with itself: its config says {:?}, its summary {:?}, its strategy {:?}.",
            c.strategy, s.summary.strategy, s.strategy.name
        ));
    }
    let r = &c.race;
    replay_request(c)
        .validate(r.seed)
        .map_err(|e| format!("This saved run's {e}."))?;
    if s.summary.stock != r.stock || s.summary.buyers != r.buyers {
        return Err(
            "This saved run's summary is not about its config (stock or buyers differ).".into(),
        );
    }
    let n = s.outcomes.len();
    let all = r.buyers as usize;
    if n > all || (n < all && !s.summary.cancelled) {
        return Err(format!(
            "This saved run has {n} outcomes for {all} buyers (and was not cancelled)."
        ));
    }
    let mut seen = vec![false; all + 1];
    for o in &s.outcomes {
        let slot = seen.get_mut(o.buyer as usize).filter(|_| o.buyer >= 1);
        match slot {
            Some(seen) if !*seen => *seen = true,
            _ => {
                return Err(format!(
                    "This saved run's buyer #{} is not one of 1 to {all}, or appears twice.",
                    o.buyer
                ));
            }
        }
    }
    Ok(())
}

/// The run on screen as a file, once it has a summary; `about` is its strategy's description.
pub fn to_saved(run: &RunModel, about: &StrategyAbout) -> Option<SavedRun> {
    let summary = run.summary()?.clone();
    Some(SavedRun {
        format: SavedRun::FORMAT.to_string(),
        protocol_version: PROTOCOL_VERSION,
        run_id: run.run_id.clone(),
        config: run.config.clone(),
        strategy: about.clone(),
        outcomes: run.rows.iter().map(|r| r.outcome.clone()).collect(),
        summary,
    })
}

/// E.g. `oversold-naive-seed-3.json`: names that sort by strategy and say which crowd.
pub fn file_name(saved: &SavedRun) -> String {
    let safe: String = saved
        .config
        .strategy
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("oversold-{safe}-seed-{}.json", saved.config.race.seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixtures::{config, hello, outcome, summary};
    use crate::model::page::PageState;
    use oversold_protocol::{OutcomeResult, ServerMessage};

    /// A finished naive run of 4 buyers on 2 units that sold 3.
    fn saved() -> SavedRun {
        let mut run = RunModel::new("r-9".into(), config(2, 4));
        run.push_batch(vec![
            outcome(3, 1, OutcomeResult::Reserved),
            outcome(1, 1, OutcomeResult::Reserved),
            outcome(4, 1, OutcomeResult::SoldOut),
            outcome(2, 1, OutcomeResult::Reserved),
        ]);
        let mut s = summary(2, 3, -1);
        s.buyers = 4;
        run.finish(s);
        let about = hello().strategies[0].about.clone();
        to_saved(&run, &about).expect("finished")
    }

    #[test]
    fn a_saved_run_round_trips_through_json() {
        let s = saved();
        assert_eq!(file_name(&s), "oversold-naive-seed-7.json");
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(parse(&text), Ok(s));
        // A running run has nothing to save yet.
        let live = RunModel::new("r-1".into(), config(2, 4));
        assert_eq!(to_saved(&live, &hello().strategies[0].about), None);
    }

    #[test]
    fn wrong_files_get_one_clear_sentence() {
        let err = |text: &str| parse(text).unwrap_err();
        assert!(err("<html>").starts_with("This file is not a saved oversold run (not JSON: "));
        let not_ours =
            "This file is not a saved oversold run: it has no \"format\": \"oversold-run\".";
        assert_eq!(err(r#"{"type":"hello"}"#), not_ours);
        assert_eq!(err(r#"{"format":"oversold-replay"}"#), not_ours);
        assert_eq!(
            err(r#"{"format":"oversold-run","protocol_version":2}"#),
            "This saved run is damaged, incomplete, or from a newer oversold: missing field `run_id` at line 1 column 46."
        );
        let mut newer = saved();
        newer.protocol_version = 9;
        assert_eq!(
            err(&serde_json::to_string(&newer).unwrap()),
            format!(
                "This run was saved by a newer oversold (protocol 9); this page reads protocol {} and older.",
                oversold_protocol::PROTOCOL_VERSION
            )
        );

        let mut s = saved();
        s.config.race.buyers = 20_000;
        s.summary.buyers = 20_000;
        assert_eq!(
            err(&serde_json::to_string(&s).unwrap()),
            "This saved run's buyers = 20000 is out of range: it must be between 1 and 10000."
        );
        let mut s = saved();
        s.summary.strategy = "lua".into();
        assert!(err(&serde_json::to_string(&s).unwrap()).contains("disagrees with itself"));
        let mut s = saved();
        s.outcomes.pop();
        assert_eq!(
            err(&serde_json::to_string(&s).unwrap()),
            "This saved run has 3 outcomes for 4 buyers (and was not cancelled)."
        );
        s.summary.cancelled = true;
        assert!(parse(&serde_json::to_string(&s).unwrap()).is_ok());
        let mut s = saved();
        s.outcomes[0].buyer = 1;
        assert_eq!(
            err(&serde_json::to_string(&s).unwrap()),
            "This saved run's buyer #1 is not one of 1 to 4, or appears twice."
        );
        assert!(err(&" ".repeat(MAX_FILE_BYTES + 1)).starts_with("This file is 32 MB"));
    }

    #[test]
    fn a_loaded_run_draws_like_the_live_one_and_joins_the_history() {
        let s = saved();
        let mut p = PageState::default();
        p.apply(ServerMessage::Hello(Box::new(hello())));
        p.load_saved(s.clone());
        let run = p.run.as_ref().expect("on screen");
        assert_eq!(run.phase.as_str(), "finished");
        assert_eq!(run.counters().units_sold, 3);
        assert_eq!(run.counters().oversold_units, 1);
        assert_eq!(run.counters().stock_remaining, -1);
        assert_eq!(run.rows.len(), 4);
        assert_eq!(p.history[0].run_id, "r-9");
        assert_eq!(p.history[0].short_label, "Naive");
        // What is on screen saves back to the same file.
        assert_eq!(p.saved_run(), Some(s.clone()));
        // Without a hello (the socket never came up) the file's own words stand in.
        let mut offline = PageState::default();
        let mut odd = s;
        odd.strategy.short_label = "Naive (saved)".into();
        offline.load_saved(odd.clone());
        assert_eq!(offline.history[0].short_label, "Naive (saved)");
        assert_eq!(offline.about("naive"), Some(&odd.strategy));
        assert_eq!(offline.saved_run(), Some(odd));
    }

    #[test]
    fn a_saved_run_waits_for_the_live_one() {
        let mut p = PageState::default();
        p.apply(ServerMessage::Hello(Box::new(hello())));
        p.apply(ServerMessage::RunStarted {
            run_id: "r-1".into(),
            config: config(10, 50),
        });
        p.load_saved(saved());
        assert_eq!(p.run.as_ref().map(|r| r.run_id.as_str()), Some("r-1"));
        assert_eq!(p.notices.last().map(|n| n.code.as_str()), Some("busy"));
    }
}
