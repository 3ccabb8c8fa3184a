//! Server error bodies and the stable error kinds JS switches on (SPEC §2).

use serde::Serialize;
use serde_json::Value;

/// The stable kinds of error. The names are part of the JS API (`error.code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ChatErrorCode"))]
#[non_exhaustive]
pub enum ErrorKind {
    /// `FOLLOWUP_UNSUPPORTED` (or `conflict` / `followup_unsupported`): no follow-ups here.
    FollowUpUnsupported,
    /// `followup_out_of_order`: the follow-up's `clientSeq` is not above the server's last.
    FollowUpOutOfOrder,
    /// `followup_session_not_ready`: the session is still being set up; worth a retry.
    SessionNotReady,
    /// `turn_already_active`: the session already runs a turn.
    TurnAlreadyActive,
    /// `validation_error`, or a 400 / 422: the server refused the request as malformed.
    Validation,
    /// The request or its answer was lost on the way (fetch rejected, stream cut mid-event).
    Network,
    /// Any other non-2xx answer; a 429 or 5xx is worth a retry.
    Server,
    /// The answer or the stream breaks the protocol (not JSON, not SSE, too large).
    Protocol,
    /// The request was aborted (stop, session switch, `dispose()`).
    Aborted,
    /// A stream grew past one of the store's `limits` (`error.field` names it): the turn was
    /// stopped, what it had shown kept.
    LimitExceeded,
    /// A stream that beat (pi-native heartbeats, SSE `:` comments) went silent past its beat
    /// interval and grace, and the recovery (a resume, a reconnect) failed too: the server or
    /// the connection to it is gone, though a proxy may keep the socket open.
    StreamStalled,
    /// An answer given before the server asked for it (SPEC §13, held answers) was let go
    /// unsent: the call ended, or the turn did, before the ask came.
    NotAsked,
}

impl ErrorKind {
    /// The kind's name, as JS reads it in `error.code`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::FollowUpUnsupported => "FollowUpUnsupported",
            ErrorKind::FollowUpOutOfOrder => "FollowUpOutOfOrder",
            ErrorKind::SessionNotReady => "SessionNotReady",
            ErrorKind::TurnAlreadyActive => "TurnAlreadyActive",
            ErrorKind::Validation => "Validation",
            ErrorKind::Network => "Network",
            ErrorKind::Server => "Server",
            ErrorKind::Protocol => "Protocol",
            ErrorKind::Aborted => "Aborted",
            ErrorKind::LimitExceeded => "LimitExceeded",
            ErrorKind::StreamStalled => "StreamStalled",
            ErrorKind::NotAsked => "NotAsked",
        }
    }
}

/// An error with its stable kind and what the server (or the network) said, verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(rename = "ChatStoreErrorShape", optional_fields)
)]
#[serde(rename_all = "camelCase")]
#[error("{}: {message}", kind.as_str())]
pub struct ChatError {
    /// The stable kind JS switches on.
    pub kind: ErrorKind,
    /// HTTP status, when the error came from an answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The server's own `error.code`, unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_code: Option<String>,
    /// The server's `error.message`, or a description for errors without a body.
    pub message: String,
    /// The server's `error.field`: the request field a validation error names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl ChatError {
    /// An error of `kind` with `message`, without status or server details.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ChatError {
            kind,
            status: None,
            server_code: None,
            message: message.into(),
            field: None,
        }
    }

    /// A [`ErrorKind::Network`] error: the request or its answer was lost on the way.
    pub fn network(message: impl Into<String>) -> Self {
        ChatError::new(ErrorKind::Network, message)
    }

    /// A [`ErrorKind::Protocol`] error: the answer or the stream breaks the protocol.
    pub fn protocol(message: impl Into<String>) -> Self {
        ChatError::new(ErrorKind::Protocol, message)
    }

    /// Classifies a non-2xx answer. Servers of this family say the same thing two ways
    /// (`{"code":"FOLLOWUP_UNSUPPORTED"}` and `{"code":"conflict","message":"followup_unsupported"}`),
    /// so both the code and the message are matched, case-insensitively.
    pub fn from_http(status: u16, body: &[u8]) -> Self {
        let (code, message, field) = parse_error_body(body);
        let says = |needle: &str| {
            code.as_deref()
                .is_some_and(|c| c.eq_ignore_ascii_case(needle))
                || message
                    .as_deref()
                    .is_some_and(|m| m.eq_ignore_ascii_case(needle))
        };
        let kind = if says("followup_unsupported") {
            ErrorKind::FollowUpUnsupported
        } else if says("followup_out_of_order") {
            ErrorKind::FollowUpOutOfOrder
        } else if says("followup_session_not_ready") || says("AGENT_REQUEST_IN_PROGRESS") {
            // pi-native's "the first attempt still runs there: wait and retry" (reference §4).
            ErrorKind::SessionNotReady
        } else if says("turn_already_active")
            || (status == 409 && says("AGENT_COMMAND_INVALID_STATE"))
        {
            // pi-native's prompt while a run is on is 409 (its 400 is a validation error).
            ErrorKind::TurnAlreadyActive
        } else if status == 409 && says("ABORTED") {
            ErrorKind::Aborted
        } else if status == 400 || status == 422 || says("validation_error") {
            ErrorKind::Validation
        } else {
            ErrorKind::Server
        };
        let message = message.unwrap_or_else(|| {
            if body.is_empty() {
                format!("HTTP {status}")
            } else {
                // A body that is not the error shape (a proxy's text, an HTML error page): its
                // text, as `useChat` shows it (bounded; the status is in `status`).
                String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned()
            }
        });
        ChatError {
            kind,
            status: Some(status),
            server_code: code,
            message,
            field,
        }
    }

    /// Whether the server's code or message is `needle` (case-insensitively), for the answers
    /// that have no kind of their own.
    pub(crate) fn says(&self, needle: &str) -> bool {
        (self.server_code.as_deref()).is_some_and(|c| c.eq_ignore_ascii_case(needle))
            || (self.status.is_some() && self.message.eq_ignore_ascii_case(needle))
    }

    /// Worth another try with the same request: the network, a busy or failing server, or a
    /// session the server is still setting up.
    pub fn is_retryable(&self) -> bool {
        match self.kind {
            ErrorKind::Network | ErrorKind::SessionNotReady => true,
            ErrorKind::Server => matches!(self.status, Some(429) | Some(500..=599) | None),
            _ => false,
        }
    }
}

fn parse_error_body(body: &[u8]) -> (Option<String>, Option<String>, Option<String>) {
    let Ok(Value::Object(mut obj)) = super::json::from_slice(body) else {
        return (None, None, None);
    };
    // `{"error":{...}}` is the contract; a bare `{"code","message"}` is tolerated.
    let mut inner = match obj.remove("error") {
        Some(Value::Object(inner)) => inner,
        Some(Value::String(message)) => return (None, Some(message), None),
        _ => obj,
    };
    let mut s = |k: &str| match inner.remove(k) {
        Some(Value::String(v)) => Some(v),
        _ => None,
    };
    (s("code"), s("message"), s("field"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_spellings_of_follow_up_unsupported() {
        let a = ChatError::from_http(
            409,
            br#"{"error":{"code":"FOLLOWUP_UNSUPPORTED","message":"no"}}"#,
        );
        let b = ChatError::from_http(
            409,
            br#"{"error":{"code":"conflict","message":"followup_unsupported"}}"#,
        );
        assert_eq!(a.kind, ErrorKind::FollowUpUnsupported);
        assert_eq!(b.kind, ErrorKind::FollowUpUnsupported);
        assert_eq!(b.server_code.as_deref(), Some("conflict"));
        assert_eq!(b.message, "followup_unsupported");
    }

    #[test]
    fn legacy_server_answers_classify() {
        let e = ChatError::from_http(
            409,
            br#"{"error":{"code":"conflict","message":"followup_out_of_order"}}"#,
        );
        assert_eq!(e.kind, ErrorKind::FollowUpOutOfOrder);
        assert!(!e.is_retryable());
        let e = ChatError::from_http(
            409,
            br#"{"error":{"code":"conflict","message":"followup_session_not_ready"}}"#,
        );
        assert_eq!(e.kind, ErrorKind::SessionNotReady);
        assert!(e.is_retryable());
        let e = ChatError::from_http(
            409,
            br#"{"error":{"code":"conflict","message":"turn_already_active"}}"#,
        );
        assert_eq!(e.kind, ErrorKind::TurnAlreadyActive);
        let e = ChatError::from_http(400, br#"{"error":{"code":"validation_error","message":"String must contain at least 1 character(s)","field":"sessionId"}}"#);
        assert_eq!(e.kind, ErrorKind::Validation);
        assert_eq!(e.field.as_deref(), Some("sessionId"));
        let e = ChatError::from_http(503, b"<html>busy</html>");
        assert_eq!(e.kind, ErrorKind::Server);
        assert!(e.is_retryable());
        assert!(e.message.contains("<html>busy"));
        // A text body is the message as it is (as `useChat` shows it), the status apart.
        let e = ChatError::from_http(500, b"Internal Server Error");
        assert_eq!(
            (e.message.as_str(), e.status),
            ("Internal Server Error", Some(500))
        );
        assert_eq!(ChatError::from_http(404, b"").message, "HTTP 404");
        assert!(!ChatError::from_http(404, b"").is_retryable());
    }
}
