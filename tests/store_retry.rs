//! Retry after a failed turn (`TurnMut::retry`, assistant-ui's Reload on the error): one action,
//! what it does decided per mode by who owns the history.

#![cfg_attr(not(feature = "pi"), allow(unused))]

use crate::common;

use agent_chat_store::{RequestKind, Status};
use common::*;

/// AI SDK mode: the client owns the history, so Retry asks the failed turn again.
#[test]
fn where_the_client_owns_the_history_retry_asks_the_turn_again() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    assert!(!h.store.session().can_retry(), "nothing failed yet");
    h.send("hello");
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(chat, Reply::error(500, "server", "boom"));
    assert_eq!(h.store.status(), Status::Error);
    assert!(h.store.session().can_retry());

    assert!(h.act(|s, now| s.turn_mut().retry(now)));
    assert_eq!(h.count(RequestKind::Chat), 2, "the turn asked again, once");
    assert!(h.store.status().is_busy());
    assert!(!h.store.session().can_retry(), "not while it runs");
    assert!(
        !h.act(|s, now| s.turn_mut().retry(now)),
        "a second press does nothing"
    );
    assert_eq!(h.count(RequestKind::Chat), 2);
}

/// pi over the SSE routes, the connection lost: the server owns the history and may still run
/// the turn, so Retry never posts the message again; it attaches to what the server has.
#[cfg(feature = "pi")]
#[test]
fn a_lost_connection_retry_attaches_and_posts_nothing_again() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("hello");
    let chat = h.the_open(RequestKind::Chat).id;
    h.fail(chat, "connection reset");
    h.run_until_idle();
    assert_eq!(h.store.status(), Status::Error);
    assert!(h.store.session().can_retry());
    assert!(
        !h.store.session().can_regenerate(),
        "pi mode has no regenerate"
    );
    let resumes = h.count(RequestKind::StreamResume);

    assert!(h.act(|s, now| s.turn_mut().retry(now)));
    assert_eq!(
        h.count(RequestKind::Chat),
        1,
        "the message is not posted again"
    );
    assert_eq!(h.count(RequestKind::StreamResume), resumes + 1);
    assert!(h.store.session().error().is_none(), "the error is cleared");
    assert!(!h.store.session().can_retry());
}

/// pi over the SSE routes, the server's answer ended in its error (it ran the message and
/// failed): Retry sends the message again, once, as the user would type it again.
#[cfg(feature = "pi")]
#[test]
fn a_turn_the_server_failed_is_sent_again_once() {
    let mut h = Harness::with_caps(PI_CAPS);
    h.send("hello");
    let chat = h.the_open(RequestKind::Chat).id;
    h.respond(chat, Reply::error(500, "server", "boom"));
    assert_eq!(h.store.status(), Status::Error);
    assert!(h.store.session().can_retry());

    assert!(h.act(|s, now| s.turn_mut().retry(now)));
    assert_eq!(h.count(RequestKind::Chat), 2, "sent again, once");
    let body = h.last(RequestKind::Chat).body.unwrap().to_string();
    assert!(body.contains("hello"), "{body}");
    assert!(h.store.status().is_busy());
    assert!(
        !h.act(|s, now| s.turn_mut().retry(now)),
        "not while it runs"
    );
    assert_eq!(h.count(RequestKind::Chat), 2);
}

/// A stop is the user's, not a failure: no Retry is offered for it.
#[test]
fn a_stopped_turn_offers_no_retry() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    h.send("hello");
    h.act(|s, now| s.turn_mut().stop(now));
    assert!(!h.store.session().can_retry());
    assert!(!h.act(|s, now| s.turn_mut().retry(now)));
    assert_eq!(h.count(RequestKind::Chat), 1);
}
