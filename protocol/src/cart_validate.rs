//! Checking the `cart` and `warehouses` knobs: each only in its own scenario, each in range.

use crate::RunRequest;
use crate::cart::{CartConfig, WarehouseConfig};
use crate::checkout::Scenario;
use crate::config::Knobs;
use crate::limits::{CART_LIMITS, Range};
use crate::validate::{ConfigError, check};

impl RunRequest {
    /// Refuse a knob that belongs to a scenario other than `scenario`. (The checkout knobs
    /// in a `race` keep their own, older error.)
    pub(crate) fn only_this_scenario(&self, scenario: Scenario) -> Result<(), ConfigError> {
        let owned: [(&'static str, bool, Scenario); 5] = [
            ("skus", self.skus.is_some(), Scenario::Cart),
            ("max_lines", self.max_lines.is_some(), Scenario::Cart),
            (
                "warehouses",
                self.warehouses.is_some(),
                Scenario::Warehouses,
            ),
            ("split", self.split.is_some(), Scenario::Warehouses),
            ("policy", self.policy.is_some(), Scenario::Eviction),
        ];
        if let Some((field, _, belongs_to)) = owned
            .into_iter()
            .find(|(_, sent, owner)| *sent && *owner != scenario)
        {
            return Err(ConfigError::OtherScenario { field, belongs_to });
        }
        if matches!(
            scenario,
            Scenario::Cart
                | Scenario::Warehouses
                | Scenario::BusyScript
                | Scenario::Durability
                | Scenario::Eviction
                | Scenario::Failover
        ) && let Some(field) = self.checkout_field_sent()
        {
            return Err(ConfigError::OtherScenario {
                field,
                belongs_to: Scenario::Checkout,
            });
        }
        Ok(())
    }

    /// The `cart` or `warehouses` knobs, defaults filled in and ranges checked (the other
    /// scenarios have none of these: [`Knobs::Race`]).
    pub(crate) fn multi_key(&self, scenario: Scenario) -> Result<Knobs, ConfigError> {
        let l = CART_LIMITS;
        Ok(match scenario {
            Scenario::Cart => {
                let skus = check("skus", self.skus, l.skus)?;
                let lines = Range {
                    default: skus,
                    ..l.skus
                };
                let max_lines = check("max_lines", self.max_lines, lines)?;
                if max_lines > skus {
                    return Err(ConfigError::MoreLinesThanSkus { max_lines, skus });
                }
                Knobs::Cart(CartConfig { skus, max_lines })
            }
            Scenario::Warehouses => Knobs::Warehouses(WarehouseConfig {
                warehouses: check("warehouses", self.warehouses, l.warehouses)?,
                split: self.split.unwrap_or(false),
            }),
            Scenario::Race
            | Scenario::Checkout
            | Scenario::BusyScript
            | Scenario::Durability
            | Scenario::Eviction
            | Scenario::Failover => Knobs::Race,
        })
    }
}
