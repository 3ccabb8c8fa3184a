//! "Run Now" on a waiting follow-up (`runQueuedNow`, assistant-ui's QueueItemPrimitive.Steer)
//! on virtual time: what each item's `runNow` says and what the action does. pi-native: the
//! first row of the server's queue, while a run is on, is run by `POST …/interrupt` (reference
//! §3.14) once, the turn going on with the run it starts; a failed, stalled or unsure item is
//! retried; elsewhere it runs after the current answer, and nothing is sent.

#![cfg(feature = "pi")]

use crate::common;

use agent_chat_store::{ItemState, RequestKind, RunNow, RunNowOutcome, Status};
use common::native_store::*;
use common::scenario::*;
use common::*;
use serde_json::{json, Value};

/// Each follow-up's POST answered 202 as it goes out; their selectors.
fn accept_posts(h: &mut Harness, n: usize) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for _ in 0..n {
        let post = h.the_open(RequestKind::FollowUpPost);
        let (nonce, seq) = (post.client_nonce().to_string(), post.client_seq());
        let receipt =
            json!({"accepted": true, "queued": true, "clientNonce": nonce, "clientSeq": seq});
        h.respond(post.id, Reply::json(202, receipt));
        out.push((nonce, seq));
    }
    out
}

fn run_now(h: &mut Harness, item_id: &str) -> RunNowOutcome {
    h.act(|s, now| s.follow_ups_mut().run_now(item_id, now))
}

fn shown(h: &Harness) -> Vec<(String, ItemState, RunNow)> {
    let view = h.store.session();
    let items = view.queued_shown();
    (items.iter())
        .map(|(i, r)| (i.text.clone(), i.state, *r))
        .collect()
}

fn users(h: &Harness) -> Vec<String> {
    (h.history().into_iter())
        .filter(|m| m["role"] == "user")
        .map(|m| m["parts"][0]["text"].as_str().unwrap_or_default().into())
        .collect()
}

/// A run on (`prompt`, seq 1-2), `texts` queued and accepted, the server's queue showing them
/// with their selectors at seq 3.
fn queued_during_a_run(texts: &[&str]) -> (Harness, u64, Vec<(String, u64)>) {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "prompt");
    let nonce = h.requests(RequestKind::NativePrompt)[0].body()["clientNonce"].clone();
    let start = json!({"type": "message-start", "seq": 2, "messageId": "u0", "role": "user", "text": "prompt", "clientNonce": nonce});
    feed(&mut h, ev, &[start]);
    for t in texts {
        h.send(t);
    }
    let sel = accept_posts(&mut h, texts.len());
    let rows = (texts.iter().zip(&sel).enumerate())
        .map(|(i, (t, (n, s)))| row(&format!("q{i}"), t, Some((n, *s))))
        .collect();
    feed(&mut h, ev, &[queue_updated(3, rows)]);
    (h, ev, sel)
}

/// What the server sends for an interrupt that starts `text` (as the real server does: the
/// abort, the new run, its user message without selectors, the queue without it after).
fn interrupted_into(text: &str, rest: Vec<Value>) -> Vec<Value> {
    vec![
        json!({"type": "agent-end", "seq": 4, "turnId": "t1", "status": "aborted"}),
        json!({"type": "agent-start", "seq": 5, "turnId": "t2"}),
        json!({"type": "message-start", "seq": 6, "messageId": "u1", "role": "user", "text": text}),
        queue_updated(7, rest),
    ]
}

fn answered(seq: u64) -> Vec<Value> {
    vec![
        json!({"type": "message-start", "seq": seq, "messageId": "a1", "role": "assistant"}),
        json!({"type": "message-part-end", "seq": seq + 1, "messageId": "a1", "partId": "0", "kind": "text", "text": "now"}),
        json!({"type": "agent-end", "seq": seq + 2, "turnId": "t2", "status": "ok"}),
    ]
}

#[test]
fn run_now_on_the_first_row_interrupts_once_and_the_turn_goes_on_with_it() {
    let (mut h, ev, sel) = queued_during_a_run(&["next", "later"]);
    assert_eq!(
        shown(&h),
        [
            ("next".into(), ItemState::Accepted, RunNow::Interrupt),
            ("later".into(), ItemState::Accepted, RunNow::AfterCurrent),
        ]
    );
    let id = format!("fu-{}", sel[0].0);
    assert_eq!(run_now(&mut h, &id), RunNowOutcome::Interrupting);
    let int = h.the_open(RequestKind::NativeInterrupt);
    assert_eq!(int.path, format!("{BASE}/interrupt"));
    let request_id = format!("interrupt:{}:{}", sel[0].0, sel[0].1);
    assert_eq!(int.body(), &json!({ "requestId": request_id }));
    // Pressed again while it is on its way: nothing more goes.
    assert_eq!(shown(&h)[0].2, RunNow::AfterCurrent);
    assert_eq!(run_now(&mut h, &id), RunNowOutcome::AfterCurrent);
    assert_eq!(h.count(RequestKind::NativeInterrupt), 1);

    // The aborted end of the interrupted run is not the turn's end.
    let later = row("q1", "later", Some((&sel[1].0, sel[1].1)));
    let events = interrupted_into("next", vec![later.clone()]);
    feed(&mut h, ev, &events[..1]);
    assert_eq!(h.store.status(), Status::Streaming);
    feed(&mut h, ev, &events[1..]);
    h.respond(
        int.id,
        Reply::json(202, json!({"accepted": true, "cursor": 7})),
    );
    assert_eq!(
        h.store.status(),
        Status::Streaming,
        "the turn goes on with `next`"
    );
    assert_eq!(
        shown(&h),
        [("later".into(), ItemState::Accepted, RunNow::Interrupt)]
    );
    // The server runs `later` in that same run, then ends it.
    let mut rest = answered(8);
    rest.truncate(2);
    rest.push(queue_updated(10, vec![]));
    let later_start = json!({"type": "message-start", "seq": 11, "messageId": "u2", "role": "user", "text": "later"});
    rest.push(later_start);
    rest.push(json!({"type": "agent-end", "seq": 12, "turnId": "t2", "status": "ok"}));
    feed(&mut h, ev, &rest);
    assert_eq!(h.store.status(), Status::Ready);
    assert!(h.store.session().queued().is_empty());
    // Nothing was taken back or sent again: each ran once, as the server ran it.
    assert_eq!(users(&h), ["prompt", "next", "later"]);
    assert_eq!(h.count(RequestKind::NativePrompt), 1);
    assert_eq!(h.count(RequestKind::FollowUpPost), 2);
    assert_eq!(h.count(RequestKind::FollowUpDelete), 0);
    assert_eq!(h.count(RequestKind::NativeClear), 0);
    assert_eq!(h.count(RequestKind::NativeInterrupt), 1);
}

#[test]
fn a_lost_interrupt_answer_is_asked_again_under_the_same_request_id_and_runs_once() {
    let (mut h, ev, sel) = queued_during_a_run(&["next"]);
    let id = format!("fu-{}", sel[0].0);
    assert_eq!(run_now(&mut h, &id), RunNowOutcome::Interrupting);
    let first = h.the_open(RequestKind::NativeInterrupt);
    // The server did it; its answer is lost before its events came.
    h.fail(first.id, "connection reset");
    let again = h.the_open(RequestKind::NativeInterrupt);
    feed(&mut h, ev, &interrupted_into("next", vec![]));
    assert_ne!(again.id, first.id);
    assert_eq!(
        again.body(),
        first.body(),
        "the same command: the ledger answers it"
    );
    h.respond(
        again.id,
        Reply::json(202, json!({"accepted": true, "cursor": 7})),
    );
    feed(&mut h, ev, &answered(8));
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(users(&h), ["prompt", "next"]);
    assert!(h.store.session().queued().is_empty());
    assert_eq!(h.count(RequestKind::NativePrompt), 1);
    assert_eq!(h.count(RequestKind::FollowUpDelete), 0);
    assert_eq!(h.count(RequestKind::NativeClear), 0);
    assert_eq!(h.count(RequestKind::NativeInterrupt), 2);
}

#[test]
fn a_refused_interrupt_is_said_on_the_item_which_can_be_run_now_again() {
    let (mut h, _ev, sel) = queued_during_a_run(&["next"]);
    let id = format!("fu-{}", sel[0].0);
    run_now(&mut h, &id);
    let int = h.the_open(RequestKind::NativeInterrupt);
    h.respond(int.id, Reply::error(403, "AGENT_SCOPE_DENIED", "denied"));
    let item = &h.store.session().queued()[0];
    assert_eq!(
        item.state,
        ItemState::Accepted,
        "still queued on the server"
    );
    let error = item.error.as_ref().expect("said on the item");
    assert!(
        error.message.starts_with("could not run it now"),
        "{error:?}"
    );
    assert_eq!(h.store.status(), Status::Streaming);
    assert_eq!(shown(&h)[0].2, RunNow::Interrupt);
}

#[test]
fn when_no_run_starts_after_the_abort_the_deferred_end_ends_the_turn() {
    // The run is aborted and nothing starts (the follow-up left the server's queue before the
    // interrupt reached it). The receipt's cursor reached, the run's end is the turn's: what
    // the server may still hold is taken back, as at any end.
    let (mut h, ev, sel) = queued_during_a_run(&["next"]);
    run_now(&mut h, &format!("fu-{}", sel[0].0));
    let int = h.the_open(RequestKind::NativeInterrupt);
    feed(
        &mut h,
        ev,
        &[json!({"type": "agent-end", "seq": 4, "turnId": "t1", "status": "aborted"})],
    );
    assert_eq!(h.store.status(), Status::Streaming);
    assert_eq!(h.count(RequestKind::FollowUpDelete), 0);
    h.respond(
        int.id,
        Reply::json(202, json!({"accepted": true, "cursor": 4})),
    );
    assert_ne!(h.store.status(), Status::Streaming);
    assert_eq!(h.count(RequestKind::FollowUpDelete), 1, "taken back");
}

#[test]
fn elsewhere_run_now_runs_after_the_current_answer_and_sends_nothing() {
    // Over the SSE routes: no interrupt exists.
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    h.submit("next");
    let post = h.the_open(RequestKind::FollowUpPost);
    h.respond(post.id, accepted());
    let id = h.store.session().queued()[0].id.clone();
    assert_eq!(shown(&h)[0].2, RunNow::AfterCurrent);
    let before = h.sent.len();
    assert_eq!(run_now(&mut h, &id), RunNowOutcome::AfterCurrent);
    assert_eq!(h.sent.len(), before, "nothing sent");

    // pi-native, a row behind the first: the server would run the first.
    let (mut h, _ev, sel) = queued_during_a_run(&["next", "later"]);
    let before = h.sent.len();
    let outcome = run_now(&mut h, &format!("fu-{}", sel[1].0));
    assert_eq!(outcome, RunNowOutcome::AfterCurrent);
    assert_eq!(h.sent.len(), before, "nothing sent");
}

#[test]
fn refusals_are_typed() {
    let (mut h, ev, sel) = queued_during_a_run(&["next"]);
    assert_eq!(run_now(&mut h, "fu-nobody"), RunNowOutcome::NotFound);
    // Another client's row, first in the server's queue: not this store's to run.
    let ours = row("q1", "next", Some((&sel[0].0, sel[0].1)));
    let theirs = row("q0", "theirs", Some(("other-tab", 7)));
    feed(&mut h, ev, &[queue_updated(4, vec![theirs, ours])]);
    let view = shown(&h);
    assert_eq!(
        view[0],
        ("theirs".into(), ItemState::Accepted, RunNow::None)
    );
    assert_eq!(view[1].2, RunNow::AfterCurrent, "not the first row");
    assert_eq!(run_now(&mut h, "fu-other-tab"), RunNowOutcome::NotNow);
    // Remove on it is refused visibly: the bubble says why.
    assert!(!h.act(|s, now| s.follow_ups_mut().remove("fu-other-tab", now)));
    let theirs = &h.store.session().queued()[0];
    assert!(theirs.read_only);
    let error = theirs.error.as_ref().expect("a refusal the user sees");
    assert!(error.message.contains("another client's"), "{error:?}");
    h.dispose();
    assert_eq!(
        run_now(&mut h, &format!("fu-{}", sel[0].0)),
        RunNowOutcome::NotFound
    );
}

#[test]
fn a_follow_up_stalled_by_stop_shows_stalled_and_run_now_sends_it_once() {
    let (mut h, ev, sel) = queued_during_a_run(&["next"]);
    h.stop();
    let stop = h.the_open(RequestKind::NativeStop);
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(
        shown(&h),
        [("next".into(), ItemState::Stalled, RunNow::Retry)]
    );
    // The server drops its queue on a stop, and says so.
    let cleared = json!([{"id": "q0", "kind": "followup", "displayText": "next"}]);
    let receipt = json!({"accepted": true, "cursor": 4, "stopped": true, "clearedQueue": cleared});
    feed(
        &mut h,
        ev,
        &[
            queue_updated(4, vec![]),
            json!({"type": "agent-end", "seq": 5, "turnId": "t1", "status": "aborted"}),
        ],
    );
    h.respond(stop.id, Reply::json(202, receipt));
    assert_eq!(
        shown(&h),
        [("next".into(), ItemState::Stalled, RunNow::Retry)]
    );
    assert_eq!(
        run_now(&mut h, &format!("fu-{}", sel[0].0)),
        RunNowOutcome::Retried
    );
    let prompts = h.requests(RequestKind::NativePrompt);
    assert_eq!(prompts.len(), 2);
    assert_eq!(prompts[1].body()["content"], "next");
    assert!(h.store.session().queued().is_empty());
    assert_eq!(h.count(RequestKind::FollowUpPost), 1, "never posted again");
}

#[test]
fn run_now_on_a_failed_follow_up_posts_it_again_under_its_nonce() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    h.submit("next");
    let post = h.the_open(RequestKind::FollowUpPost);
    h.respond(post.id, Reply::error(400, "bad_request", "no"));
    assert_eq!(
        shown(&h),
        [("next".into(), ItemState::Failed, RunNow::Retry)]
    );
    let id = h.store.session().queued()[0].id.clone();
    assert_eq!(run_now(&mut h, &id), RunNowOutcome::Retried);
    let again = h.the_open(RequestKind::FollowUpPost);
    assert_eq!(again.client_nonce(), post.client_nonce());
}

#[test]
fn the_reference_servers_order_runs_it_once_too() {
    // The reference server takes the row out before the abort and names the follow-up's
    // selectors on its user message.
    let (mut h, ev, sel) = queued_during_a_run(&["next"]);
    run_now(&mut h, &format!("fu-{}", sel[0].0));
    let int = h.the_open(RequestKind::NativeInterrupt);
    let (nonce, seq) = (&sel[0].0, sel[0].1);
    let mut events = vec![
        queue_updated(4, vec![]),
        json!({"type": "agent-end", "seq": 5, "turnId": "t1", "status": "aborted"}),
        json!({"type": "agent-start", "seq": 6, "turnId": "t2"}),
        json!({"type": "message-start", "seq": 7, "messageId": "u1", "role": "user", "text": "next", "clientNonce": nonce, "clientSeq": seq}),
    ];
    feed(&mut h, ev, &events);
    h.respond(
        int.id,
        Reply::json(202, json!({"accepted": true, "cursor": 7})),
    );
    events = answered(8);
    feed(&mut h, ev, &events);
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(users(&h), ["prompt", "next"]);
    assert!(h.store.session().queued().is_empty());
    assert_eq!(h.count(RequestKind::NativePrompt), 1);
    assert_eq!(h.count(RequestKind::FollowUpDelete), 0);
}

#[test]
fn a_session_switch_drops_the_interrupt_and_run_now_applies_again_on_return() {
    let (mut h, _ev, sel) = queued_during_a_run(&["next"]);
    let id = format!("fu-{}", sel[0].0);
    run_now(&mut h, &id);
    assert_eq!(h.count(RequestKind::NativeInterrupt), 1);
    h.switch_session("other");
    h.switch_session(SESSION);
    // Reopened: the state shows the run still on, `next` still queued first.
    let st = h.last(RequestKind::NativeState);
    let queue = json!([row("q0", "next", Some((&sel[0].0, sel[0].1)))]);
    h.respond(st.id, state(3, "streaming", json!([]), queue));
    let events = h.last(RequestKind::NativeEvents);
    h.respond(events.id, ndjson(&[]));
    assert_eq!(h.store.status(), Status::Streaming);
    assert_eq!(shown(&h)[0].2, RunNow::Interrupt);
    assert_eq!(run_now(&mut h, &id), RunNowOutcome::Interrupting);
    assert_eq!(h.count(RequestKind::NativeInterrupt), 2);
}
