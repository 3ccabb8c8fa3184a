//! Follow-ups still queued when a turn ends (SPEC §6): items never posted become the next turn
//! and its follow-ups; items the server accepted but never consumed are taken back (DELETE)
//! and shown `stalled`; after a stop or a failed chat POST nothing is sent on its own.

// Most of these tests run pi mode; what they share goes unused without it.
#![cfg_attr(not(feature = "pi"), allow(unused))]

use crate::common;

use agent_chat_store::ItemState;
use agent_chat_store::Role;
use agent_chat_store::Status;
use agent_chat_store::{Method, RequestKind, SubmitKind};
use common::scenario::*;
use common::*;
use serde_json::json;

#[cfg(feature = "pi")]
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
    let texts: Vec<&str> = h
        .store
        .session()
        .queued()
        .iter()
        .map(|i| i.text.as_str())
        .collect();
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

/// SPEC §6 (amended): a follow-up the server accepted as its turn ended is stranded there (pi
/// polled its queue already) and would run after the next message, out of the user's order.
/// The store takes it back (DELETE) and sends it as the next message, before what was queued
/// after it.
#[cfg(feature = "pi")]
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
    // "a" first: its copy on the server is deleted, and its chat POST waits for that answer.
    let del = h.the_open(RequestKind::FollowUpDelete);
    assert_eq!(
        del.path,
        format!(
            "{FOLLOWUP}?clientNonce={}&clientSeq={}",
            pa.client_nonce(),
            pa.client_seq()
        )
    );
    assert_eq!(
        h.count(RequestKind::Chat),
        1,
        "waits for the DELETE's answer"
    );
    h.respond(del.id, Reply::status(204));
    let next = h.the_open(RequestKind::Chat);
    assert_eq!(next.message(), "a");
    let queued: Vec<&str> = h
        .store
        .session()
        .queued()
        .iter()
        .map(|q| q.text.as_str())
        .collect();
    assert_eq!(queued, ["b"]);
    // "b" follows "a" as its follow-up.
    h.respond(
        next.id,
        Reply::sse(sse(&[
            json!({"type": "data-turn-start", "data": {"turnId": "t2"}}),
        ]))
        .open(),
    );
    assert_eq!(h.the_open(RequestKind::FollowUpPost).message(), "b");
}

#[cfg(feature = "pi")]
#[test]
fn accepted_items_never_consumed_are_taken_back_and_sent_again() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming_turn(&mut h, "first");
    let p = accepted_follow_up(&mut h, "late one");
    let id = h.store.session().queued()[0].id.clone();
    assert!(
        !h.retry_queued(&id),
        "nothing to retry while the server has it"
    );

    end_turn(&mut h, chat);
    assert_eq!(h.store.status(), Status::Submitted, "held for the DELETE");
    assert!(h.store.session().queued().is_empty());
    let del = h.the_open(RequestKind::FollowUpDelete);
    assert_eq!(del.method, Method::Delete);
    assert_eq!(
        del.path,
        format!(
            "{FOLLOWUP}?clientNonce={}&clientSeq={}",
            p.client_nonce(),
            p.client_seq()
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
    assert_eq!(h.store.messages().last().unwrap().text(), "late one");
    assert_eq!(h.store.status(), Status::Submitted);
    // The DELETE is sent before the new message.
    assert!(del.id < chat2.id);
}

/// After a stop the server keeps pi's queue: what it accepted would run after the next prompt,
/// unasked. The store takes it back and leaves it stalled for the user.
#[cfg(feature = "pi")]
#[test]
fn a_stop_takes_accepted_items_back_and_keeps_them_stalled() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    let p = accepted_follow_up(&mut h, "queued one");
    h.stop();
    let dels = h.open(RequestKind::FollowUpDelete);
    assert_eq!(dels.len(), 1);
    assert_eq!(
        dels[0].path,
        format!(
            "{FOLLOWUP}?clientNonce={}&clientSeq={}",
            p.client_nonce(),
            p.client_seq()
        )
    );
    let item = h.store.session().queued()[0].clone();
    assert_eq!(
        (item.text.as_str(), item.state),
        ("queued one", ItemState::Stalled)
    );
    assert_eq!(h.count(RequestKind::Chat), 1, "nothing sent on its own");
    h.run_until_idle();
    assert_eq!(h.count(RequestKind::Chat), 1);
}

#[cfg(feature = "pi")]
#[test]
fn a_failed_chat_post_leaves_the_queued_items_for_the_user() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("first");
    h.submit("second");
    let chat = h.the_open(RequestKind::Chat).id;
    // (A 409 `turn_already_active` is no failure: it attaches, tests/store_attach.rs.)
    h.respond(chat, Reply::error(500, "internal", "the agent crashed"));
    assert_eq!(h.store.status(), Status::Error);
    assert_eq!(h.count(RequestKind::FollowUpPost), 0);
    assert_eq!(h.count(RequestKind::Chat), 1, "nothing is sent on its own");
    let item = h.store.session().queued()[0].clone();
    assert_eq!(
        (item.text.as_str(), item.state),
        ("second", ItemState::Queued)
    );
    // Retrying it sends it as a new message; it never left, so there is nothing to delete.
    assert!(h.retry_queued(&item.id));
    assert_eq!(h.the_open(RequestKind::Chat).message(), "second");
    assert_eq!(h.count(RequestKind::FollowUpDelete), 0);
}

#[cfg(feature = "pi")]
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
        .session()
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

/// A turn ends with an accepted follow-up pi may still hold; the DELETE taking it back gets
/// no answer (a network error), so it waits to go again. Returns that first DELETE.
#[cfg(feature = "pi")]
fn take_back_without_an_answer(h: &mut Harness) -> Sent {
    let chat = streaming_turn(h, "first");
    accepted_follow_up(h, "late one");
    end_turn(h, chat);
    let del = h.the_open(RequestKind::FollowUpDelete);
    h.respond(del.id, Reply::network("connection reset"));
    del
}

/// The DELETE that takes a stranded follow-up back gets no answer (the network): the server may
/// still hold the copy, to run it after the re-sent message as a second one. The turn waits,
/// and the DELETE goes again after a backoff; only its answer lets the chat POST go.
#[cfg(feature = "pi")]
#[test]
fn a_take_back_delete_without_an_answer_is_sent_again_before_the_message() {
    let mut h = Harness::with_caps(PI_CAPS);
    let del = take_back_without_an_answer(&mut h);
    assert_eq!(
        h.count(RequestKind::Chat),
        1,
        "no chat POST while the copy may be there"
    );
    assert_eq!(h.store.status(), Status::Submitted);
    h.advance(60_000);
    let again = h.the_open(RequestKind::FollowUpDelete);
    assert_ne!(again.id, del.id);
    assert_eq!(again.path, del.path);
    assert_eq!(h.count(RequestKind::Chat), 1);
    h.respond(again.id, Reply::status(204));
    assert_eq!(h.the_open(RequestKind::Chat).message(), "late one");
}

/// A store disposed while a take-back waits to be sent again sends nothing more, and its
/// clock asks for no wake-up for it (found by the store fuzz target: the DELETE went out
/// after `dispose()`).
#[cfg(feature = "pi")]
#[test]
fn a_disposed_store_does_not_send_a_take_back_again() {
    let mut h = Harness::with_caps(PI_CAPS);
    take_back_without_an_answer(&mut h);
    assert!(h.store.poll_timeout().is_some(), "the retry is due later");
    h.act(|s, _| s.dispose());
    assert_eq!(h.store.poll_timeout(), None);
    h.advance(600_000);
    h.act(|s, now| s.handle_timeout(now));
    assert_eq!(h.count(RequestKind::FollowUpDelete), 1);
    assert_eq!(h.count(RequestKind::Chat), 1);
}

/// The race SPEC §6 names: the server already started the copy a DELETE was to take back
/// (another tab's message came first, and pi ran the stranded copy after it). The reference
/// server answers 409 `followup_already_started`; the store does not send the text again, it
/// withdraws the bubble it showed for it and reads the history, which shows (and attaches to)
/// the server's run.
#[cfg(feature = "pi")]
#[test]
fn a_copy_the_server_already_started_is_not_sent_again() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming_turn(&mut h, "first");
    accepted_follow_up(&mut h, "late one");
    end_turn(&mut h, chat);
    let del = h.the_open(RequestKind::FollowUpDelete);
    assert_eq!(h.store.messages().last().unwrap().text(), "late one");
    let probes = h.count(RequestKind::StreamResume);
    h.respond(
        del.id,
        Reply::error(409, "conflict", "followup_already_started"),
    );
    assert_eq!(h.count(RequestKind::Chat), 1, "not sent a second time");
    assert!(h.store.session().queued().is_empty());
    let users: Vec<String> = (h.store.messages().iter())
        .filter(|m| m.role == Role::User)
        .map(|m| m.text())
        .collect();
    assert_eq!(
        users,
        ["first"],
        "the bubble of a message not sent is withdrawn"
    );
    assert_eq!(h.store.status(), Status::Ready);
    // (Without hydration the stream route is asked; with it, the history, tests/store_attach.rs.)
    let probe = h.the_open(RequestKind::StreamResume);
    assert_eq!(h.count(RequestKind::StreamResume), probes + 1);
    assert!(probe.path.ends_with("cursor=-1"), "{}", probe.path);
}

/// After a stop, a stalled item whose copy the server already started leaves the queue: a
/// retry would run it twice.
#[cfg(feature = "pi")]
#[test]
fn a_stalled_item_the_server_already_started_leaves_the_queue() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    accepted_follow_up(&mut h, "queued one");
    h.stop();
    let del = h.the_open(RequestKind::FollowUpDelete);
    assert_eq!(h.store.session().queued()[0].state, ItemState::Stalled);
    h.respond(
        del.id,
        Reply::error(409, "conflict", "followup_already_started"),
    );
    assert!(h.store.session().queued().is_empty());
    assert_eq!(h.count(RequestKind::Chat), 1);
}

/// A follow-up whose POST reached the server but whose answer was lost (the store cannot
/// know) is taken back at the turn's end like an accepted one: a real server keeps it and
/// would run it after the message re-sent before it (found by tests/fault_schedules.rs with
/// the server's queue kept across turns).
#[cfg(feature = "pi")]
#[test]
fn an_item_whose_answer_was_lost_is_taken_back_at_the_turn_end() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming_turn(&mut h, "first");
    h.submit("a");
    h.submit("b");
    let pa = h.the_open(RequestKind::FollowUpPost);
    h.respond(pa.id, accepted());
    let pb = h.the_open(RequestKind::FollowUpPost);
    h.respond(pb.id, Reply::network("connection reset after the server"));
    end_turn(&mut h, chat);
    let dels: Vec<String> = (h.open(RequestKind::FollowUpDelete).iter())
        .map(|d| d.path.clone())
        .collect();
    let path = |p: &Sent| {
        format!(
            "{FOLLOWUP}?clientNonce={}&clientSeq={}",
            p.client_nonce(),
            p.client_seq()
        )
    };
    assert_eq!(dels, [path(&pa), path(&pb)], "both copies, at once");
    let states: Vec<(&str, ItemState)> = (h.store.session().queued().iter())
        .map(|i| (i.text.as_str(), i.state))
        .collect();
    assert_eq!(
        states,
        [("b", ItemState::Stalled)],
        "a is on its way as the next turn"
    );
    let ids: Vec<_> = (h.open(RequestKind::FollowUpDelete).iter())
        .map(|d| d.id)
        .collect();
    for id in ids {
        h.respond(id, Reply::status(204));
    }
    let next = h.the_open(RequestKind::Chat);
    assert_eq!(next.message(), "a");
    end_turn(&mut h, next.id);
    // "b" follows as the turn after, its DELETE answered already: no second one.
    assert_eq!(h.the_open(RequestKind::Chat).message(), "b");
    assert_eq!(h.count(RequestKind::FollowUpDelete), 2);
}

/// A message the user sends while the turn's end waits (for a follow-up POST's answer here)
/// queues behind the waiting bubbles instead of overtaking them.
#[cfg(feature = "pi")]
#[test]
fn a_send_while_queued_items_wait_to_go_queues_behind_them() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming_turn(&mut h, "first");
    h.submit("a");
    let pa = h.the_open(RequestKind::FollowUpPost);
    end_turn(&mut h, chat);
    assert_eq!(h.store.status(), Status::Ready);
    let r = h.send("typed after a");
    assert_eq!(r.kind, agent_chat_store::SubmitKind::Queued);
    assert_eq!(h.count(RequestKind::Chat), 1, "nothing before a's answer");
    h.respond(pa.id, Reply::error(400, "validation_error", "no"));
    // "a" was refused: it stays failed for the user, and waits with what is behind it.
    let texts: Vec<(&str, ItemState)> = (h.store.session().queued().iter())
        .map(|i| (i.text.as_str(), i.state))
        .collect();
    assert_eq!(
        texts,
        [
            ("a", ItemState::Failed),
            ("typed after a", ItemState::Queued)
        ]
    );
}

/// The DELETE of an item the user removed gets no answer: it goes again after a backoff, or
/// the server would run the removed item after the next message.
#[cfg(feature = "pi")]
#[test]
fn a_removed_items_delete_without_an_answer_is_sent_again() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    accepted_follow_up(&mut h, "changed my mind");
    let id = h.store.session().queued()[0].id.clone();
    assert!(h.act(|s, now| s.follow_ups_mut().remove(&id, now)));
    let del = h.the_open(RequestKind::FollowUpDelete);
    h.respond(del.id, Reply::status(503));
    assert!(h.open(RequestKind::FollowUpDelete).is_empty());
    h.advance(60_000);
    let again = h.the_open(RequestKind::FollowUpDelete);
    assert_eq!(again.path, del.path);
    h.respond(again.id, Reply::status(204));
    h.advance(600_000);
    assert_eq!(h.count(RequestKind::FollowUpDelete), 2, "answered: done");
}

/// Right after a stop the user sends a new message while the DELETE of the stalled item is
/// still out: the real server keeps pi's queue across a stop, so a chat POST arriving first
/// would run the stalled copy after the new message, unasked. The message shows at once and
/// its chat POST goes once the DELETE is answered.
#[cfg(feature = "pi")]
#[test]
fn a_message_sent_right_after_a_stop_waits_for_the_take_back() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    accepted_follow_up(&mut h, "queued one");
    h.stop();
    let del = h.the_open(RequestKind::FollowUpDelete);
    assert_eq!(h.send("new question").kind, SubmitKind::Sent);
    assert_eq!(h.store.status(), Status::Submitted);
    assert_eq!(h.store.messages().last().unwrap().text(), "new question");
    assert_eq!(h.count(RequestKind::Chat), 1, "held for the DELETE");
    h.respond(del.id, Reply::status(204));
    assert_eq!(h.the_open(RequestKind::Chat).message(), "new question");
    let item = &h.store.session().queued()[0];
    assert_eq!(
        (item.text.as_str(), item.state),
        ("queued one", ItemState::Stalled)
    );
}

/// Stopping such a held message gives its text back to the composer and sends nothing.
#[cfg(feature = "pi")]
#[test]
fn stopping_a_message_held_for_a_take_back_gives_the_draft_back() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    accepted_follow_up(&mut h, "queued one");
    h.stop();
    let del = h.the_open(RequestKind::FollowUpDelete);
    h.act(|s, _| s.composer_mut().set_draft("new question"));
    assert_eq!(
        h.act(|s, now| s.composer_mut().submit(now)).kind,
        SubmitKind::Sent
    );
    assert_eq!(h.store.composer().draft(), "");
    h.stop();
    assert_eq!(h.store.composer().draft(), "new question");
    assert_ne!(h.store.messages().last().unwrap().text(), "new question");
    h.respond(del.id, Reply::status(204));
    assert_eq!(h.count(RequestKind::Chat), 1, "nothing sent");
}

/// A queued item the user sends as a new message (retry after the turn ended) waits for the
/// DELETE of the server's copy; a stop then puts it back where it was, `stalled`, rather than
/// losing it or handing it to the composer, and a later retry sends it once.
#[cfg(feature = "pi")]
#[test]
fn stopping_a_retried_item_held_for_its_take_back_leaves_it_stalled() {
    let mut h = Harness::with_caps(PI_CAPS);
    let chat = streaming_turn(&mut h, "first");
    h.submit("queued one");
    let post = h.the_open(RequestKind::FollowUpPost);
    end_turn(&mut h, chat);
    let id = h.store.session().queued()[0].id.clone();
    assert!(h.act(|s, now| s.follow_ups_mut().retry(&id, now)));
    assert!(
        h.store.session().queued().is_empty(),
        "on its way as a new message"
    );
    assert_eq!(h.store.status(), Status::Submitted);
    let del = h.the_open(RequestKind::FollowUpDelete);

    h.stop();
    let queued: Vec<_> = (h.store.session().queued().iter())
        .map(|q| (q.id.clone(), q.text.clone(), q.state))
        .collect();
    assert_eq!(
        queued,
        [(id.clone(), "queued one".into(), ItemState::Stalled)]
    );
    assert_ne!(h.store.messages().last().unwrap().text(), "queued one");
    h.respond(post.id, accepted());
    h.respond(del.id, Reply::status(204));
    h.run_until_idle();
    assert_eq!(h.count(RequestKind::Chat), 1, "nothing sent on its own");

    assert!(h.act(|s, now| s.follow_ups_mut().retry(&id, now)));
    assert_eq!(h.the_open(RequestKind::Chat).message(), "queued one");
    assert!(h.store.session().queued().is_empty());
}
