//! `function`: the same check-and-decrement as `lua`, as a Redis Function (Redis 7.0+).
//!
//! `lua/reserve_function.lua` registers `oversold_reserve` in a library named `oversold`.
//! [`Strategy::prepare`] loads it once per run with `FUNCTION LOAD REPLACE`; each buyer then
//! sends one `FCALL`. Redis runs a function the way it runs a script, start to finish on
//! its command thread, so nothing can land between the read and the decrement.
//!
//! The difference from EVALSHA is operational: the library is part of the dataset. It
//! survives `SCRIPT FLUSH`, is replicated and persisted, and is called by name rather than
//! by digest. `FUNCTION FLUSH` (or a restart without persistence) does remove it: a buyer
//! that hears "Function not found" loads the library again and retries once.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use super::{Attempt, Order, Strategy};
use crate::store::{self, Conn, ReserveReply, StoreError};

/// The Redis Function strategy.
pub struct Function;

fn attempt(reply: ReserveReply, round_trips: u32) -> Attempt {
    if reply.reserved {
        Attempt::reserved(Some(reply.before), reply.after, round_trips)
    } else {
        Attempt::sold_out(Some(reply.before), round_trips)
    }
}

impl Strategy for Function {
    fn name(&self) -> &'static str {
        "function"
    }
    fn label(&self) -> &'static str {
        "Redis Function (FCALL)"
    }
    fn description(&self) -> &'static str {
        "One FCALL to a function loaded with FUNCTION LOAD: atomic like Lua, but the code lives in Redis by name."
    }

    fn prepare<'a>(&'a self, admin: &'a mut Conn) -> BoxFuture<'a, Result<(), StoreError>> {
        store::load_functions(admin).boxed()
    }

    fn buy<'a>(&'a self, order: Order<'a>) -> BoxFuture<'a, Attempt> {
        async move {
            let mut conn = match order.shared_redis() {
                Ok(c) => c,
                Err(a) => return a,
            };
            let Order { keys, qty, .. } = order;
            match store::reserve_function(&mut conn, keys, qty).await {
                Ok(r) => return attempt(r, 1),
                Err(e) if e.is_function_missing() => {}
                Err(e) => return Attempt::failed(e.short(), None, 1),
            }
            // The library was flushed mid-run: load it again (REPLACE makes concurrent
            // reloads harmless) and try once more.
            if let Err(e) = store::load_functions(&mut conn).await {
                return Attempt::failed(e.short(), None, 2).with_retries(1);
            }
            match store::reserve_function(&mut conn, keys, qty).await {
                Ok(r) => attempt(r, 3).with_retries(1),
                Err(e) => Attempt::failed(e.short(), None, 3).with_retries(1),
            }
        }
        .boxed()
    }
}
