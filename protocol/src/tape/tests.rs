//! Hand-written histories for every rule: ones Redis can produce (they verify, their captions
//! agree with the counters) and corrupted ones (they must be rejected).

use std::time::Instant;

use super::*;
use crate::{BuyerOutcome, OutcomeResult};

const NAIVE: TapeRule = TapeRule::ReadThenDecrement {
    guard: Guard::Unguarded,
};
const LOCK: TapeRule = TapeRule::ReadThenDecrement { guard: Guard::Lock };
const WATCH: TapeRule = TapeRule::ReadThenDecrement {
    guard: Guard::Watch,
};
const ROW_LOCK: TapeRule = TapeRule::ReadThenDecrement {
    guard: Guard::RowLock,
};
const LUA: TapeRule = TapeRule::AtomicCall {
    call: ScriptCall::Evalsha,
};
const FCALL: TapeRule = TapeRule::AtomicCall {
    call: ScriptCall::Fcall,
};
const SHARDED: TapeRule = TapeRule::AtomicPerBucket { buckets: 4 };

fn outcome(buyer: u32, qty: u32, result: OutcomeResult, seen: Option<i64>) -> BuyerOutcome {
    BuyerOutcome {
        buyer,
        app_server: 0,
        qty,
        observed_stock: seen,
        result,
        error: None,
        stock_after: None,
        latency_us: 0,
        start_us: 0,
        end_us: 0,
        read_us: None,
        round_trips: 1,
        retries: 0,
        bucket: None,
        node: None,
        checkout: None,
        cart: None,
        epoch: None,
    }
}

/// A buyer that saw `seen` and was sold `qty`, the counter answering `after`.
fn sold(buyer: u32, qty: u32, seen: i64, after: i64) -> BuyerOutcome {
    BuyerOutcome {
        stock_after: Some(after),
        ..outcome(buyer, qty, OutcomeResult::Reserved, Some(seen))
    }
}

/// A buyer that saw `seen` and was refused.
fn refused(buyer: u32, qty: u32, seen: i64) -> BuyerOutcome {
    outcome(buyer, qty, OutcomeResult::SoldOut, Some(seen))
}

fn in_bucket(bucket: u32, o: BuyerOutcome) -> BuyerOutcome {
    BuyerOutcome {
        bucket: Some(bucket),
        ..o
    }
}

/// What the server's summary says for these outcomes (the same definitions as `summary.rs`).
fn summary_numbers(stock: u32, outcomes: &[BuyerOutcome]) -> (u32, u64, u64) {
    let sold: u64 = outcomes
        .iter()
        .filter(|o| o.result == OutcomeResult::Reserved)
        .map(|o| u64::from(o.qty))
        .sum();
    (stock, sold, sold.saturating_sub(u64::from(stock)))
}

/// Build, verify, and hold the caption to the summary's numbers.
fn good(stock: u32, rule: TapeRule, outcomes: &[BuyerOutcome]) -> Tape {
    let tape = Tape::build(stock, rule, outcomes);
    if let Err(e) = tape.verify() {
        panic!(
            "{rule:?} should verify: {e}\n{}",
            tape.lines().collect::<Vec<_>>().join("\n")
        );
    }
    let c = tape.caption();
    assert_eq!(
        (c.stock, c.units_sold, c.oversold_units),
        summary_numbers(stock, outcomes),
        "{rule:?}: {}",
        c.sentence
    );
    tape
}

fn bad(stock: u32, rule: TapeRule, outcomes: &[BuyerOutcome]) -> Contradiction {
    let tape = Tape::build(stock, rule, outcomes);
    match tape.verify() {
        Ok(()) => panic!(
            "{rule:?} should be rejected:\n{}",
            tape.lines().collect::<Vec<_>>().join("\n")
        ),
        Err(e) => e,
    }
}

fn lines(tape: &Tape) -> Vec<String> {
    tape.lines().collect()
}

// ---- naive: GET, then DECRBY ----------------------------------------------------------

/// The article's race: both read 1, both decrement.
fn article() -> Vec<BuyerOutcome> {
    vec![sold(12, 1, 1, -1), sold(7, 1, 1, 0)]
}

#[test]
fn the_article_race_prints_as_the_article_tells_it() {
    let tape = good(1, NAIVE, &article());
    assert_eq!(
        lines(&tape),
        [
            "#7  GET stock -> 1",
            "#12 GET stock -> 1",
            "#7  DECRBY stock 1 -> 0",
            "#12 DECRBY stock 1 -> -1  (stale read: 1 sale landed since its GET; sold a unit that did not exist)",
        ]
    );
    // Both reads share one slot: between the start and the first write, order unknown.
    assert_eq!(tape.lanes[0].slots.len(), 3);
    assert_eq!(tape.lanes[0].slots[0].cells.len(), 2);
    assert_eq!(tape.final_counter(), Some(-1));
    let c = tape.caption();
    assert_eq!((c.stale_sales, c.phantom_sales, c.passed_check), (1, 1, 2));
    assert_eq!(
        c.sentence,
        "2 buyers read a stock of 1 or more; only 1 unit existed; 1 decremented a counter that had \
         already reached 0 by the time their DECRBY ran."
    );
}

/// The issue's run: 25 sold of 10. Sixteen read 10 before any write; nine read later, every
/// one of them before the counter reached 0.
fn issue_run() -> Vec<BuyerOutcome> {
    let mut outcomes = Vec::new();
    for b in 1..=25u32 {
        let after = 10 - i64::from(b);
        let seen = if b <= 16 { 10 } else { 10 - i64::from(b - 16) };
        outcomes.push(sold(b, 1, seen, after));
    }
    outcomes.extend((26..=50).map(|b| refused(b, 1, -15)));
    outcomes
}

#[test]
fn the_issue_run_gets_a_caption_that_matches_its_counters() {
    let tape = good(10, NAIVE, &issue_run());
    let c = tape.caption();
    assert_eq!(
        c.sentence,
        "25 buyers read a stock of 1 or more; only 10 units existed; 15 decremented a counter that \
         had already reached 0 by the time their DECRBY ran."
    );
    assert_eq!((c.sales, c.refused, c.phantom_units), (25, 25, 15));
    // Every oversold write had a stale read: it wrote after the counter had moved.
    for (_, cell) in tape.cells().filter(|(_, c)| c.phantom_units > 0) {
        assert!(cell.is_stale(), "buyer #{}", cell.buyer);
    }
    // Buyer 17 read 9 (after buyer 1's write), and wrote 17th: 15 sales landed in between.
    let write = tape
        .cells()
        .find(|(_, c)| c.buyer == 17 && c.command == Command::Decrement)
        .unwrap()
        .1;
    assert_eq!(write.writes_between, Some(15));
}

#[test]
fn a_decrby_reply_that_does_not_fit_is_rejected() {
    // 10 -> 9 -> 7 with one unit each: one write is missing from the story.
    let e = bad(10, NAIVE, &[sold(1, 1, 10, 9), sold(2, 1, 10, 7)]);
    assert!(
        matches!(
            e,
            Contradiction::Mismatch {
                buyer: 2,
                expected: 8,
                got: 7,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn a_get_of_a_value_no_write_produced_is_rejected() {
    let e = bad(10, NAIVE, &[sold(1, 1, 10, 9), refused(2, 6, 5)]);
    assert_eq!(
        e,
        Contradiction::Unplaceable {
            buyer: 2,
            command: Command::Read,
            value: 5
        }
    );
    assert!(e.to_string().contains("no write left"), "{e}");
}

#[test]
fn a_duplicated_buyer_is_rejected() {
    let mut outcomes = article();
    outcomes.push(sold(7, 1, 1, 0));
    assert_eq!(
        bad(1, NAIVE, &outcomes),
        Contradiction::DuplicateBuyer { buyer: 7 }
    );
}

#[test]
fn decisions_that_do_not_fit_the_read_are_rejected() {
    // Wrote although it read 0.
    let e = bad(1, NAIVE, &[sold(1, 1, 1, 0), sold(2, 1, 0, -1)]);
    assert!(
        matches!(e, Contradiction::WrongDecision { buyer: 2, .. }),
        "{e}"
    );
    // Refused although it read enough.
    let e = bad(2, NAIVE, &[sold(1, 1, 2, 1), refused(2, 1, 1)]);
    assert!(
        matches!(e, Contradiction::WrongDecision { buyer: 2, .. }),
        "{e}"
    );
}

#[test]
fn a_read_after_its_own_write_is_rejected() {
    // Buyer 2's DECRBY answered 9 (so it ran first), yet it claims to have read 8.
    let e = bad(10, NAIVE, &[sold(1, 1, 10, 8), sold(2, 1, 8, 9)]);
    assert_eq!(e, Contradiction::ReadAfterWrite { buyer: 2 });
}

#[test]
fn a_sale_without_its_reply_is_rejected() {
    let o = outcome(1, 1, OutcomeResult::Reserved, Some(3));
    assert!(matches!(
        bad(3, NAIVE, &[o]),
        Contradiction::MissingReply { buyer: 1, .. }
    ));
}

#[test]
fn an_unanswered_write_explains_a_gap_and_no_more() {
    // Buyer 2's DECRBY was sent and never answered; buyer 3's reply shows it landed.
    let lost = outcome(2, 2, OutcomeResult::Unknown, Some(10));
    let outcomes = [sold(1, 1, 10, 9), lost.clone(), sold(3, 1, 7, 6)];
    let tape = good(10, NAIVE, &outcomes);
    assert_eq!(tape.in_doubt_units, 2);
    assert_eq!(tape.final_counter(), None);
    let gap = &tape.lanes[0].slots[2];
    assert_eq!(
        (gap.kind, gap.before, gap.after),
        (SlotKind::Gap, Some(9), Some(7))
    );
    assert_eq!(tape.unplaced.len(), 1);
    assert!(lines(&tape).iter().any(|l| l.starts_with("--")));
    // A drop of 3 is more than the 2 units in doubt can explain.
    let e = bad(10, NAIVE, &[sold(1, 1, 10, 9), lost, sold(3, 1, 6, 5)]);
    assert!(
        matches!(e, Contradiction::UnexplainedDrop { units: 3, .. }),
        "{e}"
    );
}

#[test]
fn multi_unit_orders_count_the_units_that_did_not_exist() {
    // 3 units; #1 takes 2 (3 -> 1), #2 read 3 too and takes 3 (1 -> -2): 2 of its 3 are phantom.
    let tape = good(3, NAIVE, &[sold(1, 2, 3, 1), sold(2, 3, 3, -2)]);
    let c = tape.caption();
    assert_eq!(
        (c.oversold_units, c.phantom_units, c.phantom_sales),
        (2, 2, 1)
    );
    assert!(
        lines(&tape)[3]
            .ends_with("(stale read: 1 sale landed since its GET; 2 of its 3 units did not exist)")
    );
    assert!(
        c.sentence.contains("(2 units that did not exist)"),
        "{}",
        c.sentence
    );
}

// ---- guarded: lock, watch, row lock ---------------------------------------------------

fn serial() -> Vec<BuyerOutcome> {
    vec![
        sold(4, 1, 2, 1),
        sold(9, 1, 1, 0),
        refused(2, 1, 0),
        refused(5, 2, 1),
    ]
}

#[test]
fn guarded_reads_and_writes_are_adjacent() {
    let mut outcomes = serial();
    // Buyer 5 read 1 between the two sales, wanted 2, and was refused.
    outcomes[3] = refused(5, 2, 1);
    for rule in [LOCK, WATCH, ROW_LOCK] {
        let tape = good(2, rule, &outcomes);
        let c = tape.caption();
        assert_eq!((c.sales, c.refused, c.stale_sales), (2, 2, 0));
        assert!(
            c.sentence.contains("none of them beyond the stock"),
            "{}",
            c.sentence
        );
    }
    let tape = good(2, WATCH, &outcomes);
    assert_eq!(
        lines(&tape)[..2],
        [
            "#4 WATCH stock · GET stock -> 2",
            "#4 MULTI · DECRBY stock 1 · EXEC -> [1]"
        ]
    );
    let tape = good(2, ROW_LOCK, &outcomes);
    assert_eq!(
        lines(&tape)[..2],
        [
            "#4 SELECT stock FOR UPDATE -> 2",
            "#4 UPDATE stock = stock - 1 -> 1"
        ]
    );
}

#[test]
fn a_stale_read_under_a_guard_is_rejected() {
    // Fine for naive; impossible if a lock held: buyer 2's DECRBY came after buyer 1's.
    let outcomes = [sold(1, 1, 2, 1), sold(2, 1, 2, 0)];
    good(2, NAIVE, &outcomes);
    for rule in [LOCK, WATCH, ROW_LOCK] {
        assert_eq!(
            bad(2, rule, &outcomes),
            Contradiction::GuardBroken {
                buyer: 2,
                writes_between: 1
            }
        );
    }
}

#[test]
fn discarded_attempts_and_lock_polls_are_counted_not_drawn() {
    let mut outcomes = serial();
    outcomes[1].retries = 3; // three WATCH attempts thrown away before this one
    outcomes.push(outcome(11, 1, OutcomeResult::GaveUp, None)); // lost every attempt
    outcomes[4].retries = 49;
    let tape = good(2, WATCH, &outcomes);
    assert_eq!(tape.not_drawn, 3 + 49 + 1);
    assert!(
        tape.caption()
            .sentence
            .ends_with("; 53 discarded attempts not drawn."),
        "{}",
        tape.caption().sentence
    );
    assert!(
        tape.caption()
            .sentence
            .contains("2 read too little and were refused")
    );
    // Naive retries nothing: nothing is hidden.
    assert_eq!(Tape::build(2, NAIVE, &outcomes).not_drawn, 0);
}

// ---- naive_set: GET, then SET ---------------------------------------------------------

#[test]
fn lost_updates_are_grouped_by_value() {
    // A and B read 3 and both SET 2; C read 2 and SET 1; D read 1 and SET 0; E read 0.
    let outcomes = [
        sold(1, 1, 3, 2),
        sold(2, 1, 3, 2),
        sold(3, 1, 2, 1),
        sold(4, 1, 1, 0),
        refused(5, 1, 0),
    ];
    let tape = good(3, TapeRule::ReadThenSet, &outcomes);
    assert_eq!(
        lines(&tape),
        [
            "#1 GET stock -> 3",
            "#2 GET stock -> 3",
            "#1 SET stock 2 -> OK  (placed by value: one of 2 SETs of this value)",
            "#2 SET stock 2 -> OK  (placed by value: one of 2 SETs of this value)",
            "#3 GET stock -> 2",
            "#3 SET stock 1 -> OK  (placed by value)",
            "#4 GET stock -> 1",
            "#4 SET stock 0 -> OK  (placed by value)",
            "#5 GET stock -> 0",
        ]
    );
    // Which SET landed last is not in any reply.
    assert_eq!(tape.final_counter(), None);
    let c = tape.caption();
    assert_eq!(
        (c.oversold_units, c.shared_read_sales, c.lost_sales_at_least),
        (1, 2, 1)
    );
    assert_eq!(
        c.sentence,
        "4 buyers read the stock and wrote back their own subtraction with SET: 4 units sold, only 3 \
         units existed; 2 of those sales were computed from a value another sale also read, so at \
         least 1 can never show on the counter."
    );
    // Reads of the starting stock came before every SET; the rest are placed by value only.
    let placements: Vec<Placement> = tape.cells().map(|(_, c)| c.placement).collect();
    assert_eq!(placements[..2], [Placement::Exact; 2]);
    assert!(placements[2..].iter().all(|&p| p == Placement::ByValue));
}

/// `postgres_naive`: the same history as SETs, told in SQL, ordered the same way.
#[test]
fn lost_updates_in_sql_read_as_select_and_update() {
    let outcomes = [
        sold(1, 1, 3, 2),
        sold(2, 1, 3, 2),
        sold(3, 1, 2, 1),
        refused(4, 2, 1),
    ];
    let tape = good(3, TapeRule::SelectThenUpdate, &outcomes);
    assert_eq!(
        lines(&tape),
        [
            "#1 SELECT stock -> 3",
            "#2 SELECT stock -> 3",
            "#1 UPDATE SET stock = 2 -> 1 row  (placed by value: one of 2 UPDATEs to this value)",
            "#2 UPDATE SET stock = 2 -> 1 row  (placed by value: one of 2 UPDATEs to this value)",
            "#3 SELECT stock -> 2",
            "#3 UPDATE SET stock = 1 -> 1 row  (placed by value)",
            "#4 SELECT stock -> 1",
        ]
    );
    assert_eq!(tape.final_counter(), None);
    let c = tape.caption();
    assert_eq!((c.shared_read_sales, c.lost_sales_at_least), (2, 1));
    assert!(
        c.sentence.starts_with(
            "3 buyers read the stock and wrote back their own subtraction with UPDATE"
        ),
        "{}",
        c.sentence
    );
    let wire = serde_json::to_string(&TapeRule::SelectThenUpdate).unwrap();
    assert_eq!(wire, r#"{"kind":"select_then_update"}"#);
    assert!(TapeRule::SelectThenUpdate.overwrites() && TapeRule::SelectThenUpdate.in_sql());
    assert!(!TapeRule::ReadThenSet.in_sql() && ROW_LOCK.in_sql() && !ROW_LOCK.overwrites());
}

#[test]
fn a_slow_set_that_raises_the_counter_still_verifies() {
    // Really: A, B read 3; A SET 2; C read 2, SET 1; B (slow) SET 2; D read 2, SET 1.
    // The counter went back up. Grouping by value still explains every reply.
    let outcomes = [
        sold(1, 1, 3, 2),
        sold(2, 1, 3, 2),
        sold(3, 1, 2, 1),
        sold(4, 1, 2, 1),
    ];
    let tape = good(3, TapeRule::ReadThenSet, &outcomes);
    assert_eq!(tape.caption().lost_sales_at_least, 2);
}

#[test]
fn corrupted_set_histories_are_rejected() {
    // SET must write read - qty.
    let e = bad(3, TapeRule::ReadThenSet, &[sold(1, 1, 3, 1)]);
    assert!(
        matches!(
            e,
            Contradiction::Mismatch {
                buyer: 1,
                expected: 2,
                got: 1,
                ..
            }
        ),
        "{e}"
    );
    // Nobody wrote 1, so nobody can have read it.
    let e = bad(
        3,
        TapeRule::ReadThenSet,
        &[sold(1, 1, 3, 2), refused(2, 2, 1)],
    );
    assert!(
        matches!(
            e,
            Contradiction::Unplaceable {
                buyer: 2,
                value: 1,
                ..
            }
        ),
        "{e}"
    );
}

// ---- atomic calls: lua, function ------------------------------------------------------

fn scripted() -> Vec<BuyerOutcome> {
    vec![
        sold(3, 1, 2, 1),
        refused(8, 2, 1),
        sold(1, 1, 1, 0),
        refused(2, 1, 0),
        refused(6, 1, 0),
    ]
}

#[test]
fn a_script_sits_at_one_exact_point() {
    let tape = good(2, LUA, &scripted());
    assert_eq!(
        lines(&tape),
        [
            "#3 EVALSHA reserve stock 1 -> {1, 2, 1}",
            "#8 EVALSHA reserve stock 2 -> {0, 1, 1}",
            "#1 EVALSHA reserve stock 1 -> {1, 1, 0}",
            "#2 EVALSHA reserve stock 1 -> {0, 0, 0}",
            "#6 EVALSHA reserve stock 1 -> {0, 0, 0}",
        ]
    );
    assert_eq!(tape.final_counter(), Some(0));
    assert_eq!(
        tape.caption().sentence,
        "2 calls took 2 of 2 units, each at one exact point in Redis's order, none of them beyond \
         the stock; 3 found too little stock and changed nothing."
    );
    let tape = good(2, FCALL, &scripted());
    assert_eq!(
        lines(&tape)[0],
        "#3 FCALL oversold_v2_reserve 1 stock 1 -> {1, 2, 1}"
    );
}

#[test]
fn corrupted_script_replies_are_rejected() {
    // Refused while the counter held enough.
    let mut outcomes = scripted();
    outcomes[1] = refused(8, 1, 1);
    let e = bad(2, LUA, &outcomes);
    assert!(
        matches!(e, Contradiction::WrongDecision { buyer: 8, .. }),
        "{e}"
    );
    // A sale whose before is not where the last sale left the counter.
    let mut outcomes = scripted();
    outcomes[2] = sold(1, 1, 2, 0);
    let e = bad(2, LUA, &outcomes);
    assert!(matches!(e, Contradiction::Mismatch { buyer: 1, .. }), "{e}");
}

// ---- sharded: atomic per bucket -------------------------------------------------------

#[test]
fn buckets_are_dealt_like_the_server_deals_them() {
    assert_eq!(deal(10, 4), [3, 3, 2, 2]);
    assert_eq!(deal(2, 4), [1, 1, 0, 0]);
    assert_eq!(deal(0, 3), [0, 0, 0]);
}

#[test]
fn each_bucket_is_its_own_exact_lane() {
    // 5 units over 4 buckets: [2, 1, 1, 1].
    let mut late = in_bucket(1, refused(6, 1, 0));
    late.retries = 1; // its first probe, on another bucket, was refused too: not reported
    let outcomes = [
        in_bucket(0, sold(1, 1, 2, 1)),
        in_bucket(0, sold(2, 1, 1, 0)),
        in_bucket(1, sold(3, 1, 1, 0)),
        in_bucket(3, sold(4, 1, 1, 0)),
        late,
    ];
    let tape = good(5, SHARDED, &outcomes);
    assert_eq!(tape.lanes.len(), 4);
    assert_eq!(tape.lanes[2].slots.len(), 0);
    assert_eq!(tape.final_counter(), Some(1));
    assert_eq!(tape.not_drawn, 1);
    assert_eq!(
        lines(&tape)[0],
        "#1 EVALSHA reserve bucket:0 1 -> {1, 2, 1}"
    );
    assert!(
        tape.caption()
            .sentence
            .ends_with("; 1 earlier refused probes not drawn.")
    );
    // The same sale claimed by a bucket that never held it.
    let mut wrong = outcomes.clone();
    wrong[3] = in_bucket(2, sold(4, 1, 2, 1));
    let e = bad(5, SHARDED, &wrong);
    assert!(matches!(e, Contradiction::Mismatch { buyer: 4, .. }), "{e}");
    // No bucket: cannot be placed.
    let mut lost = outcomes.clone();
    lost[0].bucket = None;
    assert!(matches!(
        bad(5, SHARDED, &lost),
        Contradiction::MissingReply { buyer: 1, .. }
    ));
}

// ---- decr_compensate: DECRBY, then undo -----------------------------------------------

/// A decrement-first outcome: `after` is the DECRBY's reply.
fn decr(buyer: u32, qty: u32, after: i64) -> BuyerOutcome {
    let seen = after + i64::from(qty);
    if after >= 0 {
        sold(buyer, qty, seen, after)
    } else {
        refused(buyer, qty, seen)
    }
}

#[test]
fn sales_are_exact_and_overshoots_placed_no_later_than_they_can_be() {
    let outcomes = [decr(1, 1, 1), decr(2, 1, 0), decr(3, 1, -1), decr(4, 1, -2)];
    let tape = good(2, TapeRule::DecrementThenUndo, &outcomes);
    assert_eq!(
        lines(&tape),
        [
            "#1 DECRBY stock 1 -> 1",
            "#2 DECRBY stock 1 -> 0",
            "#3 DECRBY stock 1 -> -1  (below 0, not a sale; ran no later than here)",
            "#3 INCRBY stock 1 -> (not reported)  (the undo, some time after its DECRBY)",
            "#4 DECRBY stock 1 -> -2  (below 0, not a sale; ran no later than here)",
            "#4 INCRBY stock 1 -> (not reported)  (the undo, some time after its DECRBY)",
        ]
    );
    assert_eq!(tape.final_counter(), Some(0));
    let c = tape.caption();
    assert_eq!(c.overshoots, 2);
    assert!(c.sentence.contains(", in exact order;"), "{}", c.sentence);
}

#[test]
fn a_pending_overshoot_blurs_the_order_of_later_sales() {
    // 5 units. Y wants 6: 5 -> -1. X wants 2: -1 -> -3. Y's undo: 3. Z takes 1: 3 -> 2.
    // X's undo: 4. W takes 1: 4 -> 3. W answered more than Z although it came later.
    let outcomes = [decr(1, 6, -1), decr(2, 2, -3), decr(3, 1, 2), decr(4, 1, 3)];
    let tape = good(5, TapeRule::DecrementThenUndo, &outcomes);
    let sales: Vec<(u32, Placement)> = tape
        .cells()
        .filter(|(_, c)| c.is_sale())
        .map(|(_, c)| (c.buyer, c.placement))
        .collect();
    assert_eq!(sales, [(4, Placement::Witness), (3, Placement::Witness)]);
    assert_eq!(tape.final_counter(), Some(3));
    assert!(
        tape.caption()
            .sentence
            .contains("in an order that explains every reply")
    );
}

#[test]
fn corrupted_decrement_histories_are_rejected() {
    // A sale that starts above the stock that was never sold.
    let e = bad(
        2,
        TapeRule::DecrementThenUndo,
        &[decr(1, 1, 1), decr(2, 1, 1)],
    );
    assert!(matches!(e, Contradiction::Mismatch { buyer: 2, .. }), "{e}");
    // A reported "before" that is not reply + qty.
    let mut o = decr(1, 1, 1);
    o.observed_stock = Some(5);
    let e = bad(2, TapeRule::DecrementThenUndo, &[o]);
    assert!(matches!(e, Contradiction::Mismatch { buyer: 1, .. }), "{e}");
    // A drop nothing can explain: no overshoot was ever out.
    let e = bad(3, TapeRule::DecrementThenUndo, &[decr(1, 1, 0)]);
    assert!(matches!(e, Contradiction::UnexplainedDrop { .. }), "{e}");
    // An overshoot that saw more than ever existed.
    let e = bad(2, TapeRule::DecrementThenUndo, &[decr(1, 5, -1)]);
    assert!(
        matches!(e, Contradiction::Unplaceable { buyer: 1, .. }),
        "{e}"
    );
}

// ---- zoom ------------------------------------------------------------------------------

#[test]
fn zoom_shows_the_race_and_folds_the_refusals_after_it() {
    let tape = good(10, NAIVE, &issue_run());
    // Everything up to the last oversold write is the story; the 25 refusals after are not.
    let zoom = tape.zoom();
    let last = tape.lanes[0].slots.len() as u32 - 1;
    match zoom.parts[..] {
        [
            ZoomPart::Shown { from: 0, to, .. },
            folded @ ZoomPart::Folded { refusals: 25, .. },
        ] => {
            assert_eq!(to, last - 1);
            assert_eq!(folded.describe().unwrap(), "25 later refusals not shown");
        }
        ref parts => panic!("{parts:?}"),
    }
    // A safe run: the race ends when the counter reaches 0.
    let mut outcomes: Vec<_> = (1..=3)
        .map(|b| sold(b, 1, 4 - i64::from(b), 3 - i64::from(b)))
        .collect();
    outcomes.extend((4..=8400).map(|b| refused(b, 1, 0)));
    let tape = good(3, LUA, &outcomes);
    let zoom = tape.zoom();
    assert_eq!(zoom.parts.len(), 2);
    assert_eq!(
        zoom.parts[1].describe().unwrap(),
        "8,397 later refusals not shown"
    );
}

// ---- size --------------------------------------------------------------------------------

/// 10,000 naive buyers: most read early, all write. Run with `--nocapture` to see the time.
#[test]
fn ten_thousand_buyers_build_and_verify_quickly() {
    let n = 10_000u32;
    let stock = 2_500i64;
    let outcomes: Vec<BuyerOutcome> = (1..=n)
        .map(|b| {
            let after = stock - i64::from(b);
            // Read somewhere between the start and just before its own write, and at least 1:
            // the app only writes when its read covered the order.
            let seen = stock - i64::from((b - 1) / 3).min(stock - 1);
            sold(b, 1, seen, after)
        })
        .collect();
    let started = Instant::now();
    let tape = Tape::build(stock as u32, NAIVE, &outcomes);
    let built = started.elapsed();
    tape.verify().unwrap();
    let caption = tape.caption();
    let zoom = tape.zoom();
    let all = started.elapsed();
    println!(
        "10,000 buyers: built in {:.1} ms; built, verified, captioned and zoomed in {:.1} ms",
        built.as_secs_f64() * 1e3,
        all.as_secs_f64() * 1e3
    );
    assert_eq!(caption.units_sold, 10_000);
    assert_eq!(caption.oversold_units, 7_500);
    assert!(!zoom.parts.is_empty());
    // Generous: a debug build on a busy 2-core machine, far under a frame budget in release.
    assert!(all.as_secs_f64() < 5.0, "{all:?}");
}

// ---- a counter with several lives: failover, durability, busy_script ------------------

/// `o`, answered by life `n` of the counter, which began at `began_at`.
fn life(n: u32, began_at: Option<i64>, o: BuyerOutcome) -> BuyerOutcome {
    BuyerOutcome {
        epoch: Some(crate::Epoch {
            n,
            began_at,
            evicted: false,
        }),
        ..o
    }
}

/// An eviction: the counter sold 5 down to 3, Redis deleted it to free memory, and the next
/// buyers read the missing key as 0 and were refused.
fn eviction() -> Vec<BuyerOutcome> {
    let old = |o| life(0, Some(5), o);
    let gone = |o: BuyerOutcome| BuyerOutcome {
        epoch: Some(crate::Epoch {
            n: 1,
            began_at: None,
            evicted: true,
        }),
        ..o
    };
    vec![
        old(sold(1, 1, 5, 4)),
        gone(refused(4, 1, 0)),
        old(sold(2, 1, 4, 3)),
        gone(refused(3, 1, 0)),
        gone(refused(5, 1, 0)),
    ]
}

#[test]
fn an_evicted_counter_is_a_break_that_loses_no_sale_and_its_refusals_are_placed() {
    let tape = good(5, LUA, &eviction());
    assert!(tape.unplaced.is_empty(), "{:?}", tape.unplaced);
    assert_eq!(
        tape.breaks,
        [Break {
            epoch: 1,
            slot: 2,
            confirmed_down_to: Some(3),
            came_back_at: None,
            lost_orders: 0,
            lost_units: 0,
            busy: 0,
            evicted: true,
        }]
    );
    assert!(tape.cells().all(|(_, c)| !c.lost), "no sale was taken back");
    assert_eq!(tape.final_counter(), Some(0), "a missing key reads as 0");
    let c = tape.caption();
    assert_eq!((c.refused, c.lost_orders, c.sold_twice), (3, 0, 0));
    assert_eq!(
        c.sentence,
        "2 calls took 2 of 5 units, each at one exact point in Redis's order, none of them beyond \
         the stock; 3 found too little stock and changed nothing. Redis evicted the counter at 3 \
         to free memory; a missing key reads as 0, so 3 buyers were told \"sold out\" with units \
         unsold."
    );
    assert!(
        lines(&tape)
            .iter()
            .any(|l| l.contains("(Redis evicted the counter (a missing key reads as 0): life 1")),
        "{:?}",
        lines(&tape)
    );
}

/// A buyer of life `n` Redis answered `BUSY`.
fn busy(buyer: u32, n: u32, began_at: Option<i64>) -> BuyerOutcome {
    let o = BuyerOutcome {
        error: Some("BUSY Redis is busy running a script.".into()),
        ..outcome(buyer, 1, OutcomeResult::Error, None)
    };
    life(n, began_at, o)
}

/// A failover: the primary confirmed 5 down to 1, the replica had it only down to 3, was
/// promoted, and sold on from 3.
fn failover() -> Vec<BuyerOutcome> {
    let old = |o| life(0, Some(5), o);
    let new = |o| life(1, Some(3), o);
    vec![
        new(sold(6, 1, 2, 1)),
        old(sold(1, 1, 5, 4)),
        old(sold(3, 1, 3, 2)),
        new(sold(5, 1, 3, 2)),
        old(sold(2, 1, 4, 3)),
        new(refused(8, 1, 0)),
        old(sold(4, 1, 2, 1)),
        new(sold(7, 1, 1, 0)),
    ]
}

#[test]
fn each_life_is_ordered_on_its_own_and_the_break_says_what_was_lost() {
    let tape = good(5, LUA, &failover());
    assert_eq!(
        lines(&tape),
        [
            "#1 EVALSHA reserve stock 1 -> {1, 5, 4}",
            "#2 EVALSHA reserve stock 1 -> {1, 4, 3}",
            "#3 EVALSHA reserve stock 1 -> {1, 3, 2}  (acknowledged, then lost: the counter that \
             came back does not have it)",
            "#4 EVALSHA reserve stock 1 -> {1, 2, 1}  (acknowledged, then lost: the counter that \
             came back does not have it)",
            "== (Redis came back at 3: life 1 of the counter; the life before had confirmed down \
             to 1: 2 acknowledged sales lost)",
            "#5 EVALSHA reserve stock 1 -> {1, 3, 2}",
            "#6 EVALSHA reserve stock 1 -> {1, 2, 1}  (sold a second time: every unit was already \
             sold)",
            "#7 EVALSHA reserve stock 1 -> {1, 1, 0}  (sold a second time: every unit was already \
             sold)",
            "#8 EVALSHA reserve stock 1 -> {0, 0, 0}",
        ]
    );
    assert_eq!(
        tape.breaks,
        [Break {
            epoch: 1,
            slot: 4,
            confirmed_down_to: Some(1),
            came_back_at: Some(3),
            lost_orders: 2,
            lost_units: 2,
            busy: 0,
            evicted: false,
        }]
    );
    assert_eq!(tape.final_counter(), Some(0));
    let c = tape.caption();
    assert_eq!(
        (c.breaks, c.lost_orders, c.lost_units, c.sold_twice),
        (1, 2, 2, 2)
    );
    assert_eq!(c.sold_twice, c.oversold_units, "sold twice is the oversell");
    assert_eq!(
        c.sentence,
        "7 calls took 7 of 5 units, each at one exact point in Redis's order, 2 of them beyond \
         the stock; 1 found too little stock and changed nothing. Redis came back at 3 after \
         confirming down to 1: 2 acknowledged decrements were lost, and 2 units were sold a \
         second time."
    );
    // The break, the lost sales and the second sales are drawn; the refusal after the
    // second life ran out is folded.
    assert_eq!(
        tape.zoom().parts[0],
        ZoomPart::Shown {
            lane: 0,
            from: 0,
            to: 7
        }
    );
}

#[test]
fn a_counter_that_did_not_come_back_loses_every_sale_and_reads_as_zero() {
    // durability `none`: the restarted Redis has no stock key.
    let outcomes = [
        life(0, Some(3), sold(1, 1, 3, 2)),
        life(0, Some(3), sold(2, 2, 2, 0)),
        life(1, None, refused(3, 1, 0)),
        life(1, None, refused(4, 1, 0)),
    ];
    let tape = good(3, LUA, &outcomes);
    assert_eq!(
        lines(&tape)[2],
        "== (Redis came back without the counter (read as 0): life 1 of the counter; the life \
         before had confirmed down to 0: 2 acknowledged sales (3 units) lost)"
    );
    assert_eq!(tape.final_counter(), Some(0));
    assert_eq!(
        tape.caption().sentence,
        "2 calls took 3 of 3 units, each at one exact point in Redis's order, none of them beyond \
         the stock; 2 found too little stock and changed nothing. Redis came back without the \
         counter (read as 0) after confirming down to 0: 2 acknowledged decrements (3 units) \
         were lost, and no unit was sold a second time."
    );
}

#[test]
fn busy_answers_are_counted_in_the_life_they_came_in() {
    // busy_script, unkillable: one sale, two BUSY, SHUTDOWN NOSAVE, back from the snapshot.
    let outcomes = [
        life(0, Some(3), sold(1, 1, 3, 2)),
        busy(2, 0, Some(3)),
        busy(3, 0, Some(3)),
        life(1, Some(3), sold(4, 1, 3, 2)),
        life(1, Some(3), sold(5, 1, 2, 1)),
        life(1, Some(3), sold(6, 1, 1, 0)),
        life(1, Some(3), refused(7, 1, 0)),
    ];
    let tape = good(3, LUA, &outcomes);
    assert_eq!(
        lines(&tape)[..4],
        [
            "#1 EVALSHA reserve stock 1 -> {1, 3, 2}  (acknowledged, then lost: the counter that \
             came back does not have it)",
            "#2 EVALSHA reserve stock 1 -> BUSY  (a script held Redis: nothing taken, no reply \
             places it)",
            "#3 EVALSHA reserve stock 1 -> BUSY  (a script held Redis: nothing taken, no reply \
             places it)",
            "== (Redis came back at 3: life 1 of the counter; the life before had confirmed down \
             to 2: 1 acknowledged sale lost)",
        ]
    );
    let c = tape.caption();
    assert_eq!((c.busy, c.lost_orders, c.sold_twice), (2, 1, 1));
    assert_eq!(
        c.sentence,
        "4 calls took 4 of 3 units, each at one exact point in Redis's order, 1 of them beyond \
         the stock; 1 found too little stock and changed nothing. 2 buyers got BUSY while a \
         script held Redis (nothing taken), then Redis came back at 3 after confirming down to \
         2: 1 acknowledged decrement was lost, and 1 unit was sold a second time."
    );

    // Killed instead: one life, and no reply says where the BUSY answers sit.
    let outcomes = [
        life(0, Some(2), sold(1, 1, 2, 1)),
        busy(2, 0, Some(2)),
        life(0, Some(2), sold(3, 1, 1, 0)),
    ];
    let tape = good(2, LUA, &outcomes);
    assert!(tape.breaks.is_empty());
    assert_eq!(
        lines(&tape),
        [
            "#1 EVALSHA reserve stock 1 -> {1, 2, 1}",
            "#3 EVALSHA reserve stock 1 -> {1, 1, 0}",
            "#2 EVALSHA reserve stock 1 -> BUSY  (a script held Redis: nothing taken, no reply \
             places it)",
        ]
    );
    assert_eq!(
        tape.caption().sentence,
        "2 calls took 2 of 2 units, each at one exact point in Redis's order, none of them beyond \
         the stock; 0 found too little stock and changed nothing; 1 buyer got BUSY while a script \
         held Redis (nothing taken; no reply says where in the order)."
    );
}

#[test]
fn a_promotion_that_lost_nothing_says_so() {
    // min_replicas: the primary refused every write it could not replicate.
    let outcomes = [
        life(0, Some(2), sold(1, 1, 2, 1)),
        life(1, Some(1), sold(2, 1, 1, 0)),
        life(1, Some(1), refused(3, 1, 0)),
    ];
    let tape = good(2, LUA, &outcomes);
    assert!(tape.cells().all(|(_, c)| !c.lost && c.phantom_units == 0));
    assert!(
        tape.caption().sentence.ends_with(
            " Redis came back at 1 after confirming down to 1: no acknowledged sale was lost."
        ),
        "{}",
        tape.caption().sentence
    );
}

#[test]
fn one_life_is_the_tape_it_always_was() {
    let plain = Tape::build(2, LUA, &scripted());
    let outcomes: Vec<BuyerOutcome> = scripted()
        .into_iter()
        .map(|o| life(0, Some(2), o))
        .collect();
    let tagged = good(2, LUA, &outcomes);
    assert_eq!(lines(&tagged), lines(&plain));
    assert_eq!(tagged.caption(), plain.caption());
    assert_eq!(tagged.lanes, plain.lanes);
}

#[test]
fn lives_that_do_not_fit_are_rejected() {
    // Two buyers of life 1 disagree on where it began.
    let mut outcomes = failover();
    outcomes[7] = life(1, Some(4), sold(7, 1, 1, 0));
    let e = bad(5, LUA, &outcomes);
    assert!(
        matches!(e, Contradiction::LifeUnclear { buyer: 7, .. }),
        "{e}"
    );
    // A reply that names no life, in a run of several.
    let mut outcomes = failover();
    outcomes[5] = refused(8, 1, 0);
    let e = bad(5, LUA, &outcomes);
    assert!(
        matches!(e, Contradiction::LifeUnclear { buyer: 8, .. }),
        "{e}"
    );
    // Life 1 sold from 4 although it came back at 3.
    let mut outcomes = failover();
    outcomes[3] = life(1, Some(3), sold(5, 1, 4, 3));
    assert!(matches!(
        bad(5, LUA, &outcomes),
        Contradiction::Mismatch { buyer: 5, .. }
    ));
    // Life 0's unanswered write cannot explain a drop in life 1.
    let mut outcomes = failover();
    outcomes[3] = life(1, Some(3), sold(5, 1, 2, 1));
    outcomes[0] = life(1, Some(3), sold(6, 1, 1, 0));
    outcomes[7] = life(0, Some(5), outcome(7, 1, OutcomeResult::Unknown, None));
    let e = bad(5, LUA, &outcomes);
    assert!(matches!(e, Contradiction::Mismatch { buyer: 5, .. }), "{e}");
}

#[test]
fn reads_after_the_last_answered_write_sit_after_the_writes_in_doubt() {
    // lua_wait on the promoted replica: two sales whose WAIT ran out (in doubt, no reply),
    // then refusals at 0.
    let outcomes = [
        life(0, Some(3), sold(1, 1, 3, 2)),
        life(1, Some(2), outcome(2, 1, OutcomeResult::Unknown, None)),
        life(1, Some(2), outcome(3, 1, OutcomeResult::Unknown, None)),
        life(1, Some(2), refused(4, 1, 0)),
    ];
    let tape = good(3, LUA, &outcomes);
    assert_eq!(
        lines(&tape)[1..3],
        [
            "== (Redis came back at 2: life 1 of the counter; the life before had confirmed down \
             to 2: nothing acknowledged lost)",
            "-- (the counter fell by 2 units with no answered write: writes in doubt landed here)",
        ]
    );
    // Life 0's unanswered write cannot explain a drop in life 1.
    let mut outcomes = outcomes.to_vec();
    outcomes[1].epoch = outcomes[0].epoch;
    outcomes[2].epoch = outcomes[0].epoch;
    assert!(matches!(
        bad(3, LUA, &outcomes),
        Contradiction::Unplaceable { buyer: 4, .. }
    ));
}
