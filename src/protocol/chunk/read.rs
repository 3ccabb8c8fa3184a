//! Reading a chunk of each family from its JSON object: UI chunks, tool chunks, data chunks
//! and pi events, each field checked.

use super::*;

/// The typed UI chunk of a non-data type, `None` for a type this version does not know.
pub(super) fn ui_chunk(t: &str, o: &mut Object) -> Result<Option<UiChunk>, ChunkError> {
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

pub(super) fn kind_of(chunk_type: &str) -> PartKind {
    if chunk_type.starts_with("reasoning") {
        PartKind::Reasoning
    } else {
        PartKind::Text
    }
}

pub(super) fn tool_chunk(
    o: &mut Object,
    t: &str,
    required: &[&'static str],
) -> Result<ToolChunk, ChunkError> {
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

pub(super) fn plain_data_chunk(name: &str, mut obj: Object) -> DataChunk {
    DataChunk {
        name: name.to_string(),
        id: take_str(&mut obj, "id"),
        transient: get_bool(&obj, "transient").unwrap_or(false),
        data: obj.remove("data").unwrap_or(Value::Null),
        extra: obj,
    }
}

pub(super) fn data_chunk(name: &str, mut obj: Object) -> Result<Chunk, ChunkError> {
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

/// Reads a pi projection event. `name` is the chunk type without `data-`.
pub(super) fn pi_event(name: &str, mut d: Object) -> Result<PiEvent, ChunkError> {
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
    // Without the pi reducer (the AI SDK build) only what AI SDK mode uses is read: the mode,
    // a user message's start, the turn's id, and the deltas (the fast path reads them and
    // gives what this gives). The others are passed over in that mode (SPEC §8), so that
    // build reads them as `Other`: the same in the store, and not their readers' bytes.
    Ok(match name {
        "pi-mode" => PiEvent::Mode {
            enabled: get_bool(d, "enabled").unwrap_or(true),
        },
        #[cfg(feature = "pi")]
        "pi-agent-start" => PiEvent::AgentStart { seq },
        #[cfg(feature = "pi")]
        "pi-agent-end" => PiEvent::AgentEnd { seq },
        "pi-message-start" => PiEvent::MessageStart {
            seq,
            message_id: mid(d)?,
            role: role(d)?,
            client_nonce: take_str(d, "clientNonce"),
            text: take_str(d, "text"),
        },
        #[cfg(feature = "pi")]
        "pi-message-end" => PiEvent::MessageEnd {
            seq,
            message_id: mid(d)?,
            role: role(d)?,
            text: take_str(d, "text"),
            // A `final` snapshot that is not a valid message is dropped rather than failing
            // the whole end event: the deltas already built the message.
            final_message: take(d, "final").and_then(|v| UIMessage::from_json(v).ok()),
        },
        #[cfg(feature = "pi")]
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
        #[cfg(feature = "pi")]
        "pi-text-end" | "pi-reasoning-end" => PiEvent::PartEnd {
            seq,
            kind,
            message_id: mid(d)?,
            part_id: req_str(d, &t, "partId")?,
            text: take_str(d, "text"),
        },
        #[cfg(feature = "pi")]
        "pi-tool-call-start" => PiEvent::ToolCallStart {
            seq,
            message_id: mid(d)?,
            tool_call_id: req_str(d, &t, "toolCallId")?,
            tool_name: take_str(d, "toolName"),
        },
        #[cfg(feature = "pi")]
        "pi-tool-call-delta" => PiEvent::ToolCallDelta {
            seq,
            message_id: mid(d)?,
            tool_call_id: req_str(d, &t, "toolCallId")?,
            delta: take(d, "delta").unwrap_or(Value::Null),
        },
        #[cfg(feature = "pi")]
        "pi-tool-call-end" => PiEvent::ToolCallEnd {
            seq,
            message_id: mid(d)?,
            tool_call_id: req_str(d, &t, "toolCallId")?,
            tool_name: take_str(d, "toolName"),
            input: take(d, "input"),
        },
        #[cfg(feature = "pi")]
        "pi-tool-result" => PiEvent::ToolResult {
            seq,
            message_id: mid(d)?,
            tool_call_id: req_str(d, &t, "toolCallId")?,
            tool_name: take_str(d, "toolName"),
            output: take(d, "output"),
            is_error: get_bool(d, "isError").unwrap_or(false),
            details: take(d, "details"),
        },
        #[cfg(feature = "pi")]
        "pi-tool-approval-request" => PiEvent::ToolApprovalRequest {
            seq,
            message_id: mid(d)?,
            tool_call_id: req_str(d, &t, "toolCallId")?,
            approval_id: req_str(d, &t, "approvalId")?,
            reason: take_str(d, "reason"),
        },
        #[cfg(feature = "pi")]
        "pi-tool-approval-response" => PiEvent::ToolApprovalResponse {
            seq,
            message_id: mid(d)?,
            tool_call_id: req_str(d, &t, "toolCallId")?,
            approval_id: req_str(d, &t, "approvalId")?,
            approved: get_bool(d, "approved").ok_or_else(|| missing(&t, "approved"))?,
            reason: take_str(d, "reason"),
        },
        #[cfg(feature = "pi")]
        "pi-tool-input-request" => PiEvent::ToolInputRequest {
            seq,
            message_id: mid(d)?,
            tool_call_id: req_str(d, &t, "toolCallId")?,
            question: take_str(d, "question"),
            options: take(d, "options").and_then(|v| match v {
                Value::Array(a) => Some(
                    a.into_iter()
                        .filter_map(|o| o.as_str().map(str::to_string))
                        .collect(),
                ),
                _ => None,
            }),
        },
        #[cfg(feature = "pi")]
        "pi-message-delta" => PiEvent::LegacyMessageDelta {
            seq,
            message_id: mid(d)?,
            delta: req_str(d, &t, "delta")?,
        },
        #[cfg(feature = "pi")]
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
