//! Liveness (issue 41) on virtual time: a stream that beats (SSE `:` comments, pi-native
//! heartbeat frames) is failed `heartbeatGraceMs` after a missed beat, not `streamIdleTimeoutMs`
//! after its last byte; the recovery (a resume, a reconnect from the cursor) runs first, and
//! when it fails the turn ends as `StreamStalled`. Beats keep a long silent tool run alive; a
//! stream that never beats keeps the idle timeout.

use crate::common;

use agent_chat_store::{ErrorKind, RequestId, RequestKind, Status};
use common::scenario::*;
use common::*;
use serde_json::json;

const BEAT: &[u8] = b": heartbeat\n\n";
const GRACE: u64 = 5_000;
const IDLE: u64 = 300_000;

/// A store with the default idle timeout and grace whose server answered its capabilities
/// with `extra` (e.g. `heartbeatMs`).
fn store(extra: serde_json::Value) -> Harness {
    let mut opts = options();
    opts.stream_idle_timeout_ms = Some(IDLE);
    assert_eq!(opts.heartbeat_grace_ms, Some(GRACE), "the default");
    let mut h = Harness::new(opts);
    let caps = h.the_open(RequestKind::Capabilities).id;
    let mut body = json!({"nativeFollowUp": false, "aiSdkOwnsHistory": true});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    h.respond(caps, Reply::json(200, body));
    h
}

/// A turn whose stream is open and showed one beat, at `heartbeat_ms` declared.
fn beating_turn(heartbeat_ms: u64) -> (Harness, RequestId) {
    let mut h = store(json!({"heartbeatMs": heartbeat_ms}));
    let chat = streaming_turn(&mut h, "hello");
    h.body(chat, BEAT);
    (h, chat)
}

#[test]
fn the_watchdog_fails_a_beating_stream_at_its_interval_plus_grace_and_not_before() {
    let (mut h, chat) = beating_turn(1_000);
    // Data after the beat moves the window as a beat would: the server is there.
    h.advance(500);
    h.body(chat, &sse(&[json!({"type": "text-start", "id": "t"})]));
    h.advance(1_000 + GRACE - 1);
    assert!(!h.aborted.contains(&chat), "not before interval + grace");
    h.advance(1);
    assert!(h.aborted.contains(&chat), "at interval + grace");
    // The recovery first: a resume on the stream route (the store's backoff, 500 ms).
    assert_eq!(h.store.status(), Status::Streaming);
    h.advance(500);
    let resume = h.the_open(RequestKind::StreamResume);
    // A proxy in front of the dead server answers it (Vite's dev proxy: 500).
    h.respond(resume.id, Reply::bytes(500, Some("text/plain"), ""));
    assert_eq!(h.store.status(), Status::Error);
    let error = h.store.session().error().unwrap().clone();
    assert_eq!(error.kind, ErrorKind::StreamStalled, "{error:?}");
    assert_eq!(error.status, Some(500), "the resume's own answer is kept");
    assert!(
        error.message.contains("stopped beating"),
        "{}",
        error.message
    );
    let diagnostics = h
        .events
        .iter()
        .filter(|e| format!("{e:?}").contains("no heartbeat or data for 6000 ms"));
    assert_eq!(diagnostics.count(), 1, "the drop says why: {:?}", h.events);
}

#[test]
fn a_resume_a_proxy_holds_without_a_head_is_given_the_beat_window_too() {
    let (mut h, chat) = beating_turn(1_000);
    h.advance(1_000 + GRACE);
    assert!(h.aborted.contains(&chat));
    h.advance(500);
    let resume = h.the_open(RequestKind::StreamResume).id;
    h.advance(1_000 + GRACE - 1);
    assert!(!h.aborted.contains(&resume));
    h.advance(1);
    assert!(h.aborted.contains(&resume), "not the 300 s idle timeout");
    // Resumed again (attempts are left), then refused: a stall.
    h.run_until_idle();
    assert_eq!(h.store.status(), Status::Error);
    let kind = h.store.session().error().unwrap().kind;
    assert_eq!(kind, ErrorKind::StreamStalled);
}

#[test]
fn a_stall_the_resume_picks_up_is_no_error() {
    let (mut h, chat) = beating_turn(1_000);
    h.advance(1_000 + GRACE);
    assert!(h.aborted.contains(&chat));
    h.advance(500);
    let resume = h.the_open(RequestKind::StreamResume).id;
    let body = [BEAT, &sse(&[json!({"type": "text-start", "id": "t"})])].concat();
    h.respond(resume, Reply::sse(body).open());
    assert_eq!(h.store.status(), Status::Streaming);
    // The resumed stream is watched again from its own beats.
    h.body(resume, BEAT);
    h.advance(1_000);
    h.respond(resume, Reply::sse(DONE.to_vec()));
    assert_eq!(h.store.status(), Status::Ready);
    assert!(h.store.session().error().is_none());
}

#[test]
fn a_later_failure_of_a_picked_up_stream_is_no_stall() {
    let (mut h, chat) = beating_turn(1_000);
    h.advance(1_000 + GRACE);
    assert!(h.aborted.contains(&chat));
    h.advance(500);
    let resume = h.the_open(RequestKind::StreamResume).id;
    // The resume answers (the server is there), without beats, then breaks off mid-event
    // and every resume after it is refused: a plain failure.
    let cut = sse(&[json!({"type": "text-start", "id": "t"})]);
    h.respond(
        resume,
        Reply::sse([&cut[..], b"data: {"].concat()).broken("reset"),
    );
    h.run_until_idle();
    while let Some(next) = h.open(RequestKind::StreamResume).first().map(|r| r.id) {
        h.respond(next, Reply::bytes(502, Some("text/plain"), ""));
        h.run_until_idle();
    }
    assert_eq!(h.store.status(), Status::Error);
    let kind = h.store.session().error().unwrap().kind;
    assert!(
        matches!(kind, ErrorKind::Server | ErrorKind::Network),
        "{kind:?}, not a stall"
    );
}

#[test]
fn a_long_silent_tool_run_on_a_beating_stream_is_not_cut() {
    let (mut h, chat) = beating_turn(25_000);
    h.body(
        chat,
        &sse(&[
            json!({"type": "start-step"}),
            json!({"type": "tool-input-available", "toolCallId": "c", "toolName": "build", "input": {}}),
        ]),
    );
    // Twenty minutes of nothing but beats, four times the idle timeout.
    for _ in 0..48 {
        h.advance(25_000);
        h.body(chat, BEAT);
    }
    assert!(!h.aborted.contains(&chat));
    assert_eq!(h.count(RequestKind::StreamResume), 0);
    assert_eq!(h.store.status(), Status::Streaming);
    h.respond(
        chat,
        Reply::sse(
            [
                sse(&[json!({"type": "tool-output-available", "toolCallId": "c", "output": "ok"})]),
                DONE.to_vec(),
            ]
            .concat(),
        ),
    );
    assert_eq!(h.store.status(), Status::Ready);
}

#[test]
fn an_undeclared_interval_is_learned_from_two_beats_and_one_comment_arms_nothing() {
    // No `heartbeatMs`: one comment (padding, a proxy's hello) is no interval.
    let mut h = store(json!({}));
    let chat = streaming_turn(&mut h, "hello");
    h.body(chat, b": padding\n\n");
    h.advance(IDLE - 1);
    assert!(!h.aborted.contains(&chat), "only the idle timeout holds");
    // Two beats 2 s apart: the interval is 2 s.
    let mut h = store(json!({}));
    let chat = streaming_turn(&mut h, "hello");
    h.body(chat, BEAT);
    h.advance(2_000);
    h.body(chat, BEAT);
    h.advance(2_000 + GRACE - 1);
    assert!(!h.aborted.contains(&chat));
    h.advance(1);
    assert!(h.aborted.contains(&chat));
    // Beats sent together teach no interval (at most one beat a read, gaps under 1 s).
    let mut h = store(json!({}));
    let chat = streaming_turn(&mut h, "hello");
    h.body(chat, b": a\n\n: b\n\n");
    h.advance(10);
    h.body(chat, BEAT);
    h.advance(60_000);
    assert!(!h.aborted.contains(&chat));
}

#[test]
fn a_stream_that_never_beats_keeps_the_idle_timeout() {
    let mut h = store(json!({"heartbeatMs": 1_000}));
    let chat = streaming_turn(&mut h, "hello");
    h.body(chat, &sse(&[json!({"type": "text-start", "id": "t"})]));
    h.advance(IDLE - 1);
    assert!(
        !h.aborted.contains(&chat),
        "a declared interval alone arms nothing"
    );
    h.advance(1);
    assert!(h.aborted.contains(&chat));
    h.advance(500);
    let resume = h.the_open(RequestKind::StreamResume).id;
    h.respond(resume, Reply::bytes(500, Some("text/plain"), ""));
    let kind = h.store.session().error().unwrap().kind;
    assert_eq!(kind, ErrorKind::Server, "a plain drop, not a stall");
}

#[test]
fn a_zero_grace_turns_the_watchdog_off() {
    let mut opts = options();
    opts.stream_idle_timeout_ms = Some(IDLE);
    opts.heartbeat_grace_ms = None;
    let mut h = Harness::new(opts);
    let caps = h.the_open(RequestKind::Capabilities).id;
    h.respond(caps, Reply::json(200, json!({"heartbeatMs": 1_000})));
    let chat = streaming_turn(&mut h, "hello");
    h.body(chat, BEAT);
    h.advance(IDLE - 1);
    assert!(!h.aborted.contains(&chat));
    h.advance(1);
    assert!(h.aborted.contains(&chat));
}

#[cfg(feature = "pi")]
mod native {
    use super::*;
    use common::native_store::*;

    const HEARTBEAT: &[u8] = b"{\"type\":\"heartbeat\",\"now\":\"2026-01-01T00:00:00Z\"}\n";

    /// Following, the events stream beat once at open, a run going.
    fn running() -> (Harness, RequestId) {
        let (mut h, ev) = following(0);
        h.body(ev, HEARTBEAT);
        run_started(&mut h, ev, "hello");
        assert_eq!(h.store.status(), Status::Streaming);
        (h, ev)
    }

    #[test]
    fn missed_heartbeats_reconnect_from_the_cursor_then_fail_the_turn_as_stalled() {
        let (mut h, ev) = running();
        // The protocol's 25 s plus the grace, from the last byte (the run's start).
        h.advance(25_000 + GRACE - 1);
        assert!(!h.aborted.contains(&ev));
        h.advance(1);
        assert!(h.aborted.contains(&ev), "the watchdog");
        assert_eq!(h.store.status(), Status::Streaming, "the reconnect first");
        // The reconnects from the cursor meet a proxy's 500 (the server is gone).
        let mut reconnects = Vec::new();
        while h.store.status() == Status::Streaming {
            h.advance(h.store.poll_timeout().unwrap() - h.now);
            if let Some(next) = h
                .open(RequestKind::NativeEvents)
                .first()
                .map(|r| (r.id, r.path.clone()))
            {
                assert!(next.1.ends_with("events?cursor=1"), "{}", next.1);
                reconnects.push(h.now);
                h.respond(next.0, Reply::bytes(500, Some("text/plain"), ""));
            }
            assert!(reconnects.len() <= 3);
        }
        assert_eq!(reconnects.len(), 2, "{reconnects:?}");
        assert_eq!(h.store.status(), Status::Error);
        let error = h.store.session().error().unwrap().clone();
        assert_eq!(error.kind, ErrorKind::StreamStalled, "{error:?}");
        // Backoffs of 1 s and 2 s (±25 %) after the watchdog.
        let failed_after = h.now - (T0 + 25_000 + GRACE);
        assert!((2_000..=4_000).contains(&failed_after), "{failed_after}");
    }

    /// After `StreamStalled` the link goes on reconnecting from its cursor by itself; when
    /// the server is back its events are read: the run's end settles the session, the error
    /// stays shown until the user acts.
    #[test]
    fn after_a_stall_the_link_comes_back_on_its_own() {
        let (mut h, _) = running();
        h.advance(25_000 + GRACE);
        while h.store.status() == Status::Streaming {
            h.advance(h.store.poll_timeout().unwrap() - h.now);
            if let Some(next) = h.open(RequestKind::NativeEvents).first().map(|r| r.id) {
                h.respond(next, Reply::bytes(500, Some("text/plain"), ""));
            }
        }
        assert_eq!(
            h.store.session().error().unwrap().kind,
            ErrorKind::StreamStalled
        );
        h.advance(h.store.poll_timeout().unwrap() - h.now);
        let back = h.the_open(RequestKind::NativeEvents);
        assert!(back.path.ends_with("events?cursor=1"), "{}", back.path);
        let end = lines(&[json!({"type": "agent-end", "seq": 2, "turnId": "t1", "status": "ok"})]);
        h.respond(
            back.id,
            Reply::bytes(
                200,
                Some("application/x-ndjson"),
                [HEARTBEAT, &end[..]].concat(),
            )
            .open(),
        );
        assert_eq!(
            h.store.status(),
            Status::Error,
            "{:?}",
            h.store.session().error()
        );
        assert_eq!(
            h.store.session().error().unwrap().kind,
            ErrorKind::StreamStalled
        );
        h.act(|s, _| s.turn_mut().clear_error());
        assert_eq!(h.store.status(), Status::Ready);
    }

    #[test]
    fn a_reconnect_that_beats_again_keeps_the_run() {
        let (mut h, ev) = running();
        h.advance(25_000 + GRACE);
        assert!(h.aborted.contains(&ev));
        h.advance(h.store.poll_timeout().unwrap() - h.now);
        let again = h.the_open(RequestKind::NativeEvents).id;
        h.respond(
            again,
            Reply::bytes(200, Some("application/x-ndjson"), HEARTBEAT).open(),
        );
        assert_eq!(h.store.status(), Status::Streaming);
        assert!(h.store.session().error().is_none());
    }

    /// A dead server connected directly: the events stream ends and every reconnect is
    /// refused. Once the link says it cannot reach the server (its third failure in a row) the
    /// turn ends with that typed error and Retry, not a streaming answer that never moves.
    #[test]
    fn a_closed_events_stream_no_reconnect_reaches_fails_the_turn() {
        let (mut h, ev) = running();
        h.fail(ev, "connection reset");
        let mut refused = 0;
        while h.store.status() == Status::Streaming {
            h.advance(h.store.poll_timeout().unwrap() - h.now);
            if let Some(next) = h.open(RequestKind::NativeEvents).first().map(|r| r.id) {
                refused += 1;
                h.fail(next, "fetch failed");
            }
            assert!(refused <= 3, "{refused}");
        }
        assert_eq!(h.store.status(), Status::Error);
        let error = h.store.session().error().unwrap().clone();
        assert_eq!(error.kind, ErrorKind::Network, "{error:?}");
        assert!(h.store.session().can_retry());
        assert_eq!(h.count(RequestKind::NativePrompt), 1, "nothing sent again");
        // Retry: the error goes, the link (still trying) reads what the server has.
        assert!(h.act(|s, now| s.turn_mut().retry(now)));
        assert!(h.store.session().error().is_none());
        assert_eq!(
            h.count(RequestKind::NativePrompt),
            1,
            "the prompt ran: not sent again"
        );
    }

    /// The same failure, and then the server is back before the user acts: the link's next
    /// connect takes back what the link said, but the turn's failure stays shown (never
    /// `error` without an error) until the user acts, as after a stall.
    #[test]
    fn a_connect_after_the_unreachable_failure_keeps_the_turns_error() {
        let (mut h, ev) = running();
        h.fail(ev, "connection reset");
        while h.store.status() == Status::Streaming {
            h.advance(h.store.poll_timeout().unwrap() - h.now);
            if let Some(next) = h.open(RequestKind::NativeEvents).first().map(|r| r.id) {
                h.fail(next, "fetch failed");
            }
        }
        assert_eq!(h.store.status(), Status::Error);
        h.advance(h.store.poll_timeout().unwrap() - h.now);
        let back = h.the_open(RequestKind::NativeEvents).id;
        h.respond(
            back,
            Reply::bytes(200, Some("application/x-ndjson"), HEARTBEAT).open(),
        );
        assert_eq!(h.store.status(), Status::Error);
        let error = h.store.session().error().expect("the turn's error stays");
        assert!(
            error
                .message
                .starts_with("the answer could not be followed"),
            "{error:?}"
        );
        assert!(h.act(|s, now| s.turn_mut().retry(now)));
        assert_eq!(h.store.status(), Status::Ready);
    }

    #[test]
    fn a_silent_run_on_a_beating_stream_is_not_cut() {
        let (mut h, ev) = running();
        for _ in 0..48 {
            h.advance(25_000);
            h.body(ev, HEARTBEAT);
        }
        assert!(!h.aborted.contains(&ev));
        assert_eq!(h.count(RequestKind::NativeEvents), 1);
        assert_eq!(h.store.status(), Status::Streaming);
    }

    #[test]
    fn a_longer_interval_the_server_keeps_is_learned() {
        // A server beating every 40 s (the reference server's `--heartbeat-ms`): the first
        // gap past 25 s + grace is a reconnect, after which the longer gap is known.
        let (mut h, ev) = running();
        h.advance(20_000);
        h.body(ev, HEARTBEAT);
        h.advance(20_000);
        h.body(ev, HEARTBEAT);
        // 20 s gaps keep the protocol's 25 s; a 29 s one raises it.
        h.advance(29_000);
        h.body(ev, HEARTBEAT);
        h.advance(29_000 + GRACE - 1);
        assert!(!h.aborted.contains(&ev));
        h.advance(1);
        assert!(h.aborted.contains(&ev));
    }
}
