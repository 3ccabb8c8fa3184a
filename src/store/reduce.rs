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
                        // A delta read in place: through the gate's delta entry.
                        Some(delta) => self.through_gate(
                            |c, turn, rng, out| c.apply_delta(delta, turn, rng, out),
                            now_ms,
                        ),
                        None => match parse_chunk(data) {
                            Ok(chunk) => self.through_gate(
                                |c, turn, rng, out| c.apply(chunk, turn, rng, out),
                                now_ms,
                            ),
                            Err(e) => {
                                let m = e.to_string();
                                self.session.lose(
                                    LossCode::BadChunk,
                                    m,
                                    None,
                                    true,
                                    &mut self.outbox,
                                );
                                self.revisions.touch();
                            }
                        },
                    }
                    let s = &mut self.session;
                    let history = s.conversation.history().messages();
                    let limits = &self.opts.limits;
                    if let Some(passed) = s.turn.growth.after_event(data.len(), history, limits) {
                        // Stopped as the user would stop it, and failed with the bound's error.
                        self.refuse_turn(passed.error(), now_ms);
                    }
                }
                Err(skipped) => {
                    self.session.lose_event(skipped, &mut self.outbox);
                    self.revisions.touch();
                }
            }
        }
        if self.session.conversation.history().revision() != before {
            self.revisions.touch();
            self.settle_held_answers(now_ms);
        }
    }

    /// Runs `feed` on the conversation with the turn as it stands (a delta, a chunk: SPEC
    /// §8), then acts on its effects.
    #[inline]
    pub(super) fn through_gate(
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
            let mut streams = false;
            match e {
                Effect::PiMode => {
                    self.revisions.touch();
                    // pi mode streams from the first byte, which came with this chunk (the
                    // AI SDK's rule had kept the status `submitted` until a write).
                    streams = true;
                }
                Effect::TurnStart(turn_id) => {
                    // Stop and resume need the turn id. `turnId` names the running turn: a
                    // chunk fed while none runs (a host's own transport through
                    // `handle_chunk`) starts the reducers' turn only.
                    let s = &mut self.session;
                    if s.turn.phase.running() && s.turn.turn_id.as_deref() != Some(&turn_id) {
                        s.turn.turn_id = Some(turn_id);
                        self.revisions.touch();
                    }
                    // A data chunk to `useChat`, which writes it (its status turns `streaming`).
                    streams = true;
                }
                Effect::Streams => streams = true,
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
                Effect::ServerError(text) => {
                    self.session.stream_error(text, &mut self.outbox);
                    self.revisions.touch();
                }
                Effect::StreamStops => {
                    if let Some(id) = self.session.turn.phase.stream() {
                        self.outbox.abort(id);
                        self.end_turn(Ending::Finished, now_ms);
                    }
                }
                Effect::Finish(reason) => self.session.turn.finish_reason = reason,
                Effect::ToolCall(call) => {
                    self.outbox.events.push_back(StoreEvent::ToolCall { call })
                }
                Effect::Violation(v) => {
                    if let Some(id) = self.session.turn.phase.stream() {
                        self.outbox.abort(id);
                    }
                    self.end_turn(Ending::Failed(ChatError::protocol(v)), now_ms);
                }
                Effect::ToolUi(call, update) => {
                    self.session.runtime.tool_ui.insert(call, update);
                    self.revisions.tool_ui += 1;
                    self.revisions.touch();
                }
                #[cfg(feature = "pi")]
                Effect::FollowUp(e) => {
                    if self.session.on_followup_effect(e) {
                        self.revisions.touch();
                    }
                }
                Effect::Diagnostic(m) => self.outbox.diagnostic(&m),
                Effect::Lost(unknown, m) => {
                    let code = match unknown {
                        true => LossCode::UnknownChunk,
                        false => LossCode::NotApplied,
                    };
                    self.session.lose(code, m, None, false, &mut self.outbox);
                    self.revisions.touch();
                }
            }
            if streams && self.session.turn.begin_streaming() {
                self.revisions.touch();
                self.pump(now_ms);
            }
        }
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
        self.revisions.touch();
    }
}

impl Session {
    /// An `error` chunk: the turn fails with the server's words.
    pub(super) fn stream_error(&mut self, text: String, out: &mut Outbox) {
        self.turn.stream_error = true;
        let e = ChatError::new(ErrorKind::Server, text);
        self.error = Some(e.clone());
        out.events.push_back(StoreEvent::Error { error: e });
    }

    /// The projection's word on the queue: a committed follow-up, a consumed one. `true`
    /// when the queue changed.
    #[cfg(feature = "pi")]
    pub(super) fn on_followup_effect(&mut self, e: crate::reduce::pi::PiEffect) -> bool {
        use crate::reduce::pi::PiEffect;
        let q = &mut self.queue;
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
        consumed.is_some()
    }
}

impl Outbox {
    /// Something odd but survivable, for the host's log.
    pub(super) fn diagnostic(&mut self, message: &str) {
        self.events.push_back(StoreEvent::Diagnostic {
            message: message.to_string(),
        });
    }
}
