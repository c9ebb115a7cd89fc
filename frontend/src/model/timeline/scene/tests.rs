//! The scene's drawing decisions, pinned: what is drawn, in which paint, on which side.

use super::*;
use crate::model::timeline::fixtures::{atomic_run, long_tail, naive_run, tape_for};
use crate::model::timeline::rows::Timeline;

/// The scene of a run's rows, arrival order, zoom on.
fn drawn(run: &crate::model::run::RunModel, width: f64, order: RowOrder) -> Scene {
    let t = Timeline::new(
        &run.rows,
        run.config.race.stock,
        order,
        true,
        Some(&tape_for(run)),
    );
    scene(&t, width, order)
}

fn count(s: &Scene, paint: Paint) -> usize {
    s.rects_of(paint).len()
}

#[test]
fn nothing_is_drawn_before_the_first_answer() {
    let s = scene(&Timeline::default(), 800.0, RowOrder::Arrival);
    assert_eq!((s.width, s.height), (800.0, 0.0));
    assert!(s.shapes.is_empty());
}

#[test]
fn a_naive_race_draws_every_bar_every_read_and_where_the_stock_ran_out() {
    let s = drawn(&naive_run(10, 50), 1_300.0, RowOrder::Arrival);
    let g = Geometry::new(1_300.0, 50, false);
    assert_eq!((s.width, s.height), (1_300.0, g.height));
    assert_eq!(count(&s, Paint::Ground), 1);
    assert_eq!(count(&s, Paint::AfterOut), 1);
    assert_eq!(
        (
            count(&s, Paint::Bar(Mark::Reserved)),
            count(&s, Paint::Bar(Mark::Oversold))
        ),
        (10, 40)
    );
    // Rows 6.4 px apart: every read tick gets its dark halo.
    assert_eq!((count(&s, Paint::Read), count(&s, Paint::Halo)), (50, 50));
    // The whole run fits: no fade, no arrows.
    assert!((1..=8).all(|n| count(&s, Paint::Fade(n)) == 0));
    assert!(s.arrows_of(Paint::Bar(Mark::Oversold)).is_empty());
    // 1,500 µs on 13 intervals: ticks every 0.2 ms up to 1.6 ms, centred under their lines.
    let labels = s.labels();
    let ticks: Vec<&str> = labels
        .iter()
        .filter(|l| l.paint == Paint::Muted)
        .map(|l| l.text.as_str())
        .collect();
    assert_eq!(
        ticks,
        [
            "0", "0.2 ms", "0.4 ms", "0.6 ms", "0.8 ms", "1 ms", "1.2 ms", "1.4 ms", "1.6 ms"
        ]
    );
    assert!(
        labels
            .iter()
            .filter(|l| l.paint == Paint::Muted)
            .all(|l| (l.anchor, l.baseline) == (Anchor::Middle, Baseline::Top))
    );
    assert_eq!(count(&s, Paint::Grid), 9);
    // The stock ran out at 1.1 ms, right of 55% of the width: the label ends at the line.
    let marker = labels.iter().find(|l| l.paint == Paint::Marker).unwrap();
    assert_eq!(marker.text, "stock ran out · 1.1 ms");
    assert_eq!((marker.anchor, marker.bold), (Anchor::End, true));
    let line = s.rects_of(Paint::Marker)[0];
    assert_eq!(marker.x, line.x + 1.0 - 6.0);
}

#[test]
fn the_run_out_label_goes_right_of_an_early_line() {
    // The whole 2 ms of a long tail: the stock ran out at 150 µs, near the left edge.
    let run = long_tail(200);
    let t = Timeline::new(
        &run.rows,
        10,
        RowOrder::Arrival,
        false,
        Some(&tape_for(&run)),
    );
    let s = scene(&t, 1_300.0, RowOrder::Arrival);
    let marker = s
        .labels()
        .into_iter()
        .find(|l| l.paint == Paint::Marker)
        .cloned()
        .unwrap();
    assert_eq!(marker.text, "stock ran out · 150 µs");
    assert_eq!(marker.anchor, Anchor::Start);
    assert_eq!(marker.x, s.rects_of(Paint::Marker)[0].x + 1.0 + 6.0);
}

#[test]
fn an_atomic_race_has_no_reads_to_draw() {
    let s = drawn(&atomic_run(10, 50), 1_300.0, RowOrder::Arrival);
    assert_eq!((count(&s, Paint::Read), count(&s, Paint::Halo)), (0, 0));
    assert_eq!(count(&s, Paint::Bar(Mark::SoldOut)), 40);
}

#[test]
fn ten_thousand_rows_share_pixels_and_lose_the_halo() {
    // The whole run (zoomed, reads past the edge would be cut: they are not drawn).
    let run = naive_run(10, 10_000);
    let t = Timeline::new(
        &run.rows,
        10,
        RowOrder::Arrival,
        false,
        Some(&tape_for(&run)),
    );
    let s = scene(&t, 1_300.0, RowOrder::Arrival);
    assert_eq!(count(&s, Paint::Read), 10_000);
    assert_eq!(count(&s, Paint::Halo), 0, "it would blacken the picture");
    // Still one fill per colour.
    let fills = s
        .shapes
        .iter()
        .filter(|x| matches!(x, Shape::Rects(Paint::Bar(_), _)))
        .count();
    assert_eq!(fills, 2);
    // Zoomed to the race, reads that came back after the edge are left out.
    let zoomed = drawn(&run, 1_300.0, RowOrder::Arrival);
    assert_eq!(count(&zoomed, Paint::Read), 3_200);
}

#[test]
fn a_zoomed_picture_fades_at_its_edge_and_ends_running_bars_in_arrows() {
    // 200 buyers, zoomed to 450 µs: 44 rows shown, and buyers 41..=44 run past the edge.
    let s = drawn(&long_tail(200), 1_300.0, RowOrder::Arrival);
    let g = Geometry::new(1_300.0, 44, false);
    let fade: Vec<Rect> = (1..=8).flat_map(|n| s.rects_of(Paint::Fade(n))).collect();
    assert_eq!(fade.len(), 8);
    assert_eq!(fade[0].x, g.right - 16.0);
    assert_eq!(fade[7].x + fade[7].w, g.right);
    let arrows = s.arrows_of(Paint::Bar(Mark::SoldOut));
    assert_eq!(arrows.len(), 4);
    assert!(arrows.iter().all(|a| a.x == g.right + 2.0 && a.tip() > a.x));
    // Without the zoom: the whole run, nothing clipped.
    let run = long_tail(200);
    let whole = Timeline::new(
        &run.rows,
        10,
        RowOrder::Arrival,
        false,
        Some(&tape_for(&run)),
    );
    let w = scene(&whole, 1_300.0, RowOrder::Arrival);
    assert!(w.arrows_of(Paint::Bar(Mark::SoldOut)).is_empty());
    assert_eq!(count(&w, Paint::Fade(1)), 0);
}

#[test]
fn on_a_phone_rows_are_too_thin_for_arrows_and_end_in_slivers() {
    // The same 44 rows in a 240 px plot: bars under 4 px thick.
    let s = drawn(&long_tail(200), 340.0, RowOrder::Arrival);
    let g = Geometry::new(340.0, 44, false);
    assert!(g.thickness < 4.0);
    assert!(s.arrows_of(Paint::Bar(Mark::SoldOut)).is_empty());
    let slivers: Vec<Rect> = s
        .rects_of(Paint::Bar(Mark::SoldOut))
        .into_iter()
        .filter(|r| r.x == g.right + 2.0)
        .collect();
    assert_eq!(slivers.len(), 4);
    assert!(slivers.iter().all(|r| r.w == 5.0));
}

#[test]
fn grouped_rows_get_rules_and_a_label_where_a_group_is_tall_enough() {
    // 300 buyers, all on app server 0 but one, alone on app server 1: a one-row group (about
    // 1 px) gets its rule but no label.
    let mut run = naive_run(10, 300);
    for row in &mut run.rows {
        row.outcome.app_server = 0;
    }
    run.rows[0].outcome.app_server = 1;
    let s = drawn(&run, 1_300.0, RowOrder::AppServer);
    assert_eq!(count(&s, Paint::GroupRule), 1);
    let labels: Vec<(String, Anchor)> = s
        .labels()
        .into_iter()
        .filter(|l| l.text.starts_with("app "))
        .map(|l| (l.text.clone(), l.anchor))
        .collect();
    assert_eq!(labels, [("app 1".to_string(), Anchor::Start)]);
    // By arrival: no groups at all.
    let flat = drawn(&run, 1_300.0, RowOrder::Arrival);
    assert_eq!(count(&flat, Paint::GroupRule), 0);
}

#[test]
fn rarer_colours_are_drawn_last() {
    let order: Vec<Mark> = BAR_ORDER.to_vec();
    let pos = |m: Mark| order.iter().position(|&x| x == m).unwrap();
    assert!(pos(Mark::SoldOut) < pos(Mark::Reserved));
    assert!(pos(Mark::Reserved) < pos(Mark::Oversold));
    assert_eq!(order.last(), Some(&Mark::Oversold));
}
