//! pi mode (SPEC §3's pi projection chunks, §7): the legacy server's trace streams into the
//! canonical history (the optimistic user message adopted, the follow-up consumed); the turn id
//! comes from `data-turn-start`; `data-pi-mode` streams from its first read; `clearError` while
//! streaming.

#![cfg(feature = "pi")]

use crate::common;

use agent_chat_store::ItemState;
use agent_chat_store::Role;
use agent_chat_store::Status;
use agent_chat_store::{RequestKind, StoreEvent, SubmitKind};
use common::scenario::*;
use common::*;
use serde_json::json;

#[test]
fn the_legacy_trace_streams_into_the_canonical_history() {
    let mut h = Harness::with_caps(PI_CAPS);
    assert_eq!(h.send("[A] hello").kind, SubmitKind::Sent);
    assert_eq!(h.store.status(), Status::Submitted);
    let optimistic = h.store.messages()[0].id.clone();
    let chat = h.the_open(RequestKind::Chat);
    let body = chat.body();
    assert_eq!(body["id"], SESSION);
    assert_eq!(body["sessionId"], SESSION);
    assert_eq!(body["message"], "[A] hello");
    assert_eq!(body["trigger"], "submit-message");
    assert_eq!(body["messageId"], optimistic.as_str());
    assert!(is_v4_uuid(body["clientTurnId"].as_str().unwrap()));
    assert!(body.get("messages").is_none(), "pi mode sends no history");

    // The trace in 61-byte network chunks; the follow-up is queued a third of the way in.
    let reply = Reply::sse(trace()).turn_id("turn-trace-1").chunked(61);
    let Reply::Answer { head, chunks, .. } = reply else {
        unreachable!()
    };
    h.head(chat.id, head);
    assert_eq!(h.store.status(), Status::Submitted, "no body bytes yet");
    let third = chunks.len() / 3;
    for (i, c) in chunks.iter().enumerate() {
        h.body(chat.id, c);
        assert_eq!(h.store.status(), Status::Streaming, "chunk {i}");
        if i == third {
            assert_eq!(h.submit("[B] follow-up question").kind, SubmitKind::Queued);
            let p = h.the_open(RequestKind::FollowUpPost);
            h.respond(p.id, accepted());
            assert_eq!(h.store.session().queued()[0].state, ItemState::Accepted);
        }
    }
    assert!(
        h.store.session().queued().is_empty(),
        "consumed by data-followup-consumed"
    );
    assert_eq!(h.store.session().turn_id(), Some("turn-trace-1"));
    h.end(chat.id);
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(h.store.session().error(), None);
    assert_eq!(h.store.session().turn_id(), None, "no turn runs any more");

    let got = h.history();
    assert_eq!(got.len(), 4, "{got:#?}");
    assert_eq!(without_ids(&got), without_ids(&canonical_trace_history()));
    // The optimistic user message became the server's: no second "[A]" bubble.
    let users: Vec<_> = h
        .store
        .messages()
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.text())
        .collect();
    assert_eq!(users, ["[A] hello", "[B] follow-up question"]);
    assert_eq!(h.count(RequestKind::MessagesPut), 0, "pi mode never PUTs");
    assert!(h.errors().is_empty(), "{:#?}", h.errors());
    assert!(h
        .events
        .iter()
        .any(|e| matches!(e, StoreEvent::Finish { .. })));
}

#[test]
fn the_turn_id_comes_from_data_turn_start() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("[A] hello");
    let chat = h.the_open(RequestKind::Chat).id;
    // No x-turn-id header: the chunk is the only source.
    h.respond(chat, Reply::sse(trace()).chunked(200).open());
    assert_eq!(h.store.session().turn_id(), Some("turn-trace-1"));
}

/// A turn sent as AI SDK whose first read says `data-pi-mode`: pi mode streams from the first
/// byte, so the status is `streaming` at once, not at the next read (found by review).
#[test]
fn data_pi_mode_in_the_first_read_is_streaming_at_once() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    h.send("hi");
    let chat = h.last(RequestKind::Chat);
    let first = sse(&[
        json!({"type": "data-pi-mode", "data": {"enabled": true}}),
        pi_chunk(
            "pi-message-start",
            1,
            json!({"messageId": "a1", "role": "assistant"}),
        ),
    ]);
    h.respond(chat.id, Reply::sse(first).open());
    assert_eq!(h.store.status(), Status::Streaming);
}

/// pi mode: clearError while streaming drops `error`, then the turn ends `error` with no error.
#[test]
fn clear_error_while_streaming_then_error_status_without_error() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("hi");
    let chat = h.last(RequestKind::Chat);
    h.respond(
        chat.id,
        Reply::sse(sse(&[
            json!({"type": "data-turn-start", "data": {"turnId": "t1"}}),
            json!({"type": "error", "errorText": "boom"}),
        ]))
        .open(),
    );
    assert_eq!(h.store.status(), Status::Streaming);
    assert!(h.store.session().error().is_some());
    h.act(|s, _| s.turn_mut().clear_error());
    h.end(chat.id);
    assert!(
        !(h.store.status() == Status::Error && h.store.session().error().is_none()),
        "status error without an error"
    );
}
