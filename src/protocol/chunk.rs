//! The two chunk families of the stream (SPEC §3), parsed from one SSE event's data.
//!
//! Every event is parsed once into a JSON value and its fields are moved into a typed chunk.
//! A chunk type this version does not know is kept as [`Chunk::Unknown`] (reported, never a
//! parse failure); a known type with a required field missing is a [`ChunkError`].

use serde_json::Value;

use super::json::{get_bool, get_u64, take, take_str, Object};
use super::message::{Role, UIMessage};

/// Text and reasoning parts stream the same way; one variant serves both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartKind {
    Text,
    Reasoning,
}

/// The fields a tool chunk may carry. Which are required depends on the chunk type.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolChunk {
    pub tool_call_id: String,
    pub tool_name: Option<String>,
    pub input: Option<Value>,
    pub input_text_delta: Option<String>,
    pub output: Option<Value>,
    pub error_text: Option<String>,
    pub provider_executed: Option<bool>,
    pub dynamic: Option<bool>,
    pub preliminary: Option<bool>,
    pub title: Option<String>,
    pub provider_metadata: Option<Value>,
    pub approval_id: Option<String>,
}

/// AI SDK UI message stream chunks (`x-vercel-ai-ui-message-stream: v1`).
#[derive(Debug, Clone, PartialEq)]
pub enum UiChunk {
    Start {
        message_id: Option<String>,
        message_metadata: Option<Value>,
    },
    StartStep,
    FinishStep,
    Finish {
        finish_reason: Option<String>,
        message_metadata: Option<Value>,
    },
    Abort {
        reason: Option<String>,
    },
    Error {
        error_text: String,
    },
    MessageMetadata {
        message_metadata: Value,
    },
    PartStart {
        kind: PartKind,
        id: String,
        provider_metadata: Option<Value>,
    },
    PartDelta {
        kind: PartKind,
        id: String,
        delta: String,
        provider_metadata: Option<Value>,
    },
    PartEnd {
        kind: PartKind,
        id: String,
        provider_metadata: Option<Value>,
    },
    ToolInputStart(ToolChunk),
    ToolInputDelta(ToolChunk),
    ToolInputAvailable(ToolChunk),
    ToolInputError(ToolChunk),
    ToolOutputAvailable(ToolChunk),
    ToolOutputError(ToolChunk),
    ToolOutputDenied(ToolChunk),
    ToolApprovalRequest(ToolChunk),
    SourceUrl {
        source_id: String,
        url: String,
        title: Option<String>,
        provider_metadata: Option<Value>,
    },
    SourceDocument {
        source_id: String,
        media_type: String,
        title: String,
        filename: Option<String>,
        provider_metadata: Option<Value>,
    },
    File {
        url: String,
        media_type: String,
        provider_metadata: Option<Value>,
    },
}

/// A `data-NAME` chunk that is not part of the pi projection.
#[derive(Debug, Clone, PartialEq)]
pub struct DataChunk {
    /// Without the `data-` prefix.
    pub name: String,
    pub id: Option<String>,
    pub data: Value,
    pub transient: bool,
}

/// pi projection events, carried as `data-pi-*` chunks (and the two follow-up/turn chunks).
#[derive(Debug, Clone, PartialEq)]
pub enum PiEvent {
    Mode {
        enabled: bool,
    },
    AgentStart {
        seq: Option<u64>,
    },
    AgentEnd {
        seq: Option<u64>,
    },
    MessageStart {
        seq: Option<u64>,
        message_id: String,
        role: Role,
        client_nonce: Option<String>,
        text: Option<String>,
    },
    MessageEnd {
        seq: Option<u64>,
        message_id: String,
        role: Role,
        text: Option<String>,
        final_message: Option<UIMessage>,
    },
    PartStart {
        seq: Option<u64>,
        kind: PartKind,
        message_id: String,
        part_id: String,
    },
    PartDelta {
        seq: Option<u64>,
        kind: PartKind,
        message_id: String,
        part_id: String,
        delta: String,
    },
    PartEnd {
        seq: Option<u64>,
        kind: PartKind,
        message_id: String,
        part_id: String,
        text: Option<String>,
    },
    ToolCallStart {
        seq: Option<u64>,
        message_id: String,
        tool_call_id: String,
        tool_name: Option<String>,
    },
    ToolCallDelta {
        seq: Option<u64>,
        message_id: String,
        tool_call_id: String,
        delta: Value,
    },
    ToolCallEnd {
        seq: Option<u64>,
        message_id: String,
        tool_call_id: String,
        tool_name: Option<String>,
        input: Option<Value>,
    },
    ToolResult {
        seq: Option<u64>,
        message_id: String,
        tool_call_id: String,
        tool_name: Option<String>,
        output: Option<Value>,
        is_error: bool,
        details: Option<Value>,
    },
    /// `data-pi-message-delta`: a legacy duplicate of a text delta under the same seq.
    LegacyMessageDelta {
        seq: Option<u64>,
        message_id: String,
        delta: String,
    },
    FollowUpConsumed {
        client_nonce: Option<String>,
        client_seq: Option<u64>,
        message_id: Option<String>,
        text: Option<String>,
    },
    TurnStart {
        turn_id: String,
    },
    /// A `data-pi-*` name this version does not know: not history, handed to `onData`.
    Other {
        name: String,
        data: Value,
    },
}

impl PiEvent {
    /// The event's position in its turn's stream, if it carries one.
    pub fn seq(&self) -> Option<u64> {
        match self {
            PiEvent::AgentStart { seq }
            | PiEvent::AgentEnd { seq }
            | PiEvent::MessageStart { seq, .. }
            | PiEvent::MessageEnd { seq, .. }
            | PiEvent::PartStart { seq, .. }
            | PiEvent::PartDelta { seq, .. }
            | PiEvent::PartEnd { seq, .. }
            | PiEvent::ToolCallStart { seq, .. }
            | PiEvent::ToolCallDelta { seq, .. }
            | PiEvent::ToolCallEnd { seq, .. }
            | PiEvent::ToolResult { seq, .. }
            | PiEvent::LegacyMessageDelta { seq, .. } => *seq,
            PiEvent::Mode { .. }
            | PiEvent::FollowUpConsumed { .. }
            | PiEvent::TurnStart { .. }
            | PiEvent::Other { .. } => None,
        }
    }
}

/// One chunk of the stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Chunk {
    Ui(UiChunk),
    Pi(PiEvent),
    Data(DataChunk),
    /// A chunk type this version does not know, kept whole.
    Unknown {
        chunk_type: String,
        value: Value,
    },
}

/// A chunk that could not be read. The stream goes on; the store reports it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChunkError {
    #[error("chunk is not valid JSON: {0}")]
    Json(String),
    #[error("chunk is not an object with a string `type`")]
    NoType,
    #[error("`{chunk_type}` chunk is missing `{field}`")]
    Missing {
        chunk_type: String,
        field: &'static str,
    },
}

fn missing(ty: &str, field: &'static str) -> ChunkError {
    ChunkError::Missing {
        chunk_type: ty.to_string(),
        field,
    }
}

fn req_str(obj: &mut Object, ty: &str, field: &'static str) -> Result<String, ChunkError> {
    take_str(obj, field).ok_or_else(|| missing(ty, field))
}

/// Parses one SSE event's data (not `[DONE]`, which the caller handles).
pub fn parse_chunk(data: &str) -> Result<Chunk, ChunkError> {
    let value: Value = serde_json::from_str(data).map_err(|e| ChunkError::Json(e.to_string()))?;
    chunk_from_value(value)
}

/// Reads a chunk already parsed as JSON (as the pure helpers receive them from JS).
pub fn chunk_from_value(value: Value) -> Result<Chunk, ChunkError> {
    let Value::Object(mut obj) = value else {
        return Err(ChunkError::NoType);
    };
    let Some(ty) = take_str(&mut obj, "type") else {
        return Err(ChunkError::NoType);
    };
    if let Some(name) = ty.strip_prefix("data-") {
        return data_chunk(name, obj);
    }
    let o = &mut obj;
    let t = ty.as_str();
    let chunk = match t {
        "start" => UiChunk::Start {
            message_id: take_str(o, "messageId"),
            message_metadata: take(o, "messageMetadata"),
        },
        "start-step" => UiChunk::StartStep,
        "finish-step" => UiChunk::FinishStep,
        "finish" => UiChunk::Finish {
            finish_reason: take_str(o, "finishReason"),
            message_metadata: take(o, "messageMetadata"),
        },
        "abort" => UiChunk::Abort {
            reason: take_str(o, "reason"),
        },
        "error" => UiChunk::Error {
            error_text: req_str(o, t, "errorText")?,
        },
        "message-metadata" => UiChunk::MessageMetadata {
            message_metadata: take(o, "messageMetadata")
                .ok_or_else(|| missing(t, "messageMetadata"))?,
        },
        "text-start" | "reasoning-start" => UiChunk::PartStart {
            kind: kind_of(t),
            id: req_str(o, t, "id")?,
            provider_metadata: take(o, "providerMetadata"),
        },
        "text-delta" | "reasoning-delta" => UiChunk::PartDelta {
            kind: kind_of(t),
            id: req_str(o, t, "id")?,
            delta: req_str(o, t, "delta")?,
            provider_metadata: take(o, "providerMetadata"),
        },
        "text-end" | "reasoning-end" => UiChunk::PartEnd {
            kind: kind_of(t),
            id: req_str(o, t, "id")?,
            provider_metadata: take(o, "providerMetadata"),
        },
        "tool-input-start" => UiChunk::ToolInputStart(tool_chunk(o, t, &["toolName"])?),
        "tool-input-delta" => UiChunk::ToolInputDelta(tool_chunk(o, t, &["inputTextDelta"])?),
        "tool-input-available" => UiChunk::ToolInputAvailable(tool_chunk(o, t, &["toolName"])?),
        "tool-input-error" => {
            UiChunk::ToolInputError(tool_chunk(o, t, &["toolName", "errorText"])?)
        }
        "tool-output-available" => UiChunk::ToolOutputAvailable(tool_chunk(o, t, &[])?),
        "tool-output-error" => UiChunk::ToolOutputError(tool_chunk(o, t, &["errorText"])?),
        "tool-output-denied" => UiChunk::ToolOutputDenied(tool_chunk(o, t, &[])?),
        "tool-approval-request" => UiChunk::ToolApprovalRequest(tool_chunk(o, t, &["approvalId"])?),
        "source-url" => UiChunk::SourceUrl {
            source_id: req_str(o, t, "sourceId")?,
            url: req_str(o, t, "url")?,
            title: take_str(o, "title"),
            provider_metadata: take(o, "providerMetadata"),
        },
        "source-document" => UiChunk::SourceDocument {
            source_id: req_str(o, t, "sourceId")?,
            media_type: req_str(o, t, "mediaType")?,
            title: req_str(o, t, "title")?,
            filename: take_str(o, "filename"),
            provider_metadata: take(o, "providerMetadata"),
        },
        "file" => UiChunk::File {
            url: req_str(o, t, "url")?,
            media_type: req_str(o, t, "mediaType")?,
            provider_metadata: take(o, "providerMetadata"),
        },
        _ => {
            obj.insert("type".into(), Value::String(ty.clone()));
            return Ok(Chunk::Unknown {
                chunk_type: ty,
                value: Value::Object(obj),
            });
        }
    };
    Ok(Chunk::Ui(chunk))
}

fn kind_of(chunk_type: &str) -> PartKind {
    if chunk_type.starts_with("reasoning") {
        PartKind::Reasoning
    } else {
        PartKind::Text
    }
}

fn tool_chunk(o: &mut Object, t: &str, required: &[&'static str]) -> Result<ToolChunk, ChunkError> {
    for f in required {
        if !matches!(o.get(*f), Some(Value::String(_))) {
            return Err(missing(t, f));
        }
    }
    Ok(ToolChunk {
        tool_call_id: req_str(o, t, "toolCallId")?,
        tool_name: take_str(o, "toolName"),
        input: take(o, "input"),
        input_text_delta: take_str(o, "inputTextDelta"),
        output: take(o, "output"),
        error_text: take_str(o, "errorText"),
        provider_executed: get_bool(o, "providerExecuted"),
        dynamic: get_bool(o, "dynamic"),
        preliminary: get_bool(o, "preliminary"),
        title: take_str(o, "title"),
        provider_metadata: take(o, "providerMetadata"),
        approval_id: take_str(o, "approvalId"),
    })
}

fn data_chunk(name: &str, mut obj: Object) -> Result<Chunk, ChunkError> {
    let is_pi = name.starts_with("pi-") || name == "followup-consumed" || name == "turn-start";
    if !is_pi {
        return Ok(Chunk::Data(DataChunk {
            name: name.to_string(),
            id: take_str(&mut obj, "id"),
            transient: get_bool(&obj, "transient").unwrap_or(false),
            data: obj.remove("data").unwrap_or(Value::Null),
        }));
    }
    let data = match obj.remove("data") {
        Some(Value::Object(d)) => d,
        _ => return Err(missing(&format!("data-{name}"), "data")),
    };
    pi_event(name, data).map(Chunk::Pi)
}

/// Reads a pi projection event. `name` is the chunk type without `data-`.
fn pi_event(name: &str, mut d: Object) -> Result<PiEvent, ChunkError> {
    // `data-pi-message-update` wraps another pi event whose own `type` names it.
    if name == "pi-message-update" {
        return match take_str(&mut d, "type") {
            Some(inner) if inner.starts_with("pi-") && inner != "pi-message-update" => {
                pi_event(&inner, d)
            }
            _ => Err(missing("data-pi-message-update", "type")),
        };
    }
    let t = format!("data-{name}");
    let seq = get_u64(&d, "seq");
    let d = &mut d;
    let mid = |d: &mut Object| req_str(d, &t, "messageId");
    let role = |d: &mut Object| {
        take_str(d, "role")
            .as_deref()
            .and_then(Role::parse)
            .ok_or_else(|| missing(&t, "role"))
    };
    let kind = if name.starts_with("pi-reasoning") {
        PartKind::Reasoning
    } else {
        PartKind::Text
    };
    Ok(match name {
        "pi-mode" => PiEvent::Mode {
            enabled: get_bool(d, "enabled").unwrap_or(true),
        },
        "pi-agent-start" => PiEvent::AgentStart { seq },
        "pi-agent-end" => PiEvent::AgentEnd { seq },
        "pi-message-start" => PiEvent::MessageStart {
            seq,
            message_id: mid(d)?,
            role: role(d)?,
            client_nonce: take_str(d, "clientNonce"),
            text: take_str(d, "text"),
        },
        "pi-message-end" => PiEvent::MessageEnd {
            seq,
            message_id: mid(d)?,
            role: role(d)?,
            text: take_str(d, "text"),
            // A `final` snapshot that is not a valid message is dropped rather than failing
            // the whole end event: the deltas already built the message.
            final_message: take(d, "final").and_then(|v| UIMessage::from_json(v).ok()),
        },
        "pi-text-start" | "pi-reasoning-start" => PiEvent::PartStart {
            seq,
            kind,
            message_id: mid(d)?,
            part_id: req_str(d, &t, "partId")?,
        },
        "pi-text-delta" | "pi-reasoning-delta" => PiEvent::PartDelta {
            seq,
            kind,
            message_id: mid(d)?,
            part_id: req_str(d, &t, "partId")?,
            delta: req_str(d, &t, "delta")?,
        },
        "pi-text-end" | "pi-reasoning-end" => PiEvent::PartEnd {
            seq,
            kind,
            message_id: mid(d)?,
            part_id: req_str(d, &t, "partId")?,
            text: take_str(d, "text"),
        },
        "pi-tool-call-start" => PiEvent::ToolCallStart {
            seq,
            message_id: mid(d)?,
            tool_call_id: req_str(d, &t, "toolCallId")?,
            tool_name: take_str(d, "toolName"),
        },
        "pi-tool-call-delta" => PiEvent::ToolCallDelta {
            seq,
            message_id: mid(d)?,
            tool_call_id: req_str(d, &t, "toolCallId")?,
            delta: take(d, "delta").unwrap_or(Value::Null),
        },
        "pi-tool-call-end" => PiEvent::ToolCallEnd {
            seq,
            message_id: mid(d)?,
            tool_call_id: req_str(d, &t, "toolCallId")?,
            tool_name: take_str(d, "toolName"),
            input: take(d, "input"),
        },
        "pi-tool-result" => PiEvent::ToolResult {
            seq,
            message_id: mid(d)?,
            tool_call_id: req_str(d, &t, "toolCallId")?,
            tool_name: take_str(d, "toolName"),
            output: take(d, "output"),
            is_error: get_bool(d, "isError").unwrap_or(false),
            details: take(d, "details"),
        },
        "pi-message-delta" => PiEvent::LegacyMessageDelta {
            seq,
            message_id: mid(d)?,
            delta: req_str(d, &t, "delta")?,
        },
        "followup-consumed" => PiEvent::FollowUpConsumed {
            client_nonce: take_str(d, "clientNonce"),
            client_seq: get_u64(d, "clientSeq"),
            message_id: take_str(d, "messageId"),
            text: take_str(d, "text"),
        },
        "turn-start" => PiEvent::TurnStart {
            turn_id: req_str(d, &t, "turnId")?,
        },
        _ => PiEvent::Other {
            name: name.to_string(),
            data: Value::Object(std::mem::take(d)),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_types_are_kept_not_failed() {
        let c = parse_chunk(r#"{"type":"future-thing","x":1}"#).unwrap();
        match c {
            Chunk::Unknown { chunk_type, value } => {
                assert_eq!(chunk_type, "future-thing");
                assert_eq!(value["x"], 1);
            }
            other => panic!("{other:?}"),
        }
        let c = parse_chunk(r#"{"type":"data-pi-future","data":{"seq":3}}"#).unwrap();
        assert!(matches!(c, Chunk::Pi(PiEvent::Other { .. })));
    }

    #[test]
    fn message_update_envelope_is_unwrapped() {
        let c = parse_chunk(
            r#"{"type":"data-pi-message-update","data":{"type":"pi-text-delta","seq":4,"messageId":"m","partId":"0","delta":"x"}}"#,
        )
        .unwrap();
        assert_eq!(
            c,
            Chunk::Pi(PiEvent::PartDelta {
                seq: Some(4),
                kind: PartKind::Text,
                message_id: "m".into(),
                part_id: "0".into(),
                delta: "x".into()
            })
        );
    }

    #[test]
    fn malformed_chunks_are_typed_errors() {
        assert!(matches!(parse_chunk("{not json"), Err(ChunkError::Json(_))));
        assert_eq!(parse_chunk("[1]"), Err(ChunkError::NoType));
        assert!(matches!(
            parse_chunk(r#"{"type":"text-delta","id":"0"}"#),
            Err(ChunkError::Missing { field: "delta", .. })
        ));
        assert!(matches!(
            parse_chunk(r#"{"type":"data-pi-text-delta","data":{"seq":1}}"#),
            Err(ChunkError::Missing { .. })
        ));
    }

    #[test]
    fn data_chunks_keep_id_and_transient() {
        let c = parse_chunk(r#"{"type":"data-status","id":"s","data":{"a":1},"transient":true}"#)
            .unwrap();
        assert_eq!(
            c,
            Chunk::Data(DataChunk {
                name: "status".into(),
                id: Some("s".into()),
                data: serde_json::json!({"a":1}),
                transient: true
            })
        );
    }
}
