//! Pins the JSON shape of the protocol, so a change to it is a visible, deliberate change.

use super::*;
use serde_json::json;

#[test]
fn start_run_with_only_a_strategy_parses() {
    let msg: ClientMessage =
        serde_json::from_value(json!({"type":"start_run","config":{"strategy":"lua"}})).unwrap();
    let ClientMessage::StartRun { config } = msg else {
        panic!("wrong variant")
    };
    let filled = config.validate(7).unwrap();
    assert_eq!(filled.strategy, "lua");
    assert_eq!(filled.race.stock, 10);
    assert_eq!(filled.race.buyers, 50);
    assert_eq!(filled.race.qty, 1);
    assert_eq!(filled.race.app_servers, 8);
    assert_eq!(filled.race.seed, 7);
}

#[test]
fn out_of_range_is_an_error_not_a_clamp() {
    let req = RunRequest {
        strategy: Some("lua".into()),
        buyers: Some(10_001),
        ..Default::default()
    };
    let err = req.validate(1).unwrap_err();
    assert!(matches!(
        err,
        ConfigError::OutOfRange {
            field: "buyers",
            value: 10_001,
            ..
        }
    ));
    assert!(err.to_string().contains("between 1 and 10000"), "{err}");
    let req = RunRequest {
        strategy: Some("lua".into()),
        qty: Some(0),
        ..Default::default()
    };
    assert!(req.validate(1).is_err());
    let req = RunRequest {
        strategy: Some("lua".into()),
        max_qty: Some(101),
        ..Default::default()
    };
    assert!(req.validate(1).is_err());
    let req = RunRequest::for_strategy(" ");
    assert_eq!(req.validate(1).unwrap_err(), ConfigError::MissingStrategy);
    assert_eq!(
        RunRequest::default().validate(1).unwrap_err(),
        ConfigError::MissingStrategy
    );
}

#[test]
fn a_wider_buyer_cap_is_for_races_only_and_never_past_a_million() {
    use crate::limits::{LIMITS, MAX_BUYERS, MAX_BUYERS_AT_SCALE};
    let wide = LIMITS.with_max_buyers(MAX_BUYERS_AT_SCALE);
    assert_eq!(wide.buyers.max, 1_000_000);
    assert_eq!(
        LIMITS.with_max_buyers(u32::MAX).buyers.max,
        MAX_BUYERS_AT_SCALE
    );
    assert_eq!(
        LIMITS.with_max_buyers(5).buyers.max,
        MAX_BUYERS,
        "never below today's cap"
    );
    let race = |buyers| RunRequest {
        strategy: Some("lua".into()),
        buyers: Some(buyers),
        ..Default::default()
    };
    assert_eq!(
        race(1_000_000)
            .validate_within(&wide, 1)
            .unwrap()
            .race
            .buyers,
        1_000_000
    );
    let past = race(1_000_001).validate_within(&wide, 1).unwrap_err();
    assert!(past.to_string().contains("between 1 and 1000000"), "{past}");
    // The default (a public server's) is unchanged.
    assert!(race(10_001).validate(1).is_err());
    // Every other scenario keeps the protocol's cap, whatever the server allows.
    let checkout = RunRequest {
        scenario: Some(Scenario::Checkout),
        ..race(10_001)
    };
    let err = checkout.validate_within(&wide, 1).unwrap_err();
    assert!(err.to_string().contains("between 1 and 10000"), "{err}");
    let compare = RunRequest {
        strategy: None,
        ..race(200_000)
    };
    assert_eq!(
        compare.validate_compare_within(&wide, 1).unwrap().buyers,
        200_000
    );
}

#[test]
fn unknown_config_fields_are_refused() {
    let bad = json!({"type":"start_run","config":{"strategy":"lua","stok":5}});
    assert!(serde_json::from_value::<ClientMessage>(bad).is_err());
}

#[test]
fn server_messages_are_tagged_by_type() {
    let msg = ServerMessage::Error(WireError {
        code: ErrorCode::OutOfRange,
        message: "nope".into(),
        run_id: None,
    });
    assert_eq!(
        serde_json::to_value(&msg).unwrap(),
        json!({"type":"error","code":"out_of_range","message":"nope"})
    );
    let msg = ServerMessage::RedisStatus {
        redis: RedisState::Down,
    };
    assert_eq!(
        serde_json::to_value(&msg).unwrap(),
        json!({"type":"redis_status","redis":"down"})
    );
}

#[test]
fn error_code_as_str_matches_serde() {
    for code in [
        ErrorCode::BadJson,
        ErrorCode::UnknownType,
        ErrorCode::MissingField,
        ErrorCode::BadMessage,
        ErrorCode::UnknownStrategy,
        ErrorCode::StrategyUnavailable,
        ErrorCode::OutOfRange,
        ErrorCode::RunInProgress,
        ErrorCode::Busy,
        ErrorCode::NoRunInProgress,
        ErrorCode::RedisUnavailable,
        ErrorCode::RunFailed,
        ErrorCode::RateLimited,
        ErrorCode::ResourceExhausted,
        ErrorCode::OutageNotAllowed,
        ErrorCode::NotPresenter,
        ErrorCode::NoSuchRoom,
        ErrorCode::NotInRoom,
        ErrorCode::SaleState,
        ErrorCode::AlreadyBought,
        ErrorCode::ChaosNotAllowed,
    ] {
        assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
    }
}

#[test]
fn outcome_round_trips() {
    let o = BuyerOutcome {
        buyer: 3,
        app_server: 2,
        qty: 1,
        observed_stock: Some(4),
        result: OutcomeResult::Reserved,
        error: None,
        stock_after: Some(3),
        latency_us: 120,
        start_us: 0,
        end_us: 120,
        read_us: None,
        round_trips: 2,
        retries: 0,
        bucket: None,
        node: None,
        checkout: None,
        cart: None,
        epoch: None,
    };
    let v = serde_json::to_value(&o).unwrap();
    assert_eq!(v["result"], "reserved");
    assert!(v.get("error").is_none());
    // Only sharded outcomes name a bucket; the others leave the field out.
    assert!(v.get("bucket").is_none());
    // Only outcomes from a Redis Cluster name the node that served them.
    assert!(v.get("node").is_none());
    assert_eq!(serde_json::from_value::<BuyerOutcome>(v).unwrap(), o);
    let sharded = BuyerOutcome {
        bucket: Some(2),
        node: Some("127.0.0.1:7001".into()),
        ..o
    };
    let v = serde_json::to_value(&sharded).unwrap();
    assert_eq!(v["bucket"], 2);
    assert_eq!(v["node"], "127.0.0.1:7001");
    // Only a run where Redis came back names the life of the counter; a key that did not
    // come back is a `null` start, not a missing one.
    assert!(v.get("epoch").is_none());
    assert_eq!(serde_json::from_value::<BuyerOutcome>(v).unwrap(), sharded);
    let after_a_crash = BuyerOutcome {
        epoch: Some(crate::Epoch {
            n: 1,
            began_at: None,
            evicted: false,
        }),
        ..sharded
    };
    let v = serde_json::to_value(&after_a_crash).unwrap();
    assert_eq!(v["epoch"], json!({"n": 1, "began_at": null}));
    assert_eq!(
        serde_json::from_value::<BuyerOutcome>(v).unwrap(),
        after_a_crash
    );
}

#[test]
fn start_compare_takes_no_strategy() {
    let msg: ClientMessage =
        serde_json::from_value(json!({"type":"start_compare","config":{"stock":5}})).unwrap();
    let ClientMessage::StartCompare { config } = msg else {
        panic!("wrong variant")
    };
    let race = config.validate_compare(3).unwrap();
    assert_eq!((race.stock, race.buyers, race.seed), (5, 50, 3));
    let named = RunRequest::for_strategy("lua");
    assert_eq!(
        named.validate_compare(3).unwrap_err(),
        ConfigError::StrategyNotAllowed
    );
}

#[test]
fn run_config_is_one_flat_object() {
    let config = RunRequest::for_strategy("naive").validate(9).unwrap();
    let v = serde_json::to_value(&config).unwrap();
    assert_eq!(v["strategy"], "naive");
    assert_eq!(v["stock"], 10);
    assert_eq!(v["seed"], 9);
    assert!(v.get("race").is_none());
    assert_eq!(serde_json::from_value::<RunConfig>(v).unwrap(), config);
}

#[test]
fn request_fields_are_exactly_what_serde_accepts() {
    // A request with every field set serializes to exactly FIELDS...
    let full = RunRequest {
        strategy: Some("lua".into()),
        stock: Some(1),
        buyers: Some(1),
        qty: Some(1),
        max_qty: Some(1),
        app_servers: Some(1),
        arrival_spread_ms: Some(1),
        race_window_ms: Some(1),
        seed: Some(1),
        scenario: Some(Scenario::Checkout),
        hold_ttl_ms: Some(1),
        time_scale: Some(1),
        pay_ms: Some(1),
        abandon_fraction: Some(0.5),
        pay_fail_fraction: Some(0.5),
        crash_fraction: Some(0.5),
        retry_fraction: Some(0.5),
        customers: Some(1),
        per_customer_limit: Some(1),
        fail_mode: Some(FailMode::Open),
        no_wait_expiry: Some(true),
        outage_at_ms: Some(1),
        outage_ms: Some(1),
        skus: Some(1),
        max_lines: Some(1),
        warehouses: Some(2),
        split: Some(true),
        policy: Some(crate::EvictionPolicy::Noeviction),
    };
    let v = serde_json::to_value(&full).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    let mut expected = RunRequest::FIELDS.to_vec();
    expected.sort_unstable();
    let mut keys = keys;
    keys.sort_unstable();
    assert_eq!(keys, expected);
    // ...and each of them alone is accepted.
    // ...and each of them alone is accepted, with a value of the JSON type its kind names.
    for field in RunRequest::FIELDS {
        let value = match RunRequest::field_kind(field).expect("every field has a kind") {
            FieldKind::Text => match field {
                "scenario" => json!("checkout"),
                "fail_mode" => json!("open"),
                "policy" => json!("volatile-lru"),
                _ => json!("lua"),
            },
            FieldKind::Whole32 | FieldKind::Whole64 => json!(1),
            FieldKind::Fraction => json!(0.25),
            FieldKind::Flag => json!(true),
        };
        let one = json!({ field: value });
        assert!(
            serde_json::from_value::<RunRequest>(one).is_ok(),
            "{field} refused"
        );
    }
    assert_eq!(RunRequest::field_kind("stok"), None);
}

#[test]
fn strategy_info_is_flat_and_round_trips() {
    const STEPS: &[Step] = &[step("buyer #7", "GET → 1", "fine", Tone::A)];
    let info = StrategyInfo {
        about: StrategyAbout {
            name: text("naive"),
            label: text("Naive (GET, then DECRBY)"),
            short_label: text("Naive"),
            description: text("Reads, then writes."),
            unsafe_by_design: true,
            category: Category::CheckThenWrite,
            featured: true,
            scripts: std::borrow::Cow::Borrowed(&[]),
            explanation: Explanation {
                title: text("Why"),
                how: text("How"),
                why: text("Because"),
                cost: text("Cost"),
                steps: std::borrow::Cow::Borrowed(STEPS),
            },
            tape: TapeRule::ReadThenDecrement {
                guard: Guard::Unguarded,
            },
            scenario: Scenario::Race,
        },
        available: true,
        unavailable_reason: None,
        step_refusal: None,
    };
    let v = serde_json::to_value(&info).unwrap();
    assert_eq!(v["name"], "naive");
    assert_eq!(v["category"], "check_then_write");
    assert_eq!(v["explanation"]["steps"][0]["tone"], "a");
    assert!(v.get("about").is_none());
    assert_eq!(
        v["tape"],
        json!({"kind": "read_then_decrement", "guard": "unguarded"})
    );
    assert_eq!(
        serde_json::from_value::<StrategyInfo>(v.clone()).unwrap(),
        info
    );

    // From text too, with the availability keys anywhere among the strategy's own, and a key
    // neither names skipped.
    let mut unavailable = info.clone();
    unavailable.available = false;
    unavailable.unavailable_reason = Some("needs PostgreSQL".into());
    unavailable.step_refusal = Some("one call".into());
    let mut object = serde_json::to_value(&unavailable).unwrap();
    object["from_the_future"] = json!({"nested": [1, 2]});
    let text = object.to_string();
    assert!(text.find("\"available\"") < text.find("\"tape\""), "{text}");
    assert_eq!(
        serde_json::from_str::<StrategyInfo>(&text).unwrap(),
        unavailable
    );
    // A saved run's strategy has no availability; as a `StrategyInfo` that is an error.
    let about = serde_json::to_string(&info.about).unwrap();
    assert_eq!(
        serde_json::from_str::<crate::AboutOnly>(&about).unwrap().0,
        info.about
    );
    let missing = serde_json::from_str::<StrategyInfo>(&about).unwrap_err();
    assert!(
        missing.to_string().contains("missing field `available`"),
        "{missing}"
    );
    let bad = text.replace("\"available\":false", "\"available\":\"no\"");
    assert!(serde_json::from_str::<StrategyInfo>(&bad).is_err());
}

#[test]
fn tape_rules_are_tagged_by_kind() {
    for (rule, wire) in [
        (TapeRule::ReadThenSet, json!({"kind": "read_then_set"})),
        (
            TapeRule::AtomicCall {
                call: ScriptCall::Fcall,
            },
            json!({"kind": "atomic_call", "call": "fcall"}),
        ),
        (
            TapeRule::AtomicPerBucket { buckets: 4 },
            json!({"kind": "atomic_per_bucket", "buckets": 4}),
        ),
        (
            TapeRule::DecrementThenUndo,
            json!({"kind": "decrement_then_undo"}),
        ),
        (
            TapeRule::ReadThenDecrement {
                guard: Guard::Watch,
            },
            json!({"kind": "read_then_decrement", "guard": "watch"}),
        ),
        (TapeRule::Story, json!({"kind": "story"})),
    ] {
        assert_eq!(serde_json::to_value(rule).unwrap(), wire);
        assert_eq!(serde_json::from_value::<TapeRule>(wire).unwrap(), rule);
    }
}

#[test]
fn a_tape_rule_without_its_field_is_an_error_that_names_it() {
    for (wire, field) in [
        (r#"{"kind":"read_then_decrement"}"#, "guard"),
        (r#"{"kind":"atomic_call"}"#, "call"),
        (r#"{"kind":"atomic_per_bucket"}"#, "buckets"),
    ] {
        let err = serde_json::from_str::<TapeRule>(wire)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("missing field `{field}`")),
            "{wire}: {err}"
        );
    }
    let err = serde_json::from_str::<TapeRule>(r#"{"kind":"telepathy"}"#).unwrap_err();
    assert!(
        err.to_string().contains("unknown variant `telepathy`"),
        "{err}"
    );
}

#[test]
fn outcome_results_and_their_wire_names() {
    for r in [
        OutcomeResult::Reserved,
        OutcomeResult::SoldOut,
        OutcomeResult::Error,
        OutcomeResult::Unknown,
        OutcomeResult::GaveUp,
    ] {
        assert_eq!(serde_json::to_value(r).unwrap(), json!(r.as_str()));
    }
}

#[test]
fn run_cancelled_carries_an_optional_summary() {
    let msg = ServerMessage::RunCancelled {
        run_id: "r-1".into(),
        summary: None,
    };
    assert_eq!(
        serde_json::to_value(&msg).unwrap(),
        json!({"type":"run_cancelled","run_id":"r-1"})
    );
}

/// A checkout request with only what the test sets; the rest is left to the defaults.
fn checkout(f: impl FnOnce(&mut RunRequest)) -> RunRequest {
    let mut r = RunRequest {
        scenario: Some(Scenario::Checkout),
        ..RunRequest::for_strategy("holds")
    };
    f(&mut r);
    r
}

#[test]
fn a_version_2_request_is_a_race_with_no_checkout_knobs() {
    let config = RunRequest::for_strategy("lua").validate(1).unwrap();
    assert_eq!(config.race.scenario(), Scenario::Race);
    assert_eq!(config.race.checkout(), None);
    let v = serde_json::to_value(&config).unwrap();
    assert_eq!(v["scenario"], "race");
    assert!(v.get("hold_ttl_ms").is_none());
    // A version 2 config (no scenario at all) still reads as a race.
    let mut old = v.clone();
    old.as_object_mut().unwrap().remove("scenario");
    assert_eq!(serde_json::from_value::<RunConfig>(old).unwrap(), config);
}

#[test]
fn checkout_defaults_are_filled_in_and_sit_flat() {
    let config = checkout(|_| {}).validate(5).unwrap();
    let c = config.race.checkout().cloned().expect("checkout knobs");
    assert_eq!(config.race.scenario(), Scenario::Checkout);
    assert_eq!(
        (c.hold_ttl_ms, c.time_scale, c.pay_ms),
        (300_000, crate::limits::DEFAULT_TIME_SCALE, 60_000)
    );
    assert_eq!(
        (
            c.abandon_fraction,
            c.pay_fail_fraction,
            c.crash_fraction,
            c.retry_fraction
        ),
        (0.2, 0.1, 0.1, 0.2)
    );
    // Half of the default 50 buyers are distinct customers: the rest are bots' orders.
    assert_eq!((c.customers, c.per_customer_limit), (25, 1));
    assert_eq!(
        (c.fail_mode, c.no_wait_expiry, c.outage_ms),
        (FailMode::Closed, false, 0)
    );
    let v = serde_json::to_value(&config).unwrap();
    assert_eq!(v["scenario"], "checkout");
    assert_eq!(v["hold_ttl_ms"], 300_000);
    assert_eq!(v["crash_fraction"], 0.1);
    assert_eq!(v["fail_mode"], "closed");
    assert!(v.get("checkout").is_none(), "the knobs sit flat");
    assert_eq!(serde_json::from_value::<RunConfig>(v).unwrap(), config);
    let odd = checkout(|r| r.buyers = Some(7)).validate(1).unwrap();
    assert_eq!(odd.race.checkout().unwrap().customers, 4);
}

#[test]
fn checkout_knobs_out_of_range_are_errors_not_clamps() {
    let err = |f: fn(&mut RunRequest)| checkout(f).validate(1).unwrap_err();
    assert!(matches!(
        err(|r| r.crash_fraction = Some(1.5)),
        ConfigError::FractionOutOfRange {
            field: "crash_fraction",
            ..
        }
    ));
    assert!(matches!(
        err(|r| r.retry_fraction = Some(-0.1)),
        ConfigError::FractionOutOfRange {
            field: "retry_fraction",
            ..
        }
    ));
    assert!(matches!(
        err(|r| r.abandon_fraction = Some(f64::NAN)),
        ConfigError::FractionOutOfRange { .. }
    ));
    let over = err(|r| {
        r.abandon_fraction = Some(0.5);
        r.pay_fail_fraction = Some(0.4);
        r.crash_fraction = Some(0.2);
    });
    assert!(matches!(over, ConfigError::FatesOverOne { .. }), "{over}");
    // Exactly one, as decimals add up on paper, is fine.
    assert!(
        checkout(|r| {
            r.abandon_fraction = Some(0.7);
            r.pay_fail_fraction = Some(0.2);
            r.crash_fraction = Some(0.1);
        })
        .validate(1)
        .is_ok()
    );
    let many = err(|r| r.customers = Some(51));
    assert!(many.to_string().contains("between 1 and 50"), "{many}");
    assert!(matches!(
        err(|r| r.per_customer_limit = Some(0)),
        ConfigError::OutOfRange {
            field: "per_customer_limit",
            ..
        }
    ));
    // An hour-long hold at real speed would last an hour: refused, with the way out.
    let slow = err(|r| {
        r.hold_ttl_ms = Some(3_600_000);
        r.time_scale = Some(1);
    });
    assert!(
        matches!(
            slow,
            ConfigError::TooSlow {
                field: "hold_ttl_ms",
                ..
            }
        ),
        "{slow}"
    );
    assert!(slow.to_string().contains("raise time_scale"), "{slow}");
    let long_outage = err(|r| r.outage_ms = Some(300_000));
    assert!(matches!(
        long_outage,
        ConfigError::TooSlow {
            field: "outage_ms",
            max_real_ms: 2_000,
            ..
        }
    ));
}

#[test]
fn checkout_knobs_in_a_race_are_refused() {
    let r = RunRequest {
        hold_ttl_ms: Some(1_000),
        ..RunRequest::for_strategy("lua")
    };
    assert_eq!(
        r.validate(1).unwrap_err(),
        ConfigError::NotThisScenario {
            field: "hold_ttl_ms"
        }
    );
}

#[test]
fn checkout_frames_and_messages_have_their_wire_shape() {
    let msg: ClientMessage = serde_json::from_value(json!({"type":"reconcile"})).unwrap();
    assert_eq!(msg, ClientMessage::Reconcile);
    let r = Reconciliation {
        shop_ms: 1,
        real_ms: 2,
        stock: 10,
        available: 4,
        held: 3,
        holds: 2,
        sold: 2,
        settling: 0,
        leaked: 1,
        backorders: 0,
    };
    let v = serde_json::to_value(ServerMessage::Reconciliation {
        run_id: "r-1".into(),
        reconciliation: r,
    })
    .unwrap();
    assert_eq!(v["type"], "reconciliation");
    assert_eq!(v["reconciliation"]["leaked"], 1);
    let report = ReconcileReport {
        available_before: 4,
        available_after: 5,
        fixed: 1,
        sold: 2,
        held: 3,
        after: r,
    };
    let v = serde_json::to_value(ServerMessage::Reconciled {
        run_id: "r-1".into(),
        report,
    })
    .unwrap();
    assert_eq!(v["type"], "reconciled");
    assert_eq!(v["report"]["fixed"], 1);
    assert_eq!(CheckoutEnd::PaymentFailed.as_str(), "payment_failed");
    assert_eq!(
        serde_json::to_value(CheckoutEnd::PaymentFailed).unwrap(),
        "payment_failed"
    );
    assert_eq!("open".parse::<FailMode>(), Ok(FailMode::Open));
    assert!("ajar".parse::<FailMode>().is_err());
    assert_eq!("checkout".parse::<Scenario>(), Ok(Scenario::Checkout));
}

#[test]
fn a_checkout_tally_sits_flat_in_the_summary_and_a_race_has_none() {
    let tally = CheckoutTally {
        ledger: LedgerKind::Postgres,
        confirmed_units: 6,
        confirmed_orders: 6,
        held_units: 0,
        released_units: 3,
        expired_units: 1,
        leaked_units: 0,
        duplicate_reservations: 0,
        limit_violations: 0,
        backorder_units: 0,
        overage_units: 0,
        refused_unreachable: 0,
        refused_by_limit: 2,
        crashed: 1,
        abandoned: 2,
        payment_failed: 1,
        paid_too_late: 0,
        answered_from_record: 1,
        reconciled_units: 0,
        shop_ms: 300_000,
        real_ms: 3_000,
        reaper: ReaperStats::default(),
        notify: NotifyStats::default(),
    };
    let summary = RunSummary {
        strategy: "holds".into(),
        stock: 10,
        buyers: 12,
        orders_accepted: 6,
        units_sold: 6,
        final_stock: 4,
        oversold_units: 0,
        lost_updates: 0,
        rejected: 2,
        errors: 0,
        unknown: 1,
        gave_up: 3,
        in_doubt_units: 1,
        in_doubt_taken: 0,
        false_sold_out: 0,
        duration_ms: 10.0,
        throughput_per_s: 1.0,
        latency: LatencySummary::default(),
        round_trips: 30,
        retries: 0,
        cancelled: false,
        checkout: Some(Box::new(tally)),
        cart: None,
        busy: None,
        durability: None,
        eviction: None,
        failover: None,
    };
    let v = serde_json::to_value(&summary).unwrap();
    assert_eq!(v["confirmed_units"], 6);
    assert_eq!(v["ledger"], "postgres");
    assert_eq!(v["leaked_units"], 0);
    assert!(v.get("checkout").is_none());
    assert_eq!(serde_json::from_value::<RunSummary>(v).unwrap(), summary);
    let race = RunSummary {
        checkout: None,
        ..summary
    };
    let v = serde_json::to_value(&race).unwrap();
    assert!(v.get("confirmed_units").is_none());
    assert_eq!(serde_json::from_value::<RunSummary>(v).unwrap(), race);
}

mod cart {
    //! The `cart` and `warehouses` scenarios' knobs and wire shapes.

    use crate::cart::{CartTally, ShelfLedger, catalogue, warehouses};
    use crate::{ConfigError, RunRequest, RunSummary, Scenario};

    fn request(scenario: Scenario) -> RunRequest {
        RunRequest {
            strategy: Some("saga".into()),
            scenario: Some(scenario),
            ..Default::default()
        }
    }

    #[test]
    fn cart_defaults_and_ranges() {
        let c = request(Scenario::Cart).validate(1).unwrap();
        assert_eq!(c.race.scenario(), Scenario::Cart);
        let cart = c.race.cart().unwrap();
        assert_eq!((cart.skus, cart.max_lines), (3, 3));
        assert!(c.race.checkout().is_none() && c.race.warehouses().is_none());
        let r = RunRequest {
            skus: Some(5),
            ..request(Scenario::Cart)
        };
        assert_eq!(r.validate(1).unwrap().race.cart().unwrap().max_lines, 5);
        for (skus, lines) in [(0, None), (9, None), (3, Some(0)), (3, Some(9))] {
            let r = RunRequest {
                skus: Some(skus),
                max_lines: lines,
                ..request(Scenario::Cart)
            };
            assert!(
                matches!(r.validate(1), Err(ConfigError::OutOfRange { .. })),
                "{skus} {lines:?}"
            );
        }
        let r = RunRequest {
            skus: Some(2),
            max_lines: Some(3),
            ..request(Scenario::Cart)
        };
        let e = r.validate(1).unwrap_err();
        assert_eq!(
            e,
            ConfigError::MoreLinesThanSkus {
                max_lines: 3,
                skus: 2
            }
        );
        assert!(e.to_string().contains("at most skus = 2"), "{e}");
    }

    #[test]
    fn each_knob_only_in_its_scenario() {
        let r = RunRequest {
            warehouses: Some(3),
            ..request(Scenario::Cart)
        };
        let e = r.validate(1).unwrap_err();
        assert_eq!(
            e,
            ConfigError::OtherScenario {
                field: "warehouses",
                belongs_to: Scenario::Warehouses
            }
        );
        assert!(e.to_string().contains("\"scenario\":\"warehouses\""), "{e}");
        let r = RunRequest {
            skus: Some(3),
            ..RunRequest::for_strategy("lua")
        };
        assert!(matches!(
            r.validate(1),
            Err(ConfigError::OtherScenario { field: "skus", .. })
        ));
        let r = RunRequest {
            hold_ttl_ms: Some(1000),
            ..request(Scenario::Warehouses)
        };
        assert!(matches!(
            r.validate(1),
            Err(ConfigError::OtherScenario {
                field: "hold_ttl_ms",
                belongs_to: Scenario::Checkout
            })
        ));
        let r = RunRequest {
            split: Some(true),
            ..request(Scenario::Checkout)
        };
        assert!(matches!(
            r.validate(1),
            Err(ConfigError::OtherScenario { field: "split", .. })
        ));
    }

    #[test]
    fn warehouse_defaults_and_ranges() {
        let w = request(Scenario::Warehouses).validate(1).unwrap();
        let k = w.race.warehouses().unwrap();
        assert_eq!((k.warehouses, k.split), (3, false));
        for n in [1, 9] {
            let r = RunRequest {
                warehouses: Some(n),
                ..request(Scenario::Warehouses)
            };
            assert!(
                matches!(r.validate(1), Err(ConfigError::OutOfRange { .. })),
                "{n}"
            );
        }
    }

    #[test]
    fn config_round_trips_flat_and_old_configs_still_read() {
        let c = RunRequest {
            skus: Some(4),
            max_lines: Some(2),
            ..request(Scenario::Cart)
        }
        .validate(9)
        .unwrap();
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(
            (v["scenario"].as_str(), v["skus"].as_u64()),
            (Some("cart"), Some(4))
        );
        assert_eq!(serde_json::from_value::<crate::RunConfig>(v).unwrap(), c);
        let race = RunRequest::for_strategy("lua").validate(9).unwrap();
        let v = serde_json::to_value(&race).unwrap();
        assert!(v.get("skus").is_none() && v.get("warehouses").is_none());
        let back: crate::RunConfig = serde_json::from_value(v).unwrap();
        assert!(back.race.cart().is_none() && back.race.warehouses().is_none());
    }

    #[test]
    fn every_scenarios_config_reads_back_from_text_and_a_missing_knob_is_named() {
        for scenario in Scenario::WIRE_NAMES
            .iter()
            .map(|n| n.parse::<Scenario>().unwrap())
        {
            let c = request(scenario).validate(5).unwrap();
            let text = serde_json::to_string(&c).unwrap();
            assert_eq!(serde_json::from_str::<crate::RunConfig>(&text).unwrap(), c);
            let race = serde_json::to_string(&c.race).unwrap();
            assert_eq!(
                serde_json::from_str::<crate::RaceConfig>(&race).unwrap(),
                c.race
            );
        }
        let mut v = serde_json::to_value(request(Scenario::Checkout).validate(5).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("hold_ttl_ms");
        let err = serde_json::from_value::<crate::RunConfig>(v)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a checkout config without its checkout knobs")
                && err.contains("hold_ttl_ms"),
            "{err}"
        );
    }

    #[test]
    fn catalogue_and_warehouses_are_fixed_by_stock() {
        assert_eq!(
            catalogue(3, 10),
            vec![("phone", 10), ("case", 20), ("charger", 15)]
        );
        assert_eq!(
            warehouses(3, 10),
            vec![("harbour", 4), ("west", 3), ("north", 3)]
        );
        assert_eq!(warehouses(4, 2).iter().map(|w| w.1).sum::<u32>(), 2);
    }

    #[test]
    fn tally_sits_flat_in_the_summary() {
        let ledger = ShelfLedger {
            name: "phone".into(),
            stock: 10,
            units_sold: 7,
            final_stock: 1,
            oversold_units: 0,
            stranded_units: 2,
            node: None,
        };
        assert_eq!(ledger.unexplained(), 0);
        let tally = CartTally {
            partial_carts: 1,
            stranded_units: 2,
            per_sku: Some(vec![ledger]),
            ..Default::default()
        };
        let v = serde_json::to_value(&tally).unwrap();
        assert_eq!(v["per_sku"][0]["name"], "phone");
        assert!(v.get("per_warehouse").is_none());
        let summary_json = serde_json::json!({
            "strategy": "saga", "stock": 10, "buyers": 1, "orders_accepted": 0,
            "units_sold": 0, "final_stock": 10, "oversold_units": 0, "lost_updates": 0,
            "rejected": 1, "errors": 0, "duration_ms": 1.0, "throughput_per_s": 1.0,
            "latency": {"p50_us": 1, "p95_us": 1, "p99_us": 1, "max_us": 1},
            "round_trips": 1, "retries": 0,
            "partial_carts": 1, "stranded_units": 2, "compensations": 0, "fallback_orders": 0,
            "per_sku": v["per_sku"].clone()
        });
        let s: RunSummary = serde_json::from_value(summary_json).unwrap();
        assert_eq!(s.cart.as_deref(), Some(&tally));
        assert!(s.checkout.is_none());
    }
}

/// `ClientMessage::TYPES` names every message with exactly the fields it serializes (every
/// optional field set), and nothing else.
#[test]
fn every_client_message_is_in_types() {
    let sale: room::SaleConfig =
        serde_json::from_value(json!({"strategy":"lua","stock":10})).unwrap();
    let every = [
        ClientMessage::StartRun {
            config: RunRequest::default(),
        },
        ClientMessage::StartCompare {
            config: RunRequest::default(),
        },
        ClientMessage::CancelRun,
        ClientMessage::StepOpen {
            config: RunRequest::default(),
        },
        ClientMessage::Step { buyer: 1 },
        ClientMessage::StepReset,
        ClientMessage::StepClose,
        ClientMessage::Reconcile,
        ClientMessage::AuditPage {
            run_id: "r-1".into(),
            from: 0,
            count: 1,
        },
        ClientMessage::CreateRoom,
        ClientMessage::JoinRoom {
            room: "ABCD".into(),
            role: Some(room::RoomRole::Spectator),
            presenter_token: Some("t".into()),
            participant_id: Some(1),
            seat_token: Some("s".into()),
        },
        ClientMessage::OpenSale {
            room: "ABCD".into(),
            presenter_token: "t".into(),
            config: sale,
        },
        ClientMessage::Buy {
            room: "ABCD".into(),
            request_id: "r".into(),
        },
        ClientMessage::CloseSale {
            room: "ABCD".into(),
            presenter_token: "t".into(),
        },
        ClientMessage::Chaos {
            room: "ABCD".into(),
            presenter_token: "t".into(),
            action: room::ChaosAction::PauseRedis,
        },
        ClientMessage::CheckSolution {
            exercise: "reserve".into(),
            source: "return 1".into(),
        },
        ClientMessage::OpenChallenge {
            room: "ABCD".into(),
            presenter_token: "t".into(),
            exercise: "reserve".into(),
        },
        ClientMessage::SubmitChallenge {
            room: "ABCD".into(),
            nickname: "ada".into(),
            source: "return 1".into(),
        },
        ClientMessage::ShowCounterexample {
            room: "ABCD".into(),
            presenter_token: "t".into(),
            participant: 3,
        },
    ];
    assert_eq!(every.len(), ClientMessage::TYPES.len());
    for msg in every {
        let value = serde_json::to_value(&msg).unwrap();
        let kind = value["type"].as_str().unwrap();
        assert_eq!(kind, msg.type_name());
        let (_, fields) = ClientMessage::TYPES
            .iter()
            .find(|(t, _)| *t == kind)
            .unwrap_or_else(|| panic!("{kind} is missing from ClientMessage::TYPES"));
        let mut sent: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .filter(|k| *k != "type")
            .collect();
        let mut listed = fields.to_vec();
        sent.sort_unstable();
        listed.sort_unstable();
        assert_eq!(sent, listed, "{kind}");
    }
}

/// Today's wire format of a run's config, pinned before its types change: what the server
/// sends in `run_started` (and saved runs keep) for each scenario, byte for byte, reads back
/// to the same config; and what the README's client and the page send is still accepted.
#[test]
fn the_run_config_wire_format_is_pinned_for_every_scenario() {
    let requests = [
        json!({"strategy":"lua","stock":10,"buyers":50}),
        json!({"strategy":"holds","scenario":"checkout","crash_fraction":0.1}),
        json!({"strategy":"cart_script","scenario":"cart","skus":4,"max_lines":3}),
        json!({"strategy":"warehouse_script","scenario":"warehouses","warehouses":3,"split":true}),
    ];
    let pinned = [
        r#"{"strategy":"lua","stock":10,"buyers":50,"qty":1,"max_qty":null,"app_servers":8,"arrival_spread_ms":0,"race_window_ms":0,"seed":7,"scenario":"race"}"#,
        r#"{"strategy":"holds","stock":10,"buyers":50,"qty":1,"max_qty":null,"app_servers":8,"arrival_spread_ms":0,"race_window_ms":0,"seed":7,"scenario":"checkout","hold_ttl_ms":300000,"time_scale":20,"pay_ms":60000,"abandon_fraction":0.2,"pay_fail_fraction":0.1,"crash_fraction":0.1,"retry_fraction":0.2,"customers":25,"per_customer_limit":1,"fail_mode":"closed","no_wait_expiry":false,"outage_at_ms":0,"outage_ms":0}"#,
        r#"{"strategy":"cart_script","stock":10,"buyers":50,"qty":1,"max_qty":null,"app_servers":8,"arrival_spread_ms":0,"race_window_ms":0,"seed":7,"scenario":"cart","skus":4,"max_lines":3}"#,
        r#"{"strategy":"warehouse_script","stock":10,"buyers":50,"qty":1,"max_qty":null,"app_servers":8,"arrival_spread_ms":0,"race_window_ms":0,"seed":7,"scenario":"warehouses","warehouses":3,"split":true}"#,
    ];
    for (request, pinned) in requests.into_iter().zip(pinned) {
        let request: RunRequest = serde_json::from_value(request).unwrap();
        let config = request.validate(7).unwrap();
        let sent = serde_json::to_string(&config).unwrap();
        let sent_value: serde_json::Value = serde_json::from_str(&sent).unwrap();
        let pinned_value: serde_json::Value = serde_json::from_str(pinned).unwrap();
        assert_eq!(sent_value, pinned_value, "{sent}");
        let back: RunConfig = serde_json::from_str(pinned).unwrap();
        assert_eq!(back, config);
    }
    // A version 2 frame had no `scenario`: it is a race.
    let old: RunConfig = serde_json::from_str(
        r#"{"strategy":"naive","stock":10,"buyers":50,"qty":1,"max_qty":null,"app_servers":8,"arrival_spread_ms":0,"race_window_ms":0,"seed":7}"#,
    )
    .unwrap();
    assert_eq!(old.race.scenario(), Scenario::Race);
}

mod step_frames {
    use super::*;

    /// `naive`'s two commands and `watch`'s transaction, typed as the server sends them.
    fn get() -> RedisCall {
        RedisCommand::new("GET").key("stock").into()
    }
    fn decrby() -> RedisCall {
        RedisCommand::new("DECRBY").key("stock").int(1).into()
    }

    #[test]
    fn the_text_is_built_from_the_typed_call_and_reply() {
        assert_eq!(get().to_string(), "GET stock");
        assert_eq!(decrby().to_string(), "DECRBY stock 1");
        let exec = RedisCall::Transaction(vec![RedisCommand::new("DECRBY").key("stock").int(1)]);
        assert_eq!(exec.to_string(), "MULTI · DECRBY stock 1 · EXEC");
        let reads = RedisCall::Pipeline(vec![
            RedisCommand::new("GET").key("stock:b0"),
            RedisCommand::new("GET").key("stock:b1"),
        ]);
        assert_eq!(reads.to_string(), "GET stock:b0 · GET stock:b1");
        let lua = RedisCommand::new("EVALSHA")
            .script("reserve.lua")
            .int(1)
            .key("stock")
            .int(1);
        assert_eq!(lua.to_string(), "EVALSHA reserve.lua 1 stock 1");
        let lock = RedisCommand::new("SET")
            .key("lock")
            .word("ab12")
            .word("NX")
            .word("PX")
            .int(2000);
        assert_eq!(lock.to_string(), "SET lock ab12 NX PX 2000");
        assert!(lock.has_word("NX") && !lock.has_word("lock"));
        let script = RedisReply::Array(vec![
            RedisReply::Integer(1),
            RedisReply::Integer(1),
            RedisReply::Integer(0),
        ]);
        assert_eq!(script.to_string(), "[1, 1, 0]");
        assert_eq!(RedisReply::Nil.to_string(), "nil");
        assert_eq!(RedisReply::Status("OK".into()).to_string(), "OK");
        assert_eq!(RedisReply::Integer(-1).to_string(), "-1");
        assert_eq!(RedisReply::Integer(-1).integer(), Some(-1));
        assert_eq!(RedisReply::Text("1".into()).integer(), None);
    }

    #[test]
    fn a_step_state_carries_typed_commands_beside_their_text_and_round_trips() {
        let state = StepState {
            run_id: "s-1".into(),
            config: RaceConfig {
                stock: 1,
                buyers: 2,
                qty: 1,
                max_qty: None,
                app_servers: 2,
                arrival_spread_ms: 0,
                race_window_ms: 0,
                seed: 1,
                knobs: Knobs::Race,
            }
            .with_strategy("naive"),
            buyers: vec![StepBuyer {
                buyer: 1,
                next: Some(decrby().to_string()),
                next_call: Some(decrby()),
                outcome: None,
            }],
            log: vec![StepCommand::new(1, get(), RedisReply::Integer(1))],
            stock: Some(1),
            units_sold: 0,
        };
        let v = serde_json::to_value(ServerMessage::StepState(state.clone())).unwrap();
        assert_eq!(
            v["log"][0],
            json!({
                "buyer": 1,
                "command": "GET stock",
                "reply": "1",
                "call": {"command": {"name": "GET", "args": [{"key": "stock"}]}},
                "answer": {"integer": 1}
            })
        );
        assert_eq!(
            v["buyers"][0]["next_call"],
            json!({"command": {"name": "DECRBY", "args": [{"key": "stock"}, {"integer": 1}]}})
        );
        assert_eq!(v["buyers"][0]["next"], "DECRBY stock 1");
        let back: ServerMessage = serde_json::from_value(v).unwrap();
        assert_eq!(back, ServerMessage::StepState(state));
        // The other kinds' wire shapes.
        assert_eq!(serde_json::to_value(RedisReply::Nil).unwrap(), json!("nil"));
        assert_eq!(
            serde_json::to_value(RedisReply::Array(vec![RedisReply::Status("OK".into())])).unwrap(),
            json!({"array": [{"status": "OK"}]})
        );
        let exec = RedisCall::Transaction(vec![RedisCommand::new("DECRBY").key("stock").int(1)]);
        let v = serde_json::to_value(&exec).unwrap();
        assert_eq!(
            v,
            json!({"transaction": [{"name": "DECRBY", "args": [{"key": "stock"}, {"integer": 1}]}]})
        );
        assert_eq!(serde_json::from_value::<RedisCall>(v).unwrap(), exec);
    }

    #[test]
    fn a_buyer_without_next_call_still_reads() {
        // An older server's buyer: no `next_call`.
        let b: StepBuyer =
            serde_json::from_value(json!({"buyer": 2, "next": "GET stock"})).unwrap();
        assert_eq!((b.next.as_deref(), b.next_call), (Some("GET stock"), None));
    }
}

mod hello_frames {
    use super::*;
    use crate::room::{ChaosAction, ChaosInfo};

    fn hello_json() -> serde_json::Value {
        json!({
            "type": "hello", "protocol_version": 3, "server_version": "0.1.0",
            "redis": "up", "strategies": [], "scripts": [],
            "limits": serde_json::to_value(limits::LIMITS).unwrap()
        })
    }

    #[test]
    fn hello_lists_the_chaos_buttons_and_an_old_hello_still_parses() {
        let ServerMessage::Hello(old) = serde_json::from_value(hello_json()).unwrap() else {
            panic!("a hello")
        };
        assert!(old.chaos.is_empty(), "an older server lists none");
        let mut hello = old;
        hello.chaos = vec![ChaosInfo {
            action: ChaosAction::ScriptFlush,
            label: "Flush scripts".into(),
            description: "Every cached script is gone.".into(),
            needs_own_redis: true,
        }];
        let v = serde_json::to_value(ServerMessage::Hello(hello.clone())).unwrap();
        assert_eq!(
            v["chaos"],
            json!([{
                "action": "script_flush",
                "label": "Flush scripts",
                "description": "Every cached script is gone.",
                "needs_own_redis": true
            }])
        );
        assert_eq!(
            serde_json::from_value::<ServerMessage>(v).unwrap(),
            ServerMessage::Hello(hello)
        );
    }
}

#[test]
fn nicknames_are_bounded_and_plain_text() {
    use crate::challenge::check_nickname;
    assert_eq!(check_nickname("  Ada  ").unwrap(), "Ada");
    assert_eq!(
        check_nickname("<b>x</b>").unwrap(),
        "<b>x</b>",
        "shown as text, so kept"
    );
    assert!(check_nickname("").is_err());
    assert!(check_nickname(&"x".repeat(25)).is_err());
    assert!(check_nickname("a\u{7}b").is_err());
    assert_eq!(check_nickname(&"é".repeat(24)).unwrap().chars().count(), 24);
}

#[test]
fn an_eviction_config_carries_its_policy_flat_and_only_there() {
    let request = RunRequest {
        strategy: Some("lua_strict".into()),
        scenario: Some(Scenario::Eviction),
        policy: Some(crate::EvictionPolicy::VolatileLru),
        ..RunRequest::default()
    };
    let config = request.validate(7).unwrap();
    let v = serde_json::to_value(&config).unwrap();
    assert_eq!(v["scenario"], "eviction");
    assert_eq!(v["policy"], "volatile-lru");
    assert_eq!(v["arrival_spread_ms"], crate::eviction::DEFAULT_SPREAD_MS);
    let back: crate::RunConfig = serde_json::from_value(v).unwrap();
    assert_eq!(back, config);
    // The default policy is the one that evicts anything.
    let plain = RunRequest {
        scenario: Some(Scenario::Eviction),
        ..RunRequest::for_strategy("lua")
    };
    match plain.validate(7).unwrap().race.knobs {
        crate::Knobs::Eviction(e) => assert_eq!(e.policy, crate::EvictionPolicy::AllkeysLru),
        other => panic!("{other:?}"),
    }
    // The policy belongs to its scenario alone.
    let elsewhere = RunRequest {
        policy: Some(crate::EvictionPolicy::Noeviction),
        ..RunRequest::for_strategy("lua")
    };
    assert_eq!(
        elsewhere.validate(7).unwrap_err().to_string(),
        "policy belongs to the eviction scenario: send \"scenario\":\"eviction\" with it, or leave it out"
    );
    assert_eq!(
        "noeviction".parse::<crate::EvictionPolicy>(),
        Ok(crate::EvictionPolicy::Noeviction)
    );
    assert!("allkeys-lfu".parse::<crate::EvictionPolicy>().is_err());
}

/// Every scenario's tally sits flat in the summary, and several share field names
/// (`acknowledged_lost`, `units_lost`): each must come back whole from the wire, not be
/// swallowed by a tally declared before it that fails to read.
#[test]
fn each_failure_tally_comes_back_from_the_wire() {
    use crate::failover::{FailoverTally, ReplicaGuard};
    let failover = FailoverTally {
        acknowledged_lost: 6,
        acknowledged_lost_orders: 6,
        sold_twice: 6,
        refused_writes: 0,
        wait_timed_out: 0,
        primary_stock_at_kill: 0,
        replica_stock_at_promotion: 6,
        replica_stopped_at_ms: 100,
        primary_killed_at_ms: 300,
        failover_ms: 35,
        guard: ReplicaGuard::None,
        wait_timeout_ms: 0,
        min_replicas_max_lag_s: 0,
        confirm_p50_us: 700,
        confirm_p99_us: 20_000,
    };
    let summary = RunSummary {
        strategy: "lua".into(),
        stock: 10,
        buyers: 50,
        orders_accepted: 16,
        units_sold: 16,
        final_stock: 0,
        oversold_units: 6,
        lost_updates: 6,
        rejected: 34,
        errors: 0,
        unknown: 0,
        gave_up: 0,
        in_doubt_units: 0,
        in_doubt_taken: 0,
        false_sold_out: 0,
        duration_ms: 10.0,
        throughput_per_s: 1.0,
        latency: LatencySummary::default(),
        round_trips: 50,
        retries: 0,
        cancelled: false,
        checkout: None,
        cart: None,
        busy: None,
        durability: None,
        eviction: None,
        failover: Some(Box::new(failover)),
    };
    let v = serde_json::to_value(&summary).unwrap();
    assert_eq!(v["acknowledged_lost"], 6);
    assert_eq!(serde_json::from_value::<RunSummary>(v).unwrap(), summary);
}
