//! Capabilities (SPEC §4): fetched per session or given statically, the defaults while they
//! load and when the route fails, an answer for a session no longer current ignored, a first
//! send that goes ahead on the defaults while a busy one is blocked; and capabilities that
//! arrive after the first send, handing that turn's history to the pi projection (§4, §8).

// Most of these tests run pi mode; what they share goes unused without it.
#![cfg_attr(not(feature = "pi"), allow(unused))]

use crate::common;

use agent_chat_store::{Capabilities, Role};
use agent_chat_store::{Method, RequestKind, SubmitKind};
use agent_chat_store::{Refusal, Status};
use common::scenario::*;
use common::*;
use serde_json::json;

#[test]
fn capabilities_from_the_server_apply() {
    let mut h = Harness::new(options());
    let caps = h.the_open(RequestKind::Capabilities);
    assert_eq!(caps.method, Method::Get);
    assert_eq!(caps.path, "/api/v1/agent/capabilities?sessionId=S");
    assert!(!h.store.session().capabilities_loaded());
    assert_eq!(h.store.capabilities(), Capabilities::default());

    h.respond(
        caps.id,
        Reply::json(
            200,
            json!({"nativeFollowUp": true, "aiSdkOwnsHistory": false, "somethingNew": 1}),
        ),
    );
    assert!(h.store.session().capabilities_loaded());
    let c = h.store.capabilities();
    assert!(c.native_follow_up);
    assert!(!c.ai_sdk_owns_history);
}

#[test]
fn capabilities_fall_back_to_defaults() {
    let answers = [
        ("empty object", Reply::json(200, json!({}))),
        ("404", Reply::error(404, "not_found", "no such route")),
        ("500", Reply::status(500)),
        ("network failure", Reply::network("connection refused")),
        (
            "HTML page",
            Reply::bytes(
                200,
                Some("text/html"),
                "<!doctype html><html>dev server</html>",
            ),
        ),
    ];
    for (what, reply) in answers {
        let mut h = Harness::new(options());
        let caps = h.the_open(RequestKind::Capabilities).id;
        h.respond(caps, reply);
        assert!(h.store.session().capabilities_loaded(), "{what}");
        let c = h.store.capabilities();
        assert!(!c.native_follow_up, "{what}");
        assert!(c.ai_sdk_owns_history, "{what}");
        assert_eq!(h.store.status(), Status::Ready, "{what}");
        assert_eq!(
            h.count(RequestKind::Capabilities),
            1,
            "{what}: no refetch loop"
        );
    }
}

#[test]
fn an_answer_for_the_previous_session_changes_nothing() {
    let mut h = Harness::new(options());
    let old = h.the_open(RequestKind::Capabilities).id;
    h.switch_session("T");
    assert!(
        h.aborted.contains(&old),
        "the old session's request is aborted"
    );
    let new = h.the_open(RequestKind::Capabilities);
    assert_eq!(new.path, "/api/v1/agent/capabilities?sessionId=T");

    // The old session's answer arrives late: nothing changes.
    let rev = h.store.revision();
    h.respond(
        old,
        Reply::json(
            200,
            json!({"nativeFollowUp": true, "aiSdkOwnsHistory": false}),
        ),
    );
    assert_eq!(h.store.session().id(), "T");
    assert_eq!(h.store.capabilities(), Capabilities::default());
    assert!(!h.store.session().capabilities_loaded());
    assert_eq!(h.store.revision(), rev);

    // The new session's own answer applies.
    h.respond(
        new.id,
        Reply::json(
            200,
            json!({"nativeFollowUp": true, "aiSdkOwnsHistory": false}),
        ),
    );
    assert!(h.store.session().capabilities_loaded());
    assert_eq!(h.store.capabilities(), PI_CAPS);
}

#[test]
fn a_first_send_goes_ahead_while_capabilities_load_but_a_busy_send_is_blocked() {
    let mut h = Harness::new(options());
    assert!(!h.store.session().capabilities_loaded());
    assert_eq!(h.send("hello").kind, SubmitKind::Sent);
    let chat = h.the_open(RequestKind::Chat);
    assert_eq!((chat.method, chat.path.as_str()), (Method::Post, CHAT));
    assert_eq!(chat.message(), "hello");
    assert_eq!(h.store.status(), Status::Submitted);

    let r = h.submit("more");
    assert_eq!(r.kind, SubmitKind::Blocked);
    assert_eq!(r.reason, Some(Refusal::Busy));
    assert_eq!(h.store.composer().draft(), "more");
    assert_eq!(h.count(RequestKind::FollowUpPost), 0);
    assert!(h.store.session().queued().is_empty());
}

#[test]
fn static_capabilities_make_no_request() {
    let h = Harness::with_caps(PI_CAPS);
    assert_eq!(h.count(RequestKind::Capabilities), 0);
    // Only the tool catalog is asked for (capabilities and tools are separate questions).
    let kinds: Vec<RequestKind> = h.sent.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [RequestKind::Catalog], "{:#?}", h.sent);
    assert!(h.store.session().capabilities_loaded());
    assert_eq!(h.store.capabilities(), PI_CAPS);
}

#[cfg(feature = "pi")]
#[test]
fn capabilities_that_arrive_mid_turn_hand_history_to_the_pi_projection() {
    // A first send goes ahead on the defaults (AI SDK owns history); the answer then says the
    // pi projection owns it. The turn's stream must still give one user bubble, not two.
    let mut h = Harness::new(options());
    let caps = h.the_open(RequestKind::Capabilities).id;
    h.send("[A] hello");
    let chat = h.the_open(RequestKind::Chat).id;
    let events = sse_events(&trace());
    h.respond(chat, Reply::sse(events[..6].concat()).open());
    h.respond(
        caps,
        Reply::json(
            200,
            json!({"nativeFollowUp": true, "aiSdkOwnsHistory": false}),
        ),
    );
    for e in &events[6..] {
        h.body(chat, e);
    }
    h.end(chat);
    assert_eq!(h.store.status(), Status::Ready);
    let texts: Vec<(Role, String)> = h
        .store
        .messages()
        .iter()
        .map(|m| (m.role, m.text()))
        .collect();
    assert_eq!(h.count(RequestKind::MessagesPut), 0, "{texts:#?}");
    assert_eq!(texts.len(), 4, "{texts:#?}");
}

#[cfg(feature = "pi")]
#[test]
fn capabilities_that_arrive_before_the_first_byte_let_the_projection_adopt_the_user_message() {
    let mut h = Harness::new(options());
    let caps = h.the_open(RequestKind::Capabilities).id;
    h.send("[A] hello");
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(
        caps,
        Reply::json(
            200,
            json!({"nativeFollowUp": true, "aiSdkOwnsHistory": false}),
        ),
    );
    h.respond(chat, Reply::sse(trace()).chunked(128));
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(
        without_ids(&h.history()),
        without_ids(&canonical_trace_history())
    );
    assert_eq!(h.count(RequestKind::MessagesPut), 0);
}

/// Without the `pi` feature (the `ai-sdk` build) a server that keeps the history as a pi
/// projection is refused where the store learns it: one typed error, no send, no attach.
#[test]
#[cfg(not(feature = "pi"))]
fn without_pi_a_server_that_owns_history_is_refused_with_a_typed_error() {
    use agent_chat_store::{ErrorKind, PI_UNSUPPORTED_HINT};
    let refused = |h: &mut Harness| {
        let errors = h.errors();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].kind, ErrorKind::Protocol);
        assert_eq!(errors[0].field.as_deref(), Some("aiSdkOwnsHistory"));
        assert_eq!(h.store.session().error(), Some(errors[0]));
        let composer = h.store.composer().state();
        assert_eq!(composer.reason, Some(Refusal::PiUnsupported));
        assert_eq!(composer.hint, Some(PI_UNSUPPORTED_HINT));
        h.store.composer_mut().set_draft("hi");
        assert_eq!(
            h.store.composer_mut().submit(5).reason,
            Some(Refusal::PiUnsupported)
        );
        assert!(h.requests(RequestKind::Chat).is_empty());
    };
    // Given statically.
    let mut h = Harness::new(options_with(PI_CAPS));
    refused(&mut h);
    // Answered by the server.
    let mut h = Harness::new(options());
    let caps = h.the_open(RequestKind::Capabilities);
    h.respond(
        caps.id,
        Reply::json(200, json!({"aiSdkOwnsHistory": false})),
    );
    refused(&mut h);
    assert!(!h.store.capabilities().ai_sdk_owns_history);
}

/// A turn sent on the default capabilities before their answer came, answered "the server
/// keeps the history" in a build without `pi`: the turn is stopped on the server and ends
/// once, as a failure (`onFinish` says `isError`, not a user's stop), with the typed error.
#[test]
#[cfg(not(feature = "pi"))]
fn without_pi_a_turn_sent_before_the_refusal_ends_once_as_an_error() {
    use agent_chat_store::{ErrorKind, StoreEvent};
    let mut h = Harness::new(options());
    let caps = h.the_open(RequestKind::Capabilities);
    h.store.composer_mut().set_draft("hi");
    h.act(|s, now| s.composer_mut().submit(now));
    let chat = h.the_open(RequestKind::Chat);
    let answer = [
        json!({"type": "start"}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": "Hel"}),
    ];
    h.respond(chat.id, Reply::sse(sse(&answer)).open());
    assert_eq!(h.store.status(), Status::Streaming);
    h.respond(
        caps.id,
        Reply::json(200, json!({"aiSdkOwnsHistory": false})),
    );
    assert_eq!(h.store.status(), Status::Error);
    assert_eq!(
        h.store.session().error().map(|e| e.kind),
        Some(ErrorKind::Protocol)
    );
    assert!(h.aborted.contains(&chat.id), "its stream is aborted");
    let finishes: Vec<(bool, bool)> = (h.events.iter())
        .filter_map(|e| match e {
            StoreEvent::Finish {
                is_abort, is_error, ..
            } => Some((*is_abort, *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(finishes, [(false, true)], "one ending, an error's");
}
