//! Step sessions for the host tests: states as the server sends them, played click by click
//! the way the page receives them (so the trail is the page's own).

use oversold_protocol::{
    BuyerOutcome, OutcomeResult, RaceConfig, StepBuyer, StepCommand, StepState,
};

use super::trail::StepTrail;

/// A state of session `run_id` (stock `stock`, two buyers, both between commands) with `log`
/// and the stock `now`.
pub(crate) fn state(
    run_id: &str,
    stock: u32,
    log: &[(u32, &str, &str)],
    now: Option<i64>,
) -> StepState {
    StepState {
        run_id: run_id.into(),
        config: RaceConfig {
            stock,
            buyers: 2,
            qty: 1,
            max_qty: None,
            app_servers: 2,
            arrival_spread_ms: 0,
            race_window_ms: 0,
            seed: 1,
            knobs: oversold_protocol::Knobs::Race,
        }
        .with_strategy("naive"),
        buyers: (1..=2)
            .map(|b| StepBuyer {
                buyer: b,
                next: None,
                outcome: None,
            })
            .collect(),
        log: log
            .iter()
            .map(|&(buyer, command, reply)| StepCommand {
                buyer,
                command: command.into(),
                reply: reply.into(),
            })
            .collect(),
        stock: now,
        units_sold: 0,
    }
}

/// Buyer `buyer`'s outcome: `result`, having read `read`, leaving `after`.
pub(crate) fn ended(
    buyer: u32,
    result: OutcomeResult,
    read: Option<i64>,
    after: Option<i64>,
) -> BuyerOutcome {
    BuyerOutcome {
        buyer,
        app_server: buyer - 1,
        qty: 1,
        observed_stock: read,
        result,
        error: None,
        stock_after: after,
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
    }
}

/// One click: who moved, what went through, its reply, the stock after it, and each buyer
/// after the click (`Ok(next command)` or `Err(outcome)`).
pub(crate) type Click<'a> = (
    u32,
    &'a str,
    &'a str,
    i64,
    &'a [Result<&'a str, BuyerOutcome>],
);

/// A session of `buyers` buyers and `stock` units, played click by click: the last state and
/// the trail the page built from every answer.
pub(crate) fn played(stock: u32, first: &[&str], clicks: &[Click<'_>]) -> (StepState, StepTrail) {
    let mut trail = StepTrail::default();
    let mut s = state("s-1", stock, &[], Some(i64::from(stock)));
    s.config.race.buyers = first.len() as u32;
    s.buyers = first
        .iter()
        .enumerate()
        .map(|(i, next)| StepBuyer {
            buyer: i as u32 + 1,
            next: Some(next.to_string()),
            outcome: None,
        })
        .collect();
    trail.observe(&s);
    for (buyer, command, reply, now, after) in clicks {
        s.log.push(StepCommand {
            buyer: *buyer,
            command: command.to_string(),
            reply: reply.to_string(),
        });
        s.stock = Some(*now);
        for (b, a) in s.buyers.iter_mut().zip(after.iter()) {
            match a {
                Ok(next) => {
                    b.next = Some(next.to_string());
                    b.outcome = None;
                }
                Err(o) => {
                    b.next = None;
                    b.outcome = Some(o.clone());
                }
            }
        }
        s.units_sold = s
            .buyers
            .iter()
            .filter_map(|b| b.outcome.as_ref())
            .filter(|o| o.result == OutcomeResult::Reserved)
            .map(|o| u64::from(o.qty))
            .sum();
        trail.observe(&s);
    }
    (s, trail)
}

/// Naive, one unit, two buyers, both read before either writes: the classic oversell.
pub(crate) fn naive_oversell() -> (StepState, StepTrail) {
    let r1 = ended(1, OutcomeResult::Reserved, Some(1), Some(0));
    let r2 = ended(2, OutcomeResult::Reserved, Some(1), Some(-1));
    played(
        1,
        &["GET stock", "GET stock"],
        &[
            (
                1,
                "GET stock",
                "1",
                1,
                &[Ok("DECRBY stock 1"), Ok("GET stock")],
            ),
            (
                2,
                "GET stock",
                "1",
                1,
                &[Ok("DECRBY stock 1"), Ok("DECRBY stock 1")],
            ),
            (
                1,
                "DECRBY stock 1",
                "0",
                0,
                &[Err(r1.clone()), Ok("DECRBY stock 1")],
            ),
            (2, "DECRBY stock 1", "-1", -1, &[Err(r1), Err(r2)]),
        ],
    )
}

/// Lua, one unit, two buyers: one command each.
pub(crate) fn lua_one_each() -> (StepState, StepTrail) {
    let call = "EVALSHA reserve.lua 1 stock 1";
    let won = ended(2, OutcomeResult::Reserved, Some(1), Some(0));
    let lost = ended(1, OutcomeResult::SoldOut, Some(0), None);
    played(
        1,
        &[call, call],
        &[
            (2, call, "[1, 1, 0]", 0, &[Ok(call), Err(won.clone())]),
            (1, call, "[0, 0, 0]", 0, &[Err(lost), Err(won)]),
        ],
    )
}
