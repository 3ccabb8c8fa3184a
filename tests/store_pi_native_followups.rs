//! SPEC §14.1 on virtual time: follow-ups exactly once against a server that behaves as the
//! real upstream one does (`../shared/upstream/README.md`, "Known facts of the live servers"):
//! the user message of a follow-up it runs usually carries no `clientNonce` / `clientSeq`,
//! nor does `/state`; a `queue/clear` by selectors answers `cleared: 0` and keeps the row, a
//! clear of the whole queue works; selectors attached by text may name the wrong one of two
//! alike.

#![cfg(feature = "pi")]

use crate::common;

use agent_chat_store::{ItemState, RequestKind, Status};
use common::native_store::*;
use common::*;
use serde_json::{json, Value};

fn user_start(seq: u64, id: &str, text: &str) -> Value {
    json!({"type": "message-start", "seq": seq, "messageId": id, "role": "user", "text": text})
}

fn answer(seq: u64, id: &str, text: &str) -> Vec<Value> {
    vec![
        json!({"type": "message-start", "seq": seq, "messageId": id, "role": "assistant"}),
        json!({"type": "message-part-end", "seq": seq + 1, "messageId": id, "partId": "0", "kind": "text", "text": text}),
    ]
}

/// Each follow-up's POST answered 202 as it goes out (one at a time); their selectors.
fn accept_posts(h: &mut Harness, n: usize) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for _ in 0..n {
        let post = h.the_open(RequestKind::FollowUpPost);
        let b = post.body.clone().unwrap();
        let (nonce, seq) = (
            b["clientNonce"].as_str().unwrap().to_string(),
            b["clientSeq"].as_u64().unwrap(),
        );
        h.respond(
            post.id,
            Reply::json(
                202,
                json!({"accepted": true, "queued": true, "clientNonce": nonce, "clientSeq": seq}),
            ),
        );
        out.push((nonce, seq));
    }
    out
}

/// The prompt's user message (seq 2, with its nonce, as the real server sends it).
fn prompt_message(h: &mut Harness, ev: u64) {
    let nonce = h.requests(RequestKind::NativePrompt)[0].body()["clientNonce"].clone();
    let text = h.requests(RequestKind::NativePrompt)[0].body()["content"].clone();
    feed(
        h,
        ev,
        &[
            json!({"type": "message-start", "seq": 2, "messageId": "u0", "role": "user", "text": text, "clientNonce": nonce}),
        ],
    );
}

fn users(h: &Harness) -> Vec<String> {
    (h.history().into_iter())
        .filter(|m| m["role"] == "user")
        .map(|m| {
            m["parts"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

/// The live probe: `first, same, same, third` queued during an answer; the server ran them
/// in order in the same run, their user messages carrying `first` none, the first `same`
/// its selectors, the second `same` and `third` none; the queue row of the second `same`
/// named the first one's selectors once that one ran (stale).
#[test]
fn follow_ups_run_without_their_selectors_are_known_by_their_text_once_each() {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "prompt");
    prompt_message(&mut h, ev);
    for t in ["first", "same", "same", "third"] {
        h.send(t);
    }
    let sel = accept_posts(&mut h, 4);
    let s = |i: usize| Some((sel[i].0.as_str(), sel[i].1));
    feed(
        &mut h,
        ev,
        &[queue_updated(
            3,
            vec![
                row("q0", "first", s(0)),
                row("q1", "same", s(1)),
                row("q2", "same", s(2)),
                row("q3", "third", s(3)),
            ],
        )],
    );
    let mut events = vec![
        queue_updated(
            4,
            vec![
                row("q0", "same", None),
                row("q1", "same", s(1)),
                row("q2", "third", s(3)),
            ],
        ),
        user_start(5, "u1", "first"),
    ];
    events.extend(answer(6, "a1", "to first"));
    events.push(queue_updated(
        8,
        vec![row("q0", "same", s(2)), row("q1", "third", s(3))],
    ));
    events.push(json!({"type": "message-start", "seq": 9, "messageId": "u2", "role": "user", "text": "same", "clientNonce": sel[1].0, "clientSeq": sel[1].1}));
    events.extend(answer(10, "a2", "to same"));
    events.push(queue_updated(12, vec![row("q0", "third", s(3))]));
    // The second `same` has none (the queue row before it named the first one's: stale).
    events.push(user_start(13, "u3", "same"));
    events.extend(answer(14, "a3", "to same again"));
    events.push(queue_updated(16, vec![]));
    events.push(user_start(17, "u4", "third"));
    events.extend(answer(18, "a4", "to third"));
    events.push(json!({"type": "agent-end", "seq": 20, "turnId": "t1", "status": "ok"}));
    for e in &events[..2] {
        feed(&mut h, ev, std::slice::from_ref(e));
    }
    let left: Vec<_> = h
        .store
        .session()
        .queued()
        .iter()
        .map(|i| i.text.clone())
        .collect();
    assert_eq!(
        left,
        ["same", "same", "third"],
        "`first` ran: its bubble went with its message"
    );
    feed(&mut h, ev, &events[2..]);
    assert!(
        h.store.session().queued().is_empty(),
        "{:#?}",
        h.store.session().queued()
    );
    assert_eq!(users(&h), ["prompt", "first", "same", "same", "third"]);
    h.advance(60_000);
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(
        h.count(RequestKind::FollowUpDelete),
        0,
        "nothing is taken back"
    );
    assert_eq!(h.count(RequestKind::NativeClear), 0);
    assert_eq!(
        h.count(RequestKind::NativePrompt),
        1,
        "nothing is sent again"
    );
    assert_eq!(h.count(RequestKind::FollowUpPost), 4);
}

/// Another client's follow-up with the same text, ahead of ours in the server's queue: its
/// message does not take our bubble (the server's rows say whose is first).
#[test]
fn a_message_of_another_clients_follow_up_is_not_ours() {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "prompt");
    prompt_message(&mut h, ev);
    h.send("hi");
    let sel = accept_posts(&mut h, 1);
    feed(
        &mut h,
        ev,
        &[queue_updated(
            3,
            vec![
                row("q0", "hi", Some(("theirs", 5))),
                row("q1", "hi", Some((&sel[0].0, sel[0].1))),
            ],
        )],
    );
    let q = h.store.session().queued();
    assert_eq!(
        q.iter().map(|i| i.read_only).collect::<Vec<_>>(),
        [true, false],
        "server order, theirs first"
    );
    feed(
        &mut h,
        ev,
        &[
            queue_updated(4, vec![row("q0", "hi", Some((&sel[0].0, sel[0].1)))]),
            json!({"type": "message-start", "seq": 5, "messageId": "u9", "role": "user", "text": "hi", "clientNonce": "theirs", "clientSeq": 5}),
        ],
    );
    let q = h.store.session().queued();
    assert_eq!(
        (q.len(), q[0].read_only),
        (1, false),
        "ours still waits: {q:#?}"
    );
}

/// Remove on the real server: the selective clear keeps the row (`cleared: 0`); the store
/// clears the whole queue, reads from the events which rows that removed, and posts the one
/// it did not mean to remove again: same nonce, a fresh `clientSeq` (a new request id).
#[test]
fn a_removal_on_a_server_that_clears_only_all_posts_the_others_again() {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "prompt");
    prompt_message(&mut h, ev);
    h.send("keep");
    h.send("drop");
    let sel = accept_posts(&mut h, 2);
    let (keep, drop) = (
        Some((sel[0].0.as_str(), sel[0].1)),
        Some((sel[1].0.as_str(), sel[1].1)),
    );
    feed(
        &mut h,
        ev,
        &[queue_updated(
            3,
            vec![row("q0", "keep", keep), row("q1", "drop", drop)],
        )],
    );
    let id = h.store.session().queued()[1].id.clone();
    assert!(h.act(|s, now| s.follow_ups_mut().remove(&id, now)));
    let q = h.store.session().queued();
    assert!(
        q[1].removing && !q[1].can_remove(),
        "the bubble stays until the server lets it go"
    );
    let clear = h.the_open(RequestKind::FollowUpDelete);
    assert_eq!(
        clear.body(),
        &json!({"clientNonce": sel[1].0, "clientSeq": sel[1].1})
    );
    h.respond(
        clear.id,
        Reply::json(202, json!({"accepted": true, "cursor": 3, "cleared": 0})),
    );
    let all = h.the_open(RequestKind::NativeClear);
    let request_id = all.body()["requestId"].as_str().unwrap().to_string();
    assert_eq!(
        all.body(),
        &json!({"requestId": request_id}),
        "no selectors: the whole queue"
    );
    h.respond(
        all.id,
        Reply::json(202, json!({"accepted": true, "cursor": 4, "cleared": 2})),
    );
    assert_eq!(
        h.count(RequestKind::FollowUpPost),
        2,
        "not before the events show what it cleared"
    );
    assert_eq!(h.store.session().queued().len(), 2);
    feed(&mut h, ev, &[queue_updated(4, vec![])]);
    let q = h.store.session().queued();
    assert_eq!(
        q.iter().map(|i| i.text.as_str()).collect::<Vec<_>>(),
        ["keep"],
        "{q:#?}"
    );
    let again = h.the_open(RequestKind::FollowUpPost);
    let b = again.body();
    assert_eq!(b["clientNonce"], json!(sel[0].0), "the same nonce");
    assert!(
        b["clientSeq"].as_u64().unwrap() > sel[1].1,
        "a fresh clientSeq"
    );
    assert_eq!(
        b["requestId"],
        json!(format!("{}:{}", sel[0].0, b["clientSeq"]))
    );
    h.respond(
        again.id,
        Reply::json(202, json!({"accepted": true, "queued": true})),
    );
    // The server runs it; the removed one never.
    let mut events = vec![
        queue_updated(5, vec![row("q0", "keep", None)]),
        queue_updated(6, vec![]),
        user_start(7, "u2", "keep"),
    ];
    events.extend(answer(8, "a2", "kept"));
    events.push(json!({"type": "agent-end", "seq": 10, "turnId": "t1", "status": "ok"}));
    feed(&mut h, ev, &events);
    h.advance(60_000);
    assert!(h.store.session().queued().is_empty());
    assert_eq!(users(&h), ["prompt", "keep"]);
    assert_eq!(h.count(RequestKind::NativePrompt), 1);
    // The server's way is learnt: the next removal clears the whole queue at once.
    run_again_and_remove_one(&mut h, ev);
}

/// (the continuation of the test above)
fn run_again_and_remove_one(h: &mut Harness, ev: u64) {
    h.send("next prompt");
    let p = h.the_open(RequestKind::NativePrompt);
    let nonce = p.body()["clientNonce"].clone();
    h.respond(
        p.id,
        Reply::json(202, json!({"accepted": true, "cursor": 11})),
    );
    feed(
        h,
        ev,
        &[json!({"type": "agent-start", "seq": 11, "turnId": "t2"})],
    );
    feed(
        h,
        ev,
        &[
            json!({"type": "message-start", "seq": 12, "messageId": "u5", "role": "user", "text": "next prompt", "clientNonce": nonce}),
        ],
    );
    h.send("gone");
    let sel = accept_posts(h, 1);
    feed(
        h,
        ev,
        &[queue_updated(
            13,
            vec![row("q0", "gone", Some((&sel[0].0, sel[0].1)))],
        )],
    );
    let id = h.store.session().queued()[0].id.clone();
    let deletes = h.count(RequestKind::FollowUpDelete);
    assert!(h.act(|s, now| s.follow_ups_mut().remove(&id, now)));
    assert_eq!(
        h.count(RequestKind::FollowUpDelete),
        deletes,
        "no selective clear any more"
    );
    let all = h.the_open(RequestKind::NativeClear);
    h.respond(
        all.id,
        Reply::json(202, json!({"accepted": true, "cursor": 14, "cleared": 1})),
    );
    feed(h, ev, &[queue_updated(14, vec![])]);
    assert!(h.store.session().queued().is_empty());
    assert_eq!(
        h.count(RequestKind::FollowUpPost),
        4,
        "nothing to post again"
    );
}

/// The whole queue cannot be cleared while another client's rows are in it: the bubble
/// stays, no longer `removing`, and says why (SPEC §14.1: never hidden while it will run).
#[test]
fn a_removal_is_refused_while_another_clients_rows_share_the_queue() {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "prompt");
    prompt_message(&mut h, ev);
    h.send("mine");
    let sel = accept_posts(&mut h, 1);
    let mine = Some((sel[0].0.as_str(), sel[0].1));
    feed(
        &mut h,
        ev,
        &[queue_updated(
            3,
            vec![
                row("q0", "theirs", Some(("n-other", 3))),
                row("q1", "mine", mine),
            ],
        )],
    );
    let id = (h
        .store
        .session()
        .queued()
        .iter()
        .find(|i| !i.read_only)
        .unwrap()
        .id)
        .clone();
    assert!(h.act(|s, now| s.follow_ups_mut().remove(&id, now)));
    let clear = h.the_open(RequestKind::FollowUpDelete);
    h.respond(
        clear.id,
        Reply::json(202, json!({"accepted": true, "cursor": 3, "cleared": 0})),
    );
    assert_eq!(
        h.count(RequestKind::NativeClear),
        0,
        "the other client's row would go too"
    );
    let item = (h.store.session().queued().into_iter())
        .find(|i| i.id == id)
        .cloned()
        .unwrap();
    assert!(
        !item.removing && item.state == ItemState::Accepted,
        "{item:#?}"
    );
    assert!(
        item.error
            .as_ref()
            .unwrap()
            .message
            .contains("another client"),
        "{item:#?}"
    );
}

/// A follow-up accepted after its run's last poll (stranded): at the run's end the store
/// takes it back with a clear of the whole queue (the selective one keeps it) and sends it
/// as the next message, once.
#[test]
fn a_follow_up_stranded_at_a_runs_end_is_cleared_and_sent_as_the_next_message() {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "prompt");
    prompt_message(&mut h, ev);
    h.send("late");
    let post = h.the_open(RequestKind::FollowUpPost);
    let b = post.body().clone();
    let late = Some((
        b["clientNonce"].as_str().unwrap(),
        b["clientSeq"].as_u64().unwrap(),
    ));
    let mut events = answer(3, "a1", "answer");
    events.push(json!({"type": "agent-end", "seq": 5, "turnId": "t1", "status": "ok"}));
    events.push(queue_updated(6, vec![row("q0", "late", late)]));
    feed(&mut h, ev, &events);
    h.respond(
        post.id,
        Reply::json(202, json!({"accepted": true, "queued": true, "cursor": 6})),
    );
    let clear = h.the_open(RequestKind::FollowUpDelete);
    h.respond(
        clear.id,
        Reply::json(202, json!({"accepted": true, "cursor": 6, "cleared": 0})),
    );
    let all = h.the_open(RequestKind::NativeClear);
    assert_eq!(
        h.count(RequestKind::NativePrompt),
        1,
        "held until the clear is known"
    );
    h.respond(
        all.id,
        Reply::json(202, json!({"accepted": true, "cursor": 7, "cleared": 1})),
    );
    feed(&mut h, ev, &[queue_updated(7, vec![])]);
    let prompt = h.the_open(RequestKind::NativePrompt);
    assert_eq!(prompt.body()["content"], "late");
    h.respond(
        prompt.id,
        Reply::json(202, json!({"accepted": true, "cursor": 8})),
    );
    feed(
        &mut h,
        ev,
        &[json!({"type": "agent-start", "seq": 8, "turnId": "t2"})],
    );
    h.advance(60_000);
    assert_eq!(h.count(RequestKind::NativePrompt), 2, "once");
}

/// A gap lost the events of a follow-up's run; the state read shows its message without
/// selectors. The history's count of its text says it ran: its bubble goes and nothing is
/// taken back or sent again at the run's end.
#[test]
fn a_state_read_after_a_gap_counts_texts_to_tell_a_follow_up_ran() {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "prompt");
    prompt_message(&mut h, ev);
    h.send("again");
    accept_posts(&mut h, 1);
    // Seq 2..6 are lost: a gap.
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "message-delta", "seq": 8, "messageId": "a2", "partId": "0", "kind": "text", "delta": "x"}),
        ],
    );
    let st = h.the_open(RequestKind::NativeState);
    let msg = |id: &str, role: &str, text: &str| json!({"id": id, "role": role, "status": "done", "parts": [{"type": "text", "text": text}]});
    h.respond(
        st.id,
        state(
            8,
            "idle",
            json!([
                msg("e1", "user", "prompt"),
                msg("e2", "assistant", "one"),
                msg("e3", "user", "again"),
                msg("e4", "assistant", "two")
            ]),
            json!([]),
        ),
    );
    assert!(
        h.store.session().queued().is_empty(),
        "it ran: {:#?}",
        h.store.session().queued()
    );
    h.advance(60_000);
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(h.count(RequestKind::FollowUpDelete), 0);
    assert_eq!(h.count(RequestKind::NativePrompt), 1, "never sent again");
    assert_eq!(users(&h), ["prompt", "again"]);
}

/// A follow-up removed on a server whose selective clear clears nothing: the store's clear of
/// the whole queue is on its way (the removed item "drop", the events stream `ev`).
fn clearing_the_whole_queue() -> (Harness, u64, Sent) {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "prompt");
    prompt_message(&mut h, ev);
    h.send("drop");
    let sel = accept_posts(&mut h, 1);
    feed(
        &mut h,
        ev,
        &[queue_updated(
            3,
            vec![row("q0", "drop", Some((&sel[0].0, sel[0].1)))],
        )],
    );
    let id = h.store.session().queued()[0].id.clone();
    h.act(|s, now| s.follow_ups_mut().remove(&id, now));
    let clear = h.the_open(RequestKind::FollowUpDelete);
    h.respond(
        clear.id,
        Reply::json(202, json!({"accepted": true, "cursor": 3, "cleared": 0})),
    );
    let first = h.the_open(RequestKind::NativeClear);
    (h, ev, first)
}

/// The clear of the whole queue whose answer is lost is asked again under the same request
/// id: the server answers a repeat with the first receipt instead of clearing twice.
#[test]
fn a_clear_whose_answer_is_lost_is_asked_again_under_its_request_id() {
    let (mut h, ev, first) = clearing_the_whole_queue();
    h.fail(first.id, "connection reset");
    assert!(h.store.session().queued()[0].removing, "still on its way");
    h.advance(60_000);
    let second = h.the_open(RequestKind::NativeClear);
    assert_eq!(second.body(), first.body(), "the same request id");
    h.respond(
        second.id,
        Reply::json(202, json!({"accepted": true, "cursor": 4, "cleared": 1})),
    );
    feed(&mut h, ev, &[queue_updated(4, vec![])]);
    assert!(h.store.session().queued().is_empty());
}

/// A clear of the whole queue the server never answers is given up after 15 s and asked
/// again under the same request id: the follow-ups waiting on it are not held forever.
#[test]
fn a_clear_that_never_answers_times_out_and_is_asked_again() {
    let (mut h, _, first) = clearing_the_whole_queue();
    h.advance(15_000);
    assert!(h.open(RequestKind::NativeClear).is_empty(), "timed out");
    let t = h.store.poll_timeout().expect("asked again");
    h.advance(t - h.now);
    let second = h.the_open(RequestKind::NativeClear);
    assert_ne!(second.id, first.id);
    assert_eq!(second.body(), first.body(), "the same request id");
}
