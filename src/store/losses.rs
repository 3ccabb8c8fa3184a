//! What the store could not show (SPEC §10): an event over `maxEventBytes`, an event that is
//! not a chunk, a chunk of an unknown type or one naming nothing, a history message that could
//! not be read. Each is kept in the session's `losses` (the snapshot's), besides the error or
//! diagnostic event the host hears, so a UI can tell its user that something is missing; a
//! tool result that was lost also fails its tool part, which would otherwise wait forever.

use serde::Serialize;

use super::*;
use crate::codec::partial_json::PartialJson;
use crate::codec::sse::Skipped;

/// The losses a session keeps: the newest.
const KEPT: usize = 32;

/// What was lost, by kind. The names are part of the JS API (`loss.code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[non_exhaustive]
pub enum LossCode {
    /// An event larger than `limits.maxEventBytes` was skipped.
    EventTooLarge,
    /// An event that is not a chunk (not JSON, not an object with a `type`) was skipped.
    BadChunk,
    /// A chunk of a type this version does not know was skipped.
    UnknownChunk,
    /// A chunk the store could not apply (it names nothing the history holds).
    NotApplied,
    /// A message of a history answer could not be read and is not shown.
    HistorySkipped,
}

/// One thing the store could not show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ChatStoreLoss"))]
#[serde(rename_all = "camelCase")]
pub struct Loss {
    /// What kind of loss.
    #[cfg_attr(feature = "ts", ts(inline))]
    pub code: LossCode,
    /// What was lost, for a person.
    pub message: String,
    /// The message that streamed when it happened (stream losses), or `None`.
    pub message_id: Option<String>,
    /// The tool call whose result was lost, if it was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub tool_call_id: Option<String>,
}

impl Session {
    /// Keeps a loss (the newest [`KEPT`]) and says so to the host: `error` as an error event,
    /// else as a diagnostic. `call`: the tool call whose result was lost.
    pub(super) fn lose(
        &mut self,
        code: LossCode,
        message: String,
        call: Option<String>,
        error: bool,
        out: &mut Outbox,
    ) {
        let message_id = match code {
            LossCode::HistorySkipped => None,
            _ => self.conversation.history().last().map(|m| m.id.clone()),
        };
        if self.history.losses.len() >= KEPT {
            self.history.losses.remove(0);
        }
        self.history.losses.push(Loss {
            code,
            message: message.clone(),
            message_id,
            tool_call_id: call,
        });
        out.events.push_back(match error {
            true => StoreEvent::Error {
                error: ChatError::protocol(message),
            },
            false => StoreEvent::Diagnostic { message },
        });
    }

    /// An event dropped as too large: what it was, from its head; a tool result fails its
    /// part (the server has the result: a reload shows it where the history is smaller than
    /// `maxBodyBytes`).
    pub(super) fn lose_event(&mut self, skipped: Skipped<'_>, out: &mut Outbox) {
        let (chunk_type, call) = read_head(skipped.head);
        let what = chunk_type.as_deref().unwrap_or("of unknown type");
        let message = format!(
            "an event {what} larger than {} bytes (limits.maxEventBytes) was skipped",
            skipped.limit
        );
        let result = matches!(
            chunk_type.as_deref(),
            Some("tool-output-available" | "data-pi-tool-result")
        );
        let call = call.filter(|_| result);
        if let Some(id) = &call {
            let error = format!(
                "The tool's result was larger than {} bytes (limits.maxEventBytes) and was not \
                 shown",
                skipped.limit
            );
            // (Not found: nothing waits for it; the loss is kept all the same.)
            self.conversation.add_tool_output(id, &Err(error));
        }
        self.lose(LossCode::EventTooLarge, message, call, true, out);
    }
}

#[cfg(feature = "pi")]
impl ChatStore {
    /// A line of the pi-native events stream the link skipped (SPEC §14, `native_link`'s
    /// module doc): kept as a loss; a tool result that was lost fails its part, and an
    /// answer's final too large to take ends the turn as a limit would
    /// ([`refuse_turn`](Self::refuse_turn)).
    pub(super) fn on_line_lost(
        &mut self,
        loss: crate::machines::native_link::LineLoss,
        now_ms: u64,
    ) {
        use crate::machines::native_link::LineLossKind as Kind;
        let head = &loss.head;
        let (code, error) = match loss.kind {
            Kind::TooLarge { .. } => (LossCode::EventTooLarge, true),
            Kind::Malformed => (LossCode::BadChunk, true),
            Kind::UnknownType => (LossCode::UnknownChunk, false),
            Kind::Elsewhere => (LossCode::NotApplied, false),
        };
        let unread = matches!(loss.kind, Kind::TooLarge { .. } | Kind::Malformed);
        let event = head.event_type.as_deref();
        let call = (head.tool_call_id.clone()).filter(|_| unread && event == Some("tool-result"));
        if let Some(id) = &call {
            let why = match loss.kind {
                Kind::TooLarge { limit } => {
                    format!("larger than {limit} bytes (limits.maxEventBytes)")
                }
                _ => "not readable".to_string(),
            };
            let error = format!("The tool's result was {why} and was not shown");
            // (Not found: nothing waits for it; the loss is kept all the same.)
            self.session.conversation.add_tool_output(id, &Err(error));
        }
        let answer = event == Some("message-end") && head.role.as_deref() != Some("user");
        let limit = match loss.kind {
            Kind::TooLarge { limit } if answer && self.session.turn.phase.running() => Some(limit),
            _ => None,
        };
        let error = error && limit.is_none();
        (self.session).lose(code, loss.message, call, error, &mut self.outbox);
        self.revisions.touch();
        if let Some(limit) = limit {
            let mut error = ChatError::new(
                ErrorKind::LimitExceeded,
                format!(
                    "The answer's final message was larger than {limit} bytes \
                     (limits.maxEventBytes): the turn was stopped"
                ),
            );
            error.field = Some("limits.maxEventBytes".into());
            self.refuse_turn(error, now_ms);
        }
    }
}

/// The chunk type and tool call id of an event from the start of its data, as far as they
/// are in it (a chunk puts its type and ids before its payload).
fn read_head(head: &str) -> (Option<String>, Option<String>) {
    let mut p = PartialJson::new();
    p.push(head);
    let Some(Value::Object(o)) = p.value_ref() else {
        return (None, None);
    };
    let s = |o: &serde_json::Map<String, Value>, k: &str| o.get(k)?.as_str().map(str::to_string);
    let call = s(o, "toolCallId").or_else(|| match o.get("data") {
        Some(Value::Object(d)) => s(d, "toolCallId"),
        _ => None,
    });
    (s(o, "type"), call)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_of_a_dropped_event_names_its_type_and_tool_call() {
        let ai = r#"{"type":"tool-output-available","toolCallId":"c1","output":{"content":"xxxx"#;
        assert_eq!(
            read_head(ai),
            (Some("tool-output-available".into()), Some("c1".into()))
        );
        let pi = r#"{"type":"data-pi-tool-result","data":{"seq":4,"messageId":"m","toolCallId":"c2","output":[{"#;
        assert_eq!(
            read_head(pi),
            (Some("data-pi-tool-result".into()), Some("c2".into()))
        );
        // A key cut in the middle is not read as a value.
        assert_eq!(read_head(r#"{"type":"text-del"#).1, None);
        assert_eq!(read_head("not json"), (None, None));
    }
}
