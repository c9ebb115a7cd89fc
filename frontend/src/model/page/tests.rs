//! Every `ServerMessage` variant through [`PageState::apply`], in order and out of it.

use oversold_protocol::{ErrorCode, OutcomeResult, RedisState, ServerMessage, WireError};

use super::*;
use crate::model::fixtures::{config, hello, outcome, summary};
use crate::model::run::{Mark, Phase};

/// A page that has had its `hello`.
fn page() -> PageState {
    let mut p = PageState::default();
    p.apply(ServerMessage::Hello(Box::new(hello())));
    p
}

fn started(run_id: &str, strategy: &str) -> ServerMessage {
    let mut config = config(10, 50);
    config.strategy = strategy.into();
    ServerMessage::RunStarted {
        run_id: run_id.into(),
        config,
    }
}

/// An `outcomes` frame of `n` reserved single units.
fn batch(run_id: &str, n: u32) -> ServerMessage {
    ServerMessage::Outcomes {
        run_id: run_id.into(),
        outcomes: (1..=n)
            .map(|b| outcome(b, 1, OutcomeResult::Reserved))
            .collect(),
    }
}

fn finished(run_id: &str, strategy: &str, sold: u64) -> ServerMessage {
    let mut summary = summary(10, sold, 10 - sold as i64);
    summary.strategy = strategy.into();
    ServerMessage::RunFinished {
        run_id: run_id.into(),
        summary,
    }
}

fn error(code: ErrorCode, run_id: Option<&str>) -> ServerMessage {
    ServerMessage::Error(WireError {
        code,
        message: format!("{} happened", code.as_str()),
        run_id: run_id.map(str::to_string),
    })
}

fn answered(p: &PageState) -> usize {
    p.run.as_ref().map_or(0, RunModel::finished_buyers)
}

fn phase(p: &PageState) -> &'static str {
    p.run.as_ref().map_or("idle", |r| r.phase.as_str())
}

#[test]
fn hello_brings_strategies_and_redis_and_picks_what_to_explain() {
    let mut p = PageState::default();
    assert_eq!((p.strategies().len(), p.explained()), (0, None));
    p.apply(ServerMessage::Hello(Box::new(hello())));
    assert_eq!(p.redis, Some(RedisState::Up));
    assert_eq!(p.strategies().len(), hello().strategies.len());
    // Nothing run, nothing picked: the first strategy the server features.
    assert_eq!(p.explained().as_deref(), Some("naive"));
    p.focus = Some("lock".into());
    assert_eq!(p.explained().as_deref(), Some("lock"));
}

#[test]
fn redis_status_follows_the_server() {
    let mut p = page();
    p.apply(ServerMessage::RedisStatus {
        redis: RedisState::Down,
    });
    assert_eq!(p.redis, Some(RedisState::Down));
    p.apply(ServerMessage::RedisStatus {
        redis: RedisState::Up,
    });
    assert_eq!(p.redis, Some(RedisState::Up));
}

#[test]
fn run_started_answers_the_pending_start_and_takes_the_stage() {
    let mut p = page();
    p.focus = Some("lock".into());
    p.asked(Pending::Run("lua".into()));
    assert!(p.busy());
    p.apply(started("r-1", "lua"));
    assert_eq!(p.pending, None);
    assert_eq!(p.focus, None, "the why panel follows the new run");
    assert_eq!(p.explained().as_deref(), Some("lua"));
    assert_eq!(phase(&p), "running");
    assert!(p.busy());
    // A replayed run_started does not wipe what arrived since.
    p.apply(batch("r-1", 3));
    p.apply(started("r-1", "lua"));
    assert_eq!(answered(&p), 3);
}

#[test]
fn outcomes_fold_into_their_own_run_only() {
    let mut p = page();
    // Before any run_started: nothing to fold into.
    p.apply(batch("r-1", 4));
    assert!(p.run.is_none());
    p.apply(started("r-1", "naive"));
    assert_eq!(
        answered(&p),
        0,
        "outcomes that came before run_started are not replayed"
    );
    p.apply(batch("r-1", 4));
    p.apply(batch("r-0", 9)); // a stale run
    p.apply(batch("other", 9)); // someone else's id
    assert_eq!(answered(&p), 4);
    assert_eq!(p.run.as_ref().unwrap().tally.units_sold, 4);
    // After the terminal frame, late outcomes change nothing.
    p.apply(finished("r-1", "naive", 4));
    p.apply(batch("r-1", 2));
    assert_eq!(answered(&p), 4);
}

#[test]
fn run_finished_ends_the_run_once_and_records_it_with_the_servers_short_label() {
    let mut p = page();
    p.apply(started("r-1", "naive"));
    p.apply(batch("r-1", 10));
    p.apply(finished("r-1", "naive", 10));
    assert_eq!(phase(&p), "finished");
    assert!(!p.busy());
    assert_eq!(p.history.len(), 1);
    assert_eq!(
        (
            p.history[0].run_id.as_str(),
            p.history[0].short_label.as_str()
        ),
        ("r-1", "Naive")
    );
    // A replayed terminal frame is not a second run, and cannot rewrite the first.
    p.apply(finished("r-1", "naive", 3));
    assert_eq!(p.history.len(), 1);
    assert_eq!(p.run.as_ref().unwrap().summary().unwrap().units_sold, 10);
}

#[test]
fn run_finished_for_an_older_run_is_ignored() {
    let mut p = page();
    p.apply(started("r-2", "lua"));
    p.apply(finished("r-1", "naive", 30));
    assert_eq!(phase(&p), "running");
    assert!(p.history.is_empty());
    // A strategy the server did not list is named as itself.
    p.apply(finished("r-2", "mystery", 10));
    assert_eq!(p.history[0].short_label, "mystery");
}

#[test]
fn run_cancelled_with_a_summary_ends_the_run_and_keeps_the_tally() {
    let mut p = page();
    p.apply(started("r-1", "naive"));
    p.apply(batch("r-1", 6));
    let mut s = summary(10, 6, 4);
    s.cancelled = true;
    p.apply(ServerMessage::RunCancelled {
        run_id: "r-1".into(),
        summary: Some(s),
    });
    let run = p.run.as_ref().unwrap();
    assert_eq!(run.phase.as_str(), "cancelled");
    assert_eq!(run.counters().stock_remaining, 4, "read back by the server");
    assert_eq!(p.history.len(), 1);
    assert!(p.history[0].summary.cancelled);
    assert!(!p.busy());
}

#[test]
fn run_cancelled_without_a_summary_keeps_what_arrived() {
    let mut p = page();
    p.apply(started("r-1", "naive"));
    p.apply(batch("r-1", 6));
    p.apply(ServerMessage::RunCancelled {
        run_id: "r-1".into(),
        summary: None,
    });
    let run = p.run.as_ref().unwrap();
    assert_eq!(run.phase, Phase::Cancelled(None));
    assert_eq!(run.summary(), None);
    assert_eq!(run.counters().units_sold, 6);
    assert!(p.history.is_empty(), "no summary, nothing to compare");
    // For another run: ignored.
    p.apply(started("r-2", "lua"));
    p.apply(ServerMessage::RunCancelled {
        run_id: "r-1".into(),
        summary: None,
    });
    assert_eq!(phase(&p), "running");
}

#[test]
fn a_comparison_brackets_its_races_and_ignores_another_comparisons_end() {
    let mut p = page();
    p.asked(Pending::Compare);
    p.apply(ServerMessage::CompareStarted {
        compare_id: "c-1".into(),
        strategies: vec!["naive".into(), "lua".into()],
        config: config(10, 50).race,
    });
    assert_eq!(p.pending, None);
    assert!(p.comparing() && p.busy());
    p.apply(started("r-1", "naive"));
    assert_eq!(p.compare.as_ref().unwrap().progress_text(), "1 / 2: naive");
    p.apply(finished("r-1", "naive", 10));
    // Between two races no run is in flight, but the comparison is: still busy.
    assert!(p.busy());
    assert_eq!(p.compare.as_ref().unwrap().results.len(), 1);
    // A replayed compare_started does not wipe the races so far.
    p.apply(ServerMessage::CompareStarted {
        compare_id: "c-1".into(),
        strategies: vec!["naive".into(), "lua".into()],
        config: config(10, 50).race,
    });
    assert_eq!(p.compare.as_ref().unwrap().results.len(), 1);
    p.apply(started("r-2", "lua"));
    p.apply(finished("r-2", "lua", 10));
    // Another comparison's end is not ours.
    p.apply(ServerMessage::CompareFinished {
        compare_id: "c-0".into(),
        summaries: vec![],
    });
    assert!(p.comparing());
    let board = p.compare.as_ref().unwrap().results.clone();
    p.apply(ServerMessage::CompareFinished {
        compare_id: "c-1".into(),
        summaries: board,
    });
    assert!(!p.comparing() && !p.busy());
    assert_eq!(p.compare.as_ref().unwrap().phase.as_str(), "finished");
    // Each race also landed in the history, newest first.
    let names: Vec<&str> = p.history.iter().map(|e| e.short_label.as_str()).collect();
    assert_eq!(names, ["Atomic", "Naive"]);
}

#[test]
fn an_error_carrying_the_current_runs_id_fails_that_run() {
    let mut p = page();
    p.apply(started("r-1", "naive"));
    p.apply(batch("r-1", 3));
    p.apply(error(ErrorCode::RunFailed, Some("r-1")));
    assert_eq!(
        p.run.as_ref().unwrap().phase,
        Phase::Failed("run_failed happened".into())
    );
    assert_eq!(answered(&p), 3, "what arrived stays on screen");
    assert!(!p.busy());
    assert_eq!(p.notices.len(), 1);
    assert_eq!(p.notices[0].code, "run_failed");
    // Any code can be a run's terminal error.
    p.apply(started("r-2", "lua"));
    p.apply(error(ErrorCode::ResourceExhausted, Some("r-2")));
    assert_eq!(phase(&p), "failed");
}

#[test]
fn an_error_without_a_run_id_answers_the_pending_start() {
    let mut p = page();
    p.asked(Pending::Run("lua".into()));
    p.apply(error(ErrorCode::Busy, None));
    assert_eq!(p.pending, None);
    assert!(!p.busy());
    assert_eq!(p.notices[0].code, "busy");
    // It leaves a finished run alone.
    p.apply(started("r-1", "lua"));
    p.apply(finished("r-1", "lua", 10));
    p.apply(error(ErrorCode::RateLimited, None));
    assert_eq!(phase(&p), "finished");
}

#[test]
fn an_error_for_another_run_leaves_the_run_on_screen_alone() {
    let mut p = page();
    p.apply(started("r-2", "lua"));
    p.apply(error(ErrorCode::RunFailed, Some("r-1")));
    assert_eq!(phase(&p), "running");
    assert_eq!(p.notices.len(), 1, "still said");
    // A run the page never saw start: the answer to the start it waits for.
    p.apply(finished("r-2", "lua", 10));
    p.asked(Pending::Run("naive".into()));
    p.apply(error(ErrorCode::RedisUnavailable, Some("r-3")));
    assert_eq!(p.pending, None);
}

#[test]
fn notices_stack_up_to_a_few_and_can_be_dismissed() {
    let mut p = page();
    for _ in 0..6 {
        p.apply(error(ErrorCode::RateLimited, None));
    }
    let ids: Vec<u64> = p.notices.iter().map(|n| n.id).collect();
    assert_eq!(ids, [2, 3, 4, 5]);
    p.dismiss(3);
    p.notify("not_connected", "later");
    let ids: Vec<u64> = p.notices.iter().map(|n| n.id).collect();
    assert_eq!(ids, [2, 4, 5, 6]);
}

#[test]
fn a_dropped_socket_interrupts_what_was_in_flight() {
    let mut p = page();
    p.apply(ServerMessage::CompareStarted {
        compare_id: "c-1".into(),
        strategies: vec!["naive".into(), "lua".into()],
        config: config(10, 50).race,
    });
    p.apply(started("r-1", "naive"));
    p.asked(Pending::Run("lua".into()));
    p.disconnected();
    assert_eq!(phase(&p), "interrupted");
    assert_eq!(p.compare.as_ref().unwrap().phase.as_str(), "interrupted");
    assert!(!p.busy());
    // A new hello after reconnecting changes nothing about the interrupted run.
    p.apply(ServerMessage::Hello(Box::new(hello())));
    assert_eq!(phase(&p), "interrupted");
}

/// A checkout run started on `p`, with `n` confirmed stories in.
fn checkout_started(p: &mut PageState, run_id: &str) {
    use crate::model::checkout::fixtures::checkout_config;
    p.apply(ServerMessage::RunStarted {
        run_id: run_id.into(),
        config: checkout_config(10, 50),
    });
}

#[test]
fn checkout_frames_feed_the_run_on_screen_and_only_while_it_runs() {
    use crate::model::checkout::fixtures::{reconciliation, tally_summary};
    use oversold_protocol::{ReconcileReport, Scenario};
    let mut p = page();
    assert_eq!(p.offered(Scenario::Checkout).len(), 4);
    assert_eq!(p.known().len(), p.strategies().len() + 4);
    // Nothing run: the checkout's first featured strategy is explained in checkout mode.
    assert_eq!(
        p.explained_in(Scenario::Checkout).as_deref(),
        Some("atomic_no_holds")
    );
    checkout_started(&mut p, "r-c");
    assert!(p.run.as_ref().unwrap().is_checkout());
    assert_eq!(p.explained_in(Scenario::Checkout).as_deref(), Some("holds"));
    assert_eq!(
        p.explained().as_deref(),
        Some("naive"),
        "the race's panel keeps the race"
    );
    let frame = |run_id: &str, available| ServerMessage::Reconciliation {
        run_id: run_id.into(),
        reconciliation: reconciliation(10, available, 2, 1, 0),
    };
    p.apply(frame("r-c", 7));
    p.apply(frame("r-other", 3)); // another run's: stale
    let live = &p.run.as_ref().unwrap().checkout;
    assert_eq!(
        (live.frames, live.latest.map(|r| r.available)),
        (1, Some(7))
    );
    let after = reconciliation(10, 8, 2, 0, 0);
    p.apply(ServerMessage::Reconciled {
        run_id: "r-c".into(),
        report: ReconcileReport {
            available_before: 7,
            available_after: 8,
            fixed: 1,
            sold: 0,
            held: 2,
            after,
        },
    });
    let live = &p.run.as_ref().unwrap().checkout;
    assert_eq!((live.reports.len(), live.latest), (1, Some(after)));
    // The checkout strategy's words come from hello's checkout list.
    let mut s = tally_summary(10, 6, 4, 0);
    s.strategy = "holds".into();
    p.apply(ServerMessage::RunFinished {
        run_id: "r-c".into(),
        summary: s,
    });
    assert_eq!(p.history[0].short_label, "Holds");
    // Once over, a late frame changes nothing.
    p.apply(frame("r-c", 1));
    assert_eq!(p.run.as_ref().unwrap().checkout.frames, 2);
}

/// A race at scale: no outcomes, the server's totals stand in for them (the grid and the
/// counters read the same numbers), the audit is a page the server sent, flagged as the page
/// flags its own, and the tape says why it draws nothing.
#[test]
fn a_race_at_scale_is_its_progress_and_a_page_of_audit() {
    use oversold_protocol::at_scale::{AuditRows, RunProgress};
    let mut p = page();
    let mut config = config(10, 1_000_000);
    config.strategy = "naive".into();
    p.apply(ServerMessage::RunStarted {
        run_id: "r-big".into(),
        config,
    });
    let progress = RunProgress {
        buyers_done: 40_000,
        units_sold: 34,
        orders_accepted: 34,
        rejected: 39_966,
        last_write: Some((900, 3)),
        ..Default::default()
    };
    p.apply(ServerMessage::RunProgress {
        run_id: "r-big".into(),
        progress,
    });
    let run = p.run.as_ref().unwrap();
    assert!(run.at_scale() && run.rows.is_empty());
    assert_eq!(answered(&p), 40_000);
    let c = run.counters();
    assert_eq!(
        (c.units_sold, c.oversold_units, c.rejected),
        (34, 24, 39_966)
    );
    assert_eq!(
        c.stock_remaining, 3,
        "the counter as last written, as in a streamed race"
    );
    assert!(p.run_tape().is_none());
    assert!(
        run.at_scale_caption()
            .contains("40,000 of them answered so far")
    );

    // Rows 100.. with 9 units sold before them: the second sale takes unit 11, a phantom.
    p.apply(ServerMessage::AuditRows(AuditRows {
        run_id: "r-big".into(),
        from: 100,
        total: 40_000,
        units_sold_before: 9,
        outcomes: vec![
            outcome(7, 1, OutcomeResult::Reserved),
            outcome(8, 1, OutcomeResult::SoldOut),
            outcome(9, 1, OutcomeResult::Reserved),
        ],
    }));
    let w = &p.run.as_ref().unwrap().audit_window;
    let marks: Vec<_> = w.rows.iter().map(|r| (r.seq, r.mark)).collect();
    assert_eq!(
        marks,
        [
            (100, Mark::Reserved),
            (101, Mark::SoldOut),
            (102, Mark::Oversold)
        ]
    );
    assert!(w.covers(&(100..103)) && !w.covers(&(99..101)));
    // Another run's page changes nothing.
    p.apply(ServerMessage::AuditRows(AuditRows {
        run_id: "r-other".into(),
        from: 0,
        total: 1,
        units_sold_before: 0,
        outcomes: vec![outcome(1, 1, OutcomeResult::Reserved)],
    }));
    assert_eq!(p.run.as_ref().unwrap().audit_window.from, 100);
}
