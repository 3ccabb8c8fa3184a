//! Opening a pi-native session in the middle of a run (a reload, a second tab, a state read
//! after a gap): the state's streaming assistant message goes on growing from the events that
//! follow its seq, in its own parts (SPEC §12, §14): nothing shows twice while it streams, and
//! its final settles it.

#![cfg(feature = "pi")]

use crate::common;

use agent_chat_store::{RequestKind, Status};
use common::native_store::*;
use common::*;
use serde_json::json;

fn texts(h: &Harness) -> Vec<(String, String)> {
    h.history()
        .iter()
        .flat_map(|m| {
            let id = m["id"].as_str().unwrap().to_string();
            m["parts"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["type"] == "text" || p["type"] == "reasoning")
                .map(move |p| (id.clone(), p["text"].as_str().unwrap().to_string()))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn a_message_streaming_in_the_state_grows_from_the_events_without_a_second_copy() {
    let mut h = native();
    let st = h.the_open(RequestKind::NativeState);
    let user = json!({"id": "u1", "role": "user", "status": "done", "parts": [{"type": "text", "id": "u1:text:0", "text": "hi"}]});
    let partial = json!({"id": "a1", "role": "assistant", "status": "streaming", "turnId": "t1", "parts": [
        {"type": "reasoning", "id": "a1:reasoning:0", "text": "Think", "state": "streaming"},
        {"type": "text", "id": "a1:text:1", "text": "Hel"}]});
    h.respond(
        st.id,
        state(7, "streaming", json!([user, partial]), json!([])),
    );
    assert_eq!(h.store.status(), Status::Streaming);
    let ev = h.the_open(RequestKind::NativeEvents);
    assert_eq!(ev.path, format!("{BASE}/events?cursor=7"));
    h.respond(ev.id, ndjson(&[]));
    feed(
        &mut h,
        ev.id,
        &[
            json!({"type": "message-delta", "seq": 8, "messageId": "a1", "partId": "1", "kind": "text", "delta": "lo"}),
            json!({"type": "message-delta", "seq": 9, "messageId": "a1", "partId": "0", "kind": "reasoning", "delta": "ing"}),
        ],
    );
    assert_eq!(
        texts(&h),
        [
            ("u1".into(), "hi".into()),
            ("a1".into(), "Thinking".into()),
            ("a1".into(), "Hello".into())
        ],
        "{:#?}",
        h.history()
    );
    feed(
        &mut h,
        ev.id,
        &[
            json!({"type": "message-delta", "seq": 10, "messageId": "a1", "partId": "1", "kind": "text", "delta": " there"}),
            json!({"type": "message-end", "seq": 11, "messageId": "a1", "final": {"id": "a1", "role": "assistant", "status": "done", "parts": [
                {"type": "reasoning", "id": "a1:reasoning:0", "text": "Thinking", "state": "done"},
                {"type": "text", "id": "a1:text:1", "text": "Hello there"}]}}),
            json!({"type": "agent-end", "seq": 12, "turnId": "t1", "status": "ok"}),
        ],
    );
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(
        texts(&h),
        [
            ("u1".into(), "hi".into()),
            ("a1".into(), "Thinking".into()),
            ("a1".into(), "Hello there".into())
        ]
    );
}
