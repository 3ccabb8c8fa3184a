//! The pi-native protocol's wire shapes (SPEC §14, `reference/pi-native-protocol.md`): NDJSON
//! frames (events in their `{ref, seq, event}` envelope or bare, and heartbeats), the session
//! document of `GET …/state`, the messages (`BoringChatMessage`) as `UIMessage`s, and the
//! `/events` answers that say the cursor is out of range.
//!
//! One deliberate deviation from the upstream client: an event type this version does not know
//! is not a protocol error but [`EventKind::Unknown`], skipped while its `seq` still moves the
//! cursor, so a newer server does not force a reconnect and a `/state` re-read on every such
//! event.

use serde_json::{json, Value};

type Object = serde_json::Map<String, Value>;

use super::chunk::PartKind;
use super::json::{take_str, to_string};
use super::{Role, UIMessage};

mod message;
pub use message::message_from_native;
pub(crate) use message::native_message;

mod state;
pub use state::{parse_state, read_state, StateDoc, StreamedPart};

/// One line of the event stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// `{"type":"heartbeat","now":…}`: liveness only, no seq.
    Heartbeat,
    /// An event, with the session-wide seq it carries.
    Event(NativeEvent),
}

/// An event of the stream.
#[derive(Debug, Clone, PartialEq)]
pub struct NativeEvent {
    /// `seq`: the event's place in the session, from 1, +1 per event.
    pub seq: u64,
    /// What happened.
    pub kind: EventKind,
}

/// How a run ended (`agent-end`'s `status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndStatus {
    /// `ok`.
    Ok,
    /// `aborted`: stopped or interrupted.
    Aborted,
    /// `error`.
    Error,
}

/// A follow-up waiting in the server's queue (`queue.followUps[i]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueRow {
    /// `id`: positional on the server, not an identity.
    pub id: String,
    /// `displayText`.
    pub text: String,
    /// `clientNonce`, when the server could attach it.
    pub client_nonce: Option<String>,
    /// `clientSeq`, when the server could attach it.
    pub client_seq: Option<u64>,
}

/// The events (`type`), with the fields the store uses.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    /// `agent-start`: a run began.
    AgentStart {
        /// `turnId`.
        turn_id: String,
    },
    /// `agent-end`: a run ended, unless `will_retry`.
    AgentEnd {
        /// `turnId`.
        turn_id: String,
        /// `status`.
        status: EndStatus,
        /// `willRetry`: pi goes on with the same run; not an end.
        will_retry: bool,
    },
    /// `message-start`.
    MessageStart {
        /// `messageId`.
        message_id: String,
        /// `role`.
        role: Role,
        /// `clientNonce`: the prompt or follow-up this user message is.
        client_nonce: Option<String>,
        /// `clientSeq`.
        client_seq: Option<u64>,
        /// `text`: a user message's display text.
        text: Option<String>,
        /// `createdAt` (ISO), kept in the message's metadata as `/state` keeps it.
        created_at: Option<String>,
    },
    /// `message-delta`: text appended to a part.
    MessageDelta {
        /// `messageId`.
        message_id: String,
        /// `partId`.
        part_id: String,
        /// `kind`: text or reasoning.
        kind: PartKind,
        /// `delta`.
        delta: String,
    },
    /// `message-part-end`: the part's whole text.
    PartEnd {
        /// `messageId`.
        message_id: String,
        /// `partId`.
        part_id: String,
        /// `kind`.
        kind: PartKind,
        /// `text`.
        text: String,
    },
    /// `message-end`: the message's canonical form.
    MessageEnd {
        /// `messageId`.
        message_id: String,
        /// `final`, read as a `UIMessage` (`None` when unreadable: the deltas stand).
        final_message: Option<UIMessage>,
        /// The final's part ids, one per part of `final_message` (a tool's is its call id):
        /// what its parts are matched by against the streamed ones, which a `UIMessage` does
        /// not keep.
        part_ids: Vec<Option<String>>,
    },
    /// `tool-call`: the model called a tool, which now runs.
    ToolCall {
        /// `messageId`.
        message_id: String,
        /// `toolCallId`.
        tool_call_id: String,
        /// `toolName`.
        tool_name: String,
        /// `input`.
        input: Value,
        /// `ui`: rendering hints (`rendererId`, `displayGroup`, `icon`, `details`).
        ui: Option<Value>,
    },
    /// `tool-result`.
    ToolResult {
        /// `messageId`.
        message_id: String,
        /// `toolCallId`.
        tool_call_id: String,
        /// The result's `content` (the whole `output` when it has none).
        output: Value,
        /// The result's `details`, beside the output for renderers.
        details: Option<Value>,
        /// `isError`.
        is_error: bool,
        /// `errorText`.
        error_text: Option<String>,
        /// `ui`: rendering hints, merged with the call's.
        ui: Option<Value>,
    },
    /// `queue-updated`: the whole queue.
    QueueUpdated {
        /// `queue.followUps`.
        rows: Vec<QueueRow>,
    },
    /// `followup-consumed`.
    FollowUpConsumed {
        /// `messageId`.
        message_id: String,
        /// `clientNonce`.
        client_nonce: Option<String>,
        /// `clientSeq`.
        client_seq: Option<u64>,
    },
    /// `error`: the turn failed.
    Error {
        /// `turnId`: the run that failed, when the server says.
        turn_id: Option<String>,
        /// `error.code`.
        code: String,
        /// `error.message`.
        message: String,
    },
    /// A known event that is not history (`model-changed`, `file-changed`, `usage`,
    /// `ui-command`, `auto-retry-*`): for the host's `onData`.
    Other {
        /// `type`.
        name: String,
        /// The event's other fields.
        data: Value,
    },
    /// A type this version does not know: skipped (its seq counts).
    Unknown {
        /// `type`.
        name: String,
    },
}

/// A line that is not a frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// Not JSON.
    #[error("event line is not JSON: {0}")]
    Json(String),
    /// JSON, but not an event of the protocol (a required field missing or of the wrong type,
    /// an envelope whose seq differs from its event's).
    #[error("event line does not fit the protocol: {0}")]
    Schema(String),
}

const OTHER: [&str; 6] = [
    "model-changed",
    "file-changed",
    "usage",
    "ui-command",
    "auto-retry-start",
    "auto-retry-end",
];

fn schema(what: impl Into<String>) -> FrameError {
    FrameError::Schema(what.into())
}

fn opt_u64(o: &Object, key: &str) -> Option<u64> {
    o.get(key).and_then(Value::as_u64)
}

/// The largest seq taken: JS numbers hold integers exactly up to 2^53 − 1, so a larger one
/// cannot be the cursor a JS client sends back (upstream's schema reads it as a number).
pub const MAX_SEQ: u64 = (1 << 53) - 1;

/// A seq: an integer from 0 to [`MAX_SEQ`] (not a string, not fractional, not null).
fn seq_of(o: &Object) -> Option<u64> {
    opt_u64(o, "seq").filter(|&s| s <= MAX_SEQ)
}

/// The session an envelope addresses its event to (`ref`), as far as it says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventRef {
    /// `ref.agentTypeId`.
    pub agent_type: Option<String>,
    /// `ref.sessionId`.
    pub session_id: Option<String>,
}

impl EventRef {
    fn of(o: &Object) -> Option<EventRef> {
        let Some(Value::Object(r)) = o.get("ref") else {
            return None;
        };
        let s = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_string);
        Some(EventRef {
            agent_type: s("agentTypeId"),
            session_id: s("sessionId"),
        })
    }

    /// It names another session than `session_id` (one that names none is taken as this
    /// one's). The agent type is not compared: a server may name the agent of a path by
    /// another id (the reference server names every one `pi`), and session ids are the
    /// server's own, one per session.
    pub fn elsewhere(&self, session_id: &str) -> bool {
        self.session_id.as_deref().is_some_and(|s| s != session_id)
    }
}

/// Reads one trimmed, non-blank line.
pub fn parse_line(line: &str) -> Result<Frame, FrameError> {
    parse_addressed_line(line).map(|(frame, _)| frame)
}

/// [`parse_line`], with the envelope's `ref` (`None` for a bare event or a heartbeat).
pub fn parse_addressed_line(line: &str) -> Result<(Frame, Option<EventRef>), FrameError> {
    let value =
        super::json::from_slice(line.as_bytes()).map_err(|e| FrameError::Json(e.to_string()))?;
    let at = match &value {
        Value::Object(o) if o.contains_key("event") => EventRef::of(o),
        _ => None,
    };
    parse_frame(value).map(|frame| (frame, at))
}

/// Reads one frame already parsed as JSON.
pub fn parse_frame(value: Value) -> Result<Frame, FrameError> {
    let Value::Object(mut o) = value else {
        return Err(schema("not an object"));
    };
    if let Some(Value::Object(event)) = o.remove("event") {
        // The wire shape: `{ref, seq, event}`, both seqs equal.
        let outer = seq_of(&o).ok_or_else(|| schema("envelope without a seq"))?;
        let ev = parse_event(event)?;
        if ev.seq != outer {
            return Err(schema(format!(
                "envelope seq {outer} differs from event seq {}",
                ev.seq
            )));
        }
        return Ok(Frame::Event(ev));
    }
    if o.get("type").and_then(Value::as_str) == Some("heartbeat") {
        return Ok(Frame::Heartbeat);
    }
    parse_event(o).map(Frame::Event)
}

/// What the start of a line that could not be read says of its event, as far as it is there
/// (an envelope puts `ref` and `seq` first, an event its `type`, `seq` and ids before its
/// payload): what was lost, and whether the cursor may move past it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrameHead {
    /// The event's seq, when one valid seq is there: an envelope's and its event's that
    /// differ, or a seq that is no integer up to [`MAX_SEQ`], give none.
    pub seq: Option<u64>,
    /// The event's `type`.
    pub event_type: Option<String>,
    /// `messageId`.
    pub message_id: Option<String>,
    /// `toolCallId`.
    pub tool_call_id: Option<String>,
    /// The message's `role` (a `message-start`'s, or a `message-end`'s final's).
    pub role: Option<String>,
    /// The envelope's `ref`.
    pub at: Option<EventRef>,
}

/// Reads what [`FrameHead`] says from `text`: a whole line that did not fit the protocol, or
/// the head of one too long to take.
pub fn read_frame_head(text: &str) -> FrameHead {
    let mut p = crate::codec::partial_json::PartialJson::new();
    p.push(text);
    let Some(Value::Object(o)) = p.value_ref() else {
        return FrameHead::default();
    };
    let s = |o: &Object, k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    let (event, seq, at) = match o.get("event") {
        Some(Value::Object(ev)) => {
            // One of the two (the other cut off or left out), or both equal.
            let seq = match (
                o.get("seq").map(|_| seq_of(o)),
                ev.get("seq").map(|_| seq_of(ev)),
            ) {
                (Some(Some(a)), None) | (None, Some(Some(a))) => Some(a),
                (Some(Some(a)), Some(Some(b))) if a == b => Some(a),
                _ => None,
            };
            (ev, seq, EventRef::of(o))
        }
        _ => (o, seq_of(o), None),
    };
    let role = s(event, "role").or_else(|| match event.get("final") {
        Some(Value::Object(f)) => s(f, "role"),
        _ => None,
    });
    FrameHead {
        seq,
        event_type: s(event, "type"),
        message_id: s(event, "messageId"),
        tool_call_id: s(event, "toolCallId"),
        role,
        at,
    }
}

fn parse_event(mut o: Object) -> Result<NativeEvent, FrameError> {
    let ty = take_str(&mut o, "type").ok_or_else(|| schema("event without type"))?;
    let seq = seq_of(&o).ok_or_else(|| schema(format!("{ty} without a seq")))?;
    let req =
        |o: &mut Object, k: &str| take_str(o, k).ok_or_else(|| schema(format!("{ty} without {k}")));
    let kind = |o: &mut Object| match take_str(o, "kind").as_deref() {
        Some("text") => Ok(PartKind::Text),
        Some("reasoning") => Ok(PartKind::Reasoning),
        _ => Err(schema(format!("{ty} without a known kind"))),
    };
    let kind = match ty.as_str() {
        "agent-start" => EventKind::AgentStart {
            turn_id: req(&mut o, "turnId")?,
        },
        "agent-end" => EventKind::AgentEnd {
            turn_id: req(&mut o, "turnId")?,
            status: match take_str(&mut o, "status").as_deref() {
                Some("ok") => EndStatus::Ok,
                Some("aborted") => EndStatus::Aborted,
                Some("error") => EndStatus::Error,
                _ => return Err(schema("agent-end without a known status")),
            },
            will_retry: o.get("willRetry").and_then(Value::as_bool).unwrap_or(false),
        },
        "message-start" => EventKind::MessageStart {
            message_id: req(&mut o, "messageId")?,
            role: take_str(&mut o, "role")
                .as_deref()
                .and_then(Role::parse)
                .ok_or_else(|| schema("message-start without a known role"))?,
            client_nonce: take_str(&mut o, "clientNonce"),
            client_seq: opt_u64(&o, "clientSeq"),
            text: take_str(&mut o, "text"),
            created_at: take_str(&mut o, "createdAt"),
        },
        "message-delta" => EventKind::MessageDelta {
            message_id: req(&mut o, "messageId")?,
            part_id: req(&mut o, "partId")?,
            kind: kind(&mut o)?,
            delta: req(&mut o, "delta")?,
        },
        "message-part-end" => EventKind::PartEnd {
            message_id: req(&mut o, "messageId")?,
            part_id: req(&mut o, "partId")?,
            kind: kind(&mut o)?,
            text: req(&mut o, "text")?,
        },
        "message-end" => {
            let message_id = req(&mut o, "messageId")?;
            let read = o.remove("final").and_then(|f| native_message(f).ok());
            let (final_message, part_ids) = match read {
                Some((m, ids)) => (Some(m), ids),
                None => (None, Vec::new()),
            };
            EventKind::MessageEnd {
                message_id,
                final_message,
                part_ids,
            }
        }
        "tool-call" => EventKind::ToolCall {
            message_id: req(&mut o, "messageId")?,
            tool_call_id: req(&mut o, "toolCallId")?,
            tool_name: req(&mut o, "toolName")?,
            input: o.remove("input").unwrap_or_else(|| json!({})),
            ui: o.remove("ui").filter(Value::is_object),
        },
        "tool-result" => {
            let (output, details) = split_result(o.remove("output").unwrap_or(Value::Null));
            EventKind::ToolResult {
                message_id: req(&mut o, "messageId")?,
                tool_call_id: req(&mut o, "toolCallId")?,
                output,
                details,
                is_error: o.get("isError").and_then(Value::as_bool).unwrap_or(false),
                error_text: take_str(&mut o, "errorText"),
                ui: o.remove("ui").filter(Value::is_object),
            }
        }
        "queue-updated" => EventKind::QueueUpdated {
            rows: queue_rows(o.get("queue"))
                .ok_or_else(|| schema("queue-updated without a queue"))?,
        },
        "followup-consumed" => EventKind::FollowUpConsumed {
            message_id: req(&mut o, "messageId")?,
            client_nonce: take_str(&mut o, "clientNonce"),
            client_seq: opt_u64(&o, "clientSeq"),
        },
        "error" => {
            let mut e = match o.remove("error") {
                Some(Value::Object(e)) => e,
                _ => return Err(schema("error without error")),
            };
            EventKind::Error {
                turn_id: take_str(&mut o, "turnId"),
                code: take_str(&mut e, "code").unwrap_or_default(),
                message: take_str(&mut e, "message").unwrap_or_default(),
            }
        }
        name if OTHER.contains(&name) => {
            o.remove("seq");
            EventKind::Other {
                name: ty.clone(),
                data: Value::Object(o),
            }
        }
        _ => EventKind::Unknown { name: ty.clone() },
    };
    Ok(NativeEvent { seq, kind })
}

/// A tool result as the store keeps it: pi's whole result `{content, details?}` (live) or
/// `{content, details}` / the bare `content` (stored) → the content, and the details apart.
fn split_result(output: Value) -> (Value, Option<Value>) {
    match output {
        Value::Object(mut o) if o.contains_key("content") => {
            let details = o.remove("details").filter(|d| !d.is_null());
            (o.remove("content").unwrap_or(Value::Null), details)
        }
        other => (other, None),
    }
}

fn queue_rows(queue: Option<&Value>) -> Option<Vec<QueueRow>> {
    let rows = queue?.get("followUps")?.as_array()?;
    Some(
        rows.iter()
            .filter_map(|r| {
                Some(QueueRow {
                    id: r.get("id")?.as_str()?.to_string(),
                    text: r
                        .get("displayText")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    client_nonce: r
                        .get("clientNonce")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    client_seq: r.get("clientSeq").and_then(Value::as_u64),
                })
            })
            .collect(),
    )
}

/// Why an `/events` answer says to re-read `/state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeError {
    /// The cursor is older than what the server keeps.
    ReplayGap {
        /// `latestSeq`.
        latest_seq: u64,
    },
    /// The cursor is past the server's latest seq (a server restarted, a session rewound).
    CursorAhead {
        /// `latestSeq`.
        latest_seq: u64,
    },
}

/// Classifies an `/events` error answer as the upstream client does: only a 409 whose code
/// (or message, or `details.reason`) names a replay gap or a cursor ahead, with a usable
/// `latestSeq` (in `details` or beside the code), is a range error.
pub fn classify_events_error(status: u16, body: &[u8]) -> Option<RangeError> {
    if status != 409 {
        return None;
    }
    let v: Value = super::json::from_slice(body).ok()?;
    let e = v.get("error")?;
    let details = e.get("details");
    let latest_seq = details
        .and_then(|d| d.get("latestSeq"))
        .or_else(|| e.get("latestSeq"))
        .and_then(Value::as_u64)?;
    let said = |name: &str| {
        [
            e.get("code"),
            e.get("message"),
            details.and_then(|d| d.get("reason")),
        ]
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(|s| {
            s.eq_ignore_ascii_case(name) || s.eq_ignore_ascii_case(&format!("AGENT_SESSION_{name}"))
        })
    };
    if said("replay_gap") {
        Some(RangeError::ReplayGap { latest_seq })
    } else if said("cursor_ahead") {
        Some(RangeError::CursorAhead { latest_seq })
    } else {
        None
    }
}
