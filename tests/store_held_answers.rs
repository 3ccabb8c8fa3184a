//! Answers given before the call can take them (SPEC §13, held answers): a tool UI renders
//! its form from the call's input, known before the server asks (pi) or while the input still
//! streams (AI SDK mode). The store takes such an answer, shows it held
//! (`pending.held`), and gives it exactly once when the call can take it; when the call ends,
//! or the turn does, first, the answer is let go with a `NotAsked` error, shown.

#![cfg(feature = "pi")]

use crate::common;

use agent_chat_store::{ErrorKind, RequestKind, ToolState};
use common::native_store::*;
use common::scenario::*;
use common::*;
use serde_json::{json, Value};

const TOOL_OUTPUT: &str = "/api/v1/agent/chat/S/tool-output";

/// A pi turn streaming whose answer `a1` called `askUser` (`q1`), the server not asking yet.
fn called(h: &mut Harness) -> u64 {
    let chat = streaming_turn(h, "ask which colour");
    let body = sse(&[
        pi_chunk(
            "message-start",
            2,
            json!({"messageId": "a1", "role": "assistant"}),
        ),
        pi_chunk(
            "tool-call-start",
            3,
            json!({"messageId": "a1", "toolCallId": "q1", "toolName": "askUser"}),
        ),
        pi_chunk(
            "tool-call-end",
            4,
            json!({"messageId": "a1", "toolCallId": "q1", "input": {"question": "which colour"}}),
        ),
    ]);
    h.body(chat, &body);
    chat
}

fn ask(seq: u64) -> Value {
    pi_chunk(
        "tool-input-request",
        seq,
        json!({"messageId": "a1", "toolCallId": "q1", "question": "which colour", "options": ["red", "green"]}),
    )
}

fn held(h: &Harness) -> Vec<Value> {
    (h.store.session().held_answers().iter())
        .map(|a| serde_json::to_value(a).unwrap())
        .collect()
}

#[test]
fn an_answer_before_the_ask_is_held_then_posted_once_when_asked() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = called(&mut h);
    assert!(
        h.act(|s, now| s.use_chat().add_tool_output("q1", Ok(json!("green")), now)),
        "taken, not refused"
    );
    assert_eq!(
        held(&h),
        [json!({"toolCallId": "q1", "toolName": "askUser", "messageId": "a1", "output": "green"})]
    );
    assert_eq!(h.count(RequestKind::ToolOutputPost), 0, "not asked yet");
    assert_eq!(tool_state(&h, "q1"), Some(ToolState::InputAvailable));
    assert!(h.errors().is_empty());

    h.body(chat, &sse(&[ask(5)]));
    let post = h.the_open(RequestKind::ToolOutputPost);
    assert_eq!(post.path, TOOL_OUTPUT);
    assert_eq!(post.body(), &json!({"toolCallId": "q1", "output": "green"}));
    assert!(held(&h).is_empty(), "given, no longer held");
    assert_eq!(tool_state(&h, "q1"), Some(ToolState::OutputAvailable));
    assert!(h.store.session().pending_from(0).is_empty());
    h.respond(post.id, Reply::status(202));
    // The ask replayed (a resumed stream) and the result: nothing goes again.
    h.body(chat, &sse(&[ask(5)]));
    h.body(
        chat,
        &sse(&[pi_chunk(
            "tool-result",
            6,
            json!({"messageId": "a1", "toolCallId": "q1", "output": {"content": [{"type": "text", "text": "green"}]}}),
        )]),
    );
    end_turn(&mut h, chat);
    assert_eq!(h.count(RequestKind::ToolOutputPost), 1, "exactly once");
    assert!(h.errors().is_empty());
}

#[test]
fn a_held_answer_is_replaced_by_a_later_one_and_only_that_goes() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = called(&mut h);
    assert!(h.act(|s, now| s.use_chat().add_tool_output("q1", Ok(json!("red")), now)));
    assert!(h.act(|s, now| s.use_chat().add_tool_output("q1", Err("no".into()), now)));
    assert_eq!(held(&h).len(), 1);
    assert_eq!(held(&h)[0]["errorText"], "no");
    h.body(chat, &sse(&[ask(5)]));
    let post = h.the_open(RequestKind::ToolOutputPost);
    assert_eq!(post.body(), &json!({"toolCallId": "q1", "errorText": "no"}));
    assert_eq!(h.count(RequestKind::ToolOutputPost), 1);
}

#[test]
fn a_held_answer_whose_call_ends_first_is_let_go_with_a_not_asked_error() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = called(&mut h);
    assert!(h.act(|s, now| s.use_chat().add_tool_output("q1", Ok(json!("green")), now)));
    h.body(
        chat,
        &sse(&[pi_chunk(
            "tool-result",
            5,
            json!({"messageId": "a1", "toolCallId": "q1", "output": {"content": [{"type": "text", "text": "blue"}]}}),
        )]),
    );
    let error = h.errors().last().cloned().cloned().expect("told");
    assert_eq!(error.kind, ErrorKind::NotAsked);
    let shown = held(&h);
    assert_eq!(shown.len(), 1, "shown, with its error");
    assert_eq!(shown[0]["error"]["kind"], "NotAsked");
    assert_eq!(shown[0]["output"], "green");
    end_turn(&mut h, chat);
    assert_eq!(h.count(RequestKind::ToolOutputPost), 0);
    assert_eq!(h.errors().len(), 1, "told once");
    // The next turn starts clean.
    streaming_turn(&mut h, "again");
    assert!(held(&h).is_empty());
}

#[test]
fn a_held_answer_is_let_go_when_the_turn_ends_or_stops_unasked() {
    for stop in [false, true] {
        let mut h = Harness::with_caps(PI_CAPS);
        let chat = called(&mut h);
        assert!(h.act(|s, now| s.use_chat().add_tool_output("q1", Ok(json!("green")), now)));
        match stop {
            true => h.stop(),
            false => end_turn(&mut h, chat),
        }
        assert_eq!(held(&h)[0]["error"]["kind"], "NotAsked", "stop: {stop}");
        assert!(h.errors().iter().any(|e| e.kind == ErrorKind::NotAsked));
        assert_eq!(h.count(RequestKind::ToolOutputPost), 0);
    }
}

#[test]
fn an_answer_to_an_unknown_or_finished_call_is_still_refused() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = called(&mut h);
    assert!(!h.act(|s, now| s.use_chat().add_tool_output("nope", Ok(json!(1)), now)));
    h.body(
        chat,
        &sse(&[pi_chunk(
            "tool-result",
            5,
            json!({"messageId": "a1", "toolCallId": "q1", "output": {"content": []}}),
        )]),
    );
    assert!(!h.act(|s, now| s.use_chat().add_tool_output("q1", Ok(json!(1)), now)));
    assert!(held(&h).is_empty());
    end_turn(&mut h, chat);
    assert!(h.errors().is_empty());
}

/// pi-native has no ask at this protocol version: an early answer is held and let go, told,
/// when the run ends; nothing is posted.
#[test]
fn pi_native_holds_an_early_answer_and_lets_it_go_at_the_runs_end() {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "hi");
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "message-start", "seq": 2, "messageId": "a1", "role": "assistant"}),
            json!({"type": "tool-call", "seq": 3, "messageId": "a1", "toolCallId": "q1", "toolName": "askUser", "input": {}}),
        ],
    );
    assert!(h.act(|s, now| s.use_chat().add_tool_output("q1", Ok(json!("green")), now)));
    assert_eq!(held(&h).len(), 1);
    assert!(held(&h)[0].get("error").is_none());
    feed(
        &mut h,
        ev,
        &[json!({"type": "agent-end", "seq": 4, "turnId": "t1", "status": "ok"})],
    );
    assert_eq!(held(&h)[0]["error"]["kind"], "NotAsked");
    assert!(h.errors().iter().any(|e| e.kind == ErrorKind::NotAsked));
    assert_eq!(h.count(RequestKind::ToolOutputPost), 0);
}

/// AI SDK mode: the browser's tool answered while the call's input still streams is held,
/// and the output written once the input is whole; then the turn continues as usual.
#[test]
fn ai_sdk_an_output_while_the_input_streams_is_held_until_the_input_is_whole() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    h.send("go");
    let chat = h.last(RequestKind::Chat).id;
    let first = sse(&[
        json!({"type": "start", "messageId": "a1"}),
        json!({"type": "start-step"}),
        json!({"type": "tool-input-start", "toolCallId": "c1", "toolName": "pick"}),
        json!({"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "{\"a\":"}),
    ]);
    h.respond(chat, Reply::sse(first).open());
    assert_eq!(tool_state(&h, "c1"), Some(ToolState::InputStreaming));
    assert!(h.act(|s, now| s
        .use_chat()
        .add_tool_output("c1", Ok(json!({"ok": 1})), now)));
    assert_eq!(held(&h).len(), 1);
    assert_eq!(tool_state(&h, "c1"), Some(ToolState::InputStreaming));
    h.body(
        chat,
        &sse(&[
            json!({"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "1}"}),
            json!({"type": "tool-input-available", "toolCallId": "c1", "toolName": "pick", "input": {"a": 1}}),
        ]),
    );
    assert_eq!(tool_state(&h, "c1"), Some(ToolState::OutputAvailable));
    assert!(held(&h).is_empty());
    let part = (h.store.messages().iter().flat_map(|m| m.parts.iter()))
        .find_map(|p| p.as_tool().filter(|t| t.tool_call_id == "c1"))
        .cloned()
        .unwrap();
    assert_eq!(part.output.map(|o| o.into_value()), Some(json!({"ok": 1})));
    assert!(h.errors().is_empty());
}
