//! Step sessions for the host tests: states as the server sends them, played click by click
//! the way the page receives them (so the trail is the page's own).

use oversold_protocol::{
    BuyerOutcome, OutcomeResult, RaceConfig, RedisCall, RedisCommand, RedisReply, StepBuyer,
    StepCommand, StepState,
};

use super::trail::StepTrail;

/// `GET stock`.
pub(crate) fn get() -> RedisCall {
    RedisCommand::new("GET").key("stock").into()
}

/// `DECRBY stock n`.
pub(crate) fn decrby(n: i64) -> RedisCall {
    RedisCommand::new("DECRBY").key("stock").int(n).into()
}

/// `INCRBY stock n`.
pub(crate) fn incrby(n: i64) -> RedisCall {
    RedisCommand::new("INCRBY").key("stock").int(n).into()
}

/// `SET stock v KEEPTTL`.
pub(crate) fn set(v: i64) -> RedisCall {
    RedisCommand::new("SET")
        .key("stock")
        .int(v)
        .word("KEEPTTL")
        .into()
}

/// `EVALSHA reserve.lua 1 stock qty`.
pub(crate) fn lua(qty: i64) -> RedisCall {
    RedisCommand::new("EVALSHA")
        .script("reserve.lua")
        .int(1)
        .key("stock")
        .int(qty)
        .into()
}

/// `WATCH stock`.
pub(crate) fn watch() -> RedisCall {
    RedisCommand::new("WATCH").key("stock").into()
}

/// `UNWATCH`.
pub(crate) fn unwatch() -> RedisCall {
    RedisCommand::new("UNWATCH").into()
}

/// `MULTI · DECRBY stock 1 · EXEC`.
pub(crate) fn exec() -> RedisCall {
    RedisCall::Transaction(vec![RedisCommand::new("DECRBY").key("stock").int(1)])
}

/// An integer reply.
pub(crate) fn int(n: i64) -> RedisReply {
    RedisReply::Integer(n)
}

/// `OK`.
pub(crate) fn ok() -> RedisReply {
    RedisReply::Status("OK".into())
}

/// A script's result, e.g. `[1, 1, 0]`.
pub(crate) fn array(items: &[i64]) -> RedisReply {
    RedisReply::Array(items.iter().map(|&n| int(n)).collect())
}

/// A buyer standing before `call`, as the server sends it.
fn ready(buyer: u32, call: Option<RedisCall>) -> StepBuyer {
    StepBuyer {
        buyer,
        next: call.as_ref().map(ToString::to_string),
        next_call: call,
        outcome: None,
    }
}

/// A state of session `run_id` (stock `stock`, two buyers, both between commands) with `log`
/// and the stock `now`.
pub(crate) fn state(
    run_id: &str,
    stock: u32,
    log: &[(u32, RedisCall, RedisReply)],
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
        buyers: (1..=2).map(|b| ready(b, None)).collect(),
        log: log
            .iter()
            .map(|(buyer, call, answer)| StepCommand::new(*buyer, call.clone(), answer.clone()))
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
        epoch: None,
    }
}

/// One click: who moved, what went through, its reply, the stock after it, and each buyer
/// after the click (`Ok(next command)` or `Err(outcome)`).
pub(crate) type Click<'a> = (
    u32,
    RedisCall,
    RedisReply,
    i64,
    &'a [Result<RedisCall, BuyerOutcome>],
);

/// A session of `buyers` buyers and `stock` units, played click by click: the last state and
/// the trail the page built from every answer.
pub(crate) fn played(
    stock: u32,
    first: &[RedisCall],
    clicks: &[Click<'_>],
) -> (StepState, StepTrail) {
    let mut trail = StepTrail::default();
    let mut s = state("s-1", stock, &[], Some(i64::from(stock)));
    s.config.race.buyers = first.len() as u32;
    s.buyers = first
        .iter()
        .enumerate()
        .map(|(i, next)| ready(i as u32 + 1, Some(next.clone())))
        .collect();
    trail.observe(&s);
    for (buyer, call, answer, now, after) in clicks {
        s.log
            .push(StepCommand::new(*buyer, call.clone(), answer.clone()));
        s.stock = Some(*now);
        for (b, a) in s.buyers.iter_mut().zip(after.iter()) {
            match a {
                Ok(next) => *b = ready(b.buyer, Some(next.clone())),
                Err(o) => {
                    *b = ready(b.buyer, None);
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
        &[get(), get()],
        &[
            (1, get(), int(1), 1, &[Ok(decrby(1)), Ok(get())]),
            (2, get(), int(1), 1, &[Ok(decrby(1)), Ok(decrby(1))]),
            (1, decrby(1), int(0), 0, &[Err(r1.clone()), Ok(decrby(1))]),
            (2, decrby(1), int(-1), -1, &[Err(r1), Err(r2)]),
        ],
    )
}

/// Lua, one unit, two buyers: one command each.
pub(crate) fn lua_one_each() -> (StepState, StepTrail) {
    let won = ended(2, OutcomeResult::Reserved, Some(1), Some(0));
    let lost = ended(1, OutcomeResult::SoldOut, Some(0), None);
    played(
        1,
        &[lua(1), lua(1)],
        &[
            (
                2,
                lua(1),
                array(&[1, 1, 0]),
                0,
                &[Ok(lua(1)), Err(won.clone())],
            ),
            (1, lua(1), array(&[0, 0, 0]), 0, &[Err(lost), Err(won)]),
        ],
    )
}

/// `watch`, one unit: both transactions interleaved, the second EXEC nil, then its retry
/// reads 0 and unwatches.
pub(crate) fn watch_retry() -> (StepState, StepTrail) {
    let won = ended(1, OutcomeResult::Reserved, Some(1), Some(0));
    let lost = ended(2, OutcomeResult::SoldOut, Some(0), None);
    played(
        1,
        &[watch(), watch()],
        &[
            (1, watch(), ok(), 1, &[Ok(get()), Ok(watch())]),
            (2, watch(), ok(), 1, &[Ok(get()), Ok(get())]),
            (1, get(), int(1), 1, &[Ok(exec()), Ok(get())]),
            (2, get(), int(1), 1, &[Ok(exec()), Ok(exec())]),
            (
                1,
                exec(),
                RedisReply::Array(vec![int(0)]),
                0,
                &[Err(won.clone()), Ok(exec())],
            ),
            (
                2,
                exec(),
                RedisReply::Nil,
                0,
                &[Err(won.clone()), Ok(watch())],
            ),
            (2, watch(), ok(), 0, &[Err(won.clone()), Ok(get())]),
            (2, get(), int(0), 0, &[Err(won.clone()), Ok(unwatch())]),
            (2, unwatch(), ok(), 0, &[Err(won), Err(lost)]),
        ],
    )
}

/// `decr_compensate`, one unit: buyer 2 takes the counter below zero and puts it back.
pub(crate) fn overshoot_and_undo() -> (StepState, StepTrail) {
    let won = ended(1, OutcomeResult::Reserved, Some(1), Some(0));
    let lost = ended(2, OutcomeResult::SoldOut, Some(0), None);
    played(
        1,
        &[decrby(1), decrby(1)],
        &[
            (1, decrby(1), int(0), 0, &[Err(won.clone()), Ok(decrby(1))]),
            (
                2,
                decrby(1),
                int(-1),
                -1,
                &[Err(won.clone()), Ok(incrby(1))],
            ),
            (2, incrby(1), int(0), 0, &[Err(won), Err(lost)]),
        ],
    )
}

/// Naive, `stock` units, two buyers who take turns: buyer 1 reads and takes, then buyer 2
/// reads what is left (and takes, if anything is).
pub(crate) fn naive_serial(stock: u32) -> (StepState, StepTrail) {
    let k = i64::from(stock);
    let r1 = ended(1, OutcomeResult::Reserved, Some(k), Some(k - 1));
    if stock >= 2 {
        let r2 = ended(2, OutcomeResult::Reserved, Some(k - 1), Some(k - 2));
        return played(
            stock,
            &[get(), get()],
            &[
                (1, get(), int(k), k, &[Ok(decrby(1)), Ok(get())]),
                (
                    1,
                    decrby(1),
                    int(k - 1),
                    k - 1,
                    &[Err(r1.clone()), Ok(get())],
                ),
                (
                    2,
                    get(),
                    int(k - 1),
                    k - 1,
                    &[Err(r1.clone()), Ok(decrby(1))],
                ),
                (2, decrby(1), int(k - 2), k - 2, &[Err(r1), Err(r2)]),
            ],
        );
    }
    let out = ended(2, OutcomeResult::SoldOut, Some(0), None);
    played(
        stock,
        &[get(), get()],
        &[
            (1, get(), int(1), 1, &[Ok(decrby(1)), Ok(get())]),
            (1, decrby(1), int(0), 0, &[Err(r1.clone()), Ok(get())]),
            (2, get(), int(0), 0, &[Err(r1), Err(out)]),
        ],
    )
}
