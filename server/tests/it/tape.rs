//! The Redis tape over real runs: hundreds of seeded random races against a private Redis,
//! each rebuilt from its replies alone ([`Tape::build`]) and replayed ([`Tape::verify`]).
//!
//! Every tape must verify, its caption's numbers must be the summary's, an exact tape must
//! end where Redis's read-back ended, and every naive run that oversold must show the stale
//! reads that did it. The hand-written (and corrupted) histories live in the protocol crate.

use std::time::Instant;

use crate::common::TestRedis;
use crate::common::checks::{random_config, strategy};
use oversold::backends::Backends;
use oversold::engine;
use oversold::headless;
use oversold::run::RunReport;
use oversold::store::StockLayout;
use oversold_protocol::tape::{Placement, Tape, ZoomPart, deal};
use oversold_protocol::{Guard, OutcomeResult, RunConfig, RunRequest, Scenario, TapeRule};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio_util::sync::CancellationToken;

async fn run(backends: &Backends, config: &RunConfig, id: &str) -> RunReport {
    engine::run(
        backends,
        strategy(&config.strategy),
        config,
        id,
        None,
        CancellationToken::new(),
    )
    .await
    .unwrap_or_else(|e| panic!("{id} failed: {e}"))
}

/// Everything a tape of a real run must satisfy. Returns the tape for rule-specific checks.
fn check(config: &RunConfig, report: &RunReport) -> Tape {
    let rule = strategy(&config.strategy).about.tape;
    let tape = Tape::build(config.race.stock, rule, &report.outcomes);
    let s = &report.summary;
    let show = || {
        let lines: Vec<String> = tape.lines().take(60).collect();
        format!("{config:?}\n{s:?}\n{}", lines.join("\n"))
    };
    if let Err(e) = tape.verify() {
        panic!("the tape contradicts its replies: {e}\n{}", show());
    }
    let c = tape.caption();
    assert_eq!(
        (c.stock, c.units_sold, c.oversold_units),
        (s.stock, s.units_sold, s.oversold_units),
        "caption: {}\n{}",
        c.sentence,
        show()
    );
    // No run here is in doubt, so an exact tape ends where Redis's read-back did.
    assert_eq!(s.unknown, 0, "{}", show());
    if !rule.overwrites() {
        assert_eq!(tape.final_counter(), Some(s.final_stock), "{}", show());
    }
    // Every buyer that got a reply is on the tape; nothing is left unplaced.
    assert!(tape.unplaced.is_empty(), "{}", show());
    assert_zoom_covers_every_slot(&tape);
    tape
}

/// Zoom parts tile each lane: in order, no slot twice, none missing.
fn assert_zoom_covers_every_slot(tape: &Tape) {
    let mut next = vec![0u32; tape.lanes.len()];
    for part in tape.zoom().parts {
        let (ZoomPart::Shown { lane, from, to } | ZoomPart::Folded { lane, from, to, .. }) = part;
        assert_eq!(from, next[lane as usize], "{part:?}");
        assert!(to >= from);
        next[lane as usize] = to + 1;
    }
    for (lane, n) in tape.lanes.iter().zip(next) {
        assert_eq!(lane.slots.len() as u32, n);
    }
}

/// `runs` seeded random races of `name`, each checked; `buyers` caps the crowd for the slow
/// strategies (a lock's queue, WATCH's retries).
async fn race_and_check(
    backends: &Backends,
    name: &str,
    seed: u64,
    runs: u32,
    buyers: u32,
) -> Vec<(RunConfig, RunReport, Tape)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut checked = Vec::new();
    for i in 0..runs {
        let mut config = random_config(&mut rng, name);
        config.race.buyers = config.race.buyers.min(buyers);
        let report = run(backends, &config, &format!("tape-{name}-{i}")).await;
        let tape = check(&config, &report);
        checked.push((config, report, tape));
    }
    checked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn naive_tapes_verify_and_show_the_stale_reads_behind_every_oversell() {
    let redis = TestRedis::start();
    let runs = race_and_check(&redis.backends(), "naive", 0x7a9e_0001, 100, 300).await;
    let mut oversold = 0;
    for (config, report, tape) in &runs {
        let c = tape.caption();
        if report.summary.oversold_units == 0 {
            continue;
        }
        oversold += 1;
        // Each unit that did not exist was taken by a write whose read had gone stale.
        assert_eq!(c.phantom_units, report.summary.oversold_units, "{config:?}");
        assert!(
            c.stale_sales >= c.phantom_sales && c.phantom_sales > 0,
            "{config:?}"
        );
        for (_, cell) in tape.cells().filter(|(_, c)| c.phantom_units > 0) {
            assert!(
                cell.is_stale(),
                "buyer #{} oversold on a fresh read: {config:?}",
                cell.buyer
            );
        }
    }
    // The generator must actually make naive oversell, or this proves little.
    assert!(
        oversold > runs.len() / 2,
        "only {oversold} of {} naive runs oversold",
        runs.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn naive_set_tapes_verify_and_count_the_shared_reads() {
    let redis = TestRedis::start();
    let runs = race_and_check(&redis.backends(), "naive_set", 0x7a9e_0002, 100, 300).await;
    for (config, report, tape) in &runs {
        let c = tape.caption();
        // At most one sale per value read reaches the final counter: the summary's lost
        // updates (in units) are at least the sales the tape proves lost (each >= 1 unit).
        assert!(
            report.summary.lost_updates >= i64::from(c.lost_sales_at_least),
            "{config:?}: {} lost, tape proves {}",
            report.summary.lost_updates,
            c.lost_sales_at_least
        );
    }
}

/// The lost update in SQL has the same partial tape as `naive_set`, told in SQL: a plain
/// SELECT, then UPDATE to a value computed in the app.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_naive_tapes_verify_in_sql_and_count_the_shared_reads() {
    let redis = TestRedis::start();
    let Some(backends) = redis.backends_with_postgres().await else {
        return;
    };
    let runs = race_and_check(&backends, "postgres_naive", 0x7a9e_0006, 30, 120).await;
    let mut lost = 0;
    for (config, report, tape) in &runs {
        let c = tape.caption();
        assert!(
            report.summary.lost_updates >= i64::from(c.lost_sales_at_least),
            "{config:?}"
        );
        lost += usize::from(c.lost_sales_at_least > 0);
        for line in tape.lines() {
            assert!(!line.contains("GET ") && !line.contains("-> OK"), "{line}");
        }
        let text: String = tape.lines().collect::<Vec<_>>().join("\n");
        if report.summary.orders_accepted > 0 {
            assert!(text.contains("UPDATE SET stock = "), "{text}");
        }
        assert!(text.contains("SELECT stock -> "), "{text}");
    }
    assert!(
        lost > runs.len() / 2,
        "only {lost} of {} tapes proved a lost sale",
        runs.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atomic_tapes_verify_exactly() {
    let redis = TestRedis::start();
    let backends = redis.backends();
    for (config, report, tape) in race_and_check(&backends, "lua", 0x7a9e_0003, 80, 300).await {
        assert_eq!(tape.caption().phantom_sales, 0, "{config:?}");
        // Every cell of an atomic tape is exactly placed: one call, one point.
        let calls = tape.cells().count();
        assert_eq!(calls, report.outcomes.len(), "{config:?}");
    }
    let decr = race_and_check(&backends, "decr_compensate", 0x7a9e_0004, 80, 300).await;
    let mut blurred = 0;
    for (config, report, tape) in &decr {
        let refused = report
            .outcomes
            .iter()
            .filter(|o| o.result == OutcomeResult::SoldOut)
            .count() as u32;
        assert_eq!(tape.caption().overshoots, refused, "{config:?}");
        // With one unit per order no sale can happen while an overshoot is out, so the
        // sales are exactly ordered; bigger orders may leave only a witness order.
        let witness = tape.cells().any(|(_, c)| c.placement == Placement::Witness);
        if config.race.max_qty.is_none() && config.race.qty == 1 {
            assert!(!witness, "{config:?}");
        }
        blurred += usize::from(witness);
    }
    println!(
        "decr_compensate: {blurred} of {} tapes had sales only a witness order explains",
        decr.len()
    );
}

/// Every other Redis strategy a few times: guarded reads must be adjacent to their writes
/// (verify rejects a tape where they are not), buckets must be dealt as the server deals them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_other_redis_strategy_verifies() {
    let redis = TestRedis::start();
    let backends = redis.backends();
    let mut seen = vec![];
    for s in oversold::strategy::REGISTRY {
        if !s.uses_redis() || ["naive", "naive_set", "lua", "decr_compensate"].contains(&s.name()) {
            continue;
        }
        // No tape to verify: a check over several keys (`sharded_sum`'s sum of buckets).
        if s.about.tape == TapeRule::Story {
            continue;
        }
        // A lock's queue and WATCH's retries make big crowds slow; the rule does not need them.
        race_and_check(&backends, s.name(), 0x7a9e_0005, 6, 120).await;
        seen.push(s.name());
    }
    assert!(seen.len() >= 4, "{seen:?}");
    for stock in [0, 1, 5, 10, 39, 40] {
        let split: Vec<i64> = StockLayout::Buckets(4)
            .split(stock)
            .into_iter()
            .map(i64::from)
            .collect();
        assert_eq!(deal(stock, 4), split);
    }
    assert!(matches!(
        strategy("lock").about.tape,
        TapeRule::ReadThenDecrement { guard: Guard::Lock }
    ));
}

/// 10,000 real buyers: the tape still verifies, and builds fast. `--nocapture` shows the time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_real_buyers_reconstruct() {
    let redis = TestRedis::start();
    let config = RunRequest {
        strategy: Some("naive".into()),
        stock: Some(2500),
        buyers: Some(10_000),
        max_qty: Some(2),
        seed: Some(11),
        ..Default::default()
    }
    .validate(0)
    .unwrap();
    let report = run(&redis.backends(), &config, "tape-big").await;
    let started = Instant::now();
    let tape = Tape::build(2500, strategy("naive").about.tape, &report.outcomes);
    let built = started.elapsed();
    check(&config, &report);
    println!(
        "tape of 10,000 real buyers ({} cells): built in {:.1} ms",
        tape.cells().count(),
        built.as_secs_f64() * 1e3
    );
}

/// A run of `strategy` in `scenario` with `seed` and the defaults, and its tape (verified:
/// each life of the counter replays from where it began).
async fn failure_run(
    backends: &Backends,
    scenario: Scenario,
    strategy: &str,
    seed: u64,
) -> (RunReport, Tape) {
    let request = RunRequest {
        strategy: Some(strategy.into()),
        scenario: Some(scenario),
        seed: Some(seed),
        ..RunRequest::default()
    };
    let (config, report) = headless::run_report(backends, &request, oversold::run::Keep::Outcomes)
        .await
        .unwrap_or_else(|e| panic!("{strategy} seed {seed}: {e}"));
    let rule = oversold::scenario::find(scenario, strategy)
        .expect("a strategy of its scenario")
        .about()
        .tape;
    let tape = Tape::build(config.race.stock, rule, &report.outcomes);
    let s = &report.summary;
    let lines = || tape.lines().take(80).collect::<Vec<_>>().join("\n");
    if let Err(e) = tape.verify() {
        panic!(
            "{strategy} seed {seed}: the tape contradicts its replies: {e}\n{s:?}\n{}",
            lines()
        );
    }
    let c = tape.caption();
    assert_eq!(
        (c.stock, c.units_sold, c.oversold_units),
        (s.stock, s.units_sold, s.oversold_units),
        "{strategy} seed {seed}: {}\n{}",
        c.sentence,
        lines()
    );
    if let Some(end) = tape.final_counter() {
        assert_eq!(end, s.final_stock, "{strategy} seed {seed}\n{}", lines());
    }
    assert_zoom_covers_every_slot(&tape);
    eprintln!("{strategy} seed {seed}: {}", c.sentence);
    (report, tape)
}

/// An eviction is a break too, but one that takes no sale back: under the default policy
/// (`allkeys-lru`) `lua`'s tape shows the stocked counter's sales, then the eviction, then
/// every second-wave refusal placed on the missing key (read as 0). Those refusals are the
/// summary's false sold-outs, and the caption says so with the same number.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eviction_is_a_break_that_loses_no_sale_and_places_every_false_sold_out() {
    let redis = TestRedis::start();
    let backends = redis.backends();
    for seed in 1..=3 {
        let (report, tape) = failure_run(&backends, Scenario::Eviction, "lua", seed).await;
        let s = &report.summary;
        let e = s.eviction.as_deref().expect("an eviction tally");
        assert!(e.stock_key_evicted, "seed {seed}: {e:?}");
        assert!(tape.unplaced.is_empty(), "seed {seed}: {:?}", tape.unplaced);
        assert_eq!(tape.breaks.len(), 1, "seed {seed}");
        let b = &tape.breaks[0];
        assert!(b.evicted && b.came_back_at.is_none(), "seed {seed}: {b:?}");
        let c = tape.caption();
        assert_eq!((c.lost_orders, c.sold_twice), (0, 0), "seed {seed}");
        assert_eq!(c.refused, s.false_sold_out, "seed {seed}: {}", c.sentence);
        let told = format!(
            "{} buyers were told \"sold out\" with units unsold",
            s.false_sold_out
        );
        assert!(c.sentence.contains(&told), "seed {seed}: {}", c.sentence);
        assert_eq!(
            s.lost_updates, 0,
            "seed {seed}: an eviction is not a lost update"
        );
    }
}

/// The tape of a run where Redis came back with less than it had confirmed counts what the
/// scenario's tally counts: over several seeds, a failover's lost units and orders and the
/// units sold twice, a crash's lost orders and the value Redis loaded, a restart's `BUSY`
/// answers and lost orders. One break per failure, where the tally says the counter came back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tapes_across_a_failure_count_what_the_tallies_count() {
    let redis = TestRedis::start();
    let backends = redis.backends();
    let mut lost_somewhere = 0;
    for seed in 1..=5 {
        let (report, tape) = failure_run(&backends, Scenario::Failover, "lua", seed).await;
        let f = report
            .summary
            .failover
            .as_deref()
            .expect("a failover tally");
        let c = tape.caption();
        assert_eq!(
            (c.breaks, c.lost_units, c.lost_orders, c.sold_twice),
            (
                1,
                f.acknowledged_lost,
                f.acknowledged_lost_orders,
                f.sold_twice
            ),
            "lua seed {seed}: {}\n{f:?}",
            c.sentence
        );
        assert_eq!(
            tape.breaks[0].came_back_at,
            Some(f.replica_stock_at_promotion)
        );
        let said = format!("Redis came back at {}", f.replica_stock_at_promotion);
        assert!(c.sentence.contains(&said), "{}", c.sentence);
        lost_somewhere += u32::from(f.acknowledged_lost > 0);
    }
    assert!(
        lost_somewhere >= 4,
        "lua lost confirmed units in {lost_somewhere} of 5 failovers"
    );
    // WAIT's timeouts are in doubt on the dead primary: its life still replays.
    let (report, tape) = failure_run(&backends, Scenario::Failover, "lua_wait", 1).await;
    let f = report
        .summary
        .failover
        .as_deref()
        .expect("a failover tally");
    assert_eq!(
        (tape.caption().lost_units, tape.caption().sold_twice),
        (0, f.sold_twice)
    );

    for (strategy, seed) in [("rdb", 1), ("rdb", 2), ("none", 1)] {
        let (report, tape) = failure_run(&backends, Scenario::Durability, strategy, seed).await;
        let d = report
            .summary
            .durability
            .as_deref()
            .expect("a durability tally");
        let c = tape.caption();
        assert_eq!(
            (c.breaks, c.lost_orders, c.lost_units),
            (1, d.acknowledged_lost, d.units_lost),
            "{strategy} seed {seed}: {}\n{d:?}",
            c.sentence
        );
        assert_eq!(
            tape.breaks[0].came_back_at, d.restored_stock,
            "{strategy} seed {seed}"
        );
    }

    for (strategy, breaks) in [("slow_write", 1), ("slow_read", 0)] {
        let (report, tape) = failure_run(&backends, Scenario::BusyScript, strategy, 1).await;
        let b = report.summary.busy.as_deref().expect("a busy tally");
        let c = tape.caption();
        assert_eq!(
            (c.breaks, c.busy, c.lost_orders, c.lost_units),
            (breaks, b.busy_replies, b.acknowledged_lost, b.units_lost),
            "{strategy}: {}\n{b:?}",
            c.sentence
        );
        assert!(b.busy_replies > 0, "{strategy}: {b:?}");
        assert!(
            c.sentence.contains(" BUSY while a script held Redis"),
            "{}",
            c.sentence
        );
    }
}
