//! The tape view, pinned: real runs (saved by `oversold run --outcomes`) and a synthetic
//! 10,000-buyer race become strips and scenes whose numbers agree with the run's summary.

use oversold_protocol::tape::Tape;
use oversold_protocol::{BuyerOutcome, Guard, OutcomeResult, SavedRun, TapeRule};

use super::caption::{caption, notes, numbers};
use super::from_tape::{MAX_BUYER_LANES, strip};
use super::scene::{Geometry, MIN_COLUMN, Paint, scene};
use super::strip::{CellKind, Column, LaneUnit, Strip};
use super::*;

/// A run saved by `oversold run --outcomes` against a real Redis.
fn saved(name: &str) -> SavedRun {
    let text = match name {
        "naive" => include_str!("fixtures/naive-50.json"),
        "naive_set" => include_str!("fixtures/naive_set-50.json"),
        "sharded" => include_str!("fixtures/sharded-50.json"),
        "failover" => include_str!("fixtures/failover-lua.json"),
        _ => unreachable!("no fixture {name}"),
    };
    serde_json::from_str(text).expect("a saved run")
}

fn tape_of(run: &SavedRun) -> RunTape {
    RunTape::build(run.config.race.stock, run.strategy.tape, &run.outcomes)
}

fn marks(strip: &Strip, kind: CellKind) -> usize {
    strip
        .bands
        .iter()
        .flat_map(|b| &b.columns)
        .filter_map(|c| match c {
            Column::Slot(s) => Some(s.marks.iter().filter(|m| m.kind == kind).count()),
            Column::Folded { .. } | Column::Break { .. } => None,
        })
        .sum()
}

/// A naive race of `buyers` over `stock` units, played serially the way Redis's one thread
/// would: buyers arrive and GET in waves, and each DECRBYs a few commands later, so reads go
/// stale and the counter goes negative, like the real thing.
fn naive_race(stock: u32, buyers: u32) -> Vec<BuyerOutcome> {
    let mut counter = i64::from(stock);
    let mut waiting: Vec<(u32, i64)> = Vec::new();
    let mut out = Vec::new();
    let mut t = 0u64;
    let mut next = 1u32;
    while next <= buyers || !waiting.is_empty() {
        // A wave of reads (bigger early on: the crowd arrives at once), then one write.
        let wave = if next < 200 { 7 } else { 3 };
        for _ in 0..wave {
            if next > buyers {
                break;
            }
            t += 1;
            if counter >= 1 {
                waiting.push((next, counter));
            } else {
                out.push(outcome(next, counter, OutcomeResult::SoldOut, None, t));
            }
            next += 1;
        }
        if !waiting.is_empty() {
            let (b, seen) = waiting.remove(0);
            counter -= 1;
            t += 1;
            out.push(outcome(b, seen, OutcomeResult::Reserved, Some(counter), t));
        }
    }
    out
}

fn outcome(
    buyer: u32,
    seen: i64,
    result: OutcomeResult,
    after: Option<i64>,
    t: u64,
) -> BuyerOutcome {
    BuyerOutcome {
        buyer,
        app_server: buyer % 8,
        qty: 1,
        observed_stock: Some(seen),
        result,
        error: None,
        stock_after: after,
        latency_us: 10,
        start_us: 0,
        end_us: t * 10,
        read_us: None,
        round_trips: 2,
        retries: 0,
        bucket: None,
        node: None,
        checkout: None,
        cart: None,
        epoch: None,
    }
}

const NAIVE: TapeRule = TapeRule::ReadThenDecrement {
    guard: Guard::Unguarded,
};

#[test]
fn a_real_naive_run_agrees_with_its_summary_and_draws_every_buyer() {
    let run = saved("naive");
    let rt = tape_of(&run);
    // The caption's numbers are the summary's: what the counters above the tape show.
    assert_eq!(rt.caption.units_sold, run.summary.units_sold);
    assert_eq!(rt.caption.oversold_units, run.summary.oversold_units);
    assert_eq!(rt.final_counter, Some(run.summary.final_stock));
    assert_eq!(
        numbers(&rt),
        "50 of 10 units sold, 40 oversold; the counter ends at -40."
    );
    assert!(caption(&rt, false).starts_with("50 of 10 units sold"));
    assert!(caption(&rt, true).starts_with("So far: 50 of 10"));
    // Fifty buyers fit a lane each.
    let strip = strip(&rt, run.config.race.app_servers);
    assert_eq!(strip.unit, LaneUnit::Buyer);
    assert_eq!(strip.bands[0].lanes.len(), 50);
    // Every write drawn once; the 40 that took units that did not exist in red.
    assert_eq!(marks(&strip, CellKind::Phantom), 40);
    assert_eq!(marks(&strip, CellKind::Sale), 10);
    // Every sale's read joined to it; every one stale but the first (see the CLI's tape).
    let links = &strip.bands[0].links;
    assert_eq!(links.len(), 50);
    assert_eq!(links.iter().filter(|l| !l.stale).count(), 1);
    // The stock ran out with the write that left 0.
    let out = strip.bands[0].ran_out.expect("it ran out");
    let Column::Slot(slot) = &strip.bands[0].columns[out as usize] else {
        panic!("the run-out column is a slot")
    };
    assert_eq!(slot.counter, Some(0));
    assert_eq!(
        rt.ran_out_us(),
        run.outcomes
            .iter()
            .find(|o| o.stock_after == Some(0))
            .map(|o| o.end_us)
    );
    // Nothing folded: every slot is part of the race.
    let notes = notes(&rt, &strip);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with("Exact: every DECRBY reply"));
}

#[test]
fn a_naive_scene_draws_reads_writes_links_and_the_run_out_line() {
    let run = saved("naive");
    let rt = tape_of(&run);
    let strip = strip(&rt, 8);
    let s = scene(&strip, 1_300.0);
    let g = Geometry::new(&strip, 1_300.0);
    assert_eq!((s.width, s.height), (1_300.0, g.height));
    assert_eq!(s.rects_of(Paint::Cell(CellKind::Phantom)).len(), 40);
    assert_eq!(s.lines_of(Paint::LinkStale).len(), 49);
    assert_eq!(s.lines_of(Paint::Link).len(), 1);
    // Slot 0 holds 33 reads in an unknown order: one shade behind them.
    assert!(!s.rects_of(Paint::Unordered).is_empty());
    let marker = s
        .labels()
        .into_iter()
        .find(|l| l.paint == Paint::Marker)
        .expect("the run-out label");
    assert_eq!(marker.text, "stock ran out");
    assert_eq!(s.rects_of(Paint::Marker).len(), 1);
    // The counter row prints negative counters in the oversold colour, and the last one.
    let negatives: Vec<&str> = s
        .labels()
        .into_iter()
        .filter(|l| l.paint == Paint::CounterNeg)
        .map(|l| l.text.as_str())
        .collect();
    assert_eq!(negatives.last(), Some(&"-40"));
    // Fifty lanes of ~6 px: names every other lane at most, marks too small for text.
    assert!(!g.labels);
    let names = s
        .labels()
        .into_iter()
        .filter(|l| l.paint == Paint::Muted && l.text.starts_with('#'))
        .count();
    assert!((10..50).contains(&names), "{names} lane names");
}

#[test]
fn a_phone_gets_a_wider_picture_to_scroll_rather_than_unreadable_columns() {
    let rt = RunTape::build(10, NAIVE, &naive_race(10, 10_000));
    let strip = strip(&rt, 8);
    let g = Geometry::new(&strip, 390.0);
    assert!(g.column >= MIN_COLUMN);
    let s = scene(&strip, 390.0);
    assert!(s.width >= 390.0);
    assert_eq!(s.width, g.width);
}

#[test]
fn ten_thousand_buyers_draw_the_race_and_fold_the_rest() {
    let outcomes = naive_race(10, 10_000);
    let rt = RunTape::build(10, NAIVE, &outcomes);
    let tape = Tape::build(10, NAIVE, &outcomes);
    assert_eq!(
        tape.verify(),
        Ok(()),
        "the synthetic race is one Redis could run"
    );
    assert_eq!(rt.outcomes, 10_000);
    let strip = strip(&rt, 8);
    assert!(strip.widest() <= strip::MAX_COLUMNS);
    // The race is a few hundred commands at most; the refusals after it fold away.
    let drawn: u32 = strip.bands[0]
        .columns
        .iter()
        .filter_map(|c| match c {
            Column::Slot(s) => Some(s.commands),
            Column::Folded { .. } | Column::Break { .. } => None,
        })
        .sum();
    let folded: u32 = strip.bands[0]
        .columns
        .iter()
        .filter_map(|c| match c {
            Column::Folded { commands } => Some(*commands),
            Column::Slot(_) | Column::Break { .. } => None,
        })
        .sum();
    assert_eq!(drawn + folded, tape.cells().count() as u32);
    assert!(folded > 9_000, "{folded} folded");
    let lanes = strip.bands[0].lanes.len();
    if strip.unit == LaneUnit::Buyer {
        assert!(lanes <= MAX_BUYER_LANES);
    } else {
        assert_eq!(lanes, 8, "eight app servers, a lane each");
    }
    let s = scene(&strip, 1_300.0);
    let shapes: usize = s
        .shapes
        .iter()
        .map(|x| match x {
            crate::model::canvas::Shape::Rects(_, r) => r.len(),
            crate::model::canvas::Shape::Lines(_, _, l) => l.len(),
            _ => 1,
        })
        .sum();
    assert!(shapes < 5_000, "{shapes} shapes for a 10,000-buyer tape");
    let notes = notes(&rt, &strip);
    assert!(
        notes[0].contains("later refusal"),
        "the folded refusals are said: {notes:?}"
    );
}

#[test]
fn sharded_gets_a_band_per_bucket_and_set_marks_shared_reads() {
    let run = saved("sharded");
    let rt = tape_of(&run);
    let s = strip(&rt, 8);
    assert_eq!(s.unit, LaneUnit::Bucket);
    assert_eq!(s.bands.len(), 4);
    assert_eq!(
        s.bands.iter().map(|b| b.label.clone()).collect::<Vec<_>>(),
        ["bucket 1", "bucket 2", "bucket 3", "bucket 4"].map(|l| Some(l.to_string()))
    );
    assert_eq!(rt.caption.units_sold, run.summary.units_sold);
    assert_eq!(rt.final_counter, Some(run.summary.final_stock));
    assert!(
        notes(&rt, &s)
            .iter()
            .any(|n| n.contains("buckets share no value"))
    );

    // naive_set: 50 buyers read 10 and SET 9: one value read by every sale.
    let run = saved("naive_set");
    let rt = tape_of(&run);
    assert_eq!(rt.caption.units_sold, run.summary.units_sold);
    assert_eq!(rt.caption.oversold_units, run.summary.oversold_units);
    assert_eq!(
        rt.final_counter, None,
        "which SET landed last is in no reply"
    );
    assert!(numbers(&rt).ends_with("so the tape cannot say where the counter ends."));
    let s = strip(&rt, 8);
    assert_eq!(marks(&s, CellKind::StaleRead), 50);
    // Fifty SETs of one value: one column, order unknown, placed by value.
    let Column::Slot(sets) = &s.bands[0].columns[1] else {
        panic!("a slot")
    };
    assert_eq!((sets.commands, sets.approx), (50, true));
    assert!(!rt.knows_phantoms);
}

#[test]
fn few_columns_on_few_lanes_print_each_command() {
    let (state, trail) = crate::model::step::fixtures::naive_oversell();
    let log = crate::model::step::log::StepLog::read(&state, &trail);
    let strip = from_step::strip(&state, &log);
    let g = Geometry::new(&strip, 1_300.0);
    assert!(g.labels, "{g:?}");
    let s = scene(&strip, 1_300.0);
    let texts: Vec<&str> = s.labels().into_iter().map(|l| l.text.as_str()).collect();
    for t in ["GET", "DECRBY", "→ -1", "stock ran out", "#1", "#2"] {
        assert!(texts.contains(&t), "{t} in {texts:?}");
    }
    // Reads are outlined (they changed nothing), writes filled.
    assert!(!s.lines_of(Paint::Cell(CellKind::Read)).is_empty());
    assert_eq!(s.rects_of(Paint::Cell(CellKind::Phantom)).len(), 1);
    // On a phone the same picture still fits without scrolling.
    let phone = scene(&strip, 360.0);
    assert_eq!(phone.width, 360.0);
}

#[test]
fn a_real_failover_draws_the_break_where_redis_came_back_with_the_tallys_numbers() {
    // `oversold run --scenario failover --strategy lua --seed 3 --outcomes …`: the primary
    // confirmed down to 5, the replica was promoted at 9.
    let run = saved("failover");
    let f = run.summary.failover.as_deref().expect("a failover summary");
    let rt = tape_of(&run);
    assert_eq!(rt.caption.units_sold, run.summary.units_sold);
    assert_eq!(rt.caption.oversold_units, run.summary.oversold_units);
    assert_eq!(rt.caption.lost_units, f.acknowledged_lost);
    assert_eq!(rt.caption.sold_twice, f.sold_twice);
    assert_eq!(rt.final_counter, Some(run.summary.final_stock));
    assert_eq!(
        caption(&rt, false),
        "14 of 10 units sold, 4 oversold; the counter ends at 0. 14 calls took 14 of 10 units, \
         each at one exact point in Redis's order, 4 of them beyond the stock; 36 found too \
         little stock and changed nothing. Redis came back at 9 after confirming down to 5: 4 \
         acknowledged decrements were lost, and 4 units were sold a second time."
    );
    let strip = strip(&rt, run.config.race.app_servers);
    let columns = &strip.bands[0].columns;
    let breaks: Vec<(usize, &Column)> = columns
        .iter()
        .enumerate()
        .filter(|(_, c)| matches!(c, Column::Break { .. }))
        .collect();
    assert_eq!(
        breaks,
        [(
            5,
            &Column::Break {
                came_back_at: Some(9),
                label: "Redis came back at 9 · 4 acknowledged sales lost".into(),
            }
        )]
    );
    let out = strip.bands[0]
        .ran_out
        .expect("the promoted replica sold out");
    assert!(
        out > 5,
        "the stock ran out in the counter's last life, not before the break"
    );
    assert_eq!(
        marks(&strip, CellKind::Lost),
        4,
        "the sales the replica never had"
    );
    assert_eq!(
        marks(&strip, CellKind::Phantom),
        4,
        "the units sold a second time"
    );
    assert_eq!(marks(&strip, CellKind::Sale), 6);
    // The picture: the divider, its words above the bands, and 9 in the counter row under it.
    let picture = scene(&strip, 1_200.0);
    let g = Geometry::new(&strip, 1_200.0);
    let x = g.x(5) + g.column / 2.0;
    let divider = picture.shapes.iter().any(|s| match s {
        crate::model::canvas::Shape::Rects(Paint::Break, rects) => {
            rects.iter().any(|r| (r.x + r.w / 2.0 - x).abs() < 0.01)
        }
        _ => false,
    });
    assert!(divider, "a divider at the break's column");
    let texts: Vec<(&str, f64)> = picture
        .shapes
        .iter()
        .filter_map(|s| match s {
            crate::model::canvas::Shape::Text(t) => Some((t.text.as_str(), t.x)),
            _ => None,
        })
        .collect();
    assert!(texts.contains(&("Redis came back at 9 · 4 acknowledged sales lost", x + 6.0)));
    assert!(
        texts
            .iter()
            .any(|&(t, tx)| t == "9" && (tx - x).abs() < 0.01),
        "{texts:?}"
    );
}
