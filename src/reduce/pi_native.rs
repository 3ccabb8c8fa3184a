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

    /// A `/state` document is the truth now, its seq the cursor; one older than the cursor
    /// (a lagging server, read after events were applied) is ignored and `false` returned,
    /// unless `rewind`: the server said the cursor is out of range (`CURSOR_AHEAD`: it
    /// restarted, its numbering went back), and its state replaces what this client holds
    /// (the upstream `allowSeqRewind`).
    ///
    /// An answer's messages are one row (folded as the events fold them), messages sharing
    /// an id across turns are rows apart. A state read again that shows less than the client
    /// (a busy session's lacks the answer being written; its ids are pi's entry ids, not the
    /// streamed ones) is merged into the rows shown rather than taken whole: nothing shown
    /// goes (upstream `piChatReducer.ts` merges by id and nonce; here by position and text
    /// too, as the ids differ).
    pub fn apply_state(
        &mut self,
        conversation: &mut Conversation,
        doc: StateDoc,
        rewind: bool,
    ) -> bool {
        if doc.seq < self.seq && !rewind {
            return false;
        }
        let running = doc.status == "streaming";
        if self.status == RunStatus::Running && !running {
            // The run ended among events this client did not read.
            self.settle(conversation, EndStatus::Ok);
        }
        let active = doc.active_turn_id.clone();
        let rows = state_rows(doc.messages, doc.streaming);
        let local = conversation.history().messages();
        let behind =
            rows.len() < local.len() || local.iter().zip(&rows).any(|(l, r)| l.id != r.msg.id);
        let of_run = |r: &StateRow| {
            r.streaming.is_some() || (active.is_some() && turn_of(&r.msg) == active.as_deref())
        };
        let mut run = Vec::new();
        // What the client shows came from the server (a state, or events): kept.
        let from_server = self.hydrated || self.seq > 0;
        if from_server && !rewind && !local.is_empty() && behind {
            let streaming: Vec<bool> = rows.iter().map(|r| r.streaming.is_some()).collect();
            let mut meta_rows = Vec::with_capacity(rows.len());
            let mut msgs = Vec::with_capacity(rows.len());
            for r in rows {
                let own = r.own();
                msgs.push(r.msg);
                meta_rows.push((r.earlier, own, r.streaming));
            }
            let merged = {
                let c = &*conversation;
                merge::merge_state(local, |id| c.is_open(id), msgs, &streaming)
            };
            let changed = merged.changed;
            conversation.rehydrate(merged.messages, |id| !changed.iter().any(|c| c == id));
            for ((shown, own), (earlier, own_id, parts)) in merged.shown.into_iter().zip(meta_rows)
            {
                if let (true, Some(parts)) = (own, &parts) {
                    conversation.resume_streaming(&shown, parts);
                }
                let in_run = parts.is_some()
                    || (active.is_some()
                        && conversation.history().get(&shown).and_then(turn_of)
                            == active.as_deref());
                if in_run {
                    run.extend(StateRow::run_messages(earlier, own_id, &shown));
                }
            }
            // What this client knew of its run still holds where the state did not say.
            let h = conversation.history();
            for m in std::mem::take(&mut self.run) {
                if h.get(&m.row).is_some() && !run.iter().any(|r: &RunMessage| r.id == m.id) {
                    run.push(m);
                }
            }
        } else {
            for r in rows.iter().filter(|r| of_run(r)) {
                run.extend(StateRow::run_messages(
                    r.earlier.clone(),
                    r.own(),
                    &r.msg.id,
                ));
            }
            let mut streaming = Vec::new();
            let mut msgs = Vec::with_capacity(rows.len());
            for r in rows {
                if let Some(parts) = r.streaming {
                    streaming.push((r.msg.id.clone(), parts));
                }
                msgs.push(r.msg);
            }
            conversation.hydrate(msgs, false);
            for (id, parts) in &streaming {
                conversation.resume_streaming(id, parts);
            }
        }
        self.run = run;
        self.hydrated = true;
        self.seq = doc.seq;
        self.queue = doc.queue;
        self.turn_id = active;
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
                self.queue = rows;
                return out.push(NativeEffect::Queue);
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

    /// The row of a user message that starts, and whether the client showed it already: the
    /// row with its `clientNonce` (a start replayed after a state read; upstream
    /// `piChatCommittedMessages.ts`), which takes the server's id.
    fn user_row(&mut self, c: &mut Conversation, id: &str, nonce: Option<&str>) -> (String, bool) {
        if let Some(m) = self.run.iter().find(|m| m.id == id) {
            return (m.row.clone(), true);
        }
        let h = c.history();
        let shown = nonce.and_then(|n| {
            (h.messages().iter().rev())
                .find(|m| m.role == Role::User && meta(m, "clientNonce") == Some(n))
                .map(|m| m.id.clone())
        });
        let (row, known) = match shown {
            Some(row) => {
                if h.get(id).is_none() {
                    c.rename_message(&row, id);
                    (id.to_string(), true)
                } else {
                    (row, true)
                }
            }
            None => match h.get(id) {
                Some(m)
                    if m.role == Role::User && same_turn(turn_of(m), self.turn_id.as_deref()) =>
                {
                    (id.to_string(), true)
                }
                Some(_) => (self.free_id(h, id), false),
                None => (id.to_string(), false),
            },
        };
        self.run.push(RunMessage {
            id: id.to_string(),
            row: row.clone(),
            step: 0,
        });
        (row, known)
    }

    /// The row an event of assistant message `id` writes: the one this run gave it; else the
    /// row holding its id, when that row is of this turn (or of no known one); else the
    /// message is new to this run ([`new_message`](Self::new_message)).
    fn content_row(&mut self, c: &mut Conversation, id: &str) -> String {
        if let Some(m) = self.run.iter().find(|m| m.id == id) {
            return m.row.clone();
        }
        let h = c.history();
        if let Some(m) = h.get(id) {
            if m.role == Role::Assistant && same_turn(turn_of(m), self.turn_id.as_deref()) {
                let step = merge::steps(&m.parts).len() - 1;
                self.run.push(RunMessage {
                    id: id.to_string(),
                    row: id.to_string(),
                    step,
                });
                return id.to_string();
            }
        }
        let turn = self.turn_id.clone();
        let row = self.new_message(c, id, turn, &[]).0;
        self.mark(c, &row, None);
        row
    }

    /// An assistant message new to this run: the next step of the answer shown last when
    /// that answer is of the same turn (`turn`; without one, when it shows one of `calls`,
    /// upstream's evidence for a final), else a row of its own, under its id unless an older
    /// row holds it. Returns the row and the step.
    fn new_message(
        &mut self,
        c: &mut Conversation,
        id: &str,
        turn: Option<String>,
        calls: &[&str],
    ) -> (String, usize) {
        if let Some(m) = self.run.iter().find(|m| m.id == id) {
            return (m.row.clone(), m.step);
        }
        let h = c.history();
        let answer = h.last().filter(|last| {
            last.role == Role::Assistant
                && last.id != id
                && match turn.as_deref() {
                    Some(t) => turn_of(last) == Some(t),
                    None => merge::shows_call(last, calls),
                }
        });
        let taken = h.get(id).is_some();
        let row = match taken {
            true => self.free_id(h, id),
            false => id.to_string(),
        };
        let step = match answer.map(|a| a.id.clone()) {
            Some(answer) => {
                c.new_step(&answer, &row);
                for m in self.run.iter_mut().filter(|m| m.row == answer) {
                    m.row = row.clone();
                }
                let parts = c.history().get(&row).map_or(&[][..], |m| &m.parts[..]);
                let step = merge::steps(parts).len() - 1;
                c.edit_message(&row, |m| {
                    if !matches!(meta(m, "status"), Some("aborted" | "error")) {
                        merge::set_meta(m, "status", Value::String("streaming".into()));
                    }
                });
                step
            }
            None => 0,
        };
        self.run.push(RunMessage {
            id: id.to_string(),
            row: row.clone(),
            step,
        });
        (row, step)
    }

    /// The id a message gets beside an older turn's row holding its id.
    fn free_id(&self, h: &History, id: &str) -> String {
        merge::distinct_id(id, self.turn_id.as_deref(), &|c| h.get(c).is_some())
    }

    /// A row the run wrote gets what the protocol's messages carry: the turn, a status
    /// (`streaming` while an assistant message is written), the earliest `createdAt`.
    fn mark(&self, c: &mut Conversation, row: &str, created_at: Option<Value>) {
        let Some(m) = c.history().get(row) else {
            return;
        };
        let turn = (turn_of(m).is_none())
            .then(|| self.turn_id.clone())
            .flatten();
        let status = meta(m, "status").is_none();
        let earlier = created_at.filter(|at| {
            let now = m.metadata.as_deref().and_then(|d| d.get("createdAt"));
            now.is_none_or(|now| now != at)
        });
        if turn.is_none() && !status && earlier.is_none() {
            return;
        }
        c.edit_message(row, |m| {
            if let Some(t) = turn {
                merge::set_meta(m, "turnId", Value::String(t));
            }
            if status {
                let s = match m.role {
                    Role::Assistant => "streaming",
                    _ => "done",
                };
                merge::set_meta(m, "status", Value::String(s.into()));
            }
            if let Some(at) = earlier {
                merge::keep_earliest_created_at(m, &at);
            }
        });
    }

    /// A `message-end`: its final merged into the row (and step) that shows the message
    /// (upstream `piChatAssistantCommit.ts`), then handed to the reducer as the message.
    fn message_end(
        &mut self,
        c: &mut Conversation,
        id: String,
        fin: Option<UIMessage>,
        ids: Vec<Option<String>>,
        out: &mut Vec<NativeEffect>,
    ) {
        let Some(fin) = fin else {
            // An unreadable final: what streamed stands, and is over.
            let Some(m) = self.run.iter().find(|m| m.id == id) else {
                let d = format!("message end for unknown message {id}");
                return out.push(NativeEffect::Diagnostic(d));
            };
            let row = m.row.clone();
            let role = c.history().get(&row).map_or(Role::Assistant, |m| m.role);
            let end = PiEvent::MessageEnd {
                seq: None,
                role,
                message_id: row,
                text: None,
                final_message: None,
            };
            return self.feed(c, end, out);
        };
        let role = fin.role;
        let (row, step) = self.final_row(c, &id, &fin);
        if c.history().get(&row).is_none() {
            let start = PiEvent::MessageStart {
                seq: None,
                message_id: row.clone(),
                role,
                client_nonce: None,
                text: None,
            };
            self.feed(c, start, out);
            self.mark(c, &row, None);
        }
        let Some(current) = c.history().get(&row).cloned() else {
            return;
        };
        let last = merge::steps(&current.parts).len() - 1;
        if c.is_open(&row) && step.is_some_and(|s| s < last) {
            // The final of an earlier step while the answer streams on: its calls' outcomes
            // only (the parts being streamed into must keep their places).
            return c.edit_message(&row, |m| merge::merge_tools_in_place(m, &fin));
        }
        // pi numbers a message's parts by content index: its final's `<messageId>:text:<k>`
        // is the part the stream called `k` (reference §8).
        let ids = (fin.parts.iter().zip(ids))
            .map(|(p, pid)| {
                let kind = match p {
                    Part::Text { .. } => "text",
                    Part::Reasoning { .. } => "reasoning",
                    _ => return pid,
                };
                let index = pid.as_deref().and_then(|x| x.strip_prefix(id.as_str()));
                let index =
                    index.and_then(|x| x.strip_prefix(':')?.strip_prefix(kind)?.strip_prefix(':'));
                index.map(str::to_string).or(pid)
            })
            .collect();
        let streamed = c.part_ids(&row);
        let merged = merge::merge_final(&current, &streamed, step, fin, ids);
        let end = PiEvent::MessageEnd {
            seq: None,
            role,
            message_id: row,
            text: None,
            final_message: Some(merged),
        };
        self.feed(c, end, out);
    }

    /// The row and step a final is of. With its turn: this run's message of that id, or the
    /// row holding the id when of that turn, else a message new to the turn. Without one (a
    /// late final of an older run): this run's message, unless it shares nothing with the
    /// final and the row holding the id does (upstream `findNoTurnSameIdCommittedIndex`).
    fn final_row(
        &mut self,
        c: &mut Conversation,
        id: &str,
        fin: &UIMessage,
    ) -> (String, Option<usize>) {
        let h = c.history();
        let run = self.run.iter().find(|m| m.id == id).cloned();
        let plain = h
            .get(id)
            .filter(|m| m.role == fin.role && run.as_ref().is_none_or(|r| r.row != m.id));
        let run_row = |r: &RunMessage| h.get(&r.row);
        let ft = turn_of(fin);
        let found = match ft {
            Some(t) => match (&run, plain) {
                (Some(r), _) if run_row(r).is_none_or(|m| same_turn(turn_of(m), Some(t))) => {
                    Some((r.row.clone(), Some(r.step)))
                }
                (_, Some(p)) if same_turn(turn_of(p), Some(t)) => Some((p.id.clone(), None)),
                _ => None,
            },
            None => match (&run, plain) {
                (Some(r), Some(p)) => {
                    let mine = run_row(r).is_some_and(|m| merge::shares_content(m, fin));
                    match !mine && merge::shares_content(p, fin) {
                        true => Some((p.id.clone(), None)),
                        false => Some((r.row.clone(), Some(r.step))),
                    }
                }
                (Some(r), None) => Some((r.row.clone(), Some(r.step))),
                (None, Some(p)) => Some((p.id.clone(), None)),
                (None, None) => None,
            },
        };
        if let Some(found) = found {
            return found;
        }
        if fin.role == Role::User {
            let nonce = meta(fin, "clientNonce").map(str::to_string);
            let (row, _) = self.user_row(c, id, nonce.as_deref());
            return (row, None);
        }
        let calls: Vec<&str> = (fin.parts.iter())
            .filter_map(|p| p.as_tool().map(|t| t.tool_call_id.as_str()))
            .collect();
        let turn = ft.map(str::to_string);
        let (row, step) = self.new_message(c, id, turn, &calls);
        (row, Some(step))
    }

    /// A run's end (`status`, with the run's error): the rows it wrote are settled
    /// ([`merge::settle_row`]): no call runs, no text streams, a row the end cut off says so.
    fn settle(&mut self, c: &mut Conversation, status: EndStatus) {
        let mut rows: Vec<&str> = self.run.iter().map(|m| m.row.as_str()).collect();
        rows.dedup();
        for row in rows {
            let open = c.is_open(row);
            let Some(mut m) = c.history().get(row).cloned() else {
                continue;
            };
            if merge::settle_row(&mut m, status, self.error.as_deref(), open) {
                c.edit_message(row, |shown| *shown = m);
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
                client_nonce,
                text,
                ..
            } => vec![PiEvent::MessageStart {
                seq,
                message_id,
                role,
                // The store reconciles its own messages by the effect; a nonce here only
                // says the start is not of the prompt whose optimistic message the reducer
                // adopts ([`NativeGate::reduce`] decides).
                client_nonce,
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

/// A `/state` document's messages as rows: an answer's messages one row, a step each
/// ([`merge::fold_step`]; upstream `normalizeSnapshotMessages`), and a message whose id an
/// earlier row of its role holds (an older turn's) under an id of its own.
fn state_rows(
    messages: Vec<UIMessage>,
    streaming: Vec<(String, Vec<StreamedPart>)>,
) -> Vec<StateRow> {
    let mut streaming = streaming.into_iter().peekable();
    let mut out: Vec<StateRow> = Vec::with_capacity(messages.len());
    for m in messages {
        let parts = match streaming.peek() {
            Some((id, _)) if *id == m.id && meta(&m, "status") == Some("streaming") => {
                streaming.next().map(|(_, p)| p)
            }
            _ => None,
        };
        let Some(prev) = out.last_mut().filter(|p| merge::one_answer(&p.msg, &m)) else {
            out.push(StateRow {
                earlier: Vec::new(),
                renamed_from: None,
                streaming: parts,
                msg: m,
            });
            continue;
        };
        if prev.msg.id == m.id {
            // The same message twice: one, its later copy as its final.
            prev.msg = merge::merge_final(&prev.msg, &[], None, m, Vec::new());
            prev.streaming = None;
            continue;
        }
        let before = (prev.msg.id.clone(), merge::steps(&prev.msg.parts).len() - 1);
        prev.earlier.push(before);
        let at = merge::fold_step(&mut prev.msg, m);
        prev.streaming = parts.map(|ps| {
            ps.into_iter()
                .filter_map(|(r, part, k)| Some((r, part, at.get(k).copied().flatten()?)))
                .collect()
        });
    }
    // Ids held twice (a provider's ids repeat across turns): the later row gets its own.
    let twice: Vec<usize> = {
        let mut seen: crate::util::hash::HashMap<&str, usize> =
            crate::util::hash::HashMap::default();
        (0..out.len())
            .filter(|&k| {
                let m = &out[k].msg;
                match seen.get(m.id.as_str()) {
                    Some(&first) => out[first].msg.role == m.role,
                    None => {
                        seen.insert(m.id.as_str(), k);
                        false
                    }
                }
            })
            .collect()
    };
    for k in twice {
        let m = &out[k].msg;
        let id = merge::distinct_id(&m.id, turn_of(m), &|c| out.iter().any(|r| r.msg.id == c));
        out[k].renamed_from = Some(std::mem::replace(&mut out[k].msg.id, id));
    }
    out
}

/// A delta or part end for a message that ended (not streamed into any more) whose text a
/// part of its kind already holds: a replay of what its final said (upstream
/// `terminalMessageAlreadyCoversPartText`).
fn covered_by_ended(c: &Conversation, row: &str, kind: PartKind, text: &str) -> bool {
    let Some(m) = c.history().get(row) else {
        return false;
    };
    let ended = !c.is_open(row) && matches!(meta(m, "status"), Some(s) if s != "streaming");
    ended
        && !text.is_empty()
        && m.parts.iter().any(|p| match (p, kind) {
            (Part::Text { text: t, .. }, PartKind::Text)
            | (Part::Reasoning { text: t, .. }, PartKind::Reasoning) => t.contains(text),
            _ => false,
        })
}

/// The newest row showing the tool call `call`, and its part.
fn row_with_call<'a>(h: &'a History, call: &str) -> Option<(&'a UIMessage, &'a ToolPart)> {
    h.messages().iter().rev().find_map(|m| {
        m.parts
            .iter()
            .find_map(|p| p.as_tool().filter(|t| t.tool_call_id == call))
            .map(|t| (m, t))
    })
}

/// Edits the tool part `call` of row `row`.
fn edit_call(c: &mut Conversation, row: &str, call: &str, edit: impl FnOnce(&mut ToolPart)) {
    c.edit_message(row, |m| {
        let part = m
            .parts
            .iter_mut()
            .find_map(|p| p.as_tool_mut().filter(|t| t.tool_call_id == call));
        if let Some(t) = part {
            edit(t);
        }
    });
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
