//! Stop and stream resume (SPEC §2's stop and stream routes, §8, §12): a stop aborts the stream
//! and deletes the turn (by the server's turn id, or the client's before the server named it);
//! a broken or silent stream resumes from the cursor of the last event received and duplicates
//! nothing; a 204 ends the turn and loads the history; resumes are bounded; an AI SDK replay of
//! the `start` rebuilds the message.

// Most of these tests run pi mode; what they share goes unused without it.
#![cfg_attr(not(feature = "pi"), allow(unused))]

use crate::common;

use agent_chat_store::ErrorKind;
use agent_chat_store::Status;
use agent_chat_store::{Method, RequestKind, SubmitKind};
use common::scenario::*;
use common::*;
use serde_json::json;

#[cfg(feature = "pi")]
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
    h.act(|s, _| s.composer_mut().set_draft("next"));
    assert!(h.store.composer().state().can_send);

    // Bytes of the aborted stream that were already on their way change nothing.
    let rev = h.store.revision();
    h.body(chat, &trace());
    assert_eq!(h.store.revision(), rev);
    assert_eq!(h.store.messages().last().unwrap().text(), partial);
    h.respond(del.id, Reply::status(204));
    assert!(h.errors().is_empty());
    assert_eq!(h.store.composer_mut().submit(h.now).kind, SubmitKind::Sent);
}

#[cfg(feature = "pi")]
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

#[cfg(feature = "pi")]
#[test]
fn a_resume_that_overlaps_what_was_received_duplicates_nothing() {
    let mut h = Harness::with_caps(PI_CAPS);
    let (resume, events) = resumed_trace_turn(&mut h, 40);
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

#[cfg(feature = "pi")]
#[test]
fn a_resume_answered_204_ends_the_turn_and_loads_the_history() {
    let mut h = hydrating(PI_CAPS);
    let hydrate = h.the_open(RequestKind::MessagesGet);
    assert_eq!(
        (hydrate.method, hydrate.path.as_str()),
        (Method::Get, MESSAGES)
    );
    h.respond(hydrate.id, Reply::json(200, json!({"messages": []})));
    assert!(h.store.session().hydrated());

    let (resume, _) = resumed_trace_turn(&mut h, 12);
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

#[cfg(feature = "pi")]
#[test]
fn a_stream_that_cannot_be_resumed_fails_the_turn_after_bounded_tries() {
    let mut h = Harness::with_caps(PI_CAPS);
    broken_trace_turn(&mut h, 20);
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
    assert_eq!(h.store.session().error().unwrap().kind, ErrorKind::Network);
    assert_eq!(h.history(), partial, "what streamed stays");
}

#[cfg(feature = "pi")]
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

#[cfg(feature = "pi")]
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
    assert_eq!(h.store.session().error().unwrap().kind, ErrorKind::Network);
    assert_eq!(h.store.messages().len(), 1, "the message is kept");
}
