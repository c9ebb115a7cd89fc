//! Checks shared by the randomized race tests: configs, one outcome per buyer, serial replay.

use oversold::strategy::{self, Strategy};
use oversold_protocol::{BuyerOutcome, OutcomeResult, RunConfig, RunRequest};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The strategy called `name`.
pub fn strategy(name: &str) -> &'static Strategy {
    strategy::find(name).expect("strategy exists")
}

/// A random but reproducible config in the ranges the issue asks for.
pub fn random_config(rng: &mut ChaCha8Rng, strategy: &str) -> RunConfig {
    let (qty, max_qty) = match rng.random_range(0..3) {
        0 => (Some(1), None),
        1 => (Some(rng.random_range(1..=3)), None),
        _ => (None, Some(rng.random_range(2..=3))),
    };
    RunRequest {
        strategy: Some(strategy.into()),
        stock: Some(rng.random_range(0..=40)),
        buyers: Some(rng.random_range(1..=300)),
        qty,
        max_qty,
        app_servers: Some(rng.random_range(1..=32)),
        arrival_spread_ms: Some(if rng.random_bool(0.3) {
            rng.random_range(1..=20)
        } else {
            0
        }),
        race_window_ms: Some(0),
        seed: Some(rng.random()),
        ..Default::default()
    }
    .validate(0)
    .unwrap()
}

/// Replays the outcomes one at a time, ordered by the stock each buyer saw: every
/// reservation must start where the previous one left off, every refusal must have seen too
/// little stock. Succeeds only if some serial order of these buyers explains the run.
pub fn serial_replay(
    config: &RunConfig,
    outcomes: &[&BuyerOutcome],
    final_stock: i64,
) -> Result<(), String> {
    let mut ordered: Vec<&BuyerOutcome> = outcomes.to_vec();
    // Highest observed stock first. At one stock level there is at most one reservation
    // (it changes the level), so any refusal that saw the same level came before it.
    ordered.sort_by_key(|o| {
        (
            std::cmp::Reverse(o.observed_stock),
            o.result == OutcomeResult::Reserved,
        )
    });
    let mut shelf = i64::from(config.race.stock);
    for o in ordered {
        let seen = o
            .observed_stock
            .ok_or(format!("buyer {} reported no read", o.buyer))?;
        if seen != shelf {
            return Err(format!(
                "buyer {} saw {seen} but the shelf held {shelf}",
                o.buyer
            ));
        }
        let qty = i64::from(o.qty);
        if shelf >= qty {
            if o.result != OutcomeResult::Reserved {
                return Err(format!("buyer {} refused with enough stock", o.buyer));
            }
            shelf -= qty;
            if o.stock_after != Some(shelf) {
                return Err(format!(
                    "buyer {} reports stock_after {:?}, replay says {shelf}",
                    o.buyer, o.stock_after
                ));
            }
        } else if o.result != OutcomeResult::SoldOut {
            return Err(format!("buyer {} served with only {shelf} left", o.buyer));
        }
    }
    if shelf != final_stock {
        return Err(format!(
            "Redis holds {final_stock}, the serial replay ends at {shelf}"
        ));
    }
    Ok(())
}

/// The outcomes must be exactly what *some* one-at-a-time order of these buyers produces.
pub fn assert_serializable(config: &RunConfig, outcomes: &[BuyerOutcome], final_stock: i64) {
    let all: Vec<&BuyerOutcome> = outcomes.iter().collect();
    if let Err(e) = serial_replay(config, &all, final_stock) {
        panic!("not serializable: {e}; {config:?}");
    }
}

pub fn assert_one_outcome_per_buyer(config: &RunConfig, outcomes: &[BuyerOutcome]) {
    // Sorted, not deduplicated: a buyer reported twice must fail this, not vanish into a set.
    let mut ids: Vec<u32> = outcomes.iter().map(|o| o.buyer).collect();
    ids.sort_unstable();
    let expected: Vec<u32> = (1..=config.race.buyers).collect();
    assert_eq!(ids, expected, "one outcome per buyer, each buyer once");
}

/// A random but reproducible checkout in small, fast ranges: a crowd of up to 60, holds of
/// 1 to 10 shop seconds played a thousand times faster (1 to 10 real ms), payments that
/// sometimes outlast the hold, every fate, resends, bots and limits.
pub fn random_checkout(rng: &mut ChaCha8Rng, strategy: &str) -> RunConfig {
    let (qty, max_qty) = match rng.random_range(0..3) {
        0 | 1 => (Some(1), None),
        _ => (None, Some(rng.random_range(2..=3))),
    };
    let buyers = rng.random_range(1..=60);
    let hold_ttl_ms = rng.random_range(1_000..=10_000);
    let fraction =
        |rng: &mut ChaCha8Rng, max: f64| (rng.random_range(0.0..max) * 100.0).round() / 100.0;
    RunRequest {
        strategy: Some(strategy.into()),
        stock: Some(rng.random_range(0..=20)),
        buyers: Some(buyers),
        qty,
        max_qty,
        app_servers: Some(rng.random_range(1..=8)),
        arrival_spread_ms: Some(if rng.random_bool(0.5) {
            rng.random_range(1..=15)
        } else {
            0
        }),
        seed: Some(rng.random()),
        scenario: Some(oversold_protocol::Scenario::Checkout),
        hold_ttl_ms: Some(hold_ttl_ms),
        time_scale: Some(1_000),
        pay_ms: Some(rng.random_range(0..=hold_ttl_ms * 2 / 3)),
        abandon_fraction: Some(fraction(rng, 0.3)),
        pay_fail_fraction: Some(fraction(rng, 0.2)),
        crash_fraction: Some(fraction(rng, 0.3)),
        retry_fraction: Some(fraction(rng, 0.5)),
        customers: Some(rng.random_range(1..=buyers)),
        per_customer_limit: Some(rng.random_range(1..=3)),
        ..Default::default()
    }
    .validate(0)
    .unwrap()
}

/// Units a story's steps took off the shelf that its own steps never accounted for
/// again, by kind: `(taken, came back by its own release, confirmed)`. A step `Held`,
/// `Taken` or `Orphaned` took `qty`; `FromRecord` took nothing.
fn story_units(o: &BuyerOutcome) -> (u64, u64, u64) {
    use oversold_protocol::{CheckoutEnd, Stage, StepOutcome};
    let s = o
        .checkout
        .as_ref()
        .expect("a checkout outcome tells its story");
    let qty = u64::from(o.qty);
    let took = s
        .steps
        .iter()
        .filter(|st| {
            matches!(st.stage, Stage::Reserve | Stage::Retry)
                && matches!(
                    st.outcome,
                    StepOutcome::Held | StepOutcome::Taken | StepOutcome::Orphaned
                )
        })
        .count() as u64;
    let released = s
        .steps
        .iter()
        .any(|st| st.stage == Stage::Release && st.outcome == StepOutcome::Released);
    let confirmed = s.end == CheckoutEnd::Confirmed;
    (
        took * qty,
        if released { qty } else { 0 },
        if confirmed { qty } else { 0 },
    )
}

/// True when a checkout story ended in doubt because its reservation got no answer by the
/// deadline while Redis was up (slow, not down): not a failure of the strategy, and its
/// units are still accounted for (a late answer that took them is an `orphaned` step).
fn timed_out(o: &BuyerOutcome) -> bool {
    use oversold::checkout::buyer::RESERVE_DEADLINE;
    use oversold_protocol::{Stage, StepOutcome};
    let deadline = RESERVE_DEADLINE.as_micros() as u64;
    o.result == OutcomeResult::Unknown
        && o.checkout.as_ref().is_some_and(|s| {
            s.steps.iter().any(|st| {
                matches!(st.stage, Stage::Reserve | Stage::Retry)
                    && st.outcome == StepOutcome::Failed
                    && st.end_us - st.start_us >= deadline
            })
        })
}

/// Every invariant of a finished checkout that a strategy of its kind must keep. Returns
/// the first broken one. `holds`: the strategy keeps holds; `safe`: it must never oversell.
pub fn check_checkout(
    config: &RunConfig,
    report: &oversold::run::RunReport,
    holds: bool,
    safe: bool,
) -> Result<(), String> {
    use oversold_protocol::{CheckoutEnd, StepOutcome};
    let s = &report.summary;
    let c = s.checkout.as_ref().ok_or("no checkout tally")?;
    let knobs = config.race.checkout().ok_or("no checkout knobs")?;
    let stock = i64::from(config.race.stock);
    let fail = |what: String| {
        Err(format!(
            "{what}\n  config: {}\n  summary: {s:?}",
            config.describe()
        ))
    };
    // One outcome per buyer, each with a whole story in time order.
    let mut ids: Vec<u32> = report.outcomes.iter().map(|o| o.buyer).collect();
    ids.sort_unstable();
    if ids != (1..=config.race.buyers).collect::<Vec<_>>() {
        return fail("not one outcome per buyer".into());
    }
    for o in &report.outcomes {
        let story = o.checkout.as_ref().ok_or("an outcome without a story")?;
        if story.steps.is_empty()
            || story
                .steps
                .iter()
                .any(|st| st.start_us > st.end_us || st.start_shop_ms > st.end_shop_ms)
        {
            return fail(format!("buyer {} has a broken story: {story:?}", o.buyer));
        }
        if story.end == CheckoutEnd::Failed && !timed_out(o) {
            return fail(format!("buyer {} failed: {:?}", o.buyer, o.error));
        }
    }
    // The ledger agrees with the stories.
    let ended = |end: CheckoutEnd| {
        report
            .outcomes
            .iter()
            .filter(|o| o.checkout.as_ref().is_some_and(|st| st.end == end))
            .map(|o| u64::from(o.qty))
            .sum::<u64>()
    };
    if c.confirmed_units != ended(CheckoutEnd::Confirmed) {
        return fail(format!(
            "the ledger holds {} confirmed units, the stories {}",
            c.confirmed_units,
            ended(CheckoutEnd::Confirmed)
        ));
    }
    if c.backorder_units != ended(CheckoutEnd::Backordered) {
        return fail("the ledger's backorders disagree with the stories".into());
    }
    // Conservation, as the summary states it.
    if stock != s.final_stock + c.confirmed_units as i64 + c.held_units as i64 + c.leaked_units {
        return fail("stock != final + confirmed + held + leaked".into());
    }
    // ...and as the stories explain it, unit by unit.
    let (taken, released, confirmed) = report
        .outcomes
        .iter()
        .map(story_units)
        .fold((0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
    if released != c.released_units {
        return fail(format!(
            "released: the stories say {released}, the tally {}",
            c.released_units
        ));
    }
    if holds {
        // Every hold was settled exactly once: sold, released, or expired and returned; or,
        // where expiries are announced by `expired` events (`holds_notify`), expired while
        // nobody listened and never returned. Only those may leak, unit for unit.
        let lost = c.notify.units_lost;
        if taken != confirmed + released + c.expired_units + c.held_units + lost {
            return fail(format!(
                "holds made {taken} units, settled {confirmed} confirmed + {released} released + {} expired + {} still held + {lost} lost",
                c.expired_units, c.held_units
            ));
        }
        if c.leaked_units != lost as i64 {
            return fail(format!(
                "a holds strategy leaked {}, and lost the releases of {lost}",
                c.leaked_units
            ));
        }
        if !knobs.no_wait_expiry && c.held_units != 0 {
            return fail("holds left after the last expiry".into());
        }
    } else {
        // Without holds, whatever was taken and neither sold nor given back leaked.
        let expected = taken as i64 - released as i64 - confirmed as i64;
        if c.leaked_units != expected || c.held_units != 0 || c.expired_units != 0 {
            return fail(format!(
                "leaked {}, the stories explain {expected}",
                c.leaked_units
            ));
        }
    }
    if safe {
        if s.final_stock < 0 || s.oversold_units != 0 || c.confirmed_units > stock as u64 {
            return fail("oversold".into());
        }
        if report
            .outcomes
            .iter()
            .any(|o| o.stock_after.is_some_and(|a| a < 0))
        {
            return fail("a reservation left the available count below zero".into());
        }
    }
    // The guarantees that come with a reserve script, for whichever strategy runs it.
    let runs = |script: &str| {
        oversold::strategy::checkout::find(&config.strategy)
            .is_some_and(|s| s.about.scripts.iter().any(|f| f == script))
    };
    // Never a unit reserved twice for one request, where the script records requests.
    if runs("reserve_hold_once.lua")
        && (c.duplicate_reservations != 0
            || report
                .outcomes
                .iter()
                .filter_map(|o| o.checkout.as_ref())
                .any(|st| {
                    st.steps
                        .iter()
                        .filter(|x| matches!(x.outcome, StepOutcome::Held | StepOutcome::Orphaned))
                        .count()
                        > 1
                }))
    {
        return fail(format!(
            "{} reserved twice for one request id",
            config.strategy
        ));
    }
    // Never a customer past the limit, where the script enforces it.
    if runs("reserve_hold_limited.lua") {
        let limit = i64::from(knobs.per_customer_limit);
        let over = report
            .outcomes
            .iter()
            .filter_map(|o| o.checkout.as_ref()?.customer_units)
            .any(|units| units > limit);
        if c.limit_violations != 0 || over {
            return fail(format!("{} let a customer pass its limit", config.strategy));
        }
    }
    // The round trips the buyers report are what their connections sent.
    if s.round_trips != report.redis_requests {
        return fail(format!(
            "buyers report {} round trips, their connections sent {}",
            s.round_trips, report.redis_requests
        ));
    }
    Ok(())
}
