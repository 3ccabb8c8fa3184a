//! The pure helpers: replay a list of chunks without a store or a transport (SPEC §9).
//! Hosts with their own transport use them, and so do the fixture and differential tests.

use serde_json::Value;

use crate::protocol::chunk::{strict_ui_chunk, Chunk, ChunkError};
use crate::protocol::{Role, UIMessage};
use crate::reduce::ui_message::{UiEffect, UiMessageReducer};
#[cfg(feature = "pi")]
use crate::{
    policy::composer::Status,
    protocol::pi_native::{parse_frame, parse_line, parse_state, QueueRow},
    reduce::conversation::{Conversation, Effect, TurnView},
    reduce::pi_native::{Gate, NativeEffect, NativeSession, RunStatus},
    util::random::SeededRandom,
};

/// What [`replay_ui_message_stream`] gives back.
#[derive(Debug, Clone, PartialEq)]
pub struct UiReplay {
    /// The reducer's whole state after the last chunk it processed (the `ai` package's
    /// `state.message`).
    pub message: UIMessage,
    /// `finishReason`: the last one a `finish` chunk gave.
    pub finish_reason: Option<String>,
    /// Set when a chunk violated the protocol; processing stopped there.
    pub error: Option<String>,
}

/// One chunk as the replay helpers take it: already-parsed JSON (from JS) or an SSE event's
/// data text.
pub enum ChunkInput<'a> {
    /// Parsed JSON: a chunk object handed over from JS.
    Value(Value),
    /// An SSE event's `data` text, parsed here.
    Text(&'a str),
}

#[cfg(feature = "pi")]
fn read(input: ChunkInput<'_>) -> Result<Chunk, ChunkError> {
    match input {
        ChunkInput::Value(v) => crate::protocol::chunk::chunk_from_value(v),
        ChunkInput::Text(t) => crate::protocol::chunk::parse_chunk(t),
    }
}

/// Reduces AI SDK chunks into one assistant message the way the `ai` package's stream
/// processor does for `useChat` over HTTP: each chunk is checked against the package's chunk
/// schema first (a chunk it rejects, an unknown type included, stops the stream with an
/// error), then reduced by `processUIMessageStream`, whose `state.message` is the result.
///
/// `message_id` names a new message; `last_message`, an assistant message, is continued
/// instead (another role only lends its id when `message_id` is absent, as in the `ai`
/// package). An `error` chunk does not stop the stream: it is the server's report, not a
/// violation. A `start` with another `messageId` renames the message, as the processor does by
/// default (`useChat`); with `reset_on_message_id_change` it starts the message over, as
/// `readUIMessageStream` (a stream of several messages) and a resumed `useChat` stream do.
pub fn replay_ui_message_stream<'a>(
    chunks: impl IntoIterator<Item = ChunkInput<'a>>,
    message_id: Option<String>,
    last_message: Option<UIMessage>,
    reset_on_message_id_change: bool,
) -> UiReplay {
    let mut message = match last_message {
        Some(m) if m.role == Role::Assistant => m,
        other => UIMessage::new(
            message_id.or(other.map(|m| m.id)).unwrap_or_default(),
            Role::Assistant,
        ),
    };
    let mut reducer =
        UiMessageReducer::new().reset_on_message_id_change(reset_on_message_id_change);
    let mut effects = Vec::new();
    let mut error = None;
    for input in chunks {
        let chunk = match input {
            ChunkInput::Value(v) => strict_ui_chunk(v),
            ChunkInput::Text(t) => crate::protocol::json::from_slice(t.as_bytes())
                .map_err(|e| ChunkError::Json(e.to_string()))
                .and_then(strict_ui_chunk),
        };
        let result = match chunk {
            Ok(Chunk::Ui(c)) => reducer
                .apply(&mut message, c, &mut effects)
                .map_err(|v| v.0),
            Ok(Chunk::Data(d)) => {
                reducer.apply_data(&mut message, d, &mut effects);
                Ok(())
            }
            // `strict_ui_chunk` gives only the two above.
            Ok(Chunk::Pi(_) | Chunk::Unknown { .. }) => Ok(()),
            Err(e) => Err(e.to_string()),
        };
        for e in effects.drain(..) {
            if let UiEffect::MessageId(id) = e {
                message.id = id;
            }
        }
        if let Err(e) = result {
            error = Some(e);
            break;
        }
    }
    UiReplay {
        message,
        finish_reason: reducer.finish_reason,
        error,
    }
}

#[cfg(feature = "pi")]
/// What [`replay_pi_stream`] gives back.
#[derive(Debug, Clone, PartialEq)]
pub struct PiReplay {
    /// The history after the last chunk, in order.
    pub messages: Vec<UIMessage>,
    /// The `data-tool-ui` updates seen, by tool call (for the tool parts' resolved `ui`).
    pub tool_ui: crate::policy::tool_ui::ToolUiUpdates,
    /// Chunks that could not be read and oddities the reducer survived.
    pub diagnostics: Vec<String>,
}

#[cfg(feature = "pi")]
/// Reduces a chunk list (both families, interleaved) in pi mode, through the store's own
/// authority gate ([`Conversation`]): only `data-pi-*` chunks change history; a new
/// `data-turn-start` restarts the seq watermark.
pub fn replay_pi_stream<'a>(chunks: impl IntoIterator<Item = ChunkInput<'a>>) -> PiReplay {
    let mut conversation = Conversation::new(true);
    // Never asked: ids are made only for the AI SDK reducer's messages.
    let mut ids = SeededRandom(0);
    let mut effects = Vec::new();
    let mut diagnostics = Vec::new();
    let mut tool_ui = crate::policy::tool_ui::ToolUiUpdates::new();
    for input in chunks {
        match read(input) {
            Ok(chunk) => conversation.apply(chunk, TurnView::default(), &mut ids, &mut effects),
            Err(e) => diagnostics.push(e.to_string()),
        }
        for e in effects.drain(..) {
            match e {
                Effect::ToolUi(call, update) => {
                    tool_ui.insert(call, update);
                }
                Effect::Diagnostic(d) | Effect::Lost(_, d) => diagnostics.push(d),
                _ => {}
            }
        }
    }
    conversation.end_of_stream();
    PiReplay {
        messages: conversation.history().messages().to_vec(),
        tool_ui,
        diagnostics,
    }
}

#[cfg(feature = "pi")]
/// What [`replay_pi_native_events`] gives back.
#[derive(Debug, Clone, PartialEq)]
pub struct PiNativeReplay {
    /// The history after the last frame, in order.
    pub messages: Vec<UIMessage>,
    /// The server's follow-up queue after the last frame.
    pub queued: Vec<QueueRow>,
    /// `ready`, `streaming` or `error`, as the store's status says it.
    pub status: Status,
    /// The cursor: the seq of the last event applied.
    pub seq: u64,
    /// The run's error, while the session is in error.
    pub error: Option<String>,
    /// Lines that could not be read, gaps, and oddities the reducer survived.
    pub diagnostics: Vec<String>,
}

#[cfg(feature = "pi")]
/// Reduces pi-native frames (SPEC §14), after a `/state` document when one is given, as the
/// store does: through the seq gate (a stale event is ignored; a gap is reported and the
/// event dropped, where the store would re-read `/state`), into the pi reducer's history.
pub fn replay_pi_native_events<'a>(
    frames: impl IntoIterator<Item = ChunkInput<'a>>,
    state: Option<Value>,
) -> Result<PiNativeReplay, String> {
    let mut session = NativeSession::new();
    if let Some(doc) = state {
        session.apply_state(parse_state(doc)?, false);
    }
    let mut diagnostics = Vec::new();
    let mut effects = Vec::new();
    for input in frames {
        let frame = match input {
            ChunkInput::Value(v) => parse_frame(v),
            ChunkInput::Text(t) if t.trim().is_empty() => continue,
            ChunkInput::Text(t) => parse_line(t.trim()),
        };
        match frame.map(|f| session.apply(f, &mut effects)) {
            Ok(Gate::Gap { expected, actual }) => {
                diagnostics.push(format!("seq gap: expected {expected}, got {actual}"))
            }
            Ok(_) => {}
            Err(e) => diagnostics.push(e.to_string()),
        }
        for e in effects.drain(..) {
            if let NativeEffect::Diagnostic(d) = e {
                diagnostics.push(d);
            }
        }
    }
    let status = match session.status() {
        RunStatus::Idle => Status::Ready,
        RunStatus::Running => Status::Streaming,
        RunStatus::Failed => Status::Error,
    };
    Ok(PiNativeReplay {
        messages: session.messages().to_vec(),
        queued: session.queue().to_vec(),
        status,
        seq: session.seq(),
        error: session.error().map(str::to_string),
        diagnostics,
    })
}

/// Splits an SSE body into its chunks' data (without `[DONE]`), for tests and tools.
pub fn sse_data(body: &[u8]) -> Vec<String> {
    let mut d = crate::codec::sse::SseDecoder::new();
    let mut out: Vec<String> = d
        .push(body)
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.data)
        .filter(|d| d != "[DONE]")
        .collect();
    d.finish();
    out.shrink_to_fit();
    out
}
