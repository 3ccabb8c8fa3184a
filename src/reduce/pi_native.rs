//! One pi-native session as a client follows it (SPEC §14): the `/state` document, then the
//! event stream through a seq gate, reduced into the same history the pi reducer keeps for the
//! first transport. Each event becomes the `data-pi-*` event it corresponds to (one `match`,
//! [`NativeGate::to_pi`]), so both transports share one reducer and its rules; what has no
//! counterpart there (the queue, the run's status, errors) is kept here, and so are the rules
//! of upstream's client that the first transport does not have (SPEC §14.1: rows of a turn,
//! one row per answer, finals merged, ends settling; see [`NativeGate`]), applied to an event
//! before the reducer sees it.

use serde_json::Value;

use crate::protocol::chunk::{Chunk, PartKind, PiEvent};
use crate::protocol::pi_native::{
    EndStatus, EventKind, Frame, NativeEvent, QueueRow, StateDoc, StreamedPart,
};
use crate::protocol::{Part, Role, ToolPart, UIMessage};
use crate::util::random::SeededRandom;

use super::conversation::{Conversation, Effect, TurnView};
use super::native_merge::{self as merge, meta, same_turn, turn_of};
use super::History;

mod rows;
use rows::{covered_by_ended, edit_call, row_with_call};

mod state;

mod to_pi;

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
        /// The message's text (`message-start`'s display text): where the server matched
        /// no selectors, the follow-up it ran is known by it (SPEC §14.1).
        text: Option<String>,
    },
    /// The server's queue changed (authoritative for the waiting bubbles): the seq of the
    /// `queue-updated` and its rows. Several may come in one batch of events, each seen by
    /// the store at its own seq (a clear of the whole queue is known by the queue just
    /// before the event that emptied it).
    Queue(u64, Vec<QueueRow>),
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
/// run's status, and which row shows each message of the run. It writes the history it is
/// handed ([`Conversation`]), so the store keeps one history whichever transport runs;
/// [`NativeSession`] pairs it with a history of its own.
///
/// Where the upstream client's rules differ from the first transport's (SPEC §14.1), the gate
/// applies them before the pi reducer sees an event: an event names the row that shows its
/// message in this turn (message ids repeat across turns; an answer's messages are one row,
/// a step each), a final arrives merged into what streamed, a result that would undo a
/// settled call never arrives, and a run's end settles the rows it wrote.
#[derive(Debug)]
pub struct NativeGate {
    seq: u64,
    status: RunStatus,
    turn_id: Option<String>,
    queue: Vec<QueueRow>,
    error: Option<String>,
    /// The user asked to stop: an `ABORTED` error that follows is the stop, not a failure.
    stopping: bool,
    /// A state was read: a later one that shows less than the client is merged, not taken
    /// (as after events: the cursor is past 0).
    hydrated: bool,
    /// The messages of the run followed (or the last one), by the server's id: the row that
    /// shows each. A message id means this run's message, never an older turn's row.
    run: Vec<RunMessage>,
}

/// A message of the run followed, and where it is shown.
#[derive(Debug, Clone)]
struct RunMessage {
    /// The server's `messageId`.
    id: String,
    /// The row's id: the message's own, unless an older turn's row holds it, or the row is
    /// the answer the message goes on (it then has the newest message's id).
    row: String,
    /// The row's step that is this message.
    step: usize,
}

/// A row of a `/state` document, its answer's messages folded into it.
struct StateRow {
    msg: UIMessage,
    /// The server's ids of the messages folded into it before its own, with their steps
    /// (its own is its id, or `renamed_from`; no copy of every id of a long history).
    earlier: Vec<(String, usize)>,
    /// The server's id of its own message, when another row held it (`distinct_id`).
    renamed_from: Option<String>,
    /// Its parts the events after the state's seq extend, while it streams.
    streaming: Option<Vec<StreamedPart>>,
}

impl StateRow {
    /// The messages of the run it shows, as the run's messages shown under `row`.
    fn run_messages(
        earlier: Vec<(String, usize)>,
        own: (String, usize),
        row: &str,
    ) -> impl Iterator<Item = RunMessage> + '_ {
        earlier
            .into_iter()
            .chain([own])
            .map(move |(id, step)| RunMessage {
                id,
                row: row.to_string(),
                step,
            })
    }

    /// The server's id of its own message, and its step (the last).
    fn own(&self) -> (String, usize) {
        let id = self
            .renamed_from
            .clone()
            .unwrap_or_else(|| self.msg.id.clone());
        (id, merge::steps(&self.msg.parts).len() - 1)
    }
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
            hydrated: false,
            run: Vec::new(),
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

    /// An event at `seq` that could not be read (too large, malformed): the cursor moves past
    /// it under [`apply`](Self::apply)'s seq rules, and nothing of it reaches the history.
    pub fn skip(&mut self, seq: u64) -> Gate {
        if seq <= self.seq {
            return Gate::Stale;
        }
        if seq > self.seq + 1 {
            return Gate::Gap {
                expected: self.seq + 1,
                actual: seq,
            };
        }
        self.seq = seq;
        Gate::Applied
    }

    /// An event naming a turn other than the running one: an older run's, which ends nothing
    /// now (upstream `isStaleTurnScopedEvent`).
    fn stale(&self, turn: Option<&str>) -> bool {
        matches!((self.turn_id.as_deref(), turn), (Some(a), Some(b)) if a != b)
    }

    fn reduce(&mut self, c: &mut Conversation, ev: NativeEvent, out: &mut Vec<NativeEffect>) {
        let kind = match ev.kind {
            EventKind::AgentStart { turn_id } => {
                if self.turn_id.as_deref() != Some(turn_id.as_str()) {
                    if self.status == RunStatus::Running {
                        // The last run's end never came: it is over now.
                        self.settle(c, EndStatus::Ok);
                    }
                    self.run.clear();
                }
                self.status = RunStatus::Running;
                self.error = None;
                self.turn_id = Some(turn_id.clone());
                out.push(NativeEffect::RunStarted(turn_id.clone(), ev.seq));
                EventKind::AgentStart { turn_id }
            }
            EventKind::AgentEnd {
                turn_id,
                status,
                will_retry,
            } => {
                // A run pi retries goes on under the same turn: not an end.
                if will_retry {
                    return;
                }
                if self.stale(Some(&turn_id)) {
                    let d = format!("the end of an older run ({turn_id}) changes nothing");
                    return out.push(NativeEffect::Diagnostic(d));
                }
                self.settle(c, status);
                c.end_of_stream();
                self.turn_id = None;
                self.stopping = false;
                // A run that failed stays failed whatever its end says (upstream keeps the
                // error of a late non-error end).
                self.status = match (status, &self.error) {
                    (EndStatus::Error, _) | (_, Some(_)) => RunStatus::Failed,
                    _ => RunStatus::Idle,
                };
                if status == EndStatus::Error && self.error.is_none() {
                    self.error = Some("the run failed".into());
                }
                return out.push(NativeEffect::RunEnded(status));
            }
            EventKind::QueueUpdated { rows } => {
                out.push(NativeEffect::Queue(ev.seq, rows.clone()));
                self.queue = rows;
                return;
            }
            EventKind::Error {
                turn_id,
                code,
                message,
            } => {
                if code == "ABORTED" && self.stopping {
                    return;
                }
                if self.stale(turn_id.as_deref()) {
                    let d = format!("an older run's error changes nothing: {code}: {message}");
                    return out.push(NativeEffect::Diagnostic(d));
                }
                // The run failed: shown at once, and what it left unfinished is over.
                self.error = Some(message.clone());
                self.status = RunStatus::Failed;
                self.settle(c, EndStatus::Error);
                c.end_of_stream();
                self.turn_id = None;
                return out.push(NativeEffect::Error(code, message));
            }
            EventKind::FollowUpConsumed {
                message_id,
                client_nonce,
                client_seq,
            } => {
                return out.push(NativeEffect::UserMessage {
                    message_id,
                    client_nonce,
                    client_seq,
                    text: None,
                });
            }
            EventKind::Other { name, data } => return out.push(NativeEffect::Data(name, data)),
            EventKind::Unknown { name } => {
                let d = format!("unknown event type {name} skipped");
                return out.push(NativeEffect::Diagnostic(d));
            }
            EventKind::MessageStart {
                message_id,
                role,
                client_nonce,
                client_seq,
                text,
                created_at,
            } => {
                let (row, known) = match role {
                    Role::User => self.user_row(c, &message_id, client_nonce.as_deref()),
                    _ => (
                        self.new_message(c, &message_id, self.turn_id.clone(), &[])
                            .0,
                        false,
                    ),
                };
                if role == Role::User {
                    out.push(NativeEffect::UserMessage {
                        message_id: row.clone(),
                        client_nonce: client_nonce.clone(),
                        client_seq,
                        text: text.clone(),
                    });
                }
                // The reducer adopts the optimistic message of this client's prompt for a
                // start without a nonce, in its place: only while that message is the last
                // row (messages the server listed since are before the prompt's), and never
                // for a row shown already (by its nonce). Otherwise the store withdraws the
                // optimistic copy when it sees the nonce, and the server's row stands.
                let last = c.history().last().map(|m| m.id.as_str());
                let adopt = !known && c.pending_user().is_some() && c.pending_user() == last;
                let start = EventKind::MessageStart {
                    message_id: row.clone(),
                    role,
                    client_nonce: if adopt { None } else { client_nonce.clone() },
                    client_seq,
                    text,
                    created_at: None,
                };
                self.feed_all(c, start, out);
                self.mark(c, &row, created_at.map(Value::String));
                // A follow-up's message carries its selectors from its start, as upstream's
                // row does. A prompt's gets its `clientNonce` with its final: the store reads
                // the history after a batch of events to tell its prompt's run from an
                // earlier one's end in that batch, which the nonce must not reach back to.
                if let (Some(n), Some(q)) = (client_nonce, client_seq) {
                    c.edit_message(&row, |m| {
                        merge::set_meta(m, "clientNonce", Value::String(n));
                        merge::set_meta(m, "clientSeq", Value::from(q));
                    });
                }
                return;
            }
            EventKind::MessageDelta {
                message_id,
                part_id,
                kind,
                delta,
            } => {
                let row = self.content_row(c, &message_id);
                if covered_by_ended(c, &row, kind, &delta) {
                    return;
                }
                EventKind::MessageDelta {
                    message_id: row,
                    part_id,
                    kind,
                    delta,
                }
            }
            EventKind::PartEnd {
                message_id,
                part_id,
                kind,
                text,
            } => {
                let row = self.content_row(c, &message_id);
                if covered_by_ended(c, &row, kind, &text) {
                    return;
                }
                EventKind::PartEnd {
                    message_id: row,
                    part_id,
                    kind,
                    text,
                }
            }
            EventKind::MessageEnd {
                message_id,
                final_message,
                part_ids,
            } => return self.message_end(c, message_id, final_message, part_ids, out),
            EventKind::ToolCall {
                message_id,
                tool_call_id,
                tool_name,
                input,
                ui,
            } => {
                let row = self.content_row(c, &message_id);
                let call = EventKind::ToolCall {
                    message_id: row.clone(),
                    tool_call_id: tool_call_id.clone(),
                    tool_name,
                    input,
                    ui: None,
                };
                self.feed_all(c, call, out);
                if let Some(ui) = ui {
                    edit_call(c, &row, &tool_call_id, |t| merge::add_ui(t, &ui));
                }
                return;
            }
            EventKind::ToolResult {
                message_id,
                tool_call_id,
                output,
                details,
                is_error,
                error_text,
                ui,
            } => {
                // The call's row, by its id (the result's message is pi's tool-result entry,
                // and a provider's message ids repeat): a result for no call shown is dropped.
                let Some((row, applies)) = row_with_call(c.history(), &tool_call_id)
                    .map(|(m, t)| (m.id.clone(), merge::result_applies(t, is_error, &output)))
                else {
                    let d = format!(
                        "tool result for unknown tool call {tool_call_id} ({message_id}) dropped"
                    );
                    return out.push(NativeEffect::Diagnostic(d));
                };
                if applies {
                    let result = EventKind::ToolResult {
                        message_id: row.clone(),
                        tool_call_id: tool_call_id.clone(),
                        output,
                        details,
                        is_error,
                        error_text,
                        ui: None,
                    };
                    self.feed_all(c, result, out);
                }
                if let Some(ui) = ui {
                    edit_call(c, &row, &tool_call_id, |t| merge::add_ui(t, &ui));
                }
                // A message that ended while its calls ran is done once none runs.
                let done = c.history().get(&row).is_some_and(merge::done_but_calls);
                if done && !c.is_open(&row) {
                    c.edit_message(&row, |m| {
                        merge::set_meta(m, "status", Value::String("done".into()))
                    });
                }
                return;
            }
        };
        self.feed_all(c, kind, out);
    }

    /// The events of a history event, fed to the pi reducer.
    fn feed_all(&mut self, c: &mut Conversation, kind: EventKind, out: &mut Vec<NativeEffect>) {
        for pi in Self::to_pi(kind) {
            self.feed(c, pi, out);
        }
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
