//! Regressions distilled from the fault schedules (`tests/fault_schedules.rs`), on the plain
//! harness: follow-ups left when a turn ends and their removal (SPEC §6), a follow-up POST
//! aborted by a session switch (§6's generation guard), and a resume over a hydrated history
//! of a turn the server refused (§8, §12).

#![cfg(feature = "pi")]

use crate::common;

use agent_chat_store::ItemState;
use agent_chat_store::{RequestId, RequestKind, SubmitKind};
use common::scenario::hydrating;
use common::*;
use serde_json::json;

/// Sends `text` from ready and lets the chat POST start streaming; returns its id.
fn streaming(h: &mut Harness, text: &str) -> RequestId {
    assert_eq!(h.send(text).kind, SubmitKind::Sent);
    let chat = h.the_open(RequestKind::Chat).id;
    let first = sse(&[json!({"type": "data-turn-start", "data": {"turnId": "turn-1"}})]);
    h.respond(chat, Reply::sse(first).open());
    chat
}

fn end_stream(h: &mut Harness, chat: RequestId) {
    h.body(chat, DONE);
    h.end(chat);
}

/// Regression (fixed in `FollowUpsMut::remove`): the turn ended while the head item had
/// failed for good, which holds back the items behind it; removing the failed head must let
/// them move on as they would have at the turn's end, not leave them `queued` forever.
#[test]
fn removing_the_failed_head_after_the_turn_ended_moves_the_rest_on() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming(&mut h, "first");
    h.submit("a");
    h.submit("b");
    let pa = h.the_open(RequestKind::FollowUpPost);
    h.respond(pa.id, Reply::error(400, "validation_error", "no")); // not retryable
    assert_eq!(h.store.session().queued()[0].state, ItemState::Failed);
    end_stream(&mut h, chat);
    assert_eq!(h.count(RequestKind::Chat), 1, "b waits behind failed a");
    let a = h.store.session().queued()[0].id.clone();
    assert!(h.act(|s, now| s.follow_ups_mut().remove(&a, now)));
    let next = h.the_open(RequestKind::Chat);
    assert_eq!(next.message(), "b");
    assert!(h.store.session().queued().is_empty());
}

/// The other half of that fix: removing the head while its POST is still out does not start
/// the next turn at once (the POST could reach the server after it and run in it); the POST's
/// answer does, once the DELETE the removal sent is answered too (a copy still there would
/// run after the next message).
#[test]
fn removing_a_posting_head_after_the_turn_ended_waits_for_its_answer() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming(&mut h, "first");
    h.submit("a");
    h.submit("b");
    let pa = h.the_open(RequestKind::FollowUpPost);
    end_stream(&mut h, chat);
    let a = h.store.session().queued()[0].id.clone();
    assert!(h.act(|s, now| s.follow_ups_mut().remove(&a, now)));
    assert_eq!(h.count(RequestKind::Chat), 1, "not while a's POST is out");
    let del = h.the_open(RequestKind::FollowUpDelete);
    h.respond(
        pa.id,
        Reply::json(202, json!({"queued": false, "deleted": true})),
    );
    assert_eq!(h.count(RequestKind::Chat), 1, "not while the DELETE is out");
    assert_eq!(h.store.status(), agent_chat_store::Status::Submitted);
    h.respond(del.id, Reply::status(204));
    assert_eq!(h.the_open(RequestKind::Chat).message(), "b");
}

/// REORDER_RACE (fixed). The turn ended while "a"'s POST was out; a session switch aborted it;
/// switching back, the store used to send the DELETE and the chat POST with "a" at once. The
/// aborted POST may still be on the wire: reaching the server after the chat POST started the
/// new turn and before the DELETE, it ran in that turn as well, and "a" ran twice (seed 257).
/// The chat POST now waits for the DELETE's answer (a later copy then gets `deleted:true`).
#[test]
fn a_post_aborted_by_a_switch_is_not_resent_before_its_delete_is_acknowledged() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming(&mut h, "first");
    h.submit("a");
    let pa = h.the_open(RequestKind::FollowUpPost);
    end_stream(&mut h, chat);
    h.switch_session("T");
    assert!(h.aborted.contains(&pa.id));
    h.switch_session(SESSION);
    let del = h.the_open(RequestKind::FollowUpDelete);
    assert_eq!(del.client_nonce_in_path(), pa.client_nonce());
    assert_eq!(
        h.count(RequestKind::Chat),
        1,
        "\"a\" is sent as a new message before the server confirmed its copy is cancelled"
    );
    h.respond(del.id, Reply::status(204));
    assert_eq!(h.the_open(RequestKind::Chat).message(), "a");
}

/// UNSEEN_REFUSAL (fixed). A page that hydrated while another
/// page's turn was still running sends a message; the server refuses it (409
/// `turn_already_active`), but the user switched session before the answer came. Switching
/// back, the store believes its turn runs and resumes it with cursor -1; the server replays
/// the turn it has, the one the page hydrated, and its text parts are applied a second time.
#[test]
fn resuming_a_turn_the_server_refused_does_not_duplicate_hydrated_parts() {
    let mut h = hydrating(PI_CAPS);
    let hydrate = h.the_open(RequestKind::MessagesGet);
    h.respond(
        hydrate.id,
        Reply::json(
            200,
            json!({"messages": [
                {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "old"}]},
                {"id": "a1", "role": "assistant",
                 "parts": [{"type": "text", "text": "Answer.", "state": "done"}]}
            ]}),
        ),
    );
    h.send("new");
    let chat = h.the_open(RequestKind::Chat).id;
    h.switch_session("T"); // the 409 for `chat` is never seen
    assert!(h.aborted.contains(&chat));
    h.switch_session(SESSION);
    let resume = h.the_open(RequestKind::StreamResume);
    assert!(resume.path.ends_with("cursor=-1"));
    let pi = pi_chunk;
    let replay = sse(&[
        json!({"type": "data-turn-start", "data": {"turnId": "turn-other-page"}}),
        pi(
            "message-start",
            1,
            json!({"messageId": "u1", "role": "user", "text": "old"}),
        ),
        pi(
            "message-end",
            2,
            json!({"messageId": "u1", "role": "user", "text": "old"}),
        ),
        pi(
            "message-start",
            3,
            json!({"messageId": "a1", "role": "assistant"}),
        ),
        pi("text-start", 4, json!({"messageId": "a1", "partId": "0"})),
        pi(
            "text-delta",
            5,
            json!({"messageId": "a1", "partId": "0", "delta": "Answer."}),
        ),
        pi(
            "text-end",
            6,
            json!({"messageId": "a1", "partId": "0", "text": "Answer."}),
        ),
        pi(
            "message-end",
            7,
            json!({"messageId": "a1", "role": "assistant"}),
        ),
    ]);
    let mut body = replay;
    body.extend_from_slice(DONE);
    h.respond(resume.id, Reply::sse(body));
    let a1 = h.store.messages().iter().find(|m| m.id == "a1").unwrap();
    assert_eq!(a1.parts.len(), 1, "{:#?}", h.history());
}
