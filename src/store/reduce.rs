//! The turn's stream into the history: SSE batches, and each chunk through the conversation's
//! authority gate ([`Conversation`]); then what the chunk means for the turn, the queue and
//! the host ([`Effect`]).

use super::*;
use crate::reduce::conversation::{Effect, TurnView};

impl ChatStore {
    pub(super) fn apply_events(&mut self, batch: &SseBatch, now_ms: u64) {
        let before = self.session.conversation.history().revision();
        let stream = self.session.turn.phase.stream();
        for item in batch.iter() {
            if self.session.turn.phase.stream() != stream {
                // A violation failed the turn (or an error ended it) mid-read: the `ai` package
                // stops processing there, and so does the store — the rest of the read is
                // dropped with the stream (found by the store fuzz target).
                break;
            }
            self.session.turn.events_seen += 1;
            match item {
                Ok("[DONE]") => self.session.turn.stream_done = true,
                // Deltas in their canonical shape are applied in place, without the `Value`
                // tree or the chunk (most of the per-event cost of a long stream); anything
                // else takes the full parser.
                Ok(data) => {
                    match crate::codec::fast_chunk::parse_delta(data) {
                        Some(delta) => self.apply_delta(delta, now_ms),
                        None => match parse_chunk(data) {
                            Ok(chunk) => self.apply_chunk(chunk, now_ms),
                            Err(e) => self.lose(LossCode::BadChunk, e.to_string(), true),
                        },
                    }
                    let s = &mut self.session;
                    let history = s.conversation.history().messages();
                    let limits = &self.opts.limits;
                    if let Some(passed) = s.turn.growth.after_event(data.len(), history, limits) {
                        self.limit_passed(passed, now_ms);
                    }
                }
                Err(skipped) => self.lose_event(skipped),
            }
        }
        if self.session.conversation.history().revision() != before {
            self.touch();
        }
    }

    /// A delta read in place: through the gate's delta entry.
    pub(super) fn apply_delta(&mut self, delta: Delta<'_>, now_ms: u64) {
        self.through_gate(
            |c, turn, rng, out| c.apply_delta(delta, turn, rng, out),
            now_ms,
        );
    }

    /// A chunk: through the gate (SPEC §8).
    pub(super) fn apply_chunk(&mut self, chunk: Chunk, now_ms: u64) {
        self.through_gate(|c, turn, rng, out| c.apply(chunk, turn, rng, out), now_ms);
    }

    /// Runs `feed` on the conversation with the turn as it stands, then acts on its effects.
    #[inline]
    fn through_gate(
        &mut self,
        feed: impl FnOnce(&mut Conversation, TurnView<'_>, &mut dyn RandomSource, &mut Vec<Effect>),
        now_ms: u64,
    ) {
        let mut effects = std::mem::take(&mut self.scratch.effects);
        let s = &mut self.session;
        let turn = TurnView {
            running_id: s.turn.turn_id.as_deref(),
            busy: s.turn.phase.status().is_busy(),
        };
        feed(&mut s.conversation, turn, self.rng.as_mut(), &mut effects);
        // Most text deltas say nothing more.
        if !effects.is_empty() {
            self.on_effects(&mut effects, now_ms);
        }
        self.scratch.effects = effects;
    }

    /// What the chunk just applied means beyond the history, in the order it said it.
    fn on_effects(&mut self, effects: &mut Vec<Effect>, now_ms: u64) {
        for e in effects.drain(..) {
            match e {
                Effect::PiMode => {
                    self.touch();
                    // pi mode streams from the first byte, which came with this chunk (the
                    // AI SDK's rule had kept the status `submitted` until a write).
                    self.begin_streaming(now_ms);
                }
                Effect::TurnStart(turn_id) => {
                    // Stop and resume need the turn id. `turnId` names the running turn: a
                    // chunk fed while none runs (a host's own transport through
                    // `handle_chunk`) starts the reducers' turn only.
                    let s = &mut self.session;
                    if s.turn.phase.running() && s.turn.turn_id.as_deref() != Some(&turn_id) {
                        s.turn.turn_id = Some(turn_id);
                        self.touch();
                    }
                    // A data chunk to `useChat`, which writes it (its status turns `streaming`).
                    self.begin_streaming(now_ms);
                }
                Effect::Streams => self.begin_streaming(now_ms),
                Effect::Data {
                    name,
                    id,
                    data,
                    transient,
                } => self.outbox.events.push_back(StoreEvent::Data {
                    name,
                    id,
                    data,
                    transient,
                }),
                Effect::ServerError(text) => self.stream_error(text),
                Effect::StreamStops => {
                    if let Some(id) = self.session.turn.phase.stream() {
                        self.abort(id);
                        self.end_turn(Ending::Finished, now_ms);
                    }
                }
                Effect::Finish(reason) => self.session.turn.finish_reason = reason,
                Effect::ToolCall(call) => {
                    self.outbox.events.push_back(StoreEvent::ToolCall { call })
                }
                Effect::Violation(v) => {
                    if let Some(id) = self.session.turn.phase.stream() {
                        self.abort(id);
                    }
                    self.end_turn(Ending::Failed(ChatError::protocol(v)), now_ms);
                }
                Effect::ToolUi(call, update) => {
                    self.session.runtime.tool_ui.insert(call, update);
                    self.revisions.tool_ui += 1;
                    self.touch();
                }
                #[cfg(feature = "pi")]
                Effect::FollowUp(e) => self.on_followup_effect(e),
                Effect::Diagnostic(m) => self.diagnostic(&m),
                Effect::Lost(unknown, m) => {
                    let code = match unknown {
                        true => LossCode::UnknownChunk,
                        false => LossCode::NotApplied,
                    };
                    self.lose(code, m, false);
                }
            }
        }
    }

    /// `useChat`'s status goes from `submitted` to `streaming` at the first chunk that changes
    /// the message (the gate's [`Effect::Streams`]), not at the first byte: a UI shows its
    /// waiting indicator until then, and no empty answer.
    pub(super) fn begin_streaming(&mut self, now_ms: u64) {
        if let Phase::Submitted { stream } = self.session.turn.phase {
            self.session.turn.phase = Phase::Streaming { stream };
            self.touch();
            self.pump(now_ms);
        }
    }

    /// The projection's word on the queue: a committed follow-up, a consumed one.
    #[cfg(feature = "pi")]
    pub(super) fn on_followup_effect(&mut self, e: crate::reduce::pi::PiEffect) {
        use crate::reduce::pi::PiEffect;
        let q = &mut self.session.queue;
        let consumed = match e {
            PiEffect::UserMessage {
                client_nonce: Some(nonce),
                ..
            } => q.consume_by_nonce(&nonce),
            PiEffect::FollowUpConsumed {
                client_nonce,
                client_seq,
            } => match (client_nonce, client_seq) {
                (Some(n), _) => q.consume_by_nonce(&n),
                (None, Some(seq)) => q.consume_by_seq(seq),
                // Older servers say only that one was consumed: the oldest posted one, FIFO,
                // never matched by text.
                (None, None) => q.consume_oldest_posted(),
            },
            _ => None,
        };
        if consumed.is_some() {
            self.touch();
        }
    }

    /// A stream grew past a bound: stopped as the user would stop it (the server told, the
    /// parts it left open closed, what it showed kept), and failed with the bound's error —
    /// `onFinish` says an error, not a stop.
    pub(super) fn limit_passed(&mut self, passed: growth::Passed, now_ms: u64) {
        self.refuse_turn(passed.error(), now_ms);
    }

    /// The store follows the turn no further (`error` says why: a bound passed, a history
    /// this build cannot read): a running turn is stopped on the server, what it showed
    /// kept, and ends once, as [`Ending::Refused`] (an error, not a user's stop). With none
    /// running (chunks a host fed, a history read) the store shows the error; a message held
    /// to be sent goes back where it came from, as at a stop.
    pub(super) fn refuse_turn(&mut self, error: ChatError, now_ms: u64) {
        if self.session.turn.phase.running() {
            // A pending `sendAutomaticallyWhen` answer is moot, as after a stop.
            self.auto_send.stops = self.auto_send.stops.wrapping_add(1);
            return self.stop_on_server(Ending::Refused(error), now_ms);
        }
        if matches!(self.session.turn.phase, Phase::Held(_)) {
            self.turn_mut().stop(now_ms);
        }
        let s = &mut self.session;
        s.turn.phase = Phase::Idle { failed: true };
        s.error = Some(error.clone());
        self.outbox.events.push_back(StoreEvent::Error { error });
        self.touch();
    }

    pub(super) fn stream_error(&mut self, text: String) {
        self.session.turn.stream_error = true;
        let e = ChatError::new(ErrorKind::Server, text);
        self.session.error = Some(e.clone());
        self.outbox.events.push_back(StoreEvent::Error { error: e });
        self.touch();
    }

    pub(super) fn diagnostic(&mut self, message: &str) {
        self.outbox.events.push_back(StoreEvent::Diagnostic {
            message: message.to_string(),
        });
    }
}
