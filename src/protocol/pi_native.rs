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

/// A `BoringChatMessage` as a `UIMessage`, by the mapping `reference/pi-native-protocol.md`
/// §8 recommends: `text` / `reasoning` as they are (`done`), `tool-call` as a static
/// `tool-<toolName>` part whose output is the result's content (an `aborted` call becomes
/// `output-error` "aborted": the AI SDK has no such state) and whose `ui` hints are kept,
/// `file` as a file part, `notice` as a `data-notice` part; the message's `status`,
/// `createdAt`, `turnId`, `clientNonce`, `clientSeq` and `piEntryId` in its metadata.
pub fn message_from_native(v: Value) -> Result<UIMessage, String> {
    native_message(v).map(|(m, _)| m)
}

/// [`message_from_native`], with each part's native id beside it (a tool's is its call id):
/// a final is merged into the streamed parts by them (`stream::native_merge`).
pub(crate) fn native_message(v: Value) -> Result<(UIMessage, Vec<Option<String>>), String> {
    let Value::Object(mut m) = v else {
        return Err("message is not an object".into());
    };
    let (parts, ids): (Vec<Value>, Vec<Option<String>>) = match m.remove("parts") {
        Some(Value::Array(ps)) => one_part_per_id(ps.into_iter().filter_map(part_from_native))
            .into_iter()
            .unzip(),
        _ => (Vec::new(), Vec::new()),
    };
    let mut metadata = Object::new();
    for k in [
        "status",
        "createdAt",
        "turnId",
        "clientNonce",
        "clientSeq",
        "piEntryId",
    ] {
        if let Some(v) = m.remove(k).filter(|v| !v.is_null()) {
            metadata.insert(k.into(), v);
        }
    }
    // `{id, role, metadata?, parts}` made by hand: the `json!` macro copied every part again
    // through serde.
    let mut out = Object::new();
    for k in ["id", "role"] {
        out.insert(k.into(), m.remove(k).unwrap_or(Value::Null));
    }
    out.insert("parts".into(), Value::Array(parts));
    if !metadata.is_empty() {
        out.insert("metadata".into(), Value::Object(metadata));
    }
    let msg = UIMessage::from_json(Value::Object(out))?;
    // A part the reader left out would shift every id after it: then none is known.
    let ids = match ids.len() == msg.parts.len() {
        true => ids,
        false => vec![None; msg.parts.len()],
    };
    Ok((msg, ids))
}

/// A message may list one part twice: a tool call (its call, then a settled copy without
/// the input) is one part, at the first copy's place, with the settled copy's state and
/// result (a later copy never undoes a settled one) and the first input that is not empty;
/// a text or reasoning part under one id twice is the fuller of the two, at the first place
/// (upstream `piChatPartMerging.ts` ranks them so).
fn one_part_per_id(
    parts: impl Iterator<Item = (Value, Option<String>)>,
) -> Vec<(Value, Option<String>)> {
    let settled = |p: &Value| {
        matches!(
            p["state"].as_str(),
            Some("output-available" | "output-error")
        )
    };
    let input = |p: &Value| {
        p.get("input")
            .filter(|i| i.as_object().is_none_or(|o| !o.is_empty()))
            .cloned()
    };
    let text_len = |p: &Value| p["text"].as_str().map_or(0, |t| t.chars().count());
    let mut out: Vec<(Value, Option<String>)> = Vec::new();
    for (p, id) in parts {
        let tool = p.get("toolCallId").is_some();
        let same = id.as_ref().and_then(|id| {
            out.iter()
                .position(|(q, qid)| qid.as_ref() == Some(id) && q["type"] == p["type"])
        });
        let Some(at) = same else {
            out.push((p, id));
            continue;
        };
        let kept = &mut out[at].0;
        if !tool {
            if text_len(&p) >= text_len(kept) {
                *kept = p;
            }
            continue;
        }
        let first_input = input(kept).or_else(|| input(&p));
        if settled(&p) || !settled(kept) {
            *kept = p;
        }
        if let Some(i) = first_input {
            kept["input"] = i;
        }
    }
    out
}

/// One native part as a `UIMessage` part, with its native id.
fn part_from_native(p: Value) -> Option<(Value, Option<String>)> {
    let Value::Object(mut p) = p else { return None };
    let ty = take_str(&mut p, "type")?;
    let id = p.get("id").and_then(Value::as_str).map(str::to_string);
    let text = |p: &mut Object| {
        p.remove("text")
            .filter(Value::is_string)
            .unwrap_or_else(|| json!(""))
    };
    let part = match ty.as_str() {
        // Not `json!`: it would copy the text once more through serde.
        "text" | "reasoning" => {
            let mut o = Object::new();
            o.insert("type".into(), Value::String(ty.clone()));
            o.insert("text".into(), text(&mut p));
            o.insert("state".into(), Value::String("done".into()));
            Value::Object(o)
        }
        "tool-call" => {
            let name = take_str(&mut p, "toolName")?;
            // Named beside its type, as a streamed pi tool part is (SPEC §7): a reload renders
            // what was streamed.
            let mut part = json!({
                "type": format!("tool-{name}"),
                "toolCallId": p.remove("id")?,
                "toolName": name,
                "input": p.remove("input").filter(|v| !v.is_null()).unwrap_or_else(|| json!({})),
            });
            let (output, details) = split_result(p.remove("output").unwrap_or(Value::Null));
            let state = match take_str(&mut p, "state").as_deref() {
                Some("output-available") => {
                    part["output"] = output;
                    "output-available"
                }
                Some("output-error") => {
                    part["errorText"] = json!(take_str(&mut p, "errorText").unwrap_or_default());
                    "output-error"
                }
                Some("aborted") => {
                    part["errorText"] = json!("aborted");
                    "output-error"
                }
                Some("input-streaming") => "input-streaming",
                _ => "input-available",
            };
            part["state"] = json!(state);
            if let Some(d) = details {
                part["details"] = d;
            }
            if let Some(ui) = p.remove("ui").filter(Value::is_object) {
                part["ui"] = ui;
            }
            part
        }
        "file" => {
            let mut f = json!({
                "type": "file",
                "mediaType": p.remove("mediaType").filter(Value::is_string).unwrap_or_else(|| json!("application/octet-stream")),
                "url": p.remove("url").filter(Value::is_string).unwrap_or_else(|| json!("")),
            });
            if let Some(name) = p.remove("filename").filter(Value::is_string) {
                f["filename"] = name;
            }
            f
        }
        "notice" => {
            let mut n = json!({"type": "data-notice", "data": {"level": p.remove("level"), "text": p.remove("text")}});
            if let Some(id) = p.remove("id").filter(Value::is_string) {
                n["id"] = id;
            }
            n
        }
        _ => return None,
    };
    Some((part, id))
}

/// The session document of `GET …/state`.
#[derive(Debug, Clone, PartialEq)]
pub struct StateDoc {
    /// `seq`: the cursor the events stream opens from.
    pub seq: u64,
    /// `state.status`: `idle`, `streaming` or `error`.
    pub status: String,
    /// `state.activeTurnId`.
    pub active_turn_id: Option<String>,
    /// `state.messages`.
    pub messages: Vec<UIMessage>,
    /// `state.queue.followUps`.
    pub queue: Vec<QueueRow>,
    /// `state.error.message`, when the session is in error.
    pub error: Option<String>,
    /// The assistant messages still streaming, each with its text and reasoning parts as
    /// `(reasoning, partId, position)`: the events after `seq` extend those parts.
    pub streaming: Vec<(String, Vec<StreamedPart>)>,
}

/// `(reasoning, partId, position)`: a streaming message's part its events extend.
pub type StreamedPart = (bool, String, usize);

/// A streaming message's text and reasoning parts by the `partId`s their events may use: its
/// part's own id, and the content index that id ends in (`<messageId>:text:<k>`, reference
/// §8: the stream numbers a message's parts by index), with the part's position.
fn streaming_parts(m: &UIMessage, ids: &[Option<String>]) -> Option<(String, Vec<StreamedPart>)> {
    let status = m.metadata.as_deref().and_then(|d| d.get("status"));
    if status.and_then(Value::as_str) != Some("streaming") {
        return None;
    }
    let mut out = Vec::new();
    for (position, (part, part_id)) in m.parts.iter().zip(ids).enumerate() {
        let (reasoning, ty) = match part {
            super::Part::Text { .. } => (false, "text"),
            super::Part::Reasoning { .. } => (true, "reasoning"),
            _ => continue,
        };
        let Some(part_id) = part_id else { continue };
        if let Some(index) = part_id.strip_prefix(&format!("{}:{ty}:", m.id)) {
            out.push((reasoning, index.to_string(), position));
        }
        out.push((reasoning, part_id.clone(), position));
    }
    Some((m.id.clone(), out))
}

/// Reads a `/state` answer (`{ref, seq, summary, state}`; a bare `PiChatSnapshot` too).
/// A `protocolVersion` other than 1 is refused, as the upstream client refuses it.
pub fn parse_state(v: Value) -> Result<StateDoc, String> {
    state_doc(v, |_, list| match list {
        Some(Value::Array(ms)) => ms
            .into_iter()
            .filter_map(|m| native_message(m).ok())
            .collect(),
        _ => Vec::new(),
    })
}

/// [`parse_state`] of a `/state` answer's bytes, without a JSON tree of the whole history:
/// each message is converted as soon as the reader has it (the messages route's
/// `HistoryParser`, which tells the lists a state holds its messages in), and the rest of
/// the document is read as [`parse_state`] reads it. A body that is not JSON is refused with
/// the JSON reader's own words.
pub fn read_state(body: &[u8]) -> Result<StateDoc, String> {
    let mut reader = crate::reduce::history::HistoryParser::for_state(native_message);
    reader.push(body);
    let Some(lists) = reader.finish_state() else {
        // In the whole document's reader's words (it refuses what the list reader refuses).
        let error = crate::protocol::json::from_slice(body).err();
        return Err(error.map_or_else(|| "state is not JSON".into(), |e| e.to_string()));
    };
    let crate::reduce::history::StateLists {
        skeleton,
        top,
        nested,
    } = lists;
    let mut lists = [top, nested];
    state_doc(skeleton, |nested, list| match list {
        Some(Value::Array(_)) => std::mem::take(&mut lists[usize::from(nested)]),
        _ => Vec::new(),
    })
}

/// The `/state` document of [`parse_state`], whose messages `messages` converts: told
/// whether they are `state.messages` (else the top-level list) and given that key's value.
fn state_doc(
    v: Value,
    messages: impl FnOnce(bool, Option<Value>) -> Vec<(UIMessage, Vec<Option<String>>)>,
) -> Result<StateDoc, String> {
    let outer_seq = v.get("seq").and_then(Value::as_u64);
    let (mut s, nested) = match v {
        Value::Object(mut o) => match o.remove("state") {
            Some(Value::Object(s)) => (s, true),
            _ => (o, false),
        },
        _ => return Err("state is not an object".into()),
    };
    match s.get("protocolVersion").and_then(Value::as_u64) {
        Some(1) => {}
        _ => {
            // As JSON text: `{:?}` would link Debug formatting into the wasm.
            let v = s
                .get("protocolVersion")
                .map_or("(missing)".into(), to_string);
            return Err(format!("unsupported protocolVersion {v}"));
        }
    }
    let seq = opt_u64(&s, "seq")
        .or(outer_seq)
        .ok_or("state without seq")?;
    let converted = messages(nested, s.remove("messages"));
    let mut streaming = Vec::new();
    let mut messages = Vec::with_capacity(converted.len());
    for (m, ids) in converted {
        streaming.extend(streaming_parts(&m, &ids));
        messages.push(m);
    }
    Ok(StateDoc {
        seq,
        status: take_str(&mut s, "status").unwrap_or_else(|| "idle".into()),
        active_turn_id: take_str(&mut s, "activeTurnId"),
        messages,
        queue: queue_rows(s.get("queue")).unwrap_or_default(),
        error: s
            .get("error")
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .map(str::to_string),
        streaming,
    })
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
