//! Hostile input to the core (issue "Reliability and security", item 5): a server, a proxy or
//! a network that sends garbage must never crash the store, never grow it without bound, and
//! never leave it unusable. Each test feeds one kind of hostile input on virtual time, checks
//! what the user gets (a typed error, a diagnostic, the history kept), and then runs a normal
//! turn that must stream and render as if nothing had happened.
//!
//! Everything runs on a thread with a 1 MiB stack (a browser's wasm stack is about that): deep
//! JSON must not recurse its way through it.
//!
//! The JS-visible side of the same inputs (prototype pollution, panics reaching JS as
//! `RuntimeError: unreachable`) is `tests/js/hostile.test.mjs`.

// Most of these tests run pi mode; what they share goes unused without it.
#![cfg_attr(not(feature = "pi"), allow(unused))]

use crate::common;

use std::time::{Duration, Instant};

#[cfg(all(feature = "pi", feature = "replay"))]
use agent_chat_store::replay_pi_stream;
use agent_chat_store::ItemState;
use agent_chat_store::SseDecoder;
use agent_chat_store::Status;
use agent_chat_store::{parse_chunk, strict_ui_chunk, ChunkError};
#[cfg(feature = "replay")]
use agent_chat_store::{replay_ui_message_stream, ChunkInput};
use agent_chat_store::{Capabilities, ChatError, ErrorKind, Part};
use agent_chat_store::{ParseState, PartialJson};
use agent_chat_store::{RequestKind, StoreEvent, StoreOptions, SubmitKind};
use common::*;
use serde_json::{json, Value};

/// Runs `f` on a thread with a browser-sized stack.
fn small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

fn ai_sdk() -> Harness {
    Harness::with_caps(AI_SDK_CAPS)
}

fn pi() -> Harness {
    Harness::with_caps(PI_CAPS)
}

/// A store that asks for its capabilities and catalog and hydrates: three start-up requests.
fn starting() -> Harness {
    let mut opts = options();
    opts.hydrate = true;
    Harness::new(opts)
}

/// Answers the three start-up requests of [`starting`] alike.
fn answer_start_up(h: &mut Harness, reply: impl Fn() -> Reply) {
    for kind in [
        RequestKind::Capabilities,
        RequestKind::Catalog,
        RequestKind::MessagesGet,
    ] {
        let id = h.the_open(kind).id;
        h.respond(id, reply());
    }
}

/// An AI SDK turn's stream answering `text`.
fn ui_turn(message_id: &str, text: &str) -> Vec<u8> {
    let mut b = sse(&[
        json!({"type": "start", "messageId": message_id}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": text}),
        json!({"type": "text-end", "id": "t"}),
        json!({"type": "finish", "finishReason": "stop"}),
    ]);
    b.extend_from_slice(DONE);
    b
}

/// A pi projection turn's stream: the user's message committed, then an answer `text`.
fn pi_turn(turn: &str, user: &str, text: &str) -> Vec<u8> {
    let a = format!("a-{turn}");
    let u = format!("u-{turn}");
    let mut b = sse(&[
        json!({"type": "data-turn-start", "data": {"turnId": turn}}),
        json!({"type": "data-pi-message-start", "data": {"seq": 1, "messageId": u, "role": "user", "text": user}}),
        json!({"type": "data-pi-message-end", "data": {"seq": 2, "messageId": u, "role": "user", "text": user}}),
        json!({"type": "data-pi-message-start", "data": {"seq": 3, "messageId": a, "role": "assistant"}}),
        json!({"type": "data-pi-text-start", "data": {"seq": 4, "messageId": a, "partId": "0"}}),
        json!({"type": "data-pi-text-delta", "data": {"seq": 5, "messageId": a, "partId": "0", "delta": text}}),
        json!({"type": "data-pi-text-end", "data": {"seq": 6, "messageId": a, "partId": "0", "text": text}}),
        json!({"type": "data-pi-message-end", "data": {"seq": 7, "messageId": a, "role": "assistant", "text": text}}),
        json!({"type": "finish"}),
    ]);
    b.extend_from_slice(DONE);
    b
}

/// After whatever happened, the store still works: a normal turn streams (split into small
/// network chunks) and renders as its last message, and the status is `ready` again.
fn a_normal_turn_works(h: &mut Harness) {
    let before = h.store.messages().len();
    let pi_mode = !h.store.capabilities().ai_sdk_owns_history;
    let n = h.count(RequestKind::Chat);
    let r = h.send("ping");
    assert_eq!(
        r.kind,
        SubmitKind::Sent,
        "the store refuses a new turn: {r:?}"
    );
    assert_eq!(h.count(RequestKind::Chat), n + 1);
    let chat = h.last(RequestKind::Chat).id;
    let body = if pi_mode {
        pi_turn(&format!("turn-ok-{n}"), "ping", "pong")
    } else {
        ui_turn(&format!("ok-{n}"), "pong")
    };
    h.respond(chat, Reply::sse(body).chunked(7));
    assert_eq!(
        h.store.status(),
        Status::Ready,
        "{:?}",
        h.store.session().error()
    );
    let msgs = h.store.messages();
    assert_eq!(msgs.len(), before + 2, "{:#?}", h.history());
    assert_eq!(msgs[msgs.len() - 2].text(), "ping");
    assert_eq!(msgs[msgs.len() - 1].text(), "pong");
    assert!(h.store.composer().state().can_send || h.store.composer().draft().is_empty());
}

fn protocol_errors(h: &Harness) -> Vec<&ChatError> {
    h.errors()
        .into_iter()
        .filter(|e| e.kind == ErrorKind::Protocol)
        .collect()
}

fn diagnostics(h: &Harness) -> Vec<&str> {
    h.events
        .iter()
        .filter_map(|e| match e {
            StoreEvent::Diagnostic { message } => Some(message.as_str()),
            _ => None,
        })
        .collect()
}

// ===== invalid UTF-8 =======================================================================

#[cfg(feature = "pi")]
#[test]
fn invalid_utf8_in_the_stream_becomes_replacement_characters_and_the_turn_goes_on() {
    small_stack(|| {
        for mut h in [ai_sdk(), pi()] {
            let pi_mode = !h.store.capabilities().ai_sdk_owns_history;
            h.send("hello");
            let chat = h.the_open(RequestKind::Chat).id;
            let mut body: Vec<u8> = Vec::new();
            let delta = |bytes: &[u8]| -> Vec<u8> {
                let (head, tail): (&[u8], &[u8]) = if pi_mode {
                    (
                        br#"data: {"type":"data-pi-text-delta","data":{"seq":5,"messageId":"a1","partId":"0","delta":"A"#,
                        b"B\"}}\n\n",
                    )
                } else {
                    (
                        br#"data: {"type":"text-delta","id":"t","delta":"A"#,
                        b"B\"}\n\n",
                    )
                };
                [head, bytes, tail].concat()
            };
            if pi_mode {
                body.extend(sse(&[
                    json!({"type": "data-pi-message-start", "data": {"seq": 1, "messageId": "u1", "role": "user", "text": "hello"}}),
                    json!({"type": "data-pi-message-start", "data": {"seq": 3, "messageId": "a1", "role": "assistant"}}),
                    json!({"type": "data-pi-text-start", "data": {"seq": 4, "messageId": "a1", "partId": "0"}}),
                ]));
            } else {
                body.extend(sse(&[
                    json!({"type": "start", "messageId": "a1"}),
                    json!({"type": "text-start", "id": "t"}),
                ]));
            }
            // A lone continuation byte, a truncated 3-byte sequence, an overlong encoding and
            // a UTF-16 surrogate encoded in UTF-8, all inside the JSON string.
            body.extend(delta(b"\x80\xE2\x82\xC0\xAF\xED\xA0\x80"));
            // Invalid bytes where JSON syntax should be: the chunk is unreadable.
            body.extend_from_slice(b"data: \xFF\xFE{\"type\":\"text-delta\"}\n\n");
            // Invalid bytes in a field name and in an id line: ignored / decoded lossily.
            body.extend_from_slice(b"dat\xFFa: x\n\nid: \xC3\n\n");
            body.extend(sse(&[if pi_mode {
                json!({"type": "data-pi-message-end", "data": {"seq": 9, "messageId": "a1", "role": "assistant"}})
            } else {
                json!({"type": "text-end", "id": "t"})
            }]));
            body.extend_from_slice(DONE);
            // Split one byte at a time: every multi-byte sequence is cut.
            h.respond(chat, Reply::sse(body).chunked(1));
            assert_eq!(h.store.status(), Status::Ready);
            let last = h.store.messages().last().unwrap();
            let text = last.text();
            assert!(text.starts_with('A') && text.ends_with('B'), "{text:?}");
            assert!(text.contains('\u{FFFD}'), "{text:?}");
            assert!(!text.contains("\\x"), "{text:?}");
            assert_eq!(
                protocol_errors(&h).len(),
                1,
                "the unreadable chunk is reported"
            );
            a_normal_turn_works(&mut h);
        }
    });
}

#[test]
fn invalid_utf8_in_json_answers_falls_back_to_defaults() {
    small_stack(|| {
        let mut h = starting();
        let bad = b"{\"nativeFollowUp\":\xFFtrue}";
        answer_start_up(&mut h, || {
            Reply::bytes(200, Some("application/json"), bad.to_vec())
        });
        assert!(h.store.session().capabilities_loaded() && h.store.session().hydrated());
        assert_eq!(h.store.capabilities(), Capabilities::default());
        assert!(h.store.messages().is_empty() && h.store.session().tools().is_empty());
        assert_eq!(diagnostics(&h).len(), 3, "{:?}", diagnostics(&h));
        a_normal_turn_works(&mut h);
    });
}

// ===== a 10 MB event =======================================================================

fn ten_mb_delta() -> Vec<u8> {
    let mut e = br#"data: {"type":"text-delta","id":"t","delta":""#.to_vec();
    e.extend(std::iter::repeat_n(b'x', 10 * 1000 * 1000));
    e.extend_from_slice(b"\"}\n\n");
    e
}

#[test]
fn a_10_mb_event_over_the_limit_is_a_protocol_error_and_the_history_is_kept() {
    small_stack(|| {
        let mut opts = options_with(AI_SDK_CAPS);
        opts.limits.max_event_bytes = 8 << 20;
        let mut h = Harness::new(opts);
        h.send("first");
        let chat = h.the_open(RequestKind::Chat).id;
        h.respond(chat, Reply::sse(ui_turn("a0", "one")));
        h.send("second");
        let chat = h.the_open(RequestKind::Chat).id;
        let mut body = sse(&[
            json!({"type": "start", "messageId": "a1"}),
            json!({"type": "text-start", "id": "t"}),
            json!({"type": "text-delta", "id": "t", "delta": "Hi"}),
        ]);
        body.extend(ten_mb_delta());
        body.extend(sse(&[
            json!({"type": "text-delta", "id": "t", "delta": " there"}),
            json!({"type": "text-end", "id": "t"}),
            json!({"type": "finish"}),
        ]));
        body.extend_from_slice(DONE);
        let started = Instant::now();
        // As a network delivers it: 64 KiB at a time.
        h.respond(chat, Reply::sse(body).chunked(64 * 1024));
        let took = started.elapsed();
        let errs = protocol_errors(&h);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].message.contains("larger than 8388608 bytes"),
            "{}",
            errs[0].message
        );
        assert_eq!(
            h.store.status(),
            Status::Ready,
            "the stream went on after the event"
        );
        let texts: Vec<String> = h.store.messages().iter().map(|m| m.text()).collect();
        assert_eq!(texts, ["first", "one", "second", "Hi there"]);
        assert!(took < Duration::from_secs(20), "{took:?}");
        a_normal_turn_works(&mut h);
    });
}

#[test]
fn a_10_mb_event_under_the_default_limit_is_accepted() {
    small_stack(|| {
        let mut h = ai_sdk();
        h.send("big");
        let chat = h.the_open(RequestKind::Chat).id;
        let mut body = sse(&[
            json!({"type": "start", "messageId": "a1"}),
            json!({"type": "text-start", "id": "t"}),
        ]);
        body.extend(ten_mb_delta());
        body.extend(sse(&[json!({"type": "text-end", "id": "t"})]));
        body.extend_from_slice(DONE);
        h.respond(chat, Reply::sse(body).chunked(64 * 1024));
        assert!(h.errors().is_empty(), "{:?}", h.errors());
        assert_eq!(h.store.messages()[1].text().len(), 10 * 1000 * 1000);
        a_normal_turn_works(&mut h);
    });
}

// ===== deeply nested JSON ==================================================================

fn nested(n: usize) -> String {
    "[".repeat(n) + &"]".repeat(n)
}

#[cfg(feature = "pi")]
#[test]
fn deeply_nested_json_in_a_chunk_is_an_error_not_a_stack_overflow() {
    small_stack(|| {
        let deep = nested(100_000);
        let open_only = "[".repeat(100_000);
        // The parsers.
        assert!(matches!(parse_chunk(&deep), Err(ChunkError::Json(_))));
        let in_chunk = format!(r#"{{"type":"data-x","data":{deep}}}"#);
        assert!(matches!(parse_chunk(&in_chunk), Err(ChunkError::Json(_))));
        let pi_chunk = format!(
            r#"{{"type":"data-pi-tool-result","data":{{"seq":1,"messageId":"m","toolCallId":"c","output":{deep}}}}}"#
        );
        assert!(matches!(parse_chunk(&pi_chunk), Err(ChunkError::Json(_))));
        // The pure helpers.
        #[cfg(feature = "replay")]
        {
            let r = replay_ui_message_stream(
                [
                    ChunkInput::Text(r#"{"type":"start"}"#),
                    ChunkInput::Text(&in_chunk),
                ],
                None,
                None,
                false,
            );
            assert!(r.error.is_some());
        }
        #[cfg(all(feature = "pi", feature = "replay"))]
        {
            let r = replay_pi_stream([ChunkInput::Text(&open_only), ChunkInput::Text(&pi_chunk)]);
            assert_eq!(r.diagnostics.len(), 2);
        }
        // A value as deep as serde_json reads (128) through the strict reader's key scan.
        let v: Value =
            serde_json::from_str(&format!(r#"{{"type":"data-x","data":{}}}"#, nested(120)))
                .unwrap();
        assert!(strict_ui_chunk(v).is_ok());

        // The store, in both modes: one Protocol error per deep chunk, the turn goes on.
        for mut h in [ai_sdk(), pi()] {
            h.send("hello");
            let chat = h.the_open(RequestKind::Chat).id;
            let mut body = format!(
                "data: {deep}\n\ndata: {open_only}\n\ndata: {in_chunk}\n\ndata: {pi_chunk}\n\n"
            )
            .into_bytes();
            body.extend(if h.store.capabilities().ai_sdk_owns_history {
                ui_turn("a1", "fine")
            } else {
                pi_turn("turn-1", "hello", "fine")
            });
            h.respond(chat, Reply::sse(body).chunked(4096));
            assert_eq!(protocol_errors(&h).len(), 4);
            assert_eq!(h.store.status(), Status::Ready);
            assert_eq!(h.store.messages().last().unwrap().text(), "fine");
            a_normal_turn_works(&mut h);
        }
    });
}

#[cfg(feature = "pi")]
#[test]
fn deeply_nested_tool_input_deltas_fail_the_parse_not_the_stack() {
    small_stack(|| {
        // AI SDK tool input streamed as 100,000 `[` one delta at a time.
        let mut p = PartialJson::new();
        for _ in 0..100_000 {
            p.push("[");
        }
        assert_eq!(p.state(), ParseState::FailedParse);
        assert!(p.work_units() < 2_000_000, "{}", p.work_units());

        let mut h = ai_sdk();
        h.send("hello");
        let chat = h.the_open(RequestKind::Chat).id;
        let mut chunks = vec![
            json!({"type": "start", "messageId": "a1"}),
            json!({"type": "tool-input-start", "toolCallId": "c", "toolName": "deep"}),
        ];
        for _ in 0..1000 {
            chunks.push(json!({"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": "[".repeat(100)}));
        }
        chunks.push(json!({"type": "tool-input-available", "toolCallId": "c", "toolName": "deep", "input": {}}));
        chunks.push(json!({"type": "finish"}));
        let mut body = sse(&chunks);
        body.extend_from_slice(DONE);
        h.respond(chat, Reply::sse(body).chunked(64 * 1024));
        assert_eq!(
            h.store.status(),
            Status::Ready,
            "{:?}",
            h.store.session().error()
        );
        let tool = h.store.messages()[1]
            .parts
            .iter()
            .find_map(Part::as_tool)
            .unwrap();
        assert_eq!(
            tool.input.as_ref().map(|i| i.value().into_owned()),
            Some(json!({}))
        );
        a_normal_turn_works(&mut h);

        // pi tool-call deltas are parsed once they could be complete: `]` * 100,000.
        let mut h = pi();
        h.send("hello");
        let chat = h.the_open(RequestKind::Chat).id;
        let mut body = sse(&[
            json!({"type": "data-pi-message-start", "data": {"seq": 1, "messageId": "a1", "role": "assistant"}}),
            json!({"type": "data-pi-tool-call-start", "data": {"seq": 2, "messageId": "a1", "toolCallId": "c", "toolName": "deep"}}),
            json!({"type": "data-pi-tool-call-delta", "data": {"seq": 3, "messageId": "a1", "toolCallId": "c", "delta": nested(100_000)}}),
            json!({"type": "data-pi-tool-call-end", "data": {"seq": 4, "messageId": "a1", "toolCallId": "c"}}),
            json!({"type": "data-pi-message-end", "data": {"seq": 5, "messageId": "a1", "role": "assistant"}}),
        ]);
        body.extend_from_slice(DONE);
        h.respond(chat, Reply::sse(body).chunked(64 * 1024));
        assert_eq!(
            h.store.status(),
            Status::Ready,
            "{:?}",
            h.store.session().error()
        );
        a_normal_turn_works(&mut h);
    });
}

#[test]
fn deeply_nested_json_answers_fall_back_to_defaults() {
    small_stack(|| {
        let mut h = starting();
        let deep = format!(
            r#"{{"messages":{0},"tools":{0},"nativeFollowUp":{0}}}"#,
            nested(100_000)
        );
        answer_start_up(&mut h, || {
            Reply::bytes(200, Some("application/json"), deep.clone())
        });
        assert!(h.store.session().capabilities_loaded() && h.store.session().hydrated());
        assert_eq!(h.store.capabilities(), Capabilities::default());
        a_normal_turn_works(&mut h);
    });
}

// ===== __proto__ / constructor / prototype keys ============================================

#[test]
fn proto_keys_stay_plain_data_in_every_place_they_can_appear() {
    small_stack(|| {
        let hostile = json!({"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}, "prototype": 1, "ok": 1});
        let mut h = starting();
        // Capabilities: a `__proto__` holding `nativeFollowUp` is not the field.
        let caps = h.the_open(RequestKind::Capabilities).id;
        h.respond(
            caps,
            Reply::bytes(
                200,
                Some("application/json"),
                r#"{"__proto__":{"nativeFollowUp":true,"aiSdkOwnsHistory":false},"constructor":{"prototype":{"nativeFollowUp":true}}}"#,
            ),
        );
        assert_eq!(h.store.capabilities(), Capabilities::default());
        // Catalog: tools named like prototype members, `ui` with a `__proto__`.
        let cat = h.the_open(RequestKind::Catalog).id;
        h.respond(
            cat,
            Reply::bytes(
                200,
                Some("application/json"),
                r#"{"tools":[{"name":"__proto__","ui":{"__proto__":{"rendererId":"evil"}}},{"name":"constructor","inputSchema":{"__proto__":{}}}]}"#,
            ),
        );
        let names: Vec<&str> = h
            .store
            .session()
            .tools()
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(names, ["__proto__", "constructor"]);
        assert_eq!(
            h.store.session().tools()[0]
                .ui
                .as_ref()
                .unwrap()
                .renderer_id,
            None
        );
        // History: a message whose metadata and parts carry the keys.
        let hist = h.the_open(RequestKind::MessagesGet).id;
        h.respond(
            hist,
            Reply::json(200, json!({"messages": [
                {"id": "__proto__", "role": "user", "metadata": hostile, "parts": [{"type": "text", "text": "old"}]},
            ]})),
        );
        assert_eq!(h.store.messages()[0].id, "__proto__");

        // A turn whose chunks carry them in data parts, tool inputs and outputs, metadata.
        h.send("hello");
        let chat = h.the_open(RequestKind::Chat).id;
        let mut body = sse(&[
            json!({"type": "start", "messageId": "a1", "messageMetadata": hostile}),
            json!({"type": "data-weather", "id": "w", "data": hostile}),
            json!({"type": "tool-input-start", "toolCallId": "c", "toolName": "x"}),
            json!({"type": "tool-input-delta", "toolCallId": "c", "inputTextDelta": r#"{"__proto__":{"polluted":true},"a":"#}),
            json!({"type": "tool-input-available", "toolCallId": "c", "toolName": "x", "input": hostile}),
            json!({"type": "tool-output-available", "toolCallId": "c", "output": hostile}),
            json!({"type": "message-metadata", "messageMetadata": {"constructor": {"prototype": {"x": 1}}}}),
            json!({"type": "finish"}),
        ]);
        body.extend_from_slice(DONE);
        h.respond(chat, Reply::sse(body));
        assert_eq!(
            h.store.status(),
            Status::Ready,
            "{:?}",
            h.store.session().error()
        );
        let i = h.store.messages().len() - 1;
        let exported = h.store.session().export_message(i);
        let parts = exported["parts"].as_array().unwrap();
        let data = parts.iter().find(|p| p["type"] == "data-weather").unwrap();
        assert_eq!(data["data"], hostile);
        let tool = parts.iter().find(|p| p["type"] == "tool-x").unwrap();
        assert_eq!(tool["input"], hostile);
        assert_eq!(tool["output"], hostile);
        assert_eq!(exported["metadata"]["__proto__"], json!({"polluted": true}));
        // A metadata patch never merges through these keys (as the `ai` package's
        // `mergeObjects`): the first metadata's `constructor` stays as it was.
        assert_eq!(
            exported["metadata"]["constructor"],
            json!({"prototype": {"polluted": true}})
        );
        // The serialised snapshot text keeps the keys as keys (JSON.parse makes them own data).
        let text = serde_json::to_string(&exported).unwrap();
        assert!(text.contains(r#""__proto__":{"polluted":true}"#), "{text}");
        a_normal_turn_works(&mut h);
    });
}

#[cfg(feature = "pi")]
#[test]
fn proto_keys_in_pi_chunks_stay_plain_data() {
    small_stack(|| {
        let hostile = json!({"__proto__": {"polluted": true}, "constructor": {"prototype": {}}});
        let mut h = pi();
        h.send("hello");
        let chat = h.the_open(RequestKind::Chat).id;
        let mut body = sse(&[
            json!({"type": "data-pi-message-start", "data": {"seq": 1, "messageId": "__proto__", "role": "assistant"}}),
            json!({"type": "data-pi-tool-call-start", "data": {"seq": 2, "messageId": "__proto__", "toolCallId": "constructor", "toolName": "prototype"}}),
            json!({"type": "data-pi-tool-call-end", "data": {"seq": 3, "messageId": "__proto__", "toolCallId": "constructor", "input": hostile}}),
            json!({"type": "data-pi-tool-result", "data": {"seq": 4, "messageId": "__proto__", "toolCallId": "constructor", "output": hostile, "details": hostile}}),
            json!({"type": "data-pi-message-end", "data": {"seq": 5, "messageId": "__proto__", "role": "assistant", "final": {"id": "__proto__", "role": "assistant", "metadata": hostile, "parts": [{"type": "dynamic-tool", "toolCallId": "constructor", "toolName": "prototype", "state": "output-available", "input": hostile, "output": hostile}]}}}),
            json!({"type": "data-pi-__proto__", "data": hostile}),
        ]);
        body.extend_from_slice(DONE);
        h.respond(chat, Reply::sse(body));
        assert_eq!(h.store.status(), Status::Ready);
        let m = h.store.messages().last().unwrap();
        assert_eq!(m.id, "__proto__");
        let t = m.parts.iter().find_map(Part::as_tool).unwrap();
        assert_eq!(t.tool_call_id, "constructor");
        assert_eq!(
            t.input.as_ref().map(|i| i.value().into_owned()),
            Some(hostile.clone())
        );
        assert_eq!(m.metadata.as_deref(), Some(&hostile));
        assert!(h
            .events
            .iter()
            .any(|e| matches!(e, StoreEvent::Data { name, .. } if name == "pi-__proto__")));
        a_normal_turn_works(&mut h);
    });
}

// ===== a never-ending stream ===============================================================

#[test]
fn a_never_ending_silent_stream_is_dropped_after_the_idle_timeout_and_resumed() {
    small_stack(|| {
        let mut opts = options_with(AI_SDK_CAPS);
        opts.stream_idle_timeout_ms = Some(1_000);
        let mut h = Harness::new(opts);
        h.send("hello");
        let chat = h.the_open(RequestKind::Chat).id;
        let first = sse(&[
            json!({"type": "start", "messageId": "a1"}),
            json!({"type": "text-start", "id": "t"}),
            json!({"type": "text-delta", "id": "t", "delta": "Hel"}),
        ]);
        h.respond(chat, Reply::sse(first).open());
        assert_eq!(h.store.status(), Status::Streaming);
        // Silence: the stream is dropped (aborted) and resumed from the cursor.
        h.advance(1_000);
        assert!(h.aborted.contains(&chat), "the silent stream is aborted");
        assert!(diagnostics(&h).iter().any(|d| d.contains("resuming")));
        h.advance(500);
        let resume = h.the_open(RequestKind::StreamResume);
        assert!(resume.path.ends_with("?cursor=2"), "{}", resume.path);
        // The resume replays from the start; nothing is doubled.
        let rest = {
            let mut b = sse(&[
                json!({"type": "start", "messageId": "a1"}),
                json!({"type": "text-start", "id": "t"}),
                json!({"type": "text-delta", "id": "t", "delta": "Hel"}),
                json!({"type": "text-delta", "id": "t", "delta": "lo"}),
                json!({"type": "text-end", "id": "t"}),
                json!({"type": "finish"}),
            ]);
            b.extend_from_slice(DONE);
            b
        };
        h.respond(resume.id, Reply::sse(rest).chunked(5));
        assert_eq!(
            h.store.status(),
            Status::Ready,
            "{:?}",
            h.store.session().error()
        );
        assert_eq!(h.store.messages()[1].text(), "Hello");
        // A resume that is silent too, every time: the turn fails after the attempts, typed.
        h.send("again");
        let chat = h.last(RequestKind::Chat).id;
        h.respond(
            chat,
            Reply::sse(sse(&[json!({"type": "start", "messageId": "a2"})])).open(),
        );
        for _ in 0..10 {
            h.advance(5_000);
            if let Some(r) = h.open(RequestKind::StreamResume).first().map(|r| r.id) {
                h.respond(r, Reply::sse(Vec::new()).open());
            }
        }
        assert_eq!(h.store.status(), Status::Error);
        assert_eq!(h.store.session().error().unwrap().kind, ErrorKind::Network);
        assert!(h.open(RequestKind::StreamResume).is_empty());
        assert!(h.open(RequestKind::Chat).is_empty());
        a_normal_turn_works(&mut h);
    });
}

// ===== HTML instead of SSE =================================================================

#[cfg(feature = "pi")]
#[test]
fn an_html_answer_instead_of_the_stream_is_a_protocol_error_and_the_store_stays_usable() {
    small_stack(|| {
        for mut h in [ai_sdk(), pi()] {
            h.send("hello");
            let chat = h.the_open(RequestKind::Chat).id;
            let page = "<!doctype html>\n<html><head><title>Sign in</title></head>\n<body><form>…</form></body></html>\n";
            h.respond(
                chat,
                Reply::bytes(200, Some("text/html; charset=utf-8"), page),
            );
            assert_eq!(h.store.status(), Status::Error);
            let e = h.store.session().error().unwrap();
            assert_eq!(e.kind, ErrorKind::Protocol);
            assert!(h.aborted.contains(&chat));
            assert_eq!(h.store.messages().len(), 1, "the user's message is kept");
            a_normal_turn_works(&mut h);
        }
        // The same page as a capabilities / catalog / history answer: defaults, no crash.
        let mut h = starting();
        answer_start_up(&mut h, || {
            Reply::bytes(200, Some("text/html"), "<html>oops</html>")
        });
        assert!(h.store.session().capabilities_loaded() && h.store.session().hydrated());
        a_normal_turn_works(&mut h);
    });
}

// ===== 10,000 unknown chunk types ==========================================================

#[cfg(feature = "pi")]
#[test]
fn ten_thousand_unknown_chunk_types_are_diagnostics_and_hold_nothing() {
    small_stack(|| {
        for mut h in [ai_sdk(), pi()] {
            let pi_mode = !h.store.capabilities().ai_sdk_owns_history;
            h.send("hello");
            let chat = h.the_open(RequestKind::Chat).id;
            let mut chunks = Vec::new();
            for i in 0..10_000 {
                chunks.push(if pi_mode && i % 2 == 0 {
                    json!({"type": format!("data-pi-future-{i}"), "data": {"i": i}})
                } else {
                    json!({"type": format!("future-type-{i}"), "payload": "x".repeat(64)})
                });
            }
            let mut body = sse(&chunks);
            body.extend(if pi_mode {
                pi_turn("turn-1", "hello", "answer")
            } else {
                ui_turn("a1", "answer")
            });
            let started = Instant::now();
            h.respond(chat, Reply::sse(body).chunked(16 * 1024));
            let took = started.elapsed();
            assert!(took < Duration::from_secs(10), "{took:?}");
            assert_eq!(h.store.status(), Status::Ready);
            let unknown = diagnostics(&h)
                .iter()
                .filter(|d| d.starts_with("unknown chunk type"))
                .count();
            let data = h
                .events
                .iter()
                .filter(
                    |e| matches!(e, StoreEvent::Data { name, .. } if name.starts_with("pi-future")),
                )
                .count();
            assert_eq!(unknown + data, 10_000);
            // The snapshot holds nothing of them: two messages, the answer one text part.
            let msgs = h.store.messages();
            assert_eq!(msgs.len(), 2);
            assert_eq!(msgs[1].parts.len(), 1, "{:?}", msgs[1].parts.len());
            assert_eq!(msgs[1].text(), "answer");
            assert!(h.store.session().queued().is_empty());
            let exported = serde_json::to_string(&h.store.session().export_message(1)).unwrap();
            assert!(exported.len() < 200, "{exported}");
            a_normal_turn_works(&mut h);
        }
    });
}

// ===== malformed capabilities / history / catalog bodies ===================================

#[test]
fn malformed_json_answers_never_break_the_store() {
    small_stack(|| {
        let bodies: &[&[u8]] = &[
            b"",
            b"null",
            b"[]",
            b"{",
            b"\"text\"",
            b"42",
            b"{\"messages\":\"x\",\"tools\":\"x\",\"nativeFollowUp\":\"yes\"}",
            b"{\"messages\":[1,{\"id\":1},{\"id\":\"a\",\"role\":\"robot\"},{\"id\":\"b\",\"role\":\"user\",\"parts\":\"x\"},{\"id\":\"c\",\"role\":\"user\",\"parts\":[7]}]}",
            b"{\"tools\":[{\"name\":5},{\"description\":\"no name\"},null,{\"name\":\"ok\",\"ui\":7}]}",
            b"{\"messages\":[{\"id\":\"d\",\"role\":\"user\"},{\"id\":\"d\",\"role\":\"assistant\"}]}",
            b"\xEF\xBB\xBF{\"nativeFollowUp\":true}",
            b"{\"nativeFollowUp\":true}garbage",
        ];
        for body in bodies {
            let mut h = starting();
            answer_start_up(&mut h, || {
                Reply::bytes(200, Some("application/json"), body.to_vec())
            });
            let what = String::from_utf8_lossy(body);
            assert!(
                h.store.session().capabilities_loaded() && h.store.session().hydrated(),
                "{what}"
            );
            let ids: Vec<&str> = h.store.messages().iter().map(|m| m.id.as_str()).collect();
            let mut unique = ids.clone();
            unique.dedup();
            assert_eq!(ids, unique, "{what}");
            // Nothing the store asked for may still wait on these answers.
            assert!(h.open(RequestKind::Capabilities).is_empty());
            a_normal_turn_works(&mut h);
        }
        // An answer over maxBodyBytes is refused as a whole, typed.
        let mut opts = options();
        opts.hydrate = true;
        opts.limits.max_body_bytes = 1024;
        let mut h = Harness::new(opts);
        let id = h.the_open(RequestKind::MessagesGet).id;
        let big = json!({"messages": [{"id": "m", "role": "user", "parts": [{"type": "text", "text": "x".repeat(4096)}]}]});
        h.respond(id, Reply::json(200, big).chunked(100));
        assert!(h.store.session().hydrated() && h.store.messages().is_empty());
        assert!(protocol_errors(&h)
            .iter()
            .any(|e| e.message.contains("too large")));
        for kind in [RequestKind::Capabilities, RequestKind::Catalog] {
            let id = h.the_open(kind).id;
            h.respond(id, Reply::status(404));
        }
        a_normal_turn_works(&mut h);
    });
}

#[test]
fn a_history_longer_than_max_messages_keeps_the_newest() {
    small_stack(|| {
        let mut opts: StoreOptions = options_with(AI_SDK_CAPS);
        opts.hydrate = true;
        opts.limits.max_messages = 3;
        let mut h = Harness::new(opts);
        let list: Vec<Value> = (0..10)
            .map(|i| json!({"id": format!("m{i}"), "role": "user", "parts": [{"type": "text", "text": i.to_string()}]}))
            .collect();
        let id = h.the_open(RequestKind::MessagesGet).id;
        h.respond(id, Reply::json(200, json!({"messages": list})));
        let ids: Vec<&str> = h.store.messages().iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["m7", "m8", "m9"]);
        a_normal_turn_works(&mut h);
    });
}

// ===== the SSE decoder alone ===============================================================

#[test]
fn the_decoder_holds_at_most_the_limit_of_a_hostile_line() {
    // A 50 MB line without a line end (no event ever completes): reported once, then dropped
    // byte by byte, and the decoder is fine afterwards.
    let mut d = SseDecoder::with_max_event_bytes(1 << 20);
    let mut out = Vec::new();
    d.push_into(b"data: ", &mut out);
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..50 {
        d.push_into(&chunk, &mut out);
    }
    assert_eq!(out.len(), 1);
    assert!(out[0].is_err());
    d.push_into(b"\n\ndata: ok\n\n", &mut out);
    assert_eq!(out.len(), 2);
    assert_eq!(out[1].as_ref().unwrap().data, "ok");
}

// ===== found by these tests and the fuzzers: bugs fixed since, kept as regressions ===========

#[test]
fn a_non_sse_success_answer_is_a_protocol_error() {
    // Only `text/html` is recognised. A JSON error body or a page served as text/plain with a
    // 200 holds no event: the turn ends `ready` with no answer, no error, nothing to retry.
    for (ct, body) in [
        (
            "application/json",
            r#"{"error":{"code":"overloaded","message":"try later"}}"#.to_string() + "\n\n",
        ),
        (
            "text/plain",
            "<!doctype html>\n<html><body>Sign in</body></html>\n\n".to_string(),
        ),
    ] {
        let mut h = ai_sdk();
        h.send("hello");
        let chat = h.the_open(RequestKind::Chat).id;
        h.respond(chat, Reply::bytes(200, Some(ct), body));
        assert_eq!(
            h.store.status(),
            Status::Error,
            "{ct}: the turn ended silently"
        );
        assert_eq!(
            h.store.session().error().map(|e| e.kind),
            Some(ErrorKind::Protocol),
            "{ct}"
        );
    }
}

#[cfg(feature = "pi")]
#[test]
fn a_turn_start_chunk_while_idle_leaves_no_turn_id() {
    // Found by fuzz/fuzz_targets/store.rs ("turn id Some(..) while Ready"). `turnId` names the
    // running turn (finish_turn clears it); a chunk fed through the public `handle_chunk`
    // while none runs sets it, and `stop()` then does nothing with it (not busy).
    let mut h = pi();
    let chunk = parse_chunk(r#"{"type":"data-turn-start","data":{"turnId":"turn-3"}}"#).unwrap();
    h.act(|s, now| s.handle_chunk(chunk, now));
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(h.store.session().turn_id(), None);
}

#[cfg(feature = "pi")]
#[test]
fn removing_a_posting_follow_up_keeps_one_post_in_flight() {
    // Found by fuzz/fuzz_targets/store.rs ("follow-up … posted after it left"). A's POST is
    // neither aborted nor waited for: B's POST starts at once, two are on the wire, and B can
    // reach the server first (FIFO and `clientSeq` order then rest on the server's DELETE
    // handling alone). `retry_queued` of a `posting` item after the turn ended (sent as a new
    // message) leaves its POST untracked the same way.
    let mut h = pi();
    streaming_turn(&mut h);
    h.send("A");
    h.send("B");
    let a = h.the_open(RequestKind::FollowUpPost);
    assert_eq!(a.message(), "A");
    let id = h.store.session().queued()[0].id.clone();
    h.act(|s, now| s.follow_ups_mut().remove(&id, now));
    assert_eq!(
        h.count(RequestKind::FollowUpDelete),
        1,
        "A is deleted on the server"
    );
    let open: Vec<String> = h
        .open(RequestKind::FollowUpPost)
        .iter()
        .map(|r| r.message().to_string())
        .collect();
    assert!(
        open.len() <= 1,
        "follow-up POSTs in flight at once: {open:?}"
    );
}

#[test]
fn a_number_streamed_digit_by_digit_costs_linear_work() {
    // Found by fuzz/fuzz_targets/partial_json.rs ("94034 work units for 524 bytes"; fixed).
    // A top-level number with a signed exponent was parsed whole again at every delta, and
    // any number token was re-read whole at every delta: a server streaming ~100 KB of digits
    // one per `tool-input-delta` froze the tab for seconds. The parser counts its work
    // (`work_units`: bytes read, values built, paths walked); quadratic work makes 4x the
    // digits cost 16x, linear work 4x. (Its time is the bench's: `bench/attacks.mjs`.)
    let work = |prefix: &str, n: usize| {
        let mut p = PartialJson::new();
        p.push(prefix);
        for _ in 0..n {
            p.push("3");
        }
        p.work_units()
    };
    for prefix in ["1", "{\"a\":1", "1e+"] {
        let (small, large) = (work(prefix, 20_000), work(prefix, 80_000));
        assert!(
            small < 200_000,
            "{prefix:?}: {small} work units for 20,000 digits"
        );
        assert!(
            large <= small * 5,
            "{prefix:?}: {small} work units for 20,000 digits, {large} for 80,000"
        );
    }
}

#[test]
fn chunks_after_a_violation_in_the_same_read_are_not_applied() {
    // Found by fuzz/fuzz_targets/store.rs ("turn id Some(..) while Error"). The `ai` package
    // stops processing at a violation and so does the store (the turn fails, the stream is
    // aborted), but `apply_events` goes on with the rest of the events decoded from the same
    // network read: the text grows after the failure, a data part is added (and reaches
    // `onData`), and a `data-turn-start` sets `turnId` while the status is `error`.
    let mut h = ai_sdk();
    h.send("hello");
    let chat = h.the_open(RequestKind::Chat).id;
    let body = sse(&[
        json!({"type": "start", "messageId": "a1"}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": "a"}),
        json!({"type": "tool-output-denied", "toolCallId": "unknown"}),
        json!({"type": "text-delta", "id": "t", "delta": "b"}),
        json!({"type": "data-weather", "data": {"x": 1}}),
        json!({"type": "data-turn-start", "data": {"turnId": "turn-9"}}),
    ]);
    h.respond(chat, Reply::sse(body).open());
    assert_eq!(h.store.status(), Status::Error);
    assert_eq!(
        h.store.messages()[1].text(),
        "a",
        "nothing after the violation counts"
    );
    assert_eq!(h.store.messages()[1].parts.len(), 1);
    assert!(!h
        .events
        .iter()
        .any(|e| matches!(e, StoreEvent::Data { .. })));
    assert_eq!(h.store.session().turn_id(), None);
}

#[cfg(feature = "pi")]
#[test]
fn dispose_mid_turn_leaves_no_turn_id() {
    // Found by fuzz/fuzz_targets/store.rs ("turn id Some(..) while Ready"). The store stays
    // readable after `dispose()` (React may read it once more): its snapshot then says
    // `status: 'ready'` with the `turnId` of a turn it no longer follows.
    let mut h = pi();
    h.send("hello");
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(chat, Reply::sse(Vec::new()).turn_id("turn-1").open());
    assert_eq!(h.store.session().turn_id(), Some("turn-1"));
    h.dispose();
    assert!(h.aborted.contains(&chat));
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(h.store.session().turn_id(), None);
}

#[cfg(feature = "pi")]
#[test]
fn actions_after_dispose_make_no_requests() {
    // Found by fuzz/fuzz_targets/store.rs ("status Submitted with nothing in flight"). `send`
    // refuses after `dispose()`, but `regenerate` sends a chat POST (a real turn nobody
    // reads), and `retry_queued` of a stalled item sends a DELETE and then waits forever in
    // `submitted` (the DELETE's answer is ignored once disposed). The shell spawns whatever
    // the core asks for, so these reach the network.
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming_turn(&mut h);
    h.send("queued");
    let post = h.the_open(RequestKind::FollowUpPost).id;
    h.respond(post, Reply::json(202, json!({"queued": true})));
    // A stop leaves an accepted item stalled (a natural end sends it again: SPEC §6).
    h.stop();
    assert!(h.aborted.contains(&chat));
    assert_eq!(h.store.session().queued()[0].state, ItemState::Stalled);
    let mut ai = ai_sdk();
    a_normal_turn_works(&mut ai);

    for h in [&mut h, &mut ai] {
        let n = h.sent.len();
        h.dispose();
        let item = h.store.session().queued().first().map(|q| q.id.clone());
        h.act(|s, now| {
            s.use_chat().regenerate(None, now);
            if let Some(id) = item {
                s.follow_ups_mut().retry(&id, now);
            }
        });
        let after: Vec<_> = h.sent[n..].iter().map(|r| (r.kind, r.method)).collect();
        assert!(after.is_empty(), "requests after dispose: {after:?}");
        assert!(
            !h.store.status().is_busy(),
            "{:?} after dispose",
            h.store.status()
        );
    }
}

#[test]
fn a_violation_while_a_turn_is_held_drops_the_held_turn() {
    // Found by the long run of fuzz/fuzz_targets/store.rs ("a stream request left open while
    // Ready"). A stalled item retried as a new message holds its turn until the DELETE of the
    // server's copy is answered. A violating chunk fed meanwhile (`handle_chunk`, AI SDK
    // reducer) failed the turn but kept it held: the user could send again (status `error`),
    // and the DELETE's answer would then have started the held turn beside the new one, while
    // `stop()` took the held one and left the new stream running.
    let mut h = Harness::with_caps(Capabilities {
        native_follow_up: true,
        ai_sdk_owns_history: true,
        ..PI_CAPS
    });
    let chat = streaming_turn(&mut h);
    h.send("queued");
    let post = h.the_open(RequestKind::FollowUpPost).id;
    h.respond(post, Reply::json(202, json!({"queued": true})));
    // A stop leaves an accepted item stalled, taken back from the server (SPEC §6); that
    // DELETE gets no answer, so the retry below waits for its second one.
    h.stop();
    assert!(h.aborted.contains(&chat));
    let taken_back = h.the_open(RequestKind::FollowUpDelete).id;
    h.respond(taken_back, Reply::network("connection reset"));
    let item = h.store.session().queued()[0].id.clone();
    assert!(h.retry_queued(&item));
    let delete = h.the_open(RequestKind::FollowUpDelete).id;
    assert_eq!(h.store.status(), Status::Submitted, "held for the DELETE");
    let chunk = parse_chunk(r#"{"type":"reasoning-delta","id":"r","delta":"x"}"#).unwrap();
    h.act(|s, now| s.handle_chunk(chunk, now));
    assert_eq!(h.store.status(), Status::Error);

    // The new message waits for the DELETE as well (the copy could run after it).
    h.send("next");
    assert!(h.open(RequestKind::Chat).is_empty());
    h.respond(delete, Reply::json(200, json!({"deleted": true})));
    assert_eq!(h.open(RequestKind::Chat).len(), 1, "one turn at a time");
    let next = h.the_open(RequestKind::Chat);
    assert_eq!(next.message(), "next");
    let next = next.id;
    h.stop();
    assert!(h.aborted.contains(&next), "stop ends the running turn");
    assert!(h.open(RequestKind::Chat).is_empty());
    assert_eq!(h.store.status(), Status::Ready);
}

#[cfg(feature = "pi")]
#[test]
fn tool_ui_chunks_for_unknown_calls_change_no_message_at_a_long_history() {
    // A server naming calls no message holds, chunk after chunk: nothing is marked changed
    // (the snapshot re-exports nothing), the search for the call stops after the newest
    // messages, the map of updates stays bounded, and the store goes on working. A call in
    // the running turn's message still updates it. (pi mode: there data chunks are not
    // history; in AI SDK mode each one is a data part of the streamed message.)
    let mut opts = options_with(PI_CAPS);
    opts.hydrate = true;
    let mut h = Harness::new(opts);
    let tool = |id: &str, call: &str| {
        json!({"id": id, "role": "assistant", "parts": [
        {"type": "dynamic-tool", "toolName": "ls", "toolCallId": call, "state": "output-available",
         "input": {}, "output": "ok"}]})
    };
    let mut list: Vec<Value> = (0..5_000)
        .map(|i| json!({"id": format!("m{i}"), "role": "user", "parts": [{"type": "text", "text": "t"}]}))
        .collect();
    list.push(tool("last", "live"));
    let get = h.the_open(RequestKind::MessagesGet).id;
    h.respond(get, Reply::json(200, json!({"messages": list})));
    assert_eq!(h.store.messages().len(), 5_001);
    let versions: Vec<u64> = (0..5_001)
        .map(|i| h.store.session().history().version(i))
        .collect();
    for n in 0..20_000 {
        let chunk = parse_chunk(
            &json!({"type": "data-tool-ui", "data": {"toolCallId": format!("nobody-{n}"), "icon": "x"}})
                .to_string(),
        )
        .unwrap();
        h.act(|s, now| s.handle_chunk(chunk, now));
    }
    let changed: Vec<usize> = (0..5_001)
        .filter(|&i| h.store.session().history().version(i) != versions[i])
        .collect();
    assert!(changed.is_empty(), "messages changed: {changed:?}");
    let chunk =
        parse_chunk(r#"{"type":"data-tool-ui","data":{"toolCallId":"live","icon":"spinner"}}"#)
            .unwrap();
    h.act(|s, now| s.handle_chunk(chunk, now));
    assert!(h.store.session().history().version(5_000) > versions[5_000]);
    assert_eq!(
        h.store.session().export_message(5_000)["parts"][0]["ui"]["icon"],
        "spinner"
    );
    a_normal_turn_works(&mut h);
}

fn streaming_turn(h: &mut Harness) -> agent_chat_store::RequestId {
    h.send("hello");
    let chat = h.the_open(RequestKind::Chat).id;
    let first = sse(&[json!({"type": "data-turn-start", "data": {"turnId": "turn-1"}})]);
    h.respond(chat, Reply::sse(first).open());
    chat
}

#[cfg(feature = "pi")]
#[test]
fn a_host_transport_replaying_the_turn_start_applies_deltas_once() {
    // Found in review: with `turnId` kept only for a running turn, a `data-turn-start` fed
    // through `handle_chunk` again (a host's transport resuming from the start of the
    // server's buffer) restarted the seq watermark and the replayed deltas doubled the text.
    let mut h = pi();
    let feed = |h: &mut Harness, v: Value| {
        let c = parse_chunk(&v.to_string()).unwrap();
        h.act(|s, now| s.handle_chunk(c, now));
    };
    feed(
        &mut h,
        json!({"type": "data-pi-mode", "data": {"enabled": true}}),
    );
    for _ in 0..2 {
        feed(
            &mut h,
            json!({"type": "data-turn-start", "data": {"turnId": "turn-1"}}),
        );
        feed(
            &mut h,
            pi_chunk(
                "message-start",
                1,
                json!({"messageId": "a1", "role": "assistant"}),
            ),
        );
        feed(
            &mut h,
            pi_chunk(
                "text-delta",
                2,
                json!({"messageId": "a1", "partId": "0", "delta": "Hi"}),
            ),
        );
    }
    let i = h.message_index("a1");
    assert_eq!(h.store.messages()[i].text(), "Hi");
    assert_eq!(h.store.session().turn_id(), None, "no turn runs");
}

#[cfg(feature = "pi")]
#[test]
fn a_stream_cut_inside_its_first_field_name_after_padding_is_resumed() {
    // Found in review: the first 256 bytes of a body without events are kept to tell a page
    // from a stream; blank-line padding pushed the first field name across that boundary and
    // a cut stream (to be resumed) was failed as "not an event stream".
    let run = |pad: usize| {
        let mut h = pi();
        h.send("hi");
        let chat = h.the_open(RequestKind::Chat).id;
        let mut body = vec![b'\n'; pad];
        body.extend_from_slice(b"data: {\"type\":\"start\"");
        h.respond(chat, Reply::sse(body));
        (h.store.status(), h.store.session().error().map(|e| e.kind))
    };
    for pad in [10, 253, 254, 255] {
        assert_eq!(run(pad), (Status::Streaming, None), "padding {pad}");
    }
}
