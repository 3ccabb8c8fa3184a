//! Human in the loop in pi mode (SPEC §13): the server holds a tool call open and the store
//! posts the user's answer exactly once: the part answers at once, retries carry the same ids,
//! `already_answered` is success, a refusal puts the call back waiting with its error (and
//! answering again retries), a switch parks the answer and posts it again on return, a stop
//! lets it go, and a reload shows the call still waiting from the history.

#![cfg(feature = "pi")]

use crate::common;

use agent_chat_store::{ErrorKind, RequestKind, StoreEvent};
use common::scenario::*;
use common::*;
use serde_json::{json, Value};

const APPROVAL: &str = "/api/v1/agent/chat/S/approval";
const TOOL_OUTPUT: &str = "/api/v1/agent/chat/S/tool-output";

/// A pi turn streaming, whose assistant message calls `deleteFile` and waits for approval
/// `ap1` (or, with `ask`, calls `askUser` and waits for an answer).
fn waiting(ask: bool) -> (Harness, u64) {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming_turn(
        &mut h,
        if ask {
            "ask which colour"
        } else {
            "delete notes.txt"
        },
    );
    let (name, call, input) = match ask {
        true => (
            "askUser",
            "q1",
            json!({"question": "which colour", "options": ["red", "green", "blue"]}),
        ),
        false => ("deleteFile", "c1", json!({"path": "notes.txt"})),
    };
    let wait = match ask {
        true => pi_chunk(
            "tool-input-request",
            5,
            json!({"messageId": "a1", "toolCallId": call, "question": "which colour", "options": ["red", "green", "blue"]}),
        ),
        false => pi_chunk(
            "tool-approval-request",
            5,
            json!({"messageId": "a1", "toolCallId": call, "approvalId": "ap1", "reason": "deletes notes.txt"}),
        ),
    };
    let body = sse(&[
        pi_chunk(
            "message-start",
            2,
            json!({"messageId": "a1", "role": "assistant"}),
        ),
        pi_chunk(
            "tool-call-start",
            3,
            json!({"messageId": "a1", "toolCallId": call, "toolName": name}),
        ),
        pi_chunk(
            "tool-call-end",
            4,
            json!({"messageId": "a1", "toolCallId": call, "input": input}),
        ),
        wait,
    ]);
    h.body(chat, &body);
    (h, chat)
}

fn tool(h: &Harness, call: &str) -> Value {
    let i = h
        .store
        .messages()
        .iter()
        .position(|m| m.id == "a1")
        .expect("a1");
    let m = h.store.session().export_message(i);
    (m["parts"].as_array().unwrap().iter())
        .find(|p| p["toolCallId"] == call)
        .cloned()
        .unwrap()
}

fn state(h: &Harness, call: &str) -> String {
    tool(h, call)["state"].as_str().unwrap().to_string()
}

fn pending(h: &Harness) -> Vec<Value> {
    (h.store.session().pending_from(0).into_iter())
        .map(|(_, p)| serde_json::to_value(p).unwrap())
        .collect()
}

#[test]
fn an_approval_is_shown_pending_answered_at_once_and_posted_once() {
    let (mut h, chat) = waiting(false);
    assert_eq!(
        pending(&h),
        [
            json!({"approvalId": "ap1", "toolCallId": "c1", "toolName": "deleteFile", "input": {"path": "notes.txt"}, "messageId": "a1"})
        ]
    );
    assert!(h.act(|s, now| s
        .use_chat()
        .add_tool_approval_response("ap1", true, None, now)));
    assert_eq!(state(&h, "c1"), "approval-responded", "at once");
    assert_eq!(tool(&h, "c1")["approval"]["approved"], true);
    assert!(pending(&h).is_empty());
    let post = h.the_open(RequestKind::ApprovalPost);
    assert_eq!(post.path, APPROVAL);
    assert_eq!(post.body(), &json!({"approvalId": "ap1", "approved": true}));
    h.respond(post.id, Reply::json(202, json!({"ok": true})));
    // The stream confirms it, then the result.
    h.body(chat, &sse(&[
        pi_chunk("tool-approval-response", 6, json!({"messageId": "a1", "toolCallId": "c1", "approvalId": "ap1", "approved": true})),
        pi_chunk("tool-result", 7, json!({"messageId": "a1", "toolCallId": "c1", "output": {"content": [{"type": "text", "text": "deleted notes.txt"}]}})),
    ]));
    assert_eq!(state(&h, "c1"), "output-available");
    assert!(
        !h.act(|s, now| s
            .use_chat()
            .add_tool_approval_response("ap1", false, None, now)),
        "answered already"
    );
    assert_eq!(h.count(RequestKind::ApprovalPost), 1);
}

/// An output for a call that waits for an approval is refused here, typed, with nothing sent:
/// the call still waits, and its approval goes as usual.
#[test]
fn an_output_for_a_call_waiting_for_approval_is_refused_and_the_approval_still_goes() {
    let (mut h, _) = waiting(false);
    assert!(!h.act(|s, now| s.use_chat().add_tool_output("c1", Ok(json!("done")), now)));
    assert_eq!(state(&h, "c1"), "approval-requested");
    assert_eq!(h.count(RequestKind::ToolOutputPost), 0);
    let error = h.errors().last().cloned().cloned().unwrap();
    assert_eq!(error.kind, ErrorKind::Validation);
    assert_eq!(pending(&h)[0]["error"]["kind"], "Validation");
    assert!(h.act(|s, now| s
        .use_chat()
        .add_tool_approval_response("ap1", true, None, now)));
    assert_eq!(state(&h, "c1"), "approval-responded");
    let post = h.the_open(RequestKind::ApprovalPost);
    assert_eq!(post.body(), &json!({"approvalId": "ap1", "approved": true}));
    h.respond(post.id, Reply::json(202, json!({"ok": true})));
    assert!(pending(&h).is_empty());
}

#[test]
fn a_retry_carries_the_same_ids_and_already_answered_is_success() {
    let (mut h, _) = waiting(false);
    h.act(|s, now| {
        s.use_chat()
            .add_tool_approval_response("ap1", false, Some("keep it".into()), now)
    });
    let first = h.the_open(RequestKind::ApprovalPost);
    h.respond(first.id, Reply::error(503, "unavailable", "busy"));
    assert_eq!(
        state(&h, "c1"),
        "approval-responded",
        "still shown answered while it retries"
    );
    h.advance(20_000);
    let second = h.the_open(RequestKind::ApprovalPost);
    assert_eq!(second.body(), first.body(), "the same ids and answer");
    h.respond(second.id, Reply::network("reset"));
    h.advance(20_000);
    let third = h.the_open(RequestKind::ApprovalPost);
    h.respond(third.id, Reply::error(409, "already_answered", "answered"));
    assert!(h.store.poll_timeout().is_none(), "nothing more to post");
    assert_eq!(state(&h, "c1"), "approval-responded");
    assert!(h.errors().is_empty());
    assert_eq!(
        third.body(),
        &json!({"approvalId": "ap1", "approved": false, "reason": "keep it"})
    );
}

#[test]
fn a_refused_answer_puts_the_call_back_waiting_with_its_error_and_answering_again_retries() {
    let (mut h, _) = waiting(false);
    h.act(|s, now| {
        s.use_chat()
            .add_tool_approval_response("ap1", true, None, now)
    });
    let post = h.the_open(RequestKind::ApprovalPost);
    h.respond(post.id, Reply::error(404, "approval_not_found", "expired"));
    assert_eq!(state(&h, "c1"), "approval-requested", "put back");
    let p = pending(&h);
    assert_eq!(p.len(), 1);
    assert_eq!(p[0]["error"]["message"], "expired");
    assert!(h
        .events
        .iter()
        .any(|e| matches!(e, StoreEvent::Error { error } if error.status == Some(404))));
    assert!(h.act(|s, now| s
        .use_chat()
        .add_tool_approval_response("ap1", true, None, now)));
    let again = h.the_open(RequestKind::ApprovalPost);
    assert_eq!(again.body(), post.body());
    assert!(pending(&h).is_empty(), "answered again: no error shown");
}

#[test]
fn an_answer_survives_a_switch_and_goes_again_with_the_same_ids() {
    let (mut h, _) = waiting(false);
    h.act(|s, now| {
        s.use_chat()
            .add_tool_approval_response("ap1", true, None, now)
    });
    let post = h.the_open(RequestKind::ApprovalPost);
    h.switch_session("T");
    assert!(h.aborted.contains(&post.id));
    assert_eq!(
        h.count(RequestKind::ApprovalPost),
        1,
        "T posts nothing of S's"
    );
    h.switch_session("S");
    let again = h.the_open(RequestKind::ApprovalPost);
    assert_eq!((again.path.as_str(), again.body()), (APPROVAL, post.body()));
    h.respond(again.id, Reply::status(202));
    assert_eq!(state(&h, "c1"), "approval-responded");
}

#[test]
fn a_stop_while_a_tool_waits_lets_its_answer_go() {
    let (mut h, _) = waiting(false);
    h.act(|s, now| {
        s.use_chat()
            .add_tool_approval_response("ap1", true, None, now)
    });
    let post = h.the_open(RequestKind::ApprovalPost);
    h.stop();
    assert!(h.aborted.contains(&post.id));
    h.advance(60_000);
    assert_eq!(h.count(RequestKind::ApprovalPost), 1, "not posted again");
    assert!(h.errors().iter().all(|e| e.kind != ErrorKind::Server));
}

#[test]
fn a_question_is_pending_and_its_answer_posted_to_the_tool_output_route() {
    let (mut h, _) = waiting(true);
    assert_eq!(
        pending(&h),
        [
            json!({"toolCallId": "q1", "toolName": "askUser", "messageId": "a1",
                "input": {"question": "which colour", "options": ["red", "green", "blue"]},
                "question": "which colour", "options": ["red", "green", "blue"]})
        ]
    );
    assert!(h.act(|s, now| s.use_chat().add_tool_output("q1", Ok(json!("green")), now)));
    let part = tool(&h, "q1");
    assert_eq!(part["state"], "output-available");
    assert_eq!(part["output"], "green");
    assert!(part.get("interrupt").is_none());
    let post = h.the_open(RequestKind::ToolOutputPost);
    assert_eq!(post.path, TOOL_OUTPUT);
    assert_eq!(post.body(), &json!({"toolCallId": "q1", "output": "green"}));
    h.respond(post.id, Reply::status(202));
    assert!(pending(&h).is_empty());
    assert!(
        !h.act(|s, now| s.use_chat().add_tool_output("q1", Ok(json!("red")), now)),
        "answered already"
    );
}

#[test]
fn after_a_reload_the_history_shows_the_call_waiting_and_the_answer_still_works() {
    let history = json!({"messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "delete notes.txt"}]},
        {"id": "a1", "role": "assistant", "parts": [
            {"type": "tool-deleteFile", "toolCallId": "c1", "state": "approval-requested",
             "input": {"path": "notes.txt"}, "approval": {"id": "ap1"}},
            {"type": "tool-askUser", "toolCallId": "q1", "state": "input-available",
             "input": {}, "interrupt": {"question": "which colour", "options": ["red"]}}
        ]}
    ], "activeTurn": null});
    let mut h = hydrated(PI_CAPS, history);
    let p = pending(&h);
    assert_eq!(p.len(), 2, "{p:?}");
    assert_eq!(
        (p[0]["approvalId"].as_str(), p[1]["question"].as_str()),
        (Some("ap1"), Some("which colour"))
    );
    assert!(h.act(|s, now| s
        .use_chat()
        .add_tool_approval_response("ap1", true, None, now)));
    assert_eq!(h.the_open(RequestKind::ApprovalPost).path, APPROVAL);
    assert!(h.act(|s, now| s
        .use_chat()
        .add_tool_output("q1", Err("no colour".into()), now)));
    assert_eq!(state(&h, "q1"), "output-error");
    assert_eq!(
        h.the_open(RequestKind::ToolOutputPost).body(),
        &json!({"toolCallId": "q1", "errorText": "no colour"})
    );
}
