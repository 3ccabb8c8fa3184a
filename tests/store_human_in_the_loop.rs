//! Tool outputs and approvals in AI SDK mode (SPEC §13): a client tool's output and an
//! approval go with the next chat POST (sent automatically when the option says so), which
//! continues the same assistant message; an output added while that message is pending, and a
//! `reset-step` on it, as `useChat` handles them.

use crate::common;

use agent_chat_store::Status;
use agent_chat_store::{AutoSend, RequestKind};
use common::scenario::*;
use common::*;
use serde_json::json;

#[test]
fn a_client_tool_output_completes_the_message_and_continues_it_automatically() {
    let mut h = auto_sending(AutoSend::ToolCallsComplete);
    tool_step_turn(
        &mut h,
        "where am I?",
        &[
            json!({"type": "tool-input-start", "toolCallId": "c1", "toolName": "getLocation"}),
            json!({"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "{\"precise\":"}),
            json!({"type": "tool-input-available", "toolCallId": "c1", "toolName": "getLocation", "input": {"precise": true}}),
        ],
        Some("tool-calls"),
    );
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(
        h.count(RequestKind::Chat),
        1,
        "nothing to send before the output"
    );
    assert!(h.act(|s, now| s
        .use_chat()
        .add_tool_output("c1", Ok(json!({"city": "Paris"})), now)));
    let next = h.last(RequestKind::Chat);
    assert_eq!(h.count(RequestKind::Chat), 2, "sent automatically");
    assert_eq!(next.body()["messageId"], "a1");
    let sent = next.body()["messages"].as_array().unwrap().clone();
    let part = &sent[1]["parts"][1];
    assert_eq!(
        (part["state"].as_str(), &part["output"]),
        (Some("output-available"), &json!({"city": "Paris"}))
    );
    // The answer continues the same assistant message: no second bubble.
    let mut more = sse(&[
        json!({"type": "start", "messageId": "a1"}),
        json!({"type": "start-step"}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": "You are in Paris."}),
        json!({"type": "text-end", "id": "t"}),
        json!({"type": "finish", "finishReason": "stop"}),
    ]);
    more.extend_from_slice(DONE);
    h.respond(next.id, Reply::sse(more));
    assert_eq!(h.store.messages().len(), 2);
    assert_eq!(h.store.messages()[1].text(), "You are in Paris.");
    assert_eq!(h.count(RequestKind::Chat), 2, "complete: no third request");
}

#[test]
fn a_tool_approval_round_trip() {
    let mut h = auto_sending(AutoSend::ApprovalsAnswered);
    tool_step_turn(
        &mut h,
        "delete the file",
        &[
            json!({"type": "tool-input-available", "toolCallId": "c1", "toolName": "rm", "input": {"path": "x"}}),
            json!({"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "c1"}),
        ],
        None,
    );
    let part = h.store.messages()[1].parts[1].as_tool().unwrap().clone();
    assert_eq!(part.state.as_str(), "approval-requested");
    // The store says which message waits for the user (`snapshot.pending`, what the
    // assistant-ui binding shows as `requires-action`): the answer's, until it is answered.
    let waiting = |h: &Harness| -> Vec<(usize, String, Option<String>)> {
        (h.store.session().pending_from(0).into_iter())
            .map(|(i, p)| (i, p.message_id, p.approval_id))
            .collect()
    };
    let answer_id = h.store.messages()[1].id.clone();
    assert_eq!(waiting(&h), [(1, answer_id, Some("ap1".to_string()))]);
    assert!(
        !h.act(|s, now| s
            .use_chat()
            .add_tool_approval_response("nope", true, None, now)),
        "unknown approval"
    );
    assert!(h.act(|s, now| s.use_chat().add_tool_approval_response(
        "ap1",
        false,
        Some("not now".into()),
        now
    )));
    let next = h.last(RequestKind::Chat);
    assert_eq!(waiting(&h), [], "answered: nothing waits");
    let sent = next.body()["messages"].as_array().unwrap().clone();
    let p = &sent[1]["parts"][1];
    assert_eq!(p["state"], "approval-responded");
    assert_eq!(
        p["approval"],
        json!({"id": "ap1", "approved": false, "reason": "not now"})
    );
}

// Found by review (helper-28) of the pending answer, as were
// `a_violation_as_first_write_leaves_no_empty_answer` (tests/store_ai_sdk.rs) and
// `clear_error_while_streaming_then_error_status_without_error` (tests/store_pi_mode.rs): each
// failed before its fix.

/// A tool output the user adds while the continued message is pending (after `start`,
/// before the first writing chunk) is lost when the stale copy enters the history.
#[test]
fn tool_output_added_while_pending_is_kept() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    let chat = continued_tool_turn(&mut h, &["c1", "c2"]);
    h.respond(
        chat.id,
        Reply::sse(sse(&[
            json!({"type": "start"}),
            json!({"type": "start-step"}),
        ]))
        .open(),
    );
    assert_eq!(h.store.status(), Status::Submitted);
    // The user (or the host's tool) answers the second call while the model thinks.
    assert!(h.act(|s, now| s.use_chat().add_tool_output("c2", Ok(json!(2)), now)));
    assert_eq!(
        tool_state(&h, "c2"),
        Some(agent_chat_store::ToolState::OutputAvailable)
    );
    h.body(
        chat.id,
        &sse(&[
            json!({"type": "text-start", "id": "t"}),
            json!({"type": "text-delta", "id": "t", "delta": "ok"}),
        ]),
    );
    assert_eq!(
        tool_state(&h, "c2"),
        Some(agent_chat_store::ToolState::OutputAvailable),
        "the output the user added is gone"
    );
}

/// A continued message whose current step has parts: a `reset-step` first thing writes in
/// useChat (the step's parts go, status streaming); the store leaves it pending.
#[test]
fn reset_step_on_continued_message() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    let chat = continued_tool_turn(&mut h, &["c1"]);
    h.respond(
        chat.id,
        Reply::sse(sse(&[
            json!({"type": "start"}),
            json!({"type": "reset-step"}),
        ]))
        .open(),
    );
    assert_eq!(h.store.status(), Status::Streaming, "useChat: streaming");
    assert_eq!(
        tool_state(&h, "c1"),
        None,
        "useChat: the step's tool part is gone"
    );
}
