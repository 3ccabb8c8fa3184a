//! What the runtime behind a session can do (SPEC §4).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The capabilities of the runtime behind one session.
///
/// Defaults are `{nativeFollowUp: false, aiSdkOwnsHistory: true}`: a plain AI SDK server, on
/// which a busy send is blocked rather than queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// The server accepts `POST …/followup` while a turn streams and runs them in order.
    pub native_follow_up: bool,
    /// The AI SDK reducer owns history (and the store PUTs it); `false` means the server's pi
    /// projection owns it.
    pub ai_sdk_owns_history: bool,
    /// A follow-up may carry attachments. Not in the reference servers' answer; defaults to
    /// `false`, which makes a busy send with files refuse with `filesWhileBusy`.
    pub follow_up_attachments: bool,
    /// A message needs text: files alone are refused as `empty` (pi-native's prompt requires
    /// its `content`). Not in the reference servers' answer; defaults to `false`.
    pub text_required: bool,
}

impl Default for Capabilities {
    fn default() -> Self {
        Capabilities {
            native_follow_up: false,
            ai_sdk_owns_history: true,
            follow_up_attachments: false,
            text_required: false,
        }
    }
}

impl Capabilities {
    /// Reads a capabilities answer. Unknown fields are ignored; a missing or mistyped field
    /// keeps its default (a server that answers `"nativeFollowUp": "yes"` gets no follow-ups).
    /// `None` when the body is not a JSON object at all.
    pub fn from_json(body: &[u8]) -> Option<Capabilities> {
        let value: Value = super::json::from_slice(body).ok()?;
        let obj = value.as_object()?;
        let d = Capabilities::default();
        let flag = |k: &str, dflt: bool| obj.get(k).and_then(Value::as_bool).unwrap_or(dflt);
        Some(Capabilities {
            native_follow_up: flag("nativeFollowUp", d.native_follow_up),
            ai_sdk_owns_history: flag("aiSdkOwnsHistory", d.ai_sdk_owns_history),
            follow_up_attachments: flag("followUpAttachments", d.follow_up_attachments),
            text_required: flag("textRequired", d.text_required),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_and_unknown_fields_keep_defaults() {
        let c = Capabilities::from_json(br#"{"nativeFollowUp":true,"other":1}"#).unwrap();
        assert!(c.native_follow_up);
        assert!(c.ai_sdk_owns_history);
        let c = Capabilities::from_json(br#"{"nativeFollowUp":"yes"}"#).unwrap();
        assert!(!c.native_follow_up);
        assert!(Capabilities::from_json(b"[1]").is_none());
        assert!(Capabilities::from_json(b"<html>").is_none());
    }
}
