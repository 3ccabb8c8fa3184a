//! The pi-native store's commands and bounds under bad input, on virtual time (issue 38): an
//! answer held to `limits`, a prompt the server never answers, busy refusals while the
//! server says idle, session titles, tool outputs for calls that wait for an approval.

#![cfg(feature = "pi")]

mod common;

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

/// A runaway answer over many events stops at `limits.maxMessageChars`: the run is stopped on
/// the server, what was shown stays, and the turn ends as the bound's error (`onFinish` says
/// an error, not a stop).
#[test]
fn a_runaway_answer_stops_at_the_message_bound_as_an_error() {
    let (mut h, ev) = following_with(|o| o.limits.max_message_chars = 10_000);
    run_started(&mut h, ev, "hi");
    feed(
        &mut h,
        ev,
        &[json!({"type": "message-start", "seq": 2, "messageId": "a1", "role": "assistant"})],
    );
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
    let error = h.store.error().cloned().unwrap();
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
    assert_eq!(h.store.error().unwrap().kind, ErrorKind::LimitExceeded);
    assert_eq!(finishes(&h).len(), 1);
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
    let error = h.store.error().unwrap();
    assert_eq!(error.kind, ErrorKind::LimitExceeded);
    assert_eq!(error.field.as_deref(), Some("limits.maxHistoryChars"));
    assert_eq!(h.count(RequestKind::NativeStop), 1);
    assert_eq!(finishes(&h), [(false, true)]);
}
