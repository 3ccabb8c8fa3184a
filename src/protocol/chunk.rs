//! The two chunk families of the stream (SPEC §3), parsed from one SSE event's data.
//!
//! Every event is parsed once into a JSON value and its fields are moved into a typed chunk.
//! A chunk type this version does not know is kept as [`Chunk::Unknown`] (reported, never a
//! parse failure); a known type with a required field missing is a [`ChunkError`].

use serde_json::Value;

use super::json::{get_bool, get_u64, take, take_str, Object};
use super::message::{Role, UIMessage};
use super::part::{plain_chunk, plain_chunk_schema, Part};

/// Text and reasoning parts stream the same way; one variant serves both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartKind {
    Text,
    Reasoning,
}

/// The fields a `tool-input-*` / `tool-output-*` chunk may carry. Which are required depends
/// on the chunk type. `input` and `output` keep a JSON `null` as `Some(Value::Null)`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolChunk {
    pub tool_call_id: String,
    pub tool_name: Option<String>,
    pub input: Option<Value>,
    pub input_text_delta: Option<String>,
    /// `json` (the default) or `text`.
    pub input_encoding: Option<String>,
    pub output: Option<Value>,
    pub error_text: Option<String>,
    pub provider_executed: Option<bool>,
    pub dynamic: Option<bool>,
    pub preliminary: Option<bool>,
    pub title: Option<String>,
    pub provider_metadata: Option<Value>,
    pub tool_metadata: Option<Value>,
}

/// AI SDK UI message stream chunks (`x-vercel-ai-ui-message-stream: v1`), as the `ai`
/// package's `UIMessageChunk` names them.
#[derive(Debug, Clone, PartialEq)]
pub enum UiChunk {
    Start {
        message_id: Option<String>,
        message_metadata: Option<Value>,
    },
    StartStep,
    FinishStep,
    /// Removes the parts of the current step.
    ResetStep,
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
        message_metadata: Option<Value>,
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
        /// `text-end` only.
        citations: Option<Value>,
    },
    ToolInputStart(ToolChunk),
    ToolInputDelta(ToolChunk),
    ToolInputAvailable(ToolChunk),
    ToolInputError(ToolChunk),
    ToolOutputAvailable(ToolChunk),
    ToolOutputError(ToolChunk),
    ToolOutputDenied(ToolChunk),
    ToolApprovalRequest {
        tool_call_id: String,
        approval_id: String,
        approval_descriptor: Option<Value>,
        /// Kept when present, even as `null`.
        input_schema_input: Option<Value>,
        reason: Option<String>,
        is_automatic: Option<bool>,
        signature: Option<String>,
    },
    ToolApprovalResponse {
        approval_id: String,
        approved: bool,
        reason: Option<String>,
        provider_executed: Option<bool>,
        provider_metadata: Option<Value>,
    },
    /// A chunk that carries a whole part (a file, a source, a custom or steering part): a
    /// row of the plain-parts table in [`crate::protocol::part`].
    Part(Part),
    /// A `data-NAME` chunk. The parsers put these in [`Chunk::Data`]; the reducer takes them
    /// here so that one `match` holds every transition.
    Data(DataChunk),
}

/// A `data-NAME` chunk that is not part of the pi projection.
#[derive(Debug, Clone, PartialEq)]
pub struct DataChunk {
    /// Without the `data-` prefix.
    pub name: String,
    pub id: Option<String>,
    pub data: Value,
    pub transient: bool,
    /// The chunk's other keys as sent (`transient` included when given): the `ai` package
    /// stores the whole chunk as the data part.
    pub extra: Object,
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
    /// A field of the wrong type (the `ai` package's chunk schema rejects it).
    #[error("`{chunk_type}` chunk has an invalid `{field}`")]
    Invalid {
        chunk_type: String,
        field: &'static str,
    },
    #[error("unknown chunk type `{0}`")]
    UnknownType(String),
    /// A `__proto__` key, or a `constructor` object with a `prototype` key, anywhere in the
    /// chunk: the `ai` package's JSON parser refuses these.
    #[error("chunk has a forbidden `__proto__` or `constructor.prototype` key")]
    Forbidden,
}

impl ChunkError {
    pub(crate) fn missing(ty: &str, field: &'static str) -> ChunkError {
        ChunkError::Missing {
            chunk_type: ty.to_string(),
            field,
        }
    }
}

fn missing(ty: &str, field: &'static str) -> ChunkError {
    ChunkError::missing(ty, field)
}

fn req_str(obj: &mut Object, ty: &str, field: &'static str) -> Result<String, ChunkError> {
    take_str(obj, field).ok_or_else(|| missing(ty, field))
}

/// Parses one SSE event's data (not `[DONE]`, which the caller handles).
pub fn parse_chunk(data: &str) -> Result<Chunk, ChunkError> {
    let value = crate::protocol::json::from_slice(data.as_bytes())
        .map_err(|e| ChunkError::Json(e.to_string()))?;
    chunk_from_value(value)
}

/// Reads a chunk already parsed as JSON (as the pure helpers receive them from JS).
///
/// Lenient, for the store: a `null` counts as absent, a field of the wrong type as absent,
/// and an unknown type is kept as [`Chunk::Unknown`]. Only a missing required field fails.
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
    match ui_chunk(&ty, &mut obj)? {
        Some(c) => Ok(Chunk::Ui(c)),
        None => {
            obj.insert("type".into(), Value::String(ty.clone()));
            Ok(Chunk::Unknown {
                chunk_type: ty,
                value: Value::Object(obj),
            })
        }
    }
}

/// Reads a chunk as the `ai` package's HTTP transport does before its stream processor sees
/// it: JSON with no `__proto__` / `constructor.prototype` key (its secure JSON parse), then
/// `uiMessageChunkSchema` (zod). Anything the schema rejects is an error, an unknown type
/// included; every `data-*` chunk (pi projection ones too) is a [`Chunk::Data`].
pub fn strict_ui_chunk(value: Value) -> Result<Chunk, ChunkError> {
    if has_forbidden_key(&value) {
        return Err(ChunkError::Forbidden);
    }
    let Value::Object(mut obj) = value else {
        return Err(ChunkError::NoType);
    };
    let Some(ty) = take_str(&mut obj, "type") else {
        return Err(ChunkError::NoType);
    };
    validate(&ty, &mut obj)?;
    if let Some(name) = ty.strip_prefix("data-") {
        return Ok(Chunk::Data(plain_data_chunk(name, obj)));
    }
    ui_chunk(&ty, &mut obj)?
        .map(Chunk::Ui)
        .ok_or(ChunkError::UnknownType(ty))
}

/// The `ai` package's secure JSON parse refuses an object with an own `__proto__` key, or
/// with a `constructor` key holding an object that has a `prototype` key.
pub fn has_forbidden_key(v: &Value) -> bool {
    match v {
        Value::Object(o) => {
            o.contains_key("__proto__")
                || matches!(o.get("constructor"), Some(Value::Object(c)) if c.contains_key("prototype"))
                || o.values().any(has_forbidden_key)
        }
        Value::Array(a) => a.iter().any(has_forbidden_key),
        _ => false,
    }
}

/// The typed UI chunk of a non-data type, `None` for a type this version does not know.
fn ui_chunk(t: &str, o: &mut Object) -> Result<Option<UiChunk>, ChunkError> {
    if let Some(part) = plain_chunk(t, o) {
        return Ok(Some(UiChunk::Part(part?)));
    }
    let pm = |o: &mut Object| take(o, "providerMetadata");
    Ok(Some(match t {
        "start" => UiChunk::Start {
            message_id: take_str(o, "messageId"),
            message_metadata: take(o, "messageMetadata"),
        },
        "start-step" => UiChunk::StartStep,
        "finish-step" => UiChunk::FinishStep,
        "reset-step" => UiChunk::ResetStep,
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
            message_metadata: take(o, "messageMetadata"),
        },
        "text-start" | "reasoning-start" => UiChunk::PartStart {
            kind: kind_of(t),
            id: req_str(o, t, "id")?,
            provider_metadata: pm(o),
        },
        "text-delta" | "reasoning-delta" => UiChunk::PartDelta {
            kind: kind_of(t),
            id: req_str(o, t, "id")?,
            delta: req_str(o, t, "delta")?,
            provider_metadata: pm(o),
        },
        "text-end" | "reasoning-end" => UiChunk::PartEnd {
            kind: kind_of(t),
            id: req_str(o, t, "id")?,
            provider_metadata: pm(o),
            citations: take(o, "citations"),
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
        "tool-approval-request" => UiChunk::ToolApprovalRequest {
            tool_call_id: req_str(o, t, "toolCallId")?,
            approval_id: req_str(o, t, "approvalId")?,
            approval_descriptor: take(o, "approvalDescriptor"),
            input_schema_input: o.remove("inputSchemaInput"),
            reason: take_str(o, "reason"),
            is_automatic: get_bool(o, "isAutomatic"),
            signature: take_str(o, "signature"),
        },
        "tool-approval-response" => UiChunk::ToolApprovalResponse {
            approval_id: req_str(o, t, "approvalId")?,
            approved: get_bool(o, "approved").ok_or_else(|| missing(t, "approved"))?,
            reason: take_str(o, "reason"),
            provider_executed: get_bool(o, "providerExecuted"),
            provider_metadata: pm(o),
        },
        _ => return Ok(None),
    }))
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
        // `null` is an input (or output) of its own, unlike the optional fields.
        input: o.remove("input"),
        input_text_delta: take_str(o, "inputTextDelta"),
        input_encoding: take_str(o, "inputEncoding"),
        output: o.remove("output"),
        error_text: take_str(o, "errorText"),
        provider_executed: get_bool(o, "providerExecuted"),
        dynamic: get_bool(o, "dynamic"),
        preliminary: get_bool(o, "preliminary"),
        title: take_str(o, "title"),
        provider_metadata: take(o, "providerMetadata"),
        tool_metadata: take(o, "toolMetadata"),
    })
}

fn plain_data_chunk(name: &str, mut obj: Object) -> DataChunk {
    DataChunk {
        name: name.to_string(),
        id: take_str(&mut obj, "id"),
        transient: get_bool(&obj, "transient").unwrap_or(false),
        data: obj.remove("data").unwrap_or(Value::Null),
        extra: obj,
    }
}

fn data_chunk(name: &str, mut obj: Object) -> Result<Chunk, ChunkError> {
    let is_pi = name.starts_with("pi-") || name == "followup-consumed" || name == "turn-start";
    if !is_pi {
        return Ok(Chunk::Data(plain_data_chunk(name, obj)));
    }
    let data = match obj.remove("data") {
        Some(Value::Object(d)) => d,
        _ => return Err(missing(&format!("data-{name}"), "data")),
    };
    pi_event(name, data).map(Chunk::Pi)
}

/// The type of one field in `uiMessageChunkSchema`. `z.optional` refuses `null`;
/// `z.unknown()` takes anything but requires the key.
#[derive(Clone, Copy)]
pub(crate) enum Field {
    Str,
    OptStr,
    Bool,
    OptBool,
    /// Present, any value.
    Any,
    /// `Record<string, Record<string, JSONValue>>`.
    OptProviderMetadata,
    /// `Record<string, JSONValue>`.
    OptObject,
    /// `json` | `text`.
    OptInputEncoding,
    OptFinishReason,
    OptCitations,
    SteeringParts,
    /// Not a field of the chunk (the part it carries has it): not checked.
    Unread,
}

const FINISH_REASONS: [&str; 7] = [
    "stop",
    "length",
    "content-filter",
    "tool-calls",
    "error",
    "interrupted",
    "other",
];

/// The fields `uiMessageChunkSchema` checks for each chunk type (other keys pass untouched).
fn schema(t: &str) -> Option<&'static [(&'static str, Field)]> {
    if let Some(fields) = plain_chunk_schema(t) {
        return Some(fields);
    }
    use Field::*;
    const PM: (&str, Field) = ("providerMetadata", OptProviderMetadata);
    const TOOL_CALL: (&str, Field) = ("toolCallId", Str);
    const TOOL_INPUT: [(&str, Field); 8] = [
        TOOL_CALL,
        ("toolName", Str),
        ("input", Any),
        ("providerExecuted", OptBool),
        PM,
        ("toolMetadata", OptObject),
        ("dynamic", OptBool),
        ("title", OptStr),
    ];
    Some(match t {
        "text-start" | "reasoning-start" | "reasoning-end" => &[("id", Str), PM],
        "text-delta" | "reasoning-delta" => &[("id", Str), ("delta", Str), PM],
        "text-end" => &[("id", Str), ("citations", OptCitations), PM],
        "error" => &[("errorText", Str)],
        "tool-input-start" => &[
            TOOL_CALL,
            ("toolName", Str),
            ("inputEncoding", OptInputEncoding),
            ("providerExecuted", OptBool),
            PM,
            ("toolMetadata", OptObject),
            ("dynamic", OptBool),
            ("title", OptStr),
        ],
        "tool-input-delta" => &[TOOL_CALL, ("inputTextDelta", Str)],
        "tool-input-available" => &TOOL_INPUT,
        "tool-input-error" => &[
            TOOL_INPUT[0],
            TOOL_INPUT[1],
            TOOL_INPUT[2],
            TOOL_INPUT[3],
            TOOL_INPUT[4],
            TOOL_INPUT[5],
            TOOL_INPUT[6],
            TOOL_INPUT[7],
            ("errorText", Str),
        ],
        "tool-approval-request" => &[
            ("approvalId", Str),
            TOOL_CALL,
            ("reason", OptStr),
            ("isAutomatic", OptBool),
            ("signature", OptStr),
        ],
        "tool-approval-response" => &[
            ("approvalId", Str),
            ("approved", Bool),
            ("reason", OptStr),
            ("providerExecuted", OptBool),
            PM,
        ],
        "tool-output-available" => &[
            TOOL_CALL,
            ("output", Any),
            ("providerExecuted", OptBool),
            PM,
            ("toolMetadata", OptObject),
            ("dynamic", OptBool),
            ("preliminary", OptBool),
        ],
        "tool-output-error" => &[
            TOOL_CALL,
            ("errorText", Str),
            ("providerExecuted", OptBool),
            PM,
            ("toolMetadata", OptObject),
            ("dynamic", OptBool),
        ],
        "tool-output-denied" => &[TOOL_CALL],
        "start-step" | "finish-step" | "reset-step" => &[],
        "start" => &[("messageId", OptStr)],
        "finish" => &[("finishReason", OptFinishReason)],
        "abort" => &[("reason", OptStr)],
        "message-metadata" => &[("messageMetadata", Any)],
        _ if t.starts_with("data-") => &[("id", OptStr), ("data", Any), ("transient", OptBool)],
        _ => return None,
    })
}

/// Checks a chunk (without its `type`) against `uiMessageChunkSchema`, and rewrites what the
/// schema's output rewrites: `citations` lose the keys their `z.object` does not name.
fn validate(t: &str, o: &mut Object) -> Result<(), ChunkError> {
    let fields = schema(t).ok_or_else(|| ChunkError::UnknownType(t.to_string()))?;
    for &(name, field) in fields {
        let invalid = || ChunkError::Invalid {
            chunk_type: t.to_string(),
            field: name,
        };
        let Some(v) = o.get_mut(name) else {
            match field {
                Field::Str | Field::Bool | Field::Any | Field::SteeringParts => {
                    return Err(missing(t, name))
                }
                _ => continue,
            }
        };
        let ok = match field {
            Field::Str | Field::OptStr => v.is_string(),
            Field::Bool | Field::OptBool => v.is_boolean(),
            Field::Any => true,
            Field::OptProviderMetadata => is_provider_metadata(v),
            Field::OptObject => v.is_object(),
            Field::OptInputEncoding => matches!(v.as_str(), Some("json" | "text")),
            Field::OptFinishReason => v.as_str().is_some_and(|r| FINISH_REASONS.contains(&r)),
            Field::OptCitations => match v {
                Value::Array(list) => list.iter_mut().all(citation),
                _ => false,
            },
            Field::SteeringParts => match v {
                Value::Array(list) => list.iter().all(steering_part),
                _ => false,
            },
            Field::Unread => true,
        };
        if !ok {
            return Err(invalid());
        }
    }
    Ok(())
}

fn is_provider_metadata(v: &Value) -> bool {
    matches!(v, Value::Object(m) if m.values().all(Value::is_object))
}

/// `z.optional(...)` of one of these: absent, or `ok` of the value.
fn opt(o: &Object, k: &str, ok: impl Fn(&Value) -> bool) -> bool {
    o.get(k).is_none_or(ok)
}

fn is_str(o: &Object, k: &str) -> bool {
    o.get(k).is_some_and(Value::is_string)
}

/// One `citationSchema` entry (a strict `z.object`: unknown keys are dropped from its output).
fn citation(v: &mut Value) -> bool {
    let Value::Object(c) = v else { return false };
    let index = |v: &Value| {
        v.as_f64()
            .is_some_and(|n| n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0)
    };
    let ok = opt(c, "startIndex", index)
        && opt(c, "endIndex", index)
        && opt(c, "citedText", Value::is_string)
        && match c.get_mut("source") {
            Some(Value::Object(s)) => {
                let keys: &[&str] = match s.get("sourceType").and_then(Value::as_str) {
                    Some("url") if is_str(s, "url") => &["url"],
                    Some("document") if is_str(s, "mediaType") && is_str(s, "title") => {
                        &["mediaType", "filename"]
                    }
                    _ => return false,
                };
                let ok = s.get("type").and_then(Value::as_str) == Some("source")
                    && is_str(s, "id")
                    && opt(s, "title", Value::is_string)
                    && opt(s, "filename", Value::is_string)
                    && opt(s, "providerMetadata", is_provider_metadata);
                let common = ["type", "sourceType", "id", "title", "providerMetadata"];
                s.retain(|k, _| common.contains(&k.as_str()) || keys.contains(&k.as_str()));
                ok
            }
            _ => false,
        };
    c.retain(|k, _| ["source", "startIndex", "endIndex", "citedText"].contains(&k.as_str()));
    ok
}

/// A `steering-message` part: a text or file part (loose objects).
fn steering_part(v: &Value) -> bool {
    let Value::Object(p) = v else { return false };
    let pm = opt(p, "providerMetadata", is_provider_metadata);
    match p.get("type").and_then(Value::as_str) {
        Some("text") => is_str(p, "text") && pm,
        Some("file") => {
            is_str(p, "mediaType")
                && is_str(p, "url")
                && opt(p, "filename", Value::is_string)
                && opt(
                    p,
                    "providerReference",
                    |r| matches!(r, Value::Object(m) if m.values().all(Value::is_string)),
                )
                && pm
        }
        _ => false,
    }
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
                transient: true,
                extra: serde_json::json!({"transient": true})
                    .as_object()
                    .unwrap()
                    .clone(),
            })
        );
    }

    #[test]
    fn the_strict_reader_follows_the_ai_chunk_schema() {
        use serde_json::json;
        let ok = |v: Value| strict_ui_chunk(v.clone()).unwrap_or_else(|e| panic!("{v}: {e}"));
        let bad = |v: Value| assert!(strict_ui_chunk(v.clone()).is_err(), "{v} passed");
        ok(json!({"type": "start", "messageMetadata": null, "extra": 1}));
        ok(json!({"type": "data-x", "data": null, "transient": false}));
        ok(json!({"type": "data-pi-text-start", "data": 1}));
        ok(
            json!({"type": "tool-input-available", "toolCallId": "c", "toolName": "t", "input": null}),
        );
        ok(json!({"type": "text-start", "id": "a", "providerMetadata": {"p": {}}}));
        ok(
            json!({"type": "tool-input-start", "toolCallId": "c", "toolName": "t", "toolMetadata": {"x": null}}),
        );
        bad(json!({"type": "start", "messageId": null}));
        bad(json!({"type": "future"}));
        bad(json!({"type": "data-x"}));
        bad(json!({"type": "message-metadata"}));
        bad(json!({"type": "tool-input-available", "toolCallId": "c", "toolName": "t"}));
        bad(json!({"type": "text-start", "id": "a", "providerMetadata": {"p": []}}));
        bad(json!({"type": "finish", "finishReason": "done"}));
        bad(
            json!({"type": "tool-input-start", "toolCallId": "c", "toolName": "t", "inputEncoding": "xml"}),
        );
        bad(json!({"type": "tool-approval-response", "approvalId": "a"}));
        bad(json!({"type": "text-start", "id": "a", "x": {"__proto__": 1}}));
        bad(json!({"type": "text-start", "id": "a", "x": [{"constructor": {"prototype": 1}}]}));
        bad(
            json!({"type": "steering-message", "id": "s", "parts": [{"type": "reasoning", "text": "t"}]}),
        );
        bad(
            json!({"type": "text-end", "id": "a", "citations": [{"source": {"type": "source", "sourceType": "url", "id": "1", "url": "u"}, "startIndex": 1.5}]}),
        );
        // Citations are strict objects: their unknown keys are dropped.
        let c = ok(json!({"type": "text-end", "id": "a", "citations": [
            {"source": {"type": "source", "sourceType": "url", "id": "1", "url": "u", "x": 1}, "startIndex": 0, "y": 2}
        ]}));
        let Chunk::Ui(UiChunk::PartEnd { citations, .. }) = c else {
            panic!("{c:?}")
        };
        assert_eq!(
            citations,
            Some(
                json!([{"source": {"type": "source", "sourceType": "url", "id": "1", "url": "u"}, "startIndex": 0}])
            )
        );
    }
}
