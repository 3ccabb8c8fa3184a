//! pi rows as a UI shows them, on both pi transports: one assistant row per answer (a tool
//! round trip is one bubble, a step per pi message, under the first message's id), the same
//! from the stream and from a history read, and a pi tool's `output` as a tool UI expects it
//! (its text, a JSON object or array as that value) with pi's content beside
//! (`resultContent`).

#![cfg(feature = "pi")]

use crate::common;

use agent_chat_store::RequestKind;
use common::native_store::*;
use common::scenario::*;
use common::*;
use serde_json::{json, Value};

/// pi's tool result content: one text part.
fn content(text: &str) -> Value {
    json!([{"type": "text", "text": text}])
}

/// A tool round trip as a pi SSE stream: `a1` calls `weather`, its result, `a2` answers.
fn round_trip() -> Vec<Value> {
    vec![
        pi_chunk(
            "message-start",
            2,
            json!({"messageId": "a1", "role": "assistant"}),
        ),
        pi_chunk(
            "tool-call-start",
            3,
            json!({"messageId": "a1", "toolCallId": "c1", "toolName": "weather"}),
        ),
        pi_chunk(
            "tool-call-end",
            4,
            json!({"messageId": "a1", "toolCallId": "c1", "input": {"city": "Lyon"}}),
        ),
        pi_chunk(
            "message-end",
            5,
            json!({"messageId": "a1", "role": "assistant"}),
        ),
        pi_chunk(
            "tool-result",
            6,
            json!({"messageId": "tr1", "toolCallId": "c1", "output": {"content": content(r#"{"temp": 21}"#), "details": {"unit": "C"}}}),
        ),
        pi_chunk(
            "message-start",
            7,
            json!({"messageId": "a2", "role": "assistant"}),
        ),
        pi_chunk("text-start", 8, json!({"messageId": "a2", "partId": "0"})),
        pi_chunk(
            "text-delta",
            9,
            json!({"messageId": "a2", "partId": "0", "delta": "21 degrees."}),
        ),
        pi_chunk("text-end", 10, json!({"messageId": "a2", "partId": "0"})),
        pi_chunk(
            "message-end",
            11,
            json!({"messageId": "a2", "role": "assistant"}),
        ),
    ]
}

/// The tool part as the rule shows it.
fn shaped_call() -> Value {
    json!({"type": "tool-weather", "toolName": "weather", "toolCallId": "c1",
        "state": "output-available", "input": {"city": "Lyon"}, "output": {"temp": 21},
        "details": {"unit": "C"}, "resultContent": content(r#"{"temp": 21}"#)})
}

fn assistant_rows(h: &Harness) -> Vec<Value> {
    (h.history().into_iter())
        .filter(|m| m["role"] == "assistant")
        .collect()
}

#[test]
fn pi_sse_a_tool_round_trip_is_one_row_with_the_tools_output_shaped() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming_turn(&mut h, "weather in Lyon?");
    h.body(chat, &sse(&round_trip()));
    let rows = assistant_rows(&h);
    assert_eq!(rows.len(), 1, "one bubble: {rows:#?}");
    assert_eq!(
        rows[0]["id"], "a1",
        "the first message's id: the bubble keeps it"
    );
    assert_eq!(
        rows[0]["parts"],
        json!([shaped_call(), {"type": "step-start"},
            {"type": "text", "text": "21 degrees.", "state": "done"}])
    );
    end_turn(&mut h, chat);
    assert_eq!(assistant_rows(&h).len(), 1);
}

/// The server's history lists pi's messages one by one, with the result's content as the
/// output: read back, they are the rows the stream showed.
#[test]
fn pi_sse_a_history_read_gives_the_rows_the_stream_gave() {
    let mut live = Harness::with_caps(PI_CAPS);
    let chat = streaming_turn(&mut live, "weather in Lyon?");
    live.body(chat, &sse(&round_trip()));
    end_turn(&mut live, chat);
    let user_id = live.history()[0]["id"].clone();
    let stored = json!({"messages": [
        {"id": user_id, "role": "user", "parts": [{"type": "text", "text": "weather in Lyon?"}]},
        {"id": "a1", "role": "assistant", "parts": [
            {"type": "tool-weather", "toolName": "weather", "toolCallId": "c1",
             "state": "output-available", "input": {"city": "Lyon"},
             "output": content(r#"{"temp": 21}"#), "details": {"unit": "C"}}]},
        {"id": "a2", "role": "assistant", "parts": [
            {"type": "text", "text": "21 degrees.", "state": "done"}]},
    ]});
    let read = hydrated(PI_CAPS, stored);
    assert_eq!(read.history(), live.history());
}

/// A reload mid-answer: the history shows the call's message; the resumed stream (fed as a
/// host's transport feeds it) replays the turn from its start, or goes on after what the
/// history showed. Still one row, no part twice.
#[test]
fn pi_sse_a_resume_after_a_history_read_keeps_one_row() {
    // From the turn's start, or from after what the history showed.
    for from in [0, 5] {
        let mut h = read_mid_answer();
        for c in &round_trip()[from..] {
            let chunk = agent_chat_store::parse_chunk(&c.to_string()).unwrap();
            h.act(|s, now| s.handle_chunk(chunk, now));
        }
        check_one_row(&h);
    }
}

fn read_mid_answer() -> Harness {
    let mut h = hydrating(PI_CAPS);
    let get = h.the_open(RequestKind::MessagesGet).id;
    h.respond(
        get,
        Reply::json(
            200,
            json!({"messages": [
                {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "weather in Lyon?"}]},
                {"id": "a1", "role": "assistant", "parts": [
                    {"type": "tool-weather", "toolName": "weather", "toolCallId": "c1",
                     "state": "output-available", "input": {"city": "Lyon"},
                     "output": content(r#"{"temp": 21}"#), "details": {"unit": "C"}}]},
            ]}),
        ),
    );
    h
}

fn check_one_row(h: &Harness) {
    let rows = assistant_rows(h);
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!(
        rows[0]["parts"],
        json!([shaped_call(), {"type": "step-start"},
            {"type": "text", "text": "21 degrees.", "state": "done"}])
    );
}

/// pi-native: the same round trip is one row (the gate's rule) and the result shaped alike.
#[test]
fn pi_native_a_tool_round_trip_is_one_row_with_the_tools_output_shaped() {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "weather in Lyon?");
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "message-start", "seq": 2, "messageId": "a1", "role": "assistant"}),
            json!({"type": "tool-call", "seq": 3, "messageId": "a1", "toolCallId": "c1", "toolName": "weather", "input": {"city": "Lyon"}}),
            json!({"type": "tool-result", "seq": 4, "messageId": "tr1", "toolCallId": "c1",
                "output": {"content": content(r#"{"temp": 21}"#), "details": {"unit": "C"}}}),
            json!({"type": "message-start", "seq": 5, "messageId": "a2", "role": "assistant"}),
            json!({"type": "message-delta", "seq": 6, "messageId": "a2", "partId": "0", "kind": "text", "delta": "21 degrees."}),
            json!({"type": "agent-end", "seq": 7, "turnId": "t1", "status": "ok"}),
        ],
    );
    let rows = assistant_rows(&h);
    assert_eq!(rows.len(), 1, "{rows:#?}");
    let parts = rows[0]["parts"].as_array().unwrap();
    let call = parts.iter().find(|p| p["toolCallId"] == "c1").unwrap();
    assert_eq!(call["output"], json!({"temp": 21}));
    assert_eq!(call["resultContent"], content(r#"{"temp": 21}"#));
    assert_eq!(call["details"], json!({"unit": "C"}));
    assert!(parts.iter().any(|p| p["type"] == "step-start"));
}

/// The rule for `output`, part by part: several text parts join, a text that is not a JSON
/// object or array stays text, content with an image stays as pi gave it.
#[test]
fn a_pi_results_output_is_its_text_and_other_content_stays() {
    for (given, shown, beside) in [
        (
            json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]),
            json!("a\nb"),
            true,
        ),
        (content("42"), json!("42"), true),
        (content("{not json"), json!("{not json"), true),
        (
            json!([{"type": "image", "data": "AA==", "mimeType": "image/png"}]),
            json!([{"type": "image", "data": "AA==", "mimeType": "image/png"}]),
            false,
        ),
        (json!("plain"), json!("plain"), false),
    ] {
        let mut h = Harness::with_caps(PI_CAPS);
        let chat = streaming_turn(&mut h, "go");
        let mut events = round_trip();
        events[4] = pi_chunk(
            "tool-result",
            6,
            json!({"messageId": "tr1", "toolCallId": "c1", "output": {"content": given}}),
        );
        h.body(chat, &sse(&events[..5]));
        let call = assistant_rows(&h)[0]["parts"][0].clone();
        assert_eq!(call["output"], shown, "{given}");
        match beside {
            true => assert_eq!(call["resultContent"], given),
            false => assert!(call.get("resultContent").is_none(), "{call}"),
        }
    }
}
