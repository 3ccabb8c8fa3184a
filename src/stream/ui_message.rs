//! The AI SDK UI message stream reducer: chunks into one assistant message, the way the `ai`
//! package's `processUIMessageStream` builds `state.message`.
//!
//! One `match` over [`UiChunk`]; parts are addressed by id (text/reasoning stream ids and
//! `toolCallId`), so each chunk costs the same however long the message and history are.
//! A protocol violation the `ai` package rejects (a delta for an unknown id, an output for an
//! unknown tool call) stops processing with a [`Violation`]; the message keeps what it had.

use std::collections::HashMap;

use serde_json::Value;

use crate::protocol::chunk::{DataChunk, PartKind, ToolChunk, UiChunk};
use crate::protocol::{Part, TextState, ToolPart, ToolState, UIMessage};

/// What the caller must act on besides the message itself.
#[derive(Debug, Clone, PartialEq)]
pub enum UiEffect {
    /// `start` named the message (the store renames it in the history).
    MessageId(String),
    /// A data chunk for the host's `onData` (transient ones never reach the message).
    Data(DataChunk),
    /// The stream's `error` chunk.
    Error(String),
    /// `finish`, with the reason if given.
    Finish(Option<String>),
    /// `abort`.
    Abort,
}

/// A chunk the `ai` package rejects; processing stops there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Violation(pub String);

#[derive(Debug, Clone)]
struct PartialToolCall {
    text: String,
    tool_name: String,
    dynamic: bool,
}

/// The reducer's state for one streamed assistant message.
#[derive(Debug, Default, Clone)]
pub struct UiMessageReducer {
    active_text: HashMap<String, usize>,
    active_reasoning: HashMap<String, usize>,
    partial_tool_calls: HashMap<String, PartialToolCall>,
    pub finish_reason: Option<String>,
}

/// `message-metadata`, `start` and `finish` merge metadata deeply: objects merge key by key,
/// anything else (arrays included) replaces.
pub fn merge_metadata(target: &mut Option<Value>, patch: Value) {
    fn merge(t: &mut Value, p: Value) {
        match (t, p) {
            (Value::Object(t), Value::Object(p)) => {
                for (k, v) in p {
                    match t.get_mut(&k) {
                        Some(existing) => merge(existing, v),
                        None => {
                            t.insert(k, v);
                        }
                    }
                }
            }
            (t, p) => *t = p,
        }
    }
    match target {
        Some(t) => merge(t, patch),
        None => *target = Some(patch),
    }
}

fn find_tool(msg: &UIMessage, tool_call_id: &str) -> Option<usize> {
    msg.parts
        .iter()
        .position(|p| p.as_tool().is_some_and(|t| t.tool_call_id == tool_call_id))
}

impl UiMessageReducer {
    pub fn new() -> Self {
        UiMessageReducer::default()
    }

    /// Applies one chunk to `msg`.
    pub fn apply(
        &mut self,
        msg: &mut UIMessage,
        chunk: UiChunk,
        out: &mut Vec<UiEffect>,
    ) -> Result<(), Violation> {
        match chunk {
            UiChunk::Start {
                message_id,
                message_metadata,
            } => {
                if let Some(id) = message_id {
                    out.push(UiEffect::MessageId(id));
                }
                if let Some(md) = message_metadata {
                    merge_metadata(&mut msg.metadata, md);
                }
            }
            UiChunk::StartStep => msg.parts.push(Part::StepStart),
            UiChunk::FinishStep => {
                // A new step starts new text and reasoning parts, even with reused ids.
                self.active_text.clear();
                self.active_reasoning.clear();
            }
            UiChunk::Finish {
                finish_reason,
                message_metadata,
            } => {
                if let Some(md) = message_metadata {
                    merge_metadata(&mut msg.metadata, md);
                }
                if finish_reason.is_some() {
                    self.finish_reason.clone_from(&finish_reason);
                }
                out.push(UiEffect::Finish(finish_reason));
            }
            UiChunk::Abort { .. } => out.push(UiEffect::Abort),
            UiChunk::Error { error_text } => out.push(UiEffect::Error(error_text)),
            UiChunk::MessageMetadata { message_metadata } => {
                merge_metadata(&mut msg.metadata, message_metadata)
            }
            UiChunk::PartStart {
                kind,
                id,
                provider_metadata,
            } => {
                let part = match kind {
                    PartKind::Text => Part::Text {
                        text: String::new(),
                        state: Some(TextState::Streaming),
                        provider_metadata,
                    },
                    PartKind::Reasoning => Part::Reasoning {
                        text: String::new(),
                        state: Some(TextState::Streaming),
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
            } => {
                let p = self.active_part(kind, &id, "delta")?;
                if let Part::Text {
                    text,
                    provider_metadata: pm,
                    ..
                }
                | Part::Reasoning {
                    text,
                    provider_metadata: pm,
                    ..
                } = &mut msg.parts[p]
                {
                    text.push_str(&delta);
                    if provider_metadata.is_some() {
                        *pm = provider_metadata;
                    }
                }
            }
            UiChunk::PartEnd {
                kind,
                id,
                provider_metadata,
            } => {
                let p = self.active_part(kind, &id, "end")?;
                if let Part::Text {
                    state,
                    provider_metadata: pm,
                    ..
                }
                | Part::Reasoning {
                    state,
                    provider_metadata: pm,
                    ..
                } = &mut msg.parts[p]
                {
                    *state = Some(TextState::Done);
                    if provider_metadata.is_some() {
                        *pm = provider_metadata;
                    }
                }
                self.active(kind).remove(&id);
            }
            UiChunk::ToolInputStart(c) => {
                let dynamic = c.dynamic.unwrap_or(false);
                let tool_name = c.tool_name.clone().unwrap_or_default();
                self.partial_tool_calls.insert(
                    c.tool_call_id.clone(),
                    PartialToolCall {
                        text: String::new(),
                        tool_name,
                        dynamic,
                    },
                );
                update_tool(msg, c, ToolState::InputStreaming, |t, _| t.input = None);
            }
            UiChunk::ToolInputDelta(c) => {
                let Some(partial) = self.partial_tool_calls.get_mut(&c.tool_call_id) else {
                    return Err(Violation(format!(
                        "Received tool-input-delta for missing tool call with ID \"{}\". Ensure a \"tool-input-start\" chunk is sent before any \"tool-input-delta\" chunks.",
                        c.tool_call_id
                    )));
                };
                partial
                    .text
                    .push_str(c.input_text_delta.as_deref().unwrap_or(""));
                // Whole-buffer parse only when the text could be complete JSON; the
                // incremental partial-JSON parser of the `ai` parity work replaces this.
                let parsed = partial
                    .text
                    .trim_end()
                    .ends_with(['}', ']', '"'])
                    .then(|| serde_json::from_str::<Value>(&partial.text).ok())
                    .flatten();
                let (name, dynamic) = (partial.tool_name.clone(), partial.dynamic);
                let c = ToolChunk {
                    tool_name: Some(name),
                    dynamic: Some(dynamic),
                    ..c
                };
                update_tool(msg, c, ToolState::InputStreaming, |t, _| {
                    if parsed.is_some() {
                        t.input = parsed;
                    }
                });
            }
            UiChunk::ToolInputAvailable(c) => {
                self.partial_tool_calls.remove(&c.tool_call_id);
                update_tool(msg, c, ToolState::InputAvailable, |t, c| {
                    t.input = c.input.take()
                });
            }
            UiChunk::ToolInputError(c) => {
                self.partial_tool_calls.remove(&c.tool_call_id);
                update_tool(msg, c, ToolState::OutputError, |t, c| {
                    t.input = None;
                    t.raw_input = c.input.take();
                    t.error_text = c.error_text.take();
                });
            }
            UiChunk::ToolOutputAvailable(c) => {
                let p = existing_tool(msg, &c.tool_call_id)?;
                let t = msg.parts[p].as_tool_mut().expect("found as a tool part");
                t.state = ToolState::OutputAvailable;
                t.output = c.output;
                t.preliminary = c.preliminary;
                if c.provider_executed.is_some() {
                    t.provider_executed = c.provider_executed;
                }
            }
            UiChunk::ToolOutputError(c) => {
                let p = existing_tool(msg, &c.tool_call_id)?;
                let t = msg.parts[p].as_tool_mut().expect("found as a tool part");
                t.state = ToolState::OutputError;
                t.error_text = c.error_text;
                if c.provider_executed.is_some() {
                    t.provider_executed = c.provider_executed;
                }
            }
            UiChunk::ToolOutputDenied(c) => {
                let p = existing_tool(msg, &c.tool_call_id)?;
                msg.parts[p]
                    .as_tool_mut()
                    .expect("found as a tool part")
                    .state = ToolState::OutputDenied;
            }
            UiChunk::ToolApprovalRequest(c) => {
                let p = existing_tool(msg, &c.tool_call_id)?;
                let t = msg.parts[p].as_tool_mut().expect("found as a tool part");
                t.state = ToolState::ApprovalRequested;
                t.approval = Some(serde_json::json!({ "id": c.approval_id }));
            }
            UiChunk::SourceUrl {
                source_id,
                url,
                title,
                provider_metadata,
            } => msg.parts.push(Part::SourceUrl {
                source_id,
                url,
                title,
                provider_metadata,
            }),
            UiChunk::SourceDocument {
                source_id,
                media_type,
                title,
                filename,
                provider_metadata,
            } => msg.parts.push(Part::SourceDocument {
                source_id,
                media_type,
                title,
                filename,
                provider_metadata,
            }),
            UiChunk::File {
                url,
                media_type,
                provider_metadata,
            } => msg.parts.push(Part::File {
                media_type,
                filename: None,
                url,
                provider_metadata,
            }),
        }
        Ok(())
    }

    /// A `data-NAME` chunk: transient ones only reach `onData`; others replace the part of
    /// the same type and id, or are appended.
    pub fn apply_data(&mut self, msg: &mut UIMessage, chunk: DataChunk, out: &mut Vec<UiEffect>) {
        if !chunk.transient {
            let existing = chunk.id.as_ref().and_then(|id| {
                msg.parts.iter_mut().find(|p| {
                    matches!(p, Part::Data { name, id: Some(pid), .. } if *name == chunk.name && pid == id)
                })
            });
            match existing {
                Some(Part::Data { data, .. }) => *data = chunk.data.clone(),
                _ => msg.parts.push(Part::Data {
                    name: chunk.name.clone(),
                    id: chunk.id.clone(),
                    data: chunk.data.clone(),
                }),
            }
        }
        out.push(UiEffect::Data(chunk));
    }

    fn active(&mut self, kind: PartKind) -> &mut HashMap<String, usize> {
        match kind {
            PartKind::Text => &mut self.active_text,
            PartKind::Reasoning => &mut self.active_reasoning,
        }
    }

    fn active_part(&mut self, kind: PartKind, id: &str, what: &str) -> Result<usize, Violation> {
        self.active(kind).get(id).copied().ok_or_else(|| {
            let k = match kind {
                PartKind::Text => "text",
                PartKind::Reasoning => "reasoning",
            };
            Violation(format!(
                "Received {k}-{what} for missing {k} part with ID \"{id}\". Ensure a \"{k}-start\" chunk is sent before any \"{k}-{what}\" chunks."
            ))
        })
    }
}

fn existing_tool(msg: &UIMessage, tool_call_id: &str) -> Result<usize, Violation> {
    find_tool(msg, tool_call_id).ok_or_else(|| {
        Violation(format!(
            "No tool invocation found for tool call ID \"{tool_call_id}\"."
        ))
    })
}

/// Updates the tool part of `c.tool_call_id`, creating it (as `tool-NAME` or `dynamic-tool`)
/// when new, the way the `ai` package's `updateToolPart` does.
fn update_tool(
    msg: &mut UIMessage,
    mut c: ToolChunk,
    state: ToolState,
    set: impl FnOnce(&mut ToolPart, &mut ToolChunk),
) {
    let p = match find_tool(msg, &c.tool_call_id) {
        Some(p) => p,
        None => {
            let part = ToolPart::new(
                c.tool_call_id.clone(),
                c.tool_name.clone().unwrap_or_default(),
                c.dynamic.unwrap_or(false),
            );
            msg.parts.push(Part::Tool(Box::new(part)));
            msg.parts.len() - 1
        }
    };
    let t = msg.parts[p].as_tool_mut().expect("a tool part");
    t.state = state;
    if c.provider_executed.is_some() {
        t.provider_executed = c.provider_executed;
    }
    if c.title.is_some() {
        t.title = c.title.take();
    }
    if c.provider_metadata.is_some() {
        t.call_provider_metadata = c.provider_metadata.take();
    }
    set(t, &mut c);
}
