//! The run knobs as the form holds them, and how sliders map onto their ranges.
//!
//! Ranges come from `hello.limits`; the page clamps what a visitor types, so a request the
//! server would refuse as out of range is never sent in the first place. The scenario switch
//! and the checkout's own knobs live here too ([`CheckoutKnobs`]); a race sends none of them.

use oversold_protocol::limits::{LIMITS, Limits, Range};
use oversold_protocol::{
    EvictionPolicy, Hello, Knobs as ScenarioKnobs, RunConfig, RunRequest, Scenario,
};

use super::checkout::knobs::{self, CheckoutKnobs};

/// Slider positions run from 0 to this; the value is looked up on a log scale.
pub const SLIDER_STEPS: u32 = 1_000;

/// Every knob of the next run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knobs {
    /// Units in stock.
    pub stock: u32,
    /// Simultaneous buyers.
    pub buyers: u32,
    /// Units per order, or the top of the range when `random_qty` is set.
    pub qty: u32,
    /// Each buyer orders a random 1 to `qty` units.
    pub random_qty: bool,
    /// App servers (Redis connections) the buyers share.
    pub app_servers: u32,
    /// Window over which buyers arrive, ms.
    pub arrival_spread_ms: u32,
    /// Work between reading the stock and writing it, ms.
    pub race_window_ms: u32,
    /// The race, or the checkout after it: which run buttons the page offers.
    pub scenario: Scenario,
    /// The checkout's knobs (sent only in the checkout scenario).
    pub checkout: CheckoutKnobs,
    /// The cart and warehouse knobs (sent only in their scenarios).
    pub cart: CartKnobs,
    /// The eviction scenario's `maxmemory-policy` (sent only in that scenario).
    pub policy: EvictionPolicy,
}

/// The `cart` and `warehouses` knobs as the form holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CartKnobs {
    /// SKUs in the catalogue.
    pub skus: u32,
    /// Most lines per cart (sent at most `skus`).
    pub max_lines: u32,
    /// Warehouses.
    pub warehouses: u32,
    /// May an order be split over warehouses?
    pub split: bool,
}

impl CartKnobs {
    fn defaults(l: &oversold_protocol::limits::CartLimits) -> Self {
        CartKnobs {
            skus: l.skus.default,
            max_lines: l.skus.default,
            warehouses: l.warehouses.default,
            split: false,
        }
    }

    /// Put this scenario's knobs into `r` (and none of the other's).
    fn fill(&self, scenario: Scenario, r: &mut RunRequest) {
        match scenario {
            Scenario::Cart => {
                r.skus = Some(self.skus);
                r.max_lines = Some(self.max_lines.min(self.skus));
            }
            Scenario::Warehouses => {
                r.warehouses = Some(self.warehouses);
                r.split = Some(self.split);
            }
            Scenario::Race
            | Scenario::Checkout
            | Scenario::BusyScript
            | Scenario::Durability
            | Scenario::Eviction
            | Scenario::Failover => {}
        }
    }
}

impl Knobs {
    /// Switch to `scenario`. Where Redis fails, the failure happens at moments within the
    /// arrival spread (and a crash needs stock left when it comes), so those scenarios bring
    /// the protocol's own defaults for the spread (and, for a crash, the stock) into the form:
    /// what the form shows is what runs.
    pub fn enter(&mut self, scenario: Scenario) {
        use oversold_protocol::{busy, durability, eviction, failover};
        self.scenario = scenario;
        let spread = match scenario {
            Scenario::BusyScript => busy::DEFAULT_SPREAD_MS,
            Scenario::Durability => durability::DEFAULT_SPREAD_MS,
            Scenario::Eviction => eviction::DEFAULT_SPREAD_MS,
            Scenario::Failover => failover::DEFAULT_SPREAD_MS,
            _ => return,
        };
        self.arrival_spread_ms = spread;
        if scenario == Scenario::Durability {
            self.stock = self.stock.max(durability::DEFAULT_STOCK);
        }
    }
}

impl Default for Knobs {
    fn default() -> Self {
        Self::defaults(&LIMITS)
    }
}

impl Knobs {
    /// The defaults the server announced.
    pub fn defaults(limits: &Limits) -> Self {
        Self {
            stock: limits.stock.default,
            buyers: limits.buyers.default,
            qty: limits.qty.default,
            random_qty: false,
            app_servers: limits.app_servers.default,
            arrival_spread_ms: limits.arrival_spread_ms.default,
            race_window_ms: limits.race_window_ms.default,
            scenario: Scenario::Race,
            checkout: CheckoutKnobs::defaults(&limits.checkout),
            cart: CartKnobs::defaults(&limits.cart),
            policy: EvictionPolicy::default(),
        }
    }

    /// The form as a server that said `hello` accepts it: every knob within its limits, and
    /// no outage unless this server may pause its Redis (it would refuse the run otherwise).
    pub fn for_server(self, hello: &Hello) -> Self {
        let mut k = self.clamped(&hello.limits);
        if !hello.outage_allowed {
            k.checkout.outage_ms = 0;
            k.checkout.outage_at_ms = 0;
        }
        k
    }

    /// Pull every knob inside `limits` (a server may announce tighter ranges than we assumed).
    pub fn clamped(self, limits: &Limits) -> Self {
        let c = |v: u32, r: Range| v.clamp(r.min, r.max);
        let buyers = c(self.buyers, limits.buyers);
        Self {
            stock: c(self.stock, limits.stock),
            buyers,
            qty: c(self.qty, limits.qty),
            random_qty: self.random_qty,
            app_servers: c(self.app_servers, limits.app_servers),
            arrival_spread_ms: c(self.arrival_spread_ms, limits.arrival_spread_ms),
            race_window_ms: c(self.race_window_ms, limits.race_window_ms),
            scenario: self.scenario,
            checkout: self.checkout.clamped(&limits.checkout, buyers),
            cart: CartKnobs {
                skus: c(self.cart.skus, limits.cart.skus),
                max_lines: c(self.cart.max_lines, limits.cart.skus),
                warehouses: c(self.cart.warehouses, limits.cart.warehouses),
                split: self.cart.split,
            },
            policy: self.policy,
        }
    }

    /// The `start_run` config for `strategy`. Every field is sent, so the run is what the form shows.
    pub fn run_request(&self, strategy: &str) -> RunRequest {
        RunRequest {
            strategy: Some(strategy.to_string()),
            ..self.compare_request()
        }
    }

    /// The `start_compare` config: the same knobs and no strategy (the server refuses one,
    /// since a comparison races them all).
    pub fn compare_request(&self) -> RunRequest {
        // "1 to 1" is just 1: send it as a fixed quantity rather than a pointless random range.
        let random = self.random_qty && self.qty > 1;
        let mut r = RunRequest {
            strategy: None,
            stock: Some(self.stock),
            buyers: Some(self.buyers),
            qty: if random { None } else { Some(self.qty) },
            max_qty: if random { Some(self.qty) } else { None },
            app_servers: Some(self.app_servers),
            arrival_spread_ms: Some(self.arrival_spread_ms),
            race_window_ms: Some(self.race_window_ms),
            seed: None,
            ..Default::default()
        };
        // A race sends exactly what it always did: no scenario, no checkout knob.
        if self.scenario == Scenario::Checkout {
            r.scenario = Some(Scenario::Checkout);
            self.checkout.fill(&mut r, self.buyers);
        }
        if matches!(self.scenario, Scenario::Cart | Scenario::Warehouses) {
            r.scenario = Some(self.scenario);
            self.cart.fill(self.scenario, &mut r);
        }
        // Where Redis fails: the scenario, and eviction's one knob, its policy.
        if matches!(
            self.scenario,
            Scenario::BusyScript | Scenario::Durability | Scenario::Eviction | Scenario::Failover
        ) {
            r.scenario = Some(self.scenario);
        }
        if self.scenario == Scenario::Eviction {
            r.policy = Some(self.policy);
        }
        r
    }

    /// What the server would refuse about the next run, in its words; `None` when it would
    /// accept it. Only rules between knobs can fail here: each knob is clamped as it is typed.
    pub fn problem(&self) -> Option<String> {
        knobs::problem(&self.compare_request())
    }
}

/// The `start_run` that races `config` again exactly: same strategy, knobs and seed, so the
/// same crowd (quantities, arrivals, app servers). The interleaving is still Redis's.
pub fn replay_request(config: &RunConfig) -> RunRequest {
    let r = &config.race;
    let mut request = RunRequest {
        strategy: Some(config.strategy.clone()),
        stock: Some(r.stock),
        buyers: Some(r.buyers),
        qty: Some(r.qty),
        max_qty: r.max_qty,
        app_servers: Some(r.app_servers),
        arrival_spread_ms: Some(r.arrival_spread_ms),
        race_window_ms: Some(r.race_window_ms),
        seed: Some(r.seed),
        ..Default::default()
    };
    if let Some(c) = r.checkout() {
        request.scenario = Some(Scenario::Checkout);
        knobs::replay_fields(c, &mut request);
    }
    if let Some(c) = r.cart() {
        request.scenario = Some(Scenario::Cart);
        (request.skus, request.max_lines) = (Some(c.skus), Some(c.max_lines));
    }
    if let Some(w) = r.warehouses() {
        request.scenario = Some(Scenario::Warehouses);
        (request.warehouses, request.split) = (Some(w.warehouses), Some(w.split));
    }
    let scenario = r.scenario();
    if matches!(
        scenario,
        Scenario::BusyScript | Scenario::Durability | Scenario::Eviction | Scenario::Failover
    ) {
        request.scenario = Some(scenario);
        if let ScenarioKnobs::Eviction(e) = r.knobs {
            request.policy = Some(e.policy);
        }
    }
    request
}

/// Parse what a visitor typed, clamped into `range`; `None` when it is not a number at all.
pub fn parse_clamped(text: &str, range: Range) -> Option<u32> {
    let text = text.trim().replace(['_', ',', ' '], "");
    let value: i64 = text.parse().ok()?;
    Some(value.clamp(i64::from(range.min), i64::from(range.max)) as u32)
}

/// The value at slider position `pos` (0..=[`SLIDER_STEPS`]) on a log scale over `range`.
///
/// Linear sliders up to 10,000 make 10 and 50 impossible to hit; on a log scale 1, 10, 100,
/// 1,000 and 10,000 sit evenly apart. Position 0 is always `range.min` (which may be 0).
pub fn slider_value(pos: u32, range: Range) -> u32 {
    let pos = pos.min(SLIDER_STEPS);
    if pos == 0 {
        return range.min;
    }
    let lo = f64::from(range.min.max(1));
    let hi = f64::from(range.max.max(1));
    let t = f64::from(pos) / f64::from(SLIDER_STEPS);
    let raw = lo * (hi / lo).powf(t);
    round_nicely(raw).clamp(range.min, range.max)
}

/// The slider position closest to `value`; the inverse of [`slider_value`].
pub fn slider_position(value: u32, range: Range) -> u32 {
    if value <= range.min.max(1) && value <= range.min {
        return 0;
    }
    let lo = f64::from(range.min.max(1));
    let hi = f64::from(range.max.max(1));
    if hi <= lo {
        return SLIDER_STEPS;
    }
    let t = (f64::from(value.max(1)) / lo).ln() / (hi / lo).ln();
    (t * f64::from(SLIDER_STEPS))
        .round()
        .clamp(1.0, f64::from(SLIDER_STEPS)) as u32
}

/// Round to two significant figures, so dragging lands on 50, 120 or 2,500, not 2,473.
fn round_nicely(raw: f64) -> u32 {
    if raw < 100.0 {
        return raw.round() as u32;
    }
    let magnitude = 10f64.powi(raw.log10().floor() as i32 - 1);
    ((raw / magnitude).round() * magnitude) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_brief() {
        let k = Knobs::default();
        assert_eq!((k.stock, k.buyers, k.qty, k.random_qty), (10, 50, 1, false));
    }

    #[test]
    fn a_failure_scenario_brings_its_spread_and_a_crash_its_stock() {
        let mut k = Knobs {
            arrival_spread_ms: 0,
            ..Knobs::default()
        };
        k.enter(Scenario::Failover);
        assert_eq!(
            k.arrival_spread_ms,
            oversold_protocol::failover::DEFAULT_SPREAD_MS
        );
        k.enter(Scenario::Durability);
        assert_eq!(k.stock, oversold_protocol::durability::DEFAULT_STOCK);
        let spread = k.arrival_spread_ms;
        k.enter(Scenario::Race);
        assert_eq!((k.scenario, k.arrival_spread_ms), (Scenario::Race, spread));
    }

    #[test]
    fn request_sends_fixed_or_random_quantity() {
        let mut k = Knobs::default();
        let r = k.run_request("naive");
        assert_eq!(
            (r.strategy.as_deref(), r.stock, r.buyers, r.qty, r.max_qty),
            (Some("naive"), Some(10), Some(50), Some(1), None)
        );
        k.random_qty = true;
        k.qty = 2;
        let r = k.run_request("lua");
        assert_eq!((r.qty, r.max_qty), (None, Some(2)));
        // The server accepts what we send.
        assert!(r.validate(1).is_ok());
        k.qty = 1;
        assert_eq!(k.run_request("lua").max_qty, None);
    }

    #[test]
    fn a_comparison_names_no_strategy() {
        let r = Knobs::default().compare_request();
        assert_eq!(r.strategy, None);
        // The server refuses a strategy in `start_compare`; this one it accepts.
        assert!(r.validate_compare(1).is_ok());
        assert_eq!(
            RunRequest {
                strategy: None,
                ..Knobs::default().run_request("lua")
            },
            r
        );
    }

    #[test]
    fn a_replay_asks_for_exactly_the_same_run() {
        let mut c = Knobs::default()
            .run_request("naive")
            .validate(42)
            .expect("valid");
        assert_eq!(replay_request(&c).validate(7), Ok(c.clone()));
        c.race.max_qty = Some(5);
        assert_eq!(replay_request(&c).validate(7), Ok(c));
    }

    #[test]
    fn a_checkout_sends_its_knobs_and_a_race_none_of_them() {
        let mut k = Knobs::default();
        assert_eq!(k.compare_request().scenario, None);
        assert_eq!(k.compare_request().hold_ttl_ms, None);
        k.scenario = Scenario::Checkout;
        let r = k.run_request("holds");
        assert_eq!(r.scenario, Some(Scenario::Checkout));
        assert_eq!((r.time_scale, r.crash_fraction), (Some(20), Some(0.1)));
        let c = r
            .validate(5)
            .expect("the server accepts what the form sends");
        assert_eq!(replay_request(&c).validate(6), Ok(c));
        assert_eq!(k.problem(), None);
        k.checkout.crash_pct = 95;
        assert!(k.problem().unwrap().contains("one fate"));
    }

    #[test]
    fn a_server_that_does_not_own_its_redis_gets_no_outage() {
        let mut k = Knobs::default();
        k.checkout.outage_ms = 10_000;
        k.checkout.outage_at_ms = 5_000;
        k.checkout.hold_ttl_ms = 99_999_999;
        let mut hello = crate::model::fixtures::hello();
        let kept = k.for_server(&hello);
        assert_eq!(
            (kept.checkout.outage_ms, kept.checkout.outage_at_ms),
            (0, 0)
        );
        assert_eq!(
            kept.checkout.hold_ttl_ms, 3_600_000,
            "clamped into hello's range"
        );
        hello.outage_allowed = true;
        assert_eq!(k.for_server(&hello).checkout.outage_ms, 10_000);
    }

    #[test]
    fn clamps_typed_values() {
        let r = LIMITS.buyers;
        assert_eq!(parse_clamped("250", r), Some(250));
        assert_eq!(parse_clamped(" 10,000 ", r), Some(10_000));
        assert_eq!(parse_clamped("99999", r), Some(10_000));
        assert_eq!(parse_clamped("-3", r), Some(1));
        assert_eq!(parse_clamped("lots", r), None);
        let k = Knobs {
            buyers: 50_000,
            stock: 0,
            ..Knobs::default()
        }
        .clamped(&LIMITS);
        assert_eq!((k.buyers, k.stock), (10_000, 0));
    }

    #[test]
    fn log_slider_spans_the_range_and_round_trips() {
        let r = LIMITS.buyers; // 1..=10_000
        assert_eq!(slider_value(0, r), 1);
        assert_eq!(slider_value(SLIDER_STEPS, r), 10_000);
        assert_eq!(slider_value(500, r), 100);
        for v in [1, 10, 50, 100, 1_000, 10_000] {
            let back = slider_value(slider_position(v, r), r);
            assert!(
                back.abs_diff(v) * 50 <= v.max(50),
                "{v} came back as {back}"
            );
        }
        // Ranges starting at 0 (milliseconds) keep 0 at the far left.
        let ms = LIMITS.race_window_ms;
        assert_eq!(slider_value(0, ms), 0);
        assert_eq!(slider_position(0, ms), 0);
        assert_eq!(slider_value(SLIDER_STEPS, ms), 5_000);
        assert!(slider_value(1, ms) >= 1);
    }
}
