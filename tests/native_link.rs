//! Following a pi-native session (SPEC §14, reference §6 and §13) on virtual time: the state
//! read first, then the events from its seq; reconnects from the cursor with the reference's
//! backoff; a gap, a replay gap or a cursor ahead reads the state again; an unusable state
//! stops. And the command bodies a retry resends byte for byte.

#![cfg(feature = "pi")]

use agent_chat_store::{
    backoff_ms, native_commands, Ask, ChatError, Conversation, ErrorKind, FileAttachment, LineLoss,
    LineLossKind, LinkNote, NativeEffect, NativeLink, RandomSource, Read, RunStatus, MAX_STRIKES,
};
use serde_json::{json, Value};

/// `unit()` is always 0: the shortest delay of each backoff step.
struct Low;
impl RandomSource for Low {
    fn fill(&mut self, buf: &mut [u8]) {
        buf.fill(0);
    }
}

struct World {
    link: NativeLink,
    conversation: Conversation,
    notes: Vec<LinkNote>,
    now: u64,
}

fn state(seq: u64, messages: Value) -> Vec<u8> {
    json!({"ref": {"agentTypeId": "pi", "sessionId": "s1"}, "seq": seq, "state": {
        "protocolVersion": 1, "sessionId": "s1", "seq": seq, "status": "idle",
        "messages": messages, "queue": {"followUps": []}, "followUpMode": "one-at-a-time"}})
    .to_string()
    .into_bytes()
}

fn line(event: Value) -> String {
    json!({"ref": {"agentTypeId": "pi", "sessionId": "s1"}, "seq": event["seq"], "event": event})
        .to_string()
        + "\n"
}

impl World {
    fn new() -> Self {
        let mut link = NativeLink::new();
        link.open();
        World {
            link,
            conversation: Conversation::new(true),
            notes: Vec::new(),
            now: 1_000,
        }
    }

    fn ask(&mut self) -> Option<Ask> {
        self.link.poll_ask(self.now)
    }

    fn answer(&mut self, read: Read, status: u16, body: &[u8]) {
        self.link.answer_end(
            &mut self.conversation,
            read,
            (status, body),
            self.now,
            &mut Low,
            &mut self.notes,
        );
    }

    fn events(&mut self, text: &str) {
        self.link.events_body(
            &mut self.conversation,
            text.as_bytes(),
            self.now,
            &mut Low,
            &mut self.notes,
        );
    }

    /// Opened and hydrated at `seq`, the events stream asked and connected.
    fn following(seq: u64) -> Self {
        let mut w = World::new();
        assert_eq!(w.ask(), Some(Ask::State));
        w.answer(Read::State, 200, &state(seq, json!([])));
        assert_eq!(w.ask(), Some(Ask::Events { cursor: seq }));
        w.link.reached();
        w
    }

    fn texts(&self) -> Vec<String> {
        self.conversation
            .history()
            .messages()
            .iter()
            .map(|m| m.text())
            .collect()
    }
}

#[test]
fn the_state_first_then_the_events_from_its_seq() {
    let mut w = World::new();
    assert_eq!(w.ask(), Some(Ask::State));
    assert_eq!(w.ask(), None, "one read at a time");
    w.answer(
        Read::State,
        200,
        &state(
            4,
            json!([{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "earlier"}]}]),
        ),
    );
    assert!(w.notes.contains(&LinkNote::Hydrated));
    assert_eq!(w.texts(), ["earlier"]);
    assert_eq!(w.ask(), Some(Ask::Events { cursor: 4 }));
    w.link.reached();
    w.events(&(r#"{"type":"heartbeat","now":"x"}"#.to_string() + "\n"));
    w.events(&line(
        json!({"type": "agent-start", "seq": 5, "turnId": "t1"}),
    ));
    let half =
        line(json!({"type": "message-start", "seq": 6, "messageId": "a1", "role": "assistant"}));
    let (a, b) = half.split_at(17);
    w.events(a);
    w.events(b);
    w.events(&line(json!({"type": "message-delta", "seq": 7, "messageId": "a1", "partId": "0", "kind": "text", "delta": "Hi"})));
    assert_eq!(w.texts(), ["earlier", "Hi"]);
    assert_eq!(w.link.gate().seq(), 7);
    assert_eq!(w.link.gate().status(), RunStatus::Running);
    assert!(w
        .notes
        .contains(&LinkNote::Effect(NativeEffect::RunStarted("t1".into(), 5))));
}

#[test]
fn a_stream_that_ends_or_fails_reconnects_from_the_cursor_with_backoff() {
    let mut w = World::following(2);
    w.events(&line(
        json!({"type": "agent-start", "seq": 3, "turnId": "t1"}),
    ));
    w.answer(Read::Events, 200, b"");
    assert!(matches!(w.notes.last(), Some(LinkNote::Retrying(_))));
    assert_eq!(w.ask(), None, "not before the backoff");
    assert_eq!(w.link.poll_timeout(), Some(w.now + 750));
    w.now += 750;
    assert_eq!(
        w.ask(),
        Some(Ask::Events { cursor: 3 }),
        "no state read: hydrated"
    );
    // Two failures in a row double the delay; a connect that reads nothing does not start it
    // over (a server that answers and ends at once), an event does.
    w.link
        .failed(Read::Events, "reset", w.now, &mut Low, &mut w.notes);
    assert_eq!(w.link.poll_timeout(), Some(w.now + 1500));
    w.now += 1500;
    assert_eq!(w.ask(), Some(Ask::Events { cursor: 3 }));
    w.link.reached();
    w.answer(Read::Events, 200, b"");
    assert_eq!(w.link.poll_timeout(), Some(w.now + 3000));
    w.now += 3000;
    assert_eq!(w.ask(), Some(Ask::Events { cursor: 3 }));
    w.link.reached();
    w.events(&line(
        json!({"type": "agent-end", "seq": 4, "turnId": "t1", "status": "ok"}),
    ));
    w.link
        .failed(Read::Events, "reset", w.now, &mut Low, &mut w.notes);
    assert_eq!(w.link.poll_timeout(), Some(w.now + 750));
}

#[test]
fn a_heartbeat_resets_the_backoff_and_never_moves_the_cursor() {
    let mut w = World::following(2);
    w.link
        .failed(Read::Events, "reset", w.now, &mut Low, &mut w.notes);
    w.now += 750;
    assert_eq!(w.ask(), Some(Ask::Events { cursor: 2 }));
    w.events("{\"type\":\"heartbeat\",\"now\":\"x\"}\n");
    assert_eq!(w.link.gate().seq(), 2);
    w.link
        .failed(Read::Events, "reset", w.now, &mut Low, &mut w.notes);
    assert_eq!(w.link.poll_timeout(), Some(w.now + 750));
}

#[test]
fn a_seq_gap_reads_the_state_again_at_once_and_follows_from_its_seq() {
    let mut w = World::following(2);
    w.events(&line(
        json!({"type": "agent-start", "seq": 3, "turnId": "t1"}),
    ));
    w.events(&line(
        json!({"type": "message-start", "seq": 5, "messageId": "a1", "role": "assistant"}),
    ));
    assert_eq!(w.link.reading(), None, "the connection is dropped");
    assert_eq!(w.ask(), Some(Ask::State), "at once");
    w.answer(
        Read::State,
        200,
        &state(9, json!([{"id": "a1", "role": "assistant", "parts": [{"type": "text", "text": "caught up"}]}])),
    );
    assert_eq!(w.texts(), ["caught up"]);
    assert_eq!(w.ask(), Some(Ask::Events { cursor: 9 }));
}

#[test]
fn replay_gap_and_cursor_ahead_read_the_state_again_a_lower_seq_taken() {
    for code in ["AGENT_SESSION_REPLAY_GAP", "AGENT_SESSION_CURSOR_AHEAD"] {
        let mut w = World::following(50);
        let body = json!({"error": {"code": code, "message": "m", "details": {"latestSeq": 7, "minReplaySeq": 1}}}).to_string();
        w.answer(Read::Events, 409, body.as_bytes());
        assert_eq!(w.ask(), Some(Ask::State), "{code}");
        w.answer(Read::State, 200, &state(7, json!([])));
        assert_eq!(w.ask(), Some(Ask::Events { cursor: 7 }), "{code}");
    }
    // Any other 409 is a plain failure: a reconnect from the cursor.
    let mut w = World::following(50);
    w.answer(
        Read::Events,
        409,
        br#"{"error":{"code":"AGENT_REQUEST_CONFLICT","message":"m"}}"#,
    );
    assert_eq!(w.ask(), None);
    w.now += 750;
    assert_eq!(w.ask(), Some(Ask::Events { cursor: 50 }));
}

#[test]
fn a_line_that_does_not_fit_is_a_loss_and_the_stream_goes_on_past_its_seq() {
    let mut w = World::following(1);
    w.events(&line(
        json!({"type": "agent-start", "seq": 2, "turnId": "t"}),
    ));
    w.events("{\"seq\":3,\"type\":\"message-delta\"}\n");
    assert!(
        matches!(w.notes.last(), Some(LinkNote::Lost(l))
            if l.kind == LineLossKind::Malformed && l.head.seq == Some(3)
                && l.message.contains("does not fit")),
        "{:?}",
        w.notes.last()
    );
    assert_eq!(w.link.reading(), Some(Read::Events), "no reconnect");
    assert_eq!(w.link.gate().seq(), 3, "past it");
    w.events(&line(
        json!({"type": "message-start", "seq": 4, "messageId": "a1", "role": "assistant"}),
    ));
    assert_eq!(w.link.gate().seq(), 4);
}

#[test]
fn before_the_first_state_every_failure_asks_the_state_again() {
    let mut w = World::new();
    assert_eq!(w.ask(), Some(Ask::State));
    w.answer(Read::State, 503, b"{}");
    w.now += 750;
    assert_eq!(w.ask(), Some(Ask::State));
    w.link
        .failed(Read::State, "offline", w.now, &mut Low, &mut w.notes);
    w.now += 1500;
    assert_eq!(w.ask(), Some(Ask::State));
}

#[test]
fn an_unusable_state_stops_the_link() {
    let mut w = World::new();
    assert_eq!(w.ask(), Some(Ask::State));
    let v2 = json!({"seq": 1, "state": {"protocolVersion": 2, "seq": 1}}).to_string();
    w.answer(Read::State, 200, v2.as_bytes());
    assert!(matches!(w.notes.last(), Some(LinkNote::Refused(m)) if m.contains("protocolVersion")));
    w.now += 60_000;
    assert_eq!(w.ask(), None);
    assert_eq!(w.link.poll_timeout(), None);
}

#[test]
fn the_backoff_is_the_references() {
    assert_eq!(backoff_ms(0, 0.0), 750);
    assert_eq!(backoff_ms(0, 0.5), 1000);
    assert_eq!(backoff_ms(3, 0.0), 6000);
    assert_eq!(backoff_ms(5, 0.99), 30_000, "capped");
    assert_eq!(
        backoff_ms(40, 0.0),
        22_500,
        "d capped at 30 s, then jittered"
    );
}

#[test]
fn commands_resend_the_same_bytes_and_errors_map_onto_the_stores_kinds() {
    assert_eq!(
        native_commands::session_path("pi", "a b/c"),
        "/api/v1/agents/pi/sessions/a%20b%2Fc"
    );
    let p = native_commands::prompt("n1", "hi", &[]);
    assert_eq!(
        p,
        json!({"requestId": "n1", "clientNonce": "n1", "content": "hi"})
    );
    assert_eq!(
        p.to_string(),
        native_commands::prompt("n1", "hi", &[]).to_string()
    );
    let image = FileAttachment {
        media_type: "image/png".into(),
        filename: Some("a.png".into()),
        url: "data:image/png;base64,iVBORw0KGgo=".into(),
        provider_reference: None,
        provider_metadata: None,
    };
    assert_eq!(
        native_commands::prompt("n1", "look", &[image])["attachments"],
        json!([{"url": "data:image/png;base64,iVBORw0KGgo=", "mediaType": "image/png", "filename": "a.png"}]),
        "a send's files are the prompt's attachments (reference §11)"
    );
    assert_eq!(
        native_commands::followup("n2", 3, "more"),
        json!({"requestId": "n2:3", "clientNonce": "n2", "content": "more", "clientSeq": 3})
    );
    assert_eq!(
        native_commands::clear_one("n2", 3),
        json!({"clientNonce": "n2", "clientSeq": 3})
    );
    let busy = br#"{"error":{"code":"AGENT_COMMAND_INVALID_STATE","message":"prompt is invalid in current state","details":{"status":"streaming"}}}"#;
    assert_eq!(
        ChatError::from_http(409, busy).kind,
        ErrorKind::TurnAlreadyActive
    );
    assert_eq!(
        ChatError::from_http(400, busy).kind,
        ErrorKind::Validation,
        "the same code, a bad body"
    );
    assert_eq!(
        ChatError::from_http(
            409,
            br#"{"error":{"code":"AGENT_REQUEST_OUTCOME_UNKNOWN"}}"#
        )
        .kind,
        ErrorKind::Server
    );
    let in_progress =
        ChatError::from_http(409, br#"{"error":{"code":"AGENT_REQUEST_IN_PROGRESS"}}"#);
    assert_eq!(in_progress.kind, ErrorKind::SessionNotReady);
    assert!(in_progress.is_retryable(), "wait and retry (reference §4)");
    assert_eq!(
        ChatError::from_http(
            409,
            br#"{"code":"ABORTED","message":"aborted","retryable":true}"#
        )
        .kind,
        ErrorKind::Aborted
    );
    assert_eq!(ChatError::from_http(503, b"<html>").kind, ErrorKind::Server);
}

// ----- bad input and bad networks (issue 38) ---------------------------------------------------

impl World {
    /// A link taking lines of at most `limit` bytes, hydrated at `seq` and connected.
    fn following_with_limit(seq: u64, limit: usize) -> Self {
        let mut w = World {
            link: NativeLink::with_max_line_bytes(limit),
            ..World::new()
        };
        w.link.address("s1");
        w.link.open();
        assert_eq!(w.ask(), Some(Ask::State));
        w.answer(Read::State, 200, &state(seq, json!([])));
        assert_eq!(w.ask(), Some(Ask::Events { cursor: seq }));
        w.link.reached();
        w
    }

    fn losses(&self) -> Vec<&LineLoss> {
        let lost = self.notes.iter().filter_map(|n| match n {
            LinkNote::Lost(l) => Some(l),
            _ => None,
        });
        lost.collect()
    }

    fn gave_up(&self) -> Option<&ChatError> {
        self.notes.iter().find_map(|n| match n {
            LinkNote::GaveUp(e) => Some(e),
            _ => None,
        })
    }

    /// Asks what is due, stepping the clock to it: the ask and when it was made.
    fn next_ask(&mut self) -> Option<(u64, Ask)> {
        let at = self.link.poll_timeout()?;
        self.now = self.now.max(at);
        self.ask().map(|a| (self.now, a))
    }
}

#[test]
fn a_line_over_the_limit_is_skipped_once_by_its_head_and_the_stream_goes_on() {
    let mut w = World::following_with_limit(2, 4096);
    w.events(&line(
        json!({"type": "agent-start", "seq": 3, "turnId": "t1"}),
    ));
    // As the server writes it: `ref` and `seq` first, the event's type and ids before its
    // payload.
    let big = format!(
        r#"{{"ref":{{"agentTypeId":"pi","sessionId":"s1"}},"seq":4,"event":{{"type":"tool-result","seq":4,"messageId":"a1","toolCallId":"c1","output":{{"content":[{{"type":"text","text":"{}"}}]}}}}}}"#,
        "x".repeat(20_000)
    ) + "\n";
    // Any network split: the line is given up as it grows, its head kept.
    for chunk in big.as_bytes().chunks(1000) {
        w.link
            .events_body(&mut w.conversation, chunk, w.now, &mut Low, &mut w.notes);
    }
    let lost = w.losses();
    assert_eq!(lost.len(), 1, "{:?}", w.notes);
    assert_eq!(
        lost[0].kind,
        LineLossKind::TooLarge { limit: 4096 },
        "{:?}",
        lost[0]
    );
    assert_eq!(
        (lost[0].head.seq, lost[0].head.event_type.as_deref()),
        (Some(4), Some("tool-result")),
        "{:?}",
        lost[0]
    );
    assert_eq!(
        (
            lost[0].head.message_id.as_deref(),
            lost[0].head.tool_call_id.as_deref()
        ),
        (Some("a1"), Some("c1"))
    );
    assert!(lost[0].message.contains("limits.maxEventBytes"));
    assert_eq!(w.link.gate().seq(), 4, "the cursor is past it");
    assert_eq!(w.link.reading(), Some(Read::Events), "no reconnect");
    w.events(&line(
        json!({"type": "agent-end", "seq": 5, "turnId": "t1", "status": "ok"}),
    ));
    assert_eq!(w.link.gate().seq(), 5);
    assert_eq!(w.link.gate().status(), RunStatus::Idle);
    // A reconnect goes on from after it: it is not downloaded again.
    w.answer(Read::Events, 200, b"");
    w.now += 750;
    assert_eq!(w.ask(), Some(Ask::Events { cursor: 5 }));
}

#[test]
fn a_line_over_the_limit_whose_seq_cannot_be_read_leaves_it_to_the_gap_and_never_loops() {
    let mut w = World::following_with_limit(2, 256);
    // The seq comes after the payload: the head (its first 4 KB) does not have it.
    let big = format!(
        "{{\"event\":{{\"type\":\"tool-result\",\"output\":\"{}\",\"seq\":3}},\"seq\":3}}\n",
        "x".repeat(10_000)
    );
    let mut requests = 0;
    for _ in 0..40 {
        w.events(&big);
        w.events(&line(
            json!({"type": "agent-start", "seq": 4, "turnId": "t"}),
        ));
        // The gap reads the state, which does not fill it; the events bring the line again.
        let Some((_, ask)) = w.next_ask() else { break };
        requests += 1;
        assert_eq!(ask, Ask::State);
        w.answer(Read::State, 200, &state(2, json!([])));
        let Some((_, ask)) = w.next_ask() else { break };
        requests += 1;
        assert_eq!(ask, Ask::Events { cursor: 2 });
        w.link.reached();
    }
    let error = w
        .gave_up()
        .unwrap_or_else(|| panic!("a typed error: {:#?}", w.notes));
    assert_eq!(error.kind, ErrorKind::Protocol);
    assert!(error.message.contains("reopen"), "{}", error.message);
    assert!(
        requests <= 2 * MAX_STRIKES as usize + 1,
        "{requests} requests"
    );
    assert!(w.losses().iter().all(|l| l.head.seq.is_none()));
    assert_eq!(w.link.poll_timeout(), None, "stopped");
}

#[test]
fn malformed_lines_are_losses_and_never_a_reconnect() {
    let env = |seq: &str, inner: &str| {
        format!(
            r#"{{"ref":{{"agentTypeId":"pi","sessionId":"s1"}},"seq":{seq},"event":{{"type":"agent-start","seq":{inner},"turnId":"t"}}}}"#
        )
    };
    // (line, the seq the loss reads, if any)
    let cases: Vec<(Vec<u8>, Option<u64>)> = vec![
        (env("\"3\"", "\"3\"").into_bytes(), None),
        (env("null", "null").into_bytes(), None),
        (env("3.5", "3.5").into_bytes(), None),
        (
            env("18446744073709551616", "18446744073709551616").into_bytes(),
            None,
        ),
        (
            env("9007199254740992", "9007199254740992").into_bytes(),
            None,
        ),
        (env("3", "4").into_bytes(), None),
        ((env("3", "3") + "}garbage").into_bytes(), Some(3)),
        ([env("3", "3").as_bytes(), b"\xff\xfe"].concat(), Some(3)),
    ];
    for (bad, seq) in cases {
        let mut w = World::following_with_limit(2, 1 << 20);
        let mut body = bad.clone();
        body.push(b'\n');
        w.link
            .events_body(&mut w.conversation, &body, w.now, &mut Low, &mut w.notes);
        let shown = String::from_utf8_lossy(&bad).to_string();
        let lost = w.losses();
        assert_eq!(lost.len(), 1, "{shown}: {:?}", w.notes);
        assert_eq!(lost[0].kind, LineLossKind::Malformed, "{shown}");
        assert_eq!(lost[0].head.seq, seq, "{shown}");
        assert_eq!(
            w.link.reading(),
            Some(Read::Events),
            "{shown}: no reconnect"
        );
        assert_eq!(w.link.gate().seq(), seq.unwrap_or(2), "{shown}");
        // A next event in order is taken; one after a line whose seq is unknown is a gap.
        let next = seq.unwrap_or(2) + 1;
        w.events(&line(
            json!({"type": "agent-start", "seq": next, "turnId": "t2"}),
        ));
        assert_eq!(w.link.gate().seq(), next, "{shown}");
    }
}

#[test]
fn a_byte_order_mark_at_the_start_is_stripped_and_the_line_read() {
    let mut w = World::following_with_limit(2, 1 << 20);
    w.events(&format!(
        "\u{feff}{}",
        line(json!({"type": "agent-start", "seq": 3, "turnId": "t"}))
    ));
    assert_eq!(w.link.gate().seq(), 3);
    assert!(w.losses().is_empty(), "{:?}", w.notes);
}

#[test]
fn an_unknown_event_type_is_a_loss_and_its_seq_counts() {
    let mut w = World::following_with_limit(2, 1 << 20);
    w.events(&line(json!({"type": "brand-new", "seq": 3, "x": 1})));
    let lost = w.losses();
    assert_eq!(lost.len(), 1);
    assert_eq!(lost[0].kind, LineLossKind::UnknownType);
    assert_eq!(lost[0].head.event_type.as_deref(), Some("brand-new"));
    assert_eq!(w.link.gate().seq(), 3);
}

#[test]
fn an_event_for_another_session_is_dropped_without_taking_its_seq() {
    let mut w = World::following_with_limit(2, 1 << 20);
    let other = json!({"ref": {"agentTypeId": "pi", "sessionId": "s2"}, "seq": 3,
        "event": {"type": "message-start", "seq": 3, "messageId": "x1", "role": "assistant"}});
    w.events(&(other.to_string() + "\n"));
    let lost = w.losses();
    assert_eq!(lost.len(), 1);
    assert_eq!(lost[0].kind, LineLossKind::Elsewhere);
    assert!(lost[0].message.contains("s2"));
    assert_eq!(w.link.gate().seq(), 2, "its seq is not this session's");
    w.events(&line(
        json!({"type": "message-start", "seq": 3, "messageId": "a1", "role": "assistant"}),
    ));
    w.events(&line(json!({"type": "message-delta", "seq": 4, "messageId": "a1", "partId": "0", "kind": "text", "delta": "mine"})));
    assert_eq!(w.texts(), ["mine"]);
    assert_eq!(w.link.gate().seq(), 4);
}

#[test]
fn a_gap_the_state_does_not_fill_backs_off_and_gives_up() {
    let mut w = World::following_with_limit(5, 1 << 20);
    let mut asks = Vec::new();
    loop {
        w.events(&line(
            json!({"type": "agent-start", "seq": 7, "turnId": "t"}),
        ));
        let Some((at, ask)) = w.next_ask() else { break };
        asks.push(at);
        assert_eq!(ask, Ask::State);
        w.answer(Read::State, 200, &state(5, json!([])));
        let Some((at, ask)) = w.next_ask() else { break };
        asks.push(at);
        assert_eq!(ask, Ask::Events { cursor: 5 });
        w.link.reached();
        w.events("{\"type\":\"heartbeat\",\"now\":\"x\"}\n");
        assert!(asks.len() < 100, "no end");
    }
    let error = w.gave_up().expect("a typed error");
    assert_eq!(error.kind, ErrorKind::Protocol);
    assert!(
        error.message.contains("skipped from 6 to 7"),
        "{}",
        error.message
    );
    assert_eq!(asks.len(), 2 * MAX_STRIKES as usize, "{asks:?}");
    // At most two requests in any second.
    for pair in asks.windows(3) {
        assert!(pair[2] - pair[0] >= 750, "{asks:?}");
    }
    let took = asks.last().unwrap() - asks[0];
    assert!(took <= 39_000, "{took} ms");
    assert_eq!(w.link.poll_timeout(), None);
}

#[test]
fn a_range_error_on_every_reconnect_backs_off_and_gives_up() {
    let mut w = World::following_with_limit(50, 1 << 20);
    let body = json!({"error": {"code": "AGENT_SESSION_CURSOR_AHEAD", "message": "m", "details": {"latestSeq": 60, "minReplaySeq": 1}}}).to_string();
    let mut asks = Vec::new();
    w.answer(Read::Events, 409, body.as_bytes());
    while let Some((at, ask)) = w.next_ask() {
        asks.push(at);
        match ask {
            Ask::State => w.answer(Read::State, 200, &state(60, json!([]))),
            Ask::Events { .. } => w.answer(Read::Events, 409, body.as_bytes()),
        }
        assert!(asks.len() < 100, "no end");
    }
    let error = w.gave_up().expect("a typed error");
    assert_eq!((error.kind, error.status), (ErrorKind::Server, Some(409)));
    assert_eq!(asks.len(), 2 * MAX_STRIKES as usize, "{asks:?}");
    for pair in asks.windows(3) {
        assert!(pair[2] - pair[0] >= 750, "{asks:?}");
    }
}

#[test]
fn a_state_that_keeps_failing_gives_up_with_its_status() {
    let mut w = World::new();
    let mut asks = Vec::new();
    while let Some((at, ask)) = w.next_ask() {
        assert_eq!(ask, Ask::State);
        asks.push(at);
        w.answer(
            Read::State,
            500,
            br#"{"error":{"code":"INTERNAL","message":"boom"}}"#,
        );
        assert!(asks.len() < 100, "no end");
    }
    let error = w.gave_up().expect("a typed error");
    assert_eq!((error.kind, error.status), (ErrorKind::Server, Some(500)));
    assert!(error.message.contains("boom"), "{}", error.message);
    assert_eq!(asks.len(), MAX_STRIKES as usize + 1);
    let took = asks.last().unwrap() - asks[0];
    assert!(took <= 69_000, "{took} ms");
}

#[test]
fn a_state_too_large_to_keep_gives_up_at_once() {
    let mut w = World::new();
    assert_eq!(w.ask(), Some(Ask::State));
    w.answer(Read::State, 0, b"");
    let error = w.gave_up().expect("a typed error");
    assert_eq!(error.kind, ErrorKind::Protocol);
    assert_eq!(error.field.as_deref(), Some("limits.maxBodyBytes"));
    assert_eq!(w.link.poll_timeout(), None, "no retry");
}

#[test]
fn a_filled_gap_clears_the_strikes_once_the_events_go_past_it() {
    let mut w = World::following_with_limit(2, 1 << 20);
    for round in 0..(MAX_STRIKES as u64 * 2) {
        let base = 2 + round * 3;
        // A gap, a state that fills it, and an event past it: each gap is read at once.
        w.events(&line(
            json!({"type": "agent-start", "seq": base + 2, "turnId": "t"}),
        ));
        assert_eq!(w.ask(), Some(Ask::State), "round {round}");
        w.answer(Read::State, 200, &state(base + 2, json!([])));
        assert_eq!(w.ask(), Some(Ask::Events { cursor: base + 2 }));
        w.link.reached();
        w.events(&line(
            json!({"type": "agent-end", "seq": base + 3, "turnId": "t", "status": "ok"}),
        ));
    }
    assert_eq!(w.gave_up(), None);
}

#[test]
fn an_events_stream_that_keeps_failing_says_so_and_is_still_tried() {
    let mut w = World::following_with_limit(2, 1 << 20);
    for _ in 0..10 {
        w.link
            .failed(Read::Events, "timed out", w.now, &mut Low, &mut w.notes);
        let (_, ask) = w.next_ask().expect("tried again");
        assert_eq!(ask, Ask::Events { cursor: 2 });
    }
    let said: Vec<&ChatError> = (w.notes.iter())
        .filter_map(|n| match n {
            LinkNote::Unreachable(e) => Some(e),
            _ => None,
        })
        .collect();
    assert_eq!(said.len(), 1, "said once");
    assert_eq!(said[0].kind, ErrorKind::Network);
    assert_eq!(
        w.link.reached().as_ref(),
        Some(said[0]),
        "a connect takes it back"
    );
    assert_eq!(w.gave_up(), None);
}

#[test]
fn an_envelope_is_known_by_its_session_id_not_its_agent_type() {
    // The reference server names every agent `pi`, whatever the path's agent type.
    let mut w = World::following_with_limit(2, 1 << 20);
    let other_agent = json!({"ref": {"agentTypeId": "default", "sessionId": "s1"}, "seq": 3,
        "event": {"type": "agent-start", "seq": 3, "turnId": "t"}});
    w.events(&(other_agent.to_string() + "\n"));
    assert_eq!(w.link.gate().seq(), 3);
    assert!(w.losses().is_empty());
}

#[test]
fn moves_during_a_state_read_keep_it_and_bring_one_more_read() {
    let mut w = World::following(2);
    w.link.reread();
    assert_eq!(w.ask(), Some(Ask::State));
    // Three more moves while it is on its way: it is not given up, and one read follows it.
    for _ in 0..3 {
        w.link.reread();
        assert_eq!(w.link.reading(), Some(Read::State));
        assert_eq!(w.ask(), None);
    }
    w.answer(Read::State, 200, &state(3, json!([])));
    assert_eq!(w.ask(), Some(Ask::State));
    w.answer(Read::State, 200, &state(3, json!([])));
    assert_eq!(w.ask(), Some(Ask::Events { cursor: 3 }));
}
