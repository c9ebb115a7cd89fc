//! `function`: the same check-and-decrement as `lua`, as a Redis Function (Redis 7.0+).
//!
//! `lua/reserve_function.lua` registers `oversold_v2_reserve` in a library named
//! `oversold_v2`. Preparing a run makes sure the library is loaded (never replacing a library
//! of that name that someone else wrote); each buyer then sends one `FCALL`. Redis runs a
//! function the way it runs a script, start to finish on its command thread, so nothing can
//! land between the read and the decrement.
//!
//! The difference from EVALSHA is operational: the library is part of the dataset. It
//! survives `SCRIPT FLUSH`, is replicated and persisted, and is called by name rather than
//! by digest. `FUNCTION FLUSH` (or a restart without persistence) does remove it: a buyer
//! that hears "Function not found" loads the library again and retries; if a flush beats
//! that too, it runs the same check-and-decrement as `reserve.lua` by `EVAL`, which no flush
//! can refuse. Either way the buyer gets an answer.

use std::borrow::Cow;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use oversold_protocol::{
    Category, Explanation, Scenario, ScriptCall, StrategyAbout, TapeRule, Tone, step, text,
};

use super::{Attempt, Backend, Order, PrepareError, RedisBuyer, Strategy};
use crate::store::functions::{self, LoadError};
use crate::store::stock::{self, ReserveReply};
use crate::store::{RedisConn, RunKeys};

/// The Redis Function strategy.
pub const STRATEGY: Strategy = Strategy {
    about: StrategyAbout {
        name: text("function"),
        label: text("Redis Function (FCALL)"),
        short_label: text("Function"),
        description: text(
            "One FCALL to a function loaded with FUNCTION LOAD: atomic like Lua, but the code lives in Redis by name.",
        ),
        unsafe_by_design: false,
        category: Category::Atomic,
        featured: false,
        scripts: Cow::Borrowed(&[text("reserve_function.lua")]),
        explanation: Explanation {
            title: text("Why a Redis Function cannot oversell"),
            how: text(
                "The same check-and-decrement as the Lua script, registered once with FUNCTION LOAD and called by name with one FCALL.",
            ),
            why: text(
                "Redis runs a function exactly as it runs a script: start to finish on its command thread, nothing in between. \
                 The last unit goes to one buyer; the rest read 0.",
            ),
            cost: text(
                "One round trip, like EVALSHA. The difference is operational: the library lives in the dataset, survives SCRIPT \
                 FLUSH and is replicated, but FUNCTION FLUSH removes it and callers must load it again.",
            ),
            steps: Cow::Borrowed(&[
                step(
                    "buyer #7",
                    "FCALL oversold_v2_reserve 1 stock 1 → {1, 1, 0}",
                    "took the last unit",
                    Tone::A,
                ),
                step(
                    "buyer #12",
                    "FCALL oversold_v2_reserve 1 stock 1 → {0, 0, 0}",
                    "refused",
                    Tone::B,
                ),
            ]),
        },
        tape: TapeRule::AtomicCall {
            call: ScriptCall::Fcall,
        },
        scenario: Scenario::Race,
    },
    backend: Backend::SharedRedis(&Function),
};

struct Function;

fn attempt(reply: ReserveReply, round_trips: u32, retries: u32) -> Attempt {
    let a = if reply.reserved {
        Attempt::reserved(Some(reply.before), reply.after, round_trips)
    } else {
        Attempt::sold_out(Some(reply.before), round_trips)
    };
    a.with_retries(retries)
}

fn load_error(e: LoadError) -> PrepareError {
    match e {
        LoadError::Store(e) => PrepareError::Store(e),
        refused @ (LoadError::Foreign | LoadError::KeptVanishing) => {
            PrepareError::Refused(refused.to_string())
        }
    }
}

impl RedisBuyer for Function {
    fn prepare<'a>(&'a self, admin: &'a mut RedisConn) -> BoxFuture<'a, Result<(), PrepareError>> {
        async move { functions::load(admin).await.result.map_err(load_error) }.boxed()
    }

    fn buy<'a>(&'a self, mut conn: RedisConn, order: Order<'a, RunKeys>) -> BoxFuture<'a, Attempt> {
        async move {
            let (keys, qty) = (order.shelf, order.qty);
            match functions::reserve(&mut conn, keys, qty).await {
                Ok(r) => return attempt(r, 1, 0),
                Err(e) if functions::is_missing(&e) => {}
                Err(e) => return Attempt::write_failed(&e, None, 1),
            }
            // The library was flushed mid-run: load it again and try once more.
            let loaded = functions::load(&mut conn).await;
            let mut sent = 1 + loaded.round_trips;
            match loaded.result {
                Ok(()) => {
                    sent += 1;
                    match functions::reserve(&mut conn, keys, qty).await {
                        Ok(r) => return attempt(r, sent, 1),
                        Err(e) if functions::is_missing(&e) => {}
                        Err(e) => return Attempt::write_failed(&e, None, sent).with_retries(1),
                    }
                }
                // Loading a foreign library is refused; anything else is Redis failing.
                Err(LoadError::Foreign | LoadError::KeptVanishing) => {}
                Err(LoadError::Store(e)) => {
                    return Attempt::read_failed(&e, None, sent).with_retries(1);
                }
            }
            // Flushed again before our FCALL (or the name is taken): the same contract by EVAL.
            match stock::reserve(&mut conn, keys.stock_key(), qty).await {
                Ok(c) => attempt(c.reply, sent + c.round_trips, 2),
                Err(f) => {
                    Attempt::write_failed(&f.error, None, sent + f.round_trips).with_retries(2)
                }
            }
        }
        .boxed()
    }
}
