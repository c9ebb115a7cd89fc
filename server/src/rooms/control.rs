//! The presenter's sale controls: `open_sale` (admission, then [`super::sale::open`]) and
//! `close_sale` (a `close` event to whichever process runs the sale). Each checks the
//! presenter token before anything else.

use std::sync::Arc;

use oversold_protocol::room;
use oversold_protocol::{ErrorCode, WireError};

use super::event::Event;
use super::sale::{self, Admitted, SaleRecord};
use super::seat::{Seat, room_keys};
use super::{Host, check_presenter, unavailable};
use crate::store::rooms as store;
use crate::strategy;

/// `open_sale`: the token, the config, the strategy, admission; then the sale opens.
pub async fn open_sale(
    state: &Arc<dyn Host>,
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
    let admitted = admit(state, config.app_servers)?;
    let hub = match seat.as_ref().filter(|s| s.hub.code == code) {
        Some(s) => s.hub.clone(),
        None => state.rooms().hub(code, &state.backends().redis).await?,
    };
    let _ = store::touch(&mut conn, &keys, state.rooms().ttl_s()).await;
    sale::open(state, hub, config, strategy, admitted).await
}

/// A run slot and the sale's connections, or `busy`/`resource_exhausted` now.
fn admit(state: &Arc<dyn Host>, app_servers: u32) -> Result<Admitted, WireError> {
    let run = state.run_slots().clone().try_acquire_owned().map_err(|_| {
        WireError::new(
            ErrorCode::Busy,
            "the server is running its maximum of races; try again in a moment",
        )
    })?;
    let wanted = (app_servers as usize + 2) * state.backends().redis.sockets_per_connection();
    let connections = state.connections().try_reserve(wanted).map_err(|short| {
        WireError::new(
            ErrorCode::ResourceExhausted,
            format!(
                "this sale needs {} connections and {} are free",
                short.wanted, short.free
            ),
        )
    })?;
    Ok(Admitted { run, connections })
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
