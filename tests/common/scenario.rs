//! Setups the store's scenario tests (`tests/store_*.rs`, `tests/fault_scenarios.rs`) share:
//! the routes they check, the recorded prompt-and-follow-up trace (whole, or cut mid-event and
//! resumed), a turn left streaming, AI SDK answers, a turn that ends in tool calls (left open
//! or continued), a hydrating store.

use agent_chat_store::Status;
use agent_chat_store::{AutoSend, RequestId, RequestKind, SubmitKind};
use agent_chat_store::{Capabilities, FileAttachment, ToolState};
use serde_json::{json, Value};

use super::{fixture, options_with, sse, sse_events, Harness, Reply, Sent, AI_SDK_CAPS, DONE};

pub const CHAT: &str = "/api/v1/agent/chat";
pub const FOLLOWUP: &str = "/api/v1/agent/chat/S/followup";
pub const MESSAGES: &str = "/api/v1/agent/chat/S/messages";

/// The server took the follow-up: 202 `{queued:true}`.
pub fn accepted() -> Reply {
    Reply::json(202, json!({"queued": true}))
}

/// A PNG attachment at `url`.
pub fn file(url: &str) -> FileAttachment {
    FileAttachment {
        media_type: "image/png".into(),
        filename: Some("dot.png".into()),
        url: url.into(),
        provider_reference: None,
        provider_metadata: None,
    }
}

/// A store with static capabilities `caps` that hydrates on start: its history request
/// (`MessagesGet`) is open.
pub fn hydrating(caps: Capabilities) -> Harness {
    let mut opts = options_with(caps);
    opts.hydrate = true;
    Harness::new(opts)
}

/// A store with static capabilities `caps` whose history request was answered with `body`.
pub fn hydrated(caps: Capabilities, body: Value) -> Harness {
    let mut h = hydrating(caps);
    let get = h.the_open(RequestKind::MessagesGet).id;
    h.respond(get, Reply::json(200, body));
    h
}

/// Sends `text` from ready and lets the chat POST start streaming (a head and a first event),
/// leaving the stream open. Returns the chat request's id.
pub fn streaming_turn(h: &mut Harness, text: &str) -> RequestId {
    assert_eq!(h.send(text).kind, SubmitKind::Sent);
    let chat = h.the_open(RequestKind::Chat).id;
    let first = sse(&[json!({"type": "data-turn-start", "data": {"turnId": "turn-1"}})]);
    h.respond(chat, Reply::sse(first).open());
    assert_eq!(h.store.status(), Status::Streaming);
    chat
}

/// Queues `text` during the running turn and lets the server accept its POST; returns that
/// POST (its `clientSeq` and `clientNonce` name the server's copy).
pub fn accepted_follow_up(h: &mut Harness, text: &str) -> Sent {
    h.submit(text);
    let post = h.the_open(RequestKind::FollowUpPost);
    h.respond(post.id, accepted());
    post
}

/// Ends the turn's stream cleanly.
pub fn end_turn(h: &mut Harness, chat: RequestId) {
    h.respond(chat, Reply::sse(DONE.to_vec()));
}

// ----- the recorded pi trace -----

/// The legacy server's trace of a prompt ("[A] hello") and a follow-up, as an SSE body.
pub fn trace() -> Vec<u8> {
    fixture("trace-prompt-followup.sse")
}

/// The canonical history the server holds after [`trace`].
pub fn canonical_trace_history() -> Vec<Value> {
    let v: Value = serde_json::from_slice(&fixture("trace-prompt-followup.messages.json")).unwrap();
    v["messages"].as_array().unwrap().clone()
}

/// Cuts the trace mid-event after `complete` whole events.
pub fn cut_trace(complete: usize) -> (Vec<u8>, Vec<Vec<u8>>) {
    let events = sse_events(&trace());
    let mut sent = events[..complete].concat();
    sent.extend_from_slice(&events[complete][..10]); // a few bytes of the next one
    (sent, events)
}

/// Sends "[A] hello" and lets its answer, the trace, break off in the middle of the event
/// after the first `complete` ones ([`cut_trace`]). Returns the chat request's id and the
/// trace's events.
pub fn broken_trace_turn(h: &mut Harness, complete: usize) -> (RequestId, Vec<Vec<u8>>) {
    h.send("[A] hello");
    let chat = h.the_open(RequestKind::Chat).id;
    let (sent, events) = cut_trace(complete);
    h.respond(chat, Reply::sse(sent).broken("connection reset"));
    (chat, events)
}

/// [`broken_trace_turn`], then the resume delay (`resume_delay_ms`, 500) passes. Returns the
/// stream resume request the store made, not answered yet, and the trace's events.
pub fn resumed_trace_turn(h: &mut Harness, complete: usize) -> (Sent, Vec<Vec<u8>>) {
    let (_, events) = broken_trace_turn(h, complete);
    h.advance(500);
    (h.the_open(RequestKind::StreamResume), events)
}

// ----- AI SDK answers -----

/// An AI SDK answer `msg-ai-1` ("Hello world") with a pi projection chunk mixed in.
pub fn ai_sdk_stream() -> Vec<u8> {
    let mut body = sse(&[
        json!({"type": "start", "messageId": "msg-ai-1"}),
        json!({"type": "data-pi-message-start", "data": {"seq": 1, "messageId": "pi-a", "role": "assistant"}}),
        json!({"type": "text-start", "id": "t0"}),
        json!({"type": "text-delta", "id": "t0", "delta": "Hello "}),
        json!({"type": "data-pi-text-delta", "data": {"seq": 2, "messageId": "pi-a", "partId": "0", "delta": "IGNORED"}}),
        json!({"type": "text-delta", "id": "t0", "delta": "world"}),
        json!({"type": "text-end", "id": "t0"}),
        json!({"type": "finish", "finishReason": "stop"}),
    ]);
    body.extend_from_slice(DONE);
    body
}

/// A one-step AI SDK answer `id` whose text is `text`.
pub fn ai_answer(id: &str, text: &str) -> Vec<u8> {
    let mut body = sse(&[
        json!({"type": "start", "messageId": id}),
        json!({"type": "start-step"}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": text}),
        json!({"type": "text-end", "id": "t"}),
        json!({"type": "finish-step"}),
        json!({"type": "finish", "finishReason": "stop"}),
    ]);
    body.extend_from_slice(DONE);
    body
}

// ----- tool calls -----

/// The state of the tool part of call `call`, wherever it is.
pub fn tool_state(h: &Harness, call: &str) -> Option<ToolState> {
    h.store
        .messages()
        .iter()
        .flat_map(|m| m.parts.iter())
        .filter_map(|p| p.as_tool())
        .find(|t| t.tool_call_id == call)
        .map(|t| t.state)
}

/// A store in AI SDK mode (static capabilities) that continues a turn on its own when `auto`
/// says so.
pub fn auto_sending(auto: AutoSend) -> Harness {
    let mut opts = options_with(AI_SDK_CAPS);
    opts.send_automatically_when = auto;
    Harness::new(opts)
}

/// Sends `prompt` and answers it in full with one AI SDK step of message `a1`: `start`,
/// `start-step`, the `tool_chunks` (the calls, approval requests), `finish-step`, `finish`
/// (with `finish_reason`, if any) and `[DONE]`.
pub fn tool_step_turn(
    h: &mut Harness,
    prompt: &str,
    tool_chunks: &[Value],
    finish_reason: Option<&str>,
) {
    h.send(prompt);
    let chat = h.last(RequestKind::Chat);
    let mut chunks = vec![
        json!({"type": "start", "messageId": "a1"}),
        json!({"type": "start-step"}),
    ];
    chunks.extend_from_slice(tool_chunks);
    let finish = match finish_reason {
        Some(reason) => json!({"type": "finish", "finishReason": reason}),
        None => json!({"type": "finish"}),
    };
    chunks.extend([json!({"type": "finish-step"}), finish]);
    let mut body = sse(&chunks);
    body.extend_from_slice(DONE);
    h.respond(chat.id, Reply::sse(body));
}

/// A finished AI SDK turn whose answer `a1` made the tool `calls` (one step), the first one
/// answered, and the turn that continues it sent: its chat request, not answered yet.
pub fn continued_tool_turn(h: &mut Harness, calls: &[&str]) -> Sent {
    let tool_chunks: Vec<Value> = calls
        .iter()
        .map(|c| json!({"type": "tool-input-available", "toolCallId": c, "toolName": "x", "input": {}}))
        .collect();
    tool_step_turn(h, "hi", &tool_chunks, None);
    assert_eq!(h.store.status(), Status::Ready);
    assert!(h.act(|s, now| s.use_chat().add_tool_output(calls[0], Ok(json!(1)), now)));
    assert!(h.act(|s, now| s.use_chat().continue_turn(now)));
    h.last(RequestKind::Chat)
}

/// Two finished AI SDK turns: [u(one), a1, u(two), a2].
pub fn two_ai_turns(h: &mut Harness) {
    for (text, id) in [("one", "a1"), ("two", "a2")] {
        h.send(text);
        let chat = h.last(RequestKind::Chat);
        h.respond(
            chat.id,
            Reply::sse(ai_answer(id, &format!("answer {text}"))),
        );
        assert_eq!(h.store.status(), Status::Ready);
    }
    assert_eq!(h.store.messages().len(), 4);
}
