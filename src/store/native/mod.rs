//! The pi-native transport (SPEC §14) in the store: the session is followed through
//! [`NativeLink`] (the state, then the events stream; its asks become requests here, their
//! answers go back to it), a new message is a `POST …/prompt`, a stop a `POST …/stop`. The
//! history, the queue's bubbles, the phase and the finish event are the same as over the first
//! transport: the link's notes are turned into the store's own moves.

mod queue;
mod state;

use queue::ServerView;
pub(super) use queue::{ClearAll, SelectiveClear};
pub(super) use state::NativeSession;

use super::*;
use crate::machines::native_link::{commands, Ask, LinkNote, NativeLink, Read};
use crate::protocol::pi_native::EndStatus;
use crate::reduce::pi_native::{NativeEffect, RunStatus};

/// How many sent prompts' optimistic messages are kept for their runs to show up.
const MAX_PROMPTS_KEPT: usize = 32;

/// Busy refusals (409) of a prompt in a row, with no run showing, after which the prompt is
/// given up: the server says busy where its state says idle. The first is followed as another
/// client's run; each further one waits the reconnect backoff (2 s, 4 s, 8 s…, jittered)
/// before the prompt goes again, so at most a few requests a second, then a typed error.
pub const MAX_BUSY_REFUSALS: u32 = 5;

/// How long a prompt (or a session's creation) waits for its receipt: upstream's client's
/// `requestTimeoutMs`. A receipt says only that the command was taken, so it comes at once
/// from a live server.
pub(super) const COMMAND_DEADLINE_MS: u64 = 15_000;

/// Attempts of one prompt before its turn fails: the user is waiting on a `submitted` turn,
/// and upstream's client gives up after one.
pub const MAX_PROMPT_ATTEMPTS: u32 = 3;

/// A prompt on its way (with the session's creation first, if the server does not have it):
/// sent again with the same bytes, so the same `requestId`, after a failure worth a retry.
/// Each attempt is aborted after [`COMMAND_DEADLINE_MS`] (15 s, or `followup_timeout_ms` if
/// shorter) without an answer; after [`MAX_PROMPT_ATTEMPTS`] (or `retry.max_attempts` if fewer)
/// the turn fails and the prompt is kept for `regenerate()`: a prompt the server never answers
/// is a typed error within 50 s.
#[derive(Debug)]
pub(super) struct PromptOut {
    text: String,
    files: Vec<FileAttachment>,
    attempts: u32,
    /// A failed attempt is tried again at this time.
    retry_at: Option<u64>,
    /// The last attempt was refused because a run is on: a run showing by the retry takes
    /// the message as its follow-up.
    met_a_run: bool,
}

impl PromptOut {
    pub(super) fn retry_at(&self) -> Option<u64> {
        self.retry_at
    }
}

/// A prompt sent from here whose user message the events have not shown yet.
#[derive(Debug)]
pub(super) struct SentPrompt {
    /// Its `clientNonce`.
    nonce: String,
    /// Its optimistic user message.
    bubble: UIMessage,
    /// The server's user messages with its text when it was sent: where the server names no
    /// prompt (its `/state` carries no `clientNonce`), one more of them than this (FIFO among
    /// this client's prompts of one text) shows it ran.
    texts_before: usize,
}

impl ChatStore {
    /// `/api/v1/agents/{agentType}/sessions/{sessionId}` of the open session.
    pub(super) fn native_base(&self) -> String {
        let agent = self.native_agent().unwrap_or("pi");
        commands::session_path(agent, &self.session.id)
    }

    /// Opening a session: its state, then its events. One made here by `newSession` is not
    /// on the server yet (the protocol makes sessions by `POST …/sessions`): nothing to read.
    pub(super) fn open_native(&mut self, now_ms: u64) {
        self.session.runtime.loaded = true;
        self.session.native.read = None;
        if std::mem::take(&mut self.session.history.fresh) {
            self.session.native.missing = true;
            self.session.history.hydrated = true;
        }
        if !self.session.native.missing {
            self.follow_again(now_ms);
        }
        // Back to a session whose prompt (or creation) the switch away cut off: sent again,
        // the same bytes, so the server takes it once. Only while its turn waits for it (the
        // switch parked it as resuming): a state read that showed its run ended that turn.
        if self.session.native.prompt.is_some() {
            match self.session.turn.phase {
                Phase::Submitted { .. } | Phase::Resuming { .. } => self.post_prompt(now_ms),
                _ => self.session.native.prompt = None,
            }
        }
        // Parked after its run ended, with a follow-up POST still out (the switch cut it),
        // while taken-back follow-ups wait to go again as new messages: the server may hold
        // that one, so it is taken back like them before the first goes (sent first, it
        // would let the server run the cut one next, ahead of the rest). Nothing is held
        // yet: the resends wait for the POST's answer, which the switch cut.
        let resend_next = matches!(self.session.turn.phase, Phase::Idle { .. })
            && self.session.turn.send_queue_when_idle
            && self.session.queue.next_resend().is_some();
        if resend_next {
            self.take_back_stranded(true, now_ms);
        }
        // A turn held for take-backs the server answered while the session was parked.
        self.start_held_turn(now_ms);
    }

    /// Reads the state again now: the events have not said (yet) what the store must know.
    pub(super) fn reread_state(&mut self, now_ms: u64) {
        self.session.native.link.reread();
        self.pump_native(now_ms);
    }

    /// Makes the read the link asks for, if one is due.
    pub(super) fn pump_native(&mut self, now_ms: u64) {
        if !self.native() || self.outbox.disposed {
            return;
        }
        if self.session.native.link.reading().is_none() {
            // The link gave up the read in flight (a gap, a range error): its answer is moot.
            if let Some(id) = self.session.native.read.take() {
                self.abort(id);
            }
        }
        // Events addressed to another session are not this one's (a session the server named
        // after its creation is followed under that name).
        self.session.native.link.address(&self.session.id);
        while let Some(ask) = self.session.native.link.poll_ask(now_ms) {
            let base = self.native_base();
            let (kind, path) = match ask {
                Ask::State => (RequestKind::NativeState, format!("{base}/state")),
                Ask::Events { cursor } => (
                    RequestKind::NativeEvents,
                    format!("{base}/events?cursor={cursor}"),
                ),
            };
            let id = self.request(kind, Method::Get, path, None, now_ms);
            self.session.native.read = Some(id);
        }
    }

    fn read_of(kind: RequestKind) -> Read {
        match kind {
            RequestKind::NativeState => Read::State,
            _ => Read::Events,
        }
    }

    /// A native request's status line. The events stream's head came: from now on the idle
    /// rule holds, not the connect deadline.
    pub(super) fn on_native_head(
        &mut self,
        id: RequestId,
        kind: RequestKind,
        status: u16,
        now_ms: u64,
    ) {
        if kind != RequestKind::NativeEvents || self.session.native.read != Some(id) {
            return;
        }
        let idle = self.opts.stream_idle_timeout_ms;
        if let Some(p) = self.outbox.pending.get_mut(&id) {
            p.deadline = idle.map(|t| now_ms + t);
        }
        if (200..300).contains(&status) {
            // Connected: an error saying the stream could not be reached no longer holds.
            let said = self.session.native.link.reached();
            if self.unsay(said) {
                self.touch();
            }
        }
    }

    /// Bytes of the events stream.
    pub(super) fn on_native_events(&mut self, id: RequestId, bytes: &[u8], now_ms: u64) {
        if self.session.native.read != Some(id) {
            return;
        }
        let mut notes = Vec::new();
        let s = &mut self.session;
        let seq = s.native.link.gate().seq();
        s.native.link.events_body(
            &mut s.conversation,
            bytes,
            now_ms,
            self.rng.as_mut(),
            &mut notes,
        );
        if notes.is_empty() && self.session.native.link.gate().seq() == seq {
            // Heartbeats, a line's part: nothing changed, nobody is told. A line's part counts
            // towards the answer's bound all the same (a line is read in many chunks).
            return self.native_growth(bytes.len(), now_ms);
        }
        self.on_link_notes(notes, now_ms);
        self.native_growth(bytes.len(), now_ms);
        // The events may have reached a clear's cursor without changing the queue after it.
        self.decide_clear_all(now_ms);
    }

    /// The events of `bytes` were applied: while a run this client follows goes on, its
    /// answer and the history are held to `limits` as over the SSE routes (measured per read,
    /// so a bound is passed by one read's bytes at most): the run is stopped, what it showed
    /// kept, and the turn fails with `LimitExceeded`. A run that goes on regardless (the
    /// events stream is the session's, not the turn's) is followed for one more answer's
    /// worth, then not at all: the events stream is given up until the session is opened
    /// again, so no server can grow the history past what JS can hold.
    fn native_growth(&mut self, bytes: usize, now_ms: u64) {
        let limits = self.opts.limits;
        let s = &mut self.session;
        let history = s.conversation.history().messages();
        if s.turn.phase.running() {
            if let Some(passed) = s.turn.growth.after_event(bytes, history, &limits) {
                s.turn.growth.stopped();
                self.limit_passed(passed, now_ms);
            }
            return;
        }
        let runs_on = s.native.link.gate().status() == RunStatus::Running;
        if !(runs_on && s.turn.growth.ignored_stop(bytes, history, &limits)) {
            return;
        }
        self.session.native.link.close();
        if let Some(id) = self.session.native.read.take() {
            self.abort(id);
        }
        let mut error = growth::Passed::Message(limits.max_message_chars).error();
        error.message = format!(
            "{}; the run went on after its stop, and its events are no longer followed \
             (open the session again to read it)",
            error.message
        );
        self.session.error = Some(error.clone());
        self.outbox.events.push_back(StoreEvent::Error { error });
        self.touch();
    }

    /// The read in flight `id` is over (answered or failed): `tell` gives the link what
    /// happened, and the store acts on what the link makes of it. Another read's end is moot.
    fn read_over(
        &mut self,
        id: RequestId,
        kind: RequestKind,
        now_ms: u64,
        tell: impl FnOnce(
            &mut NativeLink,
            &mut Conversation,
            Read,
            &mut dyn RandomSource,
            &mut Vec<LinkNote>,
        ),
    ) {
        if self.session.native.read != Some(id) {
            return;
        }
        self.session.native.read = None;
        let mut notes = Vec::new();
        let s = &mut self.session;
        tell(
            &mut s.native.link,
            &mut s.conversation,
            Self::read_of(kind),
            self.rng.as_mut(),
            &mut notes,
        );
        self.on_link_notes(notes, now_ms);
    }

    /// A native request's answer ended.
    pub(super) fn on_native_end(
        &mut self,
        id: RequestId,
        kind: RequestKind,
        status: u16,
        body: &[u8],
        now_ms: u64,
    ) {
        match kind {
            RequestKind::NativeState | RequestKind::NativeEvents => {
                self.read_over(id, kind, now_ms, |link, conversation, read, rng, notes| {
                    link.answer_end(conversation, read, (status, body), now_ms, rng, notes)
                })
            }
            RequestKind::NativePrompt => self.on_prompt_answer(id, status, body, now_ms),
            RequestKind::NativeCreate => self.on_create_answer(id, status, body, now_ms),
            RequestKind::NativeClear => self.on_clear_all_answer(id, Some((status, body)), now_ms),
            _ => {
                // The stop's answer: the events say how the run ended.
                if !(200..300).contains(&status) {
                    let error = refusal(status, body, "stop answer");
                    self.outbox.events.push_back(StoreEvent::Error { error });
                }
            }
        }
    }

    /// A native request failed without an answer.
    pub(super) fn on_native_failed(
        &mut self,
        id: RequestId,
        kind: RequestKind,
        message: &str,
        now_ms: u64,
    ) {
        match kind {
            RequestKind::NativeState | RequestKind::NativeEvents => {
                self.read_over(id, kind, now_ms, |link, _, read, rng, notes| {
                    link.failed(read, message, now_ms, rng, notes)
                })
            }
            RequestKind::NativePrompt | RequestKind::NativeCreate => {
                if self.session.turn.phase.stream() == Some(id) {
                    self.prompt_failed(ChatError::network(message), now_ms);
                }
            }
            RequestKind::NativeClear => self.on_clear_all_answer(id, None, now_ms),
            _ => self.outbox.events.push_back(StoreEvent::Error {
                error: ChatError::network(message),
            }),
        }
    }

    /// What the link saw, as the store's moves.
    fn on_link_notes(&mut self, notes: Vec<LinkNote>, now_ms: u64) {
        for note in notes {
            match note {
                LinkNote::Hydrated => {
                    self.session.history.hydrated = true;
                    let said = self.session.native.link.reached();
                    self.unsay(said);
                    self.keep_unshown_prompts();
                    // What the state shows ran is consumed before a run it says is over ends
                    // here (whose end takes back what the server still holds).
                    self.follow_server_queue(ServerView::State, now_ms);
                    self.on_native_state(now_ms);
                    self.settle_unsure_take_backs(now_ms);
                    // Back at a session whose run ended on its own while it was parked (or
                    // whose end was in the gap): what waits goes out as the next messages.
                    self.send_next_queued(now_ms);
                }
                LinkNote::Retrying(why) => self.diagnostic(&why),
                LinkNote::Refused(why) => {
                    let error = ChatError::protocol(why);
                    self.session.error = Some(error.clone());
                    self.outbox.events.push_back(StoreEvent::Error { error });
                }
                LinkNote::Effect(e) => self.on_native_effect(e, now_ms),
                LinkNote::Lost(loss) => self.on_line_lost(loss, now_ms),
                LinkNote::GaveUp(error) => {
                    // Nothing more comes: what waits on the events ends with the error.
                    self.session.history.hydrated = true;
                    if self.session.turn.phase.running() {
                        self.end_turn(Ending::Failed(error.clone()), now_ms);
                    }
                    self.session.error = Some(error.clone());
                    self.outbox.events.push_back(StoreEvent::Error { error });
                }
                LinkNote::Unreachable(error) => {
                    // Said beside an error already shown (a turn's), never over it: the
                    // connect that takes this one back must not take that one with it.
                    if self.session.error.is_none() {
                        self.session.error = Some(error.clone());
                    }
                    self.outbox.events.push_back(StoreEvent::Error { error });
                }
                LinkNote::Missing => {
                    // Nothing to show and nothing to follow: a send creates it.
                    self.session.native.missing = true;
                    self.session.history.hydrated = true;
                    self.on_native_state(now_ms);
                }
            }
        }
        // The gate's queue, status or cursor moved even where the history did not.
        self.touch();
        self.pump_native(now_ms);
        // A run that started lets the follow-ups typed while its prompt was on its way go.
        self.pump(now_ms);
    }

    /// A state was read: a run it says is on is followed (as an attach), one this client
    /// thought was on and is not any more has ended.
    fn on_native_state(&mut self, now_ms: u64) {
        let running = self.session.native.link.gate().status() == RunStatus::Running;
        if running {
            // A busy refusal met a real run.
            self.session.native.busy_refusals = 0;
        }
        match (&self.session.turn.phase, running) {
            // Its start was among the events the gap lost, or another client's run.
            (Phase::Submitted { .. }, true) if !self.prompt_ran() => {}
            (Phase::Idle { .. } | Phase::Resuming { .. } | Phase::Submitted { .. }, true) => {
                let turn = self
                    .session
                    .native
                    .link
                    .gate()
                    .turn_id()
                    .map(str::to_string);
                self.prompt_runs(turn);
            }
            // Ended while this client did not read its events (a gap, a switch away).
            (Phase::Streaming { .. } | Phase::Resuming { .. }, false) => {
                self.end_turn(Ending::Finished, now_ms)
            }
            // This client's prompt ran and ended meanwhile: its user message is in the state.
            (Phase::Submitted { .. }, false) if self.prompt_ran() => {
                self.end_turn(Ending::Finished, now_ms)
            }
            _ => {}
        }
    }

    /// The run `turn_id` is on: this client's prompt's, or one it follows.
    fn prompt_runs(&mut self, turn_id: Option<String>) {
        // The server has the prompt: an attempt still due (its answer was lost) is moot.
        self.session.native.prompt = None;
        self.session.native.busy_refusals = 0;
        self.session.turn.growth.run_started();
        self.session.turn.turn_id = turn_id;
        if !matches!(self.session.turn.phase, Phase::Streaming { .. }) {
            let stream = self.session.native.read.unwrap_or(0);
            self.session.turn.phase = Phase::Streaming { stream };
            self.session.error = None;
        }
    }

    /// The optimistic message of the prompt on its way goes (refused, or a follow-up now).
    fn withdraw_current_prompt(&mut self) {
        let s = &mut self.session;
        let nonce = s.turn.client_turn_id.as_deref();
        if let Some(i) = s
            .native
            .prompts
            .iter()
            .position(|p| Some(p.nonce.as_str()) == nonce)
        {
            let bubble = s.native.prompts.remove(i).bubble;
            s.conversation.withdraw(&bubble.id);
        }
    }

    /// The server's user message `message_id` with `nonce` is in the history: the optimistic
    /// copy of that prompt goes, unless it became that message (the reducer adopts the last
    /// one shown; a stopped or failed prompt's run can come after another was sent).
    fn server_shows_prompt(&mut self, message_id: &str, nonce: Option<&str>) {
        let s = &mut self.session;
        let Some(i) = nonce.and_then(|n| s.native.prompts.iter().position(|p| p.nonce == n)) else {
            return;
        };
        let bubble = s.native.prompts.remove(i).bubble;
        if bubble.id != message_id && s.conversation.history().get(&bubble.id).is_some() {
            s.conversation.withdraw(&bubble.id);
        }
    }

    /// After a state read: a prompt the state shows ran leaves the list; the optimistic
    /// message of one it does not show is shown again, after the server's messages, and so
    /// is the message of a turn held for a take-back (not sent yet).
    fn keep_unshown_prompts(&mut self) {
        if let Phase::Held(h) = &self.session.turn.phase {
            let shown = |m: &UIMessage| self.session.conversation.history().get(&m.id).is_some();
            if let Some(bubble) = h.bubble.as_ref().filter(|m| !shown(m)) {
                self.session.conversation.keep_local(bubble.clone());
            }
        }
        let shown: Vec<Option<String>> = (0..self.session.native.prompts.len())
            .map(|i| self.prompt_message(i))
            .collect();
        let prompts = std::mem::take(&mut self.session.native.prompts);
        for (prompt, shown) in prompts.into_iter().zip(shown) {
            if let Some(id) = shown {
                // The server's message is this prompt's from now on, whatever it names.
                let nonce = Value::String(prompt.nonce);
                self.session.conversation.edit_message(&id, |m| {
                    let meta = m.metadata.get_or_insert_with(|| Box::new(json!({})));
                    if let Some(o) = meta.as_object_mut() {
                        o.entry("clientNonce").or_insert(nonce);
                    }
                });
                continue;
            }
            let history = self.session.conversation.history();
            if history.get(&prompt.bubble.id).is_none() {
                self.session.conversation.keep_local(prompt.bubble.clone());
            }
            self.session.native.prompts.push(prompt);
        }
    }

    /// The history holds the user message of this client's last prompt.
    fn prompt_ran(&self) -> bool {
        let Some(nonce) = self.session.turn.client_turn_id.as_deref() else {
            return false;
        };
        let sent = self
            .session
            .native
            .prompts
            .iter()
            .position(|p| p.nonce == nonce);
        self.committed(nonce) || sent.is_some_and(|i| self.prompt_message(i).is_some())
    }

    /// The history holds the user message of this client's last prompt with its nonce. An
    /// event asks this, not [`prompt_ran`](Self::prompt_ran): the store reads the history
    /// after a whole batch of events, so a message of the prompt's text later in the batch
    /// (its run, after the one whose end this is) would count already.
    fn prompt_ran_by_nonce(&self) -> bool {
        let nonce = self.session.turn.client_turn_id.as_deref();
        nonce.is_some_and(|n| self.committed(n))
    }

    /// The server's user message of the prompt `prompts[i]` in the history: the one with its
    /// nonce, or, where the server named none, the one more of its text than there were when
    /// it was sent (after this client's earlier prompts of that text).
    fn prompt_message(&self, i: usize) -> Option<String> {
        let prompts = &self.session.native.prompts;
        let p = &prompts[i];
        let users = self.session.conversation.history().messages().iter();
        let users = users.filter(|m| m.role == Role::User);
        let by_nonce = users.clone().find(|m| {
            let meta = m.metadata.as_deref();
            meta.and_then(|v| v.get("clientNonce")?.as_str()) == Some(p.nonce.as_str())
        });
        if let Some(m) = by_nonce {
            return Some(m.id.clone());
        }
        let text = p.bubble.text();
        let ahead = prompts[..i]
            .iter()
            .filter(|e| e.bubble.text() == text)
            .count();
        users
            .filter(|m| !self.is_local(&m.id) && m.text() == text)
            .nth(p.texts_before + ahead)
            .map(|m| m.id.clone())
    }

    /// An optimistic message of this client's (a prompt's, a held turn's), not the server's.
    pub(super) fn is_local(&self, id: &str) -> bool {
        let s = &self.session;
        let held = matches!(&s.turn.phase, Phase::Held(h) if h.bubble.as_ref().is_some_and(|b| b.id == id));
        held || s.native.prompts.iter().any(|p| p.bubble.id == id)
    }

    /// The server's user messages with `text` in the history: this client's optimistic ones
    /// (its prompts', a held turn's) left out.
    pub(super) fn server_texts(&self, text: &str) -> usize {
        (self.session.conversation.history().messages().iter())
            .filter(|m| m.role == Role::User && !self.is_local(&m.id) && m.text() == text)
            .count()
    }

    /// The history holds a user message sent with this nonce.
    pub(super) fn committed(&self, nonce: &str) -> bool {
        !self.committed_of(&[nonce]).is_empty()
    }

    /// Of `nonces`, those the history holds a user message sent with: one pass over it.
    pub(super) fn committed_of(&self, nonces: &[&str]) -> Vec<String> {
        let history = self.session.conversation.history().messages();
        let sent = history
            .iter()
            .filter(|m| m.role == Role::User)
            .filter_map(|m| {
                let v = m.metadata.as_deref()?.get("clientNonce")?.as_str()?;
                nonces.contains(&v).then(|| v.to_string())
            });
        sent.collect()
    }

    fn on_native_effect(&mut self, e: NativeEffect, now_ms: u64) {
        if matches!(e, NativeEffect::RunStarted(..)) {
            self.session.native.busy_refusals = 0;
        }
        match e {
            NativeEffect::RunStarted(turn_id, seq) => match self.session.turn.phase {
                // A run that starts while this client's prompt is on its way is that prompt's
                // only at or after its receipt's cursor, else when its user message carries
                // the prompt's nonce: before, it is an earlier run (another tab's), whose end
                // must not end this turn nor take its follow-ups back.
                Phase::Submitted { .. } => {
                    if self.session.native.prompt_cursor.is_some_and(|c| seq >= c) {
                        self.prompt_runs(Some(turn_id));
                    }
                }
                Phase::Streaming { .. } => self.session.turn.turn_id = Some(turn_id),
                // This client's next message waits for a take-back: another run (another
                // client's, a prompt stopped on its way) does not replace it. Its prompt
                // meets that run and goes as a follow-up, or goes once the run is over.
                Phase::Held(_) => {}
                // A run another client or a follow-up started.
                _ => self.prompt_runs(Some(turn_id)),
            },
            NativeEffect::RunEnded(status) => {
                let ours = match self.session.turn.phase {
                    Phase::Streaming { .. } => true,
                    // The run's start was lost in a gap the state did not cover; another
                    // run's end is not this prompt's.
                    Phase::Submitted { .. } => self.prompt_ran_by_nonce(),
                    _ => false, // stopped here already
                };
                if !ours {
                    return;
                }
                let ending = match (status, self.session.native.link.gate().error()) {
                    (EndStatus::Error, m) | (_, m @ Some(_)) => Ending::Failed(ChatError::new(
                        ErrorKind::Server,
                        m.unwrap_or("the run failed"),
                    )),
                    _ => Ending::Finished,
                };
                self.end_turn(ending, now_ms);
            }
            // Shown at once, as the run's end (upstream's client settles the turn on it): a
            // later `agent-end` of that run ends nothing more here. A run whose prompt failed
            // before it started (a user message, then this) ends here too.
            NativeEffect::Error(code, message) => {
                self.diagnostic(&format!("the run failed: {code}: {message}"));
                let ours = match self.session.turn.phase {
                    Phase::Streaming { .. } | Phase::Resuming { .. } => true,
                    Phase::Submitted { .. } => self.prompt_ran_by_nonce(),
                    _ => false,
                };
                if ours {
                    let mut error = ChatError::new(ErrorKind::Server, message);
                    error.server_code = Some(code);
                    self.end_turn(Ending::Failed(error), now_ms);
                }
            }
            NativeEffect::UserMessage {
                message_id,
                client_nonce,
                client_seq,
                text,
            } => {
                self.server_shows_prompt(&message_id, client_nonce.as_deref());
                let unsent = self
                    .session
                    .native
                    .unsent_prompt
                    .as_ref()
                    .map(|(n, _)| n.as_str());
                if unsent.is_some() && unsent == client_nonce.as_deref() {
                    // A prompt given up did land: nothing to send again.
                    self.session.native.unsent_prompt = None;
                }
                let turn = self.session.turn.client_turn_id.as_deref();
                let submitted = matches!(self.session.turn.phase, Phase::Submitted { .. });
                if submitted && client_nonce.is_some() && client_nonce.as_deref() == turn {
                    let turn_id = self
                        .session
                        .native
                        .link
                        .gate()
                        .turn_id()
                        .map(str::to_string);
                    self.prompt_runs(turn_id);
                }
                let stopped = self.session.native.stopped_prompt.as_deref();
                if stopped.is_some() && client_nonce.as_deref() == stopped {
                    // The prompt the user stopped on its way ran after all: stopped again.
                    self.session.native.stopped_prompt = None;
                    self.post_stop(now_ms);
                    if matches!(self.session.turn.phase, Phase::Streaming { .. }) {
                        self.end_turn(Ending::Stopped, now_ms);
                    }
                }
                let (nonce, text) = (client_nonce.as_deref(), text.as_deref());
                self.on_native_user_message(nonce, client_seq, text, now_ms)
            }
            NativeEffect::Queue(seq, rows) => {
                self.follow_server_queue(ServerView::Event(seq, rows), now_ms)
            }
            NativeEffect::Data(name, data) => self.outbox.events.push_back(StoreEvent::Data {
                name,
                id: None,
                data,
                transient: true,
            }),
            NativeEffect::Diagnostic(d) => self.diagnostic(&d),
        }
    }

    /// The chat POST of a turn, over this protocol: `POST …/prompt`. Its receipt says the
    /// server took it; the run's events say the rest.
    /// (Re)opens the link: the state, then the events. The error a link that gave up said no
    /// longer holds; it reads again.
    fn follow_again(&mut self, now_ms: u64) {
        let said = self.session.native.link.open();
        self.unsay(said);
        self.pump_native(now_ms);
    }

    /// An error the link said no longer holds: gone from the snapshot if it is the one shown
    /// (never another, such as a turn's). Whether it went.
    fn unsay(&mut self, said: Option<ChatError>) -> bool {
        let shown = said.is_some() && self.session.error == said;
        if shown {
            self.session.error = None;
        }
        shown
    }

    pub(super) fn start_native_prompt(
        &mut self,
        text: String,
        files: Vec<FileAttachment>,
        bubble: Option<String>,
        now_ms: u64,
    ) {
        // A link that gave up follows again with the user's send: its run must be seen.
        if self.session.native.link.gave_up() && !self.session.native.missing {
            self.follow_again(now_ms);
        }
        let nonce = uuid_v4(self.rng.as_mut());
        let shown = bubble.and_then(|id| self.session.conversation.history().get(&id).cloned());
        if let Some(msg) = shown {
            let s = &mut self.session;
            if s.native.prompts.len() >= MAX_PROMPTS_KEPT {
                s.native.prompts.remove(0);
            }
            s.native.prompts.push(SentPrompt {
                nonce: nonce.clone(),
                bubble: msg,
                texts_before: 0,
            });
            let texts_before = self.server_texts(&text);
            if let Some(p) = self.session.native.prompts.last_mut() {
                p.texts_before = texts_before;
            }
        }
        let s = &mut self.session;
        s.native.prompt_cursor = None;
        s.turn
            .restart(Some(nonce.clone()), self.opts.limits.max_event_bytes);
        s.error = None;
        s.turn.send_queue_when_idle = false;
        s.native.stopped_prompt = None;
        // A new message instead of the given-up one: that one stays as it is, failed.
        s.native.unsent_prompt = None;
        s.native.prompt = Some(PromptOut {
            text,
            files,
            attempts: 0,
            retry_at: None,
            met_a_run: false,
        });
        self.post_prompt(now_ms);
    }

    /// The next attempt of the prompt on its way: `POST …/sessions` while the server does not
    /// have the session, else `POST …/prompt` ([`Turn::client_turn_id`] is its nonce).
    fn post_prompt(&mut self, now_ms: u64) {
        let Some(out) = self.session.native.prompt.as_mut() else {
            return;
        };
        out.attempts += 1;
        out.retry_at = None;
        out.met_a_run = false;
        if self.session.native.missing {
            return self.create_native_session(now_ms);
        }
        let nonce = self.session.turn.client_turn_id.clone().unwrap_or_default();
        let body = commands::prompt(&nonce, &out.text, &out.files);
        let path = format!("{}/prompt", self.native_base());
        let id = self.request(
            RequestKind::NativePrompt,
            Method::Post,
            path,
            Some(to_string(&body)),
            now_ms,
        );
        self.session.turn.phase = Phase::Submitted { stream: id };
        self.touch();
    }

    /// The first send of a session the server does not have: `POST …/sessions` (its
    /// `requestId` the prompt's nonce), then the prompt once the server named the session.
    fn create_native_session(&mut self, now_ms: u64) {
        let agent = self.opts.pi_native.clone().unwrap_or_default();
        let nonce = self.session.turn.client_turn_id.clone().unwrap_or_default();
        // Peeked, not taken: a failed create keeps it for the next send.
        let title = self.sessions.title_later_of(&self.session.id);
        let body = commands::create(&format!("create:{nonce}"), title);
        let id = self.request(
            RequestKind::NativeCreate,
            Method::Post,
            commands::sessions_path(&agent),
            Some(to_string(&body)),
            now_ms,
        );
        self.session.turn.phase = Phase::Submitted { stream: id };
        self.touch();
    }

    /// A prompt attempt (or the session's creation) failed: tried again after a backoff with
    /// the same `requestId` while the error is worth it and attempts are left, else the turn
    /// fails. Given up after its attempts, a prompt whose fate is unknown (no answer, a 5xx)
    /// is kept for `regenerate()` ([`resend_unsent_prompt`](Self::resend_unsent_prompt)).
    fn prompt_failed(&mut self, mut error: ChatError, now_ms: u64) {
        let policy = self.opts.retry;
        let jitter = self.rng.unit();
        if let Some(out) = self.session.native.prompt.as_mut() {
            if error.is_retryable()
                && out.attempts < policy.max_attempts.clamp(1, MAX_PROMPT_ATTEMPTS)
            {
                out.retry_at = Some(now_ms + policy.backoff_ms(out.attempts, jitter));
                self.diagnostic(&format!("the prompt is sent again: {}", error.message));
                return;
            }
        }
        let out = self.session.native.prompt.take();
        if error.is_retryable() {
            let attempts = out.as_ref().map_or(0, |o| o.attempts);
            error.message = format!(
                "{} (the message was sent {attempts} times without an answer; retrying sends \
                 it again, and it runs once)",
                error.message
            );
            return self.give_up_prompt(out, error, now_ms);
        }
        // The server answered no (a 4xx it would answer again): nothing of the message is
        // there, so nothing of it stays here, and the composer gets it back (SPEC §5, §14.1).
        // Without an answer it may have landed: its message stays, with the error.
        // Where the composer holds something else, the message stays, with the error: nothing
        // typed is lost.
        let refused =
            !error.is_retryable() && error.status.is_some_and(|s| (400..500).contains(&s));
        let composer_free = self.draft.text.is_empty() && self.draft.files.is_empty();
        if let (true, true, Some(out)) = (refused, composer_free, out) {
            self.withdraw_current_prompt();
            (self.draft.text, self.draft.files) = (out.text, out.files);
        }
        self.end_turn(Ending::Failed(error), now_ms);
    }

    /// The turn fails with `error`, its prompt kept (with its nonce) for `regenerate()`: the
    /// server may have it, and only the same `requestId` cannot run it twice.
    fn give_up_prompt(&mut self, out: Option<PromptOut>, error: ChatError, now_ms: u64) {
        let nonce = self.session.turn.client_turn_id.clone();
        if let (Some(nonce), Some(out)) = (nonce, out) {
            self.session.native.unsent_prompt = Some((nonce, out));
        }
        self.end_turn(Ending::Failed(error), now_ms);
    }

    /// A given-up prompt can be sent again now (`regenerate()` over this transport): no turn
    /// is on, and its message has not shown up on the server.
    pub(super) fn can_resend_prompt(&self) -> bool {
        let unsent = self.session.native.unsent_prompt.as_ref();
        !self.status().is_busy() && unsent.is_some_and(|(nonce, _)| !self.committed(nonce))
    }

    /// Sends the given-up prompt again, as the same turn: its nonce, its `requestId`, its
    /// optimistic message (still shown, with the error until now).
    pub(super) fn resend_unsent_prompt(&mut self, now_ms: u64) -> bool {
        if !self.can_resend_prompt() {
            return false;
        }
        let Some((nonce, mut out)) = self.session.native.unsent_prompt.take() else {
            return false;
        };
        (out.attempts, out.retry_at) = (0, None);
        let s = &mut self.session;
        s.native.prompt_cursor = None;
        s.turn
            .restart(Some(nonce), self.opts.limits.max_event_bytes);
        s.error = None;
        s.turn.send_queue_when_idle = false;
        s.native.stopped_prompt = None;
        s.native.prompt = Some(out);
        self.post_prompt(now_ms);
        true
    }

    /// A prompt attempt is due again.
    pub(super) fn retry_prompt(&mut self, now_ms: u64) {
        let out = self.session.native.prompt.as_ref();
        let due = out.and_then(PromptOut::retry_at);
        let met_a_run = out.is_some_and(|o| o.met_a_run);
        // Only while its turn waits for it: a stop, or its run showing (a state read can say
        // so too), ended that, and the attempt is dropped with its timer.
        if !matches!(self.session.turn.phase, Phase::Submitted { .. }) {
            self.session.native.prompt = None;
        } else if due.is_some_and(|t| t <= now_ms) {
            if met_a_run && self.session.native.link.gate().status() == RunStatus::Running {
                // Refused as busy, and the state read since shows the run that refused it.
                let error = ChatError::new(ErrorKind::TurnAlreadyActive, "a run is on");
                return self.prompt_as_follow_up(error, now_ms);
            }
            self.post_prompt(now_ms);
        }
    }

    fn on_create_answer(&mut self, id: RequestId, status: u16, body: &[u8], now_ms: u64) {
        if self.session.turn.phase.stream() != Some(id) {
            return; // stopped meanwhile: the session stays as it was, missing
        }
        let named = (200..300)
            .contains(&status)
            .then(|| crate::protocol::json::from_slice(body).ok())
            .flatten()
            .and_then(|v| Some(v.get("sessionId")?.as_str()?.to_string()))
            .filter(|s| !s.is_empty());
        let Some(session_id) = named else {
            let error = match (200..300).contains(&status) {
                true => ChatError::protocol("the session create answer names no sessionId"),
                false => refusal(status, body, "session create answer"),
            };
            return self.prompt_failed(error, now_ms);
        };
        self.sessions.take_title(&self.session.id);
        self.rekey(session_id);
        self.session.native.missing = false;
        self.session.native.link.open();
        self.pump_native(now_ms);
        if let Some(out) = self.session.native.prompt.as_mut() {
            out.attempts = 0;
        }
        self.post_prompt(now_ms);
    }

    /// The open session is `id` on the server from now on (it named the session this store
    /// made): the list, the requests on their way and the host (`onSessionChange`) follow.
    fn rekey(&mut self, id: String) {
        let old = std::mem::replace(&mut self.session.id, id.clone());
        if old == id {
            return;
        }
        for p in self
            .outbox
            .pending
            .values_mut()
            .filter(|p| p.session == old)
        {
            p.session = id.clone();
        }
        self.sessions.rekey(&old, &id);
        self.outbox.events.push_back(StoreEvent::SessionChange {
            session_id: id,
            renamed_from: Some(old),
        });
    }

    fn on_prompt_answer(&mut self, id: RequestId, status: u16, body: &[u8], now_ms: u64) {
        if self.session.turn.phase.stream() != Some(id) {
            return;
        }
        if (200..300).contains(&status) {
            // Taken: `submitted` until its run starts on the events stream.
            self.session.native.prompt = None;
            self.session.native.busy_refusals = 0;
            // Without a cursor, any run that starts from now on is taken for this prompt's.
            let cursor = crate::protocol::json::from_slice(body)
                .ok()
                .and_then(|v| v.get("cursor")?.as_u64());
            self.session.native.prompt_cursor = Some(cursor.unwrap_or(0));
            return;
        }
        let error = refusal(status, body, "prompt answer");
        if error.kind == ErrorKind::TurnAlreadyActive {
            return self.prompt_met_a_run(error, now_ms);
        }
        if error.says("AGENT_REQUEST_OUTCOME_UNKNOWN") {
            // Whether it landed, only the state can say (reference §4); it shows there if so.
            self.reread_state(now_ms);
        }
        self.prompt_failed(error, now_ms);
    }

    /// The prompt met a run this client did not know of (another tab's, or one whose start
    /// the events have not brought yet): as over the first transport (SPEC §6), not a failure
    /// of the message. The store follows that run and sends the text as a follow-up to it;
    /// the state is read again at once, so a run that ended meanwhile ends here too (and the
    /// follow-up, accepted while idle, is taken back and sent as the next message).
    ///
    /// Refused again with no run shown since (a server whose `/state` says idle while its
    /// prompt route says busy), the prompt itself waits a backoff and goes again, the same
    /// bytes; after [`MAX_BUSY_REFUSALS`] the turn fails, the prompt kept for `regenerate()`.
    fn prompt_met_a_run(&mut self, mut error: ChatError, now_ms: u64) {
        if self.session.native.prompt.is_none() {
            return;
        }
        self.session.native.busy_refusals += 1;
        let refusals = self.session.native.busy_refusals;
        if refusals >= MAX_BUSY_REFUSALS {
            self.session.native.busy_refusals = 0;
            error.message = format!(
                "{} (refused as busy {refusals} times while nothing ran; retrying sends it \
                 again, and it runs once)",
                error.message
            );
            let out = self.session.native.prompt.take();
            return self.give_up_prompt(out, error, now_ms);
        }
        // Another client's run the events already showed: the message waits behind it.
        if refusals == 1 && self.session.native.link.gate().status() == RunStatus::Running {
            return self.prompt_as_follow_up(error, now_ms);
        }
        // Else the state is read now and the prompt waits the backoff (from ~2 s): a run the
        // state then shows takes it as a follow-up (`retry_prompt`), one it does not show is
        // refused again at most a few times a minute.
        let wait = crate::machines::native_link::backoff_ms(refusals, self.rng.unit());
        if let Some(out) = self.session.native.prompt.as_mut() {
            out.retry_at = Some(now_ms + wait);
            out.met_a_run = true;
        }
        self.diagnostic(&format!(
            "the prompt was refused as busy again; sent again in {wait} ms"
        ));
        // A run the events did not show (started before this client read on) shows here.
        self.reread_state(now_ms);
    }

    /// A prompt refused because a run is on: sent as a follow-up of that run instead.
    fn prompt_as_follow_up(&mut self, error: ChatError, now_ms: u64) {
        let Some(out) = self.session.native.prompt.take() else {
            return;
        };
        // Its bubble goes: the follow-up shows as a waiting bubble, then as the server's.
        self.withdraw_current_prompt();
        let stream = self.session.native.read.unwrap_or(0);
        self.session.turn.phase = Phase::Streaming { stream };
        self.reread_state(now_ms);
        match self.send(&out.text, Vec::new(), now_ms).reason {
            None | Some(Refusal::Empty) => {}
            Some(_) if self.draft.text.is_empty() && self.draft.files.is_empty() => {
                self.draft.text = out.text;
            }
            Some(_) => self.outbox.events.push_back(StoreEvent::Error { error }),
        }
        self.touch();
    }

    /// `stop()` over this protocol: `POST …/stop`, which also drops the server's queue; the
    /// turn ends as `ending` (a user's stop, or a bound passed).
    pub(super) fn stop_native(&mut self, ending: Ending, now_ms: u64) {
        if let Phase::Submitted { stream } = self.session.turn.phase {
            self.abort(stream);
            // The prompt may have reached the server all the same, and its run start after
            // this stop: its user message (by nonce) is then stopped too.
            self.session.native.stopped_prompt = self.session.turn.client_turn_id.clone();
        }
        self.session.native.prompt = None;
        // The user decided: a next prompt's busy refusal is followed as a first one.
        self.session.native.busy_refusals = 0;
        if self.session.native.missing {
            // Stopped before the server made the session: nothing runs there.
            return self.end_turn(ending, now_ms);
        }
        self.post_stop(now_ms);
        self.end_turn(ending, now_ms);
    }

    /// `POST …/stop`; the run's `ABORTED` that follows is a plain stop, not an error.
    fn post_stop(&mut self, now_ms: u64) {
        self.session.native.link.gate_mut().stopping();
        // The server drops its whole queue with the stop: what it had accepted will not run
        // and is not there to take back; it waits for the user (`stalled`).
        for (_, nonce) in self.session.queue.strand(false) {
            self.session.take_backs.taken_already(&nonce);
            // A removal on its way, or one the server kept, is done: the server drops it.
            if (self.session.queue.items().iter())
                .any(|i| i.client_nonce == nonce && (i.removing || queue::removal_refused(i)))
            {
                self.session.queue.take_by_nonce(&nonce);
            }
        }
        let path = format!("{}/stop", self.native_base());
        self.request(
            RequestKind::NativeStop,
            Method::Post,
            path,
            Some("{}".into()),
            now_ms,
        );
    }
}
