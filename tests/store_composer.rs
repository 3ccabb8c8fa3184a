//! The composer's busy-send policy (SPEC §5): busy without native follow-ups blocks and keeps
//! the draft, busy with them queues one follow-up POST and clears it, and files while busy are
//! refused where follow-ups cannot carry them.

// Most of these tests run pi mode; what they share goes unused without it.
#![cfg_attr(not(feature = "pi"), allow(unused))]

use crate::common;

use agent_chat_store::{Method, RequestKind, SubmitKind};
use agent_chat_store::{Refusal, BUSY_HINT, FILES_WHILE_BUSY_HINT};
use common::scenario::*;
use common::*;

#[test]
fn busy_without_native_follow_up_blocks_and_keeps_the_draft() {
    let mut h = Harness::with_caps(AI_SDK_CAPS);
    streaming_turn(&mut h, "first");
    let files = vec![file("https://example.invalid/a.png")];
    h.act(|s, _| {
        s.composer_mut().set_draft("second");
        s.composer_mut().set_files(files.clone());
    });
    let c = h.store.composer().state();
    assert!(!c.can_send);
    assert_eq!(c.reason, Some(Refusal::Busy));
    assert_eq!(c.hint, Some(BUSY_HINT));
    assert_eq!(c.hint, Some("Wait for the current response to finish."));

    let r = h.act(|s, now| s.composer_mut().submit(now));
    assert_eq!(r.kind, SubmitKind::Blocked);
    assert_eq!(r.reason, Some(Refusal::Busy));
    assert_eq!(h.store.composer().draft(), "second");
    assert_eq!(h.store.composer().files(), &files[..]);
    assert!(h.store.session().queued().is_empty());
    assert_eq!(h.count(RequestKind::FollowUpPost), 0);
    assert_eq!(h.count(RequestKind::Chat), 1);
}

#[cfg(feature = "pi")]
#[test]
fn busy_with_native_follow_up_queues_one_post_and_clears_the_draft() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    h.act(|s, _| s.composer_mut().set_draft("second"));
    assert!(h.store.composer().state().can_send);

    let r = h.act(|s, now| s.composer_mut().submit(now));
    assert_eq!(r.kind, SubmitKind::Queued);
    assert_eq!(h.store.composer().draft(), "");
    let q = h.store.session().queued();
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

#[cfg(feature = "pi")]
#[test]
fn files_while_busy_are_refused_without_follow_up_attachments() {
    let mut h = Harness::with_caps(PI_CAPS);
    streaming_turn(&mut h, "first");
    let files = vec![file("data:image/png;base64,AAAA")];
    h.act(|s, _| {
        s.composer_mut().set_draft("look at this");
        s.composer_mut().set_files(files.clone());
    });
    let r = h.act(|s, now| s.composer_mut().submit(now));
    assert_eq!(r.kind, SubmitKind::Blocked);
    assert_eq!(r.reason, Some(Refusal::FilesWhileBusy));
    assert_eq!(h.store.composer().state().hint, Some(FILES_WHILE_BUSY_HINT));
    assert_eq!(h.store.composer().draft(), "look at this");
    assert_eq!(h.store.composer().files(), &files[..]);
    assert!(h.store.session().queued().is_empty());
    assert_eq!(h.count(RequestKind::FollowUpPost), 0);
}
