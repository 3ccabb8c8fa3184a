//! The pi-native transport (SPEC §14) in the store: the session is followed through
//! [`NativeLink`] (the state, then the events stream; its asks become requests here, their
//! answers go back to it), a new message is a `POST …/prompt`, a stop a `POST …/stop`. The
//! history, the queue's bubbles, the phase and the finish event are the same as over the first
//! transport: the link's notes are turned into the store's own moves.
//!
//! The session decides (`impl Session` / `impl NativeSession` in `history.rs`, `runs.rs`,
//! `reads.rs`, `prompt.rs`, `prompt/answer.rs`, `queue.rs`, `queue/clear_all.rs`) and hands
//! back a verdict; the `ChatStore` methods here are the router's entries that apply it: the
//! inputs (`on_native_events`, `on_native_answer`, the prompt machine's `on_prompt`,
//! `after_native_post`) and what applies the link's and the server queue's news
//! (`on_link_notes`, `follow_server_queue`, `decide_clear_all`); the requests out
//! (`pump_native`, `post_prompt`, `take_back_native`); the public actions' bodies
//! (`open_native`, `stop_native`, `resend_unsent_prompt`, `remove_native`).

mod history;
mod interrupt;
mod queue;
mod reads;
mod runs;
mod state;

use queue::ServerView;
pub(super) use queue::{ClearAll, SelectiveClear};
pub(super) use state::NativeSession;

/// What the events stream brings: its status line, then its body's bytes.
pub(super) enum EventsPart<'a> {
    Head(u16),
    Bytes(&'a [u8]),
}

/// How a native request ended: its answer (`status`, `body`), or the transport's failure
/// without one (its message).
pub(super) type NativeAnswer<'a> = Result<(u16, &'a [u8]), &'a str>;

use super::*;
use crate::machines::native_link::{commands, Ask, LinkNote};
use crate::reduce::pi_native::{NativeEffect, RunStatus};
use reads::Growth;

mod prompt;
pub use prompt::MAX_PROMPT_ATTEMPTS;
pub(super) use prompt::{PromptInput, PromptOut, SentPrompt, COMMAND_DEADLINE_MS};

impl ChatStore {
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
            self.session.follow_again();
            self.pump_native(now_ms);
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

    /// Makes the read the link asks for, if one is due.
    pub(super) fn pump_native(&mut self, now_ms: u64) {
        if !self.opts.native() || self.outbox.disposed {
            return;
        }
        if self.session.native.link.reading().is_none() {
            // The link gave up the read in flight (a gap, a range error): its answer is moot.
            if let Some(id) = self.session.native.read.take() {
                self.outbox.abort(id);
            }
        }
        // Events addressed to another session are not this one's (a session the server named
        // after its creation is followed under that name).
        self.session.native.link.address(&self.session.id);
        while let Some(ask) = self.session.native.link.poll_ask(now_ms) {
            let base = self.session.native_base(self.opts.native_agent());
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

    /// The events stream `id`'s status line, or bytes of its body. Its head came: from now on
    /// the idle rule holds, not the connect deadline.
    pub(super) fn on_native_events(&mut self, id: RequestId, part: EventsPart<'_>, now_ms: u64) {
        if self.session.native.read != Some(id) {
            return;
        }
        let bytes = match part {
            EventsPart::Head(status) => {
                let idle = self.opts.stream_idle_timeout_ms;
                if let Some(p) = self.outbox.pending.get_mut(&id) {
                    p.deadline = idle.map(|t| now_ms + t);
                }
                if (200..300).contains(&status) {
                    self.session.native.beats.opened();
                }
                if self.session.events_connected(status) {
                    self.revisions.touch();
                }
                return;
            }
            EventsPart::Bytes(bytes) => bytes,
        };
        let mut notes = Vec::new();
        let s = &mut self.session;
        let seq = s.native.link.gate().seq();
        let heartbeats = s.native.link.heartbeats();
        s.native.link.events_body(
            &mut s.conversation,
            bytes,
            now_ms,
            self.rng.as_mut(),
            &mut notes,
        );
        if s.native.link.heartbeats() != heartbeats {
            s.native.beats.beat(now_ms);
        }
        // A stream that beats is watched on its beats' interval (the protocol's 25 s, or the
        // longest gap seen), not only on the idle timeout.
        let grace = self.opts.heartbeat_grace_ms;
        let window = (s.native.beats).window(Some(liveness::NATIVE_HEARTBEAT_MS), grace);
        if let (Some(p), Some(_)) = (self.outbox.pending.get_mut(&id), window) {
            let idle = self.opts.stream_idle_timeout_ms;
            p.deadline = liveness::stream_deadline(idle, window, now_ms);
        }
        // Heartbeats, a line's part: nothing changed, nobody is told. A line's part counts
        // towards the answer's bound all the same (a line is read in many chunks).
        let changed = !notes.is_empty() || self.session.native.link.gate().seq() != seq;
        if changed {
            self.on_link_notes(notes, now_ms);
            self.settle_held_answers(now_ms);
        }
        let limits = self.opts.limits;
        match self.session.native_growth(bytes.len(), &limits) {
            Some(Growth::Passed(passed)) => self.refuse_turn(passed.error(), now_ms),
            Some(Growth::Unfollowed { read, error }) => {
                if let Some(id) = read {
                    self.outbox.abort(id);
                }
                self.outbox.events.push_back(StoreEvent::Error { error });
                self.revisions.touch();
            }
            None => {}
        }
        if changed {
            // The events may have reached a clear's (or an interrupt's) cursor without changing
            // the queue after it.
            self.decide_clear_all(now_ms);
            self.decide_interrupt(now_ms);
        }
    }

    /// A native request's answer ended, or the request failed without one.
    pub(super) fn on_native_answer(
        &mut self,
        id: RequestId,
        kind: RequestKind,
        answer: NativeAnswer<'_>,
        now_ms: u64,
    ) {
        match kind {
            RequestKind::NativeState | RequestKind::NativeEvents => {
                let rng = self.rng.as_mut();
                if let Some(notes) = self.session.read_over(id, kind, answer, now_ms, rng) {
                    self.on_link_notes(notes, now_ms);
                }
            }
            RequestKind::NativePrompt | RequestKind::NativeCreate => {
                self.on_prompt(PromptInput::Answer(id, kind, answer), now_ms)
            }
            RequestKind::NativeInterrupt => self.on_interrupt_answer(id, answer, now_ms),
            RequestKind::NativeClear => {
                let policy = self.opts.retry;
                let rng = self.rng.as_mut();
                let answered =
                    self.session
                        .clear_all_answered(id, answer.ok(), &policy, rng, now_ms);
                match answered {
                    Some(Ok(())) => self.decide_clear_all(now_ms),
                    Some(Err(Some(error))) => self
                        .outbox
                        .diagnostic(&format!("the queue clear failed: {}", error.message)),
                    _ => {}
                }
            }
            // The stop's answer: the events say how the run ended.
            _ => match answer {
                Ok((status, _)) if (200..300).contains(&status) => {}
                Ok((status, body)) => {
                    let error = refusal(status, body, "stop answer");
                    self.outbox.events.push_back(StoreEvent::Error { error });
                }
                Err(message) => self.outbox.events.push_back(StoreEvent::Error {
                    error: ChatError::network(message),
                }),
            },
        }
    }

    /// What the link saw (one note per change of the link or the run), as the store's moves:
    /// the session decides what it can, the store ends turns, sends and tells the host.
    fn on_link_notes(&mut self, notes: Vec<LinkNote>, now_ms: u64) {
        for note in notes {
            match note {
                LinkNote::Hydrated => {
                    self.session.history.hydrated = true;
                    let said = self.session.native.link.reached();
                    self.session.unsay(said);
                    self.session.keep_unshown_prompts();
                    // What the state shows ran is consumed before a run it says is over ends
                    // here (whose end takes back what the server still holds).
                    self.follow_server_queue(ServerView::State, now_ms);
                    if let Some(ending) = self.session.native_state_read() {
                        self.end_turn(ending, now_ms);
                    }
                    self.settle_unsure_take_backs(now_ms);
                    // Back at a session whose run ended on its own while it was parked (or
                    // whose end was in the gap): what waits goes out as the next messages.
                    self.send_next_queued(now_ms);
                }
                LinkNote::Retrying(why) => self.outbox.diagnostic(&why),
                LinkNote::Refused(why) => {
                    let error = ChatError::protocol(why);
                    self.session.error = Some(error.clone());
                    self.outbox.events.push_back(StoreEvent::Error { error });
                }
                LinkNote::Effect(NativeEffect::RunStarted(turn_id, seq)) => {
                    self.session.run_started(turn_id, seq);
                    self.interrupt_run_started();
                }
                // The run an interrupt stops: the turn goes on with the run it starts.
                LinkNote::Effect(NativeEffect::RunEnded(_)) if self.interrupted_run_ended() => {}
                LinkNote::Effect(NativeEffect::RunEnded(status)) => {
                    if let Some(ending) = self.session.run_ended(status) {
                        self.end_turn(ending, now_ms);
                    }
                }
                LinkNote::Effect(NativeEffect::Error(code, _))
                    if code == "ABORTED" && self.interrupted_run_ended() => {}
                LinkNote::Effect(NativeEffect::Error(code, message)) => {
                    self.outbox
                        .diagnostic(&format!("the run failed: {code}: {message}"));
                    if let Some(error) = self.session.run_failed(code, message) {
                        self.end_turn(Ending::Failed(error), now_ms);
                    }
                }
                LinkNote::Effect(NativeEffect::UserMessage {
                    message_id,
                    client_nonce: nonce,
                    client_seq,
                    text,
                }) => {
                    if self.session.prompt_shown(&message_id, nonce.as_deref()) {
                        // The prompt the user stopped on its way ran after all: stopped again.
                        let path = self.session.stopping(self.opts.native_agent());
                        let body = Some("{}".into());
                        self.request(RequestKind::NativeStop, Method::Post, path, body, now_ms);
                        if matches!(self.session.turn.phase, Phase::Streaming { .. }) {
                            self.end_turn(Ending::Stopped, now_ms);
                        }
                    }
                    let (nonce, text) = (nonce.as_deref(), text.as_deref());
                    if self.session.on_native_user_message(nonce, client_seq, text) {
                        self.start_held_turn(now_ms);
                        self.revisions.touch();
                    }
                }
                LinkNote::Effect(NativeEffect::Queue(seq, rows)) => {
                    self.follow_server_queue(ServerView::Event(seq, rows), now_ms)
                }
                LinkNote::Effect(NativeEffect::Data(name, data)) => {
                    let data = StoreEvent::Data {
                        name,
                        id: None,
                        data,
                        transient: true,
                    };
                    self.outbox.events.push_back(data);
                }
                LinkNote::Effect(NativeEffect::Diagnostic(d)) => self.outbox.diagnostic(&d),
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
                LinkNote::Unreachable(error) if self.session.turn.phase.running() => {
                    // The events stream is gone and the reconnects from the cursor failed (a
                    // closed socket: a dead server; or, past the beats, a stall a proxy hides):
                    // the run is not followed any more, so the turn ends with the error and
                    // Retry, as a dead stream does over SSE, not as a slow answer. The link goes
                    // on trying; what the server still runs shows again when it connects.
                    // Its own error, not the link's: the link's next connect takes back
                    // what the link said, never the turn's failure, which stays shown until
                    // the user acts (Retry), as after a stall.
                    let error = if self.session.native.beats.stalled {
                        liveness::stalled_error(error)
                    } else {
                        liveness::lost_run_error(error)
                    };
                    self.end_turn(Ending::Failed(error), now_ms);
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
                    if let Some(ending) = self.session.native_state_read() {
                        self.end_turn(ending, now_ms);
                    }
                }
            }
        }
        // The gate's queue, status or cursor moved even where the history did not.
        self.revisions.touch();
        self.pump_native(now_ms);
        // A run that started lets the follow-ups typed while its prompt was on its way go.
        self.pump(now_ms);
    }

    /// `stop()` over this protocol: `POST …/stop`, which also drops the server's queue; the
    /// turn ends as `ending` (a user's stop, or a bound passed).
    pub(super) fn stop_native(&mut self, ending: Ending, now_ms: u64) {
        if let Phase::Submitted { stream } = self.session.turn.phase {
            self.outbox.abort(stream);
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
        // The run's `ABORTED` that follows is a plain stop, not an error.
        let path = self.session.stopping(self.opts.native_agent());
        let body = Some("{}".into());
        self.request(RequestKind::NativeStop, Method::Post, path, body, now_ms);
        self.end_turn(ending, now_ms);
    }
}
