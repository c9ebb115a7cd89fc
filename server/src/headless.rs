//! `oversold run` and `oversold compare`: races (and checkouts) without the page, printed as
//! tables or JSON.

use std::fmt::Write as _;

use oversold_protocol::limits::{LIMITS, Limits, MAX_BUYERS_AT_SCALE};
use oversold_protocol::tape::Tape;
use oversold_protocol::{
    BuyerOutcome, CheckoutTally, RunConfig, RunRequest, RunSummary, SavedRun, Scenario,
    StrategyAbout, TapeRule,
};
use tokio_util::sync::CancellationToken;

use crate::backends::Backends;
use crate::run::{Keep, RunError, RunReport, Watchers};
use crate::scenario::{self, AnyStrategy};
use crate::strategy::Strategy;

/// The CLI's ranges: the protocol's, with races of up to a million buyers (the machine is
/// the caller's own; a server allows that only with `--max-buyers`).
pub const CLI_LIMITS: Limits = LIMITS.with_max_buyers(MAX_BUYERS_AT_SCALE);

/// Why a headless run did not produce a summary.
#[derive(Debug, thiserror::Error)]
pub enum HeadlessError {
    /// Bad flags.
    #[error("{0}")]
    Config(String),
    /// The run itself failed.
    #[error(transparent)]
    Run(#[from] RunError),
}

/// The strategy `name` of `scenario`, checked that it can run here: the scenario layer's
/// lookup, with its one hint text.
pub fn resolve(
    backends: &Backends,
    scenario: Scenario,
    name: &str,
) -> Result<AnyStrategy, HeadlessError> {
    let strategy =
        scenario::find(scenario, name).map_err(|e| HeadlessError::Config(e.to_string()))?;
    if let Some(why) = strategy.unavailable_reason(backends) {
        return Err(HeadlessError::Config(format!(
            "strategy {name:?} is unavailable: {why}"
        )));
    }
    Ok(strategy)
}

/// A `race` strategy for `oversold bench` (the closed loop races only the race's buyers).
pub fn resolve_race(backends: &Backends, name: &str) -> Result<&'static Strategy, HeadlessError> {
    match resolve(backends, Scenario::Race, name)? {
        AnyStrategy::Race(s) => Ok(s),
        _ => unreachable!("scenario::find(Race, ..) finds race strategies only"),
    }
}

/// What a strategy of any scenario says about itself.
fn about(config: &RunConfig) -> Option<&'static StrategyAbout> {
    scenario::find(config.race.scenario(), &config.strategy)
        .ok()
        .map(|s| s.about())
}

/// Validate, run, and return the summary.
pub async fn run_once(
    backends: &Backends,
    request: &RunRequest,
) -> Result<(RunConfig, RunSummary), HeadlessError> {
    let (config, report) = run_report(backends, request, Keep::Summary).await?;
    Ok((config, report.summary))
}

/// A finished run as a file the page can load: knobs, outcomes, summary, the strategy's words.
pub fn saved_run(config: &RunConfig, report: &RunReport) -> Result<SavedRun, HeadlessError> {
    let about = about(config)
        .ok_or_else(|| HeadlessError::Config(format!("unknown strategy {:?}", config.strategy)))?;
    Ok(SavedRun {
        format: SavedRun::FORMAT.into(),
        protocol_version: oversold_protocol::PROTOCOL_VERSION,
        run_id: report.run_id.clone(),
        config: config.clone(),
        strategy: about.clone(),
        outcomes: report.outcomes.clone(),
        summary: report.summary.clone(),
    })
}

/// Validate, run, and return what the run produced: the summary, and the outcomes when
/// `keep` asks for them (for the tape, a saved run).
pub async fn run_report(
    backends: &Backends,
    request: &RunRequest,
    keep: Keep,
) -> Result<(RunConfig, RunReport), HeadlessError> {
    let config = request
        .validate_within(&CLI_LIMITS, rand::random())
        .map_err(|e| HeadlessError::Config(e.to_string()))?;
    let run_id = format!("cli-{:08x}", rand::random::<u32>());
    let strategy = resolve(backends, config.race.scenario(), &config.strategy)?;
    let report = strategy
        .run(
            backends,
            &config,
            &run_id,
            Watchers {
                keep,
                ..Watchers::default()
            },
            CancellationToken::new(),
        )
        .await?;
    Ok((config, report))
}

/// Run `race` through every available strategy, one after another, with one seed.
/// Strategies that cannot run here are skipped and named in the returned list.
pub async fn compare(
    backends: &Backends,
    race: &RunRequest,
) -> Result<(Vec<(RunConfig, RunSummary)>, Vec<(String, String)>), HeadlessError> {
    // Fix the seed once, so every strategy faces the same crowd in the same order.
    let seed = race.seed.unwrap_or_else(rand::random);
    let lineup = scenario::lineup(race.scenario.unwrap_or_default(), backends);
    let mut results = Vec::new();
    for strategy in lineup.races {
        let request = RunRequest {
            strategy: Some(strategy.name().into()),
            seed: Some(seed),
            ..race.clone()
        };
        results.push(run_once(backends, &request).await?);
    }
    Ok((results, lineup.skipped))
}

/// The scoreboard `oversold compare` prints.
pub fn scoreboard(results: &[(RunConfig, RunSummary)]) -> String {
    if results.iter().any(|(_, s)| s.checkout.is_some()) {
        return checkout_scoreboard(results);
    }
    if results.iter().any(|(_, s)| s.cart.is_some()) {
        return crate::cart::report::scoreboard(results);
    }
    if results.iter().any(|(_, s)| s.busy.is_some()) {
        return crate::busy::report::scoreboard(results);
    }
    if results.iter().any(|(_, s)| s.durability.is_some()) {
        return crate::durability::report::scoreboard(results);
    }
    if results.iter().any(|(_, s)| s.eviction.is_some()) {
        return crate::eviction::report::scoreboard(results);
    }
    if results.iter().any(|(_, s)| s.failover.is_some()) {
        return crate::failover::report::scoreboard(results);
    }
    let mut out = String::new();
    if let Some((config, _)) = results.first() {
        let _ = writeln!(out, "{}", config.race.describe());
    }
    let _ = writeln!(
        out,
        "{:<16}{:>7}{:>9}{:>7}{:>9}{:>9}{:>9}{:>9}{:>8}{:>8}{:>10}",
        "strategy",
        "sold",
        "oversold",
        "final",
        "accepted",
        "lost",
        "p50 µs",
        "p99 µs",
        "rt/ord",
        "retries",
        "orders/s"
    );
    for (config, s) in results {
        let per_order = if s.buyers == 0 {
            0.0
        } else {
            s.round_trips as f64 / f64::from(s.buyers)
        };
        let _ = writeln!(
            out,
            "{:<16}{:>7}{:>9}{:>7}{:>9}{:>9}{:>9}{:>9}{:>8.2}{:>8}{:>10.0}",
            config.strategy,
            format!("{}/{}", s.units_sold, s.stock),
            s.oversold_units,
            s.final_stock,
            s.orders_accepted,
            s.lost_updates,
            s.latency.p50_us,
            s.latency.p99_us,
            per_order,
            s.retries,
            s.throughput_per_s,
        );
    }
    out
}

/// The checkout scoreboard: where each strategy's units went.
fn checkout_scoreboard(results: &[(RunConfig, RunSummary)]) -> String {
    let mut out = String::new();
    if let Some((config, _)) = results.first() {
        let _ = writeln!(out, "{}", config.race.describe());
    }
    let _ = writeln!(
        out,
        "{:<22}{:>7}{:>10}{:>6}{:>6}{:>8}{:>9}{:>6}{:>7}{:>9}{:>10}",
        "strategy",
        "final",
        "oversold",
        "sold",
        "held",
        "leaked",
        "expired",
        "dup",
        "limit",
        "p99 µs",
        "ledger"
    );
    for (config, s) in results {
        let Some(c) = &s.checkout else { continue };
        let _ = writeln!(
            out,
            "{:<22}{:>7}{:>10}{:>6}{:>6}{:>8}{:>9}{:>6}{:>7}{:>9}{:>10}",
            config.strategy,
            s.final_stock,
            s.oversold_units,
            c.confirmed_units,
            c.held_units,
            c.leaked_units,
            c.expired_units,
            c.duplicate_reservations,
            c.limit_violations,
            s.latency.p99_us,
            c.ledger.as_str(),
        );
    }
    out
}

/// The checkout table: where every unit went, and that they add up.
pub fn checkout_table(config: &RunConfig, s: &RunSummary, c: &CheckoutTally) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", config.describe());
    let conserved = i64::from(s.stock)
        == s.final_stock + c.confirmed_units as i64 + c.held_units as i64 + c.leaked_units;
    let verdict = checkout_verdict(s, c);
    for (name, value) in checkout_rows(s, c) {
        let _ = writeln!(out, "  {name:<22}{value:>38}");
    }
    let _ = writeln!(
        out,
        "  stock {} = {} available + {} sold + {} held + {} leaked{}",
        s.stock,
        s.final_stock,
        c.confirmed_units,
        c.held_units,
        c.leaked_units,
        if conserved { "" } else { "  (DOES NOT ADD UP)" }
    );
    let _ = writeln!(out, "  => {verdict}");
    out
}

/// The checkout table's last line: oversold or not, then every other way units went wrong.
fn checkout_verdict(s: &RunSummary, c: &CheckoutTally) -> String {
    let mut verdict = match s.oversold_units {
        0 => "no oversell".to_string(),
        n => format!(
            "OVERSOLD by {n} units (the available count ended at {})",
            s.final_stock
        ),
    };
    if c.leaked_units > 0 {
        verdict += &format!("; {} units LEAKED", c.leaked_units);
    }
    if c.duplicate_reservations > 0 {
        verdict += &format!("; {} units reserved TWICE", c.duplicate_reservations);
    }
    if c.limit_violations > 0 {
        verdict += &format!("; {} customers OVER the limit", c.limit_violations);
    }
    verdict
}

/// The checkout table's rows, name and value, in the order they print.
fn checkout_rows(s: &RunSummary, c: &CheckoutTally) -> [(&'static str, String); 20] {
    [
        ("stock", s.stock.to_string()),
        ("buyers", s.buyers.to_string()),
        (
            "confirmed (ledger)",
            format!("{} units, {} orders", c.confirmed_units, c.confirmed_orders),
        ),
        ("available at the end", s.final_stock.to_string()),
        ("held at the end", c.held_units.to_string()),
        ("leaked", c.leaked_units.to_string()),
        ("released", c.released_units.to_string()),
        ("expired (reaper)", c.expired_units.to_string()),
        ("oversold", s.oversold_units.to_string()),
        ("reserved twice", c.duplicate_reservations.to_string()),
        ("from the record", c.answered_from_record.to_string()),
        ("customers over limit", c.limit_violations.to_string()),
        (
            "refused",
            format!(
                "{} sold out, {} by the limit, {} unreachable",
                s.rejected - c.refused_by_limit,
                c.refused_by_limit,
                c.refused_unreachable
            ),
        ),
        (
            "backorders",
            format!(
                "{} units, {} over the stock",
                c.backorder_units, c.overage_units
            ),
        ),
        (
            "stories",
            format!(
                "{} crashed, {} abandoned, {} declined, {} paid too late",
                c.crashed, c.abandoned, c.payment_failed, c.paid_too_late
            ),
        ),
        (
            "reserve p50/p99",
            format!("{} / {} µs", s.latency.p50_us, s.latency.p99_us),
        ),
        ("round trips", s.round_trips.to_string()),
        (
            "reaper",
            format!(
                "{} calls, {} holds, batch <= {}, p99 {} µs; late p50 {} / max {} ms",
                c.reaper.calls,
                c.reaper.holds_returned,
                c.reaper.batch_size,
                c.reaper.p99_call_us,
                c.reaper.late_p50_us / 1_000,
                c.reaper.late_max_us / 1_000
            ),
        ),
        (
            "expired events",
            format!(
                "{} heard (late p50 {} / max {} ms), {} lost ({} units) in {} ms down",
                c.notify.releases,
                c.notify.release_late_p50_us / 1_000,
                c.notify.release_late_max_us / 1_000,
                c.notify.releases_lost,
                c.notify.units_lost,
                c.notify.listener_down_ms
            ),
        ),
        (
            "clocks",
            format!("{} ms shop, {} ms real", c.shop_ms, c.real_ms),
        ),
    ]
}

/// The human-readable table.
pub fn table(config: &RunConfig, s: &RunSummary) -> String {
    if let Some(c) = &s.checkout {
        return checkout_table(config, s, c);
    }
    if let Some(c) = &s.cart {
        return crate::cart::report::table(config, s, c);
    }
    if let Some(b) = &s.busy {
        return crate::busy::report::table(config, s, b);
    }
    if let Some(d) = &s.durability {
        return crate::durability::report::table(config, s, d);
    }
    if let Some(e) = &s.eviction {
        return crate::eviction::report::table(config, s, e);
    }
    if let Some(f) = &s.failover {
        return crate::failover::report::table(config, s, f);
    }
    let mut out = String::new();
    let _ = writeln!(out, "{}", config.describe());
    let mut verdict = match s.oversold_units {
        0 => "no oversell".to_string(),
        n => format!("OVERSOLD by {n} units"),
    };
    if s.lost_updates != 0 {
        // The sneaky one: the counter looks healthy because writes overwrote each other.
        verdict += &format!(
            "; {} updates LOST: the counter says {} left, the orders say {}",
            s.lost_updates,
            s.final_stock,
            i64::from(s.stock) - s.units_sold as i64
        );
    }
    let rows: [(&str, String); 19] = [
        ("stock", s.stock.to_string()),
        ("buyers", s.buyers.to_string()),
        ("orders accepted", s.orders_accepted.to_string()),
        ("units sold", s.units_sold.to_string()),
        ("final stock", s.final_stock.to_string()),
        ("oversold units", s.oversold_units.to_string()),
        ("lost updates", s.lost_updates.to_string()),
        ("rejected (sold out)", s.rejected.to_string()),
        ("refused, units left", s.false_sold_out.to_string()),
        ("errors", s.errors.to_string()),
        ("unknown (in doubt)", s.unknown.to_string()),
        ("units in doubt", s.in_doubt_units.to_string()),
        ("gave up", s.gave_up.to_string()),
        ("duration", format!("{:.1} ms", s.duration_ms)),
        ("throughput", format!("{:.0} orders/s", s.throughput_per_s)),
        (
            "latency p50/p95/p99",
            format!(
                "{} / {} / {} µs",
                s.latency.p50_us, s.latency.p95_us, s.latency.p99_us
            ),
        ),
        ("latency max", format!("{} µs", s.latency.max_us)),
        ("round trips", s.round_trips.to_string()),
        ("retries", s.retries.to_string()),
    ];
    for (name, value) in rows {
        let _ = writeln!(out, "  {name:<22}{value:>14}");
    }
    let _ = writeln!(out, "  => {verdict}");
    out
}

/// What `oversold run --tape N` prints after the table: the first `n` lines of the run's Redis
/// tape, what its rule can and cannot order, whether the replay explains every reply, and the
/// caption.
pub fn tape(config: &RunConfig, outcomes: &[BuyerOutcome], n: usize) -> String {
    let Some(about) = about(config) else {
        return format!("no tape: unknown strategy {:?}\n", config.strategy);
    };
    let rule = about.tape;
    if rule == TapeRule::Story {
        return format!("\n{}\n", rule.limits());
    }
    let tape = Tape::build(config.race.stock, rule, outcomes);
    let total = tape.lines().count();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nRedis tape: the first {} of {total} commands, in Redis's order, from its replies alone",
        n.min(total)
    );
    let _ = writeln!(out, "({})", rule.limits());
    for line in tape.lines().take(n) {
        let _ = writeln!(out, "{line}");
    }
    if total > n {
        let _ = writeln!(out, "… {} more", total - n);
    }
    match tape.verify() {
        Ok(()) => {
            let _ = writeln!(out, "replayed: this order explains every reply");
        }
        Err(e) => {
            let _ = writeln!(out, "replayed: NO order explains these replies: {e}");
        }
    }
    let _ = writeln!(out, "=> {}", tape.caption().sentence);
    out
}
