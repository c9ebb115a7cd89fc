//! The checkout knobs as the form holds them: whole numbers a slider can move (each fraction
//! as a percent), how they go into a request, and how a filled-in config comes back into them.
//!
//! Ranges come from `hello.limits.checkout`; a value is clamped into its range as the visitor
//! types, as for the race's knobs. The rules that tie knobs together (the three fates add up
//! to at most 100 %, a hold must fit in a minute of real time) are the protocol's own
//! `RunRequest::validate`, which the form runs before sending (see [`problem`]).

use oversold_protocol::limits::{CheckoutLimits, FractionRange, Range};
use oversold_protocol::{CheckoutConfig, FailMode, RunRequest};

/// Every checkout knob of the next run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckoutKnobs {
    /// How long a hold lasts, shop ms.
    pub hold_ttl_ms: u32,
    /// Shop ms per real ms.
    pub time_scale: u32,
    /// Typical payment time, shop ms.
    pub pay_ms: u32,
    /// Buyers who walk away after reserving, %.
    pub abandon_pct: u32,
    /// Buyers whose card is declined, %.
    pub pay_fail_pct: u32,
    /// Buyers whose app server dies after reserving, %.
    pub crash_pct: u32,
    /// Buyers whose client resends the reserve request, %.
    pub retry_pct: u32,
    /// Distinct customers; `None` leaves it to the server (half the buyers, rounded up).
    pub customers: Option<u32>,
    /// Most units one customer may hold or have bought.
    pub per_customer_limit: u32,
    /// Refuse orders while Redis is unreachable, or take backorders.
    pub fail_mode: FailMode,
    /// End when the last buyer is done, without waiting for the last hold to expire.
    pub no_wait_expiry: bool,
    /// When the server pauses its own Redis, shop ms after the gate.
    pub outage_at_ms: u32,
    /// How long it stays paused, shop ms (0: no outage).
    pub outage_ms: u32,
}

/// A fraction's range as the form's percent range: `0.0..=1.0` is `0..=100`.
pub fn percent_range(f: FractionRange) -> Range {
    Range {
        min: percent(f.min),
        max: percent(f.max),
        default: percent(f.default),
    }
}

/// A fraction as a whole percent: `0.2` is `20`.
pub fn percent(fraction: f64) -> u32 {
    (fraction * 100.0).round().clamp(0.0, 100.0) as u32
}

/// A whole percent as the fraction the wire carries: `20` is `0.2`.
pub fn fraction(percent: u32) -> f64 {
    f64::from(percent) / 100.0
}

/// `customers`' range for a crowd of `buyers`: at most one customer per buyer.
pub fn customers_range(l: &CheckoutLimits, buyers: u32) -> Range {
    Range {
        max: buyers.clamp(l.customers.min, l.customers.max),
        default: buyers.div_ceil(2).max(l.customers.min),
        ..l.customers
    }
}

impl CheckoutKnobs {
    /// The defaults the server announced.
    pub fn defaults(l: &CheckoutLimits) -> Self {
        Self {
            hold_ttl_ms: l.hold_ttl_ms.default,
            time_scale: l.time_scale.default,
            pay_ms: l.pay_ms.default,
            abandon_pct: percent(l.abandon_fraction.default),
            pay_fail_pct: percent(l.pay_fail_fraction.default),
            crash_pct: percent(l.crash_fraction.default),
            retry_pct: percent(l.retry_fraction.default),
            customers: None,
            per_customer_limit: l.per_customer_limit.default,
            fail_mode: FailMode::default(),
            no_wait_expiry: false,
            outage_at_ms: l.outage_at_ms.default,
            outage_ms: l.outage_ms.default,
        }
    }

    /// Pull every knob inside `l` (and `customers` inside the crowd of `buyers`).
    pub fn clamped(self, l: &CheckoutLimits, buyers: u32) -> Self {
        let c = |v: u32, r: Range| v.clamp(r.min, r.max);
        let p = |v: u32, f: FractionRange| c(v, percent_range(f));
        Self {
            hold_ttl_ms: c(self.hold_ttl_ms, l.hold_ttl_ms),
            time_scale: c(self.time_scale, l.time_scale),
            pay_ms: c(self.pay_ms, l.pay_ms),
            abandon_pct: p(self.abandon_pct, l.abandon_fraction),
            pay_fail_pct: p(self.pay_fail_pct, l.pay_fail_fraction),
            crash_pct: p(self.crash_pct, l.crash_fraction),
            retry_pct: p(self.retry_pct, l.retry_fraction),
            customers: self.customers.map(|v| c(v, customers_range(l, buyers))),
            per_customer_limit: c(self.per_customer_limit, l.per_customer_limit),
            outage_at_ms: c(self.outage_at_ms, l.outage_at_ms),
            outage_ms: c(self.outage_ms, l.outage_ms),
            ..self
        }
    }

    /// Put these knobs into `r` (a checkout request for `buyers` buyers). Every knob is sent,
    /// so the run is what the form shows; the outage only when there is one.
    pub fn fill(&self, r: &mut RunRequest, buyers: u32) {
        r.hold_ttl_ms = Some(self.hold_ttl_ms);
        r.time_scale = Some(self.time_scale);
        r.pay_ms = Some(self.pay_ms);
        r.abandon_fraction = Some(fraction(self.abandon_pct));
        r.pay_fail_fraction = Some(fraction(self.pay_fail_pct));
        r.crash_fraction = Some(fraction(self.crash_pct));
        r.retry_fraction = Some(fraction(self.retry_pct));
        // A crowd shrunk below the customers asked for keeps one customer per buyer.
        r.customers = self.customers.map(|c| c.min(buyers.max(1)));
        r.per_customer_limit = Some(self.per_customer_limit);
        r.fail_mode = Some(self.fail_mode);
        r.no_wait_expiry = self.no_wait_expiry.then_some(true);
        if self.outage_ms > 0 {
            r.outage_at_ms = Some(self.outage_at_ms);
            r.outage_ms = Some(self.outage_ms);
        }
    }

    /// The knobs a filled-in config ran with (fractions rounded to whole percents).
    pub fn from_config(c: &CheckoutConfig) -> Self {
        Self {
            hold_ttl_ms: c.hold_ttl_ms,
            time_scale: c.time_scale,
            pay_ms: c.pay_ms,
            abandon_pct: percent(c.abandon_fraction),
            pay_fail_pct: percent(c.pay_fail_fraction),
            crash_pct: percent(c.crash_fraction),
            retry_pct: percent(c.retry_fraction),
            customers: Some(c.customers),
            per_customer_limit: c.per_customer_limit,
            fail_mode: c.fail_mode,
            no_wait_expiry: c.no_wait_expiry,
            outage_at_ms: c.outage_at_ms,
            outage_ms: c.outage_ms,
        }
    }
}

/// Put a filled-in config's checkout knobs into `r` exactly (fractions unrounded): what
/// "run it again" sends.
pub fn replay_fields(c: &CheckoutConfig, r: &mut RunRequest) {
    r.hold_ttl_ms = Some(c.hold_ttl_ms);
    r.time_scale = Some(c.time_scale);
    r.pay_ms = Some(c.pay_ms);
    r.abandon_fraction = Some(c.abandon_fraction);
    r.pay_fail_fraction = Some(c.pay_fail_fraction);
    r.crash_fraction = Some(c.crash_fraction);
    r.retry_fraction = Some(c.retry_fraction);
    r.customers = Some(c.customers);
    r.per_customer_limit = Some(c.per_customer_limit);
    r.fail_mode = Some(c.fail_mode);
    r.no_wait_expiry = c.no_wait_expiry.then_some(true);
    if c.outage_ms > 0 {
        r.outage_at_ms = Some(c.outage_at_ms);
        r.outage_ms = Some(c.outage_ms);
    }
}

/// What the server would refuse about `request`, in its own words (`None`: it would accept
/// it). The ranges are clamped as the visitor types; this catches the rules between knobs.
pub fn problem(request: &RunRequest) -> Option<String> {
    request.validate_compare(0).err().map(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use oversold_protocol::Scenario;
    use oversold_protocol::limits::CHECKOUT_LIMITS;

    fn request(k: &CheckoutKnobs, buyers: u32) -> RunRequest {
        let mut r = RunRequest {
            scenario: Some(Scenario::Checkout),
            buyers: Some(buyers),
            ..Default::default()
        };
        k.fill(&mut r, buyers);
        r
    }

    #[test]
    fn defaults_are_the_servers_and_percents_round_trip() {
        let k = CheckoutKnobs::defaults(&CHECKOUT_LIMITS);
        assert_eq!(
            (k.abandon_pct, k.pay_fail_pct, k.crash_pct, k.retry_pct),
            (20, 10, 10, 20)
        );
        assert_eq!(
            (k.hold_ttl_ms, k.time_scale, k.customers),
            (300_000, 20, None),
            "a five-minute hold lasts fifteen real seconds"
        );
        assert_eq!(percent_range(CHECKOUT_LIMITS.crash_fraction).max, 100);
        assert_eq!((fraction(20), percent(0.2), percent(0.333)), (0.2, 20, 33));
        // The server fills in exactly what the form shows.
        let c = request(&k, 50).validate_compare(1).unwrap();
        let filled = c.checkout().cloned().unwrap();
        assert_eq!(filled.abandon_fraction, 0.2);
        assert_eq!(filled.customers, 25, "left to the server: half the buyers");
        assert_eq!(CheckoutKnobs::from_config(&filled).abandon_pct, 20);
    }

    #[test]
    fn customers_follow_the_crowd_and_the_outage_is_sent_only_when_there_is_one() {
        let mut k = CheckoutKnobs::defaults(&CHECKOUT_LIMITS);
        k.customers = Some(40);
        let r = request(&k, 10);
        assert_eq!(r.customers, Some(10), "one customer per buyer at most");
        assert_eq!((r.outage_ms, r.outage_at_ms), (None, None));
        assert_eq!(k.clamped(&CHECKOUT_LIMITS, 10).customers, Some(10));
        assert_eq!(customers_range(&CHECKOUT_LIMITS, 7).default, 4);
        k.outage_ms = 50_000;
        k.outage_at_ms = 1_000;
        let r = request(&k, 10);
        assert_eq!((r.outage_ms, r.outage_at_ms), (Some(50_000), Some(1_000)));
    }

    #[test]
    fn the_rules_between_knobs_are_the_servers_words() {
        let mut k = CheckoutKnobs::defaults(&CHECKOUT_LIMITS);
        assert_eq!(problem(&request(&k, 50)), None);
        k.abandon_pct = 60;
        k.crash_pct = 50;
        let why = problem(&request(&k, 50)).unwrap();
        assert!(why.contains("each buyer has one fate"), "{why}");
        k = CheckoutKnobs::defaults(&CHECKOUT_LIMITS);
        k.time_scale = 1;
        let why = problem(&request(&k, 50)).unwrap();
        assert!(why.starts_with("hold_ttl_ms is out of range"), "{why}");
    }

    #[test]
    fn a_replay_sends_the_config_exactly() {
        let mut c = request(&CheckoutKnobs::defaults(&CHECKOUT_LIMITS), 50)
            .validate_compare(3)
            .unwrap()
            .checkout()
            .cloned()
            .unwrap();
        c.abandon_fraction = 0.123;
        c.no_wait_expiry = true;
        let mut r = RunRequest {
            scenario: Some(Scenario::Checkout),
            ..Default::default()
        };
        replay_fields(&c, &mut r);
        assert_eq!(r.validate_compare(9).unwrap().checkout(), Some(&c));
    }
}
