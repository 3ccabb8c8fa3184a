//! The open parts a stream writes into: continuing a message, the active text and
//! reasoning parts by id, and their deltas.

use super::*;

impl UiMessageReducer {
    /// Rebuilds the partial tool calls of a continued message: the current step's tool parts
    /// whose input is still streaming go on from their `rawInput`.
    pub(super) fn continue_message(&mut self, msg: &UIMessage) {
        let start = current_step(msg);
        for t in msg.parts[start..].iter().filter_map(Part::as_tool) {
            if t.state != ToolState::InputStreaming {
                continue;
            }
            let text = match t.raw_input.as_deref() {
                Some(Value::String(s)) => s.as_str(),
                _ => "",
            };
            self.partial_tool_calls.insert(
                t.tool_call_id.clone(),
                PartialToolCall {
                    input: PartialInput::new(t.input_encoding.as_deref(), text),
                    synced: None,
                    input_encoding: t.input_encoding.clone(),
                    tool_name: t.tool_name.clone(),
                    dynamic: t.dynamic,
                    title: t.title.clone(),
                    tool_metadata: t.tool_metadata.as_deref().cloned(),
                },
            );
        }
    }

    /// A chunk other than a delta writes the parts of this call: the next delta copies.
    pub(super) fn unsync(&mut self, tool_call_id: &str) {
        if let Some(p) = self.partial_tool_calls.get_mut(tool_call_id) {
            p.synced = None;
        }
    }

    /// A `text-delta` or `reasoning-delta` read in place (the store's fast path): the same as
    /// [`apply`](Self::apply) with `UiChunk::PartDelta` and no provider metadata, without
    /// building the chunk.
    pub fn apply_delta(
        &mut self,
        msg: &mut UIMessage,
        kind: PartKind,
        id: &str,
        delta: &str,
    ) -> Result<(), Violation> {
        self.begin(msg);
        self.part_delta(msg, kind, id, delta, None)
    }

    /// The first chunk of the turn rebuilds the state from the message it continues.
    pub(super) fn begin(&mut self, msg: &UIMessage) {
        if !self.initialized {
            self.initialized = true;
            self.continue_message(msg);
        }
    }

    #[cfg_attr(optimize_hot_path, optimize(speed))]
    pub(super) fn part_delta(
        &mut self,
        msg: &mut UIMessage,
        kind: PartKind,
        id: &str,
        delta: &str,
        provider_metadata: Option<Value>,
    ) -> Result<(), Violation> {
        let p = self.active_part(kind, id, "delta")?;
        if let Part::Text {
            text,
            provider_metadata: pm,
            ..
        }
        | Part::Reasoning {
            text,
            provider_metadata: pm,
            ..
        } = &mut msg.parts[p]
        {
            text.push_str(delta);
            if provider_metadata.is_some() {
                *pm = provider_metadata;
            }
        }
        Ok(())
    }

    pub(super) fn clear_active(&mut self) {
        self.active_text.clear();
        self.active_reasoning.clear();
        self.partial_tool_calls.clear();
        self.hot = None;
    }

    /// The active parts of a kind, to change: the hot entry may go stale, so it goes.
    pub(super) fn active(&mut self, kind: PartKind) -> &mut HashMap<String, usize> {
        self.hot = None;
        match kind {
            PartKind::Text => &mut self.active_text,
            PartKind::Reasoning => &mut self.active_reasoning,
        }
    }

    pub(super) fn active_part(
        &mut self,
        kind: PartKind,
        id: &str,
        what: &str,
    ) -> Result<usize, Violation> {
        if let Some((k, hot_id, p)) = &self.hot {
            if *k == kind && hot_id == id {
                return Ok(*p);
            }
        }
        let map = match kind {
            PartKind::Text => &self.active_text,
            PartKind::Reasoning => &self.active_reasoning,
        };
        if let Some(&p) = map.get(id) {
            self.hot = Some((kind, id.to_owned(), p));
            return Ok(p);
        }
        let k = match kind {
            PartKind::Text => "text",
            PartKind::Reasoning => "reasoning",
        };
        Err(Violation(format!(
            "Received {k}-{what} for missing {k} part with ID \"{id}\". Ensure a \"{k}-start\" chunk is sent before any \"{k}-{what}\" chunks."
        )))
    }
}
