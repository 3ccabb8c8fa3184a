//! Streams cut at every byte (issue 7, item 2).
//!
//! For every trace (the legacy-server fixtures, plus two built here: a pi stream with
//! reasoning, tools, CRLF line ends, a keep-alive comment and multi-byte text, and an AI SDK
//! stream whose events carry `id:` fields), the chat POST's body is cut at EVERY byte offset:
//! the connection breaks there (`handle_request_failed`). The store then resumes through the
//! stream route with its cursor, which must be the last `id:` received, or else the index of
//! the last complete event; a server answers from its buffer after that cursor (204 when
//! nothing is left). The final history and status must equal those of the uncut stream.
//!
//! Each offset gets one of three server behaviours, in turn: exactly the events after the
//! cursor; the turn's `data-turn-start` re-sent first and then the events after the cursor;
//! and (pi traces only, where `seq` makes it safe) a replay that starts five events before the
//! cursor. The resume's answer arrives in small network chunks.

#![cfg(feature = "pi")]

use crate::common;

use agent_chat_store::Capabilities;
use agent_chat_store::SseDecoder;
use agent_chat_store::Status;
use agent_chat_store::{RequestKind, ResponseHead};
use common::*;
use serde_json::{json, Value};

/// One event block of a trace as the server wrote it (its blank line included).
#[derive(Clone)]
struct Block {
    bytes: Vec<u8>,
    /// The `id:` it sets, if any.
    id: Option<String>,
    /// It dispatches an event (a comment-only block does not, so it is not counted).
    dispatches: bool,
    turn_start: bool,
}

struct Trace {
    name: String,
    caps: Capabilities,
    user_text: String,
    blocks: Vec<Block>,
}

impl Trace {
    fn body(&self) -> Vec<u8> {
        self.blocks.iter().flat_map(|b| b.bytes.clone()).collect()
    }
    /// Replays after overlap are only safe where chunks carry a seq.
    fn pi(&self) -> bool {
        !self.caps.ai_sdk_owns_history
    }
}

fn block(bytes: impl Into<Vec<u8>>) -> Block {
    let bytes = bytes.into();
    let text = String::from_utf8_lossy(&bytes).to_string();
    let id = text.lines().find_map(|l| {
        l.strip_prefix("id:")
            .map(|v| v.strip_prefix(' ').unwrap_or(v).to_string())
    });
    Block {
        dispatches: text.lines().any(|l| l.starts_with("data")),
        turn_start: text.contains("\"data-turn-start\""),
        id,
        bytes,
    }
}

fn legacy(name: &str, user_text: &str) -> Trace {
    let body = fixture(name);
    let blocks: Vec<Block> = sse_events(&body).into_iter().map(block).collect();
    let t = Trace {
        name: name.to_string(),
        caps: PI_CAPS,
        user_text: user_text.to_string(),
        blocks,
    };
    assert_eq!(t.body(), body, "{name} splits into its events exactly");
    t
}

/// A pi stream with reasoning, two tool calls (one streamed as partial JSON, one failing),
/// text with multi-byte characters, the standard chunks a legacy server interleaves, a
/// keep-alive comment, and CRLF line ends (a cut may fall between CR and LF).
fn synthetic_pi() -> Trace {
    let m = "as-1";
    let pi = pi_chunk;
    let chunks: Vec<Value> = vec![
        json!({"type": "data-turn-start", "data": {"turnId": "turn-syn-pi"}}),
        json!({"type": "data-pi-mode", "data": {"enabled": true}}),
        pi("agent-start", 1, json!({})),
        pi(
            "message-start",
            2,
            json!({"messageId": "u-1", "role": "user", "text": "[P] read it"}),
        ),
        pi(
            "message-end",
            3,
            json!({"messageId": "u-1b", "role": "user", "text": "[P] read it"}),
        ),
        pi(
            "message-start",
            4,
            json!({"messageId": m, "role": "assistant"}),
        ),
        json!({"type": "start", "messageId": "ignored-in-pi-mode"}),
        pi(
            "reasoning-start",
            5,
            json!({"messageId": m, "partId": "r0"}),
        ),
        pi(
            "reasoning-delta",
            6,
            json!({"messageId": m, "partId": "r0", "delta": "Lass mich "}),
        ),
        json!({"type": "reasoning-delta", "id": "r0", "delta": "ignored"}),
        pi(
            "reasoning-delta",
            7,
            json!({"messageId": m, "partId": "r0", "delta": "überlegen…"}),
        ),
        pi(
            "reasoning-end",
            8,
            json!({"messageId": m, "partId": "r0", "text": "Lass mich überlegen…"}),
        ),
        pi(
            "tool-call-start",
            9,
            json!({"messageId": m, "toolCallId": "call-1", "toolName": "read"}),
        ),
        pi(
            "tool-call-delta",
            10,
            json!({"messageId": m, "toolCallId": "call-1", "delta": "{\"path\":"}),
        ),
        pi(
            "tool-call-delta",
            11,
            json!({"messageId": m, "toolCallId": "call-1", "delta": "\"a.txt\"}"}),
        ),
        pi(
            "tool-call-end",
            12,
            json!({"messageId": m, "toolCallId": "call-1", "input": {"path": "a.txt"}}),
        ),
        pi(
            "tool-result",
            13,
            json!({"messageId": "tr-1", "toolCallId": "call-1",
                   "output": [{"type": "text", "text": "héllo 🌍"}]}),
        ),
        pi(
            "tool-call-start",
            14,
            json!({"messageId": m, "toolCallId": "call-2", "toolName": "write"}),
        ),
        pi(
            "tool-call-end",
            15,
            json!({"messageId": m, "toolCallId": "call-2", "input": {"path": "/etc/x"}}),
        ),
        pi(
            "tool-result",
            16,
            json!({"messageId": m, "toolCallId": "call-2", "isError": true,
                   "output": [{"type": "text", "text": "permission denied"}]}),
        ),
        pi("text-start", 17, json!({"messageId": m, "partId": "t0"})),
        pi(
            "text-delta",
            18,
            json!({"messageId": m, "partId": "t0", "delta": "Die Datei sagt "}),
        ),
        json!({"type": "text-delta", "id": "t0", "delta": "ignored"}),
        pi(
            "text-delta",
            19,
            json!({"messageId": m, "partId": "t0", "delta": "„héllo 🌍“."}),
        ),
        pi(
            "text-end",
            20,
            json!({"messageId": m, "partId": "t0", "text": "Die Datei sagt „héllo 🌍“."}),
        ),
        pi(
            "message-end",
            21,
            json!({"messageId": m, "role": "assistant"}),
        ),
        json!({"type": "data-usage", "data": {"tokens": 42}}),
        pi("agent-end", 22, json!({})),
        json!({"type": "finish", "finishReason": "stop"}),
    ];
    let mut blocks: Vec<Block> = Vec::new();
    for (i, c) in chunks.iter().enumerate() {
        if i == 9 {
            blocks.push(block(&b": keep-alive\r\n\r\n"[..]));
        }
        blocks.push(block(format!("data: {c}\r\n\r\n")));
    }
    blocks.push(block(&b"data: [DONE]\r\n\r\n"[..]));
    Trace {
        name: "synthetic pi (reasoning, tools, CRLF)".into(),
        caps: PI_CAPS,
        user_text: "[P] read it".into(),
        blocks,
    }
}

/// An AI SDK stream whose events carry `id:` fields (not equal to their index, so a cursor
/// mixing the two shows): reasoning, text with multi-byte characters, a tool call with
/// streamed partial input and its output, data parts replaced by id, transient data, two
/// steps, finish.
fn synthetic_ai_sdk() -> Trace {
    let chunks: Vec<Value> = vec![
        json!({"type": "data-turn-start", "data": {"turnId": "turn-syn-ai"}}),
        json!({"type": "start", "messageId": "msg-ai-1"}),
        json!({"type": "start-step"}),
        json!({"type": "reasoning-start", "id": "r1"}),
        json!({"type": "reasoning-delta", "id": "r1", "delta": "Thinking "}),
        json!({"type": "reasoning-delta", "id": "r1", "delta": "hard…"}),
        json!({"type": "reasoning-end", "id": "r1"}),
        json!({"type": "text-start", "id": "t1"}),
        json!({"type": "text-delta", "id": "t1", "delta": "Hello "}),
        json!({"type": "text-delta", "id": "t1", "delta": "wörld 🌍"}),
        json!({"type": "text-end", "id": "t1"}),
        json!({"type": "tool-input-start", "toolCallId": "c1", "toolName": "search"}),
        json!({"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "{\"q\":"}),
        json!({"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "\"rust\"}"}),
        json!({"type": "tool-input-available", "toolCallId": "c1", "toolName": "search",
               "input": {"q": "rust"}}),
        json!({"type": "data-weather", "id": "w1", "data": {"t": 1}}),
        json!({"type": "data-status", "data": {"phase": "tool"}, "transient": true}),
        json!({"type": "tool-output-available", "toolCallId": "c1", "output": {"hits": 3}}),
        json!({"type": "finish-step"}),
        json!({"type": "start-step"}),
        json!({"type": "data-weather", "id": "w1", "data": {"t": 2}}),
        json!({"type": "text-start", "id": "t2"}),
        json!({"type": "text-delta", "id": "t2", "delta": "Three hits."}),
        json!({"type": "text-end", "id": "t2"}),
        json!({"type": "finish-step"}),
        json!({"type": "finish", "finishReason": "stop"}),
    ];
    let mut blocks: Vec<Block> = chunks
        .iter()
        .enumerate()
        .map(|(i, c)| block(format!("id: {}\ndata: {c}\n\n", 100 + 7 * i)))
        .collect();
    blocks.push(block(&b"data: [DONE]\n\n"[..]));
    Trace {
        name: "synthetic AI SDK (ids)".into(),
        caps: AI_SDK_CAPS,
        user_text: "search rust".into(),
        blocks,
    }
}

fn traces() -> Vec<Trace> {
    vec![
        legacy("trace-prompt-followup.sse", "[A] hello"),
        legacy("trace-stop.sse", "[S] start then stop"),
        legacy("trace-provider-error.sse", "[ERR] trigger provider error"),
        synthetic_pi(),
        synthetic_ai_sdk(),
    ]
}

fn head(status: u16) -> ResponseHead {
    ResponseHead {
        status,
        content_type: Some("text/event-stream".into()),
        turn_id: None,
    }
}

/// A store that sent the trace's user message; returns it with the chat request's id.
fn sent(trace: &Trace) -> (Harness, u64) {
    let mut h = Harness::with_caps(trace.caps);
    h.send(&trace.user_text);
    let chat = h.the_open(RequestKind::Chat).id;
    (h, chat)
}

/// The uncut stream's outcome: history and status.
fn uncut(trace: &Trace) -> (Vec<Value>, Status) {
    let (mut h, chat) = sent(trace);
    h.head(chat, head(200));
    h.body(chat, &trace.body());
    h.end(chat);
    (h.history(), h.store.status())
}

/// The cursor a client must send after receiving `received` bytes: the last committed
/// `id:`, else the index of the last complete event (`-1` for none), from an independent
/// decoder.
fn expected_cursor(received: &[u8]) -> String {
    let mut d = SseDecoder::new();
    let n = d.push(received).len();
    d.finish();
    match d.last_event_id() {
        Some(id) => id.to_string(),
        None => (n as i64 - 1).to_string(),
    }
}

#[derive(Clone, Copy, Debug)]
enum Resend {
    /// Exactly the events after the cursor.
    After,
    /// The turn's `data-turn-start` again, then the events after the cursor.
    TurnStartFirst,
    /// From five events before the cursor (seq makes the overlap harmless).
    Overlap,
}

/// Where the server's buffer continues after `cursor`.
fn position_after(trace: &Trace, cursor: &str) -> usize {
    if let Some(i) = trace
        .blocks
        .iter()
        .position(|b| b.id.as_deref() == Some(cursor))
    {
        return i + 1;
    }
    let c: i64 = cursor
        .parse()
        .unwrap_or_else(|_| panic!("cursor {cursor:?}"));
    if c < 0 {
        return 0;
    }
    // After the (c+1)-th event that dispatched (comments are not events).
    let mut seen = 0;
    for (i, b) in trace.blocks.iter().enumerate() {
        if b.dispatches {
            if seen == c {
                return i + 1;
            }
            seen += 1;
        }
    }
    panic!("cursor {cursor} beyond the trace's {seen} events");
}

/// Cuts the trace at `k`, resumes, and returns the outcome.
fn cut_and_resume(trace: &Trace, k: usize, resend: Resend) -> (Vec<Value>, Status) {
    let body = trace.body();
    let (mut h, chat) = sent(trace);
    h.head(chat, head(200));
    if k > 0 {
        h.body(chat, &body[..k]);
    }
    h.fail(chat, "connection reset");
    assert!(
        h.store.status().is_busy(),
        "a broken stream is resumed, not ended"
    );
    assert_eq!(h.count(RequestKind::StreamResume), 0, "not at once");
    h.run_until_idle();
    let resume = h.the_open(RequestKind::StreamResume);
    let cursor = resume
        .path
        .strip_prefix("/api/v1/agent/chat/S/stream?cursor=")
        .expect("the stream route")
        .to_string();
    assert_eq!(
        cursor,
        expected_cursor(&body[..k]),
        "cursor after {k} bytes"
    );
    let pos = position_after(trace, &cursor);
    if pos == trace.blocks.len() {
        h.respond(resume.id, Reply::status(204));
    } else {
        let start = match resend {
            Resend::Overlap if trace.pi() => pos.saturating_sub(5),
            _ => pos,
        };
        let mut out: Vec<u8> = Vec::new();
        if matches!(resend, Resend::TurnStartFirst) {
            if let Some(ts) = trace.blocks[..start].iter().find(|b| b.turn_start) {
                out.extend_from_slice(&ts.bytes);
            }
        }
        for b in &trace.blocks[start..] {
            out.extend_from_slice(&b.bytes);
        }
        // Odd-sized network chunks: boundaries fall mid-line and mid-character.
        h.respond(resume.id, Reply::sse(out).chunked(97));
    }
    assert_eq!(
        h.count(RequestKind::StreamResume),
        1,
        "one resume is enough"
    );
    (h.history(), h.store.status())
}

#[test]
fn every_byte_offset_of_every_trace_resumes_to_the_uncut_history() {
    let traces = traces();
    let mut total = 0usize;
    let mut per_trace = Vec::new();
    for trace in &traces {
        let want = uncut(trace);
        assert!(
            !want.0.is_empty() && !want.1.is_busy(),
            "{}: the uncut stream completes",
            trace.name
        );
        let len = trace.body().len();
        // Both cores: offsets split in two interleaved halves.
        let failures: Vec<String> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..2)
                .map(|lane| {
                    let want = &want;
                    scope.spawn(move || {
                        let mut bad = Vec::new();
                        for k in (lane..=len).step_by(2) {
                            let resend = match k % 3 {
                                0 => Resend::After,
                                1 => Resend::TurnStartFirst,
                                _ => Resend::Overlap,
                            };
                            let got = cut_and_resume(trace, k, resend);
                            if got != *want {
                                bad.push(format!(
                                    "{}: cut at byte {k} ({resend:?}): {:?} {:#?}\nwant {:?} {:#?}",
                                    trace.name, got.1, got.0, want.1, want.0
                                ));
                            }
                        }
                        bad
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        assert!(
            failures.is_empty(),
            "{} cut offsets differ; first: {}",
            failures.len(),
            failures[0]
        );
        per_trace.push(format!("{}: {} offsets", trace.name, len + 1));
        total += len + 1;
    }
    eprintln!("{total} cut offsets exercised ({})", per_trace.join(", "));
    assert!(total > 10_000);
}

#[test]
fn the_traces_say_what_they_should() {
    // The uncut outcomes, so a cut test comparing two empty histories cannot pass.
    let ts = traces();
    let prompt = uncut(&ts[0]);
    assert_eq!(prompt.0.len(), 4);
    assert_eq!(prompt.1, Status::Ready);
    let error = uncut(&ts[2]);
    assert_eq!(error.1, Status::Error);
    let pi = uncut(&ts[3]).0;
    assert_eq!(pi.len(), 2, "{pi:#?}");
    let parts = pi[1]["parts"].as_array().unwrap();
    let types: Vec<&str> = parts.iter().map(|p| p["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["reasoning", "tool-read", "tool-write", "text"],
        "{pi:#?}"
    );
    assert_eq!(parts[1]["state"], "output-available");
    assert_eq!(parts[2]["state"], "output-error");
    assert_eq!(parts[3]["text"], "Die Datei sagt „héllo 🌍“.");
    let ai = uncut(&ts[4]).0;
    assert_eq!(ai.len(), 2, "{ai:#?}");
    assert_eq!(ai[1]["id"], "msg-ai-1");
    let text: Vec<&str> = ai[1]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["type"] == "text")
        .map(|p| p["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, ["Hello wörld 🌍", "Three hits."]);
    let weather: Vec<&Value> = ai[1]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["type"] == "data-weather")
        .collect();
    assert_eq!(weather.len(), 1, "replaced by id");
    assert_eq!(weather[0]["data"]["t"], 2);
}
