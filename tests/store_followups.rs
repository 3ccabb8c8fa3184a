//! The follow-up poster (SPEC §6): one POST in flight, in order; retries with the same seq and
//! nonce after a backoff, bounded, then `failed` and retryable; duplicate and deleted answers;
//! `FollowUpUnsupported`; `clientSeq` across a reload; a POST that never answers; a follow-up
//! queued before the stream starts; removing a queued item.

#![cfg(feature = "pi")]

use crate::common;

use agent_chat_store::ErrorKind;
use agent_chat_store::ItemState;
use agent_chat_store::{Refusal, Status, BUSY_HINT};
use agent_chat_store::{RequestKind, SubmitKind};
use common::scenario::*;
use common::*;
use serde_json::json;

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
    let states: Vec<ItemState> = h.store.session().queued().iter().map(|i| i.state).collect();
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
        let item = &h.store.session().queued()[0];
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
        assert_eq!(
            h.store.session().queued()[0].state,
            ItemState::Accepted,
            "{what}"
        );
        assert_eq!(h.store.session().queued()[0].error, None, "{what}");
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
    assert_eq!(h.store.session().queued()[0].state, ItemState::Accepted);
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
    let texts: Vec<&str> = h
        .store
        .session()
        .queued()
        .iter()
        .map(|i| i.text.as_str())
        .collect();
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
        assert_eq!(h.store.composer().draft(), "");
        let p = h.the_open(RequestKind::FollowUpPost);
        h.respond(p.id, answer);
        assert!(!h.store.capabilities().native_follow_up);
        assert_eq!(h.store.composer().draft(), "keep me");
        assert!(h.store.session().queued().is_empty());
        let c = h.store.composer().state();
        assert!(!c.can_send, "busy without follow-ups");
        assert_eq!(c.hint, Some(BUSY_HINT));
        assert!(h
            .errors()
            .iter()
            .any(|e| e.kind == ErrorKind::FollowUpUnsupported));
        // Nothing is posted any more, and a busy submit is refused.
        assert_eq!(
            h.act(|s, now| s.composer_mut().submit(now)).reason,
            Some(Refusal::Busy)
        );
        h.advance(60_000);
        assert_eq!(h.count(RequestKind::FollowUpPost), 1);
    }
}

#[test]
fn unsupported_with_a_non_empty_composer_leaves_the_item_failed() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    h.submit("queued text");
    h.act(|s, _| s.composer_mut().set_draft("typing something else"));
    let p = h.the_open(RequestKind::FollowUpPost);
    h.respond(p.id, Reply::error(409, "FOLLOWUP_UNSUPPORTED", "no"));
    assert!(!h.store.capabilities().native_follow_up);
    assert_eq!(h.store.composer().draft(), "typing something else");
    let q = h.store.session().queued();
    assert_eq!(q.len(), 1);
    assert_eq!(q[0].state, ItemState::Failed);
    assert_eq!(q[0].text, "queued text");
}

#[test]
fn exhausted_retries_fail_visibly_and_retry_posts_again_with_the_same_nonce() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    h.submit("stubborn");
    assert_eq!(h.store.session().queued()[0].attempts, 1);
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
    let item = h.store.session().queued()[0].clone();
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
    assert_eq!(h.store.session().queued()[0].state, ItemState::Accepted);
}

#[test]
fn client_seq_strictly_increases_across_a_simulated_reload() {
    let mut first = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut first, "first");
    first.submit("a");
    first.submit("b");
    let seqs_before: Vec<u64> = first
        .store
        .session()
        .queued()
        .iter()
        .map(|i| i.client_seq)
        .collect();
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
    assert_ne!(
        p.client_nonce(),
        first.store.session().queued()[0].client_nonce
    );
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
    assert_eq!(h.store.session().queued()[0].state, ItemState::Queued);
    h.advance(500); // the first backoff
    let again = h.the_open(RequestKind::FollowUpPost);
    assert_ne!(again.id, p.id);
    assert_eq!(again.client_seq(), p.client_seq());
    assert_eq!(again.client_nonce(), p.client_nonce());
    h.respond(again.id, accepted());
    assert_eq!(h.store.session().queued()[0].state, ItemState::Accepted);
}

#[test]
fn a_follow_up_queued_before_the_stream_starts_waits_for_it() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("first");
    assert_eq!(h.store.status(), Status::Submitted);
    assert_eq!(h.submit("second").kind, SubmitKind::Queued);
    assert_eq!(h.store.composer().draft(), "");
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
fn removing_a_queued_item_is_local_until_it_was_posted() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    h.submit("posted");
    h.submit("local");
    let p = h.the_open(RequestKind::FollowUpPost);
    let local = h.store.session().queued()[1].id.clone();
    assert!(h.act(|s, now| s.follow_ups_mut().remove(&local, now)));
    assert_eq!(h.count(RequestKind::FollowUpDelete), 0);
    let posted = h.store.session().queued()[0].clone();
    assert!(h.act(|s, now| s.follow_ups_mut().remove(&posted.id, now)));
    let del = h.the_open(RequestKind::FollowUpDelete);
    assert_eq!(
        del.path,
        format!(
            "{FOLLOWUP}?clientNonce={}&clientSeq={}",
            posted.client_nonce, posted.client_seq
        )
    );
    assert!(h.store.session().queued().is_empty());
    // Its POST's answer arrives after the removal: nothing comes back.
    h.respond(p.id, accepted());
    assert!(h.store.session().queued().is_empty());
    assert_eq!(h.count(RequestKind::FollowUpPost), 1);
}
