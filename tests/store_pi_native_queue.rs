//! The waiting bubbles over the pi-native transport (SPEC §14) on virtual time: the server's
//! `queue-updated` (and the state's queue) is authoritative: a follow-up another tab or an
//! earlier page sent shows as waiting and can be removed with `queue/clear`; one whose answer
//! was lost is accepted when the server's queue lists it; a removal the server answers 409
//! (no longer queued) reads the state, which says whether it ran, and is never sent again; a take-back answered before the events caught up is
//! not brought back by a late `queue-updated`.

#![cfg(feature = "pi")]

use crate::common;

use agent_chat_store::{ItemState, RequestKind, Status};
use common::native_store::*;
use common::*;
use serde_json::{json, Value};

fn row(nonce: &str, seq: u64, text: &str) -> Value {
    json!({"id": format!("q-{seq}"), "kind": "followup", "displayText": text,
        "clientNonce": nonce, "clientSeq": seq})
}

/// SPEC §14.1 (ownership): another tab's follow-up is shown where the server's queue has it,
/// read-only. This store never takes it back, re-sends or retries it, and a removal of it is
/// refused, whatever happens to the run.
#[test]
fn a_follow_up_another_tab_queued_waits_here_too_read_only() {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "first");
    feed(
        &mut h,
        ev,
        &[queue_updated(
            2,
            vec![row("other", 7, "from the other tab")],
        )],
    );
    let q = h.store.session().queued();
    assert_eq!(q.len(), 1, "{q:#?}");
    assert_eq!(
        (q[0].text.as_str(), q[0].state, q[0].read_only),
        ("from the other tab", ItemState::Accepted, true)
    );
    let id = q[0].id.clone();
    assert!(
        !h.act(|s, now| s.follow_ups_mut().remove(&id, now)),
        "not ours to remove"
    );
    assert!(
        !h.act(|s, now| s.follow_ups_mut().retry(&id, now)),
        "not ours to retry"
    );
    assert_eq!(h.count(RequestKind::FollowUpDelete), 0);
    assert_eq!(h.count(RequestKind::NativeClear), 0);
    // The run ends with it still queued (the other tab's to take back): nothing here.
    feed(
        &mut h,
        ev,
        &[json!({"type": "agent-end", "seq": 3, "turnId": "t1", "status": "ok"})],
    );
    h.advance(60_000);
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(
        h.count(RequestKind::FollowUpDelete),
        0,
        "never taken back here"
    );
    assert_eq!(h.count(RequestKind::NativeClear), 0);
    assert_eq!(
        h.count(RequestKind::NativePrompt),
        1,
        "never sent again here"
    );
    assert_eq!(
        h.store.session().queued().len(),
        1,
        "still shown while the server holds it"
    );
    // Its run consumes it (no selectors): the row goes, nothing of ours is touched.
    feed(
        &mut h,
        ev,
        &[
            queue_updated(4, vec![]),
            json!({"type": "message-start", "seq": 5, "messageId": "u9", "role": "user", "text": "from the other tab"}),
        ],
    );
    assert!(h.store.session().queued().is_empty());
}

#[test]
fn a_follow_up_whose_answer_was_lost_is_accepted_when_the_servers_queue_lists_it() {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "first");
    h.send("more");
    let post = h.the_open(RequestKind::FollowUpPost);
    let body = post.body.clone().unwrap();
    h.fail(post.id, "connection reset");
    assert_eq!(
        h.store.session().queued()[0].state,
        ItemState::Queued,
        "a retry is due"
    );
    let nonce = body["clientNonce"].as_str().unwrap();
    let seq = body["clientSeq"].as_u64().unwrap();
    feed(
        &mut h,
        ev,
        &[queue_updated(2, vec![row(nonce, seq, "more")])],
    );
    assert_eq!(h.store.session().queued()[0].state, ItemState::Accepted);
    h.advance(60_000);
    assert_eq!(
        h.count(RequestKind::FollowUpPost),
        1,
        "the server has it: not posted again"
    );
    feed(
        &mut h,
        ev,
        &[
            queue_updated(3, vec![]),
            json!({"type": "message-start", "seq": 4, "messageId": "u2", "role": "user", "clientNonce": nonce, "clientSeq": seq, "text": "more"}),
        ],
    );
    assert!(h.store.session().queued().is_empty());
    let users = h
        .history()
        .into_iter()
        .filter(|m| m["role"] == "user")
        .count();
    assert_eq!(users, 1, "the follow-up once: {:#?}", h.history());
}

#[test]
fn a_removal_answered_no_longer_queued_is_not_sent_again_and_shows_once() {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "first");
    h.send("more");
    let post = h.the_open(RequestKind::FollowUpPost);
    let body = post.body.clone().unwrap();
    h.respond(
        post.id,
        Reply::json(202, json!({"accepted": true, "queued": true})),
    );
    let id = h.store.session().queued()[0].id.clone();
    h.act(|s, now| s.follow_ups_mut().remove(&id, now));
    let clear = h.the_open(RequestKind::FollowUpDelete);
    h.respond(
        clear.id,
        Reply::json(
            409,
            json!({"error": {"code": "AGENT_REQUEST_CONFLICT", "message": "queue selectors disagree"}}),
        ),
    );
    // "Not queued" does not say it ran: the state is read, and shows it did.
    let st = h.the_open(RequestKind::NativeState);
    let nonce = body["clientNonce"].clone();
    let more = json!({"id": "u2", "role": "user", "status": "done", "clientNonce": nonce,
        "clientSeq": body["clientSeq"], "parts": [{"type": "text", "text": "more"}]});
    let first_nonce = h.requests(RequestKind::NativePrompt)[0]
        .body
        .as_ref()
        .unwrap()["clientNonce"]
        .clone();
    let first = json!({"id": "u1", "role": "user", "status": "done", "clientNonce": first_nonce,
        "parts": [{"type": "text", "text": "first"}]});
    h.respond(
        st.id,
        state(2, "streaming", json!([first, more]), json!([])),
    );
    let ev2 = h.the_open(RequestKind::NativeEvents);
    h.respond(ev2.id, ndjson(&[]));
    feed(
        &mut h,
        ev2.id,
        &[json!({"type": "agent-end", "seq": 3, "turnId": "t1", "status": "ok"})],
    );
    h.advance(60_000);
    assert_eq!(h.count(RequestKind::FollowUpDelete), 1, "not asked again");
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(
        h.count(RequestKind::NativePrompt),
        1,
        "never re-sent as a message"
    );
    assert!(h.store.session().queued().is_empty());
    let users: Vec<_> = (h.history().into_iter())
        .filter(|m| m["role"] == "user")
        .map(|m| m["id"].clone())
        .collect();
    assert_eq!(users, [json!("u1"), json!("u2")], "each shown once");
    assert!(
        h.errors().is_empty(),
        "an answer the store acts on is not an error to show: {:?}",
        h.errors()
    );
}

/// A reload while the server holds follow-ups of the old page: the state's queue shows them,
/// read-only, in the server's order. They are the server's now (this page did not post
/// them): at the run's end nothing takes them back or sends them again, so each runs once,
/// when the server runs its queue (SPEC §14.1).
#[test]
fn after_a_reload_the_states_queue_is_shown_read_only_and_left_to_the_server() {
    let mut h = native();
    let st = h.the_open(RequestKind::NativeState);
    h.respond(
        st.id,
        state(
            5,
            "streaming",
            json!([]),
            json!([row("n1", 10, "one"), row("n2", 11, "two")]),
        ),
    );
    let shown: Vec<_> = (h.store.session().queued().iter())
        .map(|i| (i.text.clone(), i.read_only))
        .collect();
    assert_eq!(shown, [("one".into(), true), ("two".into(), true)]);
    assert_eq!(h.store.status(), Status::Streaming, "the run is followed");
    let ev = h.the_open(RequestKind::NativeEvents);
    h.respond(ev.id, ndjson(&[]));
    feed(
        &mut h,
        ev.id,
        &[json!({"type": "agent-end", "seq": 6, "turnId": "t0", "status": "ok"})],
    );
    h.advance(60_000);
    assert_eq!(h.count(RequestKind::FollowUpDelete), 0);
    assert_eq!(h.count(RequestKind::NativeClear), 0);
    assert_eq!(
        h.count(RequestKind::NativePrompt),
        0,
        "nothing sent for them"
    );
    assert_eq!(h.store.session().queued().len(), 2);
}
