//! The presenter's sale controls: `open_sale` (admission, then [`super::sale::open`]) and
//! `close_sale` (a `close` event to whichever process runs the sale). Each checks the
//! presenter token before anything else.

use std::sync::Arc;

use oversold_protocol::room;
use oversold_protocol::{ErrorCode, WireError};

use super::event::Event;
use super::sale::{self, SaleRecord};
use super::seat::{Seat, room_keys};
use super::{Host, check_presenter, unavailable};
use crate::client::Caller;
use crate::store::rooms as store;
use crate::strategy;

/// `open_sale`: the token, the config, the strategy, admission; then the sale opens.
pub async fn open_sale(
    state: &Arc<dyn Host>,
    caller: &Caller,
    code: &str,
    token: &str,
    config: room::SaleConfig,
    seat: &Option<Seat>,
) -> Result<(), WireError> {
    let keys = room_keys(code)?;
    let mut conn = state.rooms().conn(&state.backends().redis).await?;
    check_presenter(&mut conn, &keys, token).await?;
    config
        .check()
        .map_err(|why| WireError::new(ErrorCode::OutOfRange, why))?;
    let strategy = strategy::find(&config.strategy).ok_or_else(|| {
        WireError::new(
            ErrorCode::UnknownStrategy,
            format!("no strategy is called {:?}", config.strategy),
        )
    })?;
    if !strategy.uses_redis() {
        return Err(WireError::new(
            ErrorCode::StrategyUnavailable,
            "a room's sale runs on Redis; pick a Redis strategy",
        ));
    }
    if let Some(why) = strategy.unavailable_reason(state.backends()) {
        return Err(WireError::new(ErrorCode::StrategyUnavailable, why));
    }
    let extra = strategy.extra_connections(config.app_servers);
    let admitted = state.admit_sale(caller, config.app_servers, extra)?;
    take_sale_budgets(&mut conn, caller, &config).await?;
    let hub = match seat.as_ref().filter(|s| s.hub.code == code) {
        Some(s) => s.hub.clone(),
        None => state.rooms().hub(code, &state.backends().redis).await?,
    };
    let _ = store::touch(&mut conn, &keys, state.rooms().ttl_s()).await;
    sale::open(state, hub, config, strategy, admitted).await
}

/// The sale's length and its bots, off the address's budgets (shared by every process).
async fn take_sale_budgets(
    conn: &mut crate::store::RedisConn,
    caller: &Caller,
    config: &room::SaleConfig,
) -> Result<(), WireError> {
    let addr = caller.addr.to_string();
    let sale_ms = (
        u64::from(config.duration_ms),
        super::SALE_MS_PER_WINDOW,
        super::SALE_WINDOW,
    );
    let key = store::address_budget(&addr, "sale-ms");
    super::take_address_budget(
        conn,
        &key,
        sale_ms,
        "this address has opened its share of sale time",
    )
    .await?;
    if config.bots > 0 {
        let bots = (
            u64::from(config.bots),
            super::BOTS_PER_WINDOW,
            super::SALE_WINDOW,
        );
        let key = store::address_budget(&addr, "bots");
        super::take_address_budget(conn, &key, bots, "this address has sent its share of bots")
            .await?;
    }
    Ok(())
}

/// `close_sale`: the token; then a `close` event for the process that runs the sale.
pub async fn close_sale(state: &Arc<dyn Host>, code: &str, token: &str) -> Result<(), WireError> {
    let keys = room_keys(code)?;
    let mut conn = state.rooms().conn(&state.backends().redis).await?;
    check_presenter(&mut conn, &keys, token).await?;
    let Some(json) = store::sale(&mut conn, &keys).await.map_err(unavailable)? else {
        return Err(WireError::new(ErrorCode::SaleState, "no sale is open"));
    };
    let record: SaleRecord = serde_json::from_str(&json)
        .map_err(|e| WireError::new(ErrorCode::SaleState, format!("unreadable sale: {e}")))?;
    state
        .rooms()
        .publish(
            &mut conn,
            &keys,
            &Event::Close {
                sale_id: record.sale_id,
            },
        )
        .await?;
    Ok(())
}
