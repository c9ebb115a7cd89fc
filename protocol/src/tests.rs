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
    assert_eq!(serde_json::from_value::<BuyerOutcome>(v).unwrap(), sharded);
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
    };
    let v = serde_json::to_value(&full).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    let mut expected = RunRequest::FIELDS.to_vec();
    expected.sort_unstable();
    let mut keys = keys;
    keys.sort_unstable();
    assert_eq!(keys, expected);
    // ...and each of them alone is accepted.
    for field in RunRequest::FIELDS {
        let value = if field == "strategy" {
            json!("lua")
        } else {
            json!(1)
        };
        let one = json!({ field: value });
        assert!(
            serde_json::from_value::<RunRequest>(one).is_ok(),
            "{field} refused"
        );
    }
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
        },
        available: true,
        unavailable_reason: None,
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
    assert_eq!(serde_json::from_value::<StrategyInfo>(v).unwrap(), info);
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
    ] {
        assert_eq!(serde_json::to_value(rule).unwrap(), wire);
        assert_eq!(serde_json::from_value::<TapeRule>(wire).unwrap(), rule);
    }
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
