//! Following a pi-native session (SPEC §14, reference §6 and §13) on virtual time: the state
//! read first, then the events from its seq; reconnects from the cursor with the reference's
//! backoff; a gap, a replay gap or a cursor ahead reads the state again; an unusable state
//! stops. And the command bodies a retry resends byte for byte.

#![cfg(feature = "pi")]

use agent_chat_store::{
    backoff_ms, native_commands, Ask, ChatError, Conversation, ErrorKind, FileAttachment,
    LineLossKind, LinkNote, NativeEffect, NativeLink, RandomSource, Read, RunStatus,
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
        w.link.connected();
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
    w.link.connected();
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
    // Two failures in a row double the delay; a connect starts it over.
    w.link
        .failed(Read::Events, "reset", w.now, &mut Low, &mut w.notes);
    assert_eq!(w.link.poll_timeout(), Some(w.now + 1500));
    w.now += 1500;
    assert_eq!(w.ask(), Some(Ask::Events { cursor: 3 }));
    w.link.connected();
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
