//! What the drop-in `useChat` needs of the core (AI SDK mode): a send's own body keys,
//! headers, request metadata and user-message metadata; the finish event after every turn
//! (a stop, a failure, a lost stream included) with what `onFinish` reports; the tool calls
//! `onToolCall` hears of; `setMessages`; a file's `providerReference`; a store that keeps no
//! history on the server (`persist: false`).

use crate::common;

use agent_chat_store::{
    AutoSend, ErrorKind, FileAttachment, RequestKind, SendOptions, Status, StoreEvent, SubmitKind,
    ToolCall, UIMessage,
};
use common::scenario::*;
use common::*;
use serde_json::{json, Map, Value};

fn body_keys(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

fn finishes(h: &Harness) -> Vec<StoreEvent> {
    h.events
        .iter()
        .filter(|e| matches!(e, StoreEvent::Finish { .. }))
        .cloned()
        .collect()
}

fn finish(
    reason: Option<&str>,
    message_id: Option<&str>,
    (is_abort, is_disconnect, is_error): (bool, bool, bool),
) -> StoreEvent {
    StoreEvent::Finish {
        finish_reason: reason.map(str::to_string),
        message_id: message_id.map(str::to_string),
        is_abort,
        is_disconnect,
        is_error,
    }
}

#[test]
fn a_sends_body_keys_merge_after_the_stores_own_and_its_headers_ride_with_the_request() {
    let mut opts = options_with(AI_SDK_CAPS);
    opts.body = body_keys(json!({"model": "store-default", "tenant": "t1", "id": "nope"}));
    let mut h = Harness::new(opts);
    let options = SendOptions {
        body: body_keys(json!({"model": "gpt-x", "messages": [], "trigger": "hijack", "x": 1})),
        headers: vec![("x-model".into(), "gpt-x".into())],
        metadata: Some(json!({"requestOnly": true})),
        message_metadata: Some(json!({"sentAt": 5})),
        message_id: Some("u-host-1".into()),
        response_id: None,
    };
    let r = h.act(|s, now| s.send_with("hi", vec![], options, now));
    assert_eq!(r.kind, SubmitKind::Sent);
    let chat = h.the_open(RequestKind::Chat);
    let body = chat.body();
    // The send's keys over the store's `body` option; neither replaces the store's keys.
    assert_eq!(body["model"], "gpt-x");
    assert_eq!(body["tenant"], "t1");
    assert_eq!(body["x"], 1);
    assert_eq!(body["id"], SESSION);
    assert_eq!(body["trigger"], "submit-message");
    assert_eq!(
        body["messages"].as_array().unwrap().len(),
        1,
        "the history, not the send's"
    );
    assert!(
        body.get("requestOnly").is_none(),
        "request metadata is never sent"
    );
    // The user message carries the host's id and metadata.
    let user = &body["messages"][0];
    assert_eq!(user["id"], "u-host-1");
    assert_eq!(user["metadata"], json!({"sentAt": 5}));
    assert_eq!(h.history()[0]["metadata"], json!({"sentAt": 5}));
    let carried = chat
        .options
        .as_ref()
        .expect("headers ride with the request");
    assert_eq!(
        carried.headers,
        vec![("x-model".to_string(), "gpt-x".to_string())]
    );
    assert_eq!(carried.metadata, Some(json!({"requestOnly": true})));
}

#[test]
fn a_host_message_id_the_history_has_is_not_reused() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    let id = |s: &str| SendOptions {
        message_id: Some(s.into()),
        ..SendOptions::default()
    };
    h.act(|s, now| s.send_with("one", vec![], id("same"), now));
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(chat, Reply::sse(ai_answer("a1", "ok")));
    h.act(|s, now| s.send_with("two", vec![], id("same"), now));
    let ids: Vec<Value> = h.history().iter().map(|m| m["id"].clone()).collect();
    assert_eq!(ids[0], "same");
    assert_ne!(ids[2], "same", "two messages never share an id: {ids:?}");
}

#[test]
fn regenerate_and_continue_carry_their_own_options_and_automatic_sends_the_last_ones() {
    let mut h = auto_sending(AutoSend::ToolCallsComplete);
    let options = SendOptions {
        body: body_keys(json!({"model": "m2"})),
        headers: vec![("x-a".into(), "1".into())],
        ..SendOptions::default()
    };
    h.act(|s, now| s.send_with("where am I?", vec![], options, now));
    let chat = h.the_open(RequestKind::Chat).id;
    let mut body = sse(&[
        json!({"type": "start", "messageId": "a1"}),
        json!({"type": "start-step"}),
        json!({"type": "tool-input-available", "toolCallId": "c1", "toolName": "getLocation", "input": {}}),
        json!({"type": "finish-step"}),
        json!({"type": "finish", "finishReason": "tool-calls"}),
    ]);
    body.extend_from_slice(DONE);
    h.respond(chat, Reply::sse(body));
    assert!(h.act(|s, now| s.use_chat().add_tool_output("c1", Ok(json!("Paris")), now)));
    // The automatic continuation sends what the request it continues sent.
    let auto = h.the_open(RequestKind::Chat);
    assert_eq!(auto.body()["model"], "m2");
    assert_eq!(auto.options.as_ref().unwrap().headers[0].0, "x-a");
    h.respond(auto.id, Reply::sse(ai_answer("a1", "You are in Paris.")));
    // A regenerate with options of its own.
    let regen = SendOptions {
        body: body_keys(json!({"model": "m3"})),
        ..SendOptions::default()
    };
    assert!(h.act(|s, now| s.use_chat().regenerate_with(None, regen, now)));
    let again = h.the_open(RequestKind::Chat);
    assert_eq!(again.body()["trigger"], "regenerate-message");
    assert_eq!(again.body()["model"], "m3");
    assert!(again.options.is_none(), "no headers given, none carried");
}

#[cfg(feature = "pi")]
#[test]
fn a_follow_up_posts_its_own_body_keys_and_headers() {
    let mut opts = options_with(PI_CAPS);
    opts.body = body_keys(json!({"tenant": "t1"}));
    let mut h = Harness::new(opts);
    streaming_turn(&mut h, "first");
    let options = SendOptions {
        body: body_keys(json!({"priority": "high", "clientSeq": 0})),
        headers: vec![("x-b".into(), "2".into())],
        ..SendOptions::default()
    };
    assert_eq!(
        h.act(|s, now| s.send_with("more", vec![], options, now))
            .kind,
        SubmitKind::Queued
    );
    let post = h.the_open(RequestKind::FollowUpPost);
    assert_eq!(post.body()["priority"], "high");
    assert_eq!(post.body()["tenant"], "t1");
    assert!(post.client_seq() > 0, "the store's clientSeq is kept");
    assert_eq!(post.options.as_ref().unwrap().headers[0].1, "2");
}

#[test]
fn the_finish_event_follows_every_ending_with_what_on_finish_reports() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    // A natural end.
    h.send("one");
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(chat, Reply::sse(ai_answer("a1", "done")));
    // A stop mid-answer.
    h.send("two");
    let chat = h.the_open(RequestKind::Chat).id;
    let partial = sse(&[
        json!({"type": "start", "messageId": "a2"}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": "par"}),
    ]);
    h.respond(chat, Reply::sse(partial).open());
    h.stop();
    // A failed chat POST (nothing answered).
    h.send("three");
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(chat, Reply::error(500, "internal", "boom"));
    // An `error` chunk.
    h.act(|s, _| s.turn_mut().clear_error());
    h.send("four");
    let chat = h.the_open(RequestKind::Chat).id;
    let failed = sse(&[
        json!({"type": "start", "messageId": "a4"}),
        json!({"type": "error", "errorText": "model failed"}),
    ]);
    h.respond(chat, Reply::sse(failed));
    assert_eq!(
        finishes(&h),
        vec![
            finish(Some("stop"), Some("a1"), (false, false, false)),
            finish(None, Some("a2"), (true, false, false)),
            finish(None, None, (false, false, true)),
            finish(None, Some("a4"), (false, false, true)),
        ]
    );
    assert_eq!(h.store.status(), Status::Error);
}

#[test]
fn a_stream_lost_for_good_finishes_as_a_disconnect() {
    let mut opts = options_with(AI_SDK_CAPS);
    opts.resume_attempts = 0;
    let mut h = Harness::new(opts);
    h.send("hi");
    let chat = h.the_open(RequestKind::Chat).id;
    let partial = sse(&[
        json!({"type": "start", "messageId": "a1"}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": "half"}),
    ]);
    h.respond(chat, Reply::sse(partial).broken("connection reset"));
    let last = finishes(&h).pop().expect("a finish event");
    assert_eq!(last, finish(None, Some("a1"), (false, true, true)));
    assert_eq!(h.errors().last().unwrap().kind, ErrorKind::Network);
    assert_eq!(
        h.history()[1]["parts"][0]["text"],
        "half",
        "what came is kept"
    );
}

#[test]
fn client_tool_calls_are_told_once_and_provider_executed_ones_never() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    tool_step_turn(
        &mut h,
        "go",
        &[
            json!({"type": "tool-input-start", "toolCallId": "c1", "toolName": "getLocation"}),
            json!({"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "{\"pre\":"}),
            json!({"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "1}"}),
            json!({"type": "tool-input-available", "toolCallId": "c1", "toolName": "getLocation", "input": {"pre": 1}}),
            json!({"type": "tool-input-available", "toolCallId": "c2", "toolName": "search", "input": {"q": "x"}, "providerExecuted": true}),
            json!({"type": "tool-input-available", "toolCallId": "c3", "toolName": "any", "input": {}, "dynamic": true}),
        ],
        Some("tool-calls"),
    );
    let calls: Vec<&ToolCall> = h
        .events
        .iter()
        .filter_map(|e| match e {
            StoreEvent::ToolCall { call } => Some(call),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0].tool_call_id, "c1");
    assert_eq!(calls[0].tool_name, "getLocation");
    assert_eq!(calls[0].input, json!({"pre": 1}));
    assert!(!calls[0].dynamic);
    assert_eq!(
        (calls[1].tool_call_id.as_str(), calls[1].dynamic),
        ("c3", true)
    );
    // The host answers as `onToolCall` does, with `addToolOutput`.
    assert!(h.act(|s, now| s
        .use_chat()
        .add_tool_output("c1", Ok(json!({"city": "Paris"})), now)));
    let part = &h.history()[1]["parts"][1];
    assert_eq!(part["state"], "output-available");
    assert_eq!(part["output"], json!({"city": "Paris"}));
}

#[test]
fn set_messages_replaces_the_history_when_idle_and_refuses_while_a_turn_runs() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    let messages = vec![
        UIMessage::user_text("u1", "earlier"),
        UIMessage::from_json(json!({"id": "a1", "role": "assistant",
            "parts": [{"type": "text", "text": "answer"}]}))
        .unwrap(),
    ];
    assert!(h.store.use_chat().set_messages(messages.clone()));
    assert_eq!(h.history().len(), 2);
    h.send("next");
    let chat = h.the_open(RequestKind::Chat);
    assert_eq!(
        chat.body()["messages"].as_array().unwrap().len(),
        3,
        "sent with the turn"
    );
    assert!(!h.store.use_chat().set_messages(vec![]), "a turn runs");
    assert_eq!(h.history().len(), 3, "nothing changed");
    h.respond(chat.id, Reply::sse(ai_answer("a2", "ok")));
    assert!(h.store.use_chat().set_messages(vec![]));
    assert!(h.history().is_empty());
}

#[test]
fn a_files_provider_reference_is_kept_in_the_message_the_request_and_the_stored_history() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    let reference = json!({"openai": "file-abc"});
    let f = FileAttachment {
        media_type: "application/pdf".into(),
        filename: Some("a.pdf".into()),
        url: "https://files.example/a.pdf".into(),
        provider_reference: Some(reference.clone()),
        provider_metadata: None,
    };
    h.send_files("read this", vec![f]);
    let chat = h.the_open(RequestKind::Chat);
    assert_eq!(
        chat.body()["messages"][0]["parts"][0]["providerReference"],
        reference
    );
    h.respond(chat.id, Reply::sse(ai_answer("a1", "ok")));
    assert_eq!(h.history()[0]["parts"][0]["providerReference"], reference);
    let put = h.last(RequestKind::MessagesPut);
    assert_eq!(
        put.body()["messages"][0]["parts"][0]["providerReference"],
        reference
    );
    // A history read back keeps it too.
    let read = UIMessage::from_json(put.body()["messages"][0].clone()).unwrap();
    let back: Value = serde_json::from_str(&read.to_json()).unwrap();
    assert_eq!(back, put.body()["messages"][0]);
}

#[test]
fn a_store_that_does_not_persist_never_puts() {
    let mut opts = options_with(AI_SDK_CAPS);
    opts.persist = false;
    let mut h = Harness::new(opts);
    h.send("hi");
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(chat, Reply::sse(ai_answer("a1", "ok")));
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(h.count(RequestKind::MessagesPut), 0);
}

/// An answer whose stream names no message (`start` without `messageId`), as a plain AI SDK
/// route handler's `toUIMessageStreamResponse()` sends it.
fn unnamed_answer(text: &str) -> Vec<u8> {
    let mut body = sse(&[
        json!({"type": "start"}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": text}),
        json!({"type": "text-end", "id": "t"}),
        json!({"type": "finish", "finishReason": "stop"}),
    ]);
    body.extend_from_slice(DONE);
    body
}

fn ai_sdk_requests() -> Harness {
    let mut opts = options_with(AI_SDK_CAPS);
    opts.ai_sdk_requests = true;
    opts.persist = false;
    Harness::new(opts)
}

#[test]
fn ai_sdk_requests_name_no_message_on_a_submit_and_regenerate_answers_anew() {
    let mut h = ai_sdk_requests();
    let ids = |u: &str, a: &str| SendOptions {
        message_id: Some(u.into()),
        response_id: Some(a.into()),
        ..SendOptions::default()
    };
    h.act(|s, now| s.send_with("hi", vec![], ids("id-0", "id-1"), now));
    let chat = h.the_open(RequestKind::Chat);
    assert!(
        chat.body().get("messageId").is_none(),
        "the ai package's transport names no message on a submit: {}",
        chat.body()
    );
    h.respond(chat.id, Reply::sse(unnamed_answer("first")));
    let history = h.history();
    assert_eq!(history[1]["id"], "id-1", "the host's id for the answer");
    // A regenerate of the last answer: the body names no message unless the host did, and
    // the new answer is a new message, never the old one continued.
    let regen = SendOptions {
        response_id: Some("id-2".into()),
        ..SendOptions::default()
    };
    assert!(h.act(|s, now| s.use_chat().regenerate_with(None, regen, now)));
    let again = h.the_open(RequestKind::Chat);
    assert_eq!(again.body()["trigger"], "regenerate-message");
    assert!(again.body().get("messageId").is_none(), "{}", again.body());
    assert_eq!(again.body()["messages"].as_array().unwrap().len(), 1);
    h.respond(again.id, Reply::sse(unnamed_answer("second")));
    let history = h.history();
    assert_eq!(history.len(), 2);
    assert_eq!(history[1]["id"], "id-2");
    assert_eq!(history[1]["parts"][0]["text"], "second");
    // A named regenerate names it, as `regenerate({messageId})` does.
    assert!(h.act(|s, now| s.use_chat().regenerate_with(
        Some("id-2"),
        SendOptions::default(),
        now
    )));
    assert_eq!(h.the_open(RequestKind::Chat).body()["messageId"], "id-2");
}

#[test]
fn an_answer_id_the_history_holds_or_a_named_stream_wins_over_the_hosts() {
    let mut h = ai_sdk_requests();
    let answer = |a: &str| SendOptions {
        response_id: Some(a.into()),
        ..SendOptions::default()
    };
    h.act(|s, now| s.send_with("one", vec![], answer("taken"), now));
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(chat, Reply::sse(ai_answer("taken", "named by the stream")));
    // The stream's own id wins; a later answer offered the same id gets a fresh one.
    h.act(|s, now| s.send_with("two", vec![], answer("taken"), now));
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(chat, Reply::sse(unnamed_answer("unnamed")));
    let ids: Vec<Value> = h.history().iter().map(|m| m["id"].clone()).collect();
    assert_eq!(ids[1], "taken");
    assert_ne!(ids[3], "taken", "two messages never share an id: {ids:?}");
    assert_eq!(h.history()[3]["parts"][0]["text"], "unnamed");
}

#[test]
fn with_a_prepare_hook_the_request_carries_the_body_the_hook_sees() {
    let mut opts = options_with(AI_SDK_CAPS);
    opts.body = body_keys(json!({"tenant": "t1", "model": "default"}));
    opts.prepare_hook = true;
    let mut h = Harness::new(opts);
    let options = SendOptions {
        body: body_keys(json!({"model": "m2"})),
        ..SendOptions::default()
    };
    h.act(|s, now| s.send_with("hi", vec![], options, now));
    let chat = h.the_open(RequestKind::Chat);
    let carried = chat.options.as_ref().expect("the hook's body rides along");
    assert_eq!(
        carried.body["model"], "m2",
        "the send's keys over the store's"
    );
    assert_eq!(carried.body["tenant"], "t1");
    assert!(
        carried.body.get("trigger").is_none() && carried.body.get("id").is_none(),
        "the store's own keys are not the hook's body: {:?}",
        carried.body
    );
    // With a hook and no keys of the host's, the hook's body is empty, not the store's.
    let mut opts = options_with(AI_SDK_CAPS);
    opts.prepare_hook = true;
    let mut h = Harness::new(opts);
    h.send("hi");
    let chat = h.the_open(RequestKind::Chat);
    assert_eq!(chat.options.as_ref().map(|o| o.body.len()), Some(0));
    // Without a hook nothing rides along but headers and metadata.
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    let options = SendOptions {
        body: body_keys(json!({"model": "m2"})),
        ..SendOptions::default()
    };
    h.act(|s, now| s.send_with("hi", vec![], options, now));
    assert!(h.the_open(RequestKind::Chat).options.is_none());
}

#[test]
fn with_ai_sdk_requests_a_resume_is_submitted_until_it_writes_and_a_refused_one_fails() {
    let mut h = ai_sdk_requests();
    assert!(h.act(|s, now| s.turn_mut().resume_stream(now)));
    assert_eq!(h.store.status(), Status::Ready, "nothing shown while asked");
    let probe = h.the_open(RequestKind::StreamResume).id;
    let mut body = sse(&[json!({"type": "start", "messageId": "a1"})]);
    h.respond(probe, Reply::sse(body.clone()).open());
    assert_eq!(
        h.store.status(),
        Status::Submitted,
        "a running turn, nothing written yet"
    );
    body = sse(&[
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": "resumed"}),
    ]);
    h.body(probe, &body);
    assert_eq!(h.store.status(), Status::Streaming);
    h.end(probe);
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(h.history()[0]["parts"][0]["text"], "resumed");
    // A refused resume is an error, as the `ai` package's, with the server's words.
    assert!(h.act(|s, now| s.turn_mut().resume_stream(now)));
    let probe = h.the_open(RequestKind::StreamResume).id;
    let seen = h.respond(
        probe,
        Reply::error(500, "internal", "Internal server error"),
    );
    assert_eq!(seen.last(), Some(&Status::Error));
    assert!(
        !seen.contains(&Status::Submitted),
        "no flash of submitted: {seen:?}"
    );
    assert!(h
        .errors()
        .last()
        .unwrap()
        .message
        .contains("Internal server error"));
    assert_eq!(
        finishes(&h).last(),
        Some(&finish(None, Some("a1"), (false, false, true)))
    );
    // Without the option, a refused probe says nothing runs (SPEC §12).
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    assert!(h.act(|s, now| s.turn_mut().resume_stream(now)));
    let probe = h.the_open(RequestKind::StreamResume).id;
    h.respond(
        probe,
        Reply::error(500, "internal", "Internal server error"),
    );
    assert_eq!(h.store.status(), Status::Ready);
}
