//! Turning a client's text frame into a typed request, or into the precise error frame.
//!
//! Parsing happens in steps (JSON, then `type`, then fields, then ranges) so each kind
//! of mistake gets its own code. Nothing here touches Redis.

use oversold_protocol::{ClientMessage, ConfigError, ErrorCode, RunConfig, WireError};
use serde_json::Value;

/// The `type`s a client may send.
const KNOWN_TYPES: [&str; 3] = ["start_run", "start_compare", "cancel_run"];

/// Build an error frame body.
pub fn wire_error(code: ErrorCode, message: impl Into<String>) -> WireError {
    WireError {
        code,
        message: message.into(),
        run_id: None,
    }
}

/// Parse one text frame.
pub fn parse(text: &str) -> Result<ClientMessage, WireError> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| wire_error(ErrorCode::BadJson, format!("not valid JSON: {e}")))?;
    let Some(object) = value.as_object() else {
        return Err(wire_error(
            ErrorCode::BadJson,
            "expected a JSON object with a \"type\" field",
        ));
    };
    match object.get("type").and_then(Value::as_str) {
        Some(t) if KNOWN_TYPES.contains(&t) => {}
        Some(t) => {
            return Err(wire_error(
                ErrorCode::UnknownType,
                format!("unknown type {t:?}; expected one of {KNOWN_TYPES:?}"),
            ));
        }
        None => {
            return Err(wire_error(
                ErrorCode::UnknownType,
                format!("missing string field \"type\"; expected one of {KNOWN_TYPES:?}"),
            ));
        }
    }
    serde_json::from_value(value).map_err(|e| {
        let message = e.to_string();
        // serde's messages are precise; only the code needs choosing.
        let code = if message.starts_with("missing field") {
            ErrorCode::MissingField
        } else if message.starts_with("invalid value: integer") {
            ErrorCode::OutOfRange
        } else {
            ErrorCode::BadMessage
        };
        wire_error(code, message)
    })
}

/// Map a range check failure to its error frame.
pub fn config_error(e: &ConfigError) -> WireError {
    let code = match e {
        ConfigError::MissingStrategy => ErrorCode::MissingField,
        ConfigError::OutOfRange { .. } => ErrorCode::OutOfRange,
    };
    wire_error(code, e.to_string())
}

/// Check ranges and fill defaults, picking a fresh seed when none was given.
pub fn validate(request: &oversold_protocol::RunRequest) -> Result<RunConfig, WireError> {
    request
        .validate(rand::random())
        .map_err(|e| config_error(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str) -> ErrorCode {
        parse(text).unwrap_err().code
    }

    #[test]
    fn each_mistake_has_its_own_code() {
        assert_eq!(code("{nope"), ErrorCode::BadJson);
        assert_eq!(code("[1,2]"), ErrorCode::BadJson);
        assert_eq!(code(r#"{"type":"launch"}"#), ErrorCode::UnknownType);
        assert_eq!(code(r#"{"config":{}}"#), ErrorCode::UnknownType);
        assert_eq!(code(r#"{"type":"start_run"}"#), ErrorCode::MissingField);
        // An empty config parses (compare needs no strategy); the range check refuses it.
        let ClientMessage::StartRun { config } =
            parse(r#"{"type":"start_run","config":{}}"#).unwrap()
        else {
            panic!("start_run")
        };
        assert_eq!(validate(&config).unwrap_err().code, ErrorCode::MissingField);
        assert_eq!(
            code(r#"{"type":"start_run","config":{"strategy":"lua","buyers":-3}}"#),
            ErrorCode::OutOfRange
        );
        assert_eq!(
            code(r#"{"type":"start_run","config":{"strategy":"lua","buyers":"ten"}}"#),
            ErrorCode::BadMessage
        );
        assert_eq!(
            code(r#"{"type":"start_run","config":{"strategy":"lua","bogus":1}}"#),
            ErrorCode::BadMessage
        );
    }

    #[test]
    fn valid_frames_parse() {
        assert_eq!(
            parse(r#"{"type":"cancel_run"}"#).unwrap(),
            ClientMessage::CancelRun
        );
        assert!(matches!(
            parse(r#"{"type":"start_run","config":{"strategy":"naive","stock":3}}"#).unwrap(),
            ClientMessage::StartRun { .. }
        ));
    }
}
