//! The store over the pi-native transport (SPEC §14) on virtual time: opening reads the state
//! and follows the events; a send is a prompt, `submitted` until its run starts; a send while
//! busy is a follow-up with its protocol body and requestId; a stop POSTs `…/stop` and the
//! accepted follow-ups wait for the user; a gap reads the state again; the same snapshot a
//! hook user sees over the first transport.

#![cfg(feature = "pi")]

use crate::common;

use agent_chat_store::{ItemState, Method, RequestKind, Status, StoreEvent, SubmitKind};
use common::native_store::*;
use common::*;
use serde_json::json;

#[test]
fn a_prompt_is_submitted_until_its_run_starts_then_streams_and_ends() {
    let (mut h, ev) = following(4);
    assert!(h.store.session().hydrated());
    assert!(h.store.capabilities().native_follow_up);
    assert_eq!(h.send("hi").kind, SubmitKind::Sent);
    let prompt = h.the_open(RequestKind::NativePrompt);
    assert_eq!(prompt.path, format!("{BASE}/prompt"));
    let body = prompt.body.clone().unwrap();
    assert_eq!(body["content"], "hi");
    assert_eq!(body["requestId"], body["clientNonce"]);
    assert_eq!(h.store.status(), Status::Submitted);
    h.respond(prompt.id, Reply::json(202, json!({"accepted": true, "cursor": 5, "clientNonce": body["clientNonce"], "disposition": "prompt"})));
    assert_eq!(h.store.status(), Status::Submitted, "taken, not started");
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "agent-start", "seq": 5, "turnId": "t1"}),
            json!({"type": "message-start", "seq": 6, "messageId": "u1", "role": "user", "clientNonce": body["clientNonce"], "text": "hi"}),
            json!({"type": "message-start", "seq": 7, "messageId": "a1", "role": "assistant"}),
            json!({"type": "message-delta", "seq": 8, "messageId": "a1", "partId": "0", "kind": "text", "delta": "Hello"}),
        ],
    );
    assert_eq!(h.store.status(), Status::Streaming);
    let m = h.history();
    assert_eq!(
        m.len(),
        2,
        "the optimistic message became the server's: {m:#?}"
    );
    assert_eq!(m[0]["id"], "u1");
    assert_eq!(m[1]["parts"][0]["text"], "Hello");
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "message-end", "seq": 9, "messageId": "a1", "final": {"id": "a1", "role": "assistant", "status": "done", "parts": [{"type": "text", "text": "Hello"}]}}),
            json!({"type": "agent-end", "seq": 10, "turnId": "t1", "status": "ok"}),
        ],
    );
    assert_eq!(h.store.status(), Status::Ready);
    assert!(h.events.iter().any(|e| matches!(
        e,
        StoreEvent::Finish {
            is_error: false,
            is_abort: false,
            ..
        }
    )));
    assert_eq!(
        h.count(RequestKind::NativeEvents),
        1,
        "one stream for both turns"
    );
}

#[test]
fn a_send_while_busy_is_a_follow_up_with_its_protocol_body_and_consumed_by_nonce() {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "first");
    assert_eq!(h.send("more").kind, SubmitKind::Queued);
    let post = h.the_open(RequestKind::FollowUpPost);
    assert_eq!(post.path, format!("{BASE}/followup"));
    let b = post.body.clone().unwrap();
    let (nonce, seq) = (
        b["clientNonce"].as_str().unwrap().to_string(),
        b["clientSeq"].as_u64().unwrap(),
    );
    assert_eq!(
        b,
        json!({"requestId": format!("{nonce}:{seq}"), "clientNonce": nonce, "content": "more", "clientSeq": seq})
    );
    h.respond(
        post.id,
        Reply::json(
            202,
            json!({"accepted": true, "queued": true, "clientNonce": nonce, "clientSeq": seq}),
        ),
    );
    assert_eq!(h.store.session().queued().len(), 1);
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "queue-updated", "seq": 2, "queue": {"followUps": [{"id": "q0", "kind": "followup", "displayText": "more", "clientNonce": nonce, "clientSeq": seq}]}}),
            json!({"type": "queue-updated", "seq": 3, "queue": {"followUps": []}}),
            json!({"type": "message-start", "seq": 4, "messageId": "u2", "role": "user", "clientNonce": nonce, "clientSeq": seq, "text": "more"}),
        ],
    );
    assert!(
        h.store.session().queued().is_empty(),
        "the waiting bubble went: {:?}",
        h.store.session().queued()
    );
    assert_eq!(h.history().last().unwrap()["parts"][0]["text"], "more");
}

#[test]
fn a_stop_posts_stop_and_the_accepted_follow_ups_wait_for_the_user() {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "first");
    h.send("more");
    let post = h.the_open(RequestKind::FollowUpPost).id;
    h.respond(
        post,
        Reply::json(202, json!({"accepted": true, "queued": true})),
    );
    h.stop();
    let stop = h.the_open(RequestKind::NativeStop);
    assert_eq!(
        (stop.method, stop.path.as_str()),
        (Method::Post, "/api/v1/agents/pi/sessions/S/stop")
    );
    assert_eq!(h.store.status(), Status::Ready);
    assert!(
        h.open(RequestKind::NativeEvents).len() == 1,
        "the events stream goes on"
    );
    assert_eq!(h.store.session().queued()[0].state, ItemState::Stalled);
    assert_eq!(
        h.count(RequestKind::FollowUpDelete),
        0,
        "the server dropped its queue: nothing to take back"
    );
    h.respond(
        stop.id,
        Reply::json(
            202,
            json!({"accepted": true, "stopped": true, "clearedQueue": []}),
        ),
    );
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "error", "seq": 2, "error": {"code": "ABORTED", "message": "Aborted"}}),
            json!({"type": "agent-end", "seq": 3, "turnId": "t1", "status": "aborted"}),
        ],
    );
    assert_eq!(
        h.store.status(),
        Status::Ready,
        "an abort after a stop is not an error"
    );
    assert!(h.store.session().error().is_none());
}

#[test]
fn a_follow_up_typed_while_the_prompt_is_on_its_way_goes_once_the_run_starts() {
    let (mut h, ev) = following(0);
    h.send("first");
    assert_eq!(h.send("typed early").kind, SubmitKind::Queued);
    assert_eq!(
        h.count(RequestKind::FollowUpPost),
        0,
        "not before the run exists"
    );
    let prompt = h.the_open(RequestKind::NativePrompt).id;
    h.respond(prompt, Reply::json(202, json!({"accepted": true})));
    feed(
        &mut h,
        ev,
        &[json!({"type": "agent-start", "seq": 1, "turnId": "t1"})],
    );
    assert_eq!(
        h.the_open(RequestKind::FollowUpPost).body.unwrap()["content"],
        "typed early"
    );
}

#[test]
fn a_prompt_that_meets_a_run_follows_it_and_goes_as_a_follow_up() {
    let (mut h, _) = following(0);
    h.send("hi");
    let prompt = h.the_open(RequestKind::NativePrompt).id;
    h.respond(prompt, Reply::json(409, json!({"error": {"code": "AGENT_COMMAND_INVALID_STATE", "message": "prompt is invalid in current state", "details": {"status": "streaming"}}})));
    assert_eq!(
        h.store.status(),
        Status::Submitted,
        "not a failure of the message"
    );
    assert!(h.store.session().error().is_none());
    assert_eq!(
        h.count(RequestKind::NativeState),
        2,
        "the state is read again"
    );
    // The state shows the run that refused it: after the backoff the message goes as its
    // follow-up (not as a prompt again).
    let st = h.the_open(RequestKind::NativeState);
    h.respond(st.id, state(2, "streaming", json!([]), json!([])));
    assert_eq!(h.count(RequestKind::FollowUpPost), 0, "not at once");
    let t = h.store.poll_timeout().expect("the backoff");
    assert!(t - h.now >= 1_500, "{} ms", t - h.now);
    h.advance(3_000);
    let post = h.the_open(RequestKind::FollowUpPost);
    assert_eq!(post.body.as_ref().unwrap()["content"], "hi");
    assert_eq!(h.count(RequestKind::NativePrompt), 1);
    assert_eq!(h.store.status(), Status::Streaming);
}

#[test]
fn a_prompt_that_fails_is_sent_again_byte_for_byte_and_a_refusal_fails_the_turn() {
    let (mut h, _) = following(0);
    h.send("hi");
    let first = h.the_open(RequestKind::NativePrompt);
    h.fail(first.id, "connection reset");
    assert_eq!(h.store.status(), Status::Submitted, "a retry is due");
    h.advance(1_000);
    let second = h.the_open(RequestKind::NativePrompt);
    assert_eq!(second.body, first.body, "the same requestId and bytes");
    h.respond(
        second.id,
        Reply::json(
            409,
            json!({"error": {"code": "AGENT_REQUEST_IN_PROGRESS", "message": "in progress"}}),
        ),
    );
    h.advance(2_000);
    let third = h.the_open(RequestKind::NativePrompt);
    assert_eq!(third.body, first.body);
    h.respond(
        third.id,
        Reply::json(
            400,
            json!({"error": {"code": "VALIDATION_ERROR", "message": "content is too long"}}),
        ),
    );
    assert_eq!(h.store.status(), Status::Error);
    assert_eq!(
        h.errors().last().unwrap().kind,
        agent_chat_store::ErrorKind::Validation
    );
    h.advance(60_000);
    assert_eq!(
        h.count(RequestKind::NativePrompt),
        3,
        "a refusal is not retried"
    );
}

#[test]
fn a_gap_reads_the_state_again_and_a_run_it_says_is_on_is_followed() {
    let (mut h, ev) = following(0);
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "agent-start", "seq": 1, "turnId": "t1"}),
            json!({"type": "message-start", "seq": 3, "messageId": "a1", "role": "assistant"}),
        ],
    );
    assert!(h.aborted.contains(&ev), "the gapped stream is dropped");
    let st = h.the_open(RequestKind::NativeState);
    h.respond(st.id, state(7, "streaming", json!([{"id": "a1", "role": "assistant", "status": "streaming", "parts": [{"type": "text", "text": "so far"}]}]), json!([])));
    assert_eq!(h.store.status(), Status::Streaming);
    assert_eq!(h.history()[0]["parts"][0]["text"], "so far");
    let ev2 = h.the_open(RequestKind::NativeEvents);
    assert_eq!(ev2.path, format!("{BASE}/events?cursor=7"));
}

#[test]
fn a_lost_stream_reconnects_from_the_cursor() {
    let (mut h, ev) = following(2);
    feed(
        &mut h,
        ev,
        &[json!({"type": "agent-start", "seq": 3, "turnId": "t1"})],
    );
    h.fail(ev, "connection reset");
    assert_eq!(h.open(RequestKind::NativeEvents).len(), 0);
    h.advance(2_000);
    let again = h.the_open(RequestKind::NativeEvents);
    assert_eq!(again.path, format!("{BASE}/events?cursor=3"));
    assert_eq!(
        h.count(RequestKind::NativeState),
        1,
        "no state read once hydrated"
    );
    assert_eq!(
        h.store.status(),
        Status::Streaming,
        "the run goes on meanwhile"
    );
}

#[test]
fn a_gap_that_swallowed_the_runs_start_still_streams_and_ends_the_turn() {
    let (mut h, ev) = following(0);
    h.send("hi");
    let prompt = h.the_open(RequestKind::NativePrompt);
    let nonce = prompt.body.clone().unwrap()["clientNonce"].clone();
    h.respond(prompt.id, Reply::json(202, json!({"accepted": true})));
    // agent-start (seq 1) never comes: seq 2 is a gap.
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "message-start", "seq": 2, "messageId": "u1", "role": "user", "text": "hi"}),
        ],
    );
    let st = h.the_open(RequestKind::NativeState);
    let user = json!({"id": "u1", "role": "user", "status": "done", "clientNonce": nonce, "parts": [{"type": "text", "text": "hi"}]});
    h.respond(st.id, state(2, "streaming", json!([user]), json!([])));
    assert_eq!(h.store.status(), Status::Streaming);
    let ev2 = h.the_open(RequestKind::NativeEvents).id;
    h.respond(ev2, ndjson(&[]));
    feed(
        &mut h,
        ev2,
        &[json!({"type": "agent-end", "seq": 3, "turnId": "t1", "status": "ok"})],
    );
    assert_eq!(h.store.status(), Status::Ready);
    // And when the whole run fell into the gap, the state's copy of the prompt ends the turn.
    h.send("again");
    let prompt = h.the_open(RequestKind::NativePrompt);
    let nonce = prompt.body.clone().unwrap()["clientNonce"].clone();
    h.respond(prompt.id, Reply::json(202, json!({"accepted": true})));
    feed(
        &mut h,
        ev2,
        &[json!({"type": "agent-end", "seq": 9, "turnId": "t2", "status": "ok"})],
    );
    let st = h.the_open(RequestKind::NativeState);
    let again = json!({"id": "u2", "role": "user", "status": "done", "clientNonce": nonce, "parts": [{"type": "text", "text": "again"}]});
    h.respond(st.id, state(9, "idle", json!([user, again]), json!([])));
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(h.history().len(), 2);
}

/// A stop while the prompt is on its way aborts the POST, but the server may have taken it:
/// when its run shows up (its user message by nonce), it is stopped too.
#[test]
fn a_prompt_stopped_on_its_way_that_runs_all_the_same_is_stopped_again() {
    let (mut h, ev) = following(0);
    h.send("hi");
    let prompt = h.the_open(RequestKind::NativePrompt);
    let nonce = prompt.body.as_ref().unwrap()["clientNonce"].clone();
    h.stop();
    assert!(h.aborted.contains(&prompt.id));
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(h.count(RequestKind::NativeStop), 1);
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "agent-start", "seq": 1, "turnId": "t1"}),
            json!({"type": "message-start", "seq": 2, "messageId": "u1", "role": "user", "clientNonce": nonce, "text": "hi"}),
        ],
    );
    assert_eq!(
        h.count(RequestKind::NativeStop),
        2,
        "its run is stopped too"
    );
    assert_eq!(h.store.status(), Status::Ready);
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "error", "seq": 3, "error": {"code": "ABORTED", "message": "Aborted"}}),
            json!({"type": "agent-end", "seq": 4, "turnId": "t1", "status": "aborted"}),
        ],
    );
    assert_eq!(h.store.status(), Status::Ready);
    assert!(h.store.session().error().is_none());
    // Another run (another tab's prompt) is followed, not stopped.
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "agent-start", "seq": 5, "turnId": "t2"}),
            json!({"type": "message-start", "seq": 6, "messageId": "u2", "role": "user", "clientNonce": "other", "text": "yo"}),
        ],
    );
    assert_eq!(h.store.status(), Status::Streaming);
    assert_eq!(h.count(RequestKind::NativeStop), 2);
}
