//! The upstream client's history rules in pi-native mode (SPEC §14.1), one test per rule and
//! case, each citing the upstream test it corresponds to (`piChatReducer.test.ts`,
//! `selectors.test.ts` in `packages/agent/src/front/chat/pi/__tests__/`; the scenarios here
//! are this project's own). Upstream's `committedMessages` / `streamingMessage` / `$render` are
//! the history's messages: a message's `status`, `turnId` and `createdAt` are in its
//! metadata, a `tool-call` part is a static `tool-<name>` part (pi's `aborted` is
//! `output-error` "aborted"), and an answer's messages are one row whose steps are separated
//! by `step-start` parts. Every event-path case also runs through `replayPiNativeEvents`,
//! which must show the same messages.

#![cfg(all(feature = "pi", feature = "replay"))]

use crate::common;

use agent_chat_store::{
    parse_native_state, replay_pi_native_events, shell_export_message, ChunkInput, EndStatus,
    NativeEffect, NativeSession, RunStatus, Status, ToolUiUpdates,
};
use common::vectors::{frame, vector, wire};
use serde_json::{json, Value};

// ----- helpers ---------------------------------------------------------------------------------

/// Numbers bare events from `first` (the order is what a test means; the seq is the gate's).
fn numbered(first: u64, events: Vec<Value>) -> Vec<Value> {
    (first..)
        .zip(events)
        .map(|(seq, mut e)| {
            e["seq"] = json!(seq);
            e
        })
        .collect()
}

/// A `/state` answer.
fn state(seq: u64, status: &str, active: Option<&str>, messages: Value) -> Value {
    let mut s = json!({"protocolVersion": 1, "sessionId": "s1", "seq": seq, "status": status,
        "messages": messages, "queue": {"followUps": []}, "followUpMode": "one-at-a-time"});
    if let Some(t) = active {
        s["activeTurnId"] = json!(t);
    }
    json!({"seq": seq, "state": s})
}

/// The session after `events` (from seq 1), after `doc` when one is given; the replay helper
/// given the same must show the same messages.
fn run(doc: Option<Value>, events: &[Value]) -> (NativeSession, Vec<NativeEffect>) {
    let mut s = NativeSession::new();
    if let Some(d) = &doc {
        assert!(s.apply_state(parse_native_state(d.clone()).unwrap(), false));
    }
    let mut out = Vec::new();
    for e in events {
        s.apply(frame(e.clone()), &mut out);
    }
    let frames: Vec<String> = events.iter().map(wire).collect();
    let r = replay_pi_native_events(frames.iter().map(|f| ChunkInput::Text(f)), doc).unwrap();
    assert_eq!(
        r.messages,
        s.messages(),
        "replayPiNativeEvents shows the same"
    );
    (s, out)
}

fn after(events: Vec<Value>) -> NativeSession {
    run(None, &numbered(1, events)).0
}

/// More events, numbered on from the session's cursor.
fn then(s: &mut NativeSession, events: Vec<Value>) -> Vec<NativeEffect> {
    let mut out = Vec::new();
    for e in numbered(s.seq() + 1, events) {
        s.apply(frame(e), &mut out);
    }
    out
}

fn rows(s: &NativeSession) -> Vec<Value> {
    s.messages()
        .iter()
        .map(|m| serde_json::to_value(m).unwrap())
        .collect()
}

fn ids(s: &NativeSession) -> Vec<String> {
    s.messages().iter().map(|m| m.id.clone()).collect()
}

/// A row's part types, in order.
fn types(m: &Value) -> Vec<&str> {
    m["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect()
}

/// A row's texts of one part type, in order.
fn texts<'a>(m: &'a Value, ty: &str) -> Vec<&'a str> {
    m["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["type"] == ty)
        .map(|p| p["text"].as_str().unwrap())
        .collect()
}

/// A row's tool part for a call.
fn call<'a>(m: &'a Value, id: &str) -> &'a Value {
    m["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["toolCallId"] == id)
        .unwrap_or_else(|| panic!("no call {id} in {m:#}"))
}

fn calls(m: &Value) -> usize {
    m["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p.get("toolCallId").is_some())
        .count()
}

fn status(m: &Value) -> &str {
    m["metadata"]["status"].as_str().unwrap_or("(none)")
}

/// No part of the row streams.
fn settled(m: &Value) -> bool {
    m["parts"].as_array().unwrap().iter().all(|p| {
        p["state"] != "streaming"
            && p["state"] != "input-available"
            && p["state"] != "input-streaming"
    })
}

fn agent_start(turn: &str) -> Value {
    json!({"type": "agent-start", "turnId": turn})
}

fn agent_end(turn: &str, status: &str) -> Value {
    json!({"type": "agent-end", "turnId": turn, "status": status})
}

fn assistant(id: &str) -> Value {
    json!({"type": "message-start", "messageId": id, "role": "assistant"})
}

fn delta(id: &str, part: &str, kind: &str, text: &str) -> Value {
    json!({"type": "message-delta", "messageId": id, "partId": part, "kind": kind, "delta": text})
}

fn tool_call(id: &str, call: &str) -> Value {
    json!({"type": "tool-call", "messageId": id, "toolCallId": call, "toolName": "bash",
        "input": {"command": "pwd"}})
}

fn tool_result(id: &str, call: &str, output: Value) -> Value {
    json!({"type": "tool-result", "messageId": id, "toolCallId": call, "output": output})
}

fn end(id: &str, fin: Value) -> Value {
    json!({"type": "message-end", "messageId": id, "final": fin})
}

/// An assistant final with these parts.
fn fin(id: &str, parts: Value) -> Value {
    json!({"id": id, "role": "assistant", "status": "done", "parts": parts})
}

/// An assistant final of one text part `p1`.
fn fin_text(id: &str, text: &str) -> Value {
    fin(id, json!([{"type": "text", "id": "p1", "text": text}]))
}

fn native_call(call: &str, state: &str) -> Value {
    json!({"type": "tool-call", "id": call, "toolName": "bash", "input": {"command": "pwd"}, "state": state})
}

// ----- 1. turn-scoped events -------------------------------------------------------------------

#[test]
fn rule1_an_older_turns_error_and_end_do_not_end_the_running_one() {
    // upstream piChatReducer.test.ts:2173 (first half)
    let (s, out) = run(
        None,
        &numbered(
            1,
            vec![
                agent_start("t-old"),
                assistant("a-old"),
                delta("a-old", "0", "text", "old partial"),
                agent_start("t-new"),
                assistant("a-new"),
                delta("a-new", "0", "text", "new partial"),
                json!({"type": "error", "turnId": "t-old", "error": {"code": "INTERNAL_ERROR", "message": "old failure"}}),
                agent_end("t-old", "error"),
            ],
        ),
    );
    assert_eq!(s.status(), RunStatus::Running);
    assert_eq!(s.turn_id(), Some("t-new"));
    assert_eq!(s.error(), None);
    assert!(!out
        .iter()
        .any(|e| matches!(e, NativeEffect::RunEnded(_) | NativeEffect::Error(..))));
    let m = rows(&s);
    let new = m.iter().find(|m| m["id"] == "a-new").unwrap();
    assert_eq!(status(new), "streaming");
    assert_eq!(
        new["parts"][0]["state"], "streaming",
        "still written: {new}"
    );
    // The run that started over the old one ended that one: nothing of it streams.
    let old = m.iter().find(|m| m["id"] == "a-old").unwrap();
    assert!(settled(old) && status(old) == "done", "{old}");
}

#[test]
fn rule1_a_late_ok_end_after_an_error_keeps_the_error() {
    // upstream piChatReducer.test.ts:2173 (second half)
    let mut s = after(vec![
        agent_start("t1"),
        assistant("a1"),
        delta("a1", "0", "text", "partial"),
    ]);
    let out = then(
        &mut s,
        vec![
            json!({"type": "error", "turnId": "t1", "error": {"code": "INTERNAL_ERROR", "message": "boom"}}),
        ],
    );
    assert!(out.contains(&NativeEffect::Error("INTERNAL_ERROR".into(), "boom".into())));
    assert_eq!((s.status(), s.error()), (RunStatus::Failed, Some("boom")));
    let failed = rows(&s);
    assert_eq!(status(&failed[0]), "error");
    assert!(settled(&failed[0]));
    let out = then(&mut s, vec![agent_end("t1", "ok")]);
    assert_eq!((s.status(), s.error()), (RunStatus::Failed, Some("boom")));
    assert!(
        out.contains(&NativeEffect::RunEnded(EndStatus::Ok)),
        "the run did end"
    );
    assert_eq!(rows(&s), failed, "the late end changes no row");
}

// ----- 2. finals merge into what streamed ------------------------------------------------------

#[test]
fn rule2_a_final_keeps_the_streamed_call_and_reasoning_it_lacks() {
    // upstream piChatReducer.test.ts:741
    let mut s = after(vec![
        agent_start("t1"),
        assistant("a1"),
        delta("a1", "r1", "reasoning", "thinking"),
        tool_call("a1", "c1"),
        delta("a1", "t-live", "text", "done"),
        end("a1", fin_text("a1", "done")),
    ]);
    let m = &rows(&s)[0];
    assert_eq!(types(m), ["reasoning", "tool-bash", "text"]);
    assert_eq!(m["parts"][0]["state"], "done");
    assert_eq!(call(m, "c1")["state"], "input-available");
    assert_eq!(texts(m, "text"), ["done"]);
    assert_eq!(status(m), "streaming", "its call still runs");
    then(
        &mut s,
        vec![tool_result("a1", "c1", json!({"content": "ok"}))],
    );
    let m = &rows(&s)[0];
    assert_eq!(call(m, "c1")["state"], "output-available");
    assert_eq!(call(m, "c1")["output"], "ok");
    assert_eq!(status(m), "done", "the last call returned");
    assert_eq!(texts(m, "text"), ["done"]);
}

#[test]
fn rule2_a_settled_call_is_not_downgraded_by_a_request_only_final() {
    // upstream piChatReducer.test.ts:1552
    let mut s = after(vec![
        agent_start("t1"),
        assistant("a1"),
        tool_call("a1", "c1"),
        tool_result("a1", "c1", json!({"content": "ok"})),
        end(
            "a1",
            fin(
                "a1",
                json!([native_call("c1", "input-available"), {"type": "text", "id": "p1", "text": "done"}]),
            ),
        ),
    ]);
    let c = call(&rows(&s)[0], "c1").clone();
    assert_eq!(
        (c["state"].as_str(), &c["output"]),
        (Some("output-available"), &json!("ok"))
    );
    then(&mut s, vec![agent_end("t1", "ok")]);
    assert_eq!(call(&rows(&s)[0], "c1"), &c, "nor by the run's end");
}

#[test]
fn rule2_a_stale_final_outcome_does_not_replace_the_streamed_one() {
    // upstream piChatReducer.test.ts:2000 (failed stays failed)
    let s = after(vec![
        agent_start("t1"),
        assistant("a1"),
        tool_call("a1", "c1"),
        json!({"type": "tool-result", "messageId": "a1", "toolCallId": "c1", "isError": true, "errorText": "failed", "output": {"content": "error"}}),
        end(
            "a1",
            fin(
                "a1",
                json!([{"type": "tool-call", "id": "c1", "toolName": "bash", "state": "output-available", "output": {"content": "ok"}}]),
            ),
        ),
    ]);
    let c = call(&rows(&s)[0], "c1").clone();
    assert_eq!(
        (c["state"].as_str(), c["errorText"].as_str()),
        (Some("output-error"), Some("failed"))
    );
    // upstream piChatReducer.test.ts:2040 (returned stays returned)
    let s = after(vec![
        agent_start("t1"),
        assistant("a1"),
        tool_call("a1", "c1"),
        tool_result("a1", "c1", json!({"content": "ok"})),
        end(
            "a1",
            fin(
                "a1",
                json!([{"type": "tool-call", "id": "c1", "toolName": "bash", "state": "output-error", "errorText": "stale failure"}]),
            ),
        ),
    ]);
    let c = call(&rows(&s)[0], "c1").clone();
    assert_eq!(
        (c["state"].as_str(), &c["output"]),
        (Some("output-available"), &json!("ok"))
    );
}

#[test]
fn rule2_a_placeholder_output_never_replaces_a_real_one() {
    // upstream piChatReducer.test.ts:1938, :1831
    for thin in [json!({}), Value::Null] {
        let mut final_call = native_call("c1", "output-available");
        if !thin.is_null() {
            final_call["output"] = thin;
        }
        let s = after(vec![
            agent_start("t1"),
            assistant("a1"),
            tool_call("a1", "c1"),
            tool_result("a1", "c1", json!({"content": "real result"})),
            end("a1", fin("a1", json!([final_call]))),
        ]);
        let c = call(&rows(&s)[0], "c1").clone();
        assert_eq!(
            (c["state"].as_str(), &c["output"]),
            (Some("output-available"), &json!("real result"))
        );
    }
    // upstream piChatReducer.test.ts:1969: a richer final beats a placeholder result.
    let s = after(vec![
        agent_start("t1"),
        assistant("a1"),
        tool_call("a1", "c1"),
        tool_result("a1", "c1", json!({})),
        end(
            "a1",
            fin(
                "a1",
                json!([{"type": "tool-call", "id": "c1", "toolName": "bash", "state": "output-available", "output": {"content": "full result"}}]),
            ),
        ),
    ]);
    assert_eq!(call(&rows(&s)[0], "c1")["output"], "full result");
    // A placeholder result after a real one changes nothing either.
    let s = after(vec![
        agent_start("t1"),
        assistant("a1"),
        tool_call("a1", "c1"),
        tool_result("a1", "c1", json!({"content": "real"})),
        tool_result("a1", "c1", json!({})),
    ]);
    assert_eq!(call(&rows(&s)[0], "c1")["output"], "real");
}

#[test]
fn rule2_the_input_and_ui_a_final_lacks_stay() {
    // upstream piChatReducer.test.ts:1908, :1863
    let s = after(vec![
        agent_start("t1"),
        assistant("a1"),
        json!({"type": "tool-call", "messageId": "a1", "toolCallId": "c1", "toolName": "bash", "input": {"command": "pwd"},
            "ui": {"rendererId": "shell-command", "displayGroup": "terminal", "icon": "terminal", "details": {"startedAt": 1}}}),
        tool_result("a1", "c1", json!({"content": "ok"})),
        end(
            "a1",
            fin(
                "a1",
                json!([{"type": "tool-call", "id": "c1", "toolName": "bash", "state": "output-available", "ui": {"details": {"elapsedMs": 10}}},
                {"type": "text", "id": "p1", "text": "done"}]),
            ),
        ),
    ]);
    let c = call(&rows(&s)[0], "c1").clone();
    assert_eq!(c["input"], json!({"command": "pwd"}));
    assert_eq!(c["output"], "ok");
    assert_eq!(
        c["ui"],
        json!({"rendererId": "shell-command", "displayGroup": "terminal", "icon": "terminal", "details": {"startedAt": 1, "elapsedMs": 10}})
    );
}

#[test]
fn rule2_the_fuller_reasoning_wins_and_none_shows_twice() {
    let reasoning = |s: &NativeSession| -> Vec<String> {
        texts(&rows(s)[0], "reasoning")
            .iter()
            .map(|t| t.to_string())
            .collect()
    };
    let with = |live: Vec<Value>, parts: Value| {
        let mut events = vec![agent_start("t1"), assistant("a1")];
        events.extend(live);
        events.push(end("a1", fin("a1", parts)));
        after(events)
    };
    // upstream piChatReducer.test.ts:1634: a rewritten id, the final fuller.
    let s = with(
        vec![delta("a1", "r-live", "reasoning", "partial thought")],
        json!([{"type": "reasoning", "id": "r-final", "text": "partial thought completed", "state": "done"}, {"type": "text", "id": "p1", "text": "done"}]),
    );
    assert_eq!(reasoning(&s), ["partial thought completed"]);
    assert_eq!(types(&rows(&s)[0]), ["reasoning", "text"]);
    // upstream :1661: the same id, the live one fuller.
    let s = with(
        vec![delta("a1", "r1", "reasoning", "complete live thought")],
        json!([{"type": "reasoning", "id": "r1", "text": "short", "state": "done"}]),
    );
    assert_eq!(reasoning(&s), ["complete live thought"]);
    assert_eq!(rows(&s)[0]["parts"][0]["state"], "done");
    // upstream :1596: a rewritten id, shorter and different: both thoughts stay.
    let s = with(
        vec![
            delta("a1", "r-live", "reasoning", "complete live thought"),
            tool_call("a1", "c1"),
            delta("a1", "t-live", "text", "done"),
        ],
        json!([{"type": "reasoning", "id": "r-final", "text": "short", "state": "done"}, {"type": "text", "id": "p1", "text": "done"}]),
    );
    assert_eq!(reasoning(&s), ["complete live thought", "short"]);
    assert_eq!(
        types(&rows(&s)[0]),
        ["reasoning", "tool-bash", "reasoning", "text"]
    );
    // upstream :1687: fragments the final's reasoning covers go.
    let s = with(
        vec![
            delta("a1", "r1", "reasoning", "first thought"),
            delta("a1", "r2", "reasoning", "second thought"),
        ],
        json!([{"type": "reasoning", "id": "r-final", "text": "first thought second thought", "state": "done"}]),
    );
    assert_eq!(reasoning(&s), ["first thought second thought"]);
    // upstream :1739: distinct thoughts both stay.
    let s = with(
        vec![delta("a1", "r-live", "reasoning", "first thought")],
        json!([{"type": "reasoning", "id": "r-final", "text": "second thought", "state": "done"}]),
    );
    assert_eq!(reasoning(&s), ["first thought", "second thought"]);
    // upstream :1766: the same thought under another id, placed where the final says.
    let s = with(
        vec![
            delta("a1", "r-live", "reasoning", "same thought"),
            tool_call("a1", "c1"),
            delta("a1", "t-live", "text", "done"),
        ],
        json!([{"type": "text", "id": "p1", "text": "done"}, {"type": "reasoning", "id": "r-final", "text": "same thought", "state": "done"}]),
    );
    assert_eq!(reasoning(&s), ["same thought"]);
    assert_eq!(types(&rows(&s)[0]), ["tool-bash", "text", "reasoning"]);
    // upstream :1715: a final listing one reasoning id twice shows the fuller once.
    let s = after(vec![end(
        "a1",
        fin(
            "a1",
            json!([{"type": "reasoning", "id": "r1", "text": "think", "state": "done"},
            {"type": "reasoning", "id": "r1", "text": "thinking more", "state": "done"}]),
        ),
    )]);
    assert_eq!(reasoning(&s), ["thinking more"]);
}

#[test]
fn rule2_final_text_under_a_new_part_id_replaces_the_streamed_copy() {
    // upstream piChatReducer.test.ts:547 and :483 (pi's real ids: `0` streamed,
    // `<messageId>:text:0` in the final)
    let s = after(vec![
        agent_start("t1"),
        assistant("a1"),
        delta("a1", "0", "reasoning", "thinking"),
        delta("a1", "1", "text", "Hel"),
        delta("a1", "1", "text", "lo"),
        json!({"type": "message-part-end", "messageId": "a1", "partId": "1", "kind": "text", "text": "Hello"}),
        delta("a1", "2", "text", "Hello wor"),
        end(
            "a1",
            fin(
                "a1",
                json!([{"type": "reasoning", "id": "a1:reasoning:0", "text": "thinking", "state": "done"},
                {"type": "text", "id": "a1:text:1", "text": "Hello world"}]),
            ),
        ),
    ]);
    let m = &rows(&s)[0];
    assert_eq!(texts(m, "text"), ["Hello world"], "{m:#}");
    assert_eq!(texts(m, "reasoning"), ["thinking"]);
    assert_eq!(status(m), "done");
}

#[test]
fn rule2_final_text_is_kept_though_earlier_text_contains_it() {
    // upstream piChatReducer.test.ts:1397 and :1413: the earlier text is another step's.
    for (streamed, last) in [
        ("command completed", "completed"),
        ("command", "command completed"),
    ] {
        let s = after(vec![
            agent_start("t1"),
            assistant("a-tool"),
            delta("a-tool", "a-tool:text", "text", streamed),
            assistant("a-final"),
            end("a-final", fin_text("a-final", last)),
        ]);
        let m = &rows(&s)[0];
        assert_eq!(texts(m, "text"), [streamed, last]);
        assert_eq!(types(m), ["text", "step-start", "text"]);
    }
}

#[test]
fn rule2_a_final_only_reasoning_goes_before_the_calls_the_final_places_after_it() {
    // upstream piChatReducer.test.ts:1796
    let s = after(vec![
        agent_start("t1"),
        assistant("a1"),
        tool_call("a1", "c1"),
        tool_result("a1", "c1", json!({"content": "ok"})),
        delta("a1", "t-live", "text", "done"),
        end(
            "a1",
            fin(
                "a1",
                json!([{"type": "reasoning", "id": "r-final", "text": "final thought", "state": "done"},
                native_call("c1", "input-available"), {"type": "text", "id": "p1", "text": "done"}]),
            ),
        ),
    ]);
    let m = &rows(&s)[0];
    assert_eq!(types(m), ["reasoning", "tool-bash", "text"]);
    assert_eq!(call(m, "c1")["state"], "output-available");
}

#[test]
fn rule2_a_final_alone_keeps_its_order_and_one_part_per_call() {
    // upstream piChatReducer.test.ts:2072 and :2094
    let s = after(vec![end(
        "a1",
        fin(
            "a1",
            json!([{"type": "text", "id": "p1", "text": "done"}, native_call("c1", "input-available"),
            {"type": "tool-call", "id": "c1", "toolName": "bash", "state": "output-available", "output": {"content": "ok"}},
            {"type": "reasoning", "id": "r1", "text": "thinking", "state": "done"}]),
        ),
    )]);
    let m = &rows(&s)[0];
    assert_eq!(types(m), ["text", "tool-bash", "reasoning"]);
    let c = call(m, "c1");
    assert_eq!(
        (c["state"].as_str(), &c["input"], &c["output"]),
        (
            Some("output-available"),
            &json!({"command": "pwd"}),
            &json!("ok")
        )
    );
}

// ----- 3. a row is a message of a turn ---------------------------------------------------------

#[test]
fn rule3_a_later_turn_reusing_an_id_gets_a_row_of_its_own() {
    // upstream piChatReducer.test.ts:2135
    let s = after(vec![
        agent_start("t-old"),
        assistant("a-shared"),
        delta("a-shared", "0", "text", "old answer"),
        end(
            "a-shared",
            json!({"id": "a-shared", "role": "assistant", "status": "done", "turnId": "t-old",
            "parts": [{"type": "text", "id": "p1", "text": "old answer"}]}),
        ),
        agent_end("t-old", "ok"),
        agent_start("t-new"),
        assistant("a-shared"),
        delta("a-shared", "0", "reasoning", "new partial"),
        delta("a-shared", "1", "text", "new text"),
        agent_end("t-new", "aborted"),
    ]);
    let m = rows(&s);
    assert_eq!(m.len(), 2, "{m:#?}");
    assert_eq!(
        (m[0]["id"].as_str(), m[0]["metadata"]["turnId"].as_str()),
        (Some("a-shared"), Some("t-old"))
    );
    assert_eq!(texts(&m[0], "text"), ["old answer"]);
    assert_eq!(status(&m[0]), "done");
    assert_eq!(
        m[1]["id"], "a-shared~t-new",
        "the row id of the later turn's message"
    );
    assert_eq!(m[1]["metadata"]["turnId"], "t-new");
    assert_eq!(status(&m[1]), "aborted");
    assert_eq!(
        (texts(&m[1], "reasoning"), texts(&m[1], "text")),
        (vec!["new partial"], vec!["new text"])
    );
    assert!(settled(&m[1]));
}

#[test]
fn rule3_a_late_final_of_an_older_turn_writes_that_turns_row_only() {
    let first = vec![
        agent_start("t1"),
        assistant("a1"),
        delta("a1", "a1:text", "text", "first"),
        end("a1", fin_text("a1", "first")),
        agent_end("t1", "ok"),
        agent_start("t2"),
        assistant("a2"),
        delta("a2", "a2:text", "text", "second partial"),
    ];
    // upstream piChatReducer.test.ts:1087 (and :1062 once the second run ended)
    for ended in [false, true] {
        let mut events = first.clone();
        if ended {
            events.push(end("a2", fin_text("a2", "second partial, done")));
            events.push(agent_end("t2", "ok"));
        }
        events.push(end("a1", fin_text("a1", "first updated")));
        let s = after(events);
        let m = rows(&s);
        assert_eq!(ids(&s), ["a1", "a2"]);
        assert_eq!(texts(&m[0], "text"), ["first updated"]);
        let second = if ended {
            "second partial, done"
        } else {
            "second partial"
        };
        assert_eq!(texts(&m[1], "text"), [second]);
        assert_eq!(status(&m[1]), if ended { "done" } else { "streaming" });
    }
    // upstream :1130: the later turn reuses the id; a no-turn final that shares the older
    // row's content is that row's.
    let s = after(vec![
        agent_start("t1"),
        assistant("a1"),
        delta("a1", "a1:text", "text", "first"),
        end(
            "a1",
            json!({"id": "a1", "role": "assistant", "status": "done", "turnId": "t1", "parts": [{"type": "text", "id": "p1", "text": "first"}]}),
        ),
        agent_end("t1", "ok"),
        agent_start("t2"),
        assistant("a1"),
        delta("a1", "a1:new-text", "text", "second partial"),
        end("a1", fin_text("a1", "first updated")),
    ]);
    let m = rows(&s);
    assert_eq!(ids(&s), ["a1", "a1~t2"]);
    assert_eq!(texts(&m[0], "text"), ["first updated"]);
    assert_eq!(texts(&m[1], "text"), ["second partial"]);
    assert_eq!(status(&m[1]), "streaming");
    // upstream :1110: a run that started over an unfinished one; the old one's late final.
    let s = after(vec![
        agent_start("t1"),
        assistant("a-old"),
        delta("a-old", "0", "text", "old partial"),
        agent_start("t2"),
        assistant("a-new"),
        delta("a-new", "0", "text", "new partial"),
        end(
            "a-old",
            fin(
                "a-old",
                json!([{"type": "text", "id": "a-old:text:0", "text": "old final"}]),
            ),
        ),
    ]);
    let m = rows(&s);
    assert_eq!(ids(&s), ["a-old", "a-new"]);
    assert_eq!(texts(&m[0], "text"), ["old final"]);
    assert_eq!(texts(&m[1], "text"), ["new partial"]);
}

/// A state whose rows of two turns share the id `a-shared`, the newer one streaming.
fn repeated_ids(newer: Value) -> Value {
    state(
        10,
        "streaming",
        Some("t-new"),
        json!([
            {"id": "a-shared", "role": "assistant", "status": "done", "turnId": "t-old", "parts": [{"type": "text", "id": "old-text", "text": "old answer"}]},
            {"id": "a-shared", "role": "assistant", "status": "streaming", "turnId": "t-new", "parts": newer}
        ]),
    )
}

#[test]
fn rule3_state_rows_sharing_an_id_across_turns_stay_apart_and_events_find_the_running_one() {
    // upstream piChatReducer.test.ts:334
    let (s, _) = run(
        Some(state(
            42,
            "idle",
            None,
            json!([
                {"id": "a1", "role": "assistant", "status": "done", "turnId": "t1", "parts": [{"type": "text", "id": "p1", "text": "first"}]},
                {"id": "a1", "role": "assistant", "status": "done", "turnId": "t2", "parts": [{"type": "text", "id": "p2", "text": "second"}]}
            ]),
        )),
        &[],
    );
    let m = rows(&s);
    assert_eq!(ids(&s), ["a1", "a1~t2"]);
    assert_eq!(
        (texts(&m[0], "text"), texts(&m[1], "text")),
        (vec!["first"], vec!["second"])
    );
    // upstream :628: a delta of the repeated id goes on the running turn's part.
    let (s, _) = run(
        Some(repeated_ids(
            json!([{"type": "text", "id": "new-text", "text": "new"}]),
        )),
        &numbered(11, vec![delta("a-shared", "new-text", "text", " answer")]),
    );
    let m = rows(&s);
    assert_eq!(texts(&m[0], "text"), ["old answer"]);
    assert_eq!(texts(&m[1], "text"), ["new answer"]);
    // upstream :1026: a result by its call id.
    let (s, _) = run(
        Some(repeated_ids(json!([native_call(
            "call-new",
            "input-available"
        )]))),
        &numbered(
            11,
            vec![tool_result(
                "a-shared",
                "call-new",
                json!({"content": "ok"}),
            )],
        ),
    );
    let m = rows(&s);
    assert_eq!(
        m[0]["parts"],
        json!([{"type": "text", "text": "old answer", "state": "done"}])
    );
    assert_eq!(call(&m[1], "call-new")["state"], "output-available");
    assert_eq!(status(&m[1]), "streaming", "its message has not ended");
    // upstream :978: a final of the running turn.
    let (s, _) = run(
        Some(repeated_ids(
            json!([{"type": "tool-call", "id": "c1", "toolName": "bash", "state": "output-available", "output": {"content": "ok"}}]),
        )),
        &numbered(
            11,
            vec![end(
                "a-shared",
                json!({"id": "a-shared", "role": "assistant", "status": "done", "turnId": "t-new",
                    "parts": [native_call("c1", "output-available"), {"type": "text", "id": "p-new", "text": "new done"}]}),
            )],
        ),
    );
    let m = rows(&s);
    assert_eq!(texts(&m[0], "text"), ["old answer"]);
    assert_eq!(types(&m[1]), ["tool-bash", "text"]);
    assert_eq!(texts(&m[1], "text"), ["new done"]);
    // upstream :1153: a no-turn final sharing the older row's text is that row's.
    let (s, _) = run(
        Some(repeated_ids(json!([native_call(
            "call-new",
            "input-available"
        )]))),
        &numbered(
            11,
            vec![end("a-shared", fin_text("a-shared", "old answer updated"))],
        ),
    );
    let m = rows(&s);
    assert_eq!(texts(&m[0], "text"), ["old answer updated"]);
    assert_eq!(types(&m[1]), ["tool-bash"]);
    assert_eq!(status(&m[1]), "streaming");
}

#[test]
fn rule3_an_answer_folding_under_an_id_an_older_turn_holds_gets_its_own() {
    // upstream piChatReducer.test.ts:1503
    let (s, _) = run(
        Some(state(
            10,
            "streaming",
            Some("t-new"),
            json!([
                {"id": "a-final", "role": "assistant", "status": "done", "turnId": "t-old", "parts": [{"type": "text", "id": "old-text", "text": "old answer"}]},
                {"id": "a-tool", "role": "assistant", "status": "streaming", "turnId": "t-new", "parts": [{"type": "tool-call", "id": "c1", "toolName": "bash", "state": "output-available", "output": {"content": "ok"}}]}
            ]),
        )),
        &numbered(
            11,
            vec![end(
                "a-final",
                json!({"id": "a-final", "role": "assistant", "status": "done", "turnId": "t-new", "parts": [{"type": "text", "id": "new-text", "text": "new answer"}]}),
            )],
        ),
    );
    let m = rows(&s);
    assert_eq!(ids(&s), ["a-final", "a-final~t-new"]);
    assert_eq!(texts(&m[0], "text"), ["old answer"]);
    assert_eq!(types(&m[1]), ["tool-bash", "step-start", "text"]);
    assert_eq!(status(&m[1]), "done");
    // upstream :1344: the same from a start and a delta.
    let (s, _) = run(
        Some(state(
            10,
            "streaming",
            Some("t-new"),
            json!([
                {"id": "a-tool", "role": "assistant", "status": "done", "turnId": "t-old", "parts": [{"type": "text", "id": "p1", "text": "old done"}]},
                {"id": "a-tool", "role": "assistant", "status": "done", "turnId": "t-new", "parts": [{"type": "tool-call", "id": "c1", "toolName": "bash", "state": "output-available", "output": {"content": "ok"}}]}
            ]),
        )),
        &numbered(
            11,
            vec![
                assistant("a-final"),
                delta("a-final", "t-live", "text", "new done"),
            ],
        ),
    );
    let m = rows(&s);
    assert_eq!(ids(&s), ["a-tool", "a-final"]);
    assert_eq!(texts(&m[0], "text"), ["old done"]);
    assert_eq!(types(&m[1]), ["tool-bash", "step-start", "text"]);
    assert_eq!(
        (m[1]["metadata"]["turnId"].as_str(), status(&m[1])),
        (Some("t-new"), "streaming")
    );
}

#[test]
fn rule3_a_late_final_under_a_new_id_folds_into_the_turns_answer_not_the_older_row() {
    // upstream piChatReducer.test.ts:932: no turn on the final; the call it shares says
    // which answer it goes on.
    let (s, _) = run(
        Some(state(
            10,
            "idle",
            None,
            json!([
                {"id": "a-tool", "role": "assistant", "status": "done", "turnId": "t-old", "parts": [{"type": "text", "id": "p1", "text": "old done"}]},
                {"id": "a-tool", "role": "assistant", "status": "done", "turnId": "t-new",
                    "parts": [{"type": "tool-call", "id": "c1", "toolName": "bash", "input": {"command": "pwd"}, "state": "output-available", "output": {"content": "ok"}}]}
            ]),
        )),
        &numbered(
            11,
            vec![end(
                "a-final",
                fin(
                    "a-final",
                    json!([{"type": "tool-call", "id": "c1", "toolName": "bash", "input": {"command": "pwd"}, "state": "output-available", "output": {"content": "ok"}},
                    {"type": "text", "id": "p-new", "text": "new done"}]),
                ),
            )],
        ),
    );
    let m = rows(&s);
    let turns: Vec<(&str, &str)> = m
        .iter()
        .map(|m| {
            (
                m["id"].as_str().unwrap(),
                m["metadata"]["turnId"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(turns, [("a-tool", "t-old"), ("a-final", "t-new")]);
    assert_eq!(texts(&m[0], "text"), ["old done"]);
    assert_eq!(types(&m[1]), ["tool-bash", "step-start", "text"]);
    assert_eq!(calls(&m[1]), 1);
}

// ----- 4. a replayed user start ----------------------------------------------------------------

#[test]
fn rule4_a_replayed_user_start_with_a_shown_nonce_is_that_row() {
    // upstream piChatReducer.test.ts:393 and :508
    let (s, out) = run(
        Some(state(
            10,
            "streaming",
            Some("t1"),
            json!([{"id": "u-from-state", "role": "user", "status": "done", "clientNonce": "n1",
                "createdAt": "2026-06-06T10:00:00.000Z", "parts": [{"type": "text", "id": "u:text:0", "text": "hello"}]}]),
        )),
        &numbered(
            11,
            vec![
                json!({"type": "message-start", "messageId": "u-from-replay", "role": "user", "text": "hello",
                "clientNonce": "n1", "createdAt": "2026-06-06T10:00:05.000Z"}),
            ],
        ),
    );
    let m = rows(&s);
    assert_eq!(m.len(), 1, "{m:#?}");
    assert_eq!(m[0]["id"], "u-from-replay");
    assert_eq!(m[0]["metadata"]["clientNonce"], "n1");
    assert_eq!(
        m[0]["metadata"]["createdAt"], "2026-06-06T10:00:00.000Z",
        "the earliest"
    );
    assert_eq!(texts(&m[0], "text"), ["hello"]);
    assert!(out.contains(&NativeEffect::UserMessage {
        message_id: "u-from-replay".into(),
        client_nonce: Some("n1".into()),
        client_seq: None,
        text: Some("hello".into()),
    }));
}

#[test]
fn rule4_a_follow_ups_message_keeps_its_selectors_through_a_final_without_them() {
    // upstream piChatReducer.queue.test.ts:228 and :296
    let (s, _) = run(
        None,
        &numbered(
            1,
            vec![
                json!({"type": "message-start", "messageId": "u1", "role": "user", "text": "next", "clientNonce": "nonce-1", "clientSeq": 1}),
                end(
                    "u1",
                    json!({"id": "u1", "role": "user", "status": "done", "parts": [{"type": "text", "id": "u1:text:0", "text": "next"}]}),
                ),
            ],
        ),
    );
    let m = rows(&s);
    assert_eq!(ids(&s), ["u1"]);
    assert_eq!(
        (
            &m[0]["metadata"]["clientNonce"],
            &m[0]["metadata"]["clientSeq"]
        ),
        (&json!("nonce-1"), &json!(1))
    );
    assert_eq!(texts(&m[0], "text"), ["next"]);
}

// ----- 5. an end settles its run ---------------------------------------------------------------

#[test]
fn rule5_an_abort_settles_unfinished_calls_and_the_streaming_row() {
    // upstream piChatReducer.test.ts:664 and :2119
    let s = after(vec![
        assistant("a1"),
        tool_call("a1", "c1"),
        tool_result("a1", "c1", json!({"content": "ok"})),
        tool_call("a1", "c2"),
        delta("a1", "r1", "reasoning", "thinking"),
        agent_end("t1", "aborted"),
    ]);
    let m = &rows(&s)[0];
    assert_eq!(call(m, "c1")["state"], "output-available");
    let c2 = call(m, "c2");
    assert_eq!(
        (c2["state"].as_str(), c2["errorText"].as_str()),
        (Some("output-error"), Some("aborted"))
    );
    assert_eq!(status(m), "aborted");
    assert!(settled(m));
    // upstream :778: a row whose final came before its call's result.
    let s = after(vec![
        agent_start("t1"),
        assistant("a1"),
        tool_call("a1", "c1"),
        end("a1", fin_text("a1", "done")),
        agent_end("t1", "aborted"),
    ]);
    let m = &rows(&s)[0];
    assert_eq!(
        (status(m), call(m, "c1")["errorText"].as_str()),
        ("aborted", Some("aborted"))
    );
    // An error end: the run's error says why.
    let s = after(vec![
        agent_start("t1"),
        assistant("a1"),
        tool_call("a1", "c1"),
        json!({"type": "error", "turnId": "t1", "error": {"code": "INTERNAL_ERROR", "message": "provider down"}}),
        agent_end("t1", "error"),
    ]);
    let m = &rows(&s)[0];
    assert_eq!(
        (status(m), call(m, "c1")["errorText"].as_str()),
        ("error", Some("provider down"))
    );
}

#[test]
fn rule5_the_real_servers_stop_leaves_nothing_streaming() {
    // A stop on the live server: the final says `aborted`, then the run ends so.
    let s = after(vec![
        agent_start("t1"),
        json!({"type": "message-start", "messageId": "pi:s1:event:2:user", "role": "user", "text": "hi", "clientNonce": "n1"}),
        assistant("pi:s1:event:3:assistant"),
        delta("pi:s1:event:3:assistant", "0", "text", "Hel"),
        tool_call("pi:s1:event:3:assistant", "c1"),
        end(
            "pi:s1:event:3:assistant",
            json!({"id": "pi:s1:event:3:assistant", "role": "assistant", "status": "aborted",
                "parts": [{"type": "text", "id": "x:text:0", "text": "Hel"}, native_call("c1", "input-available")]}),
        ),
        agent_end("t1", "aborted"),
    ]);
    let m = rows(&s);
    assert_eq!(m.len(), 2);
    assert_eq!(status(&m[1]), "aborted");
    assert_eq!(call(&m[1], "c1")["errorText"], "aborted");
    assert!(m.iter().all(settled), "{m:#?}");
    assert_eq!(s.status(), RunStatus::Idle);
}

#[test]
fn rule5_a_late_result_or_final_does_not_revive_a_settled_call() {
    let cut = |how: &str| {
        vec![
            agent_start("t1"),
            assistant("a1"),
            tool_call("a1", "c1"),
            end("a1", fin_text("a1", "done")),
            agent_end("t1", how),
        ]
    };
    for how in ["aborted", "error"] {
        // upstream piChatReducer.test.ts:796 and :816
        let mut s = after(cut(how));
        let before = rows(&s);
        then(
            &mut s,
            vec![tool_result("a1", "c1", json!({"content": "late success"}))],
        );
        assert_eq!(rows(&s), before, "{how}: the late result changes nothing");
        // upstream :836 and :868
        then(
            &mut s,
            vec![end(
                "a1",
                fin(
                    "a1",
                    json!([{"type": "tool-call", "id": "c1", "toolName": "bash", "state": "output-available", "output": {"content": "late success"}},
                    {"type": "text", "id": "p1", "text": "done"}]),
                ),
            )],
        );
        let m = &rows(&s)[0];
        assert_eq!(call(m, "c1")["state"], "output-error", "{how}");
        assert_eq!(status(m), how);
    }
    // upstream :900: a late final under another id folds into the cut row and keeps its end.
    let s = after(vec![
        agent_start("t1"),
        assistant("a-tool"),
        tool_call("a-tool", "c1"),
        end("a-tool", fin("a-tool", json!([]))),
        agent_end("t1", "aborted"),
        end(
            "a-final",
            fin(
                "a-final",
                json!([{"type": "tool-call", "id": "c1", "toolName": "bash", "state": "output-available", "output": {"content": "late success"}},
                {"type": "text", "id": "p1", "text": "done"}]),
            ),
        ),
    ]);
    let m = rows(&s);
    assert_eq!(ids(&s), ["a-final"]);
    assert_eq!(
        (status(&m[0]), call(&m[0], "c1")["state"].as_str()),
        ("aborted", Some("output-error"))
    );
}

#[test]
fn rule5_a_result_for_no_call_shown_is_dropped() {
    // upstream piChatReducer.test.ts:713
    let (s, out) = run(
        Some(state(
            1,
            "idle",
            None,
            json!([{"id": "u1", "role": "user", "status": "done", "parts": [{"type": "text", "text": "hello"}]}]),
        )),
        &numbered(
            2,
            vec![tool_result(
                "missing-assistant",
                "missing-tool",
                json!({"content": "late orphan result"}),
            )],
        ),
    );
    assert_eq!(ids(&s), ["u1"]);
    assert_eq!(s.status(), RunStatus::Idle);
    assert!(out
        .iter()
        .any(|e| matches!(e, NativeEffect::Diagnostic(d) if d.contains("missing-tool"))));
}

// ----- 6. a state behind the client ------------------------------------------------------------

#[test]
fn rule6_a_short_state_read_again_does_not_wipe_the_transcript() {
    // upstream piChatReducer.test.ts:117
    let mut s = NativeSession::new();
    let first = state(
        10,
        "idle",
        None,
        json!([
            {"id": "u1", "role": "user", "status": "done", "parts": [{"type": "text", "text": "hello"}]},
            {"id": "a1", "role": "assistant", "status": "done", "parts": [{"type": "text", "id": "p1", "text": "hi"}]}
        ]),
    );
    s.apply_state(parse_native_state(first).unwrap(), false);
    let shown = rows(&s);
    s.apply_state(
        parse_native_state(state(11, "streaming", Some("t-next"), json!([]))).unwrap(),
        false,
    );
    assert_eq!(rows(&s), shown);
    assert_eq!(
        (s.seq(), s.status(), s.turn_id()),
        (11, RunStatus::Running, Some("t-next"))
    );
    // upstream :364 and :379: one older than the cursor is ignored.
    let revision = s.history().revision();
    assert!(!s.apply_state(
        parse_native_state(state(4, "idle", None, json!([]))).unwrap(),
        false
    ));
    assert_eq!((s.history().revision(), s.seq()), (revision, 11));
    // upstream :445: unless the server said the cursor is out of range.
    assert!(s.apply_state(
        parse_native_state(state(
            3,
            "idle",
            None,
            json!([{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "canonical"}]}])
        ))
        .unwrap(),
        true
    ));
    assert_eq!((ids(&s), s.seq()), (vec!["u1".to_string()], 3));
}

#[test]
fn rule6_the_first_state_of_a_session_is_taken_whatever_its_seq() {
    // upstream piChatReducer.test.ts:422: nothing was applied yet.
    let (s, _) = run(
        Some(state(
            0,
            "idle",
            None,
            json!([
                {"id": "u1", "role": "user", "status": "done", "parts": [{"type": "text", "text": "canonical"}]},
                {"id": "a1", "role": "assistant", "status": "done", "parts": [{"type": "text", "id": "p1", "text": "history"}]}
            ]),
        )),
        &[],
    );
    assert_eq!(
        (ids(&s), s.seq()),
        (vec!["u1".to_string(), "a1".to_string()], 0)
    );
}

/// The live server's turn as events (streamed ids `pi:<sid>:event:<seq>:<role>`): a prompt,
/// a tool call, its result, the answer's text, still streaming.
fn live_turn() -> Vec<Value> {
    numbered(
        1,
        vec![
            json!({"type": "message-start", "messageId": "pi:s1:event:1:user", "role": "user", "text": "list files"}),
            agent_start("t1"),
            assistant("pi:s1:event:3:assistant"),
            tool_call("pi:s1:event:3:assistant", "c1"),
            end(
                "pi:s1:event:3:assistant",
                json!({"id": "pi:s1:event:3:assistant", "role": "assistant", "status": "done", "turnId": "t1",
                "parts": [native_call("c1", "input-available")]}),
            ),
            tool_result(
                "pi:s1:event:6:toolResult",
                "c1",
                json!({"content": [{"type": "text", "text": "a.txt"}]}),
            ),
            assistant("pi:s1:event:7:assistant"),
            delta("pi:s1:event:7:assistant", "0", "text", "There is "),
        ],
    )
}

#[test]
fn rule6_a_busy_state_with_pi_entry_ids_merges_without_duplicates() {
    // The live server's state of a busy session: pi entry ids, no clientNonce, no answer
    // being written. Read again mid-run (after a reconnect) it leaves the transcript as it
    // is, and the answer goes on streaming.
    let events = live_turn();
    let (mut s, _) = run(None, &events);
    let before = rows(&s);
    assert_eq!(before.len(), 2, "{before:#?}");
    let busy = state(
        8,
        "streaming",
        Some("t1"),
        json!([
            {"id": "08ec6d05", "role": "user", "status": "done", "turnId": "t1", "parts": [{"type": "text", "text": "list files"}]},
            {"id": "1f0a9c33", "role": "assistant", "status": "done", "turnId": "t1",
                "parts": [{"type": "tool-call", "id": "c1", "toolName": "bash", "input": {"command": "pwd"}, "state": "output-available",
                    "output": [{"type": "text", "text": "a.txt"}]}]}
        ]),
    );
    assert!(s.apply_state(parse_native_state(busy).unwrap(), false));
    let m = rows(&s);
    assert_eq!(
        ids(&s),
        ["pi:s1:event:1:user", "pi:s1:event:7:assistant"],
        "{m:#?}"
    );
    assert_eq!(m[1]["parts"], before[1]["parts"]);
    then(
        &mut s,
        vec![
            delta("pi:s1:event:7:assistant", "0", "text", "one file."),
            end(
                "pi:s1:event:7:assistant",
                json!({"id": "pi:s1:event:7:assistant", "role": "assistant", "status": "done", "turnId": "t1",
                "parts": [{"type": "text", "id": "x:text:0", "text": "There is one file."}]}),
            ),
            agent_end("t1", "ok"),
        ],
    );
    let m = rows(&s);
    assert_eq!(m.len(), 2);
    assert_eq!(types(&m[1]), ["tool-bash", "step-start", "text"]);
    assert_eq!(texts(&m[1], "text"), ["There is one file."]);
    // The idle state read after: the same rows, under the ids the client showed.
    let idle = state(
        11,
        "idle",
        None,
        json!([
            {"id": "08ec6d05", "role": "user", "status": "done", "turnId": "t1", "parts": [{"type": "text", "text": "list files"}]},
            {"id": "1f0a9c33", "role": "assistant", "status": "done", "turnId": "t1",
                "parts": [{"type": "tool-call", "id": "c1", "toolName": "bash", "input": {"command": "pwd"}, "state": "output-available",
                    "output": [{"type": "text", "text": "a.txt"}]}]},
            {"id": "5b2e7d10", "role": "assistant", "status": "done", "turnId": "t1", "parts": [{"type": "text", "text": "There is one file."}]}
        ]),
    );
    let shown = rows(&s);
    assert!(s.apply_state(parse_native_state(idle).unwrap(), false));
    let m = rows(&s);
    assert_eq!(ids(&s), ["pi:s1:event:1:user", "pi:s1:event:7:assistant"]);
    assert_eq!(texts(&m[0], "text"), ["list files"]);
    assert_eq!(m[1], shown[1]);
}

#[test]
fn rule6_a_state_read_of_a_running_answer_takes_its_final_and_drops_replayed_text() {
    // upstream piChatReducer.test.ts:561: the final after a reload replaces the text the
    // state showed streaming.
    let (s, _) = run(
        Some(state(
            3,
            "streaming",
            Some("t1"),
            json!([
                {"id": "a1", "role": "assistant", "status": "streaming", "turnId": "t1", "parts": [{"type": "text", "id": "live", "text": "Hello"}]}
            ]),
        )),
        &numbered(4, vec![end("a1", fin_text("a1", "Hello world"))]),
    );
    assert_eq!(texts(&rows(&s)[0], "text"), ["Hello world"]);
    // upstream :591: text an ended row holds already, replayed under another part id, is
    // not added again.
    let (s, _) = run(
        Some(state(
            10,
            "streaming",
            Some("t1"),
            json!([
                {"id": "a1", "role": "assistant", "status": "done", "turnId": "t1", "parts": [
                    {"type": "reasoning", "id": "r1", "text": "thoughts", "state": "done"},
                    {"type": "text", "id": "final-text", "text": "PI_NATIVE_ASSISTANT_DONE"}]}
            ]),
        )),
        &numbered(
            11,
            vec![
                delta("a1", "live-text", "text", "PI_NATIVE_ASSISTANT_DONE"),
                json!({"type": "message-part-end", "messageId": "a1", "partId": "live-text", "kind": "text", "text": "PI_NATIVE_ASSISTANT_DONE"}),
            ],
        ),
    );
    assert_eq!(texts(&rows(&s)[0], "text"), ["PI_NATIVE_ASSISTANT_DONE"]);
    // upstream :145 and :170: a state message keeps its order, one part per call.
    let (s, _) = run(
        Some(state(
            42,
            "idle",
            None,
            json!([
                {"id": "a1", "role": "assistant", "status": "done", "parts": [
                    {"type": "text", "id": "p1", "text": "done"},
                    {"type": "tool-call", "id": "c1", "toolName": "bash", "state": "input-available"},
                    {"type": "tool-call", "id": "c1", "toolName": "bash", "state": "output-available", "output": {"content": "ok"}},
                    {"type": "reasoning", "id": "r1", "text": "thinking", "state": "done"}]}
            ]),
        )),
        &[],
    );
    let m = &rows(&s)[0];
    assert_eq!(types(m), ["text", "tool-bash", "reasoning"]);
    assert_eq!(call(m, "c1")["state"], "output-available");
}

#[test]
fn rule6_an_error_with_nothing_running_is_the_sessions_state_not_a_message() {
    // upstream piChatReducer.test.ts:2156
    let (s, out) = run(
        None,
        &numbered(
            1,
            vec![
                json!({"type": "error", "turnId": "t1", "error": {"code": "INTERNAL_ERROR", "message": "boom", "retryable": false}}),
            ],
        ),
    );
    assert!(s.messages().is_empty());
    assert_eq!((s.status(), s.error()), (RunStatus::Failed, Some("boom")));
    assert!(out.contains(&NativeEffect::Error("INTERNAL_ERROR".into(), "boom".into())));
}

// ----- 7. UI hints -----------------------------------------------------------------------------

#[test]
fn rule7_a_calls_ui_hints_merge_with_its_results() {
    // upstream piChatReducer.test.ts:682
    let s = after(vec![
        assistant("a1"),
        json!({"type": "tool-call", "messageId": "a1", "toolCallId": "c1", "toolName": "bash", "input": {"command": "pwd"},
            "ui": {"rendererId": "shell-command", "displayGroup": "terminal", "icon": "terminal", "details": {"startedAt": 1}}}),
        json!({"type": "tool-result", "messageId": "a1", "toolCallId": "c1", "output": {"content": "ok"},
            "ui": {"rendererId": "other", "details": {"exitCode": 0}}}),
    ]);
    let want = json!({"rendererId": "shell-command", "displayGroup": "terminal", "icon": "terminal",
        "details": {"startedAt": 1, "exitCode": 0}});
    assert_eq!(call(&rows(&s)[0], "c1")["ui"], want);
    // The part a UI renders has them as its `ui`, over the result's `details`.
    let exported = shell_export_message(&s.messages()[0], &ToolUiUpdates::new(), &[]);
    assert_eq!(exported["parts"][0]["ui"], want);
    let s = after(vec![
        assistant("a1"),
        json!({"type": "tool-call", "messageId": "a1", "toolCallId": "c1", "toolName": "bash", "input": {},
            "ui": {"rendererId": "shell-command", "icon": "terminal"}}),
        json!({"type": "tool-result", "messageId": "a1", "toolCallId": "c1",
            "output": {"content": "ok", "details": {"uiKind": "other", "exitCode": 0}},
            "ui": {"displayGroup": "terminal"}}),
    ]);
    let exported = shell_export_message(&s.messages()[0], &ToolUiUpdates::new(), &[]);
    assert_eq!(
        exported["parts"][0]["ui"],
        json!({"rendererId": "shell-command", "displayGroup": "terminal", "icon": "terminal",
            "details": {"uiKind": "other", "exitCode": 0}})
    );
}

// ----- 8. one row per answer -------------------------------------------------------------------

#[test]
fn rule8_an_answers_split_messages_are_one_row_with_steps() {
    // upstream piChatReducer.test.ts:1191 (a final under another id, no start)
    let s = after(vec![
        agent_start("t1"),
        assistant("a-tool"),
        tool_call("a-tool", "c1"),
        tool_result("a-tool", "c1", json!({"content": "ok"})),
        end(
            "a-final",
            json!({"id": "a-final", "role": "assistant", "status": "done", "turnId": "t1", "parts": [{"type": "text", "id": "p1", "text": "done"}]}),
        ),
    ]);
    let m = rows(&s);
    assert_eq!(ids(&s), ["a-final"]);
    assert_eq!(types(&m[0]), ["tool-bash", "step-start", "text"]);
    assert_eq!(call(&m[0], "c1")["output"], "ok");
    // upstream :1208: a result for the first message after the fold.
    let s = after(vec![
        agent_start("t1"),
        assistant("a-tool"),
        tool_call("a-tool", "c1"),
        end(
            "a-final",
            json!({"id": "a-final", "role": "assistant", "status": "done", "turnId": "t1", "parts": [{"type": "text", "id": "p1", "text": "done"}]}),
        ),
        tool_result("a-tool", "c1", json!({"content": "ok"})),
    ]);
    let m = rows(&s);
    assert_eq!(ids(&s), ["a-final"]);
    assert_eq!(call(&m[0], "c1")["state"], "output-available");
    assert_eq!(status(&m[0]), "done");
}

#[test]
fn rule8_the_next_message_of_an_answer_streams_into_its_row() {
    // upstream piChatReducer.test.ts:1229, :1261, :1281, :1313
    for tool_row_ended in [false, true] {
        let mut events = vec![
            agent_start("t1"),
            json!({"type": "message-start", "messageId": "a-tool", "role": "assistant", "createdAt": "2026-06-06T10:00:00.000Z"}),
            tool_call("a-tool", "c1"),
            tool_result("a-tool", "c1", json!({"content": "ok"})),
        ];
        if tool_row_ended {
            events.push(end("a-tool", json!({"id": "a-tool", "role": "assistant", "status": "done", "turnId": "t1",
                "parts": [{"type": "tool-call", "id": "c1", "toolName": "bash", "state": "output-available", "output": {"content": "ok"}}]})));
        }
        events.push(json!({"type": "message-start", "messageId": "a-final", "role": "assistant", "createdAt": "2026-06-06T10:00:05.000Z"}));
        events.push(delta("a-final", "t-live", "text", "done"));
        let mut s = after(events);
        let m = rows(&s);
        assert_eq!(ids(&s), ["a-final"]);
        assert_eq!(types(&m[0]), ["tool-bash", "step-start", "text"]);
        assert_eq!(status(&m[0]), "streaming");
        assert_eq!(m[0]["metadata"]["turnId"], "t1");
        assert_eq!(m[0]["metadata"]["createdAt"], "2026-06-06T10:00:00.000Z");
        let c = call(&m[0], "c1");
        assert_eq!(
            (&c["input"], &c["output"]),
            (&json!({"command": "pwd"}), &json!("ok"))
        );
        then(
            &mut s,
            vec![
                end("a-final", fin_text("a-final", "done")),
                agent_end("t1", "ok"),
            ],
        );
        let m = rows(&s);
        assert_eq!(types(&m[0]), ["tool-bash", "step-start", "text"]);
        assert_eq!(texts(&m[0], "text"), ["done"]);
        assert_eq!(status(&m[0]), "done");
        assert!(settled(&m[0]));
    }
}

#[test]
fn rule8_a_step_keeps_its_text_from_the_next_steps_ids() {
    // upstream piChatReducer.test.ts:1378, :1429, :1445, :1462
    for (first, second_live) in [
        ("a-tool:text", Some("a-final:text")),
        ("p1", None),
        ("p1", Some("p1")),
        ("p1:preserved-folded", Some("p1:preserved-folded")),
    ] {
        let mut events = vec![
            agent_start("t1"),
            assistant("a-tool"),
            delta("a-tool", first, "text", "command"),
            assistant("a-final"),
        ];
        if let Some(id) = second_live {
            events.push(delta("a-final", id, "text", " completed"));
        }
        events.push(end(
            "a-final",
            fin("a-final", json!([{"type": "text", "id": second_live.unwrap_or("p1"), "text": "command completed"}])),
        ));
        let s = after(events);
        let m = rows(&s);
        assert_eq!(m.len(), 1);
        assert_eq!(
            texts(&m[0], "text"),
            ["command", "command completed"],
            "{first} {second_live:?}"
        );
    }
}

#[test]
fn rule8_answers_of_other_turns_or_after_a_user_message_are_rows_of_their_own() {
    // upstream piChatReducer.test.ts:1489: no turn evidence, no fold.
    let s = after(vec![
        assistant("a-old"),
        delta("a-old", "old-text", "text", "old partial"),
        agent_start("t-new"),
        assistant("a-new"),
        delta("a-new", "new-text", "text", "new partial"),
    ]);
    let m = rows(&s);
    assert_eq!(ids(&s), ["a-old", "a-new"]);
    assert_eq!(texts(&m[1], "text"), ["new partial"]);
    // selectors.test.ts:206, and the live server's consumed follow-up: one run, the queue,
    // the follow-up's user message without a nonce, its answer.
    let s = after(vec![
        agent_start("t-x"),
        json!({"type": "message-start", "messageId": "pi:s1:event:2:user", "role": "user", "text": "count to 3", "clientNonce": "n1"}),
        assistant("a1"),
        delta("a1", "0", "text", "1 2 3"),
        end("a1", fin_text("a1", "1 2 3")),
        json!({"type": "queue-updated", "queue": {"followUps": []}}),
        json!({"type": "message-start", "messageId": "pi:s1:event:7:user", "role": "user", "text": "say BANANA"}),
        assistant("a2"),
        delta("a2", "0", "text", "BANANA"),
        end("a2", fin_text("a2", "BANANA")),
        agent_end("t-x", "ok"),
    ]);
    let m = rows(&s);
    assert_eq!(
        ids(&s),
        ["pi:s1:event:2:user", "a1", "pi:s1:event:7:user", "a2"]
    );
    let shown: Vec<&str> = m
        .iter()
        .map(|m| m["parts"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(shown, ["count to 3", "1 2 3", "say BANANA", "BANANA"]);
    assert!(m.iter().all(settled));
}

#[test]
fn rule8_a_state_shows_an_answers_messages_as_one_row() {
    // upstream piChatReducer.test.ts:198
    let v = vector("piChatReducer.test.ts:198");
    let (s, _) = run(Some(json!({"state": v["events"][0]["snapshot"]})), &[]);
    let m = rows(&s);
    assert_eq!(ids(&s), ["a-final"]);
    assert_eq!(m[0]["metadata"]["createdAt"], "2026-06-06T10:00:00.000Z");
    assert_eq!(types(&m[0]), ["tool-bash", "step-start", "text"]);
    assert_eq!(status(&m[0]), "done");
    // upstream :234: the second message's part reuses the first's id; both texts stay.
    let (s, _) = run(
        Some(state(
            42,
            "idle",
            None,
            json!([
                {"id": "a-tool", "role": "assistant", "status": "streaming", "turnId": "t1", "parts": [{"type": "text", "id": "p1", "text": "command"}]},
                {"id": "a-final", "role": "assistant", "status": "done", "turnId": "t1", "parts": [{"type": "text", "id": "p1", "text": "command completed"}]}
            ]),
        )),
        &[],
    );
    assert_eq!(
        texts(&rows(&s)[0], "text"),
        ["command", "command completed"]
    );
    // upstream :267: an aborted first message keeps the answer aborted, its call too.
    let (s, _) = run(
        Some(state(
            42,
            "idle",
            None,
            json!([
                {"id": "a-tool", "role": "assistant", "status": "aborted", "turnId": "t1", "parts": [native_call("c1", "aborted")]},
                {"id": "a-final", "role": "assistant", "status": "done", "turnId": "t1",
                    "parts": [{"type": "tool-call", "id": "c1", "toolName": "bash", "state": "output-available", "output": {"content": "late success"}},
                        {"type": "text", "id": "p1", "text": "done"}]}
            ]),
        )),
        &[],
    );
    let m = rows(&s);
    assert_eq!(ids(&s), ["a-final"]);
    assert_eq!(status(&m[0]), "aborted");
    assert_eq!(calls(&m[0]), 1);
    assert_eq!(
        (
            call(&m[0], "c1")["state"].as_str(),
            call(&m[0], "c1")["errorText"].as_str()
        ),
        (Some("output-error"), Some("aborted"))
    );
    // upstream :304: different turns stay apart.
    let v = vector("piChatReducer.test.ts:304");
    let (s, _) = run(Some(json!({"state": v["events"][0]["snapshot"]})), &[]);
    assert_eq!(ids(&s), ["a1", "a2"]);
}

#[test]
fn rule8_a_state_streaming_the_answers_second_message_goes_on_in_its_step() {
    // A running answer's state: the tool message, then the text message still streaming
    // (its parts numbered by the stream as `0`, `1`): the events after the state extend the
    // text in the folded row.
    let (s, _) = run(
        Some(state(
            5,
            "streaming",
            Some("t1"),
            json!([
                {"id": "u1", "role": "user", "status": "done", "turnId": "t1", "parts": [{"type": "text", "text": "go"}]},
                {"id": "a-tool", "role": "assistant", "status": "done", "turnId": "t1", "parts": [{"type": "tool-call", "id": "c1", "toolName": "bash", "state": "output-available", "output": {"content": "ok"}}]},
                {"id": "a-final", "role": "assistant", "status": "streaming", "turnId": "t1", "parts": [{"type": "text", "id": "a-final:text:0", "text": "Hel"}]}
            ]),
        )),
        &numbered(
            6,
            vec![
                delta("a-final", "0", "text", "lo"),
                end(
                    "a-final",
                    json!({"id": "a-final", "role": "assistant", "status": "done", "turnId": "t1", "parts": [{"type": "text", "id": "a-final:text:0", "text": "Hello"}]}),
                ),
                agent_end("t1", "ok"),
            ],
        ),
    );
    let m = rows(&s);
    assert_eq!(ids(&s), ["u1", "a-final"]);
    assert_eq!(types(&m[1]), ["tool-bash", "step-start", "text"]);
    assert_eq!(texts(&m[1], "text"), ["Hello"]);
    assert_eq!(status(&m[1]), "done");
}

// ----- 9. what keeps working -------------------------------------------------------------------

#[test]
fn rule9_created_at_is_backfilled_and_kept_through_the_final() {
    // upstream piChatReducer.test.ts:1300
    let s = after(vec![
        agent_start("t1"),
        delta("a1", "p1", "text", "Hello"),
        json!({"type": "message-start", "messageId": "a1", "role": "assistant", "createdAt": "2026-06-06T10:00:00.000Z"}),
        end("a1", fin_text("a1", "Hello")),
    ]);
    let m = rows(&s);
    assert_eq!(m.len(), 1);
    assert_eq!(m[0]["metadata"]["createdAt"], "2026-06-06T10:00:00.000Z");
    assert_eq!(texts(&m[0], "text"), ["Hello"]);
}

#[test]
fn the_store_status_of_a_replay_follows_the_run() {
    let frames: Vec<String> = numbered(1, vec![agent_start("t1"), assistant("a1")])
        .iter()
        .map(wire)
        .collect();
    let r = replay_pi_native_events(frames.iter().map(|f| ChunkInput::Text(f)), None).unwrap();
    assert_eq!(r.status, Status::Streaming);
    assert_eq!(
        r.messages[0].metadata.as_deref().unwrap()["status"],
        "streaming"
    );
}
