//! Turning a client's text frame into a typed request, or into the precise error frame.
//!
//! Parsing happens in steps (JSON, then `type`, then each config field's presence and JSON
//! type, then ranges) so each kind of mistake gets its own code, decided from what the frame
//! holds, never from the wording of a library's error message. Nothing here touches Redis.

use oversold_protocol::limits::Limits;
use oversold_protocol::{
    ClientMessage, ConfigError, ErrorCode, FieldKind, RaceConfig, RunConfig, RunRequest, WireError,
};
use serde_json::{Map, Value};

/// Parse one text frame.
pub fn parse(text: &str) -> Result<ClientMessage, WireError> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| WireError::new(ErrorCode::BadJson, format!("not valid JSON: {e}")))?;
    let Some(object) = value.as_object() else {
        return Err(WireError::new(
            ErrorCode::BadJson,
            "expected a JSON object with a \"type\" field",
        ));
    };
    let (kind, fields) = message_type(object)?;
    for key in object.keys() {
        if key != "type" && !fields.contains(&key.as_str()) {
            return Err(WireError::new(
                ErrorCode::BadMessage,
                format!("unknown field {key:?} in {kind}"),
            ));
        }
    }
    if fields.contains(&"buyer") {
        check_buyer(kind, object.get("buyer"))?;
    }
    // A sale's config is not a run's: serde checks it (unknown fields refused), and the
    // room handler checks its ranges.
    if fields.contains(&"config") && kind != "open_sale" {
        check_config_object(kind, object.get("config"))?;
    }
    // Every shape the enum could refuse was refused above with its own code; what is left is
    // a mismatch between these checks and the protocol types, reported as such.
    serde_json::from_value(value).map_err(|e| WireError::new(ErrorCode::BadMessage, e.to_string()))
}

/// The frame's `type` and the fields that type takes, or `unknown_type` listing them all.
fn message_type(
    object: &Map<String, Value>,
) -> Result<(&'static str, &'static [&'static str]), WireError> {
    let names: Vec<&str> = ClientMessage::TYPES.iter().map(|(t, _)| *t).collect();
    match object.get("type").and_then(Value::as_str) {
        Some(t) => match ClientMessage::TYPES.iter().find(|(known, _)| *known == t) {
            Some(&(kind, fields)) => Ok((kind, fields)),
            None => Err(WireError::new(
                ErrorCode::UnknownType,
                format!("unknown type {t:?}; expected one of {names:?}"),
            )),
        },
        None => Err(WireError::new(
            ErrorCode::UnknownType,
            format!("missing string field \"type\"; expected one of {names:?}"),
        )),
    }
}

/// A `kind` frame's `buyer`: present, and a whole number that fits a buyer's number.
fn check_buyer(kind: &str, buyer: Option<&Value>) -> Result<(), WireError> {
    match buyer {
        None => Err(WireError::new(
            ErrorCode::MissingField,
            format!("{kind} needs a \"buyer\" number"),
        )),
        Some(v) if v.as_u64().is_some_and(|n| u32::try_from(n).is_ok()) => Ok(()),
        Some(v) if v.as_i64().is_some_and(|n| n < 0) => Err(WireError::new(
            ErrorCode::OutOfRange,
            format!("buyer = {v} is out of range: buyers are numbered from 1"),
        )),
        Some(v) => Err(WireError::new(
            ErrorCode::BadMessage,
            format!("\"buyer\" must be a whole number, got {v}"),
        )),
    }
}

/// A `kind` frame's `config`: present, a JSON object, and each field as [`check_config`]
/// wants it.
fn check_config_object(kind: &str, config: Option<&Value>) -> Result<(), WireError> {
    match config {
        None => Err(WireError::new(
            ErrorCode::MissingField,
            format!("{kind} needs a \"config\" object"),
        )),
        Some(Value::Object(config)) => check_config(config),
        Some(_) => Err(WireError::new(
            ErrorCode::BadMessage,
            "\"config\" must be a JSON object",
        )),
    }
}

/// Each config field: known, and of the JSON type its [`FieldKind`] names. A negative
/// number is out of range (every knob starts at 0); so is a fraction outside 0.0–1.0. A
/// string where a number belongs, a fraction in a whole-number field, a number too big for
/// its field, an unknown word for `scenario` or `fail_mode`: a bad message.
fn check_config(config: &Map<String, Value>) -> Result<(), WireError> {
    for (field, value) in config {
        let Some(kind) = RunRequest::field_kind(field) else {
            return Err(WireError::new(
                ErrorCode::BadMessage,
                format!(
                    "unknown config field {field:?}; expected one of {:?}",
                    RunRequest::FIELDS
                ),
            ));
        };
        let fits = match kind {
            FieldKind::Text => match (field.as_str(), value.as_str()) {
                ("scenario", Some(s)) => s.parse::<oversold_protocol::Scenario>().is_ok(),
                ("fail_mode", Some(s)) => s.parse::<oversold_protocol::FailMode>().is_ok(),
                ("policy", Some(s)) => s.parse::<oversold_protocol::EvictionPolicy>().is_ok(),
                (_, s) => s.is_some(),
            },
            FieldKind::Whole64 => value.as_u64().is_some(),
            FieldKind::Whole32 => value.as_u64().is_some_and(|n| u32::try_from(n).is_ok()),
            FieldKind::Fraction => value.is_number(),
            FieldKind::Flag => value.is_boolean(),
        };
        if fits {
            if kind == FieldKind::Fraction
                && let Some(f) = value.as_f64().filter(|f| !(0.0..=1.0).contains(f))
            {
                return Err(WireError::new(
                    ErrorCode::OutOfRange,
                    format!("{field} = {f} is out of range: it must be between 0.0 and 1.0"),
                ));
            }
            continue;
        }
        let negative = value.as_i64().is_some_and(|n| n < 0);
        if negative && matches!(kind, FieldKind::Whole32 | FieldKind::Whole64) {
            return Err(WireError::new(
                ErrorCode::OutOfRange,
                format!("{field} = {value} is out of range: it cannot be negative"),
            ));
        }
        let expected = match (kind, field.as_str()) {
            (FieldKind::Text, "scenario") => {
                "\"race\", \"checkout\", \"cart\", \"warehouses\", \"busy_script\" or \"eviction\""
            }
            (FieldKind::Text, "policy") => "\"allkeys-lru\", \"volatile-lru\" or \"noeviction\"",
            (FieldKind::Text, "fail_mode") => "\"closed\" or \"open\"",
            (kind, _) => kind.expected(),
        };
        return Err(WireError::new(
            ErrorCode::BadMessage,
            format!("config.{field} must be {expected}, got {value}"),
        ));
    }
    Ok(())
}

/// Map a range check failure to its error frame.
pub fn config_error(e: &ConfigError) -> WireError {
    let code = match e {
        ConfigError::MissingStrategy => ErrorCode::MissingField,
        ConfigError::StrategyNotAllowed
        | ConfigError::NotThisScenario { .. }
        | ConfigError::OtherScenario { .. } => ErrorCode::BadMessage,
        ConfigError::OutOfRange { .. }
        | ConfigError::FractionOutOfRange { .. }
        | ConfigError::FatesOverOne { .. }
        | ConfigError::TooSlow { .. }
        | ConfigError::MoreLinesThanSkus { .. } => ErrorCode::OutOfRange,
    };
    WireError::new(code, e.to_string())
}

/// `start_run`: check ranges (the server's `limits`) and fill defaults, picking a fresh seed
/// when none was given.
pub fn validate_run(request: &RunRequest, limits: &Limits) -> Result<RunConfig, WireError> {
    request
        .validate_within(limits, rand::random())
        .map_err(|e| config_error(&e))
}

/// `start_compare`: the same, without a strategy.
pub fn validate_compare(request: &RunRequest, limits: &Limits) -> Result<RaceConfig, WireError> {
    request
        .validate_compare_within(limits, rand::random())
        .map_err(|e| config_error(&e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use oversold_protocol::limits::LIMITS;

    fn code(text: &str) -> ErrorCode {
        parse(text).unwrap_err().code
    }

    #[test]
    fn each_mistake_has_its_own_code() {
        assert_eq!(code("{nope"), ErrorCode::BadJson);
        assert_eq!(code("[1,2]"), ErrorCode::BadJson);
        assert_eq!(code(r#"{"type":"launch"}"#), ErrorCode::UnknownType);
        assert_eq!(code(r#"{"type":7}"#), ErrorCode::UnknownType);
        assert_eq!(code(r#"{"config":{}}"#), ErrorCode::UnknownType);
        assert_eq!(code(r#"{"type":"start_run"}"#), ErrorCode::MissingField);
        assert_eq!(
            code(r#"{"type":"start_run","config":3}"#),
            ErrorCode::BadMessage
        );
        assert_eq!(
            code(r#"{"type":"start_run","config":{},"extra":1}"#),
            ErrorCode::BadMessage
        );
        assert_eq!(
            code(r#"{"type":"cancel_run","config":{}}"#),
            ErrorCode::BadMessage
        );
        // An empty config parses (compare needs no strategy); the range check refuses a run.
        let ClientMessage::StartRun { config } =
            parse(r#"{"type":"start_run","config":{}}"#).unwrap()
        else {
            panic!("start_run")
        };
        assert_eq!(
            validate_run(&config, &LIMITS).unwrap_err().code,
            ErrorCode::MissingField
        );
        assert_eq!(
            code(r#"{"type":"start_run","config":{"strategy":"lua","buyers":-3}}"#),
            ErrorCode::OutOfRange
        );
        for bad in [r#""ten""#, "2.5", "4294967296", "null", "[1]"] {
            let frame =
                format!(r#"{{"type":"start_run","config":{{"strategy":"lua","buyers":{bad}}}}}"#);
            assert_eq!(code(&frame), ErrorCode::BadMessage, "{bad}");
        }
        assert_eq!(
            code(r#"{"type":"start_run","config":{"strategy":7}}"#),
            ErrorCode::BadMessage
        );
        assert_eq!(
            code(r#"{"type":"start_run","config":{"strategy":"lua","bogus":1}}"#),
            ErrorCode::BadMessage
        );
    }

    fn checkout(field: &str, value: &str) -> String {
        format!(
            r#"{{"type":"start_run","config":{{"strategy":"holds","scenario":"checkout","{field}":{value}}}}}"#
        )
    }

    #[test]
    fn checkout_fields_are_typed_by_name() {
        // A fraction takes any number; the range check is a separate step.
        for ok in ["0", "0.25", "1", "1.0"] {
            assert!(parse(&checkout("crash_fraction", ok)).is_ok(), "{ok}");
        }
        for bad in [r#""0.2""#, "true", "null", "[0.1]"] {
            assert_eq!(
                code(&checkout("abandon_fraction", bad)),
                ErrorCode::BadMessage,
                "{bad}"
            );
        }
        for out in ["-0.1", "1.5", "-3"] {
            assert_eq!(
                code(&checkout("retry_fraction", out)),
                ErrorCode::OutOfRange,
                "{out}"
            );
        }
        assert!(parse(&checkout("no_wait_expiry", "true")).is_ok());
        assert_eq!(
            code(&checkout("no_wait_expiry", "1")),
            ErrorCode::BadMessage
        );
        assert!(parse(&checkout("fail_mode", r#""open""#)).is_ok());
        assert_eq!(
            code(&checkout("fail_mode", r#""ajar""#)),
            ErrorCode::BadMessage
        );
        assert_eq!(
            code(&checkout("scenario", r#""auction""#)),
            ErrorCode::BadMessage
        );
        assert_eq!(code(&checkout("hold_ttl_ms", "2.5")), ErrorCode::BadMessage);
        assert_eq!(code(&checkout("hold_ttl_ms", "-5")), ErrorCode::OutOfRange);
        // Past the JSON checks, the ranges: too many fates, too slow a hold.
        let ClientMessage::StartRun { config } = parse(
            r#"{"type":"start_run","config":{"strategy":"holds","scenario":"checkout","abandon_fraction":0.6,"crash_fraction":0.6}}"#,
        )
        .unwrap() else {
            panic!("start_run")
        };
        assert_eq!(
            validate_run(&config, &LIMITS).unwrap_err().code,
            ErrorCode::OutOfRange
        );
        let ClientMessage::StartRun { config } =
            parse(r#"{"type":"start_run","config":{"strategy":"lua","hold_ttl_ms":1000}}"#)
                .unwrap()
        else {
            panic!("start_run")
        };
        assert_eq!(
            validate_run(&config, &LIMITS).unwrap_err().code,
            ErrorCode::BadMessage
        );
        assert_eq!(
            parse(r#"{"type":"reconcile"}"#).unwrap(),
            ClientMessage::Reconcile
        );
    }

    #[test]
    fn a_compare_names_no_strategy() {
        let ClientMessage::StartCompare { config } =
            parse(r#"{"type":"start_compare","config":{"strategy":"lua"}}"#).unwrap()
        else {
            panic!("start_compare")
        };
        assert_eq!(
            validate_compare(&config, &LIMITS).unwrap_err().code,
            ErrorCode::BadMessage
        );
        let ClientMessage::StartCompare { config } =
            parse(r#"{"type":"start_compare","config":{"stock":4}}"#).unwrap()
        else {
            panic!("start_compare")
        };
        assert_eq!(validate_compare(&config, &LIMITS).unwrap().stock, 4);
    }

    #[test]
    fn valid_frames_parse() {
        assert_eq!(
            parse(r#"{"type":"cancel_run"}"#).unwrap(),
            ClientMessage::CancelRun
        );
        assert!(matches!(
            parse(r#"{"type":"start_run","config":{"strategy":"naive","stock":3,"seed":18446744073709551615}}"#).unwrap(),
            ClientMessage::StartRun { .. }
        ));
    }
}
