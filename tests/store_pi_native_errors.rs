//! SPEC §14.1 (errors) on virtual time, as upstream's client shows them: an `error` event ends
//! the turn at once (status `error`, its message), a later `agent-end` changes nothing; a
//! prompt whose run fails before it starts ends in `error`, never `streaming`; a refused prompt
//! leaves no message and gives the draft back (SPEC §5); files alone are `empty`.

#![cfg(feature = "pi")]

use crate::common;

use agent_chat_store::{FileAttachment, RequestKind, Status, StoreEvent, SubmitKind};
use common::native_store::*;
use common::*;
use serde_json::json;

#[test]
fn an_error_event_shows_at_once_and_a_later_end_changes_nothing() {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "hi");
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "error", "seq": 2, "turnId": "t1", "error": {"code": "INTERNAL_ERROR", "message": "the provider failed"}}),
        ],
    );
    assert_eq!(h.store.status(), Status::Error, "at once, not at agent-end");
    let error = h.store.session().error().cloned().unwrap();
    assert_eq!(
        (error.message.as_str(), error.server_code.as_deref()),
        ("the provider failed", Some("INTERNAL_ERROR"))
    );
    feed(
        &mut h,
        ev,
        &[json!({"type": "agent-end", "seq": 3, "turnId": "t1", "status": "error"})],
    );
    assert_eq!(h.store.status(), Status::Error);
    let finishes = (h.events.iter())
        .filter(|e| matches!(e, StoreEvent::Finish { .. }))
        .count();
    assert_eq!(finishes, 1, "one end: {:#?}", h.events);
}

#[test]
fn a_prompt_whose_run_fails_before_it_starts_ends_in_error() {
    let (mut h, ev) = following(0);
    h.send("hi");
    let prompt = h.the_open(RequestKind::NativePrompt);
    let nonce = prompt.body()["clientNonce"].clone();
    h.respond(
        prompt.id,
        Reply::json(202, json!({"accepted": true, "cursor": 1})),
    );
    assert_eq!(h.store.status(), Status::Submitted);
    // The server's synthetic user message of a failed prompt, then its error; no agent-start,
    // no agent-end.
    let id = format!("prompt-error:{}:user", nonce.as_str().unwrap());
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "message-start", "seq": 1, "messageId": id, "role": "user", "clientNonce": nonce, "text": "hi"}),
            json!({"type": "error", "seq": 2, "error": {"code": "INTERNAL_ERROR", "message": "prompt failed"}}),
        ],
    );
    assert_eq!(h.store.status(), Status::Error);
    h.advance(120_000);
    assert_eq!(h.store.status(), Status::Error, "never streaming");
}

#[test]
fn files_alone_are_refused_as_empty_with_the_draft_kept() {
    let (mut h, _) = following(0);
    let file = FileAttachment {
        media_type: "image/png".into(),
        filename: Some("a.png".into()),
        url: "data:image/png;base64,AA==".into(),
        provider_reference: None,
        provider_metadata: None,
    };
    h.act(|s, _| s.composer_mut().set_files(vec![file.clone()]));
    let r = h.act(|s, now| s.composer_mut().submit(now));
    assert_eq!(r.kind, SubmitKind::Blocked);
    assert_eq!(r.reason, Some(agent_chat_store::Refusal::Empty));
    assert_eq!(h.store.composer().files(), [file]);
    assert_eq!(h.count(RequestKind::NativePrompt), 0);
}
