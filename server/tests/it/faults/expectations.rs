//! What each strategy must keep under each fault, as one table, and the one checker that
//! holds a run to its row of it.
//!
//! The accounting is Jepsen's. A write that was sent and never answered (a timeout, a
//! connection that broke under it) may or may not have been applied: its buyer ends
//! `unknown` and its units are *in doubt*. A correct store loses between none and all of
//! the in-doubt units, never one more, and never gives a confirmed buyer a unit that is not
//! there. So for a run that started with `stock` units, sold `units_sold` (confirmed) and
//! ended with `final_stock` on the shelf, the units that left the shelf must satisfy
//!
//! ```text
//! units_sold  <=  stock - final_stock  <=  units_sold + in_doubt_units,   final_stock >= 0
//! ```
//!
//! The left half is "no oversell" (every confirmed sale took its unit); the right half is
//! "no unit vanished" (nothing left the shelf that nobody may have bought).

use std::collections::HashSet;
use std::time::Duration;

use oversold::run::RunError;
use oversold::shelf::ShelfError;
use oversold_protocol::{BuyerOutcome, OutcomeResult, RunConfig, RunSummary};

/// `CLIENT PAUSE ... WRITE` length: shorter than the 3 s response timeout.
pub const PAUSE_WRITE: Duration = Duration::from_millis(1500);
/// `CLIENT PAUSE ... ALL` length: longer than the 3 s response timeout.
pub const PAUSE_ALL: Duration = Duration::from_millis(4000);
/// `DEBUG SLEEP` length: past the plain lock's 2 s lease, short of the response timeout.
pub const DEBUG_SLEEP: Duration = Duration::from_millis(2600);
/// How often the dense flushes flush.
pub const FLUSH_EVERY: Duration = Duration::from_millis(10);
/// The longest a run may take to end once Redis is killed (the engine aims at 1 to 2 s).
pub const FAIL_BOUND: Duration = Duration::from_secs(5);

/// A fault, injected from a connection of the test's own while a run is going. The order is
/// the column order of [`TABLE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// `CLIENT PAUSE 1500 WRITE`: reads are answered, writes wait 1.5 s.
    PauseWrite,
    /// `CLIENT PAUSE 4000 ALL`: nothing is answered for 4 s; requests in flight time out.
    PauseAll,
    /// `DEBUG SLEEP 2.6`: Redis itself stalls 2.6 s, past the lock's 2 s lease.
    DebugSleep,
    /// `SCRIPT FLUSH` every 10 ms for the whole run.
    ScriptFlush,
    /// `FUNCTION FLUSH` every 10 ms for the whole run.
    FunctionFlush,
    /// `CLIENT KILL ID` of app server 1's connection mid-run. Redis stays up.
    KillAppServer,
    /// SIGKILL of redis-server mid-run while buyers are in flight, restarted at once, empty,
    /// on the same port: the buyer that meets the broken connection finds nothing listening.
    KillRestart,
    /// The same SIGKILL and restart, in a quiet moment between two arrivals: Redis is back,
    /// empty, before any buyer notices, so the next buyer finds its connection broken while a
    /// fresh one answers.
    QuietRestart,
}

impl Fault {
    /// Every fault, in the table's column order.
    pub const ALL: [Fault; 8] = [
        Fault::PauseWrite,
        Fault::PauseAll,
        Fault::DebugSleep,
        Fault::ScriptFlush,
        Fault::FunctionFlush,
        Fault::KillAppServer,
        Fault::KillRestart,
        Fault::QuietRestart,
    ];

    /// A few words for the report line.
    pub fn label(self) -> &'static str {
        match self {
            Fault::PauseWrite => "CLIENT PAUSE 1.5s WRITE",
            Fault::PauseAll => "CLIENT PAUSE 4s ALL",
            Fault::DebugSleep => "DEBUG SLEEP 2.6",
            Fault::ScriptFlush => "SCRIPT FLUSH /10ms",
            Fault::FunctionFlush => "FUNCTION FLUSH /10ms",
            Fault::KillAppServer => "CLIENT KILL app-1",
            Fault::KillRestart => "SIGKILL+restart, busy",
            Fault::QuietRestart => "SIGKILL+restart, quiet",
        }
    }

    /// For run ids.
    pub fn slug(self) -> &'static str {
        match self {
            Fault::PauseWrite => "pause-write",
            Fault::PauseAll => "pause-all",
            Fault::DebugSleep => "debug-sleep",
            Fault::ScriptFlush => "script-flush",
            Fault::FunctionFlush => "function-flush",
            Fault::KillAppServer => "kill-app",
            Fault::KillRestart => "kill-restart",
            Fault::QuietRestart => "quiet-restart",
        }
    }

    fn column(self) -> usize {
        Fault::ALL.iter().position(|&f| f == self).expect("in ALL")
    }
}

/// What a run under a fault must show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// No oversell and no vanished unit, in-doubt units allowed for:
    /// `units_sold <= stock - final_stock <= units_sold + in_doubt_units`, `final_stock >= 0`.
    Safe,
    /// `Safe`, and not one buyer failed (no `error`, no `unknown`): the fault costs latency
    /// at most.
    Clean,
    /// `decr_compensate`'s own bound. No buyer is told it got a unit that does not exist
    /// (`units_sold <= stock`), but a DECRBY whose answer was lost is never undone, so the
    /// counter may end below the truth (even below zero) by at most the in-doubt units:
    /// `stock - units_sold - in_doubt_units <= final_stock <= stock - units_sold`.
    Leaky,
    /// Documented to be able to break here: the run must end with one outcome per buyer;
    /// oversells and lost exclusion are measured and reported, not failed.
    MayBreak,
    /// Unsafe by design: the run must end with one outcome per buyer, nothing more.
    Unsafe,
    /// Redis is lost: the run ends within [`FAIL_BOUND`] of the kill with `StoreLost` or
    /// `ReadBack(Vanished)`, never a summary (any number would be invented), and the next
    /// run on the restarted Redis works.
    Fails,
}

use Expect::{Clean, Fails, Leaky, MayBreak, Safe, Unsafe};

/// The guarantees, strategy by strategy (rows) and fault by fault (columns, in the order of
/// [`Fault::ALL`]). Every Redis strategy in `REGISTRY` must have a row: a new strategy
/// fails the suite until someone writes down what it promises.
///
/// Why the rows differ:
/// - The atomic strategies (one script, one function call, one transaction, a fenced lock)
///   do their check and write in one step inside Redis, so no stall, flush or killed
///   connection can split them: `Safe` everywhere. A flush cannot fail a buyer at all
///   (EVALSHA falls back to EVAL on NOSCRIPT; `function` reloads its library, then falls
///   back to EVAL of `reserve.lua`), and a pause shorter than the response timeout only
///   delays answers: `Clean`.
/// - Plain `lock` is as safe while every holder finishes within its 2 s lease. `DEBUG SLEEP`
///   2.6 s stalls the holder past it: a waiter can take the expired lock while the old
///   holder still acts on its read. Documented, so `MayBreak`.
/// - `redlock` keeps `lock`'s lock on three masters of its own, which these faults never
///   touch: they hit the stock's Redis only. A pause of that Redis past the 2 s lease is then
///   a stalled holder whose lease runs out on every master while its GET or DECRBY waits, and
///   a waiter gathers a fresh majority: `MayBreak` under `DEBUG SLEEP` and under `CLIENT
///   PAUSE 4s ALL`, where `lock` is `Safe` because its lock sits on the paused Redis and its
///   lease waits with it. A lock master killed or frozen is `redlock.rs`'s own test.
/// - `decr_compensate` never oversells, but an in-doubt DECRBY is never given back: `Leaky`.
/// - `naive`, `naive_set` and `sharded_sum` oversell without any fault: `Unsafe`.
/// - SIGKILL takes the stock with it, whatever the strategy: `Fails`, whether a buyer
///   notices while Redis is down (busy) or only once it is back (quiet).
#[rustfmt::skip]
pub const TABLE: &[(&str, [Expect; 8])] = &[
    //                 pause W 1.5s pause ALL 4s DEBUG SLEEP SCRIPT FLUSH FUNCTION FLUSH app conn killed SIGKILL busy SIGKILL quiet
    ("naive",           [Unsafe,    Unsafe,      Unsafe,     Unsafe,      Unsafe,        Unsafe,         Fails,       Fails]),
    ("naive_set",       [Unsafe,    Unsafe,      Unsafe,     Unsafe,      Unsafe,        Unsafe,         Fails,       Fails]),
    ("lua",             [Clean,     Safe,        Safe,       Clean,       Clean,         Safe,           Fails,       Fails]),
    ("function",        [Clean,     Safe,        Safe,       Clean,       Clean,         Safe,           Fails,       Fails]),
    ("sharded",         [Clean,     Safe,        Safe,       Clean,       Clean,         Safe,           Fails,       Fails]),
    ("sharded_sum",     [Unsafe,    Unsafe,      Unsafe,     Unsafe,      Unsafe,        Unsafe,         Fails,       Fails]),
    ("watch",           [Clean,     Safe,        Safe,       Clean,       Clean,         Safe,           Fails,       Fails]),
    ("fenced_lock",     [Clean,     Safe,        Safe,       Clean,       Clean,         Safe,           Fails,       Fails]),
    ("lock",            [Clean,     Safe,        MayBreak,   Clean,       Clean,         Safe,           Fails,       Fails]),
    ("redlock",         [Clean,     MayBreak,    MayBreak,   Clean,       Clean,         Safe,           Fails,       Fails]),
    ("decr_compensate", [Clean,     Leaky,       Leaky,      Clean,       Clean,         Leaky,          Fails,       Fails]),
];

/// The row of `strategy`, at `fault`'s column. Panics for a strategy with no row.
pub fn expectation(strategy: &str, fault: Fault) -> Expect {
    let (_, row) = TABLE
        .iter()
        .find(|(name, _)| *name == strategy)
        .unwrap_or_else(|| {
            panic!(
                "strategy {strategy:?} has no row in the fault table (tests/it/faults/expectations.rs): \
                 write down what it promises under each fault"
            )
        });
    row[fault.column()]
}

/// How a run ended.
#[derive(Debug)]
pub enum Ended {
    /// With a summary.
    Summary(RunSummary),
    /// With an error.
    Failed(RunError),
    /// Not within the scenario's deadline.
    Hung,
}

/// Everything one scenario saw.
#[derive(Debug)]
pub struct Observed {
    /// Strategy name.
    pub strategy: String,
    /// The fault injected.
    pub fault: Fault,
    /// The run's config.
    pub config: RunConfig,
    /// How it ended.
    pub ended: Ended,
    /// Every outcome the run delivered (through its sink, so also when it failed).
    pub outcomes: Vec<BuyerOutcome>,
    /// From starting the run to its end.
    pub elapsed: Duration,
    /// From the fault's injection to the run's end.
    pub fault_to_end: Duration,
    /// For [`Fault::KillRestart`]: how a small run on the restarted Redis ended.
    pub next_run: Option<Result<RunSummary, String>>,
}

/// The checker's answer: `violations` fail the test, `notes` are measurements of what a
/// `MayBreak` strategy did break.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Guarantees that did not hold.
    pub violations: Vec<String>,
    /// What broke where breaking is allowed (reported, not failed).
    pub notes: Vec<String>,
    /// For `MayBreak`: two buyers were inside the critical section at once.
    pub lost_exclusion: bool,
    /// Units sold that never existed.
    pub oversold: u64,
}

/// Hold `o` to its row of [`TABLE`].
pub fn check(o: &Observed) -> Verdict {
    check_against(expectation(&o.strategy, o.fault), o)
}

/// Hold `o` to `expect` (the table's word, or another one: the tests that prove the checker
/// can fail pass `Safe` for a naive run).
pub fn check_against(expect: Expect, o: &Observed) -> Verdict {
    let mut v = Verdict::default();
    let buyers = o.config.race.buyers;

    // Whatever happened, no buyer is reported twice and every report is a real buyer.
    let mut seen = HashSet::new();
    for out in &o.outcomes {
        if !(1..=buyers).contains(&out.buyer) || !seen.insert(out.buyer) {
            v.violations
                .push(format!("buyer {} reported twice or unknown", out.buyer));
        }
    }

    if expect == Fails {
        match &o.ended {
            Ended::Failed(RunError::StoreLost { ran, .. }) => {
                if *ran != o.outcomes.len() {
                    v.violations.push(format!(
                        "StoreLost says {ran} buyers ran, {} outcomes were delivered",
                        o.outcomes.len()
                    ));
                }
            }
            Ended::Failed(RunError::ReadBack(ShelfError::Vanished(_))) => {}
            Ended::Failed(other) => v
                .violations
                .push(format!("failed, but not as a lost store: {other}")),
            Ended::Summary(s) => v.violations.push(format!(
                "a summary after Redis lost the stock (final_stock {} is invented): {s:?}",
                s.final_stock
            )),
            Ended::Hung => v.violations.push("the run did not end".into()),
        }
        if o.fault_to_end > FAIL_BOUND {
            v.violations.push(format!(
                "took {} ms from the kill to the end (bound {} ms)",
                o.fault_to_end.as_millis(),
                FAIL_BOUND.as_millis()
            ));
        }
        match &o.next_run {
            Some(Ok(s)) if s.errors == 0 && s.unknown == 0 => {}
            Some(Ok(s)) => v.violations.push(format!(
                "the next run after the restart failed buyers: {s:?}"
            )),
            Some(Err(e)) => v
                .violations
                .push(format!("the next run after the restart failed: {e}")),
            None => v.violations.push("no run after the restart".into()),
        }
        return v;
    }

    // Redis is up at the end: the run must end with a summary and one outcome per buyer.
    let s = match &o.ended {
        Ended::Summary(s) => s,
        Ended::Failed(e) => {
            v.violations
                .push(format!("no summary although Redis is up: {e}"));
            return v;
        }
        Ended::Hung => {
            v.violations.push("the run did not end".into());
            return v;
        }
    };
    if seen.len() != buyers as usize {
        v.violations
            .push(format!("{} of {buyers} buyers got an outcome", seen.len()));
    }
    v.oversold = s.oversold_units;

    match expect {
        Safe => v.violations.extend(shelf_accounts_for_every_unit(s)),
        Clean => {
            v.violations.extend(shelf_accounts_for_every_unit(s));
            if s.errors + s.unknown > 0 {
                v.violations.push(format!(
                    "{} errors and {} unknown outcomes where no buyer may fail: {:?}",
                    s.errors,
                    s.unknown,
                    first_failure(&o.outcomes)
                ));
            }
        }
        Leaky => v.violations.extend(undo_may_leak(s)),
        MayBreak => {
            v.lost_exclusion = lost_exclusion(&o.outcomes);
            if v.lost_exclusion {
                v.notes
                    .push("lost exclusion: two reservations read the same stock".into());
            }
            v.notes.extend(shelf_accounts_for_every_unit(s));
        }
        Unsafe | Fails => {}
    }
    if o.fault == Fault::KillAppServer {
        v.violations.extend(killed_app_server(o));
    }
    v
}

/// `units_sold <= stock - final_stock <= units_sold + in_doubt_units`, `final_stock >= 0`.
pub fn shelf_accounts_for_every_unit(s: &RunSummary) -> Vec<String> {
    let (stock, sold, doubt) = (
        i64::from(s.stock),
        s.units_sold as i64,
        s.in_doubt_units as i64,
    );
    let taken = stock - s.final_stock;
    let mut bad = Vec::new();
    if sold > stock {
        bad.push(format!("oversold: {sold} units confirmed out of {stock}"));
    }
    if s.final_stock < 0 {
        bad.push(format!("final_stock {} is below zero", s.final_stock));
    }
    if taken < sold {
        bad.push(format!(
            "oversold: {sold} units confirmed but only {taken} left the shelf (stock {stock}, final {})",
            s.final_stock
        ));
    }
    if taken > sold + doubt {
        bad.push(format!(
            "{} units vanished: {taken} left the shelf, {sold} sold + {doubt} in doubt account for {}",
            taken - sold - doubt,
            sold + doubt
        ));
    }
    bad
}

/// `decr_compensate`: `units_sold <= stock` and
/// `stock - units_sold - in_doubt_units <= final_stock <= stock - units_sold`.
pub fn undo_may_leak(s: &RunSummary) -> Vec<String> {
    let (stock, sold, doubt) = (
        i64::from(s.stock),
        s.units_sold as i64,
        s.in_doubt_units as i64,
    );
    let mut bad = Vec::new();
    if sold > stock {
        bad.push(format!("oversold: {sold} units confirmed out of {stock}"));
    }
    if s.final_stock > stock - sold {
        bad.push(format!(
            "the counter holds {} but only {} can be left after {sold} confirmed sales",
            s.final_stock,
            stock - sold
        ));
    }
    if s.final_stock < stock - sold - doubt {
        bad.push(format!(
            "the counter ends at {}, below {} (stock {stock} - sold {sold} - in doubt {doubt}): \
             units leaked beyond the in-doubt ones",
            s.final_stock,
            stock - sold - doubt
        ));
    }
    bad
}

/// Two reservations that read the same stock were inside the critical section together (under
/// a working lock each reservation lowers the counter before the next holder reads it).
pub fn lost_exclusion(outcomes: &[BuyerOutcome]) -> bool {
    let mut reads = HashSet::new();
    outcomes
        .iter()
        .filter(|o| o.result == OutcomeResult::Reserved)
        .filter_map(|o| o.observed_stock)
        .any(|seen| !reads.insert(seen))
}

/// App server 1's connection was killed: its buyers that failed say the connection was lost,
/// every buyer of it that arrived once the break showed failed too, no buyer of another app
/// server failed, and the others went on after the kill.
fn killed_app_server(o: &Observed) -> Vec<String> {
    const KILLED: u32 = 1;
    let (mine, others): (Vec<&BuyerOutcome>, Vec<&BuyerOutcome>) =
        o.outcomes.iter().partition(|x| x.app_server == KILLED);
    let mut bad = Vec::new();
    // When the break first showed: the earliest answer of a failed buyer. (Not its start: a
    // buyer that started long before, waiting for a lock, can be the first to fail, while
    // buyers that started after it and finished before the kill did fine.)
    let Some(broke_at) = mine.iter().filter(|x| failed(x)).map(|x| x.end_us).min() else {
        return vec!["no buyer of the killed app server failed: was it killed?".into()];
    };
    for x in mine.iter().filter(|x| failed(x)) {
        let msg = x.error.as_deref().unwrap_or("");
        if !(msg.contains("connection") && msg.contains("lost")) {
            bad.push(format!(
                "buyer {} of the killed app server failed without saying the connection was lost: {msg:?}",
                x.buyer
            ));
        }
    }
    for x in mine.iter().filter(|x| x.start_us > broke_at && !failed(x)) {
        bad.push(format!(
            "buyer {} of the killed app server arrived after its connection broke and still ended {:?}",
            x.buyer, x.result
        ));
    }
    if let Some(x) = others.iter().find(|x| failed(x)) {
        bad.push(format!(
            "buyer {} of another app server ({}) failed: {:?}",
            x.buyer, x.app_server, x.error
        ));
    }
    if !others.iter().any(|x| x.start_us > broke_at) {
        bad.push("no buyer of another app server went on after the kill".into());
    }
    bad
}

fn failed(x: &BuyerOutcome) -> bool {
    matches!(x.result, OutcomeResult::Error | OutcomeResult::Unknown)
}

fn first_failure(outcomes: &[BuyerOutcome]) -> Option<(u32, OutcomeResult, Option<&str>)> {
    outcomes
        .iter()
        .find(|o| failed(o))
        .map(|o| (o.buyer, o.result, o.error.as_deref()))
}

/// The report line of one scenario: strategy, fault, sold, final, in doubt, unknown, errors, ms.
pub fn report_line(o: &Observed, v: &Verdict) -> String {
    let verdict = if !v.violations.is_empty() {
        format!("FAIL: {}", v.violations.join("; "))
    } else if !v.notes.is_empty() {
        format!("ok (allowed: {})", v.notes.join("; "))
    } else {
        "ok".into()
    };
    let head = format!("{:<16} {:<24}", o.strategy, o.fault.label());
    match &o.ended {
        Ended::Summary(s) => format!(
            "{head} sold {:>4}  final {:>5}  in doubt {:>3}  unknown {:>3}  errors {:>3}  {:>6} ms  {verdict}",
            s.units_sold,
            s.final_stock,
            s.in_doubt_units,
            s.unknown,
            s.errors,
            o.elapsed.as_millis()
        ),
        Ended::Failed(e) => format!(
            "{head} run failed after {} outcomes, {} ms from the fault to the end: {}  {verdict}",
            o.outcomes.len(),
            o.fault_to_end.as_millis(),
            short_error(e)
        ),
        Ended::Hung => format!("{head} HUNG  {verdict}"),
    }
}

fn short_error(e: &RunError) -> &'static str {
    match e {
        RunError::StoreLost { .. } => "StoreLost",
        RunError::ReadBack(ShelfError::Vanished(_)) => "ReadBack(Vanished)",
        RunError::ReadBack(_) => "ReadBack(other)",
        RunError::Setup(_) => "Setup",
        RunError::Refused(_) => "Refused",
        RunError::WrongScenario { .. } => "WrongScenario",
    }
}

#[cfg(test)]
mod tests {
    //! The checker must be able to fail: fabricated histories that break each half of the
    //! accounting are caught, and one that stays inside the in-doubt allowance is not.

    use super::*;
    use oversold_protocol::RunRequest;

    fn config(stock: u32, buyers: u32) -> RunConfig {
        RunRequest {
            strategy: Some("lua".into()),
            stock: Some(stock),
            buyers: Some(buyers),
            ..Default::default()
        }
        .validate(0)
        .unwrap()
    }

    fn outcome(buyer: u32, result: OutcomeResult, observed: i64) -> BuyerOutcome {
        BuyerOutcome {
            buyer,
            app_server: 0,
            qty: 1,
            observed_stock: Some(observed),
            result,
            error: None,
            stock_after: None,
            latency_us: 1,
            start_us: 0,
            end_us: 1,
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

    /// A run of `stock` units whose buyers ended as `results`, and whose shelf holds `final_stock`.
    fn history(
        stock: u32,
        results: &[(OutcomeResult, i64)],
        final_stock: i64,
        fault: Fault,
    ) -> Observed {
        let config = config(stock, results.len() as u32);
        let outcomes: Vec<BuyerOutcome> = results
            .iter()
            .enumerate()
            .map(|(i, &(r, seen))| outcome(i as u32 + 1, r, seen))
            .collect();
        Observed {
            strategy: "lua".into(),
            fault,
            ended: Ended::Summary(oversold::summary::summarize(
                &config,
                &outcomes,
                final_stock,
            )),
            config,
            outcomes,
            elapsed: Duration::ZERO,
            fault_to_end: Duration::ZERO,
            next_run: None,
        }
    }

    use OutcomeResult::{Reserved, SoldOut, Unknown};

    #[test]
    fn an_oversold_history_fails_the_atomic_row() {
        // Two units, three confirmed buyers, the counter at -1.
        let o = history(
            2,
            &[(Reserved, 2), (Reserved, 1), (Reserved, 1)],
            -1,
            Fault::PauseAll,
        );
        let v = check(&o);
        assert!(
            v.violations.iter().any(|m| m.contains("below zero")),
            "{v:?}"
        );
        // The same oversell hidden by a lost update (`SET` instead of DECRBY): the counter
        // looks fine, the accounting does not.
        let o = history(
            2,
            &[(Reserved, 2), (Reserved, 2), (Reserved, 1)],
            0,
            Fault::PauseAll,
        );
        let v = check(&o);
        assert!(v.violations.iter().any(|m| m.contains("oversold")), "{v:?}");
    }

    #[test]
    fn units_beyond_the_in_doubt_ones_may_not_vanish() {
        // 5 units: 1 sold, 1 in doubt, 3 left would be fine; 2 left means one vanished.
        let ok = history(
            5,
            &[(Reserved, 5), (Unknown, 4), (SoldOut, 0)],
            3,
            Fault::PauseAll,
        );
        assert!(check(&ok).violations.is_empty(), "{:?}", check(&ok));
        let ok = history(
            5,
            &[(Reserved, 5), (Unknown, 4), (SoldOut, 0)],
            4,
            Fault::PauseAll,
        );
        assert!(check(&ok).violations.is_empty(), "{:?}", check(&ok));
        let bad = history(
            5,
            &[(Reserved, 5), (Unknown, 4), (SoldOut, 0)],
            2,
            Fault::PauseAll,
        );
        let v = check(&bad);
        assert!(v.violations.iter().any(|m| m.contains("vanished")), "{v:?}");
    }

    #[test]
    fn a_clean_row_fails_on_any_unknown() {
        let o = history(5, &[(Reserved, 5), (Unknown, 4)], 4, Fault::ScriptFlush);
        let v = check(&o);
        assert!(v.violations.iter().any(|m| m.contains("unknown")), "{v:?}");
    }

    #[test]
    fn decr_compensate_may_leak_only_the_in_doubt_units() {
        let at = |final_stock| Observed {
            strategy: "decr_compensate".into(),
            ..history(
                3,
                &[(Reserved, 3), (Unknown, 2), (Unknown, 1), (SoldOut, -1)],
                final_stock,
                Fault::PauseAll,
            )
        };
        for fine in [0, 1, 2] {
            assert!(check(&at(fine)).violations.is_empty(), "{fine}");
        }
        assert!(!check(&at(-1)).violations.is_empty());
        assert!(!check(&at(3)).violations.is_empty());
    }

    #[test]
    fn two_reservations_reading_one_stock_is_lost_exclusion() {
        let o = Observed {
            strategy: "lock".into(),
            ..history(2, &[(Reserved, 1), (Reserved, 1)], -1, Fault::DebugSleep)
        };
        let v = check(&o);
        assert!(v.violations.is_empty(), "documented to break: {v:?}");
        assert!(
            v.lost_exclusion && v.oversold == 0 && !v.notes.is_empty(),
            "{v:?}"
        );
        assert!(!check_against(Safe, &o).violations.is_empty());
    }

    #[test]
    fn a_summary_after_a_kill_is_a_violation() {
        let mut o = history(1, &[(Reserved, 1)], 0, Fault::KillRestart);
        o.next_run = Some(Err("not run".into()));
        let v = check(&o);
        assert!(v.violations.iter().any(|m| m.contains("invented")), "{v:?}");
    }

    /// The table follows the registry both ways: every registered strategy whose buyers talk
    /// to Redis (the suite races each of them under every fault) has its row, and every
    /// row is such a strategy, so a renamed or removed one leaves no row nobody checks.
    #[test]
    fn every_redis_strategy_has_a_row() {
        let redis_strategies: Vec<&str> = oversold::strategy::REGISTRY
            .iter()
            .filter(|s| s.uses_redis())
            .map(|s| s.name())
            .collect();
        for name in &redis_strategies {
            for f in Fault::ALL {
                expectation(name, f);
            }
        }
        for (name, _) in TABLE {
            assert!(
                redis_strategies.contains(name),
                "the fault table has a row for {name:?}, which is no registered Redis strategy"
            );
        }
        let mut names: Vec<&str> = TABLE.iter().map(|(name, _)| *name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TABLE.len(), "a strategy with two rows");
    }
}
