//! The two chunk families of the stream (SPEC §3), parsed from one SSE event's data.
//!
//! Every event is parsed once into a JSON value and its fields are moved into a typed chunk.
//! A chunk type this version does not know is kept as [`Chunk::Unknown`] (reported, never a
//! parse failure); a known type with a required field missing is a [`ChunkError`].

use serde_json::Value;

use super::json::{get_bool, get_u64, take, take_str, Object};
use super::message::{Role, UIMessage};
use super::part::{plain_chunk, Part};
use super::schema::validate;

mod read;
use read::{data_chunk, plain_data_chunk, ui_chunk};

/// Text and reasoning parts stream the same way; one variant serves both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartKind {
    /// A `text` part (`text-*` and `pi-text-*` chunks).
    Text,
    /// A `reasoning` part (`reasoning-*` and `pi-reasoning-*` chunks).
    Reasoning,
}

/// The fields a `tool-input-*` / `tool-output-*` chunk may carry. Which are required depends
/// on the chunk type. `input` and `output` keep a JSON `null` as `Some(Value::Null)`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolChunk {
    /// `toolCallId`: the tool call this chunk belongs to.
    pub tool_call_id: String,
    /// `toolName`: the tool called (required by `tool-input-start`, `-available`, `-error`).
    pub tool_name: Option<String>,
    /// `input`: the complete input of the call (`tool-input-available`, `tool-input-error`).
    pub input: Option<Value>,
    /// `inputTextDelta`: the next piece of the input text (`tool-input-delta`).
    pub input_text_delta: Option<String>,
    /// `inputEncoding`: how the input deltas are read, `json` (the default) or `text`.
    pub input_encoding: Option<String>,
    /// `output`: the tool's result (`tool-output-available`).
    pub output: Option<Value>,
    /// `errorText`: why the input or the call failed (`tool-input-error`, `tool-output-error`).
    pub error_text: Option<String>,
    /// `providerExecuted`: the model's provider ran the tool, not the client.
    pub provider_executed: Option<bool>,
    /// `dynamic`: the call is a `dynamic-tool` part (a tool not known in advance).
    pub dynamic: Option<bool>,
    /// `preliminary`: an interim output that a later `tool-output-available` replaces.
    pub preliminary: Option<bool>,
    /// `title`: a display title for the tool call.
    pub title: Option<String>,
    /// `providerMetadata`: provider-specific data, keyed by provider.
    pub provider_metadata: Option<Value>,
    /// `toolMetadata`: the tool's own metadata, kept on the part.
    pub tool_metadata: Option<Value>,
}

/// AI SDK UI message stream chunks (`x-vercel-ai-ui-message-stream: v1`), as the `ai`
/// package's `UIMessageChunk` names them.
#[derive(Debug, Clone, PartialEq)]
pub enum UiChunk {
    /// `start`: the stream begins the assistant message.
    Start {
        /// `messageId`: the id of the message the stream builds.
        message_id: Option<String>,
        /// `messageMetadata`: merged into the message's `metadata`.
        message_metadata: Option<Value>,
    },
    /// `start-step`: a step begins; adds a `step-start` part.
    StartStep,
    /// `finish-step`: the step ends (open parts are closed by their own end chunks).
    FinishStep,
    /// `reset-step`: removes the parts of the current step.
    ResetStep,
    /// `finish`: the message is complete.
    Finish {
        /// `finishReason`: why generation stopped (`stop`, `length`, `tool-calls`, …).
        finish_reason: Option<String>,
        /// `messageMetadata`: merged into the message's `metadata`.
        message_metadata: Option<Value>,
    },
    /// `abort`: the stream was stopped before it finished.
    Abort {
        /// `reason`: why it was stopped, as the server says.
        reason: Option<String>,
    },
    /// `error`: the server reports an error; it becomes the stream's error.
    Error {
        /// `errorText`: the error's message.
        error_text: String,
    },
    /// `message-metadata`: updates the message's metadata mid-stream.
    MessageMetadata {
        /// `messageMetadata`: merged into the message's `metadata`.
        message_metadata: Option<Value>,
    },
    /// `text-start` / `reasoning-start`: opens a text or reasoning part, state `streaming`.
    PartStart {
        /// Text or reasoning, from the chunk type.
        kind: PartKind,
        /// `id`: the stream's name for the part, which its deltas and end repeat.
        id: String,
        /// `providerMetadata`: the part's provider-specific data.
        provider_metadata: Option<Value>,
    },
    /// `text-delta` / `reasoning-delta`: appends text to the open part `id`.
    PartDelta {
        /// Text or reasoning, from the chunk type.
        kind: PartKind,
        /// `id`: the open part the text goes to.
        id: String,
        /// `delta`: the text to append.
        delta: String,
        /// `providerMetadata`: replaces the part's provider-specific data.
        provider_metadata: Option<Value>,
    },
    /// `text-end` / `reasoning-end`: the part `id` is complete, state `done`.
    PartEnd {
        /// Text or reasoning, from the chunk type.
        kind: PartKind,
        /// `id`: the open part that ends.
        id: String,
        /// `providerMetadata`: replaces the part's provider-specific data.
        provider_metadata: Option<Value>,
        /// `citations`: the sources the text cites (`text-end` only).
        citations: Option<Value>,
    },
    /// `tool-input-start`: a tool call begins and its input streams, state `input-streaming`.
    ToolInputStart(ToolChunk),
    /// `tool-input-delta`: the next piece of a call's input text, read as partial JSON.
    ToolInputDelta(ToolChunk),
    /// `tool-input-available`: the call's input is complete, state `input-available`.
    ToolInputAvailable(ToolChunk),
    /// `tool-input-error`: the call's input is invalid, state `output-error`.
    ToolInputError(ToolChunk),
    /// `tool-output-available`: the tool's result, state `output-available`.
    ToolOutputAvailable(ToolChunk),
    /// `tool-output-error`: the tool failed, state `output-error`.
    ToolOutputError(ToolChunk),
    /// `tool-output-denied`: the call was not approved, state `output-denied`.
    ToolOutputDenied(ToolChunk),
    /// `tool-approval-request`: the call waits for the user's approval, state
    /// `approval-requested`.
    ToolApprovalRequest {
        /// `toolCallId`: the tool call that waits.
        tool_call_id: String,
        /// `approvalId`: the id the answer names (the part's `approval.id`).
        approval_id: String,
        /// `approvalDescriptor`: what is to be approved (the part's `approval.descriptor`).
        approval_descriptor: Option<Value>,
        /// `inputSchemaInput`: the input before the tool's schema transformed it, sent when
        /// the two differ. Kept when present, even as `null`.
        input_schema_input: Option<Value>,
        /// `reason`: why the call needs approval (the part's `approval.requestReason`).
        reason: Option<String>,
        /// `isAutomatic`: the call was approved or denied automatically, not by the user.
        is_automatic: Option<bool>,
        /// `signature`: an HMAC-SHA256 signature binding the request to its tool call.
        signature: Option<String>,
    },
    /// `tool-approval-response`: the answer to an approval request, state
    /// `approval-responded`.
    ToolApprovalResponse {
        /// `approvalId`: the request answered.
        approval_id: String,
        /// `approved`: whether the call may run.
        approved: bool,
        /// `reason`: why it was approved or denied, if given.
        reason: Option<String>,
        /// `providerExecuted`: the model's provider runs the approved tool.
        provider_executed: Option<bool>,
        /// `providerMetadata`: becomes the tool part's `callProviderMetadata`.
        provider_metadata: Option<Value>,
    },
    /// A chunk that carries a whole part (a file, a source, a custom or steering part): a
    /// row of the plain-parts table in `protocol/part.rs`.
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
    /// `id`: a later chunk of the same name and id replaces this one's data part.
    pub id: Option<String>,
    /// `data`: the payload, any JSON (`null` when absent).
    pub data: Value,
    /// `transient`: for `onData` only, never stored in the message.
    pub transient: bool,
    /// The chunk's other keys as sent (`transient` included when given): the `ai` package
    /// stores the whole chunk as the data part.
    pub extra: Object,
}

/// pi projection events, carried as `data-pi-*` chunks (and the two follow-up/turn chunks).
#[derive(Debug, Clone, PartialEq)]
pub enum PiEvent {
    /// `data-pi-mode`: the pi reducer owns history from here on.
    Mode {
        /// `enabled`: pi mode is on (`true` when absent).
        enabled: bool,
    },
    /// `data-pi-agent-start`: pi's agent loop starts a run.
    AgentStart {
        /// `seq`: the event's position in its turn's stream.
        seq: Option<u64>,
    },
    /// `data-pi-agent-end`: pi's agent loop ends its run.
    AgentEnd {
        /// `seq`: the event's position in its turn's stream.
        seq: Option<u64>,
    },
    /// `data-pi-message-start`: a message begins; it takes its place in the history here.
    MessageStart {
        /// `seq`: the event's position in its turn's stream.
        seq: Option<u64>,
        /// `messageId`: the pi message this event belongs to.
        message_id: String,
        /// `role`: `user` or `assistant`.
        role: Role,
        /// `clientNonce`: the queued follow-up this user message commits.
        client_nonce: Option<String>,
        /// `text`: the message's text so far (a user message's whole text).
        text: Option<String>,
    },
    /// `data-pi-message-end`: the message is complete.
    MessageEnd {
        /// `seq`: the event's position in its turn's stream.
        seq: Option<u64>,
        /// `messageId`: the pi message this event belongs to.
        message_id: String,
        /// `role`: finds the open message of that role when the id is not its start's.
        role: Role,
        /// `text`: the message's full text, authoritative over the deltas.
        text: Option<String>,
        /// `final`: the whole message; it replaces what the deltas built.
        final_message: Option<UIMessage>,
    },
    /// `data-pi-text-start` / `data-pi-reasoning-start`: opens a text or reasoning part.
    PartStart {
        /// `seq`: the event's position in its turn's stream.
        seq: Option<u64>,
        /// Text or reasoning, from the event name.
        kind: PartKind,
        /// `messageId`: the pi message this event belongs to.
        message_id: String,
        /// `partId`: the part within its message, which its deltas and end repeat.
        part_id: String,
    },
    /// `data-pi-text-delta` / `data-pi-reasoning-delta`: appends text to a part.
    PartDelta {
        /// `seq`: the event's position in its turn's stream.
        seq: Option<u64>,
        /// Text or reasoning, from the event name.
        kind: PartKind,
        /// `messageId`: the pi message this event belongs to.
        message_id: String,
        /// `partId`: the part the text goes to.
        part_id: String,
        /// `delta`: the text to append.
        delta: String,
    },
    /// `data-pi-text-end` / `data-pi-reasoning-end`: the part is complete.
    PartEnd {
        /// `seq`: the event's position in its turn's stream.
        seq: Option<u64>,
        /// Text or reasoning, from the event name.
        kind: PartKind,
        /// `messageId`: the pi message this event belongs to.
        message_id: String,
        /// `partId`: the part that ends.
        part_id: String,
        /// `text`: the part's full text, authoritative over the deltas.
        text: Option<String>,
    },
    /// `data-pi-tool-call-start`: a tool call begins; it becomes a `tool-<toolName>` part.
    ToolCallStart {
        /// `seq`: the event's position in its turn's stream.
        seq: Option<u64>,
        /// `messageId`: the pi message this event belongs to.
        message_id: String,
        /// `toolCallId`: the tool call, unique within its message.
        tool_call_id: String,
        /// `toolName`: the tool called.
        tool_name: Option<String>,
    },
    /// `data-pi-tool-call-delta`: the next piece of a tool call's input.
    ToolCallDelta {
        /// `seq`: the event's position in its turn's stream.
        seq: Option<u64>,
        /// `messageId`: the pi message this event belongs to.
        message_id: String,
        /// `toolCallId`: the tool call whose input grows.
        tool_call_id: String,
        /// `delta`: input text to append (other JSON is appended as its text; `null` if absent).
        delta: Value,
    },
    /// `data-pi-tool-call-end`: the tool call's input is complete, state `input-available`.
    ToolCallEnd {
        /// `seq`: the event's position in its turn's stream.
        seq: Option<u64>,
        /// `messageId`: the pi message this event belongs to.
        message_id: String,
        /// `toolCallId`: the tool call that ends.
        tool_call_id: String,
        /// `toolName`: the tool called, when the start did not name it.
        tool_name: Option<String>,
        /// `input`: the whole input; without it, the deltas' text parsed.
        input: Option<Value>,
    },
    /// `data-pi-tool-result`: the tool's result, attached to the tool part of its call.
    ToolResult {
        /// `seq`: the event's position in its turn's stream.
        seq: Option<u64>,
        /// `messageId`: the pi message this event belongs to.
        message_id: String,
        /// `toolCallId`: the tool call the result answers.
        tool_call_id: String,
        /// `toolName`: names the part when the call is unknown.
        tool_name: Option<String>,
        /// `output`: the result (on an error, the source of the part's `errorText`).
        output: Option<Value>,
        /// `isError`: the tool failed (`false` when absent).
        is_error: bool,
        /// `details`: structured result details, kept beside the output for renderers.
        details: Option<Value>,
    },
    /// `data-pi-tool-approval-request`: the call waits for the user's approval (SPEC §13),
    /// state `approval-requested`.
    ToolApprovalRequest {
        /// `seq`: the event's position in its turn's stream.
        seq: Option<u64>,
        /// `messageId`: the pi message this event belongs to.
        message_id: String,
        /// `toolCallId`: the call that waits.
        tool_call_id: String,
        /// `approvalId`: the id the answer names (the part's `approval.id`).
        approval_id: String,
        /// `reason`: why the call needs approval (the part's `approval.requestReason`).
        reason: Option<String>,
    },
    /// `data-pi-tool-approval-response`: the approval's answer, state `approval-responded`
    /// (then the result, or `output-denied`).
    ToolApprovalResponse {
        /// `seq`: the event's position in its turn's stream.
        seq: Option<u64>,
        /// `messageId`: the pi message this event belongs to.
        message_id: String,
        /// `toolCallId`: the call answered.
        tool_call_id: String,
        /// `approvalId`: the request answered.
        approval_id: String,
        /// `approved`: allowed or denied.
        approved: bool,
        /// `reason`: the user's reason, if given.
        reason: Option<String>,
    },
    /// `data-pi-tool-input-request`: the call waits for the user's answer to a question
    /// (an ask-user tool), state `input-available` with `interrupt: {question, options}`.
    ToolInputRequest {
        /// `seq`: the event's position in its turn's stream.
        seq: Option<u64>,
        /// `messageId`: the pi message this event belongs to.
        message_id: String,
        /// `toolCallId`: the call that waits.
        tool_call_id: String,
        /// `question`: what the user is asked.
        question: Option<String>,
        /// `options`: the answers to choose from (strings; others left out).
        options: Option<Vec<String>>,
    },
    /// `data-pi-message-delta`: a legacy duplicate of a text delta under the same seq.
    LegacyMessageDelta {
        /// `seq`: the event's position in its turn's stream.
        seq: Option<u64>,
        /// `messageId`: the pi message this event belongs to.
        message_id: String,
        /// `delta`: the text to append, used only when the message has no part events.
        delta: String,
    },
    /// `data-followup-consumed`: the server ran a queued follow-up.
    FollowUpConsumed {
        /// `clientNonce`: the follow-up consumed; without one, the oldest unconsumed item is.
        client_nonce: Option<String>,
        /// `clientSeq`: the consumed follow-up's sequence number.
        client_seq: Option<u64>,
        /// `messageId`: the user message the follow-up became.
        message_id: Option<String>,
        /// `text`: the follow-up's text.
        text: Option<String>,
    },
    /// `data-turn-start`: a new turn begins; the seq watermark starts over.
    TurnStart {
        /// `turnId`: the turn, kept for stop and resume.
        turn_id: String,
    },
    /// A `data-pi-*` name this version does not know: not history, handed to `onData`.
    Other {
        /// The chunk type without `data-` (`pi-…`).
        name: String,
        /// `data`: the event's payload, as sent.
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
            | PiEvent::ToolApprovalRequest { seq, .. }
            | PiEvent::ToolApprovalResponse { seq, .. }
            | PiEvent::ToolInputRequest { seq, .. }
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
    /// An AI SDK UI message stream chunk.
    Ui(UiChunk),
    /// A pi projection event (`data-pi-*`, `data-followup-consumed`, `data-turn-start`).
    Pi(PiEvent),
    /// Any other `data-NAME` chunk (from [`strict_ui_chunk`], every one).
    Data(DataChunk),
    /// A chunk type this version does not know, kept whole.
    Unknown {
        /// `type`: the chunk type this version does not know.
        chunk_type: String,
        /// The whole chunk, `type` included.
        value: Value,
    },
}

/// A chunk that could not be read. The stream goes on; the store reports it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChunkError {
    /// The event data is not JSON; holds the parser's message.
    #[error("chunk is not valid JSON: {0}")]
    Json(String),
    /// The chunk is not an object, or has no string `type`.
    #[error("chunk is not an object with a string `type`")]
    NoType,
    /// A required field is absent (or, for the lenient reader, of the wrong type).
    #[error("`{chunk_type}` chunk is missing `{field}`")]
    Missing {
        /// The `type` of the chunk that lacks the field.
        chunk_type: String,
        /// The JSON key of the missing field.
        field: &'static str,
    },
    /// A field of the wrong type (the `ai` package's chunk schema rejects it).
    #[error("`{chunk_type}` chunk has an invalid `{field}`")]
    Invalid {
        /// The `type` of the chunk with the invalid field.
        chunk_type: String,
        /// The JSON key of the invalid field.
        field: &'static str,
    },
    /// A chunk type the strict reader does not know; holds the type.
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
