//! What a checkout does when Redis is unreachable (closed against open), when it may not
//! pause Redis, when PostgreSQL is missing, and what `reconcile` fixes.

use oversold::checkout;
use oversold::run::RunError;
use oversold::run::{Control, Watchers};
use oversold::shelf::ShelfError;
use oversold_protocol::{FailMode, LedgerKind, RunRequest};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{fast, run, strategy};
use crate::common::checks::check_checkout;
use crate::common::{TestRedis, pg_count, run_keys};

/// Sixty buyers over two real seconds; our own Redis paused from 0.3 s to 1.8 s.
fn outage(mode: FailMode) -> RunRequest {
    RunRequest {
        stock: Some(30),
        buyers: Some(60),
        arrival_spread_ms: Some(2_000),
        time_scale: Some(100),
        hold_ttl_ms: Some(50_000),
        pay_ms: Some(10_000),
        outage_at_ms: Some(30_000),
        outage_ms: Some(150_000),
        fail_mode: Some(mode),
        seed: Some(5),
        ..fast("holds")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkout_fail_closed_refuses_and_fail_open_backorders_while_redis_is_paused() {
    let (closed, open) = (TestRedis::start(), TestRedis::start());
    let (Some(closed_b), Some(open_b)) = (
        closed.backends_with_postgres().await,
        open.backends_with_postgres().await,
    ) else {
        return;
    };
    let (closed_b, open_b) = (closed_b.owning_redis(), open_b.owning_redis());
    let (c_cfg, o_cfg) = (
        outage(FailMode::Closed).validate(0).unwrap(),
        outage(FailMode::Open).validate(0).unwrap(),
    );
    let (c_rep, o_rep) = tokio::join!(
        run(&closed_b, &c_cfg, "outage-closed"),
        run(&open_b, &o_cfg, "outage-open")
    );
    let (c, o) = (
        c_rep.summary.checkout.clone().unwrap(),
        o_rep.summary.checkout.clone().unwrap(),
    );
    println!(
        "outage of 1.5 s, 60 buyers over 2 s, stock 30: fail-closed refused {} orders, sold {}, backorders {}; \
         fail-open refused {}, sold {}, took {} backorders ({} units over the stock)",
        c.refused_unreachable,
        c.confirmed_units,
        c.backorder_units,
        o.refused_unreachable,
        o.confirmed_units,
        o.backorder_units,
        o.overage_units
    );
    // Closed: refusals, never a backorder, never an oversell, nothing leaked.
    assert!(c.refused_unreachable > 0, "{c:?}");
    assert_eq!((c.backorder_units, c.overage_units), (0, 0));
    check_checkout(&c_cfg, &c_rep, true, true).unwrap();
    // Open: no refusal; backorders instead, in the ledger.
    assert_eq!(o.refused_unreachable, 0, "{o:?}");
    assert!(o.backorder_units > 0, "{o:?}");
    assert_eq!(
        o.overage_units,
        (o.confirmed_units + o.backorder_units).saturating_sub(30)
    );
    check_checkout(&o_cfg, &o_rep, true, true).unwrap();
    assert_eq!(
        pg_count("SELECT count(*) FROM oversold_ledger WHERE run_id LIKE 'outage-%'").await,
        0
    );
}

#[tokio::test]
async fn checkout_an_outage_is_refused_on_a_redis_the_server_did_not_start() {
    let redis = TestRedis::start();
    let config = RunRequest {
        outage_ms: Some(1_000),
        ..fast("holds")
    }
    .validate(0)
    .unwrap();
    let refused = checkout::run(
        &redis.backends(),
        strategy("holds"),
        &config,
        "not-ours",
        Watchers::default(),
        CancellationToken::new(),
    )
    .await;
    assert!(
        matches!(refused, Err(RunError::Setup(ShelfError::OutageNotAllowed))),
        "{refused:?}"
    );
    assert!(run_keys(&mut redis.raw().await).await.is_empty());
}

#[tokio::test]
async fn checkout_settles_in_redis_when_there_is_no_postgres_and_says_so() {
    let redis = TestRedis::start();
    let Some(with_pg) = redis.backends_with_postgres().await else {
        return;
    };
    let config = RunRequest {
        stock: Some(8),
        buyers: Some(20),
        seed: Some(3),
        ..fast("idempotent_holds")
    }
    .validate(0)
    .unwrap();
    let in_redis = run(&redis.backends(), &config, "ledger-redis").await;
    let in_pg = run(&with_pg, &config, "ledger-pg").await;
    assert_eq!(
        in_redis.summary.checkout.as_ref().unwrap().ledger,
        LedgerKind::Redis
    );
    assert_eq!(
        in_pg.summary.checkout.as_ref().unwrap().ledger,
        LedgerKind::Postgres
    );
    for report in [&in_redis, &in_pg] {
        check_checkout(&config, report, true, true).unwrap();
    }
    // Same seed, same crowd, same fates: the two ledgers settle the same orders.
    let sold = |r: &oversold::run::RunReport| r.summary.checkout.as_ref().unwrap().confirmed_units;
    assert!(sold(&in_redis) > 0);
    let note = oversold::checkout::ledger::info(&redis.backends()).note;
    assert!(note.contains("PostgreSQL is not available"), "{note}");
    assert!(run_keys(&mut redis.raw().await).await.is_empty());
}

/// A checkout whose buyers all reserve at once and then pay for a long while, half of
/// them lost to crashed app servers; `reconcile` sent while the others are paying. `None`
/// on a machine without PostgreSQL.
async fn reconcile_mid_run(
    name: &str,
) -> Option<(oversold::run::RunReport, Vec<oversold::run::Event>)> {
    let redis = TestRedis::start();
    let config = RunRequest {
        stock: Some(10),
        buyers: Some(10),
        crash_fraction: Some(0.5),
        abandon_fraction: Some(0.0),
        pay_fail_fraction: Some(0.0),
        retry_fraction: Some(0.0),
        customers: Some(10),
        hold_ttl_ms: Some(1_000_000),
        pay_ms: Some(500_000),
        time_scale: Some(1_000),
        seed: Some(1),
        ..fast(name)
    }
    .validate(0)
    .unwrap();
    let (events, mut seen) = mpsc::unbounded_channel();
    let (control, mut requests) = mpsc::channel(1);
    let backends = redis.backends_with_postgres().await?;
    let run_id = format!("reconcile-{name}");
    let ran = checkout::run(
        &backends,
        strategy(name),
        &config,
        &run_id,
        Watchers {
            events: Some(events),
            control: Some(&mut requests),
            ..Watchers::default()
        },
        CancellationToken::new(),
    );
    let watch = async {
        // The crashed buyers' stories end as soon as they have reserved: once all five are
        // in, every buyer has reserved (they all came at once), and the payers are paying
        // (for half a real second on average).
        let mut all = Vec::new();
        let mut crashed = 0;
        while let Some(e) = seen.recv().await {
            if matches!(&e, oversold::run::Event::Outcome(_)) {
                crashed += 1;
                if crashed == 5 {
                    control.send(Control::Reconcile).await.unwrap();
                }
            }
            all.push(e);
        }
        all
    };
    let (report, all) = tokio::join!(ran, watch);
    Some((report.unwrap(), all))
}

fn reconciled(events: &[oversold::run::Event]) -> oversold_protocol::ReconcileReport {
    events
        .iter()
        .find_map(|e| match e {
            oversold::run::Event::Reconciled(r) => Some(*r),
            _ => None,
        })
        .expect("a reconciled event")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkout_reconcile_without_holds_hands_out_the_units_of_buyers_still_paying() {
    let Some((report, events)) = reconcile_mid_run("atomic_no_holds").await else {
        return;
    };
    let r = reconciled(&events);
    let c = report.summary.checkout.as_ref().unwrap();
    println!("atomic_no_holds, reconciled mid-run: {r:?}; at the end {c:?}");
    // Nothing records who took the 10 units: the correction puts all 10 back, the 5 of the
    // crashed buyers and the 5 of the buyers still paying.
    assert_eq!(
        (r.available_before, r.available_after, r.fixed),
        (0, 10, 10)
    );
    assert_eq!(c.reconciled_units, 10);
    // The payers then confirm: 5 sold, yet the shelf says 10 are left. The books show it
    // as minus five leaked: units on the shelf that do not exist.
    assert_eq!(c.confirmed_units, 5);
    assert_eq!(report.summary.final_stock, 10);
    assert_eq!(c.leaked_units, -5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkout_reconcile_with_holds_finds_nothing_to_fix_mid_run() {
    let Some((report, events)) = reconcile_mid_run("holds").await else {
        return;
    };
    let r = reconciled(&events);
    let c = report.summary.checkout.as_ref().unwrap();
    // Every reserved unit is in a hold: the counter is already the truth.
    assert_eq!(r.fixed, 0, "{r:?}");
    assert_eq!(r.held, 10);
    assert_eq!(r.after.leaked, 0);
    assert_eq!(c.reconciled_units, 0);
    // Live numbers were sent, and they always add up.
    let snapshots: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            oversold::run::Event::Snapshot(s) => Some(*s),
            _ => None,
        })
        .collect();
    assert!(!snapshots.is_empty());
    for s in &snapshots {
        assert_eq!(
            i64::from(s.stock),
            s.available + s.held + s.sold as i64 + s.settling + s.leaked
        );
    }
    assert_eq!(c.leaked_units, 0);
}
