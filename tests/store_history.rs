//! History ownership and persistence (SPEC §8): the AI SDK history built from standard chunks
//! and PUT once (without long `data:` URLs); pi mode never PUTs nor sends history; `data-pi-mode`
//! hands a session fetched as AI SDK to the pi projection (§4); hydration that lands after a
//! send or mid-stream.

// Most of these tests run pi mode; what they share goes unused without it.
#![cfg_attr(not(feature = "pi"), allow(unused))]

use crate::common;

use agent_chat_store::Status;
use agent_chat_store::{Method, RequestKind, StoreEvent};
use common::scenario::*;
use common::*;
use serde_json::{json, Value};

#[test]
fn ai_sdk_history_is_built_from_standard_chunks_and_put_once() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    let data_url = "data:image/png;base64,iVBORw0KGgo=";
    h.send_files("what is this?", vec![file(data_url)]);
    let chat = h.the_open(RequestKind::Chat);
    let body = chat.body();
    let sent_history = body["messages"]
        .as_array()
        .expect("AI SDK mode sends history");
    assert_eq!(sent_history.len(), 1);
    assert_eq!(sent_history[0]["role"], "user");
    // The model needs the bytes: the request's history keeps the data: URL (only the stored
    // copy drops it).
    assert_eq!(sent_history[0]["parts"][0]["url"], data_url);
    assert_eq!(body["attachments"][0]["url"], data_url);

    let seen = h.respond(chat.id, Reply::sse(ai_sdk_stream()).chunked(33).open());
    assert_eq!(*seen.last().unwrap(), Status::Streaming);
    assert_eq!(
        h.count(RequestKind::MessagesPut),
        0,
        "not before the turn completes"
    );
    h.end(chat.id);
    assert_eq!(h.store.status(), Status::Ready);

    let msgs = h.history();
    assert_eq!(msgs.len(), 2, "{msgs:#?}");
    assert_eq!(msgs[0]["parts"][0]["type"], "file");
    assert_eq!(
        msgs[0]["parts"][0]["url"], data_url,
        "the UI keeps the image"
    );
    assert_eq!(msgs[0]["parts"][1]["text"], "what is this?");
    assert_eq!(
        msgs[1],
        json!({"id": "msg-ai-1", "role": "assistant",
               "parts": [{"type": "text", "text": "Hello world", "state": "done"}]})
    );
    assert!(h.events.iter().any(|e| *e
        == StoreEvent::Finish {
            finish_reason: Some("stop".into()),
            message_id: Some("msg-ai-1".into()),
            is_abort: false,
            is_disconnect: false,
            is_error: false,
        }));

    let puts = h.requests(RequestKind::MessagesPut);
    assert_eq!(puts.len(), 1);
    assert_eq!(
        (puts[0].method, puts[0].path.as_str()),
        (Method::Put, MESSAGES)
    );
    let stored = puts[0].body()["messages"].as_array().unwrap().clone();
    assert_eq!(stored.len(), 2);
    let file_part = &stored[0]["parts"][0];
    assert_eq!(file_part["type"], "file");
    assert_eq!(file_part["mediaType"], "image/png");
    assert_eq!(
        file_part["url"], data_url,
        "a small data: URL is stored, so the file shows after a reload"
    );
    assert_eq!(stored[1], msgs[1]);
}

#[test]
fn a_data_url_over_the_stored_limit_is_put_without_it() {
    let mut opts = options_with(AI_SDK_CAPS);
    opts.limits.max_stored_data_url_chars = 40;
    let mut h = Harness::new(opts);
    let small = "data:image/png;base64,iVBORw0KGgo=";
    let big = format!("data:image/png;base64,{}", "A".repeat(64));
    h.send_files("two", vec![file(small), file(&big)]);
    let chat = h.the_open(RequestKind::Chat);
    assert_eq!(
        chat.body()["messages"][0]["parts"][1]["url"],
        big.as_str(),
        "the model gets it"
    );
    h.respond(chat.id, Reply::sse(ai_sdk_stream()));
    let stored = h.last(RequestKind::MessagesPut).body()["messages"][0]["parts"].clone();
    assert_eq!(stored[0]["url"], small);
    assert!(stored[1].get("url").is_none(), "{stored}");
    assert_eq!(
        h.history()[0]["parts"][1]["url"],
        big.as_str(),
        "the UI keeps it"
    );
}

#[cfg(feature = "pi")]
#[test]
fn pi_mode_never_puts_and_sends_no_history() {
    let mut h = Harness::with_caps(PI_CAPS);
    for text in ["[A] hello", "again"] {
        h.send(text);
        let chat = h.the_open(RequestKind::Chat);
        assert!(chat.body().get("messages").is_none());
        h.respond(chat.id, Reply::sse(trace()).chunked(300));
        assert_eq!(h.store.status(), Status::Ready);
    }
    h.run_until_idle();
    assert_eq!(h.count(RequestKind::MessagesPut), 0);
}

#[cfg(feature = "pi")]
#[test]
fn data_pi_mode_switches_a_session_fetched_as_ai_sdk_to_pi_authority() {
    let mut h = Harness::new(options());
    let caps = h.the_open(RequestKind::Capabilities).id;
    h.respond(caps, Reply::json(200, json!({"aiSdkOwnsHistory": true})));
    assert!(h.store.capabilities().ai_sdk_owns_history);

    h.send("[A] hello");
    let chat = h.the_open(RequestKind::Chat);
    assert!(chat.body().get("messages").is_some(), "fetched as AI SDK");
    let mut body = sse(&[json!({"type": "data-pi-mode", "data": {"enabled": true}})]);
    body.extend_from_slice(&trace());
    h.respond(chat.id, Reply::sse(body).chunked(97));
    assert!(!h.store.capabilities().ai_sdk_owns_history);
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(
        without_ids(&h.history()),
        without_ids(&canonical_trace_history())
    );
    assert_eq!(h.count(RequestKind::MessagesPut), 0);
    // The next turn is a pi turn too.
    h.send("next");
    assert!(h.last(RequestKind::Chat).body().get("messages").is_none());
}

#[cfg(feature = "pi")]
#[test]
fn hydration_that_lands_after_a_send_keeps_the_new_message_last() {
    let mut h = hydrating(PI_CAPS);
    let hydrate = h.the_open(RequestKind::MessagesGet).id;
    h.send("[A] hello");
    let chat = h.the_open(RequestKind::Chat).id;
    let old = json!([
        {"id": "old-u", "role": "user", "parts": [{"type": "text", "text": "earlier"}]},
        {"id": "old-a", "role": "assistant", "parts": [{"type": "text", "text": "reply", "state": "done"}]},
    ]);
    h.respond(hydrate, Reply::json(200, json!({ "messages": old })));
    let texts: Vec<String> = h.store.messages().iter().map(|m| m.text()).collect();
    assert_eq!(texts, ["earlier", "reply", "[A] hello"]);
    h.respond(chat, Reply::sse(trace()).chunked(256));
    let texts: Vec<String> = h.store.messages().iter().map(|m| m.text()).collect();
    assert_eq!(texts.len(), 6, "{texts:#?}");
    assert_eq!(&texts[..3], ["earlier", "reply", "[A] hello"]);
}

/// The history's answer predates a turn that already ended (here with an HTML page for an
/// answer): the message the user sent is kept, not replaced by the server's older list.
#[test]
fn hydration_that_lands_after_a_turn_ended_keeps_its_message() {
    let mut h = hydrating(AI_SDK_CAPS);
    let hydrate = h.the_open(RequestKind::MessagesGet).id;
    h.send("hello");
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(
        chat,
        Reply::bytes(200, Some("text/html"), "<!doctype html><p>Sign in</p>"),
    );
    assert_eq!(h.store.status(), Status::Error);
    h.respond(hydrate, Reply::json(200, json!({"messages": []})));
    let texts: Vec<String> = h.store.messages().iter().map(|m| m.text()).collect();
    assert_eq!(texts, ["hello"]);
}

#[cfg(feature = "pi")]
#[test]
fn hydration_that_lands_mid_stream_loses_and_duplicates_nothing() {
    let mut h = hydrating(PI_CAPS);
    let hydrate = h.the_open(RequestKind::MessagesGet).id;
    h.send("[A] hello");
    let chat = h.the_open(RequestKind::Chat).id;
    let events = sse_events(&trace());
    h.respond(chat, Reply::sse(events[..20].concat()).open());
    let streamed = h.history();
    // The server's answer predates this turn.
    h.respond(hydrate, Reply::json(200, json!({"messages": []})));
    assert_eq!(h.history(), streamed);
    for e in &events[20..] {
        h.body(chat, e);
    }
    h.end(chat);
    assert_eq!(
        without_ids(&h.history()),
        without_ids(&canonical_trace_history())
    );
}

/// Servers that number each role on its own give a user message and its answer one id: both
/// are kept, the answer under `{id}:assistant`, in a history and in a stream of either kind.
#[cfg(feature = "pi")]
#[test]
fn messages_sharing_an_id_across_roles_stay_separate() {
    let texts = |h: &Harness| -> Vec<(String, String)> {
        let msgs = h.store.messages();
        msgs.iter().map(|m| (m.id.clone(), m.text())).collect()
    };
    let pair = json!({"messages": [
        {"id": "1", "role": "user", "parts": [{"type": "text", "text": "hi"}]},
        {"id": "1", "role": "assistant", "parts": [{"type": "text", "text": "hello"}]},
        {"id": "1", "role": "assistant", "parts": [{"type": "text", "text": "again"}]},
    ]});
    for caps in [AI_SDK_CAPS, PI_CAPS] {
        let mut h = hydrating(caps);
        let get = h.the_open(RequestKind::MessagesGet).id;
        h.respond(get, Reply::json(200, pair.clone()));
        // The same role's duplicate is the same message: its first copy is kept.
        let want = [("1", "hi"), ("1:assistant", "hello")];
        let want: Vec<_> = want
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(texts(&h), want, "{caps:?}");
    }

    // An AI SDK answer whose `start` names the user message's id.
    let mut h = hydrated(
        AI_SDK_CAPS,
        json!({"messages": [
            {"id": "7", "role": "user", "parts": [{"type": "text", "text": "first"}]},
        ]}),
    );
    h.send("second");
    let chat = h.last(RequestKind::Chat);
    h.respond(chat.id, Reply::sse(ai_answer("7", "answer")));
    let t = texts(&h);
    assert_eq!(t.len(), 3, "{t:?}");
    assert_eq!(t[0], ("7".to_string(), "first".to_string()));
    assert_eq!(t[1].1, "second");
    assert_eq!(t[2], ("7:assistant".to_string(), "answer".to_string()));

    // A pi answer whose message-start names the user message's id: its deltas go to it, not
    // into the user's message.
    let mut h = hydrated(
        PI_CAPS,
        json!({"messages": [
            {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "first"}]},
        ]}),
    );
    h.send("second");
    let chat = h.last(RequestKind::Chat);
    let ids = json!({"messageId": "u1", "partId": "p"});
    let with = |extra: Value| {
        let mut d = ids.clone();
        d.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        d
    };
    let body = sse(&[
        pi_chunk(
            "message-start",
            1,
            json!({"messageId": "u1", "role": "assistant"}),
        ),
        pi_chunk("text-start", 2, with(json!({}))),
        pi_chunk("text-delta", 3, with(json!({"delta": "answer"}))),
        pi_chunk("text-end", 4, with(json!({}))),
        pi_chunk(
            "message-end",
            5,
            json!({"messageId": "u1", "role": "assistant"}),
        ),
    ]);
    h.respond(chat.id, Reply::sse(body));
    let t = texts(&h);
    assert_eq!(
        t.first(),
        Some(&("u1".to_string(), "first".to_string())),
        "{t:?}"
    );
    assert_eq!(
        t.last(),
        Some(&("u1:assistant".to_string(), "answer".to_string())),
        "{t:?}"
    );
}
