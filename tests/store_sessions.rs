//! Switching sessions and the generation guard (SPEC §6, §11, §12): a switch aborts what is in
//! flight and a late answer changes nothing; switching back resumes the stream and posts the
//! parked queue again with the same seq and nonce; `dispose()` aborts everything.

// Most of these tests run pi mode; what they share goes unused without it.
#![cfg_attr(not(feature = "pi"), allow(unused))]

use crate::common;

use agent_chat_store::Capabilities;
use agent_chat_store::ItemState;
use agent_chat_store::Status;
use agent_chat_store::{RequestKind, SubmitKind};
use common::scenario::*;
use common::*;
use serde_json::json;

#[cfg(feature = "pi")]
#[test]
fn switching_session_mid_post_aborts_it_and_switching_back_resumes_it() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming_turn(&mut h, "first");
    h.submit("in flight");
    let p = h.the_open(RequestKind::FollowUpPost);

    h.switch_session("T");
    assert!(h.aborted.contains(&p.id), "the follow-up POST is aborted");
    assert!(h.aborted.contains(&chat), "the stream is aborted");
    assert_eq!(h.store.session().id(), "T");
    assert!(h.store.session().queued().is_empty(), "T has its own queue");
    assert_eq!(h.store.status(), Status::Ready);

    // The aborted POST's late answer (and the old stream's bytes) change nothing.
    let rev = h.store.revision();
    h.respond(p.id, Reply::error(409, "FOLLOWUP_UNSUPPORTED", "late"));
    h.respond(chat, Reply::sse(trace()).chunked(500));
    assert_eq!(h.store.revision(), rev);
    assert!(h.store.messages().is_empty());
    assert!(h.store.capabilities().native_follow_up);
    assert_eq!(h.count(RequestKind::FollowUpPost), 1, "T posts nothing");

    // Back to S: its stream resumes and the item is posted again, same seq and nonce.
    h.switch_session(SESSION);
    assert_eq!(h.store.status(), Status::Streaming);
    let resume = h.the_open(RequestKind::StreamResume);
    assert!(resume
        .path
        .starts_with("/api/v1/agent/chat/S/stream?cursor="));
    let again = h.the_open(RequestKind::FollowUpPost);
    assert_eq!(again.path, FOLLOWUP);
    assert_eq!(again.client_seq(), p.client_seq());
    assert_eq!(again.client_nonce(), p.client_nonce());
    assert_eq!(h.store.session().queued()[0].text, "in flight");
    // The late answer of the first POST still changes nothing now that S is current again.
    let before = h.store.session().queued()[0].clone();
    h.respond(p.id, Reply::error(409, "FOLLOWUP_UNSUPPORTED", "late"));
    assert_eq!(*h.store.session().queued()[0], before);
    assert!(h.store.capabilities().native_follow_up);
    h.respond(again.id, accepted());
    assert_eq!(h.store.session().queued()[0].state, ItemState::Accepted);
}

#[test]
fn dispose_aborts_everything_and_late_answers_change_nothing() {
    let mut opts = options();
    opts.hydrate = true;
    let mut h = Harness::new(opts);
    let caps = h.the_open(RequestKind::Capabilities).id;
    let hydrate = h.the_open(RequestKind::MessagesGet).id;
    h.send("hello");
    let chat = h.the_open(RequestKind::Chat).id;

    h.dispose();
    for id in [caps, hydrate, chat] {
        assert!(h.aborted.contains(&id), "request {id} aborted");
    }
    let rev = h.store.revision();
    let messages = h.history();
    h.respond(
        caps,
        Reply::json(
            200,
            json!({"nativeFollowUp": true, "aiSdkOwnsHistory": false}),
        ),
    );
    h.respond(
        hydrate,
        Reply::json(200, json!({"messages": canonical_trace_history()})),
    );
    h.respond(chat, Reply::sse(ai_sdk_stream()).chunked(40));
    assert_eq!(h.store.revision(), rev);
    assert_eq!(h.history(), messages);
    assert_eq!(h.store.capabilities(), Capabilities::default());
    assert_ne!(h.store.status(), Status::Streaming);

    let made = h.sent.len();
    assert_eq!(h.send("after dispose").kind, SubmitKind::Blocked);
    h.run_until_idle();
    assert_eq!(h.sent.len(), made, "nothing more is asked for");
}

#[cfg(feature = "pi")]
#[test]
fn a_session_parked_after_its_turn_ended_sends_what_was_waiting_when_it_returns() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming_turn(&mut h, "first");
    h.submit("a");
    h.submit("b");
    let pa = h.the_open(RequestKind::FollowUpPost);
    end_turn(&mut h, chat);
    // The turn is over while "a"'s POST is out; the user switches away, which aborts it.
    h.switch_session("T");
    assert!(h.aborted.contains(&pa.id));
    h.switch_session(SESSION);
    let del = h.the_open(RequestKind::FollowUpDelete);
    assert_eq!(del.client_nonce_in_path(), pa.client_nonce());
    // The aborted POST may still reach the server: "a" is shown at once, but its turn waits
    // until the server confirmed the copy is gone, or it could run twice.
    assert_eq!(
        h.open(RequestKind::Chat).len(),
        0,
        "no chat POST before the DELETE's answer"
    );
    assert_eq!(h.store.status(), Status::Submitted);
    assert_eq!(h.store.messages().last().unwrap().text(), "a");
    h.respond(del.id, Reply::status(204));
    let next = h.the_open(RequestKind::Chat);
    assert_eq!(next.message(), "a");
    assert_eq!(
        h.store
            .messages()
            .iter()
            .filter(|m| m.text() == "a")
            .count(),
        1
    );
    let texts: Vec<&str> = h
        .store
        .session()
        .queued()
        .iter()
        .map(|i| i.text.as_str())
        .collect();
    assert_eq!(texts, ["b"]);
}

#[cfg(feature = "pi")]
#[test]
fn switching_away_mid_event_and_back_resumes_cleanly() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("[A] hello");
    let chat = h.the_open(RequestKind::Chat).id;
    let complete = 30;
    let (sent, events) = cut_trace(complete);
    // The stream is still open, in the middle of an event, when the user switches away.
    h.respond(chat, Reply::sse(sent).open());
    h.switch_session("T");
    h.switch_session(SESSION);
    let resume = h.the_open(RequestKind::StreamResume);
    assert_eq!(
        resume.path,
        format!("/api/v1/agent/chat/S/stream?cursor={}", complete - 1)
    );
    h.respond(
        resume.id,
        Reply::sse(events[complete..].concat()).chunked(90),
    );
    assert!(h.errors().is_empty(), "{:#?}", h.errors());
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(
        without_ids(&h.history()),
        without_ids(&canonical_trace_history())
    );
}
