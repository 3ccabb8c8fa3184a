//! The pi-native link in the store against a hostile server (issue 38), on virtual time: a
//! line over `limits.maxEventBytes` is a loss once (a tool result fails its part, an answer's
//! final ends the turn as `LimitExceeded`) and the stream goes on past it; malformed lines,
//! unknown types and events for another session are losses, never a reconnect; every recovery
//! loop backs off and ends in a typed error in `snapshot.error` within a bounded time, which
//! reopening the session clears; heartbeats notify nobody.

#![cfg(feature = "pi")]

use crate::common;

use agent_chat_store::MAX_STRIKES;
use agent_chat_store::{
    ErrorKind, LossCode, RequestKind, Status, StoreEvent, StoreOptions, SubmitKind,
};
use common::native_store::*;
use common::*;
use serde_json::{json, Value};

/// A store over `opts` (its `pi_native` set), opened and following at `seq`.
fn following_with(mut opts: StoreOptions, seq: u64) -> (Harness, u64) {
    opts.pi_native = Some("pi".into());
    let mut h = Harness::new(opts);
    let st = h.the_open(RequestKind::NativeState);
    h.respond(st.id, state(seq, "idle", json!([]), json!([])));
    let ev = h.the_open(RequestKind::NativeEvents);
    h.respond(ev.id, ndjson(&[]));
    (h, ev.id)
}

/// An event line as the server writes it: `ref` and `seq` first, then the event with its
/// type, seq and ids before `tail` (its payload).
fn raw_line(seq: u64, head: &str, tail: &str) -> Vec<u8> {
    format!(
        r#"{{"ref":{{"agentTypeId":"pi","sessionId":"{SESSION}"}},"seq":{seq},"event":{{{head},"seq":{seq}{tail}}}}}"#
    )
    .into_bytes()
    .into_iter()
    .chain([b'\n'])
    .collect()
}

/// A run started (seq 1), its answer `a1` begun (seq 2) with a call `c1` (seq 3).
fn calling(h: &mut Harness, ev: u64) {
    run_started(h, ev, "hi");
    feed(
        h,
        ev,
        &[
            json!({"type": "message-start", "seq": 2, "messageId": "a1", "role": "assistant"}),
            json!({"type": "tool-call", "seq": 3, "messageId": "a1", "toolCallId": "c1", "toolName": "read", "input": {}}),
        ],
    );
}

/// A tool result of `bytes` bytes for `c1`, at seq 4.
fn big_result(bytes: usize) -> Vec<u8> {
    raw_line(
        4,
        r#""type":"tool-result","messageId":"a1","toolCallId":"c1""#,
        &format!(
            r#","output":{{"content":[{{"type":"text","text":"{}"}}]}}"#,
            "x".repeat(bytes)
        ),
    )
}

fn tool_part(h: &Harness, call: &str) -> Value {
    let parts = h.history().into_iter().flat_map(|m| {
        let parts = m["parts"].as_array().cloned().unwrap_or_default();
        parts.into_iter()
    });
    parts
        .into_iter()
        .find(|p| p["toolCallId"] == call)
        .unwrap_or_else(|| panic!("no part of {call}: {:#?}", h.history()))
}

#[test]
fn a_17_mb_tool_result_fails_its_part_once_and_the_stream_goes_on_past_it() {
    let (mut h, ev) = following(0);
    calling(&mut h, ev);
    // 17 MB over the default 16 MiB, in network chunks.
    let line = big_result(17_000_000);
    for chunk in line.chunks(1 << 20) {
        h.body(ev, chunk);
    }
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "message-delta", "seq": 5, "messageId": "a1", "partId": "t", "kind": "text", "delta": "done"}),
        ],
    );
    let part = tool_part(&h, "c1");
    assert_eq!(part["state"], "output-error", "{part:#}");
    assert!(
        part["errorText"]
            .as_str()
            .unwrap()
            .contains("limits.maxEventBytes"),
        "{part:#}"
    );
    let losses = h.store.session().losses();
    assert_eq!(losses.len(), 1, "{losses:#?}");
    assert_eq!(losses[0].code, LossCode::EventTooLarge);
    assert_eq!(losses[0].tool_call_id.as_deref(), Some("c1"));
    assert!(losses[0].message.contains("seq 4"), "{}", losses[0].message);
    assert_eq!(h.store.status(), Status::Streaming, "the run goes on");
    assert_eq!(h.count(RequestKind::NativeEvents), 1, "no reconnect");
    // A reconnect goes on from after it: the line is not downloaded again.
    h.end(ev);
    h.advance(1_500);
    let again = h.the_open(RequestKind::NativeEvents);
    assert_eq!(again.path, format!("{BASE}/events?cursor=5"));
}

#[test]
fn raising_max_event_bytes_takes_the_same_result() {
    let mut o = options();
    o.limits.max_event_bytes = 32 << 20;
    let (mut h, ev) = following_with(o, 0);
    calling(&mut h, ev);
    h.body(ev, &big_result(17_000_000));
    let part = tool_part(&h, "c1");
    assert_eq!(part["state"], "output-available");
    assert!(h.store.session().losses().is_empty());
}

#[test]
fn an_answers_final_over_the_limit_ends_the_turn_as_limit_exceeded() {
    let mut o = options();
    o.limits.max_event_bytes = 64 << 10;
    let (mut h, ev) = following_with(o, 0);
    run_started(&mut h, ev, "hi");
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "message-start", "seq": 2, "messageId": "a1", "role": "assistant"}),
            json!({"type": "message-delta", "seq": 3, "messageId": "a1", "partId": "t", "kind": "text", "delta": "streamed"}),
        ],
    );
    let final_text = "y".repeat(100_000);
    h.body(
        ev,
        &raw_line(
            4,
            r#""type":"message-end","messageId":"a1","final":{"id":"a1","role":"assistant""#,
            &format!(r#","parts":[{{"type":"text","text":"{final_text}"}}]}}"#),
        ),
    );
    assert_eq!(h.store.status(), Status::Error);
    let error = h.store.session().error().unwrap();
    assert_eq!(error.kind, ErrorKind::LimitExceeded);
    assert_eq!(error.field.as_deref(), Some("limits.maxEventBytes"));
    assert_eq!(h.count(RequestKind::NativeStop), 1, "the run is stopped");
    assert_eq!(h.store.session().losses()[0].code, LossCode::EventTooLarge);
    let last = h.history().last().cloned().unwrap();
    assert_eq!(
        last["parts"][0]["text"], "streamed",
        "what streamed is kept"
    );
}

#[test]
fn malformed_lines_are_bad_chunks_and_never_a_reconnect() {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "hi");
    let bad: [&[u8]; 5] = [
        br#"{"ref":{"agentTypeId":"pi","sessionId":"S"},"seq":"2","event":{"type":"agent-end","seq":"2"}}"#,
        br#"{"ref":{"agentTypeId":"pi","sessionId":"S"},"seq":9007199254740993,"event":{"type":"agent-end","seq":9007199254740993}}"#,
        br#"{"ref":{"agentTypeId":"pi","sessionId":"S"},"seq":2,"event":{"type":"agent-end","seq":3}}"#,
        b"{\"seq\":2,\"type\":\"message-start\",\"messageId\":\"\xff\"}",
        br#"{"seq":3,"type":"message-start","messageId":"m","role":"assistant"}trailing"#,
    ];
    for line in bad {
        h.body(ev, &[line, b"\n"].concat());
    }
    let codes: Vec<LossCode> = h.store.session().losses().iter().map(|l| l.code).collect();
    assert_eq!(codes, [LossCode::BadChunk; 5]);
    assert_eq!(h.count(RequestKind::NativeEvents), 1, "no reconnect");
    assert_eq!(h.count(RequestKind::NativeState), 1, "no state read");
    // The last two named seqs 2 and 3 (as far as they could be read): the stream goes on at 4.
    feed(
        &mut h,
        ev,
        &[json!({"type": "agent-end", "seq": 4, "turnId": "t1", "status": "ok"})],
    );
    assert_eq!(h.store.status(), Status::Ready);
    assert_eq!(h.count(RequestKind::NativeState), 1);
}

#[test]
fn an_event_for_another_session_is_not_shown_and_does_not_take_the_seq() {
    let (mut h, ev) = following(0);
    run_started(&mut h, ev, "hi");
    h.body(
        ev,
        &lines_of(
            "elsewhere",
            &[json!({"type": "message-start", "seq": 2, "messageId": "x1", "role": "assistant"})],
        ),
    );
    feed(
        &mut h,
        ev,
        &[
            json!({"type": "message-start", "seq": 2, "messageId": "a1", "role": "assistant"}),
            json!({"type": "message-delta", "seq": 3, "messageId": "a1", "partId": "t", "kind": "text", "delta": "mine"}),
        ],
    );
    let texts: Vec<Value> = h.history().iter().map(|m| m["parts"].clone()).collect();
    assert!(h.history().iter().all(|m| m["id"] != "x1"), "{texts:#?}");
    assert_eq!(h.history().last().unwrap()["parts"][0]["text"], "mine");
    let losses = h.store.session().losses();
    assert_eq!(losses.len(), 1);
    assert_eq!(losses[0].code, LossCode::NotApplied);
    assert_eq!(h.count(RequestKind::NativeState), 1, "no gap");
}

#[test]
fn an_unknown_event_type_is_recorded_and_its_seq_counts() {
    let (mut h, ev) = following(0);
    feed(&mut h, ev, &[json!({"type": "from-the-future", "seq": 1})]);
    feed(
        &mut h,
        ev,
        &[json!({"type": "agent-start", "seq": 2, "turnId": "t9"})],
    );
    let losses = h.store.session().losses();
    assert_eq!(losses.len(), 1);
    assert_eq!(losses[0].code, LossCode::UnknownChunk);
    assert!(losses[0].message.contains("from-the-future"));
    assert_eq!(h.store.status(), Status::Streaming, "seq 2 applied");
    assert_eq!(h.count(RequestKind::NativeState), 1, "no gap");
}

#[test]
fn heartbeats_notify_nobody() {
    let (mut h, ev) = following(0);
    let revision = h.store.revision();
    h.body(
        ev,
        b"{\"type\":\"heartbeat\",\"now\":\"2026-01-01T00:00:00Z\"}\n",
    );
    h.body(
        ev,
        b"{\"type\":\"heartbeat\",\"now\":\"2026-01-01T00:00:25Z\"}\n{\"ref\":",
    );
    assert_eq!(h.store.revision(), revision);
    h.body(
        ev,
        &lines(&[json!({"type": "agent-start", "seq": 1, "turnId": "t"})])[6..],
    );
    assert!(h.store.revision() > revision, "an event does");
}

/// Answers each request of `kind` with `reply` as it comes (`None`: never), stepping to each
/// timer until none is left: the times the requests were made.
fn answer_every(h: &mut Harness, kind: RequestKind, reply: impl Fn() -> Option<Reply>) -> Vec<u64> {
    let mut at = Vec::new();
    loop {
        let open: Vec<u64> = h.open(kind).iter().map(|r| r.id).collect();
        for id in open {
            at.push(h.now);
            if let Some(r) = reply() {
                h.respond(id, r);
            }
        }
        let Some(t) = h.store.poll_timeout() else {
            return at;
        };
        h.advance(t - h.now);
        assert!(at.len() < 200, "no end: {at:?}");
    }
}

#[test]
fn a_state_that_answers_500_ends_in_a_typed_error_within_seventy_seconds() {
    let mut h = native();
    let t0 = h.now;
    let at = answer_every(&mut h, RequestKind::NativeState, || {
        Some(Reply::error(500, "INTERNAL_ERROR", "boom"))
    });
    assert_eq!(at.len(), MAX_STRIKES as usize + 1, "{at:?}");
    let error = h.store.session().error().expect("a typed error");
    assert_eq!((error.kind, error.status), (ErrorKind::Server, Some(500)));
    assert!(error.message.contains("reopen"), "{}", error.message);
    assert!(h.store.session().hydrated(), "not a blank page waiting");
    assert!(at.last().unwrap() - t0 <= 69_000, "{at:?}");
}

#[test]
fn a_state_that_never_answers_times_out_and_ends_in_a_typed_error() {
    let mut h = native();
    let t0 = h.now;
    let at = answer_every(&mut h, RequestKind::NativeState, || None);
    assert_eq!(at.len(), MAX_STRIKES as usize + 1, "{at:?}");
    let next = at[1] - at[0];
    assert!(
        (15_750..=16_250).contains(&next),
        "the deadline, then the backoff: {at:?}"
    );
    let error = h.store.session().error().expect("a typed error");
    assert_eq!(error.kind, ErrorKind::Network);
    assert!(error.message.contains("timed out"), "{}", error.message);
    assert!(h.now - t0 <= 180_000, "{} ms", h.now - t0);
}

#[test]
fn a_state_over_max_body_bytes_is_a_typed_error_at_once() {
    let mut o = options();
    o.pi_native = Some("pi".into());
    o.limits.max_body_bytes = 4096;
    let mut h = Harness::new(o);
    let st = h.the_open(RequestKind::NativeState);
    let big = json!([{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "z".repeat(10_000)}]}]);
    h.respond(st.id, state(3, "idle", big, json!([])).chunked(1000));
    let error = h.store.session().error().expect("a typed error");
    assert_eq!(error.kind, ErrorKind::Protocol);
    assert_eq!(error.field.as_deref(), Some("limits.maxBodyBytes"));
    h.advance(600_000);
    assert_eq!(h.count(RequestKind::NativeState), 1, "no retry");
}

#[test]
fn an_events_head_that_never_comes_is_tried_again_and_said_after_three() {
    let mut h = native();
    let st = h.the_open(RequestKind::NativeState);
    h.respond(st.id, state(4, "idle", json!([]), json!([])));
    let first = h.the_open(RequestKind::NativeEvents);
    let t0 = h.now;
    h.advance(15_000);
    assert_eq!(h.open(RequestKind::NativeEvents).len(), 0, "timed out");
    h.advance(1_250);
    let again = h.the_open(RequestKind::NativeEvents);
    assert_ne!(again.id, first.id);
    assert_eq!(again.path, format!("{BASE}/events?cursor=4"));
    assert_eq!(h.store.session().error(), None);
    let mut n = 2;
    while h.store.session().error().is_none() {
        let t = h.store.poll_timeout().unwrap();
        h.advance(t - h.now);
        n = h.count(RequestKind::NativeEvents);
        assert!(n < 20);
    }
    // Three hung connects (15 s each, with the backoff between): said within a minute.
    assert_eq!(n, 3, "three attempts");
    assert!(h.now - t0 < 60_000, "said at {} ms", h.now - t0);
    assert_eq!(h.store.session().error().unwrap().kind, ErrorKind::Network);
    // Still tried (after the backoff); a connect takes the error back.
    let t = h.store.poll_timeout().unwrap();
    h.advance(t - h.now);
    let ev = h.the_open(RequestKind::NativeEvents);
    h.respond(ev.id, ndjson(&[]));
    assert_eq!(h.store.session().error(), None);
    // Once the head came the idle rule holds, not the connect deadline.
    h.advance(60_000);
    assert_eq!(h.the_open(RequestKind::NativeEvents).id, ev.id);
}

#[test]
fn a_gap_the_state_never_fills_ends_in_a_typed_error_and_reopening_tries_again() {
    let (mut h, ev) = following(5);
    let gap = || lines(&[json!({"type": "agent-start", "seq": 9, "turnId": "t"})]);
    h.body(ev, &gap());
    let t0 = h.now;
    let mut made = Vec::new();
    while h.store.session().error().is_none() {
        if let Some(st) = h.open(RequestKind::NativeState).first().map(|r| r.id) {
            made.push(h.now);
            h.respond(st, state(5, "idle", json!([]), json!([])));
            continue;
        }
        if let Some(e) = h.open(RequestKind::NativeEvents).first().map(|r| r.id) {
            made.push(h.now);
            h.respond(
                e,
                Reply::bytes(200, Some("application/x-ndjson"), gap()).open(),
            );
            continue;
        }
        let t = h.store.poll_timeout().expect("a timer");
        h.advance(t - h.now);
        assert!(made.len() < 100, "no end");
    }
    let error = h.store.session().error().unwrap();
    assert_eq!(error.kind, ErrorKind::Protocol);
    assert!(error.message.contains("reopen"), "{}", error.message);
    assert!(made.len() <= 12, "{made:?}");
    assert!(h.now - t0 <= 39_000, "{} ms: {made:?}", h.now - t0);
    for w in made.windows(3) {
        assert!(
            w[2] - w[0] >= 750,
            "at most two requests within 0.75 s: {made:?}"
        );
    }
    h.advance(600_000);
    assert!(h.open(RequestKind::NativeState).is_empty());
    assert!(h.open(RequestKind::NativeEvents).is_empty());
    // Reopening the session reads it again, the error gone.
    h.switch_session("other");
    h.switch_session(SESSION);
    let st = h.the_open(RequestKind::NativeState);
    assert_eq!(h.store.session().error(), None);
    h.respond(st.id, state(9, "idle", json!([]), json!([])));
    assert_eq!(
        h.the_open(RequestKind::NativeEvents).path,
        format!("{BASE}/events?cursor=9")
    );
}

#[test]
fn a_failing_first_state_read_is_said_at_once_and_a_send_after_the_give_up_follows_again() {
    let mut h = native();
    let st = h.the_open(RequestKind::NativeState);
    h.respond(st.id, Reply::json(500, json!({"error": "down"})));
    // A blank chat says why at its first failure, while it is still tried.
    let said = h
        .store
        .session()
        .error()
        .expect("said at the first failure")
        .clone();
    assert_eq!(said.kind, ErrorKind::Server);
    assert!(said.message.contains("still trying"), "{}", said.message);
    let mut reads = 1;
    while !h
        .store
        .session()
        .error()
        .unwrap()
        .message
        .contains("reopen")
    {
        let t = h.store.poll_timeout().expect("a timer");
        h.advance(t - h.now);
        let st = h.the_open(RequestKind::NativeState);
        reads += 1;
        h.respond(st.id, Reply::json(500, json!({"error": "down"})));
        assert!(reads < 20, "no end");
    }
    assert!(h
        .store
        .session()
        .error()
        .unwrap()
        .message
        .contains("reopen"));
    assert_eq!(reads, MAX_STRIKES + 1);
    h.advance(600_000);
    assert!(h.open(RequestKind::NativeState).is_empty(), "given up");
    // The user's send follows the session again: its state, then its run.
    assert_eq!(h.send("hello").kind, SubmitKind::Sent);
    let st = h.the_open(RequestKind::NativeState);
    h.respond(st.id, state(0, "idle", json!([]), json!([])));
    assert_eq!(h.store.session().error(), None);
    assert_eq!(
        h.the_open(RequestKind::NativeEvents).path,
        format!("{BASE}/events?cursor=0")
    );
    assert_eq!(h.count(RequestKind::NativePrompt), 1);
}

/// A turn's error stays while the events stream is said unreachable and then reached again:
/// the connect takes back only what the unreachable stream said (a fuzzer finding: status
/// `error` with no error).
#[test]
fn a_turns_error_outlives_an_unreachable_events_stream() {
    let (mut h, ev) = following_with(options(), 0);
    run_started(&mut h, ev, "hi");
    let error = json!({"type": "error", "seq": 2, "turnId": "t1",
        "error": {"code": "INTERNAL_ERROR", "message": "the model failed"}});
    h.body(ev, &lines(&[error]));
    assert_eq!(h.store.status(), Status::Error);
    let shown = h
        .store
        .session()
        .error()
        .cloned()
        .expect("the turn's error");
    h.end(ev);
    // Connects that end at once, with nothing read, until the stream is said unreachable.
    let mut ended = 0;
    let said = |h: &Harness| {
        h.events
            .iter()
            .any(|e| matches!(e, StoreEvent::Error { error } if error.message.contains("in a row")))
    };
    while !said(&h) {
        let t = h.store.poll_timeout().expect("a reconnect");
        h.advance(t.saturating_sub(h.now));
        let ids: Vec<u64> = h
            .open(RequestKind::NativeEvents)
            .iter()
            .map(|r| r.id)
            .collect();
        for id in ids {
            let blank = Reply::bytes(200, Some("application/x-ndjson"), b"\n".to_vec());
            h.respond(id, blank);
            ended += 1;
        }
        assert!(ended < 20, "never said");
    }
    assert_eq!(
        h.store.session().error(),
        Some(&shown),
        "said beside the turn's error, not over it"
    );
    let t = h.store.poll_timeout().expect("a reconnect");
    h.advance(t.saturating_sub(h.now));
    let r = h.the_open(RequestKind::NativeEvents);
    h.respond(r.id, ndjson(&[]));
    assert_eq!(h.store.status(), Status::Error);
    assert_eq!(h.store.session().error(), Some(&shown));
}
