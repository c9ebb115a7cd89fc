//! A run's knobs in the page's address and back: the link a teacher pastes into a chat.
//!
//! `?strategy=naive&stock=10&buyers=50&qty=1&app_servers=8&arrival_spread_ms=0&race_window_ms=0&seed=3`
//! (plus `max_qty` when each buyer orders a random quantity). A checkout adds
//! `scenario=checkout` and its knobs (`hold_ttl_ms`, `time_scale`, …, fractions as decimals,
//! the outage only when there is one). The names are the protocol's own
//! (`RunRequest::FIELDS`), so a link reads like the `start_run` it replays.
//!
//! Reading a link follows the protocol's rule: a value out of range is an error, never a clamp,
//! and so is a flag that is neither `true` nor `false`, or a cart's `max_lines` above its
//! `skus` (the protocol's own check). Each bad value is reported in words (the server's own
//! sentence, [`ConfigError`]'s), the form keeps its default for that knob, and the link is not
//! offered for replay: a crowd with one knob changed is not the same crowd.

use oversold_protocol::Knobs as ScenarioKnobs;
use oversold_protocol::limits::{CheckoutLimits, FractionRange, Limits, Range};
use oversold_protocol::{
    CartConfig, CheckoutConfig, ConfigError, EvictionPolicy, FailMode, FieldKind, RaceConfig,
    RunConfig, RunRequest, Scenario, StrategyInfo, WarehouseConfig,
};

use super::checkout::knobs::{CheckoutKnobs, customers_range};
use super::controls::{CartKnobs, Knobs};
use super::strategies;

/// The query string (without `?`) that stands for `config`.
pub fn encode(config: &RunConfig) -> String {
    let r = &config.race;
    let mut q = format!(
        "strategy={}&stock={}&buyers={}&qty={}",
        escape(&config.strategy),
        r.stock,
        r.buyers,
        r.qty
    );
    if let Some(m) = r.max_qty {
        q.push_str(&format!("&max_qty={m}"));
    }
    q.push_str(&format!(
        "&app_servers={}&arrival_spread_ms={}&race_window_ms={}&seed={}",
        r.app_servers, r.arrival_spread_ms, r.race_window_ms, r.seed
    ));
    if let Some(c) = r.checkout() {
        q.push_str(&checkout_query(c));
    }
    if let Some(c) = r.cart() {
        q.push_str(&format!(
            "&scenario=cart&skus={}&max_lines={}",
            c.skus, c.max_lines
        ));
    }
    if let Some(w) = r.warehouses() {
        q.push_str(&format!(
            "&scenario=warehouses&warehouses={}&split={}",
            w.warehouses, w.split
        ));
    }
    // The scenarios where Redis fails carry no knobs of the page's own but eviction's policy.
    let scenario = r.scenario();
    if matches!(
        scenario,
        Scenario::BusyScript | Scenario::Durability | Scenario::Eviction | Scenario::Failover
    ) {
        q.push_str("&scenario=");
        q.push_str(scenario.as_str());
    }
    if let ScenarioKnobs::Eviction(e) = r.knobs {
        q.push_str("&policy=");
        q.push_str(e.policy.as_str());
    }
    q
}

/// A checkout's part of the query, after the race's knobs.
fn checkout_query(c: &CheckoutConfig) -> String {
    let mut q = format!(
        "&scenario=checkout&hold_ttl_ms={}&time_scale={}&pay_ms={}&abandon_fraction={}\
         &pay_fail_fraction={}&crash_fraction={}&retry_fraction={}&customers={}\
         &per_customer_limit={}&fail_mode={}",
        c.hold_ttl_ms,
        c.time_scale,
        c.pay_ms,
        c.abandon_fraction,
        c.pay_fail_fraction,
        c.crash_fraction,
        c.retry_fraction,
        c.customers,
        c.per_customer_limit,
        c.fail_mode
    );
    if c.no_wait_expiry {
        q.push_str("&no_wait_expiry=true");
    }
    if c.outage_ms > 0 {
        q.push_str(&format!(
            "&outage_at_ms={}&outage_ms={}",
            c.outage_at_ms, c.outage_ms
        ));
    }
    q
}

/// What a link restores.
#[derive(Debug, Clone, PartialEq)]
pub struct Restored {
    /// The form, with every valid value from the link (defaults for the rest).
    pub knobs: Knobs,
    /// The exact run to replay: only when the link names a strategy this server offers, a
    /// seed, and nothing out of range.
    pub replay: Option<RunConfig>,
    /// One sentence per value the link got wrong.
    pub problems: Vec<String>,
}

/// Read a query string (with or without its `?`) against the server's `limits` and
/// `strategies`; `None` when it names no knob at all (a plain visit).
pub fn restore(query: &str, limits: &Limits, infos: &[StrategyInfo]) -> Option<Restored> {
    let mut link = Link {
        pairs: pairs(query),
        problems: Vec::new(),
    };
    if !RunRequest::FIELDS.iter().any(|f| link.get(f).is_some()) {
        return None;
    }
    // Read in a fixed order (the race, then the scenario's own knobs, then seed and strategy),
    // so a link's problems are always listed the same way.
    let scenario = link.scenario();
    let race = link.race(limits);
    let (cart, cart_config) = link.cart(limits, scenario);
    // The checkout's knobs, read only when the link asks for a checkout.
    let checkout =
        (scenario == Scenario::Checkout).then(|| link.checkout(&limits.checkout, race.buyers));
    let seed = link.seed();
    let strategy = link.strategy(infos, scenario);
    let policy = link.policy(scenario);
    let knobs = Knobs {
        policy,
        cart,
        stock: race.stock,
        buyers: race.buyers,
        qty: race.max_qty.unwrap_or(race.qty),
        random_qty: race.max_qty.is_some(),
        app_servers: race.app_servers,
        arrival_spread_ms: race.arrival_spread_ms,
        race_window_ms: race.race_window_ms,
        scenario,
        checkout: link.checkout_knobs(checkout.as_ref(), &limits.checkout),
    };
    if let Some(c) = &checkout {
        link.check_between(c, knobs.buyers);
    }
    // Every read has run by now, so `problems` is complete.
    let replay = match (strategy, seed) {
        (Some(strategy), Some(seed)) if link.problems.is_empty() => {
            Some(race_config(&knobs, &race, seed, checkout, cart_config).with_strategy(strategy))
        }
        _ => None,
    };
    Some(Restored {
        knobs,
        replay,
        problems: link.problems,
    })
}

/// The race's knobs as a link gives them, each one it lacks (or gets wrong) at its default.
struct RaceKnobs {
    stock: u32,
    buyers: u32,
    /// The fixed quantity each buyer orders.
    qty: u32,
    /// Present when each buyer orders a random quantity up to it.
    max_qty: Option<u32>,
    app_servers: u32,
    arrival_spread_ms: u32,
    race_window_ms: u32,
}

/// The exact race a valid link replays: the form's knobs, with the quantities as the link
/// wrote them and the scenario's own config (a cart's as the protocol filled it in).
fn race_config(
    knobs: &Knobs,
    race: &RaceKnobs,
    seed: u64,
    checkout: Option<CheckoutConfig>,
    cart_config: Option<CartConfig>,
) -> RaceConfig {
    let (scenario, cart) = (knobs.scenario, knobs.cart);
    RaceConfig {
        stock: knobs.stock,
        buyers: knobs.buyers,
        qty: race.qty,
        max_qty: race.max_qty,
        app_servers: knobs.app_servers,
        arrival_spread_ms: knobs.arrival_spread_ms,
        race_window_ms: knobs.race_window_ms,
        seed,
        knobs: match (scenario, checkout, cart_config) {
            (Scenario::Checkout, Some(c), _) => ScenarioKnobs::Checkout(c),
            (Scenario::Cart, _, Some(c)) => ScenarioKnobs::Cart(c),
            (Scenario::Warehouses, _, _) => ScenarioKnobs::Warehouses(WarehouseConfig {
                warehouses: cart.warehouses,
                split: cart.split,
            }),
            (Scenario::BusyScript, _, _) => ScenarioKnobs::BusyScript,
            (Scenario::Durability, _, _) => ScenarioKnobs::Durability,
            (Scenario::Failover, _, _) => ScenarioKnobs::Failover,
            (Scenario::Eviction, _, _) => {
                ScenarioKnobs::Eviction(oversold_protocol::EvictionConfig {
                    policy: knobs.policy,
                })
            }
            // A valid link always brings its scenario's config; a race has none.
            _ => ScenarioKnobs::Race,
        },
    }
}

/// A link being read: its pairs, and one sentence per value it got wrong so far. Each read
/// returns `None` for a value that is missing or wrong (the form keeps its default).
struct Link {
    pairs: Vec<(String, String)>,
    problems: Vec<String>,
}

impl Link {
    /// The value of `key`, as written (decoded).
    fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The race, unless the link names another scenario.
    fn scenario(&mut self) -> Scenario {
        match self.get("scenario").map(str::trim) {
            None | Some("race") => Scenario::Race,
            Some("checkout") => Scenario::Checkout,
            Some("cart") => Scenario::Cart,
            Some("warehouses") => Scenario::Warehouses,
            Some("busy_script") => Scenario::BusyScript,
            Some("durability") => Scenario::Durability,
            Some("eviction") => Scenario::Eviction,
            Some("failover") => Scenario::Failover,
            Some(other) => {
                let why = format!(
                    "The link's scenario = {other:?} is none of race, checkout, cart, warehouses, busy_script, durability, eviction or failover; the form keeps the race."
                );
                self.problems.push(why);
                Scenario::Race
            }
        }
    }

    /// Eviction's `policy`, read only in that scenario; the default when missing or wrong.
    fn policy(&mut self, scenario: Scenario) -> EvictionPolicy {
        if scenario != Scenario::Eviction {
            return EvictionPolicy::default();
        }
        match self
            .get("policy")
            .map(|p| p.trim().parse::<EvictionPolicy>())
        {
            None => EvictionPolicy::default(),
            Some(Ok(policy)) => policy,
            Some(Err(why)) => {
                let default = EvictionPolicy::default();
                self.problems
                    .push(format!("The link's {why}; the form keeps {default}."));
                default
            }
        }
    }

    /// A whole-number knob within `range`.
    fn knob(&mut self, field: &'static str, range: Range) -> Option<u32> {
        let text = self.get(field)?.trim().to_string();
        let why = match text.parse::<u64>() {
            Ok(value) if value >= u64::from(range.min) && value <= u64::from(range.max) => {
                return Some(value as u32);
            }
            Ok(value) => format!(
                "The link's {}; the form keeps {}.",
                ConfigError::OutOfRange {
                    field,
                    value,
                    range
                },
                range.default
            ),
            Err(_) => format!(
                "The link's {field} = {text:?} is not a whole number; the form keeps {}.",
                range.default
            ),
        };
        self.problems.push(why);
        None
    }

    /// A fraction knob within `range`.
    fn fraction(&mut self, field: &'static str, range: FractionRange) -> Option<f64> {
        let text = self.get(field)?.trim().to_string();
        // serde_json's number parser, which the page already carries, rather than
        // `str::parse::<f64>`, which would add core's own to the wasm.
        let why = match serde_json::from_str::<f64>(&text) {
            Ok(v) if v >= range.min && v <= range.max => return Some(v),
            Ok(v) => format!(
                "The link's {}; the form keeps {}.",
                ConfigError::FractionOutOfRange { field, value: v },
                range.default
            ),
            Err(_) => format!(
                "The link's {field} = {text:?} is not a number; the form keeps {}.",
                range.default
            ),
        };
        self.problems.push(why);
        None
    }

    /// The race's knobs, in the order the form lists them.
    fn race(&mut self, limits: &Limits) -> RaceKnobs {
        let stock = self.knob("stock", limits.stock);
        let buyers = self.knob("buyers", limits.buyers);
        let qty = self.knob("qty", limits.qty);
        let max_qty = self.knob("max_qty", limits.qty);
        let app_servers = self.knob("app_servers", limits.app_servers);
        let spread = self.knob("arrival_spread_ms", limits.arrival_spread_ms);
        let window = self.knob("race_window_ms", limits.race_window_ms);
        RaceKnobs {
            stock: stock.unwrap_or(limits.stock.default),
            buyers: buyers.unwrap_or(limits.buyers.default),
            qty: qty.unwrap_or(limits.qty.default),
            max_qty,
            app_servers: app_servers.unwrap_or(limits.app_servers.default),
            arrival_spread_ms: spread.unwrap_or(limits.arrival_spread_ms.default),
            race_window_ms: window.unwrap_or(limits.race_window_ms.default),
        }
    }

    /// The cart and warehouse knobs (kept in the form whatever the scenario), and in a cart
    /// link the cart's config as the protocol fills it in. `max_lines` must also be at most
    /// `skus`: the protocol's own check says so, in its words, and the form then takes
    /// `skus` (what the protocol gives a cart that names no `max_lines`).
    fn cart(&mut self, limits: &Limits, scenario: Scenario) -> (CartKnobs, Option<CartConfig>) {
        let defaults = Knobs::defaults(limits).cart;
        let skus = self.knob("skus", limits.cart.skus);
        let max_lines = self.knob("max_lines", limits.cart.skus);
        let mut knobs = CartKnobs {
            skus: skus.unwrap_or(defaults.skus),
            max_lines: max_lines.unwrap_or(defaults.max_lines),
            warehouses: self
                .knob("warehouses", limits.cart.warehouses)
                .unwrap_or(defaults.warehouses),
            split: self.flag("split").unwrap_or(false),
        };
        if scenario != Scenario::Cart {
            return (knobs, None);
        }
        let request = RunRequest {
            scenario: Some(Scenario::Cart),
            skus: Some(knobs.skus),
            max_lines,
            ..Default::default()
        };
        match request.validate_compare(0) {
            Ok(race) => {
                knobs.max_lines = race.cart().map_or(knobs.skus, |c| c.max_lines);
                (knobs, race.cart())
            }
            Err(e) => {
                self.problems
                    .push(format!("The link's {e}; the form takes {}.", knobs.skus));
                knobs.max_lines = knobs.skus;
                (knobs, None)
            }
        }
    }

    /// A flag (`true` or `false`, as the protocol takes it); anything else is reported and
    /// the form keeps `false`.
    fn flag(&mut self, field: &'static str) -> Option<bool> {
        let text = self.get(field)?.trim().to_string();
        match text.as_str() {
            "true" => Some(true),
            "false" => Some(false),
            _ => {
                self.problems.push(format!(
                    "The link's {field} = {text:?} is not {}; the form keeps false.",
                    FieldKind::Flag.expected()
                ));
                None
            }
        }
    }

    /// The checkout's knobs, each from the link or its default.
    fn checkout(&mut self, l: &CheckoutLimits, buyers: u32) -> CheckoutConfig {
        let d = CheckoutKnobs::defaults(l);
        let hold_ttl_ms = self.knob("hold_ttl_ms", l.hold_ttl_ms);
        let time_scale = self.knob("time_scale", l.time_scale);
        let pay_ms = self.knob("pay_ms", l.pay_ms);
        let customers = self.knob("customers", customers_range(l, buyers));
        let per_customer_limit = self.knob("per_customer_limit", l.per_customer_limit);
        let outage_at_ms = self.knob("outage_at_ms", l.outage_at_ms);
        let outage_ms = self.knob("outage_ms", l.outage_ms);
        let abandon = self.fraction("abandon_fraction", l.abandon_fraction);
        let pay_fail = self.fraction("pay_fail_fraction", l.pay_fail_fraction);
        let crash = self.fraction("crash_fraction", l.crash_fraction);
        let retry = self.fraction("retry_fraction", l.retry_fraction);
        let fail_mode = self.fail_mode();
        CheckoutConfig {
            hold_ttl_ms: hold_ttl_ms.unwrap_or(d.hold_ttl_ms),
            time_scale: time_scale.unwrap_or(d.time_scale),
            pay_ms: pay_ms.unwrap_or(d.pay_ms),
            abandon_fraction: abandon.unwrap_or(l.abandon_fraction.default),
            pay_fail_fraction: pay_fail.unwrap_or(l.pay_fail_fraction.default),
            crash_fraction: crash.unwrap_or(l.crash_fraction.default),
            retry_fraction: retry.unwrap_or(l.retry_fraction.default),
            customers: customers.unwrap_or(customers_range(l, buyers).default),
            per_customer_limit: per_customer_limit.unwrap_or(d.per_customer_limit),
            fail_mode: fail_mode.unwrap_or_default(),
            no_wait_expiry: self.flag("no_wait_expiry").unwrap_or(false),
            outage_at_ms: outage_at_ms.unwrap_or(0),
            outage_ms: outage_ms.unwrap_or(0),
        }
    }

    /// The form's checkout knobs: the link's `checkout` when it asked for one (its customers
    /// left to the server unless the link names them), else the defaults.
    fn checkout_knobs(
        &self,
        checkout: Option<&CheckoutConfig>,
        l: &CheckoutLimits,
    ) -> CheckoutKnobs {
        checkout.map_or(CheckoutKnobs::defaults(l), |c| CheckoutKnobs {
            // Left to the server unless the link says: half the buyers.
            customers: self.get("customers").and(Some(c.customers)),
            ..CheckoutKnobs::from_config(c)
        })
    }

    /// Closed or open, for a checkout's outage.
    fn fail_mode(&mut self) -> Option<FailMode> {
        match self.get("fail_mode")?.trim().parse::<FailMode>() {
            Ok(mode) => Some(mode),
            Err(why) => {
                self.problems
                    .push(format!("The link's {why}; the form keeps closed."));
                None
            }
        }
    }

    /// The seed that makes the run the same run.
    fn seed(&mut self) -> Option<u64> {
        let text = self.get("seed")?.trim().to_string();
        match text.parse::<u64>() {
            Ok(seed) => Some(seed),
            Err(_) => {
                let why = format!(
                    "The link's seed = {text:?} is not a whole number from 0 to {}; a run gets a fresh seed.",
                    u64::MAX
                );
                self.problems.push(why);
                None
            }
        }
    }

    /// The strategy, when this server offers it for the link's scenario.
    fn strategy(&mut self, infos: &[StrategyInfo], scenario: Scenario) -> Option<String> {
        let name = self.get("strategy")?.to_string();
        // Names repeat across scenarios (`lua` races, and fails over): the link's scenario
        // says which one it means.
        if strategies::find_in(infos, scenario, &name).is_some() {
            return Some(name);
        }
        let why = match strategies::find(infos, &name) {
            Some(s) => format!(
                "The link names the strategy {name:?}, which races in the {} scenario, not the {scenario}.",
                s.about.scenario
            ),
            None => {
                format!("The link names the strategy {name:?}, which this server does not offer.")
            }
        };
        self.problems.push(why);
        None
    }

    /// Knobs each in range can still break a rule between them (the fates add up to more than
    /// one, a hold too long for its time scale): the server's own check says which.
    fn check_between(&mut self, c: &CheckoutConfig, buyers: u32) {
        let mut request = RunRequest {
            buyers: Some(buyers),
            scenario: Some(Scenario::Checkout),
            ..Default::default()
        };
        super::checkout::knobs::replay_fields(c, &mut request);
        if let Err(e) = request.validate_compare(0) {
            self.problems.push(format!("The link's {e}."));
        }
    }
}

/// `key=value` pairs of a query string, percent-decoded, in order.
fn pairs(query: &str) -> Vec<(String, String)> {
    query
        .trim_start_matches('?')
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (unescape(k), unescape(v))
        })
        .collect()
}

/// Percent-encode everything but unreserved characters (strategy names are `[a-z_]` today; a
/// future one must not break the link).
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Undo [`escape`] (and a form's `+` for a space); a broken escape stays as typed.
fn unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(hi), Some(lo)) => {
                    out.push(hi << 4 | lo);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    char::from(b).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixtures::{config, strategies};
    use oversold_protocol::limits::LIMITS;

    #[test]
    fn a_run_round_trips_through_its_link() {
        let mut c = config(10, 50);
        c.race.seed = u64::MAX;
        let q = encode(&c);
        assert_eq!(
            q,
            "strategy=naive&stock=10&buyers=50&qty=1&app_servers=8&arrival_spread_ms=0&race_window_ms=0&seed=18446744073709551615"
        );
        let r = restore(&format!("?{q}"), &LIMITS, &strategies()).unwrap();
        assert_eq!(r.replay.as_ref(), Some(&c));
        assert!(r.problems.is_empty());
        assert_eq!(r.knobs, Knobs::default());

        // Random quantities: the knob holds the top of the range, the replay both fields.
        c.race.max_qty = Some(4);
        c.race.stock = 0;
        c.race.race_window_ms = 5_000;
        c.strategy = "lua".into();
        let r = restore(&encode(&c), &LIMITS, &strategies()).unwrap();
        assert_eq!(r.replay, Some(c));
        assert_eq!(
            (r.knobs.qty, r.knobs.random_qty, r.knobs.stock),
            (4, true, 0)
        );
        assert_eq!(r.knobs.race_window_ms, 5_000);
    }

    #[test]
    fn an_evictions_policy_rides_in_its_link_and_only_there() {
        let mut c = config(10, 50);
        c.race.knobs = ScenarioKnobs::Eviction(oversold_protocol::EvictionConfig {
            policy: EvictionPolicy::Noeviction,
        });
        let q = encode(&c);
        assert!(q.ends_with("&scenario=eviction&policy=noeviction"), "{q}");
        // (The fixtures' strategies are the race's: leave the strategy out.)
        let q = q.replace("strategy=naive&", "");
        let r = restore(&q, &LIMITS, &strategies()).unwrap();
        assert_eq!(r.knobs.policy, EvictionPolicy::Noeviction);
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        // A wrong policy is said in words and the form keeps the default.
        let r = restore("scenario=eviction&policy=lfu", &LIMITS, &strategies()).unwrap();
        assert_eq!(r.knobs.policy, EvictionPolicy::AllkeysLru);
        assert_eq!(
            r.problems,
            [
                "The link's unknown policy \"lfu\": allkeys-lru, volatile-lru or noeviction; the form keeps allkeys-lru."
            ]
        );
        // Outside the eviction scenario, a policy means nothing and is not read.
        let r = restore("stock=5&policy=lfu", &LIMITS, &strategies()).unwrap();
        assert!(r.problems.is_empty());
    }

    #[test]
    fn out_of_range_is_reported_in_the_protocols_words_never_clamped() {
        let r = restore(
            "strategy=naive&buyers=20000&stock=-1&qty=0&seed=3",
            &LIMITS,
            &strategies(),
        )
        .unwrap();
        assert_eq!(
            r.problems,
            [
                "The link's stock = \"-1\" is not a whole number; the form keeps 10.",
                "The link's buyers = 20000 is out of range: it must be between 1 and 10000; the form keeps 50.",
                "The link's qty = 0 is out of range: it must be between 1 and 100; the form keeps 1.",
            ]
        );
        // The defaults, not the nearest valid value; and no replay of a crowd it cannot repeat.
        assert_eq!((r.knobs.buyers, r.knobs.stock, r.knobs.qty), (50, 10, 1));
        assert_eq!(r.replay, None);
        // A value past u32 is still reported with the number as written.
        let r = restore("buyers=99999999999", &LIMITS, &strategies()).unwrap();
        assert!(r.problems[0].contains("buyers = 99999999999 is out of range"));
    }

    #[test]
    fn the_servers_limits_decide_not_ours() {
        let mut tight = LIMITS;
        tight.buyers.max = 100;
        let r = restore("buyers=500&strategy=lua&seed=1", &tight, &strategies()).unwrap();
        assert_eq!(
            r.problems,
            [
                "The link's buyers = 500 is out of range: it must be between 1 and 100; the form keeps 50."
            ]
        );
        assert_eq!(r.replay, None);
    }

    #[test]
    fn a_link_replays_a_strategy_of_its_own_scenario_when_names_repeat() {
        // `lua` races, and runs out of memory: the eviction's own `lua` is listed after the race's.
        let mut infos = strategies();
        let mut evicting = strategies::find(&infos, "lua").unwrap().clone();
        evicting.about.scenario = Scenario::Eviction;
        infos.push(evicting);
        let r = restore(
            "strategy=lua&scenario=eviction&policy=allkeys-lru&arrival_spread_ms=1000&seed=3",
            &LIMITS,
            &infos,
        )
        .unwrap();
        assert_eq!(r.problems, Vec::<String>::new());
        let replay = r.replay.expect("the eviction's lua, replayed");
        assert_eq!(
            (replay.strategy.as_str(), replay.race.scenario()),
            ("lua", Scenario::Eviction)
        );
        // A scenario that does not list the name is still refused, and says where it races.
        let r = restore("strategy=naive&scenario=eviction&seed=3", &LIMITS, &infos).unwrap();
        assert_eq!(r.replay, None);
        assert!(
            r.problems[0].contains("races in the race scenario"),
            "{:?}",
            r.problems
        );
    }

    #[test]
    fn strategy_and_seed_must_be_real_to_replay() {
        let r = restore("strategy=teleport&seed=3", &LIMITS, &strategies()).unwrap();
        assert_eq!(
            r.problems,
            ["The link names the strategy \"teleport\", which this server does not offer."]
        );
        let r = restore("strategy=lua&seed=soon", &LIMITS, &strategies()).unwrap();
        assert_eq!(r.problems.len(), 1);
        assert!(r.problems[0].starts_with("The link's seed = \"soon\""));
        // Knobs without a seed restore the form, with nothing to replay.
        let r = restore("strategy=lua&stock=3", &LIMITS, &strategies()).unwrap();
        assert!(r.problems.is_empty());
        assert_eq!((r.knobs.stock, r.replay), (3, None));
    }

    #[test]
    fn a_checkout_round_trips_through_its_link_with_its_knobs() {
        use crate::model::checkout::fixtures::{checkout_config, checkout_strategies};
        let infos: Vec<StrategyInfo> = strategies()
            .into_iter()
            .chain(checkout_strategies())
            .collect();
        let mut c = checkout_config(10, 50);
        let k = c.race.checkout_mut().unwrap();
        k.abandon_fraction = 0.35;
        k.time_scale = 1_000;
        k.fail_mode = FailMode::Open;
        k.no_wait_expiry = true;
        k.outage_ms = 20_000;
        k.outage_at_ms = 5_000;
        let q = encode(&c);
        assert!(
            q.ends_with(
                "&seed=7&scenario=checkout&hold_ttl_ms=300000&time_scale=1000&pay_ms=60000\
                 &abandon_fraction=0.35&pay_fail_fraction=0.1&crash_fraction=0.1&retry_fraction=0.2\
                 &customers=25&per_customer_limit=1&fail_mode=open&no_wait_expiry=true\
                 &outage_at_ms=5000&outage_ms=20000"
            ),
            "{q}"
        );
        let r = restore(&q, &LIMITS, &infos).unwrap();
        assert_eq!(r.problems, Vec::<String>::new());
        assert_eq!(r.replay.as_ref(), Some(&c));
        assert_eq!(r.knobs.scenario, Scenario::Checkout);
        assert_eq!(
            (r.knobs.checkout.abandon_pct, r.knobs.checkout.customers),
            (35, Some(25))
        );
        // A race link stays exactly what it was.
        assert!(!encode(&config(10, 50)).contains("scenario"));
    }

    #[test]
    fn a_checkout_link_is_checked_knob_by_knob_and_across_knobs() {
        use crate::model::checkout::fixtures::checkout_strategies;
        let infos: Vec<StrategyInfo> = strategies()
            .into_iter()
            .chain(checkout_strategies())
            .collect();
        let r = restore(
            "strategy=holds&seed=1&scenario=checkout&crash_fraction=1.5&fail_mode=ajar&time_scale=0",
            &LIMITS,
            &infos,
        )
        .unwrap();
        assert_eq!(
            r.problems,
            [
                "The link's time_scale = 0 is out of range: it must be between 1 and 100000; the form keeps 20.",
                "The link's crash_fraction = 1.5 is out of range: it must be between 0.0 and 1.0; the form keeps 0.1.",
                "The link's unknown fail mode \"ajar\": closed or open; the form keeps closed.",
            ]
        );
        assert_eq!(r.replay, None);
        // Each fraction in range, together more than one fate per buyer: the server's words.
        let r = restore(
            "strategy=holds&seed=1&scenario=checkout&abandon_fraction=0.6&crash_fraction=0.6",
            &LIMITS,
            &infos,
        )
        .unwrap();
        assert_eq!(r.problems.len(), 1);
        assert!(
            r.problems[0].contains("each buyer has one fate"),
            "{:?}",
            r.problems
        );
        // A checkout strategy in a race link, and a scenario that does not exist.
        let r = restore("strategy=holds&seed=1", &LIMITS, &infos).unwrap();
        assert_eq!(
            r.problems,
            [
                "The link names the strategy \"holds\", which races in the checkout scenario, not the race."
            ]
        );
        let r = restore("scenario=party", &LIMITS, &infos).unwrap();
        assert!(r.problems[0].starts_with("The link's scenario = \"party\""));
        assert_eq!(r.knobs.scenario, Scenario::Race);
    }

    #[test]
    fn a_plain_visit_restores_nothing_and_escapes_round_trip() {
        assert_eq!(restore("", &LIMITS, &strategies()), None);
        assert_eq!(restore("?utm_source=talk", &LIMITS, &strategies()), None);
        assert_eq!(escape("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
        assert_eq!(unescape("a%20b%26c%3Dd%2F%C3%A9"), "a b&c=d/é");
        assert_eq!(unescape("50%"), "50%");
        assert_eq!(unescape("%zz+1"), "%zz 1");
        let r = restore("strategy=%6Cua&seed=%33", &LIMITS, &strategies()).unwrap();
        assert_eq!(
            r.replay.map(|c| (c.strategy, c.race.seed)),
            Some(("lua".into(), 3))
        );
    }

    #[test]
    fn a_bad_cart_or_warehouse_link_is_an_error_in_the_protocols_words() {
        let mut saga = strategies().remove(0);
        saga.about.name = oversold_protocol::text("saga");
        saga.about.scenario = Scenario::Cart;
        let infos = [saga];
        // More lines than SKUs: the protocol's own check, not a clamp.
        let r = restore(
            "strategy=saga&seed=9&scenario=cart&skus=3&max_lines=5",
            &LIMITS,
            &infos,
        )
        .unwrap();
        assert_eq!(
            r.problems,
            [
                "The link's max_lines = 5 is out of range: a cart's lines are distinct SKUs, so it must be at most skus = 3; the form takes 3."
            ]
        );
        assert_eq!(r.replay, None, "not the crowd the link was made from");
        assert_eq!((r.knobs.cart.skus, r.knobs.cart.max_lines), (3, 3));
        // A split that is neither true nor false is said, not dropped.
        let r = restore(
            "scenario=warehouses&warehouses=4&split=yes&no_wait_expiry=1",
            &LIMITS,
            &infos,
        )
        .unwrap();
        assert_eq!(
            r.problems,
            ["The link's split = \"yes\" is not true or false; the form keeps false."]
        );
        assert!(!r.knobs.cart.split);
        // The same link made right replays, its cart as the protocol fills it in.
        let r = restore(
            "strategy=saga&seed=9&scenario=cart&skus=3&max_lines=2",
            &LIMITS,
            &infos,
        )
        .unwrap();
        assert_eq!(r.problems, Vec::<String>::new());
        let cart = r.replay.and_then(|c| c.race.cart());
        assert_eq!(
            cart,
            Some(CartConfig {
                skus: 3,
                max_lines: 2
            })
        );
        // No max_lines: the protocol's default, every SKU.
        let r = restore("strategy=saga&seed=9&scenario=cart&skus=5", &LIMITS, &infos).unwrap();
        assert_eq!(r.knobs.cart.max_lines, 5);
        assert_eq!(
            r.replay.and_then(|c| c.race.cart()),
            Some(CartConfig {
                skus: 5,
                max_lines: 5
            })
        );
    }

    #[test]
    fn a_cart_or_warehouse_link_carries_its_scenario_and_knobs() {
        for (scenario, extra) in [
            (Scenario::Cart, "skus=5&max_lines=2"),
            (Scenario::Warehouses, "warehouses=4&split=true"),
        ] {
            let config = RunRequest {
                strategy: Some("saga".into()),
                scenario: Some(scenario),
                seed: Some(9),
                skus: (scenario == Scenario::Cart).then_some(5),
                max_lines: (scenario == Scenario::Cart).then_some(2),
                warehouses: (scenario == Scenario::Warehouses).then_some(4),
                split: (scenario == Scenario::Warehouses).then_some(true),
                ..Default::default()
            }
            .validate(0)
            .unwrap();
            let q = encode(&config);
            assert!(q.contains(&format!("scenario={scenario}&{extra}")), "{q}");
            let restored = restore(&q, &LIMITS, &[]).unwrap();
            assert_eq!(restored.knobs.scenario, scenario);
            assert_eq!(
                restored.knobs.cart.skus,
                if scenario == Scenario::Cart { 5 } else { 3 }
            );
            assert_eq!(restored.knobs.cart.split, scenario == Scenario::Warehouses);
        }
    }
}
