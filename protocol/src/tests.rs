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
    assert_eq!(filled.stock, 10);
    assert_eq!(filled.buyers, 50);
    assert_eq!(filled.qty, 1);
    assert_eq!(filled.app_servers, 8);
    assert_eq!(filled.seed, 7);
}

#[test]
fn out_of_range_is_an_error_not_a_clamp() {
    let req = RunRequest {
        strategy: "lua".into(),
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
        strategy: "lua".into(),
        qty: Some(0),
        ..Default::default()
    };
    assert!(req.validate(1).is_err());
    let req = RunRequest {
        strategy: "lua".into(),
        max_qty: Some(101),
        ..Default::default()
    };
    assert!(req.validate(1).is_err());
    let req = RunRequest {
        strategy: " ".into(),
        ..Default::default()
    };
    assert_eq!(req.validate(1).unwrap_err(), ConfigError::MissingStrategy);
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
    };
    let v = serde_json::to_value(&o).unwrap();
    assert_eq!(v["result"], "reserved");
    assert!(v.get("error").is_none());
    assert_eq!(serde_json::from_value::<BuyerOutcome>(v).unwrap(), o);
}

#[test]
fn start_compare_needs_no_strategy() {
    let msg: ClientMessage =
        serde_json::from_value(json!({"type":"start_compare","config":{"stock":5}})).unwrap();
    let ClientMessage::StartCompare { config } = msg else {
        panic!("wrong variant")
    };
    assert_eq!(config.stock, Some(5));
    assert!(config.strategy.is_empty());
}
