//! Errors and bad input (SPEC §2's error kinds, §10): `turn_already_active`, a malformed chunk,
//! a provider error in the stream (the queue kept), an HTML page instead of the stream, and a
//! character split between two deltas as lone-surrogate escapes.

// Most of these tests run pi mode; what they share goes unused without it.
#![cfg_attr(not(feature = "pi"), allow(unused))]

use crate::common;

use agent_chat_store::ItemState;
use agent_chat_store::Status;
use agent_chat_store::{ErrorKind, Role};
use agent_chat_store::{RequestKind, SubmitKind};
use common::scenario::*;
use common::*;

/// SPEC §6 (amended): a 409 `turn_already_active` is not a failure of the message. The body is
/// read whole (here in 7-byte pieces) and recognised by its message as well as its code; the
/// store attaches to the running turn and posts the message to it (tests/store_attach.rs has
/// the rest: the follow-up consumed, the draft given back without native follow-ups).
#[cfg(feature = "pi")]
#[test]
fn turn_already_active_attaches_and_queues_the_message() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.submit("hello");
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(
        chat,
        Reply::error(409, "conflict", "turn_already_active").chunked(7),
    );
    assert_eq!(h.store.status(), Status::Streaming);
    assert!(h.store.session().error().is_none());
    assert!(h.errors().is_empty(), "{:?}", h.errors());
    assert!(h.store.messages().is_empty(), "the refused bubble stays");
    let queued: Vec<&str> = h
        .store
        .session()
        .queued()
        .iter()
        .map(|q| q.text.as_str())
        .collect();
    assert_eq!(queued, ["hello"]);
    assert_eq!(h.count(RequestKind::StreamResume), 1);
}

#[cfg(feature = "pi")]
#[test]
fn a_malformed_chunk_is_a_protocol_error_and_the_stream_goes_on() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("[A] hello");
    let chat = h.the_open(RequestKind::Chat).id;
    let events = sse_events(&trace());
    let (before, after) = events.split_at(20);
    h.respond(chat, Reply::sse(before.concat()).open());
    let kept = h.history();
    h.body(
        chat,
        b"data: {\"type\":\"data-pi-text-delta\",\"data\":{\"seq\":\n\n",
    );
    assert_eq!(h.history(), kept, "earlier history intact");
    let protocol: Vec<_> = h
        .errors()
        .into_iter()
        .filter(|e| e.kind == ErrorKind::Protocol)
        .collect();
    assert_eq!(protocol.len(), 1);
    assert_eq!(h.store.status(), Status::Streaming);
    for e in after {
        h.body(chat, e);
    }
    h.end(chat);
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(
        without_ids(&h.history()),
        without_ids(&canonical_trace_history())
    );
}

#[cfg(feature = "pi")]
#[test]
fn a_provider_error_in_the_stream_ends_the_turn_in_error_and_keeps_the_queue() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("[ERR] trigger provider error");
    let chat = h.the_open(RequestKind::Chat).id;
    let trace = fixture("trace-provider-error.sse");
    let events = sse_events(&trace);
    h.respond(chat, Reply::sse(events[..3].concat()).open());
    h.submit("queued meanwhile");
    let p = h.the_open(RequestKind::FollowUpPost);
    h.respond(p.id, accepted());
    for e in &events[3..] {
        h.body(chat, e);
    }
    h.end(chat);
    assert_eq!(h.store.status(), Status::Error);
    let e = h.store.session().error().unwrap();
    assert_eq!(e.message, "400 scripted bad request");
    let roles: Vec<Role> = h.store.messages().iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant]);
    assert_eq!(h.store.session().queued()[0].state, ItemState::Stalled);
    assert_eq!(
        h.count(RequestKind::Chat),
        1,
        "nothing is sent after an error"
    );
}

#[cfg(feature = "pi")]
#[test]
fn an_html_page_instead_of_the_stream_is_a_protocol_error() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("hello");
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(
        chat,
        Reply::bytes(200, Some("text/html; charset=utf-8"), "<html>login</html>"),
    );
    assert_eq!(h.store.status(), Status::Error);
    assert_eq!(h.store.session().error().unwrap().kind, ErrorKind::Protocol);
    assert!(h.aborted.contains(&chat));
    assert_eq!(h.store.messages().len(), 1);
}

/// A server that cuts text between the halves of a UTF-16 pair sends `"\ud83d"` and then
/// `"\ude00"` (as `JSON.stringify` writes a lone surrogate). The `ai` package concatenates the
/// two into one character; serde_json alone refuses both events. The store takes them, and
/// writes the text back (to JS, to the server) as the same escapes, so that it is one
/// character again where it is read; a half that stays alone stays an escape.
#[test]
fn a_character_split_between_two_deltas_is_one_character_again() {
    let mut h = Harness::new(options());
    let chat = streaming_turn(&mut h, "hi");
    let mut body = Vec::new();
    for data in [
        r#"{"type":"start","messageId":"a1"}"#,
        r#"{"type":"text-start","id":"t"}"#,
        r#"{"type":"text-delta","id":"t","delta":"smile \ud83d"}"#,
        r#"{"type":"text-delta","id":"t","delta":"\ude00 and half \uD83D"}"#,
        r#"{"type":"text-delta","id":"t","delta":"!"}"#,
        r#"{"type":"text-end","id":"t"}"#,
    ] {
        body.extend_from_slice(format!("data: {data}\n\n").as_bytes());
    }
    h.body(chat, &body);
    assert_eq!(h.store.session().error(), None, "no event was refused");
    let message = h.store.messages().last().unwrap().to_json();
    assert!(
        message.contains(r#""text":"smile \ud83d\ude00 and half \ud83d!""#),
        "{message}"
    );
    // The next turn's POST carries the history with the same escapes: read back as a server
    // reads them, the pair is one character and the half is alone (held as its marker).
    h.end(chat);
    assert_eq!(h.send("again").kind, SubmitKind::Sent);
    let post = h.the_open(RequestKind::Chat).body().clone();
    let half = char::from_u32(agent_chat_store::LONE_SURROGATE_MARKERS + 0xD83D - 0xD800);
    assert_eq!(
        post["messages"][1]["parts"][0]["text"],
        format!("smile 😀 and half {}!", half.unwrap())
    );
}

/// A runaway answer over the SSE routes stops at `limits.maxMessageChars` as a stop would (the
/// stream aborted, `DELETE …/turn`, the history stored in AI SDK mode), but `onFinish` reports
/// the bound's error, not a user's stop.
#[test]
fn a_runaway_answer_ends_as_the_bounds_error_not_as_a_stop() {
    let mut o = options_with(AI_SDK_CAPS);
    o.limits.max_message_chars = 5_000;
    let mut h = Harness::new(o);
    assert_eq!(h.send("hi").kind, SubmitKind::Sent);
    let chat = h.the_open(RequestKind::Chat).id;
    let start = sse(&[
        serde_json::json!({"type": "start", "messageId": "a1"}),
        serde_json::json!({"type": "text-start", "id": "t"}),
    ]);
    h.respond(chat, Reply::sse(start).open());
    let delta =
        sse(&[serde_json::json!({"type": "text-delta", "id": "t", "delta": "x".repeat(1_000)})]);
    for _ in 0..10 {
        if h.store.status() != Status::Streaming {
            break;
        }
        h.body(chat, &delta);
    }
    assert_eq!(h.store.status(), Status::Error);
    assert_eq!(
        h.store.session().error().unwrap().kind,
        ErrorKind::LimitExceeded
    );
    assert!(
        !h.store.session().stopped(),
        "a bound's refusal is an error, not a stop"
    );
    assert!(h.aborted.contains(&chat));
    assert_eq!(h.count(RequestKind::TurnDelete), 1);
    assert_eq!(
        h.count(RequestKind::MessagesPut),
        1,
        "stored as a stopped turn is"
    );
    let finishes: Vec<(bool, bool)> = (h.events.iter())
        .filter_map(|e| match e {
            agent_chat_store::StoreEvent::Finish {
                is_abort, is_error, ..
            } => Some((*is_abort, *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(finishes, [(false, true)]);
}

/// "A stop is not a failure", decided here (`stopped()`, `snapshot.stopped`) for the bindings:
/// the user's stop and a turn whose request was aborted (an `Aborted` error, its status still
/// `error`) both end stopped; a real failure, a bound's refusal and a turn that finished do
/// not, and a new turn clears it.
#[test]
fn a_stop_or_an_aborted_turn_ends_stopped_a_failure_does_not() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    let chat = streaming_turn(&mut h, "hi");
    assert!(!h.store.session().stopped());
    h.stop();
    assert!(h.aborted.contains(&chat));
    assert_eq!(
        (h.store.status(), h.store.session().stopped()),
        (Status::Ready, true)
    );

    // A new turn: not stopped while it runs, nor after it finished.
    let chat = streaming_turn(&mut h, "again");
    assert!(!h.store.session().stopped());
    end_turn(&mut h, chat);
    assert_eq!(
        (h.store.status(), h.store.session().stopped()),
        (Status::Ready, false)
    );

    // The chat POST answered "aborted": an error of kind Aborted, and a stop all the same.
    assert_eq!(h.send("third").kind, SubmitKind::Sent);
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(chat, Reply::error(409, "ABORTED", "aborted"));
    assert_eq!(
        h.store.session().error().map(|e| e.kind),
        Some(ErrorKind::Aborted)
    );
    assert_eq!(
        (h.store.status(), h.store.session().stopped()),
        (Status::Error, true)
    );

    // A failure is not a stop.
    assert_eq!(h.send("fourth").kind, SubmitKind::Sent);
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(chat, Reply::error(500, "internal", "boom"));
    assert_eq!(
        h.store.session().error().map(|e| e.kind),
        Some(ErrorKind::Server)
    );
    assert_eq!(
        (h.store.status(), h.store.session().stopped()),
        (Status::Error, false)
    );
}
