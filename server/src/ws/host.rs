//! The app's state as rooms see it: [`crate::rooms::Host`] for [`AppState`]. Here, not in
//! `state.rs`, because a sale is admitted like a run (`admit`), and `state` must not
//! depend on `ws`.

use std::sync::Arc;

use oversold_protocol::WireError;
use tokio_util::sync::CancellationToken;

use super::admit;
use crate::backends::Backends;
use crate::client::Caller;
use crate::rooms::{Host, Rooms, sale::Admitted};
use crate::state::AppState;

impl Host for AppState {
    fn backends(&self) -> &Backends {
        &self.backends
    }
    fn rooms(&self) -> &Rooms {
        &self.rooms
    }
    fn shutdown(&self) -> &CancellationToken {
        &self.shutdown
    }
    fn workshop(&self) -> &Arc<crate::workshop::service::Workshop> {
        &self.workshop
    }
    fn admit_sale(
        &self,
        caller: &Caller,
        app_servers: u32,
        extra: u32,
    ) -> Result<Admitted, WireError> {
        admit::permits_for_sale(self, caller, app_servers, extra)
            .map(|p| Admitted::new(Arc::new(p)))
    }
}
