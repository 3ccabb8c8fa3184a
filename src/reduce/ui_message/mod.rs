//! The AI SDK UI message stream reducer: chunks into one assistant message, the way the `ai`
//! package (7.x) `processUIMessageStream` builds `state.message`.
//!
//! [`UiMessageReducer::apply`] is one `match` over [`UiChunk`]; every transition is there.
//! Text and reasoning parts are addressed by their stream id, so a delta costs the same however
//! long the message is. Tool chunks look their part up the way the `ai` package does: in the
//! current step (the parts after the last `step-start`) first, then in the whole message.
//!
//! A chunk the `ai` package throws on (a delta for an unknown id, an output for an unknown
//! tool call, an approval response for an unknown approval, metadata its `mergeObjects`
//! cannot merge) is a [`Violation`]: processing stops there and the message keeps what it had.
//! The caller decides what a violation means (the store fails the turn; the replay helper
//! reports it).

use crate::protocol::Approval;
use crate::util::hash::HashMap;

use serde_json::Value;

use crate::codec::partial_json::PartialJson;
use crate::protocol::chunk::{DataChunk, PartKind, ToolChunk, UiChunk};
use crate::protocol::json::Object;
use crate::protocol::{Json, Part, Role, TextState, ToolPart, ToolState, UIMessage};

mod metadata;
mod tool_parts;

use metadata::*;
use tool_parts::*;

mod active;

/// What the caller must act on besides the message itself.
#[derive(Debug, Clone, PartialEq)]
pub enum UiEffect {
    /// `start` named the message (the store renames it in the history). Pushed before the
    /// chunk's metadata is merged, so it holds even when that merge is a violation.
    MessageId(String),
    /// A data chunk for the host's `onData` (transient ones never reach the message).
    Data(DataChunk),
    /// The stream's `error` chunk.
    Error(String),
    /// `finish`, with the reason if given.
    Finish(Option<String>),
    /// `tool-input-available` of a tool the client runs (not `providerExecuted`): for the
    /// host's `onToolCall`, which answers with `addToolOutput`.
    ToolCall(ToolCall),
}

/// A tool call for the client to run, as `onToolCall` receives it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The call's id, which `addToolOutput` names.
    pub tool_call_id: String,
    /// The tool called.
    pub tool_name: String,
    /// The call's complete input.
    pub input: Value,
    /// The call is a `dynamic-tool` part.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dynamic: bool,
}

/// A chunk the `ai` package rejects; processing stops there. The text is the `ai` package's
/// own error message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Violation(pub String);

/// A tool call whose input is streaming (`partialToolCalls` in the `ai` package).
#[derive(Debug)]
struct PartialToolCall {
    input: PartialInput,
    /// The part whose `rawInput` (and `text` input) this call's last delta wrote and no
    /// other chunk has written since: the next delta appends to them.
    synced: Option<usize>,
    input_encoding: Option<String>,
    tool_name: String,
    dynamic: bool,
    title: Option<String>,
    tool_metadata: Option<Value>,
}

/// The input text of a streaming tool call, and its value so far.
#[derive(Debug)]
enum PartialInput {
    /// `inputEncoding: "json"` (the default): parsed incrementally, with the values the `ai`
    /// package's `parsePartialJson` gives for the whole text at each delta.
    Json(Box<PartialJson>),
    /// `inputEncoding: "text"`: the input is the text.
    Text(String),
}

impl PartialInput {
    fn new(input_encoding: Option<&str>, text: &str) -> Self {
        if input_encoding == Some("text") {
            PartialInput::Text(text.to_string())
        } else {
            let mut p = PartialJson::new();
            p.push(text);
            PartialInput::Json(Box::new(p))
        }
    }

    fn text(&self) -> &str {
        match self {
            PartialInput::Json(p) => p.text(),
            PartialInput::Text(t) => t,
        }
    }
}

/// The reducer's state for one streamed assistant message (`StreamingUIMessageState`).
#[derive(Debug, Default)]
pub struct UiMessageReducer {
    /// The state was rebuilt from the message it continues (on the first chunk).
    initialized: bool,
    reset_on_message_id_change: bool,
    reset_on_first_message_start: bool,
    seen_start: bool,
    active_text: HashMap<String, usize>,
    active_reasoning: HashMap<String, usize>,
    /// The active part the last delta went to: the next delta of a long stream (nearly always
    /// the same part) finds it without hashing its id. Dropped whenever the active maps change.
    hot: Option<(PartKind, String, usize)>,
    partial_tool_calls: HashMap<String, PartialToolCall>,
    /// `finishReason`: the last one a `finish` chunk gave (`None` until one did).
    pub finish_reason: Option<String>,
}

/// What one tool chunk writes into a tool part (`updateToolPart` / `updateDynamicToolPart`).
/// `None` is `undefined`: it clears the field, except where noted.
struct ToolUpdate {
    tool_call_id: String,
    tool_name: String,
    dynamic: bool,
    state: ToolState,
    input: Option<Value>,
    input_encoding: Option<String>,
    raw_input: Option<Value>,
    output: Option<Value>,
    error_text: Option<String>,
    preliminary: Option<bool>,
    /// `None` keeps the part's.
    provider_executed: Option<bool>,
    /// `None` keeps the part's; the state decides call or result metadata.
    provider_metadata: Option<Value>,
    /// `None` keeps the part's.
    title: Option<String>,
    /// `None` keeps the part's.
    tool_metadata: Option<Value>,
}

impl ToolUpdate {
    fn new(c: &mut ToolChunk, tool_name: String, dynamic: bool, state: ToolState) -> Self {
        ToolUpdate {
            tool_call_id: std::mem::take(&mut c.tool_call_id),
            tool_name,
            dynamic,
            state,
            input: None,
            input_encoding: None,
            raw_input: None,
            output: None,
            error_text: None,
            preliminary: None,
            provider_executed: c.provider_executed,
            provider_metadata: c.provider_metadata.take(),
            title: None,
            tool_metadata: c.tool_metadata.take(),
        }
    }
}

impl UiMessageReducer {
    /// The reducer `useChat` runs for a submitted message: a `start` with another id renames
    /// the message.
    pub fn new() -> Self {
        UiMessageReducer::default()
    }

    /// A `start` whose id differs from the message's starts the message over (as
    /// `readUIMessageStream` and a resumed `useChat` stream do).
    pub fn reset_on_message_id_change(mut self, on: bool) -> Self {
        self.reset_on_message_id_change = on;
        self
    }

    /// The first `start` starts the message over (a resume that replays the whole response).
    pub fn reset_on_first_message_start(mut self, on: bool) -> Self {
        self.reset_on_first_message_start = on;
        self
    }

    /// The stream was dropped and is being resumed: the resumed stream may replay the
    /// response from its beginning, so its first `start` rebuilds the message (as `useChat`
    /// resumes); a stream that resumes after the cursor continues where this one stopped.
    pub fn resumed(&mut self) {
        self.reset_on_first_message_start = true;
        self.seen_start = false;
    }

    /// A `data-NAME` chunk: [`UiMessageReducer::apply`] with [`UiChunk::Data`].
    pub fn apply_data(&mut self, msg: &mut UIMessage, chunk: DataChunk, out: &mut Vec<UiEffect>) {
        // Data chunks never violate the protocol.
        let _ = self.apply(msg, UiChunk::Data(chunk), out);
    }

    /// Applies one chunk to `msg`, the message this reducer streams into (the same one every
    /// time). The first chunk that touches it rebuilds the streaming tool calls of a
    /// continued message, as `createStreamingUIMessageState` does.
    pub fn apply(
        &mut self,
        msg: &mut UIMessage,
        chunk: UiChunk,
        out: &mut Vec<UiEffect>,
    ) -> Result<(), Violation> {
        if !matches!(&chunk, UiChunk::Data(d) if d.transient) {
            self.begin(msg);
        }
        match chunk {
            UiChunk::Start {
                message_id,
                message_metadata,
            } => {
                let first = !std::mem::replace(&mut self.seen_start, true);
                let reset = (self.reset_on_first_message_start && first)
                    || (self.reset_on_message_id_change
                        && message_id.as_ref().is_some_and(|id| *id != msg.id));
                if reset {
                    msg.role = Role::Assistant;
                    msg.metadata = None;
                    msg.parts.clear();
                    self.clear_active();
                    self.finish_reason = None;
                }
                if let Some(id) = message_id {
                    out.push(UiEffect::MessageId(id));
                }
                merge_metadata(msg, message_metadata)?;
            }
            UiChunk::StartStep => msg.parts.push(Part::StepStart),
            // Active parts are closed by their own end chunks (a merged stream's step can
            // finish while another stream's part is active).
            UiChunk::FinishStep => {}
            UiChunk::ResetStep => {
                self.clear_active();
                let start = current_step(msg);
                msg.parts.truncate(start);
            }
            UiChunk::Finish {
                finish_reason,
                message_metadata,
            } => {
                if finish_reason.is_some() {
                    self.finish_reason.clone_from(&finish_reason);
                }
                out.push(UiEffect::Finish(finish_reason));
                merge_metadata(msg, message_metadata)?;
            }
            // The message does not change; the turn ends with its stream.
            UiChunk::Abort { .. } => {}
            UiChunk::Error { error_text } => out.push(UiEffect::Error(error_text)),
            UiChunk::MessageMetadata { message_metadata } => merge_metadata(msg, message_metadata)?,
            UiChunk::PartStart {
                kind,
                id,
                provider_metadata,
            } => {
                let state = Some(TextState::Streaming);
                let part = match kind {
                    PartKind::Text => Part::Text {
                        text: String::new(),
                        state,
                        provider_metadata,
                        citations: None,
                    },
                    PartKind::Reasoning => Part::Reasoning {
                        id: Some(id.clone()),
                        text: String::new(),
                        state,
                        provider_metadata,
                    },
                };
                msg.parts.push(part);
                self.active(kind).insert(id, msg.parts.len() - 1);
            }
            UiChunk::PartDelta {
                kind,
                id,
                delta,
                provider_metadata,
            } => self.part_delta(msg, kind, &id, &delta, provider_metadata)?,
            UiChunk::PartEnd {
                kind,
                id,
                provider_metadata,
                citations,
            } => {
                let p = self.active_part(kind, &id, "end")?;
                match &mut msg.parts[p] {
                    Part::Text {
                        state,
                        provider_metadata: pm,
                        citations: c,
                        ..
                    } => {
                        *state = Some(TextState::Done);
                        if citations.is_some() {
                            *c = citations;
                        }
                        if provider_metadata.is_some() {
                            *pm = provider_metadata;
                        }
                    }
                    Part::Reasoning {
                        state,
                        provider_metadata: pm,
                        ..
                    } => {
                        *state = Some(TextState::Done);
                        if provider_metadata.is_some() {
                            *pm = provider_metadata;
                        }
                    }
                    _ => {}
                }
                self.active(kind).remove(&id);
            }
            UiChunk::ToolInputStart(mut c) => {
                let dynamic = c.dynamic == Some(true);
                let tool_name = c.tool_name.take().unwrap_or_default();
                self.partial_tool_calls.insert(
                    c.tool_call_id.clone(),
                    PartialToolCall {
                        input: PartialInput::new(c.input_encoding.as_deref(), ""),
                        synced: None,
                        input_encoding: c.input_encoding.clone(),
                        tool_name: tool_name.clone(),
                        dynamic,
                        title: c.title.clone(),
                        tool_metadata: c.tool_metadata.clone(),
                    },
                );
                let mut u = ToolUpdate::new(&mut c, tool_name, dynamic, ToolState::InputStreaming);
                u.input_encoding = c.input_encoding;
                u.title = c.title;
                update_tool_part(msg, u, None);
            }
            UiChunk::ToolInputDelta(c) => {
                let Some(partial) = self.partial_tool_calls.get_mut(&c.tool_call_id) else {
                    return Err(Violation(format!(
                        "Received tool-input-delta for missing tool call with ID \"{}\". Ensure a \"tool-input-start\" chunk is sent before any \"tool-input-delta\" chunks.",
                        c.tool_call_id
                    )));
                };
                let delta = c.input_text_delta.unwrap_or_default();
                let part = step_tool_part(msg, &c.tool_call_id, partial.dynamic);
                let synced = part.is_some() && part == partial.synced;
                match &mut partial.input {
                    PartialInput::Json(p) => {
                        // The part shows the parser's value, lent to it at the last delta
                        // (no copy per delta): take it back unless another chunk wrote the
                        // part since; a value not given back is rebuilt from the text.
                        let before = p.text().len();
                        let tool = part
                            .filter(|_| synced && p.is_lent())
                            .and_then(|i| msg.parts[i].as_tool_mut())
                            .filter(|t| match t.raw_input.as_deref() {
                                Some(Value::String(s)) => s.len() == before,
                                _ => true,
                            });
                        if let Some(v) = tool.and_then(|t| t.input.take()).map(Json::into_value) {
                            p.restore_value(v);
                        }
                        p.push(&delta);
                    }
                    PartialInput::Text(t) => t.push_str(&delta),
                }
                // `rawInput` (and a `text` input) is the whole text so far: append the delta
                // to the part's copy rather than copy the text again, so a long input costs
                // linear work, not quadratic.
                let (raw_input, text_input) = {
                    let full = partial.input.text();
                    let mut tool = part.and_then(|p| msg.parts[p].as_tool_mut());
                    let extended = |field: Option<&mut Value>| match field {
                        Some(Value::String(s)) if synced && s.len() + delta.len() == full.len() => {
                            let mut s = std::mem::take(s);
                            s.push_str(&delta);
                            s
                        }
                        _ => full.to_string(),
                    };
                    let raw_input =
                        extended(tool.as_mut().and_then(|t| t.raw_input.as_deref_mut()));
                    let text_input = match &partial.input {
                        PartialInput::Text(_) => {
                            let input =
                                tool.and_then(|t| t.input.as_mut()).and_then(Json::tree_mut);
                            Some(Value::String(extended(input)))
                        }
                        PartialInput::Json(_) => None,
                    };
                    (raw_input, text_input)
                };
                let input = match &mut partial.input {
                    PartialInput::Text(_) => text_input,
                    // The value is kept up to date in place by the parser and moved into the
                    // part: no copy per delta.
                    PartialInput::Json(p) => p.lend_value(),
                };
                let u = ToolUpdate {
                    tool_call_id: c.tool_call_id,
                    tool_name: partial.tool_name.clone(),
                    dynamic: partial.dynamic,
                    state: ToolState::InputStreaming,
                    input,
                    input_encoding: partial.input_encoding.clone(),
                    raw_input: Some(Value::String(raw_input)),
                    output: None,
                    error_text: None,
                    preliminary: None,
                    provider_executed: None,
                    provider_metadata: None,
                    title: partial.title.clone(),
                    tool_metadata: partial.tool_metadata.clone(),
                };
                partial.synced = Some(update_tool_part(msg, u, part));
            }
            UiChunk::ToolInputAvailable(mut c) => {
                self.unsync(&c.tool_call_id);
                let dynamic = c.dynamic == Some(true);
                let name = c.tool_name.take().unwrap_or_default();
                let call = (c.provider_executed != Some(true)).then(|| ToolCall {
                    tool_call_id: c.tool_call_id.clone(),
                    tool_name: name.clone(),
                    input: c.input.clone().unwrap_or(Value::Null),
                    dynamic,
                });
                let mut u = ToolUpdate::new(&mut c, name, dynamic, ToolState::InputAvailable);
                u.input = c.input;
                u.title = c.title;
                update_tool_part(msg, u, None);
                out.extend(call.map(UiEffect::ToolCall));
            }
            UiChunk::ToolInputError(mut c) => {
                self.unsync(&c.tool_call_id);
                // A part of this call in the current step keeps its kind (static or dynamic).
                let start = current_step(msg);
                let dynamic = msg.parts[start..]
                    .iter()
                    .filter_map(Part::as_tool)
                    .find(|t| t.tool_call_id == c.tool_call_id)
                    .map_or(c.dynamic == Some(true), |t| t.dynamic);
                let name = c.tool_name.take().unwrap_or_default();
                let mut u = ToolUpdate::new(&mut c, name, dynamic, ToolState::OutputError);
                u.input = c.input;
                u.error_text = c.error_text;
                update_tool_part(msg, u, None);
            }
            UiChunk::ToolOutputAvailable(mut c) => {
                self.unsync(&c.tool_call_id);
                let p = tool_invocation(msg, &c.tool_call_id)?;
                let t = msg.parts[p].as_tool_mut().expect("a tool part");
                let (name, dynamic) = (t.tool_name.clone(), t.dynamic);
                let mut u = ToolUpdate::new(&mut c, name, dynamic, ToolState::OutputAvailable);
                u.input = t.input.take().map(Json::into_value);
                u.output = c.output;
                u.preliminary = c.preliminary;
                update_tool_part(msg, u, Some(p));
            }
            UiChunk::ToolOutputError(mut c) => {
                self.unsync(&c.tool_call_id);
                let p = tool_invocation(msg, &c.tool_call_id)?;
                let t = msg.parts[p].as_tool_mut().expect("a tool part");
                let (name, dynamic) = (t.tool_name.clone(), t.dynamic);
                let mut u = ToolUpdate::new(&mut c, name, dynamic, ToolState::OutputError);
                u.input = t.input.take().map(Json::into_value);
                // Only the static tool part keeps its raw input.
                u.raw_input = if dynamic {
                    None
                } else {
                    t.raw_input.take().map(|r| *r)
                };
                u.error_text = c.error_text;
                update_tool_part(msg, u, Some(p));
            }
            UiChunk::ToolOutputDenied(c) => {
                let p = tool_invocation(msg, &c.tool_call_id)?;
                msg.parts[p].as_tool_mut().expect("a tool part").state = ToolState::OutputDenied;
            }
            UiChunk::ToolApprovalRequest {
                tool_call_id,
                approval_id,
                approval_descriptor,
                input_schema_input,
                reason,
                is_automatic,
                signature,
            } => {
                let p = tool_invocation(msg, &tool_call_id)?;
                let mut a = Approval::requested(approval_id);
                a.set_descriptor(approval_descriptor);
                a.set_input_schema_input(input_schema_input);
                a.set_request_reason(reason);
                if is_automatic == Some(true) {
                    a.set_automatic();
                }
                a.set_signature(signature);
                let t = msg.parts[p].as_tool_mut().expect("a tool part");
                t.state = ToolState::ApprovalRequested;
                t.approval = Some(Box::new(a));
            }
            UiChunk::ToolApprovalResponse {
                approval_id,
                approved,
                reason,
                provider_executed,
                provider_metadata,
            } => {
                let Some(t) = msg
                    .parts
                    .iter_mut()
                    .filter_map(Part::as_tool_mut)
                    .find(|t| t.approval.as_deref().is_some_and(|a| a.is(&approval_id)))
                else {
                    return Err(Violation(format!(
                        "No tool invocation found for approval ID \"{approval_id}\"."
                    )));
                };
                let mut a = t.approval.take().map_or_else(Approval::unasked, |a| *a);
                a.answered(approval_id, approved, reason);
                t.approval = Some(Box::new(a));
                t.state = ToolState::ApprovalResponded;
                if provider_executed.is_some() {
                    t.provider_executed = provider_executed;
                }
                if provider_metadata.is_some() {
                    t.call_provider_metadata = provider_metadata.map(Box::new);
                }
            }
            // A file, a source, a custom or steering part: the chunk carries it whole.
            UiChunk::Part(part) => msg.parts.push(part),
            UiChunk::Data(d) => {
                // Transient data only reaches `onData`; other data replaces the part of the
                // same type and id anywhere in the message, or is appended.
                if !d.transient {
                    let existing = d.id.as_ref().and_then(|id| {
                        msg.parts.iter_mut().find_map(|p| match p {
                            Part::Data {
                                name,
                                id: Some(pid),
                                data,
                                ..
                            } if *name == d.name && pid == id => Some(data),
                            _ => None,
                        })
                    });
                    match existing {
                        Some(data) => *data = d.data.clone(),
                        None => msg.parts.push(Part::Data {
                            name: d.name.clone(),
                            id: d.id.clone(),
                            data: d.data.clone(),
                            extra: d.extra.clone(),
                        }),
                    }
                }
                out.push(UiEffect::Data(d));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_objects_is_javascript_spread_and_in() {
        let m = |a: Value, b: Value| merge_objects(&a, &b);
        assert_eq!(
            m(
                json!({"a": {"x": 1, "y": [1]}}),
                json!({"a": {"y": [2]}, "b": null})
            )
            .unwrap(),
            json!({"a": {"x": 1, "y": [2]}, "b": null})
        );
        assert_eq!(
            m(json!([1, 2]), json!({"a": 1})).unwrap(),
            json!({"0": 1, "1": 2, "a": 1})
        );
        assert_eq!(
            m(json!({"a": 1}), json!("xy")).unwrap(),
            json!({"a": 1, "0": "x", "1": "y"})
        );
        assert_eq!(m(json!(5), json!({})).unwrap(), json!({}));
        assert_eq!(
            m(json!({"a": 1}), json!({"constructor": 1})).unwrap(),
            json!({"a": 1})
        );
        assert_eq!(
            m(json!(5), json!({"a": 1})).unwrap_err().0,
            "Cannot use 'in' operator to search for 'a' in 5"
        );
        assert_eq!(
            m(json!(true), json!({"a": 1})).unwrap_err().0,
            "Cannot use 'in' operator to search for 'a' in true"
        );
        assert_eq!(
            m(json!(1.5e-7), json!({"a": 1})).unwrap_err().0,
            "Cannot use 'in' operator to search for 'a' in 1.5e-7"
        );
    }

    /// Streamed tool input: after every delta the part's `input` is what `parsePartialJson`
    /// gives for the whole text so far, however the deltas interleave with other chunks
    /// (the parser's value is lent to the part, not copied, and rebuilt when a chunk wrote
    /// the part in between).
    #[test]
    fn streamed_tool_input_stays_exact_when_lent_to_the_part() {
        use crate::protocol::chunk::{parse_chunk, Chunk};
        let source =
            r#"{"query":"weather in \u00e9t\u00e9","n":[1,2.5,{"deep":[true,null]}],"s":"x"}"#;
        let chars: Vec<char> = source.chars().collect();
        for (seed, dynamic) in [(1u64, false), (2, true), (3, false), (4, true)] {
            let mut msg = UIMessage::new("m", Role::Assistant);
            let mut r = UiMessageReducer::new();
            let mut out = Vec::new();
            let mut feed = |msg: &mut UIMessage, json: String| match parse_chunk(&json) {
                Ok(Chunk::Ui(c)) => r.apply(msg, c, &mut out).unwrap(),
                Ok(Chunk::Data(d)) => r.apply_data(msg, d, &mut out),
                other => panic!("{json}: {other:?}"),
            };
            feed(
                &mut msg,
                format!(
                    r#"{{"type":"tool-input-start","toolCallId":"c","toolName":"t","dynamic":{dynamic}}}"#
                ),
            );
            let (mut at, mut x) = (0, seed);
            let mut sent = String::new();
            while at < chars.len() {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let n = 1 + (x >> 60) as usize % 4;
                let delta: String = chars[at..(at + n).min(chars.len())].iter().collect();
                at += n;
                sent.push_str(&delta);
                feed(
                    &mut msg,
                    format!(
                        r#"{{"type":"tool-input-delta","toolCallId":"c","inputTextDelta":{}}}"#,
                        serde_json::to_string(&delta).unwrap()
                    ),
                );
                let mut want = PartialJson::new();
                want.push(&sent);
                let t = msg.parts.iter().rev().find_map(Part::as_tool).unwrap();
                assert_eq!(
                    t.input.as_ref().and_then(Json::as_tree),
                    want.value_ref(),
                    "after {sent:?}"
                );
                // Other chunks in between, some of which write the part.
                match (x >> 40) % 7 {
                    0 => feed(&mut msg, r#"{"type":"text-start","id":"t"}"#.into()),
                    1 => feed(&mut msg, r#"{"type":"data-x","data":{"a":1}}"#.into()),
                    2 => feed(
                        &mut msg,
                        format!(
                            r#"{{"type":"tool-input-available","toolCallId":"c","toolName":"t","dynamic":{dynamic},"input":{{"early":true}}}}"#
                        ),
                    ),
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn js_numbers() {
        for (f, s) in [
            (5.0, "5"),
            (1.5, "1.5"),
            (-0.25, "-0.25"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1e-7, "1e-7"),
            (1e-6, "0.000001"),
            (123456.789, "123456.789"),
            (-1.5e-7, "-1.5e-7"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.3333333333333333"),
            (123e-20, "1.23e-18"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (4.35, "4.35"),
            (1e15, "1000000000000000"),
            (1e16, "10000000000000000"),
            (12345678901234567890.0, "12345678901234567000"),
            (0.000001234, "0.000001234"),
            (1e-7, "1e-7"),
        ] {
            assert_eq!(js_number(f), s);
        }
    }
}
