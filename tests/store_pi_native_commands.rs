//! The pi-native store's commands and bounds under bad input, on virtual time (issue 38): an
//! answer held to `limits`, a prompt the server never answers, busy refusals while the
//! server says idle, session titles, tool outputs for calls that wait for an approval.

#![cfg(feature = "pi")]

use crate::common;

use agent_chat_store::{ErrorKind, RequestKind, Status, StoreEvent, StoreOptions};
use common::native_store::*;
use common::*;
use serde_json::json;

/// [`following`] with the store's options changed by `with`.
fn following_with(with: impl FnOnce(&mut StoreOptions)) -> (Harness, u64) {
    let mut o = options();
    o.pi_native = Some("pi".into());
    with(&mut o);
    let mut h = Harness::new(o);
    let st = h.the_open(RequestKind::NativeState);
    h.respond(st.id, state(0, "idle", json!([]), json!([])));
    let ev = h.the_open(RequestKind::NativeEvents);
    h.respond(ev.id, ndjson(&[]));
    (h, ev.id)
}

/// `(isAbort, isError)` of each finish event.
fn finishes(h: &Harness) -> Vec<(bool, bool)> {
    (h.events.iter())
        .filter_map(|e| match e {
            StoreEvent::Finish {
                is_abort, is_error, ..
            } => Some((*is_abort, *is_error)),
            _ => None,
        })
        .collect()
}

/// A run of this client's under `maxMessageChars` = 10,000, its answer `a1` begun (seq 2).
fn answering_under_a_bound() -> (Harness, u64) {
    let (mut h, ev) = following_with(|o| o.limits.max_message_chars = 10_000);
    run_started(&mut h, ev, "hi");
    feed(
        &mut h,
        ev,
        &[json!({"type": "message-start", "seq": 2, "messageId": "a1", "role": "assistant"})],
    );
    (h, ev)
}

/// A runaway answer over many events stops at `limits.maxMessageChars`: the run is stopped on
/// the server, what was shown stays, and the turn ends as the bound's error (`onFinish` says
/// an error, not a stop).
#[test]
fn a_runaway_answer_stops_at_the_message_bound_as_an_error() {
    let (mut h, ev) = answering_under_a_bound();
    let chunk = "x".repeat(1_000);
    let mut seq = 3;
    while h.store.status() == Status::Streaming && seq < 100 {
        feed(
            &mut h,
            ev,
            &[
                json!({"type": "message-delta", "seq": seq, "messageId": "a1", "partId": "0", "kind": "text", "delta": chunk}),
            ],
        );
        seq += 1;
    }
    assert_eq!(h.store.status(), Status::Error);
    let error = h.store.session().error().cloned().unwrap();
    assert_eq!(error.kind, ErrorKind::LimitExceeded);
    assert_eq!(error.field.as_deref(), Some("limits.maxMessageChars"));
    assert_eq!(
        h.count(RequestKind::NativeStop),
        1,
        "the run stopped on the server"
    );
    assert_eq!(finishes(&h), [(false, true)], "an error, not a stop");
    let text = h.history()[1]["parts"][0]["text"].as_str().unwrap().len();
    assert!(
        (10_000..=11_000).contains(&text),
        "what was shown is kept, one read past the bound at most: {text}"
    );
    // The stop's end on the events stream changes nothing more.
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "error", "seq": seq, "turnId": "t1", "error": {"code": "ABORTED", "message": "stopped"}}),
            json!({"type": "agent-end", "seq": seq + 1, "turnId": "t1", "status": "aborted"}),
        ],
    );
    assert_eq!(h.store.status(), Status::Error);
    assert_eq!(
        h.store.session().error().unwrap().kind,
        ErrorKind::LimitExceeded
    );
    assert_eq!(finishes(&h).len(), 1);
}

/// A server that runs on after the stop: its events are followed for one more answer's worth,
/// then not at all (the events stream given up), so the history stays bounded; a well-behaved
/// run's end after the stop changes nothing (the test above).
#[test]
fn a_run_that_ignores_the_stop_is_no_longer_followed() {
    let (mut h, ev) = answering_under_a_bound();
    let chunk = "x".repeat(1_000);
    for seq in 3..200 {
        if !h.open(RequestKind::NativeEvents).iter().any(|r| r.id == ev) {
            break;
        }
        feed(
            &mut h,
            ev,
            &[
                json!({"type": "message-delta", "seq": seq, "messageId": "a1", "partId": "0", "kind": "text", "delta": chunk}),
            ],
        );
    }
    assert!(h.aborted.contains(&ev), "the events stream is given up");
    assert_eq!(h.count(RequestKind::NativeStop), 1);
    let text = h.history()[1]["parts"][0]["text"].as_str().unwrap().len();
    assert!(
        (20_000..=22_000).contains(&text),
        "its size at the stop (one read past the bound) and one more answer's worth: {text}"
    );
    let error = h.store.session().error().unwrap();
    assert_eq!(error.kind, ErrorKind::LimitExceeded);
    assert!(
        error.message.contains("no longer followed"),
        "{}",
        error.message
    );
    h.advance(600_000);
    assert_eq!(
        h.count(RequestKind::NativeEvents),
        1,
        "not read again on its own"
    );
    assert_eq!(h.count(RequestKind::NativeState), 1);
}

/// The history bound holds across messages too.
#[test]
fn a_history_past_its_bound_stops_the_run() {
    let (mut h, ev) = following_with(|o| o.limits.max_history_chars = 20_000);
    run_started(&mut h, ev, "hi");
    let chunk = "y".repeat(4_000);
    let mut seq = 2;
    for m in 0..10 {
        if h.store.status() != Status::Streaming {
            break;
        }
        let id = format!("a{m}");
        feed(
            &mut h,
            ev,
            &[
                json!({"type": "message-start", "seq": seq, "messageId": id, "role": "assistant"}),
                json!({"type": "message-delta", "seq": seq + 1, "messageId": id, "partId": "0", "kind": "text", "delta": chunk}),
            ],
        );
        seq += 2;
    }
    assert_eq!(h.store.status(), Status::Error);
    let error = h.store.session().error().unwrap();
    assert_eq!(error.kind, ErrorKind::LimitExceeded);
    assert_eq!(error.field.as_deref(), Some("limits.maxHistoryChars"));
    assert_eq!(h.count(RequestKind::NativeStop), 1);
    assert_eq!(finishes(&h), [(false, true)]);
}

/// A prompt POST the server never answers: aborted after 15 s (upstream's request timeout),
/// sent again after a backoff under the same `requestId` (the server runs it once), and after
/// `MAX_PROMPT_ATTEMPTS` (3) attempts, within 50 s, the turn fails with a typed error, its
/// message kept;
/// `regenerate()` sends it again with the same nonce, so even then it cannot run twice.
#[test]
fn a_prompt_never_answered_fails_after_its_attempts_and_is_retryable_by_the_same_nonce() {
    let (mut h, ev) = following(0);
    h.send("hi");
    let first = h.the_open(RequestKind::NativePrompt);
    let nonce = first.body()["requestId"].clone();
    assert!(!h.store.session().can_regenerate(), "busy");
    h.advance(14_999);
    assert_eq!(
        h.count(RequestKind::NativePrompt),
        1,
        "the deadline is 15 s"
    );
    let mut polled = 0;
    while h.store.status() == Status::Submitted && polled < 400 {
        h.advance(1_000);
        polled += 1;
    }
    assert_eq!(h.store.status(), Status::Error);
    let prompts = h.requests(RequestKind::NativePrompt);
    assert_eq!(prompts.len(), 3, "MAX_PROMPT_ATTEMPTS");
    assert!(
        prompts.iter().all(|p| p.body == first.body),
        "byte for byte"
    );
    assert!(
        h.now - first_at(&h) <= 50_000,
        "given up within the deadlines and backoffs"
    );
    let error = h.store.session().error().cloned().unwrap();
    assert_eq!(error.kind, ErrorKind::Network);
    assert!(
        error.message.contains("retrying sends it again"),
        "{}",
        error.message
    );
    assert_eq!(h.history().len(), 1, "the message stays, with the error");
    h.advance(600_000);
    assert_eq!(
        h.count(RequestKind::NativePrompt),
        3,
        "nothing more on its own"
    );
    // The user's retry: the same requestId and nonce.
    assert!(h.store.session().can_regenerate());
    assert!(h.act(|s, now| s.use_chat().regenerate(None, now)));
    assert_eq!(h.store.status(), Status::Submitted);
    assert!(h.store.session().error().is_none());
    let again = h.the_open(RequestKind::NativePrompt);
    assert_eq!(again.body, first.body);
    h.respond(
        again.id,
        Reply::json(202, json!({"accepted": true, "cursor": 1})),
    );
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "agent-start", "seq": 1, "turnId": "t1"}),
            json!({"type": "message-start", "seq": 2, "messageId": "u1", "role": "user", "clientNonce": nonce, "text": "hi"}),
        ],
    );
    assert_eq!(h.store.status(), Status::Streaming);
    assert_eq!(h.history().len(), 1, "one user message: {:#?}", h.history());
    assert!(!h.store.session().can_regenerate());
}

fn first_at(h: &Harness) -> u64 {
    h.requests(RequestKind::NativePrompt)[0].at
}

/// Given up, then shown by the server after all (it had landed): nothing is left to send again.
#[test]
fn a_given_up_prompt_that_shows_up_is_not_sent_again() {
    let (mut h, ev) = following(0);
    h.send("hi");
    let nonce = h.the_open(RequestKind::NativePrompt).body()["requestId"].clone();
    h.advance(400_000);
    assert_eq!(h.store.status(), Status::Error);
    assert!(h.store.session().can_regenerate());
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "agent-start", "seq": 1, "turnId": "t1"}),
            json!({"type": "message-start", "seq": 2, "messageId": "u1", "role": "user", "clientNonce": nonce, "text": "hi"}),
        ],
    );
    assert!(!h.store.session().can_regenerate());
    assert!(!h.act(|s, now| s.use_chat().regenerate(None, now)));
}

/// Answers what a server answers whose prompt route says busy (409) while its `/state` says
/// idle; the events stream stays open and silent.
fn serve_busy_while_idle(h: &mut Harness) {
    for _ in 0..100 {
        let kinds = [
            RequestKind::NativePrompt,
            RequestKind::NativeState,
            RequestKind::FollowUpPost,
            RequestKind::FollowUpDelete,
            RequestKind::NativeClear,
        ];
        let open: Vec<Sent> = (kinds.iter())
            .flat_map(|k| h.open(*k).into_iter().cloned())
            .collect();
        if open.is_empty() {
            return;
        }
        for r in open {
            let reply = match r.kind {
                RequestKind::NativePrompt => Reply::json(
                    409,
                    json!({"error": {"code": "AGENT_COMMAND_INVALID_STATE", "message": "busy"}}),
                ),
                RequestKind::NativeState => state(0, "idle", json!([]), json!([])),
                // The events stream stays open, as a live server's does.
                RequestKind::NativeEvents => {
                    Reply::bytes(200, Some("application/x-ndjson"), Vec::new()).open()
                }
                _ => Reply::json(202, json!({"accepted": true, "cursor": 0, "cleared": 1})),
            };
            h.respond(r.id, reply);
        }
    }
    panic!("requests without end at one instant: {} sent", h.sent.len());
}

/// Busy refusals while the state says idle: backed off (never more than a few requests a
/// second), then a typed error after a bounded number, the message kept for `regenerate()`
/// under its nonce.
#[test]
fn busy_refusals_while_idle_back_off_and_end_in_a_typed_error() {
    let (mut h, _) = following(0);
    let before = h.sent.len();
    h.send("hi");
    let mut last_second = Vec::new();
    for _ in 0..600 {
        serve_busy_while_idle(&mut h);
        if h.store.status() != Status::Submitted && h.store.status() != Status::Streaming {
            break;
        }
        h.advance(100);
        let now = h.now;
        last_second = (h.sent.iter().skip(before))
            .filter(|r| r.at + 1_000 > now)
            .map(|r| r.kind)
            .collect();
        assert!(last_second.len() <= 8, "{last_second:?}");
    }
    assert_eq!(h.store.status(), Status::Error, "{last_second:?}");
    let error = h.store.session().error().cloned().unwrap();
    assert_eq!(error.kind, ErrorKind::TurnAlreadyActive);
    assert!(
        error.message.contains("retrying sends it again"),
        "{}",
        error.message
    );
    let prompts = h.requests(RequestKind::NativePrompt).len();
    let nonce = h.last(RequestKind::NativePrompt).body()["requestId"].clone();
    assert!(
        prompts <= 5 + 1, // MAX_BUSY_REFUSALS, and a first one turned follow-up
        "{prompts} prompts"
    );
    let total = h.sent.len() - before;
    assert!(total <= 30, "{total} requests");
    // Quiet from now on, until the user asks.
    let n = h.sent.len();
    for _ in 0..1_200 {
        h.advance(100);
        serve_busy_while_idle(&mut h);
    }
    // No prompt or state read until the user asks; the events stream is only kept open.
    let late: Vec<_> = (h.sent[n..].iter())
        .filter(|r| r.kind != RequestKind::NativeEvents)
        .map(|r| (r.kind, r.at))
        .collect();
    assert_eq!(late, []);
    assert!(h.store.session().can_regenerate());
    assert!(h.act(|s, now| s.use_chat().regenerate(None, now)));
    assert_eq!(h.last(RequestKind::NativePrompt).body()["requestId"], nonce);
}

/// A 1 MB title is cut at `MAX_TITLE_CHARS` (200) UTF-16 units, on a character, before it goes
/// anywhere: the rename command and the list show the cut title; a session created by its
/// first send carries the cut title too.
#[test]
fn a_huge_title_is_cut_at_its_bound_on_rename_and_on_create() {
    let (mut h, _) = following(0);
    assert_eq!(agent_chat_store::MAX_TITLE_CHARS, 200);
    assert!(h.act(|s, now| s.sessions_mut().load(false, now)));
    let get = h.the_open(RequestKind::SessionsGet);
    let summary = json!({"ref": {"agentTypeId": "pi", "sessionId": "B"}, "title": "Beta",
        "status": "idle", "createdAt": 1, "updatedAt": 2, "turnCount": 1});
    h.respond(get.id, Reply::json(200, json!({"sessions": [summary]})));
    // A character of two UTF-16 units across the cut: 199 ASCII, then emoji.
    let huge = format!("  {}{}", "a".repeat(199), "😀".repeat(500_000));
    assert!(h.act(|s, now| s.sessions_mut().rename("B", &huge, now)));
    let rename = h.the_open(RequestKind::SessionPatch);
    let sent = rename.body()["title"].as_str().unwrap().to_string();
    // 199 + one unit: the emoji (two units) would pass 200, so it is cut before it.
    assert_eq!(sent.encode_utf16().count(), 199);
    assert_eq!(sent, "a".repeat(199));
    let b = h.store.sessions().items().into_iter().find(|i| i.id == "B");
    assert_eq!(b.unwrap().title.as_deref(), Some(sent.as_str()));
    assert!(
        !h.act(|s, now| s.sessions_mut().rename("B", " \n ", now)),
        "empty"
    );

    let made = h.act(|s, now| s.sessions_mut().create(now)).unwrap();
    assert!(h.act(|s, now| s.sessions_mut().rename(&made, &"t".repeat(1 << 20), now)));
    h.send("hello");
    let create = h.the_open(RequestKind::NativeCreate);
    assert_eq!(create.body()["title"].as_str().unwrap().len(), 200);
}

/// A follow-up POST the server never answers: each attempt is aborted after 30 s and sent
/// again with the same nonce and seq (its `requestId`), and after `retry.maxAttempts` the item
/// is `failed` with its error, waiting for the user; `retryQueued` posts it again, unchanged.
#[test]
fn a_follow_up_never_answered_fails_after_its_attempts_and_retries_unchanged() {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "first");
    h.send("more");
    let first = h.the_open(RequestKind::FollowUpPost);
    let mut polled = 0;
    while h.store.session().queued()[0].state != agent_chat_store::ItemState::Failed && polled < 400
    {
        h.advance(1_000);
        polled += 1;
    }
    let item = h.store.session().queued()[0].clone();
    assert_eq!(item.state, agent_chat_store::ItemState::Failed);
    assert!(item.error.is_some());
    let posts = h.requests(RequestKind::FollowUpPost);
    assert_eq!(posts.len(), 6, "retry.maxAttempts");
    assert!(posts.iter().all(|p| p.body == first.body), "byte for byte");
    h.advance(600_000);
    assert_eq!(
        h.count(RequestKind::FollowUpPost),
        6,
        "then it waits for the user"
    );
    assert!(h.retry_queued(&item.id));
    assert_eq!(h.the_open(RequestKind::FollowUpPost).body, first.body);
}

/// The run's events come before the prompt's receipt (the server answers the POST after it
/// wrote them): the answer is held to `limits.maxMessageChars` all the same.
#[test]
fn a_runaway_answer_before_the_receipt_stops_at_the_message_bound() {
    let (mut h, ev) = following_with(|o| o.limits.max_message_chars = 10_000);
    h.send("hi");
    let prompt = h.the_open(RequestKind::NativePrompt);
    let nonce = prompt.body()["clientNonce"].clone();
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "agent-start", "seq": 1, "turnId": "t1"}),
            json!({"type": "message-start", "seq": 2, "messageId": "u1", "role": "user", "clientNonce": nonce, "text": "hi"}),
            json!({"type": "message-start", "seq": 3, "messageId": "a1", "role": "assistant"}),
        ],
    );
    // Lines of 4,000 characters, each given in chunks of 500 bytes (as a network splits a
    // long line): the chunks without a line's end count too.
    let chunk = "x".repeat(4_000);
    let mut seq = 4;
    while h.store.status() != Status::Error && seq < 100 {
        let line = lines(&[
            json!({"type": "message-delta", "seq": seq, "messageId": "a1", "partId": "0", "kind": "text", "delta": chunk}),
        ]);
        for part in line.chunks(500) {
            h.body(ev, part);
        }
        seq += 1;
    }
    assert_eq!(h.store.status(), Status::Error, "{:?}", h.store.status());
    let error = h.store.session().error().cloned().unwrap();
    assert_eq!(error.kind, ErrorKind::LimitExceeded);
    // Passed by one line at most: the bound is not measured on line ends alone.
    let kept = h.history()[1]["parts"][0]["text"].as_str().unwrap().len();
    assert!(kept <= 10_000 + 4_000, "kept {kept}");
}
