//! The pi-native store tests' server side: the state document, events as NDJSON lines, and
//! a store opened and following its session's events.

use agent_chat_store::{Method, RequestKind};
use serde_json::{json, Value};

use super::*;

pub const BASE: &str = "/api/v1/agents/pi/sessions/S";

pub fn native() -> Harness {
    let mut o = options();
    o.pi_native = Some("pi".into());
    Harness::new(o)
}

pub fn state(seq: u64, status: &str, messages: Value, queue: Value) -> Reply {
    state_of(SESSION, seq, status, messages, queue)
}

/// [`state`] of another session.
pub fn state_of(session: &str, seq: u64, status: &str, messages: Value, queue: Value) -> Reply {
    Reply::json(
        200,
        json!({"ref": {"agentTypeId": "pi", "sessionId": session}, "seq": seq, "state": {
            "protocolVersion": 1, "sessionId": session, "seq": seq, "status": status,
            "messages": messages, "queue": {"followUps": queue}, "followUpMode": "one-at-a-time"}}),
    )
}

pub fn lines(events: &[Value]) -> Vec<u8> {
    lines_of(SESSION, events)
}

/// [`lines`] of another session.
pub fn lines_of(session: &str, events: &[Value]) -> Vec<u8> {
    events
        .iter()
        .map(|e| {
            json!({"ref": {"agentTypeId": "pi", "sessionId": session}, "seq": e["seq"], "event": e})
                .to_string()
                + "\n"
        })
        .collect::<String>()
        .into_bytes()
}

pub fn ndjson(events: &[Value]) -> Reply {
    Reply::bytes(200, Some("application/x-ndjson"), lines(events)).open()
}

/// Opened: the state at `seq` (idle, empty), the events stream open and connected.
pub fn following(seq: u64) -> (Harness, u64) {
    let mut h = native();
    let st = h.the_open(RequestKind::NativeState);
    assert_eq!(
        (st.method, st.path.as_str()),
        (Method::Get, "/api/v1/agents/pi/sessions/S/state")
    );
    assert_eq!(
        h.count(RequestKind::Capabilities) + h.count(RequestKind::MessagesGet),
        0
    );
    h.respond(st.id, state(seq, "idle", json!([]), json!([])));
    let ev = h.the_open(RequestKind::NativeEvents);
    assert_eq!(ev.path, format!("{BASE}/events?cursor={seq}"));
    h.respond(ev.id, ndjson(&[]));
    (h, ev.id)
}

pub fn feed(h: &mut Harness, events_id: u64, events: &[Value]) {
    h.body(events_id, &lines(events));
}

/// `text` sent, its prompt taken, its run started (seq 1 on the events stream `ev`).
pub fn run_started(h: &mut Harness, ev: u64, text: &str) {
    h.send(text);
    let prompt = h.the_open(RequestKind::NativePrompt).id;
    h.respond(prompt, Reply::json(202, json!({"accepted": true})));
    feed(
        h,
        ev,
        &[json!({"type": "agent-start", "seq": 1, "turnId": "t1"})],
    );
}

/// A row of the server's follow-up queue (a `queue-updated` event's or `/state`'s), with the
/// selectors the server attached, if any.
pub fn row(id: &str, text: &str, selectors: Option<(&str, u64)>) -> Value {
    let mut r = json!({"id": id, "kind": "followup", "displayText": text});
    if let Some((nonce, seq)) = selectors {
        r["clientNonce"] = json!(nonce);
        r["clientSeq"] = json!(seq);
    }
    r
}

/// A `queue-updated` event at `seq` with `rows`.
pub fn queue_updated(seq: u64, rows: Vec<Value>) -> Value {
    json!({"type": "queue-updated", "seq": seq, "queue": {"followUps": rows}})
}
