//! A host's own `sendAutomaticallyWhen` predicate (AI SDK mode, SPEC §13 and `useChat`): the
//! store asks it where `useChat` would (after a tool output or an approval answer, and when a
//! turn ends without an error), and a yes continues the conversation only while the answer is
//! still about what it was asked: the newest question, the same session and messages, no stop.

use crate::common;

use agent_chat_store::Status;
use agent_chat_store::{AutoSend, RequestKind};
use common::scenario::*;
use common::*;
use serde_json::json;

/// A turn that ends with an unanswered client tool call `c1`, under a host predicate.
fn tool_call_left_open() -> Harness {
    let mut h = auto_sending(AutoSend::Host);
    tool_step_turn(
        &mut h,
        "where am I?",
        &[
            json!({"type": "tool-input-available", "toolCallId": "c1", "toolName": "getLocation", "input": {}}),
        ],
        Some("tool-calls"),
    );
    assert_eq!(h.store.status(), Status::Ready);
    h
}

#[test]
fn the_host_is_asked_at_a_turn_end_and_after_a_tool_output_and_its_yes_continues() {
    let mut h = tool_call_left_open();
    assert_eq!(h.asked.len(), 1, "asked when the turn ended");
    // Its answer to that question: no.
    let first = h_token(&h, 0);
    assert!(!h.act(|s, now| s.handle_auto_send(first, false, now)));
    assert!(h.act(|s, now| s
        .use_chat()
        .add_tool_output("c1", Ok(json!({"city": "Paris"})), now)));
    assert_eq!(h.asked.len(), 2, "asked again after the output");
    assert_eq!(
        h.count(RequestKind::Chat),
        1,
        "nothing sent before the answer"
    );
    let token = h_token(&h, 1);
    assert!(h.act(|s, now| s.handle_auto_send(token, true, now)));
    let next = h.last(RequestKind::Chat);
    assert_eq!(h.count(RequestKind::Chat), 2);
    assert_eq!(
        next.body()["messageId"],
        "a1",
        "the same assistant message goes on"
    );
    // One answer, one turn: the same token again changes nothing.
    assert!(!h.act(|s, now| s.handle_auto_send(token, true, now)));
    assert_eq!(h.count(RequestKind::Chat), 2);
}

#[test]
fn an_answer_that_is_no_longer_about_the_current_state_continues_nothing() {
    // An older question than the newest.
    let mut h = tool_call_left_open();
    h.act(|s, now| s.use_chat().add_tool_output("c1", Ok(json!({})), now));
    let (old, new) = (h_token(&h, 0), h_token(&h, 1));
    assert!(!h.act(|s, now| s.handle_auto_send(old, true, now)));
    assert!(h.act(|s, now| s.handle_auto_send(new, true, now)));

    // A stop while the answer was pending (as the `ai` package ignores a late promise).
    let mut h = tool_call_left_open();
    h.act(|s, now| s.use_chat().add_tool_output("c1", Ok(json!({})), now));
    let token = h_token(&h, 1);
    h.act(|s, now| s.turn_mut().stop(now));
    assert!(!h.act(|s, now| s.handle_auto_send(token, true, now)));
    assert_eq!(h.count(RequestKind::Chat), 1);

    // The messages changed meanwhile (a new message sent, answered).
    let mut h = tool_call_left_open();
    let token = h_token(&h, 0);
    h.send("never mind");
    let chat = h.last(RequestKind::Chat);
    h.respond(chat.id, Reply::sse(ai_answer("a2", "ok")));
    assert!(!h.act(|s, now| s.handle_auto_send(token, true, now)));
    assert_eq!(h.count(RequestKind::Chat), 2);

    // Another session is current.
    let mut h = tool_call_left_open();
    let token = h_token(&h, 0);
    h.act(|s, now| s.switch_session("s2", now));
    assert!(!h.act(|s, now| s.handle_auto_send(token, true, now)));
    assert_eq!(h.count(RequestKind::Chat), 1);

    // Disposed.
    let mut h = tool_call_left_open();
    let token = h_token(&h, 0);
    h.act(|s, _| s.dispose());
    assert!(!h.act(|s, now| s.handle_auto_send(token, true, now)));
    assert_eq!(h.count(RequestKind::Chat), 1);
}

#[test]
fn an_answer_to_an_older_question_never_counts_for_a_newer_one() {
    // A (the turn's end) stays pending; B (after an output) is answered no; C (after another
    // output) is then the question: A's late answer, whatever it says, is not C's.
    let mut h = tool_call_left_open();
    let a = h_token(&h, 0);
    h.act(|s, now| s.use_chat().add_tool_output("c1", Ok(json!({"n": 1})), now));
    let b = h_token(&h, 1);
    assert!(!h.act(|s, now| s.handle_auto_send(b, false, now)));
    h.act(|s, now| s.use_chat().add_tool_output("c1", Ok(json!({"n": 2})), now));
    let c = h_token(&h, 2);
    assert!(a != c && b != c, "tokens are never reused");
    assert!(!h.act(|s, now| s.handle_auto_send(a, true, now)));
    assert_eq!(h.count(RequestKind::Chat), 1, "A's yes continued nothing");
    assert!(h.act(|s, now| s.handle_auto_send(c, true, now)));
    assert_eq!(h.count(RequestKind::Chat), 2, "C's yes continues");
}

#[test]
fn never_asked_after_a_failed_turn() {
    let mut h = auto_sending(AutoSend::Host);
    h.send("hi");
    let chat = h.last(RequestKind::Chat);
    let body = sse(&[
        json!({"type": "start", "messageId": "a1"}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": "x"}),
        json!({"type": "error", "errorText": "bad"}),
    ]);
    h.respond(chat.id, Reply::sse(body));
    assert_eq!(h.store.status(), Status::Error);
    assert!(h.asked.is_empty());
}

/// The token of the `n`th question the harness polled.
fn h_token(h: &Harness, n: usize) -> u64 {
    h.asked[n]
}
