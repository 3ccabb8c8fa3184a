//! The pure helpers for JS (SPEC §9): replays without a store, and the SSE decoder.

use js_sys::{Array, Uint8Array};
#[cfg(feature = "replay")]
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

#[cfg(feature = "replay")]
use agent_chat_store::shell_json::to_string;
#[cfg(feature = "replay")]
use agent_chat_store::ChunkInput;
#[cfg(feature = "replay")]
use agent_chat_store::UIMessage;

#[cfg(feature = "replay")]
use super::{js, json_value, usage_error};

#[cfg(feature = "replay")]
fn chunk_list(chunks: &JsValue) -> Result<Vec<Value>, JsValue> {
    match json_value(chunks, "chunks")? {
        Value::Array(list) => Ok(list),
        _ => Err(usage_error("chunks must be an array of chunk objects")),
    }
}

#[cfg(feature = "replay")]
/// `replayUiMessageStream(chunks, {messageId?, lastMessage?, resetOnMessageIdChange?})
/// → {message, finishReason?, error?}`
#[wasm_bindgen(js_name = replayUiMessageStream, skip_typescript)]
pub fn replay_ui_message_stream(chunks: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
    let list = chunk_list(&chunks)?;
    let opts = json_value(&options, "options")?;
    let message_id = opts
        .get("messageId")
        .and_then(Value::as_str)
        .map(str::to_string);
    let last_message = match opts.get("lastMessage") {
        Some(v) if !v.is_null() => Some(
            UIMessage::from_json(v.clone())
                .map_err(|e| usage_error(&format!("lastMessage: {e}")))?,
        ),
        _ => None,
    };
    let reset = opts.get("resetOnMessageIdChange").and_then(Value::as_bool);
    let r = agent_chat_store::replay_ui_message_stream(
        list.into_iter().map(ChunkInput::Value),
        message_id,
        last_message,
        reset.unwrap_or(false),
    );
    let mut out = json!({ "message": r.message });
    if let Some(f) = r.finish_reason {
        out["finishReason"] = Value::String(f);
    }
    if let Some(e) = r.error {
        out["error"] = json!({ "message": e });
    }
    Ok(js::parse(&to_string(&out)))
}

#[cfg(all(feature = "replay", feature = "pi"))]
/// `replayPiStream(chunks) → {messages}`
#[wasm_bindgen(js_name = replayPiStream, skip_typescript)]
pub fn replay_pi_stream(chunks: JsValue) -> Result<JsValue, JsValue> {
    let list = chunk_list(&chunks)?;
    let r = agent_chat_store::replay_pi_stream(list.into_iter().map(ChunkInput::Value));
    // As the store exports them: tool parts carry their resolved `ui` (no catalog here).
    let messages: Vec<Value> = r
        .messages
        .iter()
        .map(|m| agent_chat_store::shell_export_message(m, &r.tool_ui, &[]))
        .collect();
    let out = json!({ "messages": messages, "diagnostics": r.diagnostics });
    Ok(js::parse(&to_string(&out)))
}

#[cfg(all(feature = "replay", feature = "pi"))]
/// `replayPiNativeEvents(frames, {state?}) → {messages, queued, status, seq, error?,
/// diagnostics}`: pi-native frames (SPEC §14: event objects, bare or in their `{ref, seq,
/// event}` envelope, or NDJSON lines as strings), after a `/state` answer when given.
#[wasm_bindgen(js_name = replayPiNativeEvents, skip_typescript)]
pub fn replay_pi_native_events(frames: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
    let list = match json_value(&frames, "frames")? {
        Value::Array(list) => list,
        _ => return Err(usage_error("frames must be an array of events or lines")),
    };
    let state = match json_value(&options, "options")?.get("state") {
        Some(v) if !v.is_null() => Some(v.clone()),
        _ => None,
    };
    let inputs = list.iter().map(|f| match f {
        Value::String(line) => ChunkInput::Text(line),
        other => ChunkInput::Value(other.clone()),
    });
    let r = agent_chat_store::replay_pi_native_events(inputs, state)
        .map_err(|e| super::arg_error("state", &format!("state: {e}")))?;
    let queued: Vec<Value> = (r.queued.iter())
        .map(|q| {
            let mut row = json!({"id": q.id, "text": q.text});
            if let Some(n) = &q.client_nonce {
                row["clientNonce"] = json!(n);
            }
            if let Some(s) = q.client_seq {
                row["clientSeq"] = json!(s);
            }
            row
        })
        .collect();
    let mut out = json!({
        "messages": r.messages,
        "queued": queued,
        "status": r.status,
        "seq": r.seq,
        "diagnostics": r.diagnostics,
    });
    if let Some(e) = r.error {
        out["error"] = json!({ "message": e });
    }
    Ok(js::parse(&to_string(&out)))
}

/// An incremental SSE decoder: `push(bytes)` gives the data of every event completed so far.
#[wasm_bindgen(skip_typescript)]
pub struct SseDecoder {
    inner: agent_chat_store::SseDecoder,
    batch: agent_chat_store::SseBatch,
    skipped: u32,
}

#[wasm_bindgen]
impl SseDecoder {
    #[wasm_bindgen(constructor)]
    pub fn new(max_event_bytes: JsValue) -> SseDecoder {
        let inner = match max_event_bytes.as_f64() {
            Some(n) if n.is_finite() && n > 0.0 => {
                agent_chat_store::SseDecoder::with_max_event_bytes(n as usize)
            }
            _ => agent_chat_store::SseDecoder::new(),
        };
        SseDecoder {
            inner,
            batch: agent_chat_store::SseBatch::default(),
            skipped: 0,
        }
    }

    /// Bytes split anywhere; returns the data of each completed event. An event over the size
    /// limit is skipped (counted in `skipped`), and decoding goes on after it.
    pub fn push(&mut self, bytes: JsValue) -> Result<Array, JsValue> {
        // Known by what it is, not by realm (`instanceof` refuses jsdom's or a worker's bytes).
        if !js_sys::ArrayBuffer::is_view(&bytes) {
            return Err(super::arg_error("bytes", "bytes must be a Uint8Array"));
        }
        let view =
            |key: &str| js_sys::Reflect::get(&bytes, &JsValue::from_str(key)).unwrap_or_default();
        let bytes = Uint8Array::new_with_byte_offset_and_length(
            &view("buffer"),
            view("byteOffset").as_f64().unwrap_or(0.0) as u32,
            view("byteLength").as_f64().unwrap_or(0.0) as u32,
        );
        self.inner.push_into(&bytes.to_vec(), &mut self.batch);
        let out = Array::new();
        for item in self.batch.iter() {
            match item {
                Ok(data) => {
                    out.push(&JsValue::from_str(data));
                }
                Err(_) => self.skipped += 1,
            }
        }
        self.batch.clear();
        Ok(out)
    }

    /// How many events were skipped for exceeding the size limit.
    #[wasm_bindgen(getter)]
    pub fn skipped(&self) -> u32 {
        self.skipped
    }

    /// The body ended: an unterminated event is discarded (WHATWG). Returns no events.
    pub fn finish(&mut self) -> Array {
        self.inner.finish();
        Array::new()
    }
}
