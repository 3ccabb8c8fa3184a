//! One pi-native session as a client follows it (SPEC §14): the `/state` document, then the
//! event stream through a seq gate, reduced into the same history the pi reducer keeps for the
//! first transport. Each event becomes the `data-pi-*` event it corresponds to (one `match`,
//! [`NativeGate::to_pi`]), so both transports share one reducer and its rules; what has no
//! counterpart there (the queue, the run's status, errors) is kept here.

use serde_json::Value;

use crate::protocol::chunk::{Chunk, PiEvent};
use crate::protocol::pi_native::{EndStatus, EventKind, Frame, NativeEvent, QueueRow, StateDoc};
use crate::protocol::{Part, Role, ToolState, UIMessage};
use crate::random::SeededRandom;

use super::conversation::{Conversation, Effect, TurnView};
use super::History;

/// What the gate did with a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// The next event: applied, the cursor moved to its seq.
    Applied,
    /// Already applied (`seq <= cursor`): ignored.
    Stale,
    /// Events are missing before it: dropped; the client re-reads `/state`.
    Gap {
        /// The seq that was due.
        expected: u64,
        /// The seq that came.
        actual: u64,
    },
    /// A heartbeat: liveness only.
    Heartbeat,
}

/// The run's status as the session shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    /// Nothing runs.
    Idle,
    /// A run is on (between `agent-start` and its final `agent-end`).
    Running,
    /// The last run failed.
    Failed,
}

/// What the store must act on after an event.
#[derive(Debug, Clone, PartialEq)]
pub enum NativeEffect {
    /// A user message the server committed, with the `clientNonce` of the prompt or follow-up
    /// it is (its optimistic copy and its queued bubble go).
    UserMessage {
        /// The server's message id.
        message_id: String,
        /// `clientNonce`, when the server matched it.
        client_nonce: Option<String>,
        /// `clientSeq`, when the server matched it.
        client_seq: Option<u64>,
    },
    /// The server's queue changed (authoritative for the waiting bubbles).
    Queue,
    /// A run began (its turn id, and the seq of its `agent-start`).
    RunStarted(String, u64),
    /// A run ended for good (a `willRetry` end is not one).
    RunEnded(EndStatus),
    /// The turn failed with this error (`code`, `message`); `ABORTED` after a stop is not one.
    Error(String, String),
    /// An event that is not history, for the host's `onData`.
    Data(String, Value),
    /// Something odd but survivable.
    Diagnostic(String),
}

/// What a pi-native session holds beside its history: the cursor, the server's queue, the
/// run's status. It writes the history it is handed ([`Conversation`]), so the store keeps one
/// history whichever transport runs; [`NativeSession`] pairs it with a history of its own.
#[derive(Debug)]
pub struct NativeGate {
    seq: u64,
    status: RunStatus,
    turn_id: Option<String>,
    queue: Vec<QueueRow>,
    error: Option<String>,
    /// The user asked to stop: an `ABORTED` error that follows is the stop, not a failure.
    stopping: bool,
}

impl Default for NativeGate {
    fn default() -> Self {
        NativeGate::new()
    }
}

impl NativeGate {
    /// A session nothing is known of yet (cursor 0).
    pub fn new() -> Self {
        NativeGate {
            seq: 0,
            status: RunStatus::Idle,
            turn_id: None,
            queue: Vec::new(),
            error: None,
            stopping: false,
        }
    }

    /// The server's follow-up queue, in order.
    pub fn queue(&self) -> &[QueueRow] {
        &self.queue
    }

    /// The cursor: the seq of the last event applied (or of the last `/state`).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The run's status.
    pub fn status(&self) -> RunStatus {
        self.status
    }

    /// The running turn's id.
    pub fn turn_id(&self) -> Option<&str> {
        self.turn_id.as_deref()
    }

    /// The last run's error message, while the session is in error.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The user stopped the run: an `ABORTED` error that follows is that stop.
    pub fn stopping(&mut self) {
        self.stopping = true;
    }

    /// A `/state` document is the truth now, its seq the cursor; one older than the cursor
    /// (a lagging server, read after events were applied) is ignored and `false` returned,
    /// unless `rewind`: the server said the cursor is out of range (`CURSOR_AHEAD`: it
    /// restarted, its numbering went back), and its state replaces what this client holds
    /// (the upstream `allowSeqRewind`).
    pub fn apply_state(
        &mut self,
        conversation: &mut Conversation,
        doc: StateDoc,
        rewind: bool,
    ) -> bool {
        if doc.seq < self.seq && !rewind {
            return false;
        }
        conversation.hydrate(doc.messages, false);
        for (id, parts) in &doc.streaming {
            conversation.resume_streaming(id, parts);
        }
        self.seq = doc.seq;
        self.queue = doc.queue;
        self.turn_id = doc.active_turn_id;
        (self.status, self.error) = match doc.status.as_str() {
            "streaming" => (RunStatus::Running, None),
            "error" => (
                RunStatus::Failed,
                doc.error.or(Some("the run failed".into())),
            ),
            _ => (RunStatus::Idle, None),
        };
        true
    }

    /// One frame through the seq gate.
    pub fn apply(
        &mut self,
        conversation: &mut Conversation,
        frame: Frame,
        out: &mut Vec<NativeEffect>,
    ) -> Gate {
        let Frame::Event(ev) = frame else {
            return Gate::Heartbeat;
        };
        if ev.seq <= self.seq {
            return Gate::Stale;
        }
        if ev.seq > self.seq + 1 {
            return Gate::Gap {
                expected: self.seq + 1,
                actual: ev.seq,
            };
        }
        self.seq = ev.seq;
        self.reduce(conversation, ev, out);
        Gate::Applied
    }

    fn reduce(
        &mut self,
        conversation: &mut Conversation,
        ev: NativeEvent,
        out: &mut Vec<NativeEffect>,
    ) {
        match &ev.kind {
            EventKind::AgentStart { turn_id } => {
                self.status = RunStatus::Running;
                self.error = None;
                self.turn_id = Some(turn_id.clone());
                out.push(NativeEffect::RunStarted(turn_id.clone(), ev.seq));
            }
            EventKind::AgentEnd {
                status, will_retry, ..
            } => {
                // A run pi retries goes on under the same turn: not an end.
                if *will_retry {
                    return;
                }
                conversation.end_of_stream();
                self.turn_id = None;
                self.stopping = false;
                self.status = match (status, &self.error) {
                    (EndStatus::Error, _) | (_, Some(_)) => RunStatus::Failed,
                    _ => RunStatus::Idle,
                };
                if *status == EndStatus::Error && self.error.is_none() {
                    self.error = Some("the run failed".into());
                }
                out.push(NativeEffect::RunEnded(*status));
                return;
            }
            EventKind::QueueUpdated { rows } => {
                self.queue = rows.clone();
                out.push(NativeEffect::Queue);
                return;
            }
            EventKind::Error { code, message, .. } => {
                if code == "ABORTED" && self.stopping {
                    return;
                }
                self.error = Some(message.clone());
                out.push(NativeEffect::Error(code.clone(), message.clone()));
                return;
            }
            EventKind::FollowUpConsumed {
                message_id,
                client_nonce,
                client_seq,
            } => {
                out.push(NativeEffect::UserMessage {
                    message_id: message_id.clone(),
                    client_nonce: client_nonce.clone(),
                    client_seq: *client_seq,
                });
                return;
            }
            EventKind::MessageStart {
                message_id,
                role: Role::User,
                client_nonce,
                client_seq,
                ..
            } => out.push(NativeEffect::UserMessage {
                message_id: message_id.clone(),
                client_nonce: client_nonce.clone(),
                client_seq: *client_seq,
            }),
            EventKind::Other { name, data } => {
                out.push(NativeEffect::Data(name.clone(), data.clone()));
                return;
            }
            EventKind::Unknown { name } => {
                out.push(NativeEffect::Diagnostic(format!(
                    "unknown event type {name} skipped"
                )));
                return;
            }
            _ => {}
        }
        // The reducer keeps no `createdAt`: set on the message the start made, or on the one
        // a delta made before its start came (upstream `piChatReducer.test.ts:1300`).
        let created_at = match &ev.kind {
            EventKind::MessageStart {
                message_id,
                created_at: Some(at),
                ..
            } => Some((message_id.clone(), at.clone())),
            _ => None,
        };
        let kind = merge_final(conversation.history(), ev.kind);
        for pi in Self::to_pi(kind) {
            self.feed(conversation, pi, out);
        }
        if let Some((id, at)) = created_at {
            let known = conversation.history().get(&id).and_then(created_at_of);
            if known.is_none() {
                conversation.edit_message(&id, |m| keep_created_at(m, &Value::String(at)));
            }
        }
    }

    /// The pi reducer's events for a history event (none for the rest).
    fn to_pi(kind: EventKind) -> Vec<PiEvent> {
        // The gate has done the seq's work: the reducer's per-turn watermark stays out.
        let seq = None;
        match kind {
            EventKind::AgentStart { turn_id } => vec![PiEvent::TurnStart { turn_id }],
            EventKind::MessageStart {
                message_id,
                role,
                text,
                ..
            } => vec![PiEvent::MessageStart {
                seq,
                message_id,
                role,
                // The store reconciles its own messages by the effect; the reducer commits.
                client_nonce: None,
                text,
            }],
            EventKind::MessageDelta {
                message_id,
                part_id,
                kind,
                delta,
            } => vec![PiEvent::PartDelta {
                seq,
                kind,
                message_id,
                part_id,
                delta,
            }],
            EventKind::PartEnd {
                message_id,
                part_id,
                kind,
                text,
            } => vec![PiEvent::PartEnd {
                seq,
                kind,
                message_id,
                part_id,
                text: Some(text),
            }],
            EventKind::MessageEnd {
                message_id,
                final_message,
                ..
            } => vec![PiEvent::MessageEnd {
                seq,
                role: final_message.as_ref().map_or(Role::Assistant, |m| m.role),
                message_id,
                text: None,
                final_message,
            }],
            EventKind::ToolCall {
                message_id,
                tool_call_id,
                tool_name,
                input,
                ..
            } => vec![
                PiEvent::ToolCallStart {
                    seq,
                    message_id: message_id.clone(),
                    tool_call_id: tool_call_id.clone(),
                    tool_name: Some(tool_name.clone()),
                },
                PiEvent::ToolCallEnd {
                    seq,
                    message_id,
                    tool_call_id,
                    tool_name: Some(tool_name),
                    input: Some(input),
                },
            ],
            EventKind::ToolResult {
                message_id,
                tool_call_id,
                output,
                details,
                is_error,
                error_text,
                ..
            } => vec![PiEvent::ToolResult {
                seq,
                message_id,
                tool_call_id,
                tool_name: None,
                // On an error the reducer takes the part's `errorText` from the output.
                output: Some(match (is_error, error_text) {
                    (true, Some(t)) => Value::String(t),
                    _ => output,
                }),
                is_error,
                details,
            }],
            _ => Vec::new(),
        }
    }

    fn feed(&mut self, conversation: &mut Conversation, ev: PiEvent, out: &mut Vec<NativeEffect>) {
        let mut effects = Vec::new();
        let view = TurnView {
            running_id: self.turn_id.as_deref(),
            busy: self.status == RunStatus::Running,
        };
        // Ids are made only for the AI SDK reducer's messages: never asked here.
        let mut ids = SeededRandom(0);
        conversation.apply(Chunk::Pi(ev), view, &mut ids, &mut effects);
        for e in effects {
            match e {
                Effect::Diagnostic(d) | Effect::Lost(_, d) => out.push(NativeEffect::Diagnostic(d)),
                Effect::Data { name, data, .. } => out.push(NativeEffect::Data(name, data)),
                _ => {}
            }
        }
    }
}

/// A `message-end` final describes pi's assistant entry, whose tool calls carry no result:
/// a tool part the stream already settled keeps its settled state over the final's. The
/// message's `createdAt` stays when the final has none.
fn merge_final(history: &History, kind: EventKind) -> EventKind {
    let EventKind::MessageEnd {
        message_id,
        final_message: Some(mut fin),
        part_ids,
    } = kind
    else {
        return kind;
    };
    if let Some(current) = history.get(&message_id) {
        if let Some(at) = created_at_of(current) {
            keep_created_at(&mut fin, at);
        }
        for part in fin.parts.iter_mut() {
            let Part::Tool(t) = part else { continue };
            let settled = current.parts.iter().find_map(|p| {
                p.as_tool().filter(|c| {
                    c.tool_call_id == t.tool_call_id
                        && matches!(c.state, ToolState::OutputAvailable | ToolState::OutputError)
                })
            });
            let unsettled = !matches!(t.state, ToolState::OutputAvailable | ToolState::OutputError);
            if let (Some(c), true) = (settled, unsettled) {
                *part = Part::Tool(Box::new(c.clone()));
            }
        }
    }
    EventKind::MessageEnd {
        message_id,
        final_message: Some(fin),
        part_ids,
    }
}

/// The message's `createdAt` (in its metadata, as `/state` messages have it).
fn created_at_of(msg: &UIMessage) -> Option<&Value> {
    msg.metadata.as_deref()?.get("createdAt")
}

/// Gives the message this `createdAt` where it has none.
fn keep_created_at(msg: &mut UIMessage, at: &Value) {
    let meta = msg
        .metadata
        .get_or_insert_with(|| Box::new(Value::Object(Default::default())));
    if let Value::Object(o) = meta.as_mut() {
        o.entry("createdAt").or_insert_with(|| at.clone());
    }
}

/// A pi-native session with a history of its own (the replay helper's, a host's).
#[derive(Debug)]
pub struct NativeSession {
    conversation: Conversation,
    gate: NativeGate,
}

impl Default for NativeSession {
    fn default() -> Self {
        NativeSession::new()
    }
}

impl std::ops::Deref for NativeSession {
    type Target = NativeGate;
    fn deref(&self) -> &NativeGate {
        &self.gate
    }
}

impl NativeSession {
    /// A session nothing is known of yet.
    pub fn new() -> Self {
        NativeSession {
            conversation: Conversation::new(true),
            gate: NativeGate::new(),
        }
    }

    /// The history.
    pub fn history(&self) -> &History {
        self.conversation.history()
    }

    /// The messages, in order.
    pub fn messages(&self) -> &[UIMessage] {
        self.conversation.history().messages()
    }

    /// [`NativeGate::apply_state`] on this session's history.
    pub fn apply_state(&mut self, doc: StateDoc, rewind: bool) -> bool {
        self.gate.apply_state(&mut self.conversation, doc, rewind)
    }

    /// [`NativeGate::apply`] on this session's history.
    pub fn apply(&mut self, frame: Frame, out: &mut Vec<NativeEffect>) -> Gate {
        self.gate.apply(&mut self.conversation, frame, out)
    }

    /// [`NativeGate::stopping`].
    pub fn stopping(&mut self) {
        self.gate.stopping();
    }
}
