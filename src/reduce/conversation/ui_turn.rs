//! An AI SDK turn's chunks: placing its message, reducing what streamed, acting on the
//! reducer's effects and tool UI data, and handing the history to pi.

use super::*;

impl Conversation {
    /// A standard chunk while the AI SDK reducer has authority.
    pub(super) fn on_ui_chunk(
        &mut self,
        c: UiChunk,
        rng: &mut dyn RandomSource,
        out: &mut Vec<Effect>,
    ) {
        let error = matches!(c, UiChunk::Error { .. });
        let writes = Writes::of(&c);
        self.reduce_streamed(writes, false, |r, m, e| r.apply(m, c, e), rng, out);
        // `useChat` stops at an `error` chunk (its stream processor throws it): the turn ends
        // there, and nothing after it in the stream is applied. The replay helpers, like
        // `readUIMessageStream`, go on.
        if error {
            out.push(Effect::StreamStops);
        }
    }

    /// A `data-*` chunk while the AI SDK reducer has authority: a transient one only reaches
    /// `onData`, any other is a part of the streamed message.
    pub(super) fn on_ui_data(
        &mut self,
        d: DataChunk,
        rng: &mut dyn RandomSource,
        out: &mut Vec<Effect>,
    ) {
        if d.transient {
            let mut effects = std::mem::take(&mut self.ui_effects);
            let mut scratch = UIMessage::new("", Role::Assistant);
            self.ui.reducer.apply_data(&mut scratch, d, &mut effects);
            self.on_ui_effects(None, &mut effects, out);
            self.ui_effects = effects;
        } else {
            let data = |r: &mut UiMessageReducer, m: &mut UIMessage, e: &mut Vec<_>| {
                r.apply_data(m, d, e);
                Ok(())
            };
            self.reduce_streamed(Writes::ALWAYS, false, data, rng, out);
        }
    }

    /// Where the AI SDK reducer applies a chunk: the streamed message's position once it is in
    /// the history; else `None`, and the chunk goes to the turn's pending message (made here:
    /// a new one, or a copy of the assistant message the turn continues). As in `useChat`, the
    /// message enters the history at the first chunk that writes it ([`place_pending`]
    /// (Self::place_pending)). Until then a continued message shows as it was, and a stream
    /// that writes nothing (a bare `start` and `finish`, an `error` at once) leaves no empty
    /// answer behind.
    pub(super) fn ui_placed(&mut self, rng: &mut dyn RandomSource) -> Option<usize> {
        let placed = self.ui.message_id.as_deref();
        if let Some(i) = placed.and_then(|id| self.history.position(id)) {
            return Some(i);
        }
        if self.ui.pending.is_none() {
            let fresh = self.ui.fresh;
            let continued = (self.history.last()).filter(|m| !fresh && m.role == Role::Assistant);
            self.ui.pending = Some(match continued {
                Some(m) => m.clone(),
                None => {
                    let id = self
                        .ui
                        .answer_id
                        .take()
                        .filter(|id| self.history.get(id).is_none());
                    UIMessage::new(id.unwrap_or_else(|| uuid_v4(rng)), Role::Assistant)
                }
            });
        }
        None
    }

    /// The pending message's first write: it enters the history (`push` replaces the message
    /// of the same id in place: the continued one) and is streamed into there from now on.
    pub(super) fn place_pending(&mut self) -> Option<usize> {
        let i = self.history.push(self.ui.pending.take()?);
        self.ui.message_id = Some(self.history.messages()[i].id.clone());
        Some(i)
    }

    /// One step of the AI SDK reducer on the streamed message, as `useChat` writes it.
    /// `reduce` runs on the message in the history (`append_only`: the delta entry, which only
    /// appends to a text), or on the turn's pending answer. That answer enters the history at
    /// the first chunk that writes, not at all when the reducer refuses it (the processor throws
    /// before writing). Then the effects follow, a refusal, and a write that ends `submitted`.
    /// The fast and the general path both come here.
    pub(super) fn reduce_streamed(
        &mut self,
        writes: Writes,
        append_only: bool,
        reduce: impl FnOnce(
            &mut UiMessageReducer,
            &mut UIMessage,
            &mut Vec<UiEffect>,
        ) -> Result<(), Violation>,
        rng: &mut dyn RandomSource,
        out: &mut Vec<Effect>,
    ) {
        let placed = self.ui_placed(rng);
        let msg = match (placed, self.ui.pending.as_mut()) {
            (Some(i), _) if append_only => self.history.append_mut(i),
            (Some(i), _) => self.history.at_mut(i),
            (None, Some(m)) => m,
            (None, None) => return,
        };
        let before = msg.parts.len();
        let result = reduce(&mut self.ui.reducer, msg, &mut self.ui_effects);
        // A `reset-step` writes (with the status) when the step had parts to remove.
        let removed = writes.reset && msg.parts.len() < before;
        let applied = result.is_ok();
        let target = match placed {
            None if applied && (writes.places || removed) => self.place_pending(),
            _ => placed,
        };
        // (Skipped for a text delta: its entry has no effects, and the calls are not free per
        // delta.)
        if !self.ui_effects.is_empty() {
            let mut effects = std::mem::take(&mut self.ui_effects);
            self.on_ui_effects(target, &mut effects, out);
            self.ui_effects = effects;
        }
        if let Err(v) = result {
            out.push(Effect::Violation(v.0));
        }
        if applied && (writes.streams || removed) && !self.ui.streamed {
            self.ui.streamed = true;
            out.push(Effect::Streams);
        }
    }

    /// The AI SDK reducer's effects for the message at `target`.
    pub(super) fn on_ui_effects(
        &mut self,
        target: Option<usize>,
        effects: &mut Vec<UiEffect>,
        out: &mut Vec<Effect>,
    ) {
        for e in effects.drain(..) {
            match e {
                UiEffect::MessageId(id) => {
                    let Some(i) = target.filter(|&i| i < self.history.len()) else {
                        continue;
                    };
                    // The id of another role's message (a server numbering each role on its
                    // own): this answer is another message, under an id of its own.
                    let id = self.history.id_for(&id, Role::Assistant).unwrap_or(id);
                    match self.history.position(&id) {
                        // The `start` names another message the history holds (an attach's
                        // replay of the answer it shows): that one is rebuilt from the
                        // stream, not shown twice.
                        Some(j) if j != i => {
                            let streamed = self.history.remove(i);
                            let j = if j > i { j - 1 } else { j };
                            let at = self.history.at_mut(j);
                            let id = std::mem::take(&mut at.id);
                            *at = UIMessage { id, ..streamed };
                        }
                        // A second `start` renames the same message: never a second bubble.
                        _ => self.history.rename(i, &id),
                    }
                    self.ui.message_id = Some(id);
                }
                UiEffect::Data(d) => out.push(Effect::Data {
                    name: d.name,
                    id: d.id,
                    data: d.data,
                    transient: d.transient,
                }),
                UiEffect::Error(text) => out.push(Effect::ServerError(text)),
                UiEffect::Finish(reason) => out.push(Effect::Finish(reason)),
                UiEffect::ToolCall(call) => out.push(Effect::ToolCall(call)),
            }
        }
    }

    /// A `data-tool-ui` chunk: for the store to remember (in both modes: in pi mode it is not
    /// history, yet the part shows it), and the message holding the call shows it.
    pub(super) fn on_tool_ui(&mut self, data: &Value, out: &mut Vec<Effect>) {
        let Some((call, update)) = ToolUiUpdate::from_data(data) else {
            let e = "data-tool-ui without a toolCallId";
            return out.push(Effect::Lost(false, e.to_string()));
        };
        // The message holding the call is the running turn's, the last one or near it. The
        // search stops after TOOL_UI_SEARCH messages: a chunk naming a call no message has
        // (hostile, or a stale progress update) would otherwise cost the whole history per
        // chunk. An older message shows the update the next time it changes.
        let h = &mut self.history;
        if let Some(i) = (0..h.len())
            .rev()
            .take(TOOL_UI_SEARCH)
            .find(|&i| tool_ui::has_call(&h.messages()[i], &call))
        {
            h.at_mut(i);
        }
        out.push(Effect::ToolUi(call, update));
    }

    /// The pi projection took over history from the AI SDK reducer (`data-pi-mode`, or a
    /// capabilities answer that came after a send made on the defaults). A message the AI
    /// SDK reducer started in this turn is dropped: the projection rebuilds it.
    #[cfg_attr(not(feature = "pi"), allow(unused_variables))]
    pub(super) fn hand_history_to_pi(&mut self, busy: bool) {
        self.ui.pending = None;
        let started = self.ui.message_id.take();
        if let Some(i) = started.and_then(|id| self.history.position(&id)) {
            if self.history.messages()[i].role == Role::Assistant {
                self.history.remove(i);
            }
        }
        // The optimistic user message of this turn is adopted by the projection's first
        // user message-start, unless that one went by already.
        #[cfg(feature = "pi")]
        if busy && !self.ignored_user_start {
            let m = self.history.messages();
            let last_user = m.iter().rposition(|m| m.role == Role::User);
            self.pi.set_pending_user(last_user.map(|i| m[i].id.clone()));
        }
    }

    // ----- the turn ----------------------------------------------------------------------
}
