//! The pi-native transport's core (SPEC §14): the NDJSON line splitter, the frames, the seq
//! gate, the `/state` document, and the events reduced into the history a user sees. The
//! upstream client's conformance vectors (`tests/fixtures/pi-native/vectors-sample.json`) run
//! where this store means the same thing; each test names the vector's `source`, and where the
//! store deliberately differs the test says how.

#![cfg(all(feature = "pi", feature = "replay"))]

use crate::common;

use agent_chat_store::{
    classify_events_error, message_from_native, parse_native_frame, parse_native_line,
    parse_native_state, replay_pi_native_events, ChunkInput, EndStatus, EventKind, Frame,
    FrameError, Gate, LineError, NativeEffect, NativeSession, NdjsonDecoder, RangeError, RunStatus,
    Status,
};
use common::vectors::{frame, messages, session_after, vector, wire};
use serde_json::{json, Value};

// ----- lines and frames ------------------------------------------------------------------------

#[test]
fn ndjson_line_vector_pi_chat_stream_test_ts_71() {
    let v = vector("piChatStream.test.ts:71");
    let mut d = NdjsonDecoder::new(1 << 20);
    for case in v["cases"].as_array().unwrap() {
        let line = case["line"].as_str().unwrap();
        let mut out = Vec::new();
        d.push(line.as_bytes(), &mut out);
        d.push(b"\n", &mut out);
        match case["expect"]["type"].as_str() {
            // Blank lines are skipped by the splitter.
            Some("blank") => assert!(out.is_empty(), "{line:?}"),
            Some("frame") => {
                let f = parse_native_line(out[0].as_ref().unwrap()).unwrap();
                let Frame::Event(ev) = f else {
                    panic!("not an event")
                };
                assert_eq!(ev.seq, 1);
                assert_eq!(
                    ev.kind,
                    EventKind::MessageDelta {
                        message_id: "assistant-1".into(),
                        part_id: "text-1".into(),
                        kind: agent_chat_store::PartKind::Text,
                        delta: "hello".into(),
                    },
                    "unknown fields are dropped"
                );
            }
            // Upstream: a schema error (then a reconnect and a /state re-read). Here, by design
            // (reference §14.10): skipped, its seq still counted.
            _ => {
                let f = parse_native_line(out[0].as_ref().unwrap()).unwrap();
                assert_eq!(
                    f,
                    Frame::Event(agent_chat_store::NativeEvent {
                        seq: 1,
                        kind: EventKind::Unknown {
                            name: "new-future-event".into()
                        }
                    })
                );
            }
        }
    }
}

#[test]
fn the_envelope_and_the_bare_shape_read_alike_and_a_seq_mismatch_is_refused() {
    let ev = json!({"type": "agent-start", "seq": 7, "turnId": "t1"});
    assert_eq!(
        parse_native_line(&wire(&ev)).unwrap(),
        parse_native_frame(ev.clone()).unwrap()
    );
    let bad = json!({"ref": {}, "seq": 8, "event": ev}).to_string();
    assert!(matches!(
        parse_native_line(&bad),
        Err(FrameError::Schema(_))
    ));
    assert_eq!(
        parse_native_line(r#"{"type":"heartbeat","now":"2026-12-04T00:00:00Z"}"#).unwrap(),
        Frame::Heartbeat
    );
    assert!(matches!(
        parse_native_line("{nope"),
        Err(FrameError::Json(_))
    ));
    assert!(matches!(
        parse_native_line(r#"{"type":"message-delta","seq":2,"messageId":"m"}"#),
        Err(FrameError::Schema(_))
    ));
}

#[test]
fn a_stream_cut_at_every_byte_reduces_to_the_same_history() {
    let events = turn_events();
    let body: String = events.iter().map(|e| wire(e) + "\n").collect::<String>()
        + "{\"type\":\"heartbeat\",\"now\":\"x\"}\n";
    let whole = reduce_bytes(&[body.as_bytes()]);
    assert_eq!(whole["messages"][1]["parts"][0]["text"], "Héllo wörld 😀");
    let bytes = body.as_bytes();
    for cut in (0..bytes.len()).step_by(7) {
        assert_eq!(
            reduce_bytes(&[&bytes[..cut], &bytes[cut..]]),
            whole,
            "cut at {cut}"
        );
    }
}

fn reduce_bytes(chunks: &[&[u8]]) -> Value {
    let mut d = NdjsonDecoder::new(1 << 20);
    let mut lines = Vec::new();
    for c in chunks {
        d.push(c, &mut lines);
    }
    d.finish(&mut lines);
    let mut s = NativeSession::new();
    let mut out = Vec::new();
    for l in lines {
        s.apply(parse_native_line(&l.unwrap()).unwrap(), &mut out);
    }
    json!({"messages": messages(&s), "seq": s.seq()})
}

#[test]
fn a_line_past_the_limit_is_a_typed_error_and_the_next_line_is_read() {
    let mut d = NdjsonDecoder::new(128);
    let mut out = Vec::new();
    let long = wire(&json!({"type": "agent-start", "seq": 1, "turnId": "x".repeat(200)}));
    d.push(
        format!(
            "{long}\n{}\n",
            wire(&json!({"type": "agent-start", "seq": 1, "turnId": "t"}))
        )
        .as_bytes(),
        &mut out,
    );
    assert!(matches!(out[0], Err(LineError::TooLong { limit: 128, .. })));
    assert!(out[1].is_ok());
}

// ----- the seq gate ----------------------------------------------------------------------------

#[test]
fn sequencer_vector_pi_chat_stream_test_ts_133() {
    let v = vector("piChatStream.test.ts:133");
    let mut s = NativeSession::new();
    s.apply_state(
        parse_native_state(json!({"seq": 10, "state": {"protocolVersion": 1, "seq": 10, "status": "idle", "messages": [], "queue": {"followUps": []}}}))
            .unwrap(),
        false,
    );
    let mut out = Vec::new();
    let results: Vec<Gate> = v["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| s.apply(frame(f.clone()), &mut out))
        .collect();
    assert_eq!(
        results,
        vec![
            Gate::Stale,
            Gate::Applied,
            Gate::Gap {
                expected: 12,
                actual: 13
            }
        ]
    );
    assert_eq!(s.seq(), v["expect"]["lastSeq"].as_u64().unwrap());
    assert_eq!(
        s.apply(Frame::Heartbeat, &mut out),
        Gate::Heartbeat,
        "a heartbeat never moves the cursor"
    );
    assert_eq!(s.seq(), 11);
}

#[test]
fn replay_error_vector_pi_chat_stream_test_ts_167_and_the_gateway_codes() {
    let v = vector("piChatStream.test.ts:167");
    for case in v["cases"].as_array().unwrap() {
        let status = case["status"].as_u64().unwrap() as u16;
        let body = serde_json::to_vec(&case["body"]).unwrap();
        let expect = match case["expect"]["type"].as_str() {
            Some("replay_gap") => Some(RangeError::ReplayGap {
                latest_seq: case["expect"]["latestSeq"].as_u64().unwrap(),
            }),
            Some("cursor_ahead") => Some(RangeError::CursorAhead {
                latest_seq: case["expect"]["latestSeq"].as_u64().unwrap(),
            }),
            _ => None,
        };
        assert_eq!(classify_events_error(status, &body), expect, "{case}");
    }
    let gateway = |code: &str| {
        json!({"error": {"code": code, "message": "m", "details": {"latestSeq": 9, "minReplaySeq": 3}}})
            .to_string()
    };
    assert_eq!(
        classify_events_error(409, gateway("AGENT_SESSION_REPLAY_GAP").as_bytes()),
        Some(RangeError::ReplayGap { latest_seq: 9 })
    );
    assert_eq!(
        classify_events_error(409, gateway("AGENT_SESSION_CURSOR_AHEAD").as_bytes()),
        Some(RangeError::CursorAhead { latest_seq: 9 })
    );
    assert_eq!(
        classify_events_error(409, gateway("AGENT_REQUEST_CONFLICT").as_bytes()),
        None
    );
    assert_eq!(
        classify_events_error(503, gateway("AGENT_SESSION_REPLAY_GAP").as_bytes()),
        None
    );
}

#[test]
fn a_cursor_ahead_state_is_taken_though_its_seq_is_lower() {
    let (mut s, _) = session_after(&turn_events());
    assert!(s.seq() > 3);
    assert!(s.apply_state(
        parse_native_state(
            json!({"seq": 3, "state": {"protocolVersion": 1, "seq": 3, "status": "idle",
            "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
            "queue": {"followUps": []}}}),
        )
        .unwrap(),
        true,
    ));
    assert_eq!(s.seq(), 3);
    assert_eq!(s.messages().len(), 1);
    let mut out = Vec::new();
    assert_eq!(
        s.apply(
            frame(json!({"type": "agent-start", "seq": 4, "turnId": "t2"})),
            &mut out
        ),
        Gate::Applied
    );
    assert!(
        parse_native_state(json!({"seq": 1, "state": {"protocolVersion": 2, "seq": 1}})).is_err()
    );
}

// ----- the events, as a user sees them ---------------------------------------------------------

/// A whole turn: a prompt, reasoning and text streamed, a tool called and answered, the
/// assistant's final (whose tool part has no result, as pi's entry has none), a second
/// assistant message, the end.
fn turn_events() -> Vec<Value> {
    vec![
        json!({"type": "agent-start", "seq": 1, "turnId": "t1"}),
        json!({"type": "message-start", "seq": 2, "messageId": "u1", "role": "user", "clientNonce": "n1", "text": "hi"}),
        json!({"type": "message-end", "seq": 3, "messageId": "u1", "final": {"id": "u1", "role": "user", "status": "done", "clientNonce": "n1", "parts": [{"type": "text", "text": "hi"}]}}),
        json!({"type": "message-start", "seq": 4, "messageId": "a1", "role": "assistant"}),
        json!({"type": "message-delta", "seq": 5, "messageId": "a1", "partId": "0", "kind": "text", "delta": "Héllo "}),
        json!({"type": "message-delta", "seq": 6, "messageId": "a1", "partId": "0", "kind": "text", "delta": "wörld 😀"}),
        json!({"type": "message-part-end", "seq": 7, "messageId": "a1", "partId": "0", "kind": "text", "text": "Héllo wörld 😀"}),
        json!({"type": "tool-call", "seq": 8, "messageId": "a1", "toolCallId": "c1", "toolName": "ls", "input": {"path": "."}}),
        json!({"type": "message-end", "seq": 9, "messageId": "a1", "final": {"id": "a1", "role": "assistant", "status": "done", "turnId": "t1",
            "parts": [{"type": "text", "id": "a1:text:0", "text": "Héllo wörld 😀"}, {"type": "tool-call", "id": "c1", "toolName": "ls", "input": {"path": "."}, "state": "input-available"}]}}),
        json!({"type": "file-changed", "seq": 10, "path": "a.txt", "changeType": "write"}),
        json!({"type": "tool-result", "seq": 11, "messageId": "a1", "toolCallId": "c1", "output": {"content": [{"type": "text", "text": "a.txt"}], "details": {"entries": 1}}}),
        json!({"type": "message-start", "seq": 12, "messageId": "a2", "role": "assistant"}),
        json!({"type": "message-delta", "seq": 13, "messageId": "a2", "partId": "0", "kind": "text", "delta": "Done."}),
        json!({"type": "message-end", "seq": 14, "messageId": "a2", "final": {"id": "a2", "role": "assistant", "status": "done", "parts": [{"type": "text", "text": "Done."}]}}),
        json!({"type": "agent-end", "seq": 15, "turnId": "t1", "status": "ok"}),
    ]
}

#[test]
fn a_turn_reads_as_one_row_per_answer() {
    // pi writes the answer as two messages (a model call each); the user sees one answer
    // whose steps are in order, as upstream's client shows it (SPEC §14.1).
    let (s, out) = session_after(&turn_events());
    let m = messages(&s);
    assert_eq!(m.as_array().unwrap().len(), 2, "{m:#}");
    assert_eq!(m[0]["role"], "user");
    assert_eq!(m[0]["parts"][0]["text"], "hi");
    assert_eq!(m[1]["id"], "a2", "the answer has its newest message's id");
    assert_eq!(
        m[1]["parts"][0],
        json!({"type": "text", "text": "Héllo wörld 😀", "state": "done"})
    );
    let tool = &m[1]["parts"][1];
    assert_eq!(tool["type"], "tool-ls");
    assert_eq!(
        tool["state"], "output-available",
        "the final did not undo the result: {tool}"
    );
    assert_eq!(
        tool["output"], "a.txt",
        "the result's text, as a tool UI expects it"
    );
    assert_eq!(
        tool["resultContent"],
        json!([{"type": "text", "text": "a.txt"}]),
        "the result's content, as the model read it"
    );
    assert_eq!(m[1]["parts"][2], json!({"type": "step-start"}));
    assert_eq!(m[1]["parts"][3]["text"], "Done.");
    assert_eq!(m[1]["metadata"]["status"], "done");
    assert_eq!(s.status(), RunStatus::Idle);
    assert_eq!(s.seq(), 15);
    assert!(out.contains(&NativeEffect::UserMessage {
        message_id: "u1".into(),
        client_nonce: Some("n1".into()),
        client_seq: None,
        text: Some("hi".into()),
    }));
    assert!(out.contains(&NativeEffect::RunEnded(EndStatus::Ok)));
    assert!(out
        .iter()
        .any(|e| matches!(e, NativeEffect::Data(name, _) if name == "file-changed")));
}

#[test]
fn a_final_that_settles_a_tool_is_kept_with_the_live_input_pi_chat_reducer_test_ts_1908() {
    // Vector piChatReducer.test.ts:1908: the final brings the output the stream had not.
    let v = vector("piChatReducer.test.ts:1908");
    let events: Vec<Value> = v["events"].as_array().unwrap().clone();
    let (s, _) = session_after(&events);
    let m = messages(&s);
    let tool = m[0]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["type"] == "tool-bash")
        .unwrap()
        .clone();
    assert_eq!(tool["toolCallId"], "call-1");
    assert_eq!(tool["state"], "output-available");
    assert_eq!(tool["output"], "ok");
}

#[test]
fn final_text_replaces_the_streamed_text_pi_chat_reducer_test_ts_547() {
    let v = vector("piChatReducer.test.ts:547");
    let (s, _) = session_after(v["events"].as_array().unwrap());
    let m = messages(&s);
    let texts: Vec<&Value> = m[0]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["type"] == "text")
        .collect();
    assert_eq!(
        texts.len(),
        1,
        "the streamed copy is not kept beside the final: {m}"
    );
    assert_eq!(texts[0]["text"], "Hello world");
}

#[test]
fn state_snapshots_pi_chat_reducer_test_ts_304_keep_each_turns_message() {
    // Vector piChatReducer.test.ts:304: messages of different turns stay apart (its twin,
    // :198, which folds one turn's, is in tests/pi_native_vectors.rs).
    let v = vector("piChatReducer.test.ts:304");
    let r = replay_pi_native_events(
        Vec::<ChunkInput>::new(),
        Some(json!({"state": v["events"][0]["snapshot"]})),
    )
    .unwrap();
    let ids: Vec<&str> = r.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["a1", "a2"]);
    assert_eq!(r.seq, 42);
    assert_eq!(r.status, Status::Ready);
}

#[test]
fn message_from_native_keeps_the_part_order_pi_chat_part_merging_test_ts_14() {
    let v = vector("piChatPartMerging.test.ts:14");
    let m = message_from_native(json!({"id": "a", "role": "assistant", "parts": v["finalParts"]}))
        .unwrap();
    let j = serde_json::to_value(&m).unwrap();
    let order: Vec<String> = j["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            p["toolCallId"]
                .as_str()
                .map_or("m1".to_string(), str::to_string)
        })
        .collect();
    assert_eq!(order, ["t1", "m1", "t2", "t3"]);
}

#[test]
fn parts_map_onto_ui_message_parts() {
    let m = message_from_native(json!({"id": "a", "role": "assistant", "status": "aborted", "turnId": "t", "clientSeq": 2,
        "parts": [
            {"type": "reasoning", "id": "r", "text": "hmm", "state": "done"},
            {"type": "tool-call", "id": "c", "toolName": "bash", "input": {"c": 1}, "state": "aborted"},
            {"type": "tool-call", "id": "d", "toolName": "bash", "state": "output-error", "errorText": "boom"},
            {"type": "file", "filename": "x.png", "url": "/att/0"},
            {"type": "notice", "id": "n", "level": "warning", "text": "careful"},
            {"type": "unknown-part"}
        ]}))
    .unwrap();
    let j = serde_json::to_value(&m).unwrap();
    assert_eq!(
        j["metadata"],
        json!({"status": "aborted", "turnId": "t", "clientSeq": 2})
    );
    let p = &j["parts"];
    assert_eq!(
        p[0],
        json!({"type": "reasoning", "text": "hmm", "state": "done"})
    );
    assert_eq!(
        (p[1]["state"].as_str(), p[1]["errorText"].as_str()),
        (Some("output-error"), Some("aborted"))
    );
    assert_eq!(p[2]["errorText"], "boom");
    assert_eq!(
        p[3],
        json!({"type": "file", "mediaType": "application/octet-stream", "filename": "x.png", "url": "/att/0"})
    );
    assert_eq!(
        p[4],
        json!({"type": "data-notice", "id": "n", "data": {"level": "warning", "text": "careful"}})
    );
    assert_eq!(
        p.as_array().unwrap().len(),
        5,
        "an unknown part is left out"
    );
}

#[test]
fn the_queue_is_the_servers_and_a_consumed_follow_up_is_told() {
    let (s, out) = session_after(&[
        json!({"type": "agent-start", "seq": 1, "turnId": "t1"}),
        json!({"type": "queue-updated", "seq": 2, "queue": {"followUps": [
            {"id": "q0", "kind": "followup", "displayText": "same", "clientNonce": "f1", "clientSeq": 1},
            {"id": "q1", "kind": "followup", "displayText": "same"}]}}),
        json!({"type": "queue-updated", "seq": 3, "queue": {"followUps": [{"id": "q0", "kind": "followup", "displayText": "same"}]}}),
        json!({"type": "message-start", "seq": 4, "messageId": "u2", "role": "user", "clientNonce": "f1", "clientSeq": 1, "text": "same"}),
    ]);
    assert_eq!(s.queue().len(), 1);
    assert_eq!(
        s.queue()[0].client_nonce,
        None,
        "the whole queue, as the server says it"
    );
    assert!(out.contains(&NativeEffect::UserMessage {
        message_id: "u2".into(),
        client_nonce: Some("f1".into()),
        client_seq: Some(1),
        text: Some("same".into()),
    }));
    assert_eq!(s.messages()[0].text(), "same");
}

#[test]
fn will_retry_keeps_the_run_open_and_an_error_fails_it() {
    let (s, _) = session_after(&[
        json!({"type": "agent-start", "seq": 1, "turnId": "t1"}),
        json!({"type": "agent-end", "seq": 2, "turnId": "t1", "status": "error", "willRetry": true}),
        json!({"type": "auto-retry-start", "seq": 3, "attempt": 1, "maxAttempts": 3, "delayMs": 10, "errorMessage": "x"}),
    ]);
    assert_eq!(s.status(), RunStatus::Running, "a retried run is not over");
    let (s, out) = session_after(&[
        json!({"type": "agent-start", "seq": 1, "turnId": "t1"}),
        json!({"type": "error", "seq": 2, "turnId": "t1", "error": {"code": "INTERNAL_ERROR", "message": "provider down"}}),
        json!({"type": "agent-end", "seq": 3, "turnId": "t1", "status": "error"}),
    ]);
    assert_eq!(s.status(), RunStatus::Failed);
    assert_eq!(s.error(), Some("provider down"));
    assert!(out.contains(&NativeEffect::Error(
        "INTERNAL_ERROR".into(),
        "provider down".into()
    )));
}

#[test]
fn aborted_after_a_stop_is_a_plain_stop() {
    let mut s = NativeSession::new();
    let mut out = Vec::new();
    s.apply(
        frame(json!({"type": "agent-start", "seq": 1, "turnId": "t1"})),
        &mut out,
    );
    s.stopping();
    s.apply(
        frame(
            json!({"type": "error", "seq": 2, "error": {"code": "ABORTED", "message": "Aborted"}}),
        ),
        &mut out,
    );
    s.apply(
        frame(json!({"type": "agent-end", "seq": 3, "turnId": "t1", "status": "aborted"})),
        &mut out,
    );
    assert_eq!(s.status(), RunStatus::Idle);
    assert_eq!(s.error(), None);
}

#[test]
fn replay_reports_gaps_and_bad_lines_and_goes_on() {
    let mut frames: Vec<String> = turn_events().iter().map(wire).collect();
    frames.insert(3, "{not json".into());
    frames.remove(5); // seq 5 never comes: 6 is a gap, and so is everything after it
    let r = replay_pi_native_events(frames.iter().map(|f| ChunkInput::Text(f)), None).unwrap();
    assert_eq!(r.seq, 4);
    assert!(
        r.diagnostics.iter().any(|d| d.contains("not JSON")),
        "{:?}",
        r.diagnostics
    );
    assert!(r
        .diagnostics
        .iter()
        .any(|d| d.contains("seq gap: expected 5, got 6")));
    assert_eq!(r.status, Status::Streaming);
}

#[test]
fn the_wire_keeps_ui_hints_error_turns_and_final_part_ids() {
    let read = |e: Value| match parse_native_frame(e).unwrap() {
        Frame::Event(ev) => ev.kind,
        Frame::Heartbeat => panic!("an event"),
    };
    let ui = json!({"rendererId": "shell-command", "icon": "terminal"});
    let EventKind::ToolCall { ui: call_ui, .. } = read(json!({"type": "tool-call", "seq": 1,
        "messageId": "a1", "toolCallId": "c1", "toolName": "bash", "input": {}, "ui": ui}))
    else {
        panic!("a tool call")
    };
    assert_eq!(call_ui, Some(ui.clone()));
    let EventKind::ToolResult { ui: result_ui, .. } = read(json!({"type": "tool-result", "seq": 2,
        "messageId": "a1", "toolCallId": "c1", "output": {"content": "ok"}, "ui": {"displayGroup": "terminal"}}))
    else {
        panic!("a tool result")
    };
    assert_eq!(result_ui, Some(json!({"displayGroup": "terminal"})));
    let EventKind::Error { turn_id, .. } = read(json!({"type": "error", "seq": 3, "turnId": "t1",
        "error": {"code": "INTERNAL_ERROR", "message": "boom"}}))
    else {
        panic!("an error")
    };
    assert_eq!(turn_id.as_deref(), Some("t1"));
    // A final's parts keep their ids beside them (a tool's is its call id); one listing a
    // text id twice shows the fuller text once, at its first place.
    let EventKind::MessageEnd {
        final_message: Some(m),
        part_ids,
        ..
    } = read(
        json!({"type": "message-end", "seq": 4, "messageId": "a1", "final": {"id": "a1",
        "role": "assistant", "parts": [
            {"type": "text", "id": "a1:text:0", "text": "Hel"},
            {"type": "tool-call", "id": "c1", "toolName": "bash", "state": "input-available", "ui": ui},
            {"type": "text", "id": "a1:text:0", "text": "Hello"}]}}),
    )
    else {
        panic!("a final")
    };
    assert_eq!(
        part_ids,
        [Some("a1:text:0".to_string()), Some("c1".to_string())]
    );
    let j = serde_json::to_value(&m).unwrap();
    assert_eq!(j["parts"][0]["text"], "Hello");
    assert_eq!(j["parts"][1]["ui"], ui);
    assert_eq!(j["parts"].as_array().unwrap().len(), 2);
}
