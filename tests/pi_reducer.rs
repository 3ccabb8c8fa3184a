//! The pi reducer's rules (SPEC §7), each checked where a user would see it: the `messages`
//! the UI renders (as JSON, the shape JS receives), their parts and states, and the effects
//! the store acts on (follow-up reconciliation, the turn id, data for the host, diagnostics).
//!
//! Chunks are written as the server sends them (`{"type":"data-pi-…","data":{…}}`) and go
//! through `parse_chunk`, so every test also exercises the wire format.

#![cfg(all(feature = "pi", feature = "replay"))]

use std::path::PathBuf;

use agent_chat_store::History;
use agent_chat_store::{parse_chunk, Chunk, ChunkError};
use agent_chat_store::{replay_pi_stream, sse_data, ChunkInput};
use agent_chat_store::{Part, Role, UIMessage};
use agent_chat_store::{PiEffect, PiReducer};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------------
// Chunk builders: the server's wire format, one helper per event shape.

fn chunk(ty: &str, data: Value) -> String {
    json!({ "type": ty, "data": data }).to_string()
}

fn pi(name: &str, data: Value) -> String {
    chunk(&format!("data-pi-{name}"), data)
}

fn user_start(seq: u64, id: &str, text: &str) -> String {
    pi(
        "message-start",
        json!({"seq": seq, "messageId": id, "role": "user", "text": text}),
    )
}

fn follow_up_start(seq: u64, id: &str, text: &str, nonce: &str) -> String {
    pi(
        "message-start",
        json!({"seq": seq, "messageId": id, "role": "user", "text": text, "clientNonce": nonce}),
    )
}

fn assistant_start(seq: u64, id: &str) -> String {
    pi(
        "message-start",
        json!({"seq": seq, "messageId": id, "role": "assistant"}),
    )
}

fn message_end(seq: u64, id: &str, role: &str) -> String {
    pi(
        "message-end",
        json!({"seq": seq, "messageId": id, "role": role}),
    )
}

fn message_end_text(seq: u64, id: &str, role: &str, text: &str) -> String {
    pi(
        "message-end",
        json!({"seq": seq, "messageId": id, "role": role, "text": text}),
    )
}

/// `kind` is `text` or `reasoning`.
fn part_start(kind: &str, seq: u64, mid: &str, pid: &str) -> String {
    pi(
        &format!("{kind}-start"),
        json!({"seq": seq, "messageId": mid, "partId": pid}),
    )
}

fn part_delta(kind: &str, seq: u64, mid: &str, pid: &str, delta: &str) -> String {
    pi(
        &format!("{kind}-delta"),
        json!({"seq": seq, "messageId": mid, "partId": pid, "delta": delta}),
    )
}

fn part_end(kind: &str, seq: u64, mid: &str, pid: &str, text: Option<&str>) -> String {
    let mut data = json!({"seq": seq, "messageId": mid, "partId": pid});
    if let Some(t) = text {
        data["text"] = json!(t);
    }
    pi(&format!("{kind}-end"), data)
}

fn tool_start(seq: u64, mid: &str, call: &str, name: &str) -> String {
    pi(
        "tool-call-start",
        json!({"seq": seq, "messageId": mid, "toolCallId": call, "toolName": name}),
    )
}

fn tool_delta(seq: u64, mid: &str, call: &str, delta: &str) -> String {
    pi(
        "tool-call-delta",
        json!({"seq": seq, "messageId": mid, "toolCallId": call, "delta": delta}),
    )
}

fn tool_end(seq: u64, mid: &str, call: &str, input: Value) -> String {
    pi(
        "tool-call-end",
        json!({"seq": seq, "messageId": mid, "toolCallId": call, "input": input}),
    )
}

fn tool_result(seq: u64, mid: &str, call: &str, output: Value) -> String {
    pi(
        "tool-result",
        json!({"seq": seq, "messageId": mid, "toolCallId": call, "output": output}),
    )
}

fn legacy_delta(seq: u64, mid: &str, delta: &str) -> String {
    pi(
        "message-delta",
        json!({"seq": seq, "messageId": mid, "role": "assistant", "delta": delta}),
    )
}

fn turn_start(turn_id: &str) -> String {
    chunk("data-turn-start", json!({ "turnId": turn_id }))
}

/// A pi text content list, as pi tools answer.
fn content(text: &str) -> Value {
    json!([{ "type": "text", "text": text }])
}

// ---------------------------------------------------------------------------------------------
// The rig: one history and one reducer, as a session of the store holds them.

#[derive(Default)]
struct Rig {
    h: History,
    pi: PiReducer,
    effects: Vec<PiEffect>,
}

impl Rig {
    fn new() -> Self {
        Rig::default()
    }

    /// Feeds one wire chunk; returns whether history changed.
    fn feed(&mut self, wire: &str) -> bool {
        match parse_chunk(wire) {
            Ok(Chunk::Pi(ev)) => self.pi.apply(&mut self.h, ev, &mut self.effects),
            other => panic!("not a pi chunk: {wire} → {other:?}"),
        }
    }

    fn feed_all<S: AsRef<str>>(&mut self, chunks: &[S]) {
        for c in chunks {
            self.feed(c.as_ref());
        }
    }

    /// The history as JS receives it.
    fn json(&self) -> Value {
        serde_json::to_value(self.h.messages()).unwrap()
    }

    fn message(&self, id: &str) -> Value {
        serde_json::to_value(self.h.get(id).unwrap_or_else(|| panic!("no message {id}"))).unwrap()
    }

    fn ids(&self) -> Vec<&str> {
        self.h.messages().iter().map(|m| m.id.as_str()).collect()
    }

    fn take_effects(&mut self) -> Vec<PiEffect> {
        std::mem::take(&mut self.effects)
    }

    fn diagnostics(&self) -> Vec<&str> {
        self.effects
            .iter()
            .filter_map(|e| match e {
                PiEffect::Diagnostic(d) => Some(d.as_str()),
                _ => None,
            })
            .collect()
    }

    fn user_messages(&self) -> Vec<(String, Option<String>)> {
        self.effects
            .iter()
            .filter_map(|e| match e {
                PiEffect::UserMessage {
                    message_id,
                    client_nonce,
                } => Some((message_id.clone(), client_nonce.clone())),
                _ => None,
            })
            .collect()
    }
}

/// A complete exchange: the user's prompt and a one-part assistant answer, seq `from..from+7`.
fn exchange(from: u64, user: &str, assistant: &str, answer: &str) -> Vec<String> {
    let s = from;
    vec![
        user_start(s, user, "question"),
        message_end(s + 1, user, "user"),
        assistant_start(s + 2, assistant),
        part_start("text", s + 3, assistant, "0"),
        part_delta("text", s + 4, assistant, "0", answer),
        part_end("text", s + 5, assistant, "0", None),
        message_end(s + 6, assistant, "assistant"),
    ]
}

// ---------------------------------------------------------------------------------------------
// Messages and parts.

#[test]
fn a_prompt_and_its_answer_become_a_user_and_an_assistant_message() {
    let mut r = Rig::new();
    r.feed_all(&[
        user_start(1, "u1", "hi there"),
        message_end(2, "u1", "user"),
        assistant_start(3, "a1"),
        part_start("text", 4, "a1", "0"),
        part_delta("text", 5, "a1", "0", "Hello"),
        part_delta("text", 6, "a1", "0", ", world"),
    ]);
    assert_eq!(
        r.message("a1"),
        json!({"id":"a1","role":"assistant","parts":[
            {"type":"text","text":"Hello, world","state":"streaming"}
        ]})
    );
    r.feed_all(&[
        part_end("text", 7, "a1", "0", None),
        message_end(8, "a1", "assistant"),
    ]);
    assert_eq!(
        r.json(),
        json!([
            {"id":"u1","role":"user","parts":[{"type":"text","text":"hi there"}]},
            {"id":"a1","role":"assistant","parts":[
                {"type":"text","text":"Hello, world","state":"done"}
            ]}
        ])
    );
    assert_eq!(
        r.take_effects(),
        vec![PiEffect::UserMessage {
            message_id: "u1".into(),
            client_nonce: None
        }]
    );
}

#[test]
fn reasoning_then_text_are_two_parts_in_order_streaming_then_done() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        part_start("reasoning", 2, "a1", "0"),
        part_delta("reasoning", 3, "a1", "0", "Let me think"),
    ]);
    assert_eq!(
        r.message("a1")["parts"],
        json!([{"type":"reasoning","text":"Let me think","state":"streaming"}])
    );
    r.feed_all(&[
        part_end("reasoning", 4, "a1", "0", None),
        // The text part reuses partId 0: reasoning and text are keyed apart.
        part_start("text", 5, "a1", "0"),
        part_delta("text", 6, "a1", "0", "The answer"),
    ]);
    assert_eq!(
        r.message("a1")["parts"],
        json!([
            {"type":"reasoning","text":"Let me think","state":"done"},
            {"type":"text","text":"The answer","state":"streaming"}
        ])
    );
    r.feed_all(&[
        part_end("text", 7, "a1", "0", None),
        message_end(8, "a1", "assistant"),
    ]);
    assert_eq!(
        r.message("a1")["parts"],
        json!([
            {"type":"reasoning","text":"Let me think","state":"done"},
            {"type":"text","text":"The answer","state":"done"}
        ])
    );
    assert!(r.diagnostics().is_empty());
}

#[test]
fn text_tool_text_keep_their_order_within_the_message() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        part_start("text", 2, "a1", "0"),
        part_delta("text", 3, "a1", "0", "Looking."),
        part_end("text", 4, "a1", "0", None),
        tool_start(5, "a1", "c1", "ls"),
        tool_end(6, "a1", "c1", json!({"path": "."})),
        tool_result(7, "tr1", "c1", content("a.txt")),
        part_start("text", 8, "a1", "1"),
        part_delta("text", 9, "a1", "1", "Found a.txt."),
        part_end("text", 10, "a1", "1", None),
        message_end(11, "a1", "assistant"),
    ]);
    let parts = &r.message("a1")["parts"];
    let kinds: Vec<&str> = parts
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["text", "tool-ls", "text"]);
    assert_eq!(parts[0]["text"], "Looking.");
    assert_eq!(parts[2]["text"], "Found a.txt.");
    assert_eq!(r.ids(), ["a1"], "the tool result is no bubble of its own");
}

// ---------------------------------------------------------------------------------------------
// Tools.

#[test]
fn a_tool_call_streams_its_input_and_its_result_lands_in_the_same_message() {
    let mut r = Rig::new();
    r.feed_all(&[
        user_start(1, "u1", "read a.txt"),
        message_end(2, "u1", "user"),
        assistant_start(3, "a1"),
        tool_start(4, "a1", "call-1", "read"),
        tool_delta(5, "a1", "call-1", r#"{"path":"#),
    ]);
    assert_eq!(
        r.message("a1")["parts"],
        json!([{"type":"tool-read","toolName":"read","toolCallId":"call-1",
                "state":"input-streaming"}]),
        "an incomplete input is not shown"
    );
    r.feed(&tool_delta(6, "a1", "call-1", r#""a.txt"}"#));
    assert_eq!(
        r.message("a1")["parts"][0]["input"],
        json!({"path":"a.txt"}),
        "the input shows once it is whole"
    );
    assert_eq!(r.message("a1")["parts"][0]["state"], "input-streaming");
    r.feed(&tool_end(7, "a1", "call-1", json!({"path":"a.txt"})));
    assert_eq!(r.message("a1")["parts"][0]["state"], "input-available");
    r.feed_all(&[
        message_end(8, "a1", "assistant"),
        // pi names its tool-result message; the result belongs to a1's tool part.
        pi(
            "tool-result",
            json!({"seq": 9, "messageId": "toolresult-1", "toolCallId": "call-1",
                   "output": content("line 1\nline 2"),
                   "details": {"lines": 2, "truncated": false, "path": "a.txt"}}),
        ),
    ]);
    assert_eq!(
        r.json(),
        json!([
            {"id":"u1","role":"user","parts":[{"type":"text","text":"read a.txt"}]},
            {"id":"a1","role":"assistant","parts":[{
                "type":"tool-read","toolName":"read","toolCallId":"call-1",
                "state":"output-available",
                "input":{"path":"a.txt"},
                "output":"line 1\nline 2",
                "details":{"lines":2,"truncated":false,"path":"a.txt"},
                "resultContent":[{"type":"text","text":"line 1\nline 2"}]
            }]}
        ])
    );
    assert!(r.diagnostics().is_empty(), "{:?}", r.diagnostics());
}

#[test]
fn a_tool_input_can_come_only_from_its_deltas() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        tool_start(2, "a1", "c1", "grep"),
        tool_delta(3, "a1", "c1", r#"{"pattern":"#),
        tool_delta(4, "a1", "c1", r#""fn main"}"#),
        pi(
            "tool-call-end",
            json!({"seq": 5, "messageId": "a1", "toolCallId": "c1"}),
        ),
    ]);
    let tool = &r.message("a1")["parts"][0];
    assert_eq!(tool["state"], "input-available");
    assert_eq!(tool["input"], json!({"pattern":"fn main"}));
}

#[test]
fn a_tool_call_delta_without_a_delta_adds_nothing_to_the_input() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        tool_start(2, "a1", "c1", "grep"),
        pi(
            "tool-call-delta",
            json!({"seq": 3, "messageId": "a1", "toolCallId": "c1"}),
        ),
        tool_delta(4, "a1", "c1", r#"{"pattern":"x"}"#),
        pi(
            "tool-call-end",
            json!({"seq": 5, "messageId": "a1", "toolCallId": "c1"}),
        ),
    ]);
    let tool = &r.message("a1")["parts"][0];
    assert_eq!(tool["input"], json!({"pattern":"x"}), "{tool}");
    assert_eq!(tool["state"], "input-available");
}

#[test]
fn a_failed_tool_becomes_output_error_with_its_text() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        tool_start(2, "a1", "c1", "read"),
        tool_end(3, "a1", "c1", json!({"path":"missing.txt"})),
        pi(
            "tool-result",
            json!({"seq": 4, "messageId": "tr1", "toolCallId": "c1", "isError": true,
                   "output": content("ENOENT: missing.txt"), "details": {"code": "ENOENT"}}),
        ),
        tool_start(5, "a1", "c2", "bash"),
        tool_end(6, "a1", "c2", json!({"cmd":"false"})),
        pi(
            "tool-result",
            json!({"seq": 7, "messageId": "tr2", "toolCallId": "c2", "isError": true,
                   "output": "exit code 1"}),
        ),
        // A whole pi tool result as the output.
        tool_start(8, "a1", "c3", "edit"),
        tool_end(9, "a1", "c3", json!({})),
        pi(
            "tool-result",
            json!({"seq": 10, "messageId": "tr3", "toolCallId": "c3", "isError": true,
                   "output": {"content": content("no match"), "details": {"hunks": 0}}}),
        ),
    ]);
    assert_eq!(
        r.message("a1")["parts"][2]["errorText"],
        "no match",
        "{}",
        r.message("a1")["parts"][2]
    );
    assert_eq!(
        r.message("a1")["parts"].as_array().unwrap()[..2],
        [
            json!({"type":"tool-read","toolName":"read","toolCallId":"c1",
                   "state":"output-error","input":{"path":"missing.txt"},
                   "errorText":"ENOENT: missing.txt","details":{"code":"ENOENT"}}),
            json!({"type":"tool-bash","toolName":"bash","toolCallId":"c2",
                   "state":"output-error","input":{"cmd":"false"},"errorText":"exit code 1"})
        ]
    );
}

/// pi writes a message per model call; a tool round trip is one answer (SPEC §14 "rows are
/// messages of a turn"): one row, under its first message's id, a step per message.
#[test]
fn a_tool_call_id_reused_by_a_later_message_gets_its_own_result() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        tool_start(2, "a1", "call_0", "ls"),
        tool_end(3, "a1", "call_0", json!({"path":"src"})),
        message_end(4, "a1", "assistant"),
        tool_result(5, "tr1", "call_0", content("lib.rs")),
        // Providers number calls per response: the next message says call_0 again.
        assistant_start(6, "a2"),
        tool_start(7, "a2", "call_0", "ls"),
        tool_end(8, "a2", "call_0", json!({"path":"tests"})),
        message_end(9, "a2", "assistant"),
        tool_result(10, "tr2", "call_0", content("pi_reducer.rs")),
    ]);
    assert_eq!(r.ids(), ["a1"], "one answer, one row");
    let parts = r.message("a1")["parts"].as_array().unwrap().clone();
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[1], json!({"type": "step-start"}));
    let (a1, a2) = (&parts[..1], &parts[2..]);
    assert_eq!(a1[0]["input"], json!({"path":"src"}));
    assert_eq!(a1[0]["output"], "lib.rs");
    assert_eq!(a1[0]["resultContent"], content("lib.rs"));
    assert_eq!(a2[0]["input"], json!({"path":"tests"}));
    assert_eq!(a2[0]["output"], "pi_reducer.rs");

    // A result naming its owning message goes there even when a later message reuses the id.
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        tool_start(2, "a1", "call_0", "ls"),
        assistant_start(3, "a2"),
        tool_start(4, "a2", "call_0", "ls"),
        tool_result(5, "a1", "call_0", content("first")),
        tool_result(6, "a2", "call_0", content("second")),
    ]);
    assert_eq!(r.ids(), ["a1"]);
    assert_eq!(r.message("a1")["parts"][0]["output"], "first");
    assert_eq!(r.message("a1")["parts"][2]["output"], "second");
}

#[test]
fn a_result_naming_the_tool_result_message_attaches_to_the_owning_tool_part() {
    let mut r = Rig::new();
    r.feed_all(&[
        user_start(1, "u1", "list"),
        message_end(2, "u1", "user"),
        assistant_start(3, "a1"),
        tool_start(4, "a1", "c1", "ls"),
        tool_end(5, "a1", "c1", json!({})),
        message_end(6, "a1", "assistant"),
        tool_result(7, "toolResult-99", "c1", content("a b c")),
        assistant_start(8, "a2"),
        part_start("text", 9, "a2", "0"),
        part_delta("text", 10, "a2", "0", "Three files."),
        part_end("text", 11, "a2", "0", None),
        message_end(12, "a2", "assistant"),
    ]);
    assert_eq!(
        r.ids(),
        ["u1", "a1"],
        "no bubble for the tool result, one for the answer"
    );
    assert_eq!(r.message("a1")["parts"][0]["state"], "output-available");
    assert_eq!(r.message("a1")["parts"][0]["output"], "a b c");
    assert_eq!(
        r.message("a1")["parts"].as_array().unwrap()[1..].to_vec(),
        [
            json!({"type":"step-start"}),
            json!({"type":"text","text":"Three files.","state":"done"})
        ]
    );
    assert!(r.diagnostics().is_empty(), "{:?}", r.diagnostics());
}

#[test]
fn a_result_for_an_unknown_tool_call_is_kept_in_the_named_message_and_reported() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        part_start("text", 2, "a1", "0"),
        part_delta("text", 3, "a1", "0", "Running."),
        pi(
            "tool-result",
            json!({"seq": 4, "messageId": "a1", "toolCallId": "ghost", "toolName": "bash",
                   "output": content("done"), "details": {"exitCode": 0}}),
        ),
    ]);
    assert_eq!(r.ids(), ["a1"]);
    assert_eq!(
        r.message("a1")["parts"][1],
        json!({"type":"tool-bash","toolName":"bash","toolCallId":"ghost",
               "state":"output-available","output":"done",
               "details":{"exitCode":0},"resultContent":[{"type":"text","text":"done"}]})
    );
    let d = r.diagnostics();
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0].contains("ghost"), "{d:?}");
}

#[test]
fn a_repeated_tool_call_end_after_the_result_keeps_the_result() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        tool_start(2, "a1", "c1", "ls"),
        tool_end(3, "a1", "c1", json!({"path":"."})),
        tool_result(4, "tr1", "c1", content("x")),
    ]);
    let before = r.json();
    // The same end again, as a newer event (servers seen in the wild do this).
    r.feed(&tool_end(5, "a1", "c1", json!({"path":"."})));
    assert_eq!(r.json(), before);
    assert_eq!(r.message("a1")["parts"][0]["state"], "output-available");
    // And without a seq.
    r.feed(&pi(
        "tool-call-end",
        json!({"messageId": "a1", "toolCallId": "c1", "input": {"path":"."}}),
    ));
    assert_eq!(r.json(), before);
}

// ---------------------------------------------------------------------------------------------
// Follow-ups and the turn's own user message.

#[test]
fn three_follow_ups_are_reconciled_by_nonce_in_fifo_order() {
    let mut r = Rig::new();
    r.feed_all(&exchange(1, "u0", "a0", "First answer."));
    r.take_effects();
    // Two queued items with the same text: the nonce tells them apart, never the text.
    r.feed_all(&[
        follow_up_start(8, "u1", "again", "nonce-1"),
        message_end(9, "u1", "user"),
        assistant_start(10, "a1"),
        part_start("text", 11, "a1", "0"),
        part_delta("text", 12, "a1", "0", "Reply 1."),
        part_end("text", 13, "a1", "0", None),
        message_end(14, "a1", "assistant"),
        follow_up_start(15, "u2", "again", "nonce-2"),
        message_end(16, "u2", "user"),
        assistant_start(17, "a2"),
        part_start("text", 18, "a2", "0"),
        part_delta("text", 19, "a2", "0", "Reply 2."),
        part_end("text", 20, "a2", "0", None),
        message_end(21, "a2", "assistant"),
        follow_up_start(22, "u3", "something else", "nonce-3"),
        message_end(23, "u3", "user"),
        assistant_start(24, "a3"),
        part_start("text", 25, "a3", "0"),
        part_delta("text", 26, "a3", "0", "Reply 3."),
        part_end("text", 27, "a3", "0", None),
        message_end(28, "a3", "assistant"),
    ]);
    assert_eq!(
        r.user_messages(),
        vec![
            ("u1".to_string(), Some("nonce-1".to_string())),
            ("u2".to_string(), Some("nonce-2".to_string())),
            ("u3".to_string(), Some("nonce-3".to_string())),
        ]
    );
    assert_eq!(r.ids(), ["u0", "a0", "u1", "a1", "u2", "a2", "u3", "a3"]);
    let texts: Vec<String> = r.h.messages().iter().map(UIMessage::text).collect();
    assert_eq!(
        texts,
        [
            "question",
            "First answer.",
            "again",
            "Reply 1.",
            "again",
            "Reply 2.",
            "something else",
            "Reply 3."
        ]
    );
}

#[test]
fn follow_up_consumed_without_a_nonce_is_reported_without_one() {
    let mut r = Rig::new();
    r.feed_all(&exchange(1, "u0", "a0", "Answer."));
    let before = r.json();
    r.take_effects();
    let changed = r.feed(&chunk(
        "data-followup-consumed",
        json!({"text": "[B] follow-up question"}),
    ));
    assert!(!changed);
    assert_eq!(r.json(), before, "the consumption itself is no message");
    assert_eq!(
        r.take_effects(),
        vec![PiEffect::FollowUpConsumed {
            client_nonce: None,
            client_seq: None
        }]
    );
    // A newer server names the item.
    r.feed(&chunk(
        "data-followup-consumed",
        json!({"clientNonce": "n-7", "clientSeq": 7, "messageId": "u9"}),
    ));
    assert_eq!(
        r.take_effects(),
        vec![PiEffect::FollowUpConsumed {
            client_nonce: Some("n-7".into()),
            client_seq: Some(7)
        }]
    );
}

/// The store's optimistic user message for the turn it POSTed.
fn with_optimistic_user(r: &mut Rig, id: &str, text: &str) {
    let mut m = UIMessage::user_text(id, text);
    m.parts.insert(
        0,
        Part::File {
            media_type: "image/png".into(),
            filename: Some("a.png".into()),
            url: "https://example.invalid/a.png".into(),
            provider_reference: None,
            provider_metadata: None,
        },
    );
    r.h.push(m);
    r.pi.new_turn();
    r.pi.set_pending_user(Some(id.to_string()));
}

#[test]
fn the_turns_own_user_message_adopts_the_server_id_without_a_duplicate() {
    let mut r = Rig::new();
    with_optimistic_user(&mut r, "local-1", "hello");
    r.feed_all(&[
        user_start(1, "srv-u1", "hello"),
        message_end(2, "srv-u1", "user"),
        assistant_start(3, "srv-a1"),
    ]);
    assert_eq!(r.ids(), ["srv-u1", "srv-a1"]);
    assert_eq!(
        r.message("srv-u1"),
        json!({"id":"srv-u1","role":"user","parts":[
            {"type":"file","mediaType":"image/png","filename":"a.png",
             "url":"https://example.invalid/a.png"},
            {"type":"text","text":"hello"}
        ]}),
        "the files the user attached stay"
    );
    assert_eq!(
        r.user_messages(),
        vec![("srv-u1".to_string(), None)],
        "the store learns the server's id"
    );
}

#[test]
fn a_follow_up_with_a_nonce_does_not_take_the_pending_user_message() {
    let mut r = Rig::new();
    with_optimistic_user(&mut r, "local-1", "hello");
    // A follow-up of an earlier turn commits before this turn's own message.
    r.feed_all(&[
        follow_up_start(1, "srv-f1", "queued one", "nonce-1"),
        message_end(2, "srv-f1", "user"),
    ]);
    assert_eq!(r.ids(), ["local-1", "srv-f1"]);
    assert_eq!(r.message("local-1")["parts"][1]["text"], "hello");
    assert_eq!(r.message("srv-f1")["parts"][0]["text"], "queued one");
    // The turn's own message still adopts the optimistic one.
    r.feed(&user_start(3, "srv-u1", "hello"));
    let mut ids = r.ids();
    ids.sort();
    assert_eq!(ids, ["srv-f1", "srv-u1"]);
    assert_eq!(
        r.user_messages(),
        vec![
            ("srv-f1".to_string(), Some("nonce-1".to_string())),
            ("srv-u1".to_string(), None)
        ]
    );
}

#[test]
fn only_the_first_user_message_of_the_turn_adopts_the_pending_one() {
    let mut r = Rig::new();
    with_optimistic_user(&mut r, "local-1", "hello");
    r.feed_all(&[
        user_start(1, "srv-u1", "hello"),
        message_end(2, "srv-u1", "user"),
        // A legacy follow-up without nonce later in the same turn is a message of its own.
        user_start(3, "srv-u2", "more"),
        message_end(4, "srv-u2", "user"),
    ]);
    assert_eq!(r.ids(), ["srv-u1", "srv-u2"]);
    assert_eq!(
        r.message("srv-u2")["parts"],
        json!([{"type":"text","text":"more"}])
    );
}

// ---------------------------------------------------------------------------------------------
// Duplicates, replays and the seq watermark.

fn rich_turn() -> Vec<String> {
    vec![
        turn_start("t1"),
        user_start(1, "u1", "do it"),
        message_end(2, "u1-end", "user"),
        assistant_start(3, "a1"),
        part_start("reasoning", 4, "a1", "0"),
        part_delta("reasoning", 5, "a1", "0", "plan"),
        part_end("reasoning", 6, "a1", "0", Some("plan.")),
        part_start("text", 7, "a1", "0"),
        part_delta("text", 8, "a1", "0", "On "),
        legacy_delta(8, "a1", "On "),
        part_delta("text", 9, "a1", "0", "it."),
        legacy_delta(9, "a1", "it."),
        part_end("text", 10, "a1", "0", Some("On it.")),
        tool_start(11, "a1", "c1", "bash"),
        tool_delta(12, "a1", "c1", r#"{"cmd":"ls"}"#),
        tool_end(13, "a1", "c1", json!({"cmd":"ls"})),
        message_end_text(14, "a1", "assistant", "On it."),
        tool_result(15, "tr1", "c1", content("a")),
        tool_end(16, "a1", "c1", json!({"cmd":"ls"})),
        assistant_start(17, "a2"),
        part_start("text", 18, "a2", "0"),
        part_delta("text", 19, "a2", "0", "Done."),
        part_end("text", 20, "a2", "0", None),
        message_end(21, "a2", "assistant"),
    ]
}

#[test]
fn a_replayed_stream_changes_nothing() {
    let mut r = Rig::new();
    r.feed_all(&rich_turn());
    let once = r.json();
    assert_eq!(r.ids(), ["u1", "a1"]);
    // A resumed stream that replays what was applied (no new turn): every seq is old.
    for c in rich_turn().iter().skip(1) {
        assert!(!r.feed(c), "{c} changed the history");
    }
    assert_eq!(r.json(), once);
}

#[test]
fn a_replayed_turn_start_of_the_same_turn_keeps_the_watermark() {
    let mut r = Rig::new();
    r.feed_all(&rich_turn());
    let once = r.json();
    // A resume from the buffer's beginning repeats the turn's own start first.
    r.feed_all(&rich_turn());
    assert_eq!(r.json(), once);
}

#[test]
fn duplicate_starts_and_ends_without_seq_change_nothing() {
    let no_seq = |c: String| {
        let mut v: Value = serde_json::from_str(&c).unwrap();
        v["data"].as_object_mut().unwrap().remove("seq");
        v.to_string()
    };
    let mut r = Rig::new();
    let chunks: Vec<String> = vec![
        user_start(0, "u1", "q"),
        message_end(0, "u1", "user"),
        assistant_start(0, "a1"),
        part_start("text", 0, "a1", "0"),
        part_delta("text", 0, "a1", "0", "Hi"),
        part_end("text", 0, "a1", "0", Some("Hi!")),
        tool_start(0, "a1", "c1", "ls"),
        tool_end(0, "a1", "c1", json!({})),
        message_end_text(0, "a1", "assistant", "Hi!"),
    ]
    .into_iter()
    .map(no_seq)
    .collect();
    r.feed_all(&chunks);
    let once = r.json();
    let effects = r.take_effects();
    for c in &chunks {
        if c.contains("delta") {
            continue; // without a seq a delta cannot be told from a new one
        }
        r.feed(c);
        assert_eq!(r.json(), once, "after {c}");
    }
    assert_eq!(r.ids(), ["u1", "a1"]);
    assert!(
        r.user_messages().is_empty(),
        "a duplicate start is no new user message: {:?}",
        r.take_effects()
    );
    assert_eq!(effects.len(), 1);
}

#[test]
fn duplicate_ends_keep_the_message_identity() {
    // SPEC §9: a message that did not change keeps its identity, so React can skip it. The
    // version is what the shell keys that on.
    let mut r = Rig::new();
    r.feed_all(&[
        user_start(1, "u1", "q"),
        message_end(2, "u1-end", "user"),
        assistant_start(3, "a1"),
        part_start("text", 4, "a1", "0"),
        part_delta("text", 5, "a1", "0", "Hi"),
        part_end("text", 6, "a1", "0", Some("Hi!")),
        tool_start(7, "a1", "c1", "ls"),
        tool_end(8, "a1", "c1", json!({"path": "."})),
        tool_result(9, "tr1", "c1", content("a")),
        message_end(10, "a1", "assistant"),
    ]);
    let versions = |r: &Rig| (0..r.h.len()).map(|i| r.h.version(i)).collect::<Vec<_>>();
    let (json, before) = (r.json(), versions(&r));
    let again = [
        // Newer seqs, same facts: servers seen in the wild repeat ends.
        tool_end(11, "a1", "c1", json!({"path": "."})),
        part_end("text", 12, "a1", "0", Some("Hi!")),
        part_start("text", 13, "a1", "0"),
        tool_start(14, "a1", "c1", "ls"),
        message_end(15, "a1", "assistant"),
        message_end_text(16, "u1-end", "user", "q"),
        user_start(17, "u1", "q"),
        assistant_start(18, "a1"),
    ];
    for c in &again {
        assert!(!r.feed(c), "{c} counted as a change");
        assert_eq!(versions(&r), before, "after {c}");
    }
    assert_eq!(r.json(), json);
}

#[test]
fn an_older_seq_within_the_turn_is_skipped() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        part_start("text", 2, "a1", "0"),
        part_delta("text", 5, "a1", "0", "new"),
    ]);
    assert!(!r.feed(&part_delta("text", 4, "a1", "0", "old")));
    assert!(!r.feed(&part_delta("text", 5, "a1", "0", "new")));
    assert_eq!(r.h.get("a1").unwrap().text(), "new");
    assert_eq!(r.pi.watermark(), Some(5));
}

#[test]
fn seq_restarts_with_a_new_turn() {
    // After the store's chat POST (new_turn).
    let mut r = Rig::new();
    r.feed_all(&exchange(1, "u1", "a1", "One."));
    r.pi.end_of_stream(&mut r.h);
    assert!(
        !r.feed(&user_start(1, "u2", "q2")),
        "same turn: seq 1 is old"
    );
    r.pi.new_turn();
    r.feed_all(&exchange(1, "u2", "a2", "Two."));
    assert_eq!(r.ids(), ["u1", "a1", "u2", "a2"]);
    assert_eq!(r.h.get("a2").unwrap().text(), "Two.");

    // After a `data-turn-start` chunk of another turn.
    let mut r = Rig::new();
    r.feed(&turn_start("t1"));
    r.feed_all(&exchange(1, "u1", "a1", "One."));
    r.feed(&turn_start("t2"));
    r.feed_all(&exchange(1, "u2", "a2", "Two."));
    assert_eq!(r.ids(), ["u1", "a1", "u2", "a2"]);
    assert_eq!(r.h.get("a2").unwrap().text(), "Two.");
}

/// The legacy server's stream route replays the whole last turn (200, not 204) after a stop:
/// a send right after the stop that meets the stopped turn winding down (409
/// `turn_already_active`) attaches to it, and the replay of that turn comes after the new
/// chat POST restarted the seq. What of that turn was applied is not applied again (its
/// text showed twice in the stopped answer, live).
#[test]
fn a_replay_of_a_turn_left_behind_applies_nothing_twice() {
    let mut r = Rig::new();
    r.feed(&turn_start("t1"));
    r.feed_all(&[
        user_start(1, "u1", "long"),
        assistant_start(2, "a1"),
        part_start("text", 3, "a1", "0"),
        part_delta("text", 4, "a1", "0", "w0 w1"),
    ]);
    r.pi.end_of_stream(&mut r.h);
    r.pi.new_turn();
    r.feed(&turn_start("t1"));
    r.feed_all(&[
        user_start(1, "u1", "long"),
        assistant_start(2, "a1"),
        part_start("text", 3, "a1", "0"),
        part_delta("text", 4, "a1", "0", "w0 w1"),
        part_delta("text", 5, "a1", "0", " w2"),
    ]);
    assert_eq!(r.ids(), ["u1", "a1"]);
    assert_eq!(
        r.h.get("a1").unwrap().text(),
        "w0 w1 w2",
        "only what came after"
    );
    // Another turn after it starts afresh.
    r.pi.new_turn();
    r.feed(&turn_start("t2"));
    r.feed_all(&exchange(1, "u2", "a2", "Two."));
    assert_eq!(r.h.get("a2").unwrap().text(), "Two.");
}

// ---------------------------------------------------------------------------------------------
// Authoritative ends.

#[test]
fn a_part_end_text_replaces_what_the_deltas_built() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        part_start("text", 2, "a1", "0"),
        part_delta("text", 3, "a1", "0", "Helo "),
        part_delta("text", 4, "a1", "0", "wrld"),
        part_end("text", 5, "a1", "0", Some("Hello world")),
        part_start("reasoning", 6, "a1", "r"),
        part_delta("reasoning", 7, "a1", "r", "hmm"),
        part_end("reasoning", 8, "a1", "r", Some("hmm, yes")),
        part_start("text", 9, "a1", "1"),
        part_delta("text", 10, "a1", "1", "kept"),
        part_end("text", 11, "a1", "1", None),
    ]);
    assert_eq!(
        r.message("a1")["parts"],
        json!([
            {"type":"text","text":"Hello world","state":"done"},
            {"type":"reasoning","text":"hmm, yes","state":"done"},
            {"type":"text","text":"kept","state":"done"}
        ])
    );
}

#[test]
fn a_message_end_text_settles_a_message_whose_deltas_were_lost() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        part_start("text", 2, "a1", "0"),
        part_delta("text", 3, "a1", "0", "Partial"),
        message_end_text(5, "a1", "assistant", "Partial and the rest."),
    ]);
    assert_eq!(
        r.message("a1")["parts"],
        json!([{"type":"text","text":"Partial and the rest.","state":"done"}])
    );
    // No delta at all: the end's text is the message.
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        message_end_text(2, "a1", "assistant", "All at once."),
    ]);
    assert_eq!(
        r.message("a1")["parts"],
        json!([{"type":"text","text":"All at once.","state":"done"}])
    );
}

#[test]
fn a_final_snapshot_replaces_the_parts() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        part_start("text", 2, "a1", "0"),
        part_delta("text", 3, "a1", "0", "Drafty tex"),
        tool_start(4, "a1", "c1", "ls"),
        tool_delta(5, "a1", "c1", r#"{"pa"#),
    ]);
    let fin = json!({"id": "a1-final", "role": "assistant", "parts": [
        {"type":"reasoning","text":"thought","state":"done"},
        {"type":"text","text":"Final text.","state":"done"},
        {"type":"dynamic-tool","toolName":"ls","toolCallId":"c1","state":"input-available",
         "input":{"path":"."}}
    ]});
    r.feed(&pi(
        "message-end",
        json!({"seq": 6, "messageId": "a1", "role": "assistant", "final": fin}),
    ));
    assert_eq!(r.ids(), ["a1"]);
    assert_eq!(r.message("a1")["parts"], fin["parts"]);
    // The tool result after the end still finds its part; the final's id names a1 too.
    r.feed(&tool_result(7, "a1-final", "c1", content(".")));
    assert_eq!(r.ids(), ["a1"]);
    assert_eq!(r.message("a1")["parts"][2]["state"], "output-available");
    assert_eq!(r.message("a1")["parts"][2]["output"], ".");
    assert!(r.diagnostics().is_empty(), "{:?}", r.diagnostics());
}

#[test]
fn a_user_message_end_under_another_id_is_the_same_message() {
    let mut r = Rig::new();
    r.feed_all(&[
        user_start(1, "user-1796021518002", "[A] hello"),
        message_end_text(2, "user-1796021518003", "user", "[A] hello"),
    ]);
    assert_eq!(
        r.json(),
        json!([{"id":"user-1796021518002","role":"user","parts":[
            {"type":"text","text":"[A] hello"}
        ]}])
    );
    // The same end again, and once more without a seq.
    r.feed(&message_end_text(
        3,
        "user-1796021518003",
        "user",
        "[A] hello",
    ));
    r.feed(&pi(
        "message-end",
        json!({"messageId": "user-1796021518003", "role": "user", "text": "[A] hello"}),
    ));
    assert_eq!(r.ids(), ["user-1796021518002"]);
    assert!(r.diagnostics().is_empty(), "{:?}", r.diagnostics());
}

#[test]
fn end_of_stream_settles_what_was_still_streaming() {
    let mut r = Rig::new();
    r.feed_all(&[
        user_start(1, "u1", "go"),
        assistant_start(2, "a1"),
        part_start("reasoning", 3, "a1", "0"),
        part_delta("reasoning", 4, "a1", "0", "thinking"),
        part_start("text", 5, "a1", "0"),
        part_delta("text", 6, "a1", "0", "Answer S: one "),
    ]);
    // A stopped turn: no `-end`, no message-end.
    r.pi.end_of_stream(&mut r.h);
    assert_eq!(
        r.json(),
        json!([
            {"id":"u1","role":"user","parts":[{"type":"text","text":"go"}]},
            {"id":"a1","role":"assistant","parts":[
                {"type":"reasoning","text":"thinking","state":"done"},
                {"type":"text","text":"Answer S: one ","state":"done"}
            ]}
        ])
    );
}

// ---------------------------------------------------------------------------------------------
// The legacy delta and the alternative envelope.

#[test]
fn a_legacy_message_delta_after_its_part_delta_adds_nothing() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        part_start("text", 2, "a1", "0"),
        part_delta("text", 3, "a1", "0", "Answer "),
        legacy_delta(3, "a1", "Answer "),
        part_delta("text", 4, "a1", "0", "A."),
        legacy_delta(4, "a1", "A."),
    ]);
    assert_eq!(
        r.message("a1")["parts"],
        json!([{"type":"text","text":"Answer A.","state":"streaming"}])
    );
}

#[test]
fn a_legacy_message_delta_before_its_part_delta_adds_nothing() {
    // After the part started.
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        part_start("text", 2, "a1", "0"),
        legacy_delta(3, "a1", "Answer "),
        part_delta("text", 3, "a1", "0", "Answer "),
        legacy_delta(4, "a1", "A."),
        part_delta("text", 4, "a1", "0", "A."),
    ]);
    assert_eq!(
        r.message("a1")["parts"],
        json!([{"type":"text","text":"Answer A.","state":"streaming"}])
    );
    // Before any part event of the message: the part events take over the text.
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        legacy_delta(2, "a1", "Answer "),
        part_delta("text", 2, "a1", "0", "Answer "),
        legacy_delta(3, "a1", "A."),
        part_delta("text", 3, "a1", "0", "A."),
        part_end("text", 4, "a1", "0", None),
        message_end_text(5, "a1", "assistant", "Answer A."),
    ]);
    assert_eq!(
        r.message("a1")["parts"],
        json!([{"type":"text","text":"Answer A.","state":"done"}])
    );
}

#[test]
fn legacy_message_deltas_alone_build_the_text() {
    let mut r = Rig::new();
    r.feed_all(&[
        user_start(1, "u1", "hi"),
        assistant_start(2, "a1"),
        legacy_delta(3, "a1", "Hello "),
        legacy_delta(4, "a1", "there."),
    ]);
    assert_eq!(
        r.message("a1")["parts"],
        json!([{"type":"text","text":"Hello there.","state":"streaming"}])
    );
    r.feed(&message_end_text(5, "a1", "assistant", "Hello there."));
    assert_eq!(
        r.message("a1")["parts"],
        json!([{"type":"text","text":"Hello there.","state":"done"}])
    );
    // Replayed legacy deltas (a resumed stream) are old news too.
    let once = r.json();
    r.feed(&legacy_delta(3, "a1", "Hello "));
    r.feed(&legacy_delta(4, "a1", "there."));
    assert_eq!(r.json(), once);
}

#[test]
fn a_repeated_legacy_message_delta_is_applied_once() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        legacy_delta(2, "a1", "Hello "),
        legacy_delta(2, "a1", "Hello "),
        legacy_delta(3, "a1", "there."),
        legacy_delta(3, "a1", "there."),
    ]);
    assert_eq!(r.h.get("a1").unwrap().text(), "Hello there.");
}

#[test]
fn legacy_text_around_a_tool_call_keeps_both_sides_in_order() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        legacy_delta(2, "a1", "Let me look."),
        tool_start(3, "a1", "c1", "ls"),
        tool_end(4, "a1", "c1", json!({})),
        tool_result(5, "tr1", "c1", content("a")),
        legacy_delta(6, "a1", "Found a."),
        message_end(7, "a1", "assistant"),
    ]);
    let parts = r.message("a1")["parts"].clone();
    assert_eq!(
        parts[0],
        json!({"type":"text","text":"Let me look.","state":"done"})
    );
    assert_eq!(parts[1]["type"], "tool-ls");
    assert_eq!(parts[1]["state"], "output-available");
    assert_eq!(
        parts[2],
        json!({"type":"text","text":"Found a.","state":"done"})
    );
    assert_eq!(parts.as_array().unwrap().len(), 3);
}

#[test]
fn the_message_update_envelope_is_accepted() {
    let update = |data: Value| chunk("data-pi-message-update", data);
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        update(json!({"type":"pi-text-start","seq":2,"messageId":"a1","partId":"0"})),
        update(json!({"type":"pi-text-delta","seq":3,"messageId":"a1","partId":"0","delta":"Hi"})),
        update(json!({"type":"pi-text-delta","seq":3,"messageId":"a1","partId":"0","delta":"Hi"})),
        update(json!({"type":"pi-text-end","seq":4,"messageId":"a1","partId":"0"})),
        update(
            json!({"type":"pi-tool-call-start","seq":5,"messageId":"a1","toolCallId":"c1",
                      "toolName":"ls"}),
        ),
        update(
            json!({"type":"pi-tool-call-end","seq":6,"messageId":"a1","toolCallId":"c1",
                      "input":{}}),
        ),
        update(
            json!({"type":"pi-tool-result","seq":7,"messageId":"tr","toolCallId":"c1",
                      "output":"ok"}),
        ),
    ]);
    assert_eq!(
        r.message("a1")["parts"],
        json!([
            {"type":"text","text":"Hi","state":"done"},
            {"type":"tool-ls","toolName":"ls","toolCallId":"c1","state":"output-available",
             "input":{},"output":"ok"}
        ])
    );
}

// ---------------------------------------------------------------------------------------------
// Not history, bad input, odd servers.

#[test]
fn an_unknown_pi_chunk_is_data_for_the_host_not_history() {
    let mut r = Rig::new();
    r.feed_all(&exchange(1, "u1", "a1", "Hi."));
    let before = r.json();
    r.take_effects();
    let changed = r.feed(&pi(
        "usage",
        json!({"seq": 99, "messageId": "a1", "tokens": 12}),
    ));
    assert!(!changed);
    assert_eq!(r.json(), before);
    assert_eq!(
        r.take_effects(),
        vec![PiEffect::Data {
            name: "pi-usage".into(),
            data: json!({"seq": 99, "messageId": "a1", "tokens": 12})
        }]
    );
    // It does not move the watermark either: the stream's next real event still applies.
    r.feed(&assistant_start(9, "a2"));
    assert_eq!(r.ids(), ["u1", "a1"], "a2 is a step of a1's answer");
    assert_eq!(r.message("a1")["parts"].as_array().unwrap().len(), 2);
}

#[test]
fn the_mode_chunk_is_not_the_reducers() {
    // The store enters pi mode on it before any reducer runs; the projection changes nothing.
    let mut r = Rig::new();
    assert!(!r.feed(&pi("mode", json!({"enabled": true}))));
    assert_eq!(r.take_effects(), vec![]);
    assert!(r.h.is_empty());
}

#[test]
fn malformed_pi_chunks_are_typed_errors() {
    let missing = |wire: &str, field: &str| match parse_chunk(wire) {
        Err(ChunkError::Missing { field: f, .. }) => assert_eq!(f, field, "{wire}"),
        other => panic!("{wire} → {other:?}"),
    };
    missing(
        &pi("text-delta", json!({"seq": 1, "partId": "0", "delta": "x"})),
        "messageId",
    );
    missing(
        &pi("message-start", json!({"seq": 1, "role": "user"})),
        "messageId",
    );
    missing(
        &pi(
            "message-start",
            json!({"seq": 1, "messageId": "m", "role": "robot"}),
        ),
        "role",
    );
    missing(
        &pi(
            "tool-result",
            json!({"seq": 1, "messageId": "m", "output": 1}),
        ),
        "toolCallId",
    );
    missing(r#"{"type":"data-pi-text-start","data":"nope"}"#, "data");
    missing(
        &chunk(
            "data-pi-message-update",
            json!({"seq": 1, "messageId": "m"}),
        ),
        "type",
    );
    assert!(matches!(
        parse_chunk(r#"{"type":"data-pi-text-delta","data":{"#),
        Err(ChunkError::Json(_))
    ));
}

#[test]
fn replay_reports_malformed_chunks_and_keeps_going() {
    let chunks = [
        user_start(1, "u1", "hi"),
        assistant_start(2, "a1"),
        part_start("text", 3, "a1", "0"),
        part_delta("text", 4, "a1", "0", "Hello"),
        pi(
            "text-delta",
            json!({"seq": 5, "partId": "0", "delta": " LOST"}),
        ),
        "{not json".to_string(),
        part_delta("text", 6, "a1", "0", " again"),
        part_end("text", 7, "a1", "0", None),
    ];
    let out = replay_pi_stream(chunks.iter().map(|c| ChunkInput::Text(c)));
    assert_eq!(
        serde_json::to_value(&out.messages).unwrap(),
        json!([
            {"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]},
            {"id":"a1","role":"assistant","parts":[
                {"type":"text","text":"Hello again","state":"done"}
            ]}
        ])
    );
    assert_eq!(out.diagnostics.len(), 2, "{:?}", out.diagnostics);
    assert!(
        out.diagnostics[0].contains("messageId"),
        "{:?}",
        out.diagnostics
    );
}

#[test]
fn replay_ignores_standard_text_chunks_in_pi_mode() {
    let chunks: Vec<String> = vec![
        pi("mode", json!({"enabled": true})),
        turn_start("t1"),
        user_start(1, "u1", "hi"),
        message_end(2, "u1", "user"),
        assistant_start(3, "a1"),
        json!({"type":"start","messageId":"sdk-1"}).to_string(),
        part_start("text", 4, "a1", "0"),
        json!({"type":"text-start","id":"0"}).to_string(),
        part_delta("text", 5, "a1", "0", "Hello"),
        json!({"type":"text-delta","id":"0","delta":"Hello"}).to_string(),
        json!({"type":"reasoning-start","id":"r"}).to_string(),
        json!({"type":"reasoning-delta","id":"r","delta":"sdk thought"}).to_string(),
        json!({"type":"tool-input-start","toolCallId":"sdk-c","toolName":"ls"}).to_string(),
        // A second `start` mid-stream.
        json!({"type":"start","messageId":"sdk-2"}).to_string(),
        part_delta("text", 6, "a1", "0", " there"),
        json!({"type":"text-delta","id":"0","delta":" there"}).to_string(),
        part_end("text", 7, "a1", "0", None),
        json!({"type":"text-end","id":"0"}).to_string(),
        json!({"type":"data-status","data":{"busy":true}}).to_string(),
        message_end(8, "a1", "assistant"),
        json!({"type":"finish"}).to_string(),
    ];
    let out = replay_pi_stream(chunks.iter().map(|c| ChunkInput::Text(c)));
    assert_eq!(
        serde_json::to_value(&out.messages).unwrap(),
        json!([
            {"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]},
            {"id":"a1","role":"assistant","parts":[
                {"type":"text","text":"Hello there","state":"done"}
            ]}
        ])
    );
    assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
}

#[test]
fn events_for_an_unknown_message_create_it_and_are_reported() {
    let mut r = Rig::new();
    r.feed_all(&[
        user_start(1, "u1", "hi"),
        // A resumed stream that missed the assistant's start.
        part_delta("text", 5, "a-lost", "0", "Recovered"),
        tool_start(6, "a-lost2", "c1", "ls"),
    ]);
    assert_eq!(r.ids(), ["u1", "a-lost", "a-lost2"]);
    assert_eq!(
        r.message("a-lost"),
        json!({"id":"a-lost","role":"assistant","parts":[
            {"type":"text","text":"Recovered","state":"streaming"}
        ]})
    );
    assert_eq!(r.message("a-lost2")["parts"][0]["toolCallId"], "c1");
    let d = r.diagnostics();
    assert_eq!(d.len(), 2, "{d:?}");
    assert!(d[0].contains("a-lost"));
    r.pi.end_of_stream(&mut r.h);
    assert_eq!(
        r.message("a-lost")["parts"][0]["state"],
        "done",
        "settled at the end of the stream"
    );

    // A message end for a message nobody started (and none of its role open) keeps its
    // text, and says so.
    let mut r = Rig::new();
    r.feed_all(&exchange(1, "u1", "a1", "Hi."));
    r.take_effects();
    r.feed(&message_end_text(9, "a-never", "assistant", "late text"));
    assert_eq!(r.ids(), ["u1", "a1", "a-never"]);
    assert_eq!(r.h.get("a-never").unwrap().text(), "late text");
    assert_eq!(r.h.get("a-never").unwrap().role, Role::Assistant);
    assert_eq!(r.h.get("a1").unwrap().text(), "Hi.", "nothing misplaced");
    assert_eq!(r.diagnostics().len(), 1, "{:?}", r.diagnostics());
}

// ---------------------------------------------------------------------------------------------
// Recorded traces.

/// Every `.sse` trace (tests/fixtures/README.md) as its chunks: a missing folder or trace
/// fails the test.
fn fixtures() -> Vec<(String, Vec<String>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/legacy-server");
    let entries =
        std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("fixture folder {}: {e}", dir.display()));
    let mut out: Vec<(String, Vec<String>)> = entries
        .map(|e| {
            e.unwrap_or_else(|e| panic!("fixture folder {}: {e}", dir.display()))
                .path()
        })
        .filter(|p| p.extension().is_some_and(|x| x == "sse"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let body = std::fs::read(&p).unwrap_or_else(|e| panic!("fixture {}: {e}", p.display()));
            (name, sse_data(&body))
        })
        .collect();
    out.sort();
    assert_eq!(out.len(), 3, "the three legacy traces in {}", dir.display());
    out
}

fn replay_json<'a>(chunks: impl IntoIterator<Item = &'a String>) -> (Value, Vec<String>) {
    let out = replay_pi_stream(chunks.into_iter().map(|c| ChunkInput::Text(c)));
    (
        serde_json::to_value(&out.messages).unwrap(),
        out.diagnostics,
    )
}

#[test]
fn every_trace_replays_the_same_with_every_chunk_sent_twice() {
    let traces = fixtures();
    for (name, chunks) in &traces {
        let (plain, diagnostics) = replay_json(chunks);
        assert!(diagnostics.is_empty(), "{name}: {diagnostics:?}");
        assert!(!plain.as_array().unwrap().is_empty(), "{name}");
        let (doubled, _) = replay_json(chunks.iter().flat_map(|c| [c, c]));
        assert_eq!(doubled, plain, "{name}");
    }
}

#[test]
fn every_trace_replays_the_same_with_a_resumed_tail_repeated() {
    // A dropped stream resumed from an earlier cursor: the tail arrives twice.
    for (name, chunks) in &fixtures() {
        let (plain, _) = replay_json(chunks);
        for cut in 0..chunks.len() {
            let resumed = chunks.iter().chain(chunks[cut..].iter());
            let (got, _) = replay_json(resumed);
            assert_eq!(got, plain, "{name}, resumed from chunk {cut}");
        }
    }
}

#[test]
fn every_trace_replays_the_same_through_the_message_update_envelope() {
    let wrap = |c: &String| -> String {
        let v: Value = serde_json::from_str(c).unwrap();
        match v["type"].as_str().and_then(|t| t.strip_prefix("data-pi-")) {
            Some(name) => {
                let mut inner = v["data"].clone();
                inner["type"] = json!(format!("pi-{name}"));
                chunk("data-pi-message-update", inner)
            }
            None => c.clone(),
        }
    };
    for (name, chunks) in &fixtures() {
        let (plain, _) = replay_json(chunks);
        let wrapped: Vec<String> = chunks.iter().map(wrap).collect();
        assert_ne!(&wrapped, chunks, "{name}: nothing was wrapped");
        let (got, diagnostics) = replay_json(&wrapped);
        assert!(diagnostics.is_empty(), "{name}: {diagnostics:?}");
        assert_eq!(got, plain, "{name}");
    }
}

#[test]
fn the_follow_up_trace_builds_each_answer_once() {
    let traces = fixtures();
    let (_, chunks) = traces
        .iter()
        .find(|(n, _)| n == "trace-prompt-followup.sse")
        .expect("tests/fixtures/legacy-server/trace-prompt-followup.sse");
    let (got, _) = replay_json(chunks);
    let texts: Vec<(&str, &str)> = got
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            assert_eq!(m["parts"].as_array().unwrap().len(), 1, "{m}");
            (
                m["role"].as_str().unwrap(),
                m["parts"][0]["text"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        texts,
        [
            ("user", "[A] hello"),
            (
                "assistant",
                "Answer A: one two three four five six seven eight nine ten."
            ),
            ("user", "[B] follow-up question"),
            (
                "assistant",
                "Answer B: one two three four five six seven eight nine ten."
            ),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// SPEC §13: a tool call that waits for the user.

#[test]
fn an_approval_request_then_its_answer_then_the_result_show_on_the_tool_part() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        tool_start(2, "a1", "c1", "deleteFile"),
        tool_end(3, "a1", "c1", json!({"path": "notes.txt"})),
        pi(
            "tool-approval-request",
            json!({"seq": 4, "messageId": "a1", "toolCallId": "c1", "approvalId": "ap1", "reason": "deletes a file"}),
        ),
    ]);
    let part = &r.message("a1")["parts"][0];
    assert_eq!(part["state"], "approval-requested");
    assert_eq!(
        part["approval"],
        json!({"id": "ap1", "requestReason": "deletes a file"})
    );
    r.feed(&pi(
        "tool-approval-response",
        json!({"seq": 5, "messageId": "a1", "toolCallId": "c1", "approvalId": "ap1", "approved": true}),
    ));
    let part = &r.message("a1")["parts"][0];
    assert_eq!(part["state"], "approval-responded");
    assert_eq!(
        part["approval"],
        json!({"id": "ap1", "requestReason": "deletes a file", "approved": true})
    );
    r.feed(&tool_result(6, "a1", "c1", content("deleted")));
    let part = &r.message("a1")["parts"][0];
    assert_eq!(part["state"], "output-available");
    assert_eq!(
        part["approval"]["approved"], true,
        "the answer stays on the part"
    );
    // A replayed request after the result does not take the call back in time.
    r.feed(&pi(
        "tool-approval-request",
        json!({"seq": 7, "messageId": "a1", "toolCallId": "c1", "approvalId": "ap1"}),
    ));
    assert_eq!(r.message("a1")["parts"][0]["state"], "output-available");
}

#[test]
fn a_denied_call_s_blocked_result_is_a_denial() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        tool_start(2, "a1", "c1", "deleteFile"),
        tool_end(3, "a1", "c1", json!({"path": "notes.txt"})),
        pi("tool-approval-request", json!({"seq": 4, "messageId": "a1", "toolCallId": "c1", "approvalId": "ap1"})),
        pi(
            "tool-approval-response",
            json!({"seq": 5, "messageId": "a1", "toolCallId": "c1", "approvalId": "ap1", "approved": false, "reason": "keep it"}),
        ),
        pi(
            "tool-result",
            json!({"seq": 6, "messageId": "a1", "toolCallId": "c1", "isError": true, "output": content("blocked by the user")}),
        ),
    ]);
    let part = &r.message("a1")["parts"][0];
    assert_eq!(part["state"], "output-denied");
    assert_eq!(
        part["approval"],
        json!({"id": "ap1", "approved": false, "reason": "keep it"})
    );
    assert!(
        part.get("errorText").is_none() && part.get("output").is_none(),
        "{part}"
    );
}

#[test]
fn an_input_request_shows_the_question_until_the_answer_s_result() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        tool_start(2, "a1", "q1", "askUser"),
        tool_end(3, "a1", "q1", json!({"question": "which colour", "options": ["red", "green", "blue"]})),
        pi(
            "tool-input-request",
            json!({"seq": 4, "messageId": "a1", "toolCallId": "q1", "question": "which colour", "options": ["red", "green", 7, "blue"]}),
        ),
    ]);
    let part = &r.message("a1")["parts"][0];
    assert_eq!(part["state"], "input-available");
    assert_eq!(
        part["interrupt"],
        json!({"question": "which colour", "options": ["red", "green", "blue"]})
    );
    r.feed(&tool_result(5, "a1", "q1", content("green")));
    let part = &r.message("a1")["parts"][0];
    assert_eq!(part["state"], "output-available");
    assert!(
        part.get("interrupt").is_none(),
        "answered: it waits no more"
    );
}

#[test]
fn a_wait_for_an_unknown_call_keeps_its_part_and_is_reported() {
    let mut r = Rig::new();
    r.feed_all(&[
        assistant_start(1, "a1"),
        pi(
            "tool-approval-request",
            json!({"seq": 2, "messageId": "a1", "toolCallId": "zz", "approvalId": "ap9"}),
        ),
    ]);
    assert_eq!(r.message("a1")["parts"][0]["state"], "approval-requested");
    assert!(r
        .diagnostics()
        .iter()
        .any(|d| d.contains("unknown tool call zz")));
    let bad = parse_chunk(&pi(
        "tool-approval-response",
        json!({"messageId": "a1", "toolCallId": "zz", "approvalId": "ap9"}),
    ));
    assert!(
        bad.is_err(),
        "an answer without `approved` is no answer: {bad:?}"
    );
}
