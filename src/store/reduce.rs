//! The turn's stream into the history: SSE batches and chunks through the reducer that has
//! authority (the AI SDK reducer or the pi projection), and their effects.

use super::*;
use crate::protocol::chunk::DataChunk;

/// How a chunk writes the streamed message in `useChat` ([`ChatStore::reduce_streamed`]):
/// whether it puts the answer into `messages` (`places`), whether that write also updates the
/// status (`streams`), and whether it is a `reset-step`, which writes only when it removes parts.
#[derive(Clone, Copy)]
pub(super) struct Writes {
    pub(super) places: bool,
    pub(super) streams: bool,
    pub(super) reset: bool,
}

impl Writes {
    /// A delta or a data part: always a write, with the status.
    pub(super) const ALWAYS: Writes = Writes {
        places: true,
        streams: true,
        reset: false,
    };

    /// As `ai` 7.0.173's stream processor calls `write()`: with the status update for every
    /// chunk that changes the message, but without it for a `start` naming the message (id or
    /// metadata). A step's start and end, `error`, `abort`, and a `finish` or
    /// `message-metadata` without metadata do not write; a `reset-step` writes (with the
    /// status) only when it removes parts.
    pub(super) fn of(c: &UiChunk) -> Writes {
        let streams = match c {
            UiChunk::Start { .. }
            | UiChunk::StartStep
            | UiChunk::FinishStep
            | UiChunk::ResetStep
            | UiChunk::Error { .. }
            | UiChunk::Abort { .. } => false,
            UiChunk::Finish {
                message_metadata, ..
            }
            | UiChunk::MessageMetadata { message_metadata } => message_metadata.is_some(),
            UiChunk::Data(d) => !d.transient,
            _ => true,
        };
        let names = matches!(c, UiChunk::Start { message_id, message_metadata }
            if message_id.is_some() || message_metadata.is_some());
        Writes {
            places: streams || names,
            streams,
            reset: matches!(c, UiChunk::ResetStep),
        }
    }
}

impl ChatStore {
    pub(super) fn apply_events(&mut self, batch: &SseBatch, now_ms: u64) {
        let before = self.session.history.revision();
        let stream = self.session.phase.stream();
        for item in batch.iter() {
            if self.session.phase.stream() != stream {
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
                Ok(data) => match crate::stream::fast_chunk::parse_delta(data) {
                    Some(delta) => self.apply_delta(delta, now_ms),
                    None => match parse_chunk(data) {
                        Ok(chunk) => self.apply_chunk(chunk, now_ms),
                        Err(e) => {
                            let error = ChatError::protocol(e.to_string());
                            self.events.push_back(StoreEvent::Error { error });
                        }
                    },
                },
                Err(SseError::EventTooLarge { limit }) => {
                    let error = ChatError::protocol(format!(
                        "an event larger than {limit} bytes was skipped"
                    ));
                    self.events.push_back(StoreEvent::Error { error });
                }
            }
        }
        if self.session.history.revision() != before {
            self.touch();
        }
    }

    /// What [`apply_chunk`](Self::apply_chunk) does with a delta's chunk, without building it:
    /// the same authority gate, and the reducers' own entry points for a delta read in place.
    pub(super) fn apply_delta(&mut self, delta: Delta<'_>, now_ms: u64) {
        let pi_owns = self.session.pi_owns_history();
        match delta {
            Delta::Pi {
                seq,
                kind,
                message_id,
                part_id,
                delta,
            } if pi_owns => {
                let mut effects = Vec::new();
                let s = &mut self.session;
                let ids = (&*message_id, &*part_id);
                s.pi.apply_delta(&mut s.history, seq, kind, ids, &delta, &mut effects);
                for e in effects {
                    self.on_pi_effect(e, now_ms);
                }
            }
            // AI SDK mode ignores the projection's deltas; pi mode the standard ones.
            Delta::Pi { .. } => {}
            _ if pi_owns => {}
            // The reducer's delta entry only appends to a text (`append_only`).
            Delta::Part { kind, id, delta } => self.reduce_streamed(
                Writes::ALWAYS,
                true,
                |r, m, _| r.apply_delta(m, kind, &id, &delta),
                now_ms,
            ),
            // Tool input deltas cost their parse, not their chunk: the general path.
            d @ Delta::ToolInput { .. } => self.apply_chunk(d.into_chunk(), now_ms),
        }
    }

    /// The one place a chunk meets the history: the authority gate of SPEC §8.
    pub(super) fn apply_chunk(&mut self, chunk: Chunk, now_ms: u64) {
        if let Chunk::Data(d) = &chunk {
            if d.name == "tool-ui" {
                // Typed tool UI metadata for a call; the chunk then goes where any data chunk
                // goes (onData, and history in AI SDK mode).
                self.on_tool_ui(&d.data);
            }
        }
        let pi_owns = self.session.pi_owns_history();
        match chunk {
            Chunk::Pi(PiEvent::Mode { enabled }) => {
                if enabled && !self.session.pi_mode {
                    self.enter_pi_mode();
                    // pi mode streams from the first byte, which came with this chunk (the
                    // AI SDK's rule had kept the status `submitted` until a write).
                    self.begin_streaming(now_ms);
                }
            }
            Chunk::Pi(PiEvent::TurnStart { turn_id }) => self.on_turn_start(turn_id, now_ms),
            Chunk::Pi(ev) if pi_owns => {
                let mut effects = Vec::new();
                let s = &mut self.session;
                s.pi.apply(&mut s.history, ev, &mut effects);
                for e in effects {
                    self.on_pi_effect(e, now_ms);
                }
            }
            // AI SDK mode: the pi projection is not the authority.
            Chunk::Pi(ev) => {
                if let PiEvent::MessageStart {
                    role: Role::User,
                    client_nonce: None,
                    ..
                } = ev
                {
                    self.session.turn.ignored_user_start = true;
                }
            }
            Chunk::Ui(c) if pi_owns => match c {
                // pi mode: standard chunks duplicate what the projection says; only the
                // turn-level ones count.
                UiChunk::Error { error_text } => self.stream_error(error_text),
                UiChunk::Finish { finish_reason, .. } => {
                    self.session.turn.finish_reason = finish_reason
                }
                _ => {}
            },
            Chunk::Ui(c) => self.on_ui_chunk(c, now_ms),
            Chunk::Data(d) if pi_owns => self.events.push_back(StoreEvent::Data {
                name: d.name,
                id: d.id,
                data: d.data,
                transient: d.transient,
            }),
            Chunk::Data(d) => self.on_ui_data(d, now_ms),
            Chunk::Unknown { chunk_type, .. } => {
                self.diagnostic(&format!("unknown chunk type {chunk_type}"))
            }
        }
    }

    /// `data-turn-start`, in both modes.
    fn on_turn_start(&mut self, turn_id: String, now_ms: u64) {
        // Meaningful in both modes: stop and resume need the turn id. The turn-start
        // of the turn already running (a resume that replays from the start of the
        // server's buffer) is not a new turn: resetting the seq watermark would apply
        // the replayed deltas a second time.
        let s = &mut self.session;
        let id = Some(turn_id.as_str());
        if s.turn.turn_id.as_deref() != id && s.reducer_turn.as_deref() != id {
            s.pi.new_turn();
            s.reducer_turn = Some(turn_id.clone());
        }
        // `turnId` names the running turn: a chunk fed while none runs (a host's own
        // transport through `handle_chunk`) starts the reducers' turn only.
        if s.phase.running() && s.turn.turn_id.as_deref() != id {
            s.turn.turn_id = Some(turn_id);
            self.touch();
        }
        // A data chunk to `useChat`, which writes it (its status turns `streaming`).
        self.begin_streaming(now_ms);
    }

    /// A standard chunk while the AI SDK reducer has authority.
    fn on_ui_chunk(&mut self, c: UiChunk, now_ms: u64) {
        let error = matches!(c, UiChunk::Error { .. });
        let writes = Writes::of(&c);
        self.reduce_streamed(writes, false, |r, m, e| r.apply(m, c, e), now_ms);
        // `useChat` stops at an `error` chunk (its stream processor throws it): the
        // turn ends there, failed, and nothing after it in the stream is applied. The
        // replay helpers, like `readUIMessageStream`, go on.
        if error {
            if let Some(id) = self.session.phase.stream() {
                self.abort(id);
                self.end_turn(Ending::Finished, now_ms);
            }
        }
    }

    /// A `data-*` chunk while the AI SDK reducer has authority: a transient one only reaches
    /// `onData`, any other is a part of the streamed message.
    fn on_ui_data(&mut self, d: DataChunk, now_ms: u64) {
        let mut effects = Vec::new();
        if d.transient {
            self.session.turn.ui.reducer.apply_data(
                &mut UIMessage::new("", Role::Assistant),
                d,
                &mut effects,
            );
            self.on_ui_effects(usize::MAX, &mut effects);
        } else {
            let data = |r: &mut UiMessageReducer, m: &mut UIMessage, e: &mut Vec<_>| {
                r.apply_data(m, d, e);
                Ok(())
            };
            self.reduce_streamed(Writes::ALWAYS, false, data, now_ms);
        }
    }

    /// Where the AI SDK reducer applies a chunk: the streamed message's position once it is in
    /// the history; else `None`, and the chunk goes to the turn's pending message (made here:
    /// a new one, or a copy of the assistant message the turn continues). As in `useChat`, the
    /// message enters the history at the first chunk that writes it ([`place_pending`]
    /// (Self::place_pending)). Until then a continued message shows as it was, and a stream
    /// that writes nothing (a bare `start` and `finish`, an `error` at once) leaves no empty
    /// answer behind.
    pub(super) fn ui_placed(&mut self) -> Option<usize> {
        let s = &mut self.session;
        if let Some(i) = s
            .turn
            .ui
            .message_id
            .as_deref()
            .and_then(|id| s.history.position(id))
        {
            return Some(i);
        }
        if s.turn.ui.pending.is_none() {
            let continued = s.history.last().filter(|m| m.role == Role::Assistant);
            s.turn.ui.pending = Some(match continued {
                Some(m) => m.clone(),
                None => UIMessage::new(uuid_v4(self.rng.as_mut()), Role::Assistant),
            });
        }
        None
    }

    /// The pending message's first write: it enters the history (`push` replaces the message
    /// of the same id in place: the continued one) and is streamed into there from now on.
    pub(super) fn place_pending(&mut self) -> Option<usize> {
        let s = &mut self.session;
        let i = s.history.push(s.turn.ui.pending.take()?);
        s.turn.ui.message_id = Some(s.history.messages()[i].id.clone());
        Some(i)
    }

    /// One step of the AI SDK reducer on the streamed message, as `useChat` writes it.
    /// `reduce` runs on the message in the history (`append_only`: the delta entry, which only
    /// appends to a text), or on the turn's pending answer. That answer enters the history at
    /// the first chunk that writes, not at all when the reducer refuses it (the processor throws
    /// before writing). Then the effects are handled, a refusal fails the turn, and a write that
    /// updates the status ends `submitted`. The fast and the general path both come here.
    pub(super) fn reduce_streamed(
        &mut self,
        writes: Writes,
        append_only: bool,
        reduce: impl FnOnce(
            &mut UiMessageReducer,
            &mut UIMessage,
            &mut Vec<UiEffect>,
        ) -> Result<(), Violation>,
        now_ms: u64,
    ) {
        let placed = self.ui_placed();
        let s = &mut self.session;
        let msg = match (placed, s.turn.ui.pending.as_mut()) {
            (Some(i), _) if append_only => s.history.append_mut(i),
            (Some(i), _) => s.history.at_mut(i),
            (None, Some(m)) => m,
            (None, None) => return,
        };
        let before = msg.parts.len();
        let result = reduce(&mut s.turn.ui.reducer, msg, &mut self.ui_effects);
        // A `reset-step` writes (with the status) when the step had parts to remove.
        let removed = writes.reset && msg.parts.len() < before;
        let applied = result.is_ok();
        let target = match placed {
            None if applied && (writes.places || removed) => self.place_pending(),
            _ => placed,
        };
        // (None for a text delta: its entry has no effects, and the calls are not free per delta.)
        if !self.ui_effects.is_empty() {
            let mut effects = std::mem::take(&mut self.ui_effects);
            self.on_ui_effects(target.unwrap_or(usize::MAX), &mut effects);
            self.ui_effects = effects;
        }
        self.on_ui_result(result, now_ms);
        if applied && (writes.streams || removed) {
            self.begin_streaming(now_ms);
        }
    }

    /// `useChat`'s status goes from `submitted` to `streaming` at the first chunk that changes
    /// the message ([`Writes::of`]), not at the first byte: a UI shows its waiting indicator
    /// until then, and no empty answer.
    pub(super) fn begin_streaming(&mut self, now_ms: u64) {
        if let Phase::Submitted { stream } = self.session.phase {
            self.session.phase = Phase::Streaming { stream };
            self.touch();
            self.pump(now_ms);
        }
    }

    /// A protocol violation fails the turn: the `ai` package stops processing there.
    pub(super) fn on_ui_result(&mut self, result: Result<(), Violation>, now_ms: u64) {
        if let Err(v) = result {
            if let Some(id) = self.session.phase.stream() {
                self.abort(id);
            }
            self.end_turn(Ending::Failed(ChatError::protocol(v.0)), now_ms);
        }
    }

    /// Handles (and empties) the AI SDK reducer's effects for the message at `i`.
    pub(super) fn on_ui_effects(&mut self, i: usize, effects: &mut Vec<UiEffect>) {
        for e in effects.drain(..) {
            match e {
                UiEffect::MessageId(id) => {
                    // A second `start` renames the same message: never a second bubble.
                    if i < self.session.history.len() {
                        self.session.history.rename(i, &id);
                        self.session.turn.ui.message_id =
                            Some(self.session.history.messages()[i].id.clone());
                    }
                }
                UiEffect::Data(d) => self.events.push_back(StoreEvent::Data {
                    name: d.name,
                    id: d.id,
                    data: d.data,
                    transient: d.transient,
                }),
                UiEffect::Error(text) => self.stream_error(text),
                UiEffect::Finish(reason) => self.session.turn.finish_reason = reason,
            }
        }
    }

    pub(super) fn on_pi_effect(&mut self, e: PiEffect, now_ms: u64) {
        match e {
            PiEffect::UserMessage {
                client_nonce: Some(nonce),
                ..
            } => {
                if self.session.queue.consume_by_nonce(&nonce).is_some() {
                    self.touch();
                }
            }
            PiEffect::UserMessage {
                client_nonce: None, ..
            } => {}
            PiEffect::FollowUpConsumed {
                client_nonce,
                client_seq,
            } => {
                let q = &mut self.session.queue;
                let consumed = match (client_nonce, client_seq) {
                    (Some(n), _) => q.consume_by_nonce(&n),
                    (None, Some(seq)) => q.consume_by_seq(seq),
                    // Older servers say only that one was consumed: the oldest posted one,
                    // FIFO, never matched by text.
                    (None, None) => q.consume_oldest_posted(),
                };
                if consumed.is_some() {
                    self.touch();
                }
            }
            PiEffect::Data { name, data } => self.events.push_back(StoreEvent::Data {
                name,
                id: None,
                data,
                transient: true,
            }),
            PiEffect::Diagnostic(m) => self.diagnostic(&m),
        }
        let _ = now_ms;
    }

    /// `data-pi-mode`: from here on the pi projection owns this session's history.
    pub(super) fn enter_pi_mode(&mut self) {
        self.session.pi_mode = true;
        self.hand_history_to_pi();
    }

    /// The pi projection took over history from the AI SDK reducer (`data-pi-mode`, or a
    /// capabilities answer that came after a send made on the defaults). A message the AI
    /// SDK reducer started in this turn is dropped: the projection rebuilds it.
    pub(super) fn hand_history_to_pi(&mut self) {
        let s = &mut self.session;
        s.turn.ui.pending = None;
        if let Some(i) = s
            .turn
            .ui
            .message_id
            .take()
            .and_then(|id| s.history.position(&id))
        {
            if s.history.messages()[i].role == Role::Assistant {
                s.history.remove(i);
            }
        }
        // The optimistic user message of this turn is adopted by the projection's first
        // user message-start, unless that one went by already.
        if s.phase.status().is_busy() && !s.turn.ignored_user_start {
            let last_user = s
                .history
                .messages()
                .iter()
                .rposition(|m| m.role == Role::User);
            s.pi.set_pending_user(last_user.map(|i| s.history.messages()[i].id.clone()));
        }
        self.touch();
    }

    pub(super) fn stream_error(&mut self, text: String) {
        self.session.turn.stream_error = true;
        let e = ChatError::new(ErrorKind::Server, text);
        self.session.error = Some(e.clone());
        self.events.push_back(StoreEvent::Error { error: e });
        self.touch();
    }

    pub(super) fn diagnostic(&mut self, message: &str) {
        self.events.push_back(StoreEvent::Diagnostic {
            message: message.to_string(),
        });
    }
}
