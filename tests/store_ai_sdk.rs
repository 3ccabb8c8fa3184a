//! AI SDK mode as `useChat` does it (SPEC §3's AI SDK chunks, §8's regenerate and edit):
//! regenerate and edit; the status stays `submitted` until the first chunk that writes, and the
//! answer enters the history at that chunk; an `error` chunk or a protocol violation ends the
//! turn there.

use crate::common;

use agent_chat_store::Status;
use agent_chat_store::{RequestKind, SubmitKind};
use common::scenario::*;
use common::*;
use serde_json::json;

#[test]
fn regenerate_trims_after_the_user_message_and_asks_again() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    two_ai_turns(&mut h);
    assert!(h.store.session().can_regenerate());
    assert!(h.act(|s, now| s.use_chat().regenerate(None, now)));
    let chat = h.last(RequestKind::Chat);
    assert_eq!(chat.body()["trigger"], "regenerate-message");
    assert_eq!(chat.body()["messageId"], "a2");
    let sent: Vec<&str> = chat.body()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(sent, ["user", "assistant", "user"]);
    assert_eq!(
        h.store.messages().len(),
        3,
        "the old answer is gone at once"
    );
    h.respond(chat.id, Reply::sse(ai_answer("a2b", "again")));
    let texts: Vec<String> = h.store.messages().iter().map(|m| m.text()).collect();
    assert_eq!(texts, ["one", "answer one", "two", "again"]);
    // pi mode: the server owns history, nothing to regenerate.
    let mut pi = Harness::with_caps(PI_CAPS);
    assert!(!pi.act(|s, now| s.use_chat().regenerate(None, now)));
}

/// `useChat`'s Retry after a failed turn: `regenerate()` asks the last message again when it
/// is the user's, keeping everything (a fresh chat as well as a long one); the answer is
/// appended after it.
#[test]
fn regenerate_after_a_failed_turn_asks_the_unanswered_user_message_again() {
    for earlier_turns in [false, true] {
        let mut h = Harness::with_caps(AI_SDK_CAPS);
        if earlier_turns {
            two_ai_turns(&mut h);
        }
        h.send("three");
        let chat = h.last(RequestKind::Chat);
        h.respond(chat.id, Reply::error(500, "internal", "boom"));
        assert_eq!(h.store.status(), Status::Error);
        assert!(h.store.session().can_regenerate(), "the Retry of useChat");
        assert!(h.act(|s, now| s.use_chat().regenerate(None, now)));
        let chat = h.last(RequestKind::Chat);
        assert_eq!(chat.body()["trigger"], "regenerate-message");
        assert_eq!(chat.body().get("messageId"), None, "no answer to replace");
        let sent: Vec<&str> = chat.body()["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let parts = m["parts"].as_array().unwrap();
                let text = parts.iter().find(|p| p["type"] == "text").unwrap();
                text["text"].as_str().unwrap()
            })
            .collect();
        let want: &[&str] = if earlier_turns {
            &["one", "answer one", "two", "answer two", "three"]
        } else {
            &["three"]
        };
        assert_eq!(sent, want);
        h.respond(chat.id, Reply::sse(ai_answer("a3", "answer three")));
        assert_eq!(h.store.status(), Status::Ready);
        let last = h.store.messages().last().unwrap();
        assert_eq!(
            (last.id.as_str(), last.text()),
            ("a3", "answer three".into())
        );
        assert_eq!(h.store.messages().len(), want.len() + 1);
    }
    // An empty chat has nothing to ask again.
    let h = Harness::with_caps(AI_SDK_CAPS);
    assert!(!h.store.session().can_regenerate());
}

#[test]
fn edit_replaces_the_user_message_and_drops_what_follows() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    two_ai_turns(&mut h);
    let first = h.store.messages()[0].id.clone();
    let r = h.act(|s, now| s.use_chat().edit(&first, "one, edited", vec![], now));
    assert_eq!(r.kind, SubmitKind::Sent);
    let chat = h.last(RequestKind::Chat);
    assert_eq!(chat.body()["trigger"], "submit-message");
    assert_eq!(chat.body()["messageId"], first.as_str());
    let sent = chat.body()["messages"].as_array().unwrap().clone();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["id"], first.as_str());
    assert_eq!(sent[0]["parts"][0]["text"], "one, edited");
    h.respond(chat.id, Reply::sse(ai_answer("a9", "new answer")));
    let texts: Vec<String> = h.store.messages().iter().map(|m| m.text()).collect();
    assert_eq!(texts, ["one, edited", "new answer"]);
    // An assistant message is not editable; nor is anything while busy.
    let a = h.store.messages()[1].id.clone();
    assert_eq!(
        h.act(|s, now| s.use_chat().edit(&a, "x", vec![], now)).kind,
        SubmitKind::Blocked
    );
}

/// `useChat` stops at an `error` chunk (its processor throws it): what follows in the stream is
/// not applied, the turn ends failed (the stream is dropped), and `clearError` gives `ready`
/// back with the messages as they were.
#[test]
fn an_error_chunk_ends_the_turn_there_and_clear_error_makes_it_ready() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    h.send("hi");
    let chat = h.last(RequestKind::Chat);
    let body = sse(&[
        json!({"type": "start", "messageId": "a1"}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": "Hel"}),
        json!({"type": "error", "errorText": "boom"}),
        json!({"type": "text-delta", "id": "t", "delta": "lo"}),
        json!({"type": "data-late", "data": 1}),
    ]);
    h.respond(chat.id, Reply::sse(body).open());
    assert_eq!(h.store.status(), Status::Error);
    assert_eq!(h.store.session().error().unwrap().message, "boom");
    assert_eq!(h.store.messages()[1].text(), "Hel");
    assert!(h.aborted.contains(&chat.id), "the stream is dropped");
    assert_eq!(h.errors().len(), 1);
    // The rest of the stream, should it still arrive, changes nothing.
    h.body(
        chat.id,
        &sse(&[json!({"type": "text-delta", "id": "t", "delta": "!"})]),
    );
    assert_eq!(h.store.messages()[1].text(), "Hel");
    let before = h.store.messages().to_vec();
    h.act(|s, _| s.turn_mut().clear_error());
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(h.store.session().error(), None);
    assert_eq!(h.store.messages(), &before[..]);
    assert_eq!(h.send("again").kind, SubmitKind::Sent);
}

/// As `useChat`: the status stays `submitted` until the first chunk that changes the message
/// (a UI shows its waiting indicator until then): not the first byte, a `start`, a step's
/// start, nor a `finish` without metadata.
#[test]
fn submitted_lasts_until_the_first_chunk_that_changes_the_message() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    h.send("hi");
    let chat = h.last(RequestKind::Chat);
    let head = sse(&[
        json!({"type": "start", "messageId": "a1"}),
        json!({"type": "start-step"}),
        json!({"type": "message-metadata"}),
    ]);
    h.respond(chat.id, Reply::sse(head).open());
    assert_eq!(h.store.status(), Status::Submitted);
    h.body(
        chat.id,
        &sse(&[json!({"type": "reasoning-start", "id": "r"})]),
    );
    assert_eq!(h.store.status(), Status::Streaming);
    // A turn with nothing that writes goes from submitted to ready.
    h.body(
        chat.id,
        &sse(&[json!({"type": "reasoning-end", "id": "r"})]),
    );
    h.end(chat.id);
    h.send("again");
    let chat = h.last(RequestKind::Chat);
    let body = sse(&[
        json!({"type": "start"}),
        json!({"type": "start-step"}),
        json!({"type": "finish-step"}),
        json!({"type": "finish"}),
    ]);
    let statuses = h.respond(chat.id, Reply::sse(body));
    assert!(!statuses.contains(&Status::Streaming), "{statuses:?}");
    assert_eq!(h.store.status(), Status::Ready);
}

/// As `useChat`: the answer enters the history at the first chunk that writes it. A stream
/// that fails at once leaves no empty answer (which the next POST would carry), a `start`
/// naming the message shows it (still `submitted`), and a continued message that the stream
/// only gives a step's start stays as it was.
#[test]
fn the_answer_appears_at_the_first_chunk_that_writes_it() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    h.send("hi");
    let chat = h.last(RequestKind::Chat);
    let body = sse(&[
        json!({"type": "start"}),
        json!({"type": "start-step"}),
        json!({"type": "error", "errorText": "test-error"}),
    ]);
    h.respond(chat.id, Reply::sse(body));
    assert_eq!(h.store.status(), Status::Error);
    assert_eq!(h.store.messages().len(), 1, "only the user message");
    h.act(|s, _| s.turn_mut().clear_error());
    h.send("again");
    let chat = h.last(RequestKind::Chat);
    assert_eq!(chat.body()["messages"].as_array().unwrap().len(), 2);
    h.respond(
        chat.id,
        Reply::sse(sse(&[json!({"type": "start", "messageId": "a1"})])).open(),
    );
    assert_eq!(h.store.status(), Status::Submitted);
    let last = h.store.messages().last().unwrap();
    assert_eq!((last.id.as_str(), last.parts.len()), ("a1", 0));
    h.body(chat.id, &ai_answer("a1", "hello")[..]);
    h.end(chat.id);
    assert_eq!(h.store.messages().last().unwrap().text(), "hello");
    // A continued turn (after a tool output, say) whose stream writes nothing.
    let before = h.store.messages().last().unwrap().clone();
    let version = h
        .store
        .session()
        .history()
        .version(h.store.messages().len() - 1);
    assert!(h.act(|s, now| s.use_chat().continue_turn(now)));
    let chat = h.last(RequestKind::Chat);
    let body = sse(&[
        json!({"type": "start"}),
        json!({"type": "start-step"}),
        json!({"type": "finish-step"}),
        json!({"type": "finish"}),
    ]);
    h.respond(chat.id, Reply::sse(body));
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(h.store.messages().last().unwrap(), &before);
    assert_eq!(
        h.store
            .session()
            .history()
            .version(h.store.messages().len() - 1),
        version
    );
}

/// A stream whose first writing chunk is a protocol violation: useChat throws before
/// write(), so no answer enters the messages; the store keeps an empty assistant message,
/// which the next POST carries.
#[test]
fn a_violation_as_first_write_leaves_no_empty_answer() {
    for fast in [false, true] {
        let mut h = Harness::with_caps(AI_SDK_CAPS);
        h.send("hi");
        let chat = h.last(RequestKind::Chat);
        let bad = if fast {
            json!({"type": "text-delta", "id": "t", "delta": "x"})
        } else {
            json!({"type": "tool-output-available", "toolCallId": "nope", "output": 1})
        };
        h.respond(chat.id, Reply::sse(sse(&[json!({"type": "start"}), bad])));
        assert_eq!(h.store.status(), Status::Error);
        assert_eq!(
            h.store.messages().len(),
            1,
            "fast={fast}: {:?}",
            h.store.messages()
        );
    }
}

/// AI SDK mode passes over the pi projection a server of this family streams beside the
/// standard chunks, in the full build and in the AI SDK build (without `pi`) alike. The AI SDK
/// build does not read the projection's events beyond the few this mode uses (the mode, a user
/// message's start, the turn id, the deltas), so a malformed one of the others is a loss only
/// where it is read.
#[test]
fn the_pi_projection_beside_the_standard_chunks_is_passed_over() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    h.send("hello");
    let chat = h.the_open(RequestKind::Chat);
    let standard = sse_events(&ai_answer("a1", "the answer"));
    let projection = [
        json!({"type": "data-turn-start", "data": {"turnId": "t1"}}),
        pi_chunk(
            "message-start",
            1,
            json!({"messageId": "p1", "role": "assistant"}),
        ),
        pi_chunk("text-start", 2, json!({"messageId": "p1", "partId": "0"})),
        pi_chunk(
            "text-delta",
            3,
            json!({"messageId": "p1", "partId": "0", "delta": "pi"}),
        ),
        // A tool result without its call id: malformed.
        pi_chunk("tool-result", 4, json!({"messageId": "p1", "output": []})),
        pi_chunk(
            "message-end",
            5,
            json!({"messageId": "p1", "role": "assistant"}),
        ),
    ];
    let mut body = Vec::new();
    for (i, event) in standard.iter().enumerate() {
        body.extend_from_slice(event);
        if let Some(p) = projection.get(i) {
            body.extend_from_slice(&sse(std::slice::from_ref(p)));
        }
    }
    h.respond(chat.id, Reply::sse(body));
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(h.store.session().turn_id(), None);
    let texts: Vec<String> = h.store.messages().iter().map(|m| m.text()).collect();
    assert_eq!(texts, ["hello", "the answer"]);
    let losses: Vec<&str> = h
        .store
        .session()
        .losses()
        .iter()
        .map(|l| &*l.message)
        .collect();
    if cfg!(feature = "pi") {
        assert_eq!(losses.len(), 1, "{losses:?}");
        assert!(losses[0].contains("toolCallId"), "{losses:?}");
    } else {
        assert!(losses.is_empty(), "{losses:?}");
    }
}
