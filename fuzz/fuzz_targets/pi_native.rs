//! The pi-native transport's line splitter, frame reader and session (SPEC §14) on generated
//! streams.
//!
//! Input drives a generator of NDJSON lines: events of every type (in their envelope or bare,
//! with seqs that go forward, repeat, skip ahead or disagree with their envelope), heartbeats,
//! blank lines, junk, `/state` documents between them; the body is then split at arbitrary
//! points. Invariants:
//! - never panics;
//! - the body split anywhere gives the same lines, and the same history, queue, status and
//!   cursor, as the body pushed whole;
//! - the cursor only moves by applied events, one at a time (a `/state` may set it anywhere);
//! - a stale or gapped event changes nothing;
//! - message ids stay unique.
#![no_main]

use agent_chat_store::{
    parse_native_line, parse_native_state, Frame, Gate, NativeSession, NdjsonDecoder,
};
use agent_chat_store_fuzz::{
    int, one_in, pick, string, SplitMix, MESSAGE_IDS, PART_IDS, ROLES, TOOL_CALL_IDS, TOOL_NAMES,
    TURN_IDS,
};
use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

const TYPES: &[&str] = &[
    "agent-start",
    "agent-end",
    "message-start",
    "message-delta",
    "message-part-end",
    "message-end",
    "tool-call",
    "tool-result",
    "queue-updated",
    "followup-consumed",
    "error",
    "usage",
    "file-changed",
    "future-event",
];

fn part(u: &mut Unstructured) -> Value {
    match int(u, 0, 4) {
        0 => json!({"type": "text", "id": pick(u, PART_IDS), "text": string(u)}),
        1 => {
            json!({"type": "reasoning", "id": pick(u, PART_IDS), "text": string(u), "state": "done"})
        }
        2 => {
            json!({"type": "tool-call", "id": pick(u, TOOL_CALL_IDS), "toolName": pick(u, TOOL_NAMES),
            "state": pick(u, &["input-available", "output-available", "output-error", "aborted", "bogus"]),
            "input": {"q": string(u)}, "output": {"content": [{"type": "text", "text": string(u)}]}, "errorText": string(u)})
        }
        3 => json!({"type": "file", "url": string(u), "mediaType": "image/png"}),
        _ => json!({"type": "notice", "level": "info", "text": string(u)}),
    }
}

fn message(u: &mut Unstructured) -> Value {
    let parts: Vec<Value> = (0..int(u, 0, 3)).map(|_| part(u)).collect();
    json!({"id": pick(u, MESSAGE_IDS), "role": pick(u, ROLES), "status": "done", "parts": parts})
}

fn event(u: &mut Unstructured, seq: u64) -> Value {
    let ty = pick(u, TYPES);
    let mid = pick(u, MESSAGE_IDS);
    let mut e = match ty {
        "agent-start" => json!({"turnId": pick(u, TURN_IDS)}),
        "agent-end" => {
            json!({"turnId": pick(u, TURN_IDS), "status": pick(u, &["ok", "aborted", "error", "?"]), "willRetry": one_in(u, 4)})
        }
        "message-start" => {
            json!({"messageId": mid, "role": pick(u, ROLES), "clientNonce": pick(u, &["n1", "n2"]), "clientSeq": int(u, 0, 3), "text": string(u)})
        }
        "message-delta" => {
            json!({"messageId": mid, "partId": pick(u, PART_IDS), "kind": pick(u, &["text", "reasoning", "x"]), "delta": string(u)})
        }
        "message-part-end" => {
            json!({"messageId": mid, "partId": pick(u, PART_IDS), "kind": pick(u, &["text", "reasoning"]), "text": string(u)})
        }
        "message-end" => json!({"messageId": mid, "final": message(u)}),
        "tool-call" => {
            json!({"messageId": mid, "toolCallId": pick(u, TOOL_CALL_IDS), "toolName": pick(u, TOOL_NAMES), "input": {"a": string(u)}})
        }
        "tool-result" => {
            json!({"messageId": mid, "toolCallId": pick(u, TOOL_CALL_IDS), "output": {"content": string(u), "details": {"k": 1}}, "isError": one_in(u, 3), "errorText": string(u)})
        }
        "queue-updated" => {
            let rows: Vec<Value> = (0..int(u, 0, 3))
                .map(|i| json!({"id": format!("q{i}"), "kind": "followup", "displayText": string(u), "clientNonce": pick(u, &["n1", "n2"]), "clientSeq": i}))
                .collect();
            json!({"queue": {"followUps": rows}})
        }
        "followup-consumed" => json!({"messageId": mid, "clientNonce": "n1", "clientSeq": 1}),
        "error" => {
            json!({"error": {"code": pick(u, &["ABORTED", "INTERNAL_ERROR"]), "message": string(u)}})
        }
        _ => json!({"whatever": string(u)}),
    };
    e["type"] = json!(ty);
    e["seq"] = json!(seq);
    e
}

fn generate(u: &mut Unstructured) -> Vec<u8> {
    let mut body = String::new();
    let mut seq = 0u64;
    for _ in 0..int(u, 1, 60) {
        let line = match int(u, 0, 19) {
            0 => r#"{"type":"heartbeat","now":"x"}"#.to_string(),
            1 => "   ".to_string(),
            2 => string(u),
            3 => {
                seq = int(u, 0, seq + 3);
                json!({"ref": {}, "seq": seq, "state": {"protocolVersion": 1, "seq": seq, "status": pick(u, &["idle", "streaming", "error"]),
                    "messages": (0..int(u, 0, 3)).map(|_| message(u)).collect::<Vec<_>>(), "queue": {"followUps": []}}})
                .to_string()
            }
            _ => {
                let s = match int(u, 0, 9) {
                    0 => seq.saturating_sub(int(u, 0, 2)),
                    1 => seq + 2,
                    _ => seq + 1,
                };
                seq = seq.max(s);
                let e = event(u, s);
                if one_in(u, 3) {
                    e.to_string()
                } else {
                    let outer = if one_in(u, 20) { s + 1 } else { s };
                    json!({"ref": {"agentTypeId": "pi", "sessionId": "s"}, "seq": outer, "event": e}).to_string()
                }
            }
        };
        body.push_str(&line);
        body.push_str(if one_in(u, 8) { "\r\n" } else { "\n" });
    }
    body.into_bytes()
}

#[derive(Debug, PartialEq)]
struct Outcome {
    lines: usize,
    messages: Value,
    queue: usize,
    status: String,
    seq: u64,
}

fn run(body: &[u8], split: Option<u64>) -> Outcome {
    let mut d = NdjsonDecoder::new(4096);
    let mut lines = Vec::new();
    match split {
        None => d.push(body, &mut lines),
        Some(seed) => {
            let mut rng = SplitMix(seed);
            let mut rest = body;
            while !rest.is_empty() {
                let n = ((rng.next_u64() % 9) as usize).min(rest.len());
                let (a, b) = rest.split_at(n);
                d.push(a, &mut lines);
                rest = b;
            }
        }
    }
    d.finish(&mut lines);
    let mut s = NativeSession::new();
    let mut effects = Vec::new();
    for line in lines.iter().flatten() {
        if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(line) {
            if o.contains_key("state") {
                if let Ok(doc) = parse_native_state(Value::Object(o)) {
                    // Both ways, by the input: an ordinary read, or one after a range error.
                    let (seq, rewind, before) = (doc.seq, doc.seq % 2 == 0, s.seq());
                    let taken = s.apply_state(doc, rewind);
                    assert_eq!(taken, rewind || seq >= before, "a stale state is ignored");
                    assert_eq!(s.seq(), if taken { seq } else { before });
                }
                continue;
            }
        }
        let Ok(frame) = parse_native_line(line) else {
            continue;
        };
        let before_seq = s.seq();
        let before = serde_json::to_value(s.messages()).unwrap();
        let is_event = matches!(frame, Frame::Event(_));
        match s.apply(frame, &mut effects) {
            Gate::Applied => {
                assert!(is_event);
                assert_eq!(s.seq(), before_seq + 1, "one event moves the cursor by one");
            }
            Gate::Stale | Gate::Gap { .. } | Gate::Heartbeat => {
                assert_eq!(s.seq(), before_seq);
                assert_eq!(
                    serde_json::to_value(s.messages()).unwrap(),
                    before,
                    "nothing changed"
                );
            }
        }
        let mut ids = std::collections::HashSet::new();
        for m in s.messages() {
            assert!(ids.insert(m.id.clone()), "message id {} twice", m.id);
        }
    }
    Outcome {
        lines: lines.len(),
        messages: serde_json::to_value(s.messages()).unwrap(),
        queue: s.queue().len(),
        status: format!("{:?}", s.status()),
        seq: s.seq(),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let seed = u.arbitrary::<u64>().unwrap_or(1);
    let body = generate(&mut u);
    let whole = run(&body, None);
    assert_eq!(run(&body, Some(seed)), whole, "split at other points");
});
