//! Following one pi-native session (SPEC §14) as a sans-IO model: which read to ask for next
//! (`GET …/state`, `GET …/events?cursor=N`), when (reconnect backoff, reset by a connect and by
//! every heartbeat), and what an answer means (frames through the [`NativeGate`], a gap or a
//! range error that makes the state be read again). The store makes the requests and feeds
//! their answers here, as it does for the session list; the commands (`prompt`, `followup`,
//! `stop`, `queue/clear`) are built by [`commands`].
//!
//! The reading rules are the reference's §6 and §13: the state is read once, then the events
//! stream is followed from its `seq`; a stream that ends, fails or sends a line that does not
//! fit is reconnected from the cursor without a state read; a seq gap, a `REPLAY_GAP` or a
//! `CURSOR_AHEAD` answer reads the state again. A state older than the events applied is
//! ignored (a lagging server), except the one read after such an answer: its lower seq is
//! taken as it is.

use crate::ndjson::NdjsonDecoder;
use crate::protocol::pi_native::{classify_events_error, parse_line, read_state, Frame};
use crate::random::RandomSource;
use crate::stream::conversation::Conversation;
use crate::stream::pi_native::{Gate, NativeEffect, NativeGate};

/// The code of a session the server does not have (reference §10).
const NOT_FOUND: &str = "AGENT_SESSION_NOT_FOUND";

/// The longest event line taken (a `message-end` final carries a whole message).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// A read the link wants made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    /// `GET …/state`.
    State,
    /// `GET …/events?cursor=N`.
    Events {
        /// The cursor: the seq of the last event applied.
        cursor: u64,
    },
}

/// Which read an answer belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// The state read in flight.
    State,
    /// The events stream in flight.
    Events,
}

/// What happened, for the store to show.
#[derive(Debug, Clone, PartialEq)]
pub enum LinkNote {
    /// An event's effect on the session (a committed user message, the queue, the run…).
    Effect(NativeEffect),
    /// The state was read: the history, queue and status are the server's now.
    Hydrated,
    /// A read failed and is tried again after a backoff; the message says why.
    Retrying(String),
    /// The state answer is unusable (another protocol version, not a session document): the
    /// link stops, as the upstream client does.
    Refused(String),
    /// The server has no such session (`404 AGENT_SESSION_NOT_FOUND`): the link stops, and
    /// the session is empty until a send creates it.
    Missing,
}

/// The link's state.
#[derive(Debug)]
pub struct NativeLink {
    gate: NativeGate,
    decoder: NdjsonDecoder,
    /// The read in flight, if any (one at a time: the state, or the events stream).
    reading: Option<Read>,
    /// A read to ask for at this time (a backoff), or at once (`Some(0)`).
    due: Option<(u64, Read)>,
    /// Failed attempts since the last connect or heartbeat.
    attempt: u32,
    hydrated: bool,
    stopped: bool,
    /// The state is read because the server said the cursor is out of range: a lower seq is
    /// taken.
    rewind: bool,
}

impl Default for NativeLink {
    fn default() -> Self {
        NativeLink::new()
    }
}

impl NativeLink {
    /// A link that has read nothing yet; [`open`](Self::open) starts it.
    pub fn new() -> Self {
        NativeLink {
            gate: NativeGate::new(),
            decoder: NdjsonDecoder::new(MAX_LINE_BYTES),
            reading: None,
            due: None,
            attempt: 0,
            hydrated: false,
            stopped: false,
            rewind: false,
        }
    }

    /// The gate: cursor, queue, run status.
    pub fn gate(&self) -> &NativeGate {
        &self.gate
    }

    /// The gate, for the store's own moves (a stop).
    pub fn gate_mut(&mut self) -> &mut NativeGate {
        &mut self.gate
    }

    /// The state was read at least once.
    pub fn hydrated(&self) -> bool {
        self.hydrated
    }

    /// The events stream is open (its answer began).
    pub fn reading(&self) -> Option<Read> {
        self.reading
    }

    /// Starts following: the state first.
    pub fn open(&mut self) {
        // A read in flight when the session was left was aborted with it.
        self.reading = None;
        self.stopped = false;
        self.due = Some((0, Read::State));
    }

    /// Reads the state again now (the store learned the session moved on without the
    /// events saying so yet); the read in flight is given up.
    pub fn reread(&mut self) {
        if !self.stopped {
            self.reading = None;
            self.due = Some((0, Read::State));
        }
    }

    /// Stops following (a session switch, `dispose`): the store aborts the read in flight.
    pub fn close(&mut self) {
        self.stopped = true;
        self.reading = None;
        self.due = None;
    }

    /// The read to make now, if one is due; the store makes it and feeds its answer here.
    pub fn poll_ask(&mut self, now_ms: u64) -> Option<Ask> {
        if self.stopped || self.reading.is_some() {
            return None;
        }
        let (at, read) = self.due?;
        if at > now_ms {
            return None;
        }
        self.due = None;
        self.reading = Some(read);
        Some(match read {
            Read::State => Ask::State,
            Read::Events => {
                self.decoder = NdjsonDecoder::new(MAX_LINE_BYTES);
                Ask::Events {
                    cursor: self.gate.seq(),
                }
            }
        })
    }

    /// When the next read is due, if one waits.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.due.map(|(at, _)| at).filter(|_| !self.stopped)
    }

    /// The events stream answered 2xx: connected, the backoff starts over.
    pub fn connected(&mut self) {
        self.attempt = 0;
    }

    /// Bytes of the events stream; frames go through the gate into `conversation`.
    pub fn events_body(
        &mut self,
        conversation: &mut Conversation,
        bytes: &[u8],
        now_ms: u64,
        rng: &mut dyn RandomSource,
        out: &mut Vec<LinkNote>,
    ) {
        if self.reading != Some(Read::Events) {
            return;
        }
        let mut lines = Vec::new();
        self.decoder.push(bytes, &mut lines);
        self.take_lines(conversation, lines, now_ms, rng, out);
    }

    fn take_lines(
        &mut self,
        conversation: &mut Conversation,
        lines: Vec<Result<String, crate::ndjson::LineError>>,
        now_ms: u64,
        rng: &mut dyn RandomSource,
        out: &mut Vec<LinkNote>,
    ) {
        let mut effects = Vec::new();
        for line in lines {
            if self.reading != Some(Read::Events) {
                return; // a gap or a bad line ended this connection
            }
            let frame = match line
                .map_err(|e| e.to_string())
                .and_then(|l| parse_line(&l).map_err(|e| e.to_string()))
            {
                Ok(f) => f,
                Err(e) => {
                    // Upstream: a protocol error, and a reconnect from the cursor.
                    self.retry(Read::Events, e, now_ms, rng, out);
                    return;
                }
            };
            let heartbeat = frame == Frame::Heartbeat;
            match self.gate.apply(conversation, frame, &mut effects) {
                Gate::Gap { expected, actual } => {
                    self.reading = None;
                    self.due = Some((now_ms, Read::State));
                    out.push(LinkNote::Retrying(format!(
                        "events skipped from {expected} to {actual}: reading the state again"
                    )));
                    return;
                }
                _ if heartbeat => self.attempt = 0,
                _ => {}
            }
            out.extend(effects.drain(..).map(LinkNote::Effect));
        }
    }

    /// The read's answer ended: its status, and its whole body for a non-2xx or the state.
    pub fn answer_end(
        &mut self,
        conversation: &mut Conversation,
        read: Read,
        (status, body): (u16, &[u8]),
        now_ms: u64,
        rng: &mut dyn RandomSource,
        out: &mut Vec<LinkNote>,
    ) {
        if self.reading != Some(read) {
            return;
        }
        let ok = (200..300).contains(&status);
        if status == 404 && crate::protocol::ChatError::from_http(404, body).says(NOT_FOUND) {
            self.close();
            self.hydrated = true;
            out.push(LinkNote::Missing);
            return;
        }
        match read {
            Read::State if ok => {
                let doc = read_state(body);
                match doc {
                    Ok(doc) => {
                        let rewind = std::mem::take(&mut self.rewind);
                        if !self.gate.apply_state(conversation, doc, rewind) {
                            out.push(LinkNote::Effect(NativeEffect::Diagnostic(
                                "a state older than the events applied was ignored".into(),
                            )));
                        }
                        self.hydrated = true;
                        self.reading = None;
                        self.due = Some((now_ms, Read::Events));
                        out.push(LinkNote::Hydrated);
                    }
                    Err(e) => {
                        self.close();
                        out.push(LinkNote::Refused(format!(
                            "the session state is unusable: {e}"
                        )));
                    }
                }
            }
            Read::State => self.retry(
                Read::State,
                format!("the state read answered {status}"),
                now_ms,
                rng,
                out,
            ),
            Read::Events if !ok && classify_events_error(status, body).is_some() => {
                // The server says the cursor does not fit it: its state is taken whatever
                // its seq (upstream rewinds for `CURSOR_AHEAD` only; a state ignored after a
                // `REPLAY_GAP` would only bring the same answer again, at once).
                self.rewind = true;
                self.reading = None;
                self.due = Some((now_ms, Read::State));
                out.push(LinkNote::Retrying(format!(
                    "the events cursor is out of range ({status}): reading the state again"
                )));
            }
            Read::Events => {
                if ok {
                    let mut lines = Vec::new();
                    self.decoder.finish(&mut lines);
                    self.take_lines(conversation, lines, now_ms, rng, out);
                    if self.reading != Some(Read::Events) {
                        return;
                    }
                }
                let why = match ok {
                    true => "the events stream ended".to_string(),
                    false => format!("the events stream answered {status}"),
                };
                self.retry(Read::Events, why, now_ms, rng, out);
            }
        }
    }

    /// The read failed without an answer (network error, timeout).
    pub fn failed(
        &mut self,
        read: Read,
        message: &str,
        now_ms: u64,
        rng: &mut dyn RandomSource,
        out: &mut Vec<LinkNote>,
    ) {
        if self.reading == Some(read) {
            self.retry(read, message.to_string(), now_ms, rng, out);
        }
    }

    /// Tries `read` again after the reference's backoff: `d = min(30 s, 1 s·2^attempt)`,
    /// `round(min(30 s, d·(1−j) + r·2·d·j))` with `j = 0.25`. A hydrated session reconnects
    /// its events from the cursor without reading the state.
    fn retry(
        &mut self,
        read: Read,
        why: String,
        now_ms: u64,
        rng: &mut dyn RandomSource,
        out: &mut Vec<LinkNote>,
    ) {
        self.reading = None;
        let read = if self.hydrated { read } else { Read::State };
        self.due = Some((now_ms + backoff_ms(self.attempt, rng.unit()), read));
        self.attempt = self.attempt.saturating_add(1);
        out.push(LinkNote::Retrying(why));
    }
}

/// The reconnect delay after `attempt` failures, `r` in `[0, 1)`.
pub fn backoff_ms(attempt: u32, r: f64) -> u64 {
    const CAP: f64 = 30_000.0;
    const J: f64 = 0.25;
    let d = (1000.0 * 2f64.powi(attempt.min(16) as i32)).min(CAP);
    (d * (1.0 - J) + r * 2.0 * d * J).min(CAP).round() as u64
}

/// The command bodies and paths of the protocol (reference §3.12–§3.16), as the upstream
/// client sends them: `requestId` is the prompt's `clientNonce`, a follow-up's
/// `"<clientNonce>:<clientSeq>"`, so a retry is the same command byte for byte.
pub mod commands {
    use serde_json::{json, Value};

    use crate::protocol::FileAttachment;

    /// `/api/v1/agents/{agentType}/sessions/{sessionId}`, segments encoded.
    pub fn session_path(agent_type: &str, session_id: &str) -> String {
        format!("{}/{}", sessions_path(agent_type), encode(session_id))
    }

    /// `/api/v1/agents/{agentType}/sessions`: the list, and `POST` to create one.
    pub fn sessions_path(agent_type: &str) -> String {
        format!("/api/v1/agents/{}/sessions", encode(agent_type))
    }

    fn encode(s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        for b in s.bytes() {
            match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    out.push(b as char)
                }
                _ => out.push_str(&format!("%{b:02X}")),
            }
        }
        out
    }

    /// `POST …/rename`.
    pub fn rename(request_id: &str, title: &str) -> Value {
        json!({"requestId": request_id, "title": title})
    }

    /// `POST /api/v1/agents/{agentType}/sessions`: a new session, named by the server; the
    /// title the user gave it before it existed goes with it.
    pub fn create(request_id: &str, title: Option<&str>) -> Value {
        let mut body = json!({ "requestId": request_id });
        if let Some(t) = title {
            body["title"] = Value::String(t.into());
        }
        body
    }

    /// `POST …/prompt`, with the send's files as its `attachments` (reference §11: the
    /// server gives the model the images among them).
    pub fn prompt(client_nonce: &str, content: &str, files: &[FileAttachment]) -> Value {
        let mut body =
            json!({"requestId": client_nonce, "clientNonce": client_nonce, "content": content});
        if !files.is_empty() {
            let attachments = files.iter().map(|f| {
                let mut a = json!({"url": f.url, "mediaType": f.media_type});
                if let Some(name) = &f.filename {
                    a["filename"] = Value::String(name.clone());
                }
                a
            });
            body["attachments"] = Value::Array(attachments.collect());
        }
        body
    }

    /// `POST …/followup`.
    pub fn followup(client_nonce: &str, client_seq: u64, content: &str) -> Value {
        json!({
            "requestId": format!("{client_nonce}:{client_seq}"),
            "clientNonce": client_nonce,
            "content": content,
            "clientSeq": client_seq,
        })
    }

    /// `POST …/queue/clear` for one item: both selectors, so an item no longer queued is a
    /// 409 (`AGENT_REQUEST_CONFLICT`) rather than a silent `cleared: 0`.
    pub fn clear_one(client_nonce: &str, client_seq: u64) -> Value {
        json!({"clientNonce": client_nonce, "clientSeq": client_seq})
    }
}
