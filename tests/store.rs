//! Scenario tests of `ChatStore` on virtual time against a scripted server: what a user would
//! notice (status, messages, waiting bubbles, the composer) and the exact requests made.

mod common;

use agent_chat_store::composer::{Refusal, Status, BUSY_HINT, FILES_WHILE_BUSY_HINT};
use agent_chat_store::followup::ItemState;
use agent_chat_store::protocol::{Capabilities, ErrorKind, FileAttachment, Role};
use agent_chat_store::store::{AutoSend, Method, RequestId, RequestKind, StoreEvent, SubmitKind};
use common::*;
use serde_json::{json, Value};

const CHAT: &str = "/api/v1/agent/chat";
const FOLLOWUP: &str = "/api/v1/agent/chat/S/followup";
const MESSAGES: &str = "/api/v1/agent/chat/S/messages";

fn accepted() -> Reply {
    Reply::json(202, json!({"queued": true}))
}

fn file(url: &str) -> FileAttachment {
    FileAttachment {
        media_type: "image/png".into(),
        filename: Some("dot.png".into()),
        url: url.into(),
    }
}

/// Sends `text` from ready and lets the chat POST start streaming (a head and a first event),
/// leaving the stream open. Returns the chat request's id.
fn streaming_turn(h: &mut Harness, text: &str) -> RequestId {
    assert_eq!(h.send(text).kind, SubmitKind::Sent);
    let chat = h.the_open(RequestKind::Chat).id;
    let first = sse(&[json!({"type": "data-turn-start", "data": {"turnId": "turn-1"}})]);
    h.respond(chat, Reply::sse(first).open());
    assert_eq!(h.store.status(), Status::Streaming);
    chat
}

fn trace() -> Vec<u8> {
    fixture("trace-prompt-followup.sse")
}

fn canonical_trace_history() -> Vec<Value> {
    let v: Value = serde_json::from_slice(&fixture("trace-prompt-followup.messages.json")).unwrap();
    v["messages"].as_array().unwrap().clone()
}

// ===== capabilities (SPEC §4) ==============================================================

#[test]
fn capabilities_from_the_server_apply() {
    let mut h = Harness::new(options());
    let caps = h.the_open(RequestKind::Capabilities);
    assert_eq!(caps.method, Method::Get);
    assert_eq!(caps.path, "/api/v1/agent/capabilities?sessionId=S");
    assert!(!h.store.capabilities_loaded());
    assert_eq!(h.store.capabilities(), Capabilities::default());

    h.respond(
        caps.id,
        Reply::json(
            200,
            json!({"nativeFollowUp": true, "aiSdkOwnsHistory": false, "somethingNew": 1}),
        ),
    );
    assert!(h.store.capabilities_loaded());
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
        assert!(h.store.capabilities_loaded(), "{what}");
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
    assert_eq!(h.store.session_id(), "T");
    assert_eq!(h.store.capabilities(), Capabilities::default());
    assert!(!h.store.capabilities_loaded());
    assert_eq!(h.store.revision(), rev);

    // The new session's own answer applies.
    h.respond(
        new.id,
        Reply::json(
            200,
            json!({"nativeFollowUp": true, "aiSdkOwnsHistory": false}),
        ),
    );
    assert!(h.store.capabilities_loaded());
    assert_eq!(h.store.capabilities(), PI_CAPS);
}

#[test]
fn a_first_send_goes_ahead_while_capabilities_load_but_a_busy_send_is_blocked() {
    let mut h = Harness::new(options());
    assert!(!h.store.capabilities_loaded());
    assert_eq!(h.send("hello").kind, SubmitKind::Sent);
    let chat = h.the_open(RequestKind::Chat);
    assert_eq!((chat.method, chat.path.as_str()), (Method::Post, CHAT));
    assert_eq!(chat.message(), "hello");
    assert_eq!(h.store.status(), Status::Submitted);

    let r = h.submit("more");
    assert_eq!(r.kind, SubmitKind::Blocked);
    assert_eq!(r.reason, Some(Refusal::Busy));
    assert_eq!(h.store.draft(), "more");
    assert_eq!(h.count(RequestKind::FollowUpPost), 0);
    assert!(h.store.queued().is_empty());
}

#[test]
fn static_capabilities_make_no_request() {
    let h = Harness::with_caps(PI_CAPS);
    assert_eq!(h.count(RequestKind::Capabilities), 0);
    // Only the tool catalog is asked for (capabilities and tools are separate questions).
    let kinds: Vec<RequestKind> = h.sent.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [RequestKind::Catalog], "{:#?}", h.sent);
    assert!(h.store.capabilities_loaded());
    assert_eq!(h.store.capabilities(), PI_CAPS);
}

// ===== composer (SPEC §5) ==================================================================

#[test]
fn busy_without_native_follow_up_blocks_and_keeps_the_draft() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    streaming_turn(&mut h, "first");
    let files = vec![file("https://example.invalid/a.png")];
    h.act(|s, _| {
        s.set_draft("second");
        s.set_draft_files(files.clone());
    });
    let c = h.store.composer();
    assert!(!c.can_send);
    assert_eq!(c.reason, Some(Refusal::Busy));
    assert_eq!(c.hint, Some(BUSY_HINT));
    assert_eq!(c.hint, Some("Wait for the current response to finish."));

    let r = h.act(|s, now| s.submit(now));
    assert_eq!(r.kind, SubmitKind::Blocked);
    assert_eq!(r.reason, Some(Refusal::Busy));
    assert_eq!(h.store.draft(), "second");
    assert_eq!(h.store.draft_files(), &files[..]);
    assert!(h.store.queued().is_empty());
    assert_eq!(h.count(RequestKind::FollowUpPost), 0);
    assert_eq!(h.count(RequestKind::Chat), 1);
}

#[test]
fn busy_with_native_follow_up_queues_one_post_and_clears_the_draft() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    h.act(|s, _| s.set_draft("second"));
    assert!(h.store.composer().can_send);

    let r = h.act(|s, now| s.submit(now));
    assert_eq!(r.kind, SubmitKind::Queued);
    assert_eq!(h.store.draft(), "");
    let q = h.store.queued();
    assert_eq!(q.len(), 1);
    assert_eq!(q[0].text, "second");

    let posts = h.requests(RequestKind::FollowUpPost);
    assert_eq!(posts.len(), 1, "exactly one follow-up POST");
    let p = posts[0];
    assert_eq!((p.method, p.path.as_str()), (Method::Post, FOLLOWUP));
    assert_eq!(p.message(), "second");
    assert_eq!(p.client_seq(), q[0].client_seq);
    assert_eq!(p.client_nonce(), q[0].client_nonce);
    assert!(is_v4_uuid(p.client_nonce()), "{}", p.client_nonce());
    assert!(p.client_seq() >= T0, "clientSeq = max(last + 1, now_ms)");
    // The user's message is a waiting bubble, not a history message.
    assert_eq!(h.store.messages().len(), 1);
}

#[test]
fn files_while_busy_are_refused_without_follow_up_attachments() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    let files = vec![file("data:image/png;base64,AAAA")];
    h.act(|s, _| {
        s.set_draft("look at this");
        s.set_draft_files(files.clone());
    });
    let r = h.act(|s, now| s.submit(now));
    assert_eq!(r.kind, SubmitKind::Blocked);
    assert_eq!(r.reason, Some(Refusal::FilesWhileBusy));
    assert_eq!(h.store.composer().hint, Some(FILES_WHILE_BUSY_HINT));
    assert_eq!(h.store.draft(), "look at this");
    assert_eq!(h.store.draft_files(), &files[..]);
    assert!(h.store.queued().is_empty());
    assert_eq!(h.count(RequestKind::FollowUpPost), 0);
}

// ===== the follow-up poster (SPEC §6) ======================================================

#[test]
fn queued_items_post_strictly_one_after_another_in_order() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    for t in ["one", "two", "three"] {
        assert_eq!(h.submit(t).kind, SubmitKind::Queued);
    }
    let mut posted = Vec::new();
    for expected in ["one", "two", "three"] {
        let open = h.open(RequestKind::FollowUpPost);
        assert_eq!(open.len(), 1, "one POST in flight at a time: {open:#?}");
        let p = open[0].clone();
        assert_eq!(p.message(), expected);
        // Nothing else starts while it waits, however long.
        h.advance(5_000);
        assert_eq!(h.count(RequestKind::FollowUpPost), posted.len() + 1);
        h.respond(p.id, accepted());
        posted.push(p);
    }
    assert_eq!(h.count(RequestKind::FollowUpPost), 3);
    assert!(posted
        .windows(2)
        .all(|w| w[0].client_seq() < w[1].client_seq()));
    let states: Vec<ItemState> = h.store.queued().iter().map(|i| i.state).collect();
    assert_eq!(states, [ItemState::Accepted; 3]);
}

#[test]
fn retryable_failures_retry_with_the_same_seq_and_nonce_after_the_backoff() {
    let failures = [
        ("503", Reply::status(503)),
        ("network", Reply::network("connection reset")),
        (
            "session not ready",
            Reply::error(409, "conflict", "followup_session_not_ready"),
        ),
    ];
    for (what, failure) in failures {
        let mut h = Harness::with_caps(PI_CAPS);
        streaming_turn(&mut h, "first");
        h.submit("again");
        let first = h.the_open(RequestKind::FollowUpPost);
        h.respond(first.id, failure);
        let item = &h.store.queued()[0];
        assert_eq!(item.state, ItemState::Queued, "{what}");
        assert!(item.error.is_some(), "{what}: the reason stays visible");
        assert_eq!(h.count(RequestKind::FollowUpPost), 1, "{what}: not at once");
        // The first backoff is 500 ms scaled into [250, 500] by jitter.
        h.advance(249);
        assert_eq!(h.count(RequestKind::FollowUpPost), 1, "{what}: not before");
        h.advance(251);
        let second = h.the_open(RequestKind::FollowUpPost);
        assert_ne!(second.id, first.id, "{what}");
        assert_eq!(second.client_seq(), first.client_seq(), "{what}");
        assert_eq!(second.client_nonce(), first.client_nonce(), "{what}");
        assert_eq!(second.message(), "again", "{what}");
        h.respond(second.id, accepted());
        assert_eq!(h.store.queued()[0].state, ItemState::Accepted, "{what}");
        assert_eq!(h.store.queued()[0].error, None, "{what}");
    }
}

#[test]
fn a_duplicate_answer_counts_as_success() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    h.submit("one");
    h.submit("two");
    let p = h.the_open(RequestKind::FollowUpPost);
    h.respond(
        p.id,
        Reply::json(202, json!({"queued": true, "duplicate": true})),
    );
    assert_eq!(h.store.queued()[0].state, ItemState::Accepted);
    assert_eq!(h.the_open(RequestKind::FollowUpPost).message(), "two");
}

#[test]
fn a_deleted_answer_drops_the_item() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    h.submit("one");
    h.submit("two");
    let p = h.the_open(RequestKind::FollowUpPost);
    h.respond(
        p.id,
        Reply::json(202, json!({"queued": false, "deleted": true})),
    );
    let texts: Vec<&str> = h.store.queued().iter().map(|i| i.text.as_str()).collect();
    assert_eq!(texts, ["two"]);
    assert_eq!(h.the_open(RequestKind::FollowUpPost).message(), "two");
}

#[test]
fn unsupported_turns_follow_ups_off_and_gives_the_text_back_to_an_empty_composer() {
    let answers = [
        Reply::error(
            409,
            "FOLLOWUP_UNSUPPORTED",
            "this runtime has no follow-ups",
        ),
        Reply::error(409, "conflict", "followup_unsupported"),
    ];
    for answer in answers {
        let mut h = Harness::with_caps(PI_CAPS);
        streaming_turn(&mut h, "first");
        h.submit("keep me");
        assert_eq!(h.store.draft(), "");
        let p = h.the_open(RequestKind::FollowUpPost);
        h.respond(p.id, answer);
        assert!(!h.store.capabilities().native_follow_up);
        assert_eq!(h.store.draft(), "keep me");
        assert!(h.store.queued().is_empty());
        let c = h.store.composer();
        assert!(!c.can_send, "busy without follow-ups");
        assert_eq!(c.hint, Some(BUSY_HINT));
        assert!(h
            .errors()
            .iter()
            .any(|e| e.kind == ErrorKind::FollowUpUnsupported));
        // Nothing is posted any more, and a busy submit is refused.
        assert_eq!(h.act(|s, now| s.submit(now)).reason, Some(Refusal::Busy));
        h.advance(60_000);
        assert_eq!(h.count(RequestKind::FollowUpPost), 1);
    }
}

#[test]
fn unsupported_with_a_non_empty_composer_leaves_the_item_failed() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    h.submit("queued text");
    h.act(|s, _| s.set_draft("typing something else"));
    let p = h.the_open(RequestKind::FollowUpPost);
    h.respond(p.id, Reply::error(409, "FOLLOWUP_UNSUPPORTED", "no"));
    assert!(!h.store.capabilities().native_follow_up);
    assert_eq!(h.store.draft(), "typing something else");
    let q = h.store.queued();
    assert_eq!(q.len(), 1);
    assert_eq!(q[0].state, ItemState::Failed);
    assert_eq!(q[0].text, "queued text");
}

#[test]
fn exhausted_retries_fail_visibly_and_retry_posts_again_with_the_same_nonce() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    h.submit("stubborn");
    assert_eq!(h.store.queued()[0].attempts, 1);
    let mut posts = Vec::new();
    while let Some(p) = h
        .open(RequestKind::FollowUpPost)
        .first()
        .map(|p| (*p).clone())
    {
        h.respond(p.id, Reply::status(503));
        posts.push(p);
        h.advance(20_000); // past any backoff
        assert!(posts.len() <= 10, "retries are bounded");
    }
    assert_eq!(posts.len(), 6, "the default policy makes six attempts");
    assert!(posts
        .iter()
        .all(|p| p.client_nonce() == posts[0].client_nonce()
            && p.client_seq() == posts[0].client_seq()));
    let item = h.store.queued()[0].clone();
    assert_eq!(item.state, ItemState::Failed);
    assert_eq!(item.text, "stubborn");
    assert_eq!(item.error.as_ref().map(|e| e.status), Some(Some(503)));
    assert!(h.errors().iter().any(|e| e.status == Some(503)));
    h.advance(600_000);
    assert_eq!(
        h.count(RequestKind::FollowUpPost),
        6,
        "a failed item waits for the user"
    );

    assert!(h.retry_queued(&item.id));
    let again = h.the_open(RequestKind::FollowUpPost);
    assert_eq!(again.client_nonce(), item.client_nonce);
    assert_eq!(again.client_seq(), item.client_seq);
    h.respond(again.id, accepted());
    assert_eq!(h.store.queued()[0].state, ItemState::Accepted);
}

#[test]
fn switching_session_mid_post_aborts_it_and_switching_back_resumes_it() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming_turn(&mut h, "first");
    h.submit("in flight");
    let p = h.the_open(RequestKind::FollowUpPost);

    h.switch_session("T");
    assert!(h.aborted.contains(&p.id), "the follow-up POST is aborted");
    assert!(h.aborted.contains(&chat), "the stream is aborted");
    assert_eq!(h.store.session_id(), "T");
    assert!(h.store.queued().is_empty(), "T has its own queue");
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
    assert_eq!(h.store.queued()[0].text, "in flight");
    // The late answer of the first POST still changes nothing now that S is current again.
    let before = h.store.queued()[0].clone();
    h.respond(p.id, Reply::error(409, "FOLLOWUP_UNSUPPORTED", "late"));
    assert_eq!(h.store.queued()[0], before);
    assert!(h.store.capabilities().native_follow_up);
    h.respond(again.id, accepted());
    assert_eq!(h.store.queued()[0].state, ItemState::Accepted);
}

#[test]
fn client_seq_strictly_increases_across_a_simulated_reload() {
    let mut first = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut first, "first");
    first.submit("a");
    first.submit("b");
    let seqs_before: Vec<u64> = first.store.queued().iter().map(|i| i.client_seq).collect();
    assert!(seqs_before[0] < seqs_before[1]);

    // The page reloads a few seconds later: a new store, nothing stored, a later clock.
    let mut second = Harness::at(options_with(PI_CAPS), T0 + 3_000, 99);
    streaming_turn(&mut second, "after reload");
    second.submit("c");
    let p = second.the_open(RequestKind::FollowUpPost);
    assert!(
        p.client_seq() > *seqs_before.last().unwrap(),
        "{} <= {:?}",
        p.client_seq(),
        seqs_before
    );
    assert_ne!(p.client_nonce(), first.store.queued()[0].client_nonce);
}

#[test]
fn a_follow_up_post_without_an_answer_times_out_and_is_retried() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    h.submit("hello?");
    let p = h.the_open(RequestKind::FollowUpPost);
    let timeout = 30_000; // StoreOptions::followup_timeout_ms's default
    h.advance(timeout - 1);
    assert!(!h.aborted.contains(&p.id));
    h.advance(1);
    assert!(h.aborted.contains(&p.id), "the silent POST is aborted");
    assert_eq!(h.store.queued()[0].state, ItemState::Queued);
    h.advance(500); // the first backoff
    let again = h.the_open(RequestKind::FollowUpPost);
    assert_ne!(again.id, p.id);
    assert_eq!(again.client_seq(), p.client_seq());
    assert_eq!(again.client_nonce(), p.client_nonce());
    h.respond(again.id, accepted());
    assert_eq!(h.store.queued()[0].state, ItemState::Accepted);
}

// ===== the stream (SPEC §3, §7) ============================================================

#[test]
fn the_legacy_trace_streams_into_the_canonical_history() {
    let mut h = Harness::with_caps(PI_CAPS);
    assert_eq!(h.send("[A] hello").kind, SubmitKind::Sent);
    assert_eq!(h.store.status(), Status::Submitted);
    let optimistic = h.store.messages()[0].id.clone();
    let chat = h.the_open(RequestKind::Chat);
    let body = chat.body();
    assert_eq!(body["id"], SESSION);
    assert_eq!(body["sessionId"], SESSION);
    assert_eq!(body["message"], "[A] hello");
    assert_eq!(body["trigger"], "submit-message");
    assert_eq!(body["messageId"], optimistic.as_str());
    assert!(is_v4_uuid(body["clientTurnId"].as_str().unwrap()));
    assert!(body.get("messages").is_none(), "pi mode sends no history");

    // The trace in 61-byte network chunks; the follow-up is queued a third of the way in.
    let reply = Reply::sse(trace()).turn_id("turn-trace-1").chunked(61);
    let Reply::Answer { head, chunks, .. } = reply else {
        unreachable!()
    };
    h.head(chat.id, head);
    assert_eq!(h.store.status(), Status::Submitted, "no body bytes yet");
    let third = chunks.len() / 3;
    for (i, c) in chunks.iter().enumerate() {
        h.body(chat.id, c);
        assert_eq!(h.store.status(), Status::Streaming, "chunk {i}");
        if i == third {
            assert_eq!(h.submit("[B] follow-up question").kind, SubmitKind::Queued);
            let p = h.the_open(RequestKind::FollowUpPost);
            h.respond(p.id, accepted());
            assert_eq!(h.store.queued()[0].state, ItemState::Accepted);
        }
    }
    assert!(
        h.store.queued().is_empty(),
        "consumed by data-followup-consumed"
    );
    assert_eq!(h.store.turn_id(), Some("turn-trace-1"));
    h.end(chat.id);
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(h.store.error(), None);
    assert_eq!(h.store.turn_id(), None, "no turn runs any more");

    let got = h.history();
    assert_eq!(got.len(), 4, "{got:#?}");
    assert_eq!(without_ids(&got), without_ids(&canonical_trace_history()));
    // The optimistic user message became the server's: no second "[A]" bubble.
    let users: Vec<_> = h
        .store
        .messages()
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.text())
        .collect();
    assert_eq!(users, ["[A] hello", "[B] follow-up question"]);
    assert_eq!(h.count(RequestKind::MessagesPut), 0, "pi mode never PUTs");
    assert!(h.errors().is_empty(), "{:#?}", h.errors());
    assert!(h
        .events
        .iter()
        .any(|e| matches!(e, StoreEvent::Finish { .. })));
}

#[test]
fn the_turn_id_comes_from_data_turn_start() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("[A] hello");
    let chat = h.the_open(RequestKind::Chat).id;
    // No x-turn-id header: the chunk is the only source.
    h.respond(chat, Reply::sse(trace()).chunked(200).open());
    assert_eq!(h.store.turn_id(), Some("turn-trace-1"));
}

#[test]
fn stop_mid_stream_aborts_the_stream_and_deletes_the_turn() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("[A] hello");
    let chat = h.the_open(RequestKind::Chat).id;
    let events = sse_events(&trace());
    let half: Vec<u8> = events[..events.len() / 3].concat();
    h.respond(chat, Reply::sse(half).chunked(64).open());
    assert_eq!(h.store.status(), Status::Streaming);
    let partial = h.store.messages().last().unwrap().text();
    assert!(partial.starts_with("Answer A: "), "{partial}");

    h.stop();
    assert!(h.aborted.contains(&chat));
    let del = h.the_open(RequestKind::TurnDelete);
    assert_eq!(del.method, Method::Delete);
    assert_eq!(del.path, "/api/v1/agent/chat/S/turn?turnId=turn-trace-1");
    assert_eq!(h.store.status(), Status::Ready);
    h.act(|s, _| s.set_draft("next"));
    assert!(h.store.composer().can_send);

    // Bytes of the aborted stream that were already on their way change nothing.
    let rev = h.store.revision();
    h.body(chat, &trace());
    assert_eq!(h.store.revision(), rev);
    assert_eq!(h.store.messages().last().unwrap().text(), partial);
    h.respond(del.id, Reply::status(204));
    assert!(h.errors().is_empty());
    assert_eq!(h.store.submit(h.now).kind, SubmitKind::Sent);
}

/// Cuts the trace mid-event after `complete` whole events.
fn cut_trace(complete: usize) -> (Vec<u8>, Vec<Vec<u8>>) {
    let events = sse_events(&trace());
    let mut sent = events[..complete].concat();
    sent.extend_from_slice(&events[complete][..10]); // a few bytes of the next one
    (sent, events)
}

#[test]
fn a_broken_stream_resumes_from_the_last_event_received() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("[A] hello");
    let chat = h.the_open(RequestKind::Chat).id;
    let complete = 40;
    let (sent, events) = cut_trace(complete);
    let seen = h.respond(
        chat,
        Reply::sse(sent).chunked(50).broken("connection reset"),
    );
    assert!(
        seen.iter().skip(1).all(|s| *s == Status::Streaming),
        "{seen:?}"
    );
    let before_resume = h.history();
    assert_eq!(h.count(RequestKind::StreamResume), 0, "not at once");

    h.advance(500); // resume_delay_ms
    let resume = h.the_open(RequestKind::StreamResume);
    assert_eq!(resume.method, Method::Get);
    assert_eq!(
        resume.path,
        format!("/api/v1/agent/chat/S/stream?cursor={}", complete - 1)
    );
    assert_eq!(h.history(), before_resume, "the partial history is kept");

    // The server replays everything after the cursor.
    let rest = events[complete..].concat();
    h.respond(resume.id, Reply::sse(rest).chunked(77));
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(
        without_ids(&h.history()),
        without_ids(&canonical_trace_history())
    );
}

#[test]
fn a_resume_that_overlaps_what_was_received_duplicates_nothing() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("[A] hello");
    let chat = h.the_open(RequestKind::Chat).id;
    let (sent, events) = cut_trace(40);
    h.respond(chat, Reply::sse(sent).broken("connection reset"));
    h.advance(500);
    let resume = h.the_open(RequestKind::StreamResume);
    // A server that replays its whole buffer, turn-start included: what was applied already
    // is not applied again, not even for a moment.
    let before_resume = h.history();
    h.respond(
        resume.id,
        Reply::sse(events[..40].concat()).chunked(77).open(),
    );
    assert_eq!(h.history(), before_resume);
    for e in &events[40..] {
        h.body(resume.id, e);
    }
    h.end(resume.id);
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(
        without_ids(&h.history()),
        without_ids(&canonical_trace_history())
    );
}

#[test]
fn a_resume_answered_204_ends_the_turn_and_loads_the_history() {
    let mut opts = options_with(PI_CAPS);
    opts.hydrate = true;
    let mut h = Harness::new(opts);
    let hydrate = h.the_open(RequestKind::MessagesGet);
    assert_eq!(
        (hydrate.method, hydrate.path.as_str()),
        (Method::Get, MESSAGES)
    );
    h.respond(hydrate.id, Reply::json(200, json!({"messages": []})));
    assert!(h.store.hydrated());

    h.send("[A] hello");
    let chat = h.the_open(RequestKind::Chat).id;
    let (sent, _) = cut_trace(12);
    h.respond(chat, Reply::sse(sent).broken("connection reset"));
    h.advance(500);
    let resume = h.the_open(RequestKind::StreamResume);
    h.respond(resume.id, Reply::status(204));
    assert_eq!(h.store.status(), Status::Ready);
    let history = h.the_open(RequestKind::MessagesGet);
    assert_eq!(history.path, MESSAGES);
    h.respond(
        history.id,
        Reply::json(200, json!({"messages": canonical_trace_history()})),
    );
    assert_eq!(h.history(), canonical_trace_history());
    assert_eq!(h.store.status(), Status::Ready);
}

// ===== history ownership (SPEC §8) =========================================================

fn ai_sdk_stream() -> Vec<u8> {
    let mut body = sse(&[
        json!({"type": "start", "messageId": "msg-ai-1"}),
        json!({"type": "data-pi-message-start", "data": {"seq": 1, "messageId": "pi-a", "role": "assistant"}}),
        json!({"type": "text-start", "id": "t0"}),
        json!({"type": "text-delta", "id": "t0", "delta": "Hello "}),
        json!({"type": "data-pi-text-delta", "data": {"seq": 2, "messageId": "pi-a", "partId": "0", "delta": "IGNORED"}}),
        json!({"type": "text-delta", "id": "t0", "delta": "world"}),
        json!({"type": "text-end", "id": "t0"}),
        json!({"type": "finish", "finishReason": "stop"}),
    ]);
    body.extend_from_slice(DONE);
    body
}

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
            finish_reason: Some("stop".into())
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
    assert!(
        file_part.get("url").is_none(),
        "data: URL stripped: {file_part}"
    );
    assert_eq!(stored[1], msgs[1]);
}

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

/// A turn sent as AI SDK whose first read says `data-pi-mode`: pi mode streams from the first
/// byte, so the status is `streaming` at once, not at the next read (found by review).
#[test]
fn data_pi_mode_in_the_first_read_is_streaming_at_once() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    h.send("hi");
    let chat = h.last(RequestKind::Chat);
    let first = sse(&[
        json!({"type": "data-pi-mode", "data": {"enabled": true}}),
        pi_chunk(
            "pi-message-start",
            1,
            json!({"messageId": "a1", "role": "assistant"}),
        ),
    ]);
    h.respond(chat.id, Reply::sse(first).open());
    assert_eq!(h.store.status(), Status::Streaming);
}

// ===== turn end with items still queued (SPEC §6) ==========================================

/// Ends the turn's stream cleanly.
fn end_turn(h: &mut Harness, chat: RequestId) {
    h.respond(chat, Reply::sse(DONE.to_vec()));
}

#[test]
fn items_never_posted_at_turn_end_become_the_next_turn_and_its_follow_ups() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming_turn(&mut h, "first");
    h.submit("a");
    let p = h.the_open(RequestKind::FollowUpPost);
    h.respond(p.id, Reply::status(503)); // a backoff is pending
    h.submit("b");
    h.submit("c");
    assert_eq!(h.count(RequestKind::FollowUpPost), 1);

    end_turn(&mut h, chat);
    // "a" may have reached the server: its copy there is cancelled before it is sent anew.
    let del = h.the_open(RequestKind::FollowUpDelete);
    assert_eq!(
        del.path,
        format!(
            "{FOLLOWUP}?clientNonce={}&clientSeq={}",
            p.client_nonce(),
            p.client_seq()
        )
    );
    assert_eq!(
        h.open(RequestKind::Chat).len(),
        0,
        "the turn waits for the DELETE's answer"
    );
    h.respond(del.id, Reply::status(204));
    let next = h.the_open(RequestKind::Chat);
    assert_eq!(next.message(), "a");
    assert_eq!(h.store.status(), Status::Submitted);
    let texts: Vec<&str> = h.store.queued().iter().map(|i| i.text.as_str()).collect();
    assert_eq!(texts, ["b", "c"]);
    let users: Vec<String> = h
        .store
        .messages()
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.text())
        .collect();
    assert_eq!(users, ["first", "a"]);

    // The rest follow as follow-ups of that new turn, in order, once it streams.
    h.respond(
        next.id,
        Reply::sse(sse(&[
            json!({"type": "data-turn-start", "data": {"turnId": "turn-2"}}),
        ]))
        .open(),
    );
    let pb = h.the_open(RequestKind::FollowUpPost);
    assert_eq!(pb.message(), "b");
    h.respond(pb.id, accepted());
    let pc = h.the_open(RequestKind::FollowUpPost);
    assert_eq!(pc.message(), "c");
    assert!(pb.client_seq() < pc.client_seq());
    h.respond(pc.id, accepted());
    assert_eq!(h.count(RequestKind::Chat), 2);
}

#[test]
fn items_queued_right_before_the_end_follow_in_order() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming_turn(&mut h, "first");
    h.submit("a");
    h.submit("b");
    let pa = h.the_open(RequestKind::FollowUpPost);
    // The turn ends while "a"'s POST is on its way.
    end_turn(&mut h, chat);
    assert_eq!(h.store.status(), Status::Ready);
    h.respond(pa.id, accepted());
    // The server has "a" but its turn is over: stalled, visible. "b" was never posted: it
    // becomes the next turn.
    assert_eq!(h.store.queued()[0].state, ItemState::Stalled);
    assert_eq!(h.store.queued()[0].text, "a");
    let next = h.the_open(RequestKind::Chat);
    assert_eq!(next.message(), "b");
    assert_eq!(h.store.queued().len(), 1);
}

#[test]
fn accepted_items_never_consumed_stall_and_retry_as_a_new_message() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming_turn(&mut h, "first");
    h.submit("late one");
    let p = h.the_open(RequestKind::FollowUpPost);
    h.respond(p.id, accepted());
    let id = h.store.queued()[0].id.clone();
    assert!(
        !h.retry_queued(&id),
        "nothing to retry while the server has it"
    );

    end_turn(&mut h, chat);
    assert_eq!(h.store.status(), Status::Ready);
    let item = h.store.queued()[0].clone();
    assert_eq!(item.state, ItemState::Stalled);
    assert_eq!(item.text, "late one");
    assert_eq!(h.count(RequestKind::Chat), 1, "no silent duplicate");

    assert!(h.retry_queued(&id));
    let del = h.the_open(RequestKind::FollowUpDelete);
    assert_eq!(del.method, Method::Delete);
    assert_eq!(
        del.path,
        format!(
            "{FOLLOWUP}?clientNonce={}&clientSeq={}",
            item.client_nonce, item.client_seq
        )
    );
    assert_eq!(
        h.count(RequestKind::Chat),
        1,
        "the new turn waits for the DELETE's answer"
    );
    assert_eq!(
        h.store.messages().last().unwrap().text(),
        "late one",
        "shown at once"
    );
    h.respond(del.id, Reply::status(204));
    let chat2 = h.the_open(RequestKind::Chat);
    assert_eq!(chat2.message(), "late one");
    assert!(h.store.queued().is_empty());
    assert_eq!(h.store.messages().last().unwrap().text(), "late one");
    assert_eq!(h.store.status(), Status::Submitted);
    // The DELETE is sent before the new message.
    assert!(del.id < chat2.id);
}

// ===== errors (SPEC §2, §10) ===============================================================

#[test]
fn turn_already_active_is_a_typed_error_and_the_user_message_stays() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.submit("hello");
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(
        chat,
        Reply::error(409, "conflict", "turn_already_active").chunked(7),
    );
    assert_eq!(h.store.status(), Status::Error);
    let e = h.store.error().expect("an error in the snapshot").clone();
    assert_eq!(e.kind, ErrorKind::TurnAlreadyActive);
    assert_eq!(e.status, Some(409));
    assert_eq!(e.server_code.as_deref(), Some("conflict"));
    assert_eq!(e.message, "turn_already_active");
    assert_eq!(h.store.messages().len(), 1);
    assert_eq!(h.store.messages()[0].text(), "hello");
    assert!(h.errors().contains(&&e));
    h.act(|s, _| s.set_draft("try again"));
    assert!(h.store.composer().can_send);
}

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

// ===== more edges ==========================================================================

#[test]
fn a_follow_up_queued_before_the_stream_starts_waits_for_it() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("first");
    assert_eq!(h.store.status(), Status::Submitted);
    assert_eq!(h.submit("second").kind, SubmitKind::Queued);
    assert_eq!(h.store.draft(), "");
    // The chat POST may still be on its way: a follow-up must not overtake it.
    assert_eq!(h.count(RequestKind::FollowUpPost), 0);
    h.run_until_idle();
    assert_eq!(h.count(RequestKind::FollowUpPost), 0);
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(
        chat,
        Reply::sse(sse(&[
            json!({"type": "data-turn-start", "data": {"turnId": "t"}}),
        ]))
        .open(),
    );
    let p = h.the_open(RequestKind::FollowUpPost);
    assert_eq!(p.message(), "second");
}

#[test]
fn a_failed_chat_post_leaves_the_queued_items_for_the_user() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("first");
    h.submit("second");
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(chat, Reply::error(409, "conflict", "turn_already_active"));
    assert_eq!(h.store.status(), Status::Error);
    assert_eq!(h.count(RequestKind::FollowUpPost), 0);
    assert_eq!(h.count(RequestKind::Chat), 1, "nothing is sent on its own");
    let item = h.store.queued()[0].clone();
    assert_eq!(
        (item.text.as_str(), item.state),
        ("second", ItemState::Queued)
    );
    // Retrying it sends it as a new message; it never left, so there is nothing to delete.
    assert!(h.retry_queued(&item.id));
    assert_eq!(h.the_open(RequestKind::Chat).message(), "second");
    assert_eq!(h.count(RequestKind::FollowUpDelete), 0);
}

#[test]
fn stop_keeps_unposted_items_queued_even_when_a_late_answer_comes() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    h.submit("a");
    h.submit("b");
    let pa = h.the_open(RequestKind::FollowUpPost);
    h.stop();
    assert_eq!(h.store.status(), Status::Ready);
    h.respond(pa.id, accepted());
    let states: Vec<(&str, ItemState)> = h
        .store
        .queued()
        .iter()
        .map(|i| (i.text.as_str(), i.state))
        .collect();
    assert_eq!(
        states,
        [("a", ItemState::Stalled), ("b", ItemState::Queued)],
        "a stop is not an invitation to send the next one"
    );
    assert_eq!(h.count(RequestKind::Chat), 1);
    h.run_until_idle();
    assert_eq!(h.count(RequestKind::Chat), 1);
}

#[test]
fn removing_a_queued_item_is_local_until_it_was_posted() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    h.submit("posted");
    h.submit("local");
    let p = h.the_open(RequestKind::FollowUpPost);
    let local = h.store.queued()[1].id.clone();
    assert!(h.act(|s, now| s.remove_queued(&local, now)));
    assert_eq!(h.count(RequestKind::FollowUpDelete), 0);
    let posted = h.store.queued()[0].clone();
    assert!(h.act(|s, now| s.remove_queued(&posted.id, now)));
    let del = h.the_open(RequestKind::FollowUpDelete);
    assert_eq!(
        del.path,
        format!(
            "{FOLLOWUP}?clientNonce={}&clientSeq={}",
            posted.client_nonce, posted.client_seq
        )
    );
    assert!(h.store.queued().is_empty());
    // Its POST's answer arrives after the removal: nothing comes back.
    h.respond(p.id, accepted());
    assert!(h.store.queued().is_empty());
    assert_eq!(h.count(RequestKind::FollowUpPost), 1);
}

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
    let texts: Vec<&str> = h.store.queued().iter().map(|i| i.text.as_str()).collect();
    assert_eq!(texts, ["b"]);
}

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

#[test]
fn a_stream_that_cannot_be_resumed_fails_the_turn_after_bounded_tries() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("[A] hello");
    let chat = h.the_open(RequestKind::Chat).id;
    let (sent, _) = cut_trace(20);
    h.respond(chat, Reply::sse(sent).broken("connection reset"));
    let partial = h.history();
    let mut delays = Vec::new();
    let mut last = h.now;
    while h.store.status().is_busy() {
        h.run_until_idle();
        if let Some(r) = h
            .open(RequestKind::StreamResume)
            .first()
            .map(|r| (*r).clone())
        {
            delays.push(r.at - last);
            last = r.at;
            h.respond(r.id, Reply::network("offline"));
        }
        assert!(delays.len() <= 5, "resumes are bounded");
    }
    assert_eq!(delays, [500, 1_000, 2_000], "resume_delay_ms, doubling");
    assert_eq!(h.store.status(), Status::Error);
    assert_eq!(h.store.error().unwrap().kind, ErrorKind::Network);
    assert_eq!(h.history(), partial, "what streamed stays");
}

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
    let e = h.store.error().unwrap();
    assert_eq!(e.message, "400 scripted bad request");
    let roles: Vec<Role> = h.store.messages().iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant]);
    assert_eq!(h.store.queued()[0].state, ItemState::Stalled);
    assert_eq!(
        h.count(RequestKind::Chat),
        1,
        "nothing is sent after an error"
    );
}

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
    assert_eq!(h.store.error().unwrap().kind, ErrorKind::Protocol);
    assert!(h.aborted.contains(&chat));
    assert_eq!(h.store.messages().len(), 1);
}

#[test]
fn hydration_that_lands_after_a_send_keeps_the_new_message_last() {
    let mut opts = options_with(PI_CAPS);
    opts.hydrate = true;
    let mut h = Harness::new(opts);
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

#[test]
fn hydration_that_lands_mid_stream_loses_and_duplicates_nothing() {
    let mut opts = options_with(PI_CAPS);
    opts.hydrate = true;
    let mut h = Harness::new(opts);
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

#[test]
fn stop_before_the_server_named_the_turn_deletes_it_by_the_client_turn_id() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("hello");
    let chat = h.the_open(RequestKind::Chat);
    let client_turn_id = chat.body()["clientTurnId"].as_str().unwrap().to_string();
    assert!(is_v4_uuid(&client_turn_id));
    h.stop();
    assert_eq!(h.store.status(), Status::Ready);
    assert!(h.aborted.contains(&chat.id), "the chat POST is aborted");
    let del = h.the_open(RequestKind::TurnDelete);
    assert_eq!(
        del.path,
        format!("/api/v1/agent/chat/S/turn?turnId={client_turn_id}")
    );
}

// ===== tool catalog and tool UI metadata (the tool UI plan) ================================

fn catalog_json(names: &[&str]) -> Value {
    let tools: Vec<Value> = names
        .iter()
        .map(|n| {
            if *n == "pi.subagent" {
                json!({"name": n, "description": "runs a nested agent", "inputSchema": {"type": "object"},
                       "ui": {"rendererId": "pi-subagent", "displayGroup": "agents", "icon": "bot"}})
            } else {
                json!({"name": n})
            }
        })
        .collect();
    json!({ "tools": tools })
}

#[test]
fn the_catalog_is_fetched_per_session_and_a_stale_answer_is_ignored() {
    let mut h = Harness::new(options());
    let first = h.the_open(RequestKind::Catalog);
    assert_eq!(first.path, "/api/v1/agent/catalog?sessionId=S");
    assert!(h.store.tools().is_empty());
    h.switch_session("T");
    let second = h.the_open(RequestKind::Catalog);
    assert_eq!(second.path, "/api/v1/agent/catalog?sessionId=T");
    // The first session's answer comes late: it changes nothing.
    h.respond(
        first.id,
        Reply::json(200, catalog_json(&["ls", "echo", "pi.subagent"])),
    );
    assert!(h.store.tools().is_empty());
    h.respond(second.id, Reply::json(200, catalog_json(&["ls", "echo"])));
    let names: Vec<&str> = h.store.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["ls", "echo"]);
    // Back to S: its own catalog again, with the namespaced harness tool.
    h.switch_session(SESSION);
    let again = h.the_open(RequestKind::Catalog);
    h.respond(
        again.id,
        Reply::json(200, catalog_json(&["ls", "echo", "pi.subagent"])),
    );
    let names: Vec<&str> = h.store.tools().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["ls", "echo", "pi.subagent"]);
    assert_eq!(
        h.store.tools()[2]
            .ui
            .as_ref()
            .unwrap()
            .renderer_id
            .as_deref(),
        Some("pi-subagent")
    );
}

#[test]
fn no_catalog_is_no_tools_and_no_error() {
    for reply in [
        Reply::status(404),
        Reply::status(500),
        Reply::network("down"),
        Reply::json(200, json!({"x": 1})),
    ] {
        let mut h = Harness::new(options());
        let c = h.the_open(RequestKind::Catalog);
        h.respond(c.id, reply);
        assert!(h.store.tools().is_empty());
        assert!(h.errors().is_empty(), "{:?}", h.errors());
    }
}

#[test]
fn tool_parts_resolve_their_ui_from_details_then_data_tool_ui_then_the_catalog() {
    let mut h = Harness::new(options_with(PI_CAPS));
    let c = h.the_open(RequestKind::Catalog);
    h.respond(c.id, Reply::json(200, catalog_json(&["ls", "pi.subagent"])));
    let chat = streaming_turn(&mut h, "go");
    let pi = |t: &str, d: Value| json!({"type": format!("data-pi-{t}"), "data": d});
    h.body(
        chat,
        &sse(&[
            pi(
                "message-start",
                json!({"seq": 1, "messageId": "a1", "role": "assistant"}),
            ),
            pi(
                "tool-call-start",
                json!({"seq": 2, "messageId": "a1", "toolCallId": "c1", "toolName": "pi.subagent"}),
            ),
            pi(
                "tool-call-end",
                json!({"seq": 3, "messageId": "a1", "toolCallId": "c1", "input": {"task": "t"}}),
            ),
        ]),
    );
    let i = h.message_index("a1");
    // From the catalog only.
    assert_eq!(
        h.store.export_message(i)["parts"][0]["ui"],
        json!({"rendererId": "pi-subagent", "displayGroup": "agents", "icon": "bot"})
    );
    let v0 = h.store.message_version(i);
    // Live progress: a data-tool-ui chunk (not history in pi mode) shows on the part.
    h.body(
        chat,
        &sse(&[json!({"type": "data-tool-ui", "data": {"toolCallId": "c1", "rendererId": "pi-subagent",
                       "details": {"uiKind": "pi-subagent", "status": "running", "transcript": []}}})]),
    );
    assert!(
        h.store.message_version(i) > v0,
        "the part's ui changed: the message is re-exported"
    );
    assert_eq!(
        h.store.export_message(i)["parts"][0]["ui"]["details"]["status"],
        "running"
    );
    assert_eq!(h.store.messages().len(), 2, "not a bubble of its own");
    assert!(h
        .events
        .iter()
        .any(|e| matches!(e, StoreEvent::Data { name, .. } if name == "tool-ui")));
    // The result's details win, and stay structured on the part.
    h.body(
        chat,
        &sse(&[pi(
            "tool-result",
            json!({"seq": 4, "messageId": "a1", "toolCallId": "c1", "output": "ok",
                   "details": {"uiKind": "pi-subagent", "status": "done", "steps": [1, 2]}}),
        )]),
    );
    let part = &h.store.export_message(i)["parts"][0];
    assert_eq!(part["details"]["steps"], json!([1, 2]));
    assert_eq!(part["ui"]["details"]["status"], "done");
    assert_eq!(part["ui"]["icon"], "bot");
}

#[test]
fn details_survive_hydration_from_the_canonical_history() {
    let mut opts = options_with(PI_CAPS);
    opts.hydrate = true;
    let mut h = Harness::new(opts);
    let get = h.the_open(RequestKind::MessagesGet);
    h.respond(
        get.id,
        Reply::json(
            200,
            json!({"messages": [{"id": "a", "role": "assistant", "parts": [
                {"type": "dynamic-tool", "toolName": "pi.subagent", "toolCallId": "c", "state": "output-available",
                 "input": {}, "output": "ok", "details": {"uiKind": "pi-subagent", "transcript": [{"role": "user", "text": "t"}]}}
            ]}]}),
        ),
    );
    let part = &h.store.export_message(0)["parts"][0];
    assert_eq!(part["details"]["transcript"][0]["text"], "t");
    assert_eq!(part["ui"]["rendererId"], "pi-subagent");
}

// ===== AI SDK mode actions: regenerate, edit, tool outputs, approvals, resume ==============

fn ai_answer(id: &str, text: &str) -> Vec<u8> {
    let mut body = sse(&[
        json!({"type": "start", "messageId": id}),
        json!({"type": "start-step"}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": text}),
        json!({"type": "text-end", "id": "t"}),
        json!({"type": "finish-step"}),
        json!({"type": "finish", "finishReason": "stop"}),
    ]);
    body.extend_from_slice(DONE);
    body
}

/// Two finished AI SDK turns: [u(one), a1, u(two), a2].
fn two_ai_turns(h: &mut Harness) {
    for (text, id) in [("one", "a1"), ("two", "a2")] {
        h.send(text);
        let chat = h.last(RequestKind::Chat);
        h.respond(
            chat.id,
            Reply::sse(ai_answer(id, &format!("answer {text}"))),
        );
        assert_eq!(h.store.status(), Status::Ready);
    }
    assert_eq!(h.store.messages().len(), 4);
}

#[test]
fn regenerate_trims_after_the_user_message_and_asks_again() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    two_ai_turns(&mut h);
    assert!(h.store.can_regenerate());
    assert!(h.act(|s, now| s.regenerate(None, now)));
    let chat = h.last(RequestKind::Chat);
    assert_eq!(chat.body()["trigger"], "regenerate-message");
    assert_eq!(chat.body()["messageId"], "a2");
    let sent: Vec<&str> = chat.body()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(sent, ["user", "assistant", "user"]);
    assert_eq!(
        h.store.messages().len(),
        3,
        "the old answer is gone at once"
    );
    h.respond(chat.id, Reply::sse(ai_answer("a2b", "again")));
    let texts: Vec<String> = h.store.messages().iter().map(|m| m.text()).collect();
    assert_eq!(texts, ["one", "answer one", "two", "again"]);
    // pi mode: the server owns history, nothing to regenerate.
    let mut pi = Harness::with_caps(PI_CAPS);
    assert!(!pi.act(|s, now| s.regenerate(None, now)));
}

/// `useChat`'s Retry after a failed turn: `regenerate()` asks the last message again when it
/// is the user's, keeping everything (a fresh chat as well as a long one); the answer is
/// appended after it.
#[test]
fn regenerate_after_a_failed_turn_asks_the_unanswered_user_message_again() {
    for earlier_turns in [false, true] {
        let mut h = Harness::with_caps(AI_SDK_CAPS);
        if earlier_turns {
            two_ai_turns(&mut h);
        }
        h.send("three");
        let chat = h.last(RequestKind::Chat);
        h.respond(chat.id, Reply::error(500, "internal", "boom"));
        assert_eq!(h.store.status(), Status::Error);
        assert!(h.store.can_regenerate(), "the Retry of useChat");
        assert!(h.act(|s, now| s.regenerate(None, now)));
        let chat = h.last(RequestKind::Chat);
        assert_eq!(chat.body()["trigger"], "regenerate-message");
        assert_eq!(chat.body().get("messageId"), None, "no answer to replace");
        let sent: Vec<&str> = chat.body()["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let parts = m["parts"].as_array().unwrap();
                let text = parts.iter().find(|p| p["type"] == "text").unwrap();
                text["text"].as_str().unwrap()
            })
            .collect();
        let want: &[&str] = if earlier_turns {
            &["one", "answer one", "two", "answer two", "three"]
        } else {
            &["three"]
        };
        assert_eq!(sent, want);
        h.respond(chat.id, Reply::sse(ai_answer("a3", "answer three")));
        assert_eq!(h.store.status(), Status::Ready);
        let last = h.store.messages().last().unwrap();
        assert_eq!(
            (last.id.as_str(), last.text()),
            ("a3", "answer three".into())
        );
        assert_eq!(h.store.messages().len(), want.len() + 1);
    }
    // An empty chat has nothing to ask again.
    let h = Harness::with_caps(AI_SDK_CAPS);
    assert!(!h.store.can_regenerate());
}

#[test]
fn edit_replaces_the_user_message_and_drops_what_follows() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    two_ai_turns(&mut h);
    let first = h.store.messages()[0].id.clone();
    let r = h.act(|s, now| s.edit(&first, "one, edited", vec![], now));
    assert_eq!(r.kind, SubmitKind::Sent);
    let chat = h.last(RequestKind::Chat);
    assert_eq!(chat.body()["trigger"], "submit-message");
    assert_eq!(chat.body()["messageId"], first.as_str());
    let sent = chat.body()["messages"].as_array().unwrap().clone();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["id"], first.as_str());
    assert_eq!(sent[0]["parts"][0]["text"], "one, edited");
    h.respond(chat.id, Reply::sse(ai_answer("a9", "new answer")));
    let texts: Vec<String> = h.store.messages().iter().map(|m| m.text()).collect();
    assert_eq!(texts, ["one, edited", "new answer"]);
    // An assistant message is not editable; nor is anything while busy.
    let a = h.store.messages()[1].id.clone();
    assert_eq!(
        h.act(|s, now| s.edit(&a, "x", vec![], now)).kind,
        SubmitKind::Blocked
    );
}

#[test]
fn a_client_tool_output_completes_the_message_and_continues_it_automatically() {
    let mut opts = options_with(AI_SDK_CAPS);
    opts.send_automatically_when = AutoSend::ToolCallsComplete;
    let mut h = Harness::new(opts);
    h.send("where am I?");
    let chat = h.last(RequestKind::Chat);
    let mut body = sse(&[
        json!({"type": "start", "messageId": "a1"}),
        json!({"type": "start-step"}),
        json!({"type": "tool-input-start", "toolCallId": "c1", "toolName": "getLocation"}),
        json!({"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": "{\"precise\":"}),
        json!({"type": "tool-input-available", "toolCallId": "c1", "toolName": "getLocation", "input": {"precise": true}}),
        json!({"type": "finish-step"}),
        json!({"type": "finish", "finishReason": "tool-calls"}),
    ]);
    body.extend_from_slice(DONE);
    h.respond(chat.id, Reply::sse(body));
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(
        h.count(RequestKind::Chat),
        1,
        "nothing to send before the output"
    );
    assert!(h.act(|s, now| s.add_tool_output("c1", Ok(json!({"city": "Paris"})), now)));
    let next = h.last(RequestKind::Chat);
    assert_eq!(h.count(RequestKind::Chat), 2, "sent automatically");
    assert_eq!(next.body()["messageId"], "a1");
    let sent = next.body()["messages"].as_array().unwrap().clone();
    let part = &sent[1]["parts"][1];
    assert_eq!(
        (part["state"].as_str(), &part["output"]),
        (Some("output-available"), &json!({"city": "Paris"}))
    );
    // The answer continues the same assistant message: no second bubble.
    let mut more = sse(&[
        json!({"type": "start", "messageId": "a1"}),
        json!({"type": "start-step"}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": "You are in Paris."}),
        json!({"type": "text-end", "id": "t"}),
        json!({"type": "finish", "finishReason": "stop"}),
    ]);
    more.extend_from_slice(DONE);
    h.respond(next.id, Reply::sse(more));
    assert_eq!(h.store.messages().len(), 2);
    assert_eq!(h.store.messages()[1].text(), "You are in Paris.");
    assert_eq!(h.count(RequestKind::Chat), 2, "complete: no third request");
}

#[test]
fn a_tool_approval_round_trip() {
    let mut opts = options_with(AI_SDK_CAPS);
    opts.send_automatically_when = AutoSend::ApprovalsAnswered;
    let mut h = Harness::new(opts);
    h.send("delete the file");
    let chat = h.last(RequestKind::Chat);
    let mut body = sse(&[
        json!({"type": "start", "messageId": "a1"}),
        json!({"type": "start-step"}),
        json!({"type": "tool-input-available", "toolCallId": "c1", "toolName": "rm", "input": {"path": "x"}}),
        json!({"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "c1"}),
        json!({"type": "finish-step"}),
        json!({"type": "finish"}),
    ]);
    body.extend_from_slice(DONE);
    h.respond(chat.id, Reply::sse(body));
    let part = h.store.messages()[1].parts[1].as_tool().unwrap().clone();
    assert_eq!(part.state.as_str(), "approval-requested");
    assert!(
        !h.act(|s, now| s.add_tool_approval_response("nope", true, None, now)),
        "unknown approval"
    );
    assert!(h.act(|s, now| s.add_tool_approval_response(
        "ap1",
        false,
        Some("not now".into()),
        now
    )));
    let next = h.last(RequestKind::Chat);
    let sent = next.body()["messages"].as_array().unwrap().clone();
    let p = &sent[1]["parts"][1];
    assert_eq!(p["state"], "approval-responded");
    assert_eq!(
        p["approval"],
        json!({"id": "ap1", "approved": false, "reason": "not now"})
    );
}

#[test]
fn an_ai_sdk_resume_that_replays_the_start_does_not_duplicate_the_message() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    h.send("tell me");
    let chat = h.last(RequestKind::Chat);
    let events = sse_events(&ai_answer("a1", "whole answer"));
    // Three events arrive, then the connection breaks.
    h.respond(chat.id, Reply::sse(events[..4].concat()).broken("reset"));
    h.advance(10_000);
    let resume = h.last(RequestKind::StreamResume);
    assert!(resume.path.ends_with("?cursor=3"), "{}", resume.path);
    // This server replays the whole response, start included, under a new id.
    let mut replay = sse(&[json!({"type": "start", "messageId": "a1-renamed"})]);
    replay.extend(events[1..].concat());
    h.respond(resume.id, Reply::sse(replay));
    assert_eq!(h.store.status(), Status::Ready);
    let msgs = h.store.messages();
    assert_eq!(msgs.len(), 2, "one assistant message");
    assert_eq!(msgs[1].id, "a1-renamed");
    assert_eq!(msgs[1].text(), "whole answer", "not doubled");
}

#[test]
fn a_silent_stream_counts_as_dropped_after_the_idle_timeout() {
    let mut opts = options_with(PI_CAPS);
    opts.stream_idle_timeout_ms = Some(30_000);
    let mut h = Harness::new(opts);
    let chat = streaming_turn(&mut h, "hello");
    // Bytes keep it alive (a keep-alive comment too).
    h.advance(20_000);
    h.body(chat, b": keep-alive\n\n");
    h.advance(20_000);
    assert_eq!(h.count(RequestKind::StreamResume), 0);
    assert!(!h.aborted.contains(&chat));
    // Then nothing for 30 s: aborted and resumed from the cursor, not left hanging.
    h.advance(11_000);
    assert!(h.aborted.contains(&chat));
    h.advance(1_000);
    let resume = h.the_open(RequestKind::StreamResume);
    assert!(resume.path.ends_with("?cursor=0"), "{}", resume.path);
    assert_eq!(h.store.status(), Status::Streaming);
    // A chat POST that never answers at all fails the turn instead (nothing to resume).
    let mut opts = options_with(PI_CAPS);
    opts.stream_idle_timeout_ms = Some(30_000);
    let mut h = Harness::new(opts);
    h.send("anyone?");
    h.advance(31_000);
    assert_eq!(h.store.status(), Status::Error);
    assert_eq!(h.store.error().unwrap().kind, ErrorKind::Network);
    assert_eq!(h.store.messages().len(), 1, "the message is kept");
}

// ===== lone surrogates (JSON escapes of half a UTF-16 pair) ================================

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
    assert_eq!(h.store.error(), None, "no event was refused");
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
    let half = char::from_u32(agent_chat_store::protocol::json::MARKERS + 0xD83D - 0xD800);
    assert_eq!(
        post["messages"][1]["parts"][0]["text"],
        format!("smile 😀 and half {}!", half.unwrap())
    );
}

/// `useChat` stops at an `error` chunk (its processor throws it): what follows in the stream is
/// not applied, the turn ends failed (the stream is dropped), and `clearError` gives `ready`
/// back with the messages as they were.
#[test]
fn an_error_chunk_ends_the_turn_there_and_clear_error_makes_it_ready() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    h.send("hi");
    let chat = h.last(RequestKind::Chat);
    let body = sse(&[
        json!({"type": "start", "messageId": "a1"}),
        json!({"type": "text-start", "id": "t"}),
        json!({"type": "text-delta", "id": "t", "delta": "Hel"}),
        json!({"type": "error", "errorText": "boom"}),
        json!({"type": "text-delta", "id": "t", "delta": "lo"}),
        json!({"type": "data-late", "data": 1}),
    ]);
    h.respond(chat.id, Reply::sse(body).open());
    assert_eq!(h.store.status(), Status::Error);
    assert_eq!(h.store.error().unwrap().message, "boom");
    assert_eq!(h.store.messages()[1].text(), "Hel");
    assert!(h.aborted.contains(&chat.id), "the stream is dropped");
    assert_eq!(h.errors().len(), 1);
    // The rest of the stream, should it still arrive, changes nothing.
    h.body(
        chat.id,
        &sse(&[json!({"type": "text-delta", "id": "t", "delta": "!"})]),
    );
    assert_eq!(h.store.messages()[1].text(), "Hel");
    let before = h.store.messages().to_vec();
    h.act(|s, _| s.clear_error());
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(h.store.error(), None);
    assert_eq!(h.store.messages(), &before[..]);
    assert_eq!(h.send("again").kind, SubmitKind::Sent);
}

/// As `useChat`: the status stays `submitted` until the first chunk that changes the message
/// (a UI shows its waiting indicator until then): not the first byte, a `start`, a step's
/// start, nor a `finish` without metadata.
#[test]
fn submitted_lasts_until_the_first_chunk_that_changes_the_message() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    h.send("hi");
    let chat = h.last(RequestKind::Chat);
    let head = sse(&[
        json!({"type": "start", "messageId": "a1"}),
        json!({"type": "start-step"}),
        json!({"type": "message-metadata"}),
    ]);
    h.respond(chat.id, Reply::sse(head).open());
    assert_eq!(h.store.status(), Status::Submitted);
    h.body(
        chat.id,
        &sse(&[json!({"type": "reasoning-start", "id": "r"})]),
    );
    assert_eq!(h.store.status(), Status::Streaming);
    // A turn with nothing that writes goes from submitted to ready.
    h.body(
        chat.id,
        &sse(&[json!({"type": "reasoning-end", "id": "r"})]),
    );
    h.end(chat.id);
    h.send("again");
    let chat = h.last(RequestKind::Chat);
    let body = sse(&[
        json!({"type": "start"}),
        json!({"type": "start-step"}),
        json!({"type": "finish-step"}),
        json!({"type": "finish"}),
    ]);
    let statuses = h.respond(chat.id, Reply::sse(body));
    assert!(!statuses.contains(&Status::Streaming), "{statuses:?}");
    assert_eq!(h.store.status(), Status::Ready);
}

/// As `useChat`: the answer enters the history at the first chunk that writes it. A stream
/// that fails at once leaves no empty answer (which the next POST would carry), a `start`
/// naming the message shows it (still `submitted`), and a continued message that the stream
/// only gives a step's start stays as it was.
#[test]
fn the_answer_appears_at_the_first_chunk_that_writes_it() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    h.send("hi");
    let chat = h.last(RequestKind::Chat);
    let body = sse(&[
        json!({"type": "start"}),
        json!({"type": "start-step"}),
        json!({"type": "error", "errorText": "test-error"}),
    ]);
    h.respond(chat.id, Reply::sse(body));
    assert_eq!(h.store.status(), Status::Error);
    assert_eq!(h.store.messages().len(), 1, "only the user message");
    h.act(|s, _| s.clear_error());
    h.send("again");
    let chat = h.last(RequestKind::Chat);
    assert_eq!(chat.body()["messages"].as_array().unwrap().len(), 2);
    h.respond(
        chat.id,
        Reply::sse(sse(&[json!({"type": "start", "messageId": "a1"})])).open(),
    );
    assert_eq!(h.store.status(), Status::Submitted);
    let last = h.store.messages().last().unwrap();
    assert_eq!((last.id.as_str(), last.parts.len()), ("a1", 0));
    h.body(chat.id, &ai_answer("a1", "hello")[..]);
    h.end(chat.id);
    assert_eq!(h.store.messages().last().unwrap().text(), "hello");
    // A continued turn (after a tool output, say) whose stream writes nothing.
    let before = h.store.messages().last().unwrap().clone();
    let version = h.store.message_version(h.store.messages().len() - 1);
    assert!(h.act(|s, now| s.continue_turn(now)));
    let chat = h.last(RequestKind::Chat);
    let body = sse(&[
        json!({"type": "start"}),
        json!({"type": "start-step"}),
        json!({"type": "finish-step"}),
        json!({"type": "finish"}),
    ]);
    h.respond(chat.id, Reply::sse(body));
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(h.store.messages().last().unwrap(), &before);
    assert_eq!(
        h.store.message_version(h.store.messages().len() - 1),
        version
    );
}

/// The state of the tool part of call `call`, wherever it is.
fn tool_state(h: &Harness, call: &str) -> Option<agent_chat_store::protocol::ToolState> {
    h.store
        .messages()
        .iter()
        .flat_map(|m| m.parts.iter())
        .filter_map(|p| p.as_tool())
        .find(|t| t.tool_call_id == call)
        .map(|t| t.state)
}

// Found by review (helper-28) of the pending answer: each failed before its fix.

/// A finished AI SDK turn whose answer `a1` made the tool `calls` (one step), the first one
/// answered, and the turn that continues it sent: its chat request, not answered yet.
fn continued_tool_turn(h: &mut Harness, calls: &[&str]) -> Sent {
    h.send("hi");
    let chat = h.last(RequestKind::Chat);
    let mut chunks = vec![
        json!({"type": "start", "messageId": "a1"}),
        json!({"type": "start-step"}),
    ];
    for c in calls {
        chunks.push(
            json!({"type": "tool-input-available", "toolCallId": c, "toolName": "x", "input": {}}),
        );
    }
    chunks.extend([json!({"type": "finish-step"}), json!({"type": "finish"})]);
    let mut body = sse(&chunks);
    body.extend_from_slice(DONE);
    h.respond(chat.id, Reply::sse(body));
    assert_eq!(h.store.status(), Status::Ready);
    assert!(h.act(|s, now| s.add_tool_output(calls[0], Ok(json!(1)), now)));
    assert!(h.act(|s, now| s.continue_turn(now)));
    h.last(RequestKind::Chat)
}

/// A tool output the user adds while the continued message is pending (after `start`,
/// before the first writing chunk) is lost when the stale copy enters the history.
#[test]
fn tool_output_added_while_pending_is_kept() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    let chat = continued_tool_turn(&mut h, &["c1", "c2"]);
    h.respond(
        chat.id,
        Reply::sse(sse(&[
            json!({"type": "start"}),
            json!({"type": "start-step"}),
        ]))
        .open(),
    );
    assert_eq!(h.store.status(), Status::Submitted);
    // The user (or the host's tool) answers the second call while the model thinks.
    assert!(h.act(|s, now| s.add_tool_output("c2", Ok(json!(2)), now)));
    assert_eq!(
        tool_state(&h, "c2"),
        Some(agent_chat_store::protocol::ToolState::OutputAvailable)
    );
    h.body(
        chat.id,
        &sse(&[
            json!({"type": "text-start", "id": "t"}),
            json!({"type": "text-delta", "id": "t", "delta": "ok"}),
        ]),
    );
    assert_eq!(
        tool_state(&h, "c2"),
        Some(agent_chat_store::protocol::ToolState::OutputAvailable),
        "the output the user added is gone"
    );
}

/// A stream whose first writing chunk is a protocol violation: useChat throws before
/// write(), so no answer enters the messages; the store keeps an empty assistant message,
/// which the next POST carries.
#[test]
fn a_violation_as_first_write_leaves_no_empty_answer() {
    for fast in [false, true] {
        let mut h = Harness::with_caps(AI_SDK_CAPS);
        h.send("hi");
        let chat = h.last(RequestKind::Chat);
        let bad = if fast {
            json!({"type": "text-delta", "id": "t", "delta": "x"})
        } else {
            json!({"type": "tool-output-available", "toolCallId": "nope", "output": 1})
        };
        h.respond(chat.id, Reply::sse(sse(&[json!({"type": "start"}), bad])));
        assert_eq!(h.store.status(), Status::Error);
        assert_eq!(
            h.store.messages().len(),
            1,
            "fast={fast}: {:?}",
            h.store.messages()
        );
    }
}

/// pi mode: clearError while streaming drops `error`, then the turn ends `error` with no error.
#[test]
fn clear_error_while_streaming_then_error_status_without_error() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("hi");
    let chat = h.last(RequestKind::Chat);
    h.respond(
        chat.id,
        Reply::sse(sse(&[
            json!({"type": "data-turn-start", "data": {"turnId": "t1"}}),
            json!({"type": "error", "errorText": "boom"}),
        ]))
        .open(),
    );
    assert_eq!(h.store.status(), Status::Streaming);
    assert!(h.store.error().is_some());
    h.act(|s, _| s.clear_error());
    h.end(chat.id);
    assert!(
        !(h.store.status() == Status::Error && h.store.error().is_none()),
        "status error without an error"
    );
}

/// A continued message whose current step has parts: a `reset-step` first thing writes in
/// useChat (the step's parts go, status streaming); the store leaves it pending.
#[test]
fn reset_step_on_continued_message() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    let chat = continued_tool_turn(&mut h, &["c1"]);
    h.respond(
        chat.id,
        Reply::sse(sse(&[
            json!({"type": "start"}),
            json!({"type": "reset-step"}),
        ]))
        .open(),
    );
    assert_eq!(h.store.status(), Status::Streaming, "useChat: streaming");
    assert_eq!(
        tool_state(&h, "c1"),
        None,
        "useChat: the step's tool part is gone"
    );
}
