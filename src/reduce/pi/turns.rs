//! Turn bookkeeping: naming turns, watermarks, pending user rows, renames and steps.

use super::*;

impl PiReducer {
    /// A new turn starts (a chat POST, or a `data-turn-start` of another turn): seq restarts.
    pub fn new_turn(&mut self) {
        if let Some(turn) = self.turn.take() {
            self.past.retain(|(t, _, _)| *t != turn);
            if self.past.len() == PAST_TURNS {
                self.past.remove(0);
            }
            self.past
                .push((turn, self.watermark, self.legacy_watermark));
        }
        self.watermark = None;
        self.legacy_watermark = None;
        self.answer = None;
    }

    /// pi-native: the gate decides rows (see [`PiReducer::gate_rows`]).
    pub fn gate_rows(&mut self) {
        self.gate_rows = true;
    }

    /// The row an assistant message that starts (`message_id`, known here as `id`) goes on as
    /// the next step of the turn's answer: that answer's row, when it has not shown this
    /// message yet and is the last row (a message new to the history), or when the message is
    /// already one of its steps by an alias (a replay of the answer from its start).
    pub(super) fn next_step_row(&self, h: &History, message_id: &str, id: &str) -> Option<String> {
        let (row, shown) = self.answer.as_ref().filter(|_| !self.gate_rows)?;
        if shown.iter().any(|s| s == message_id) {
            return None;
        }
        let last = h.last().is_some_and(|m| m.id == *row);
        let new = h.position(id).is_none();
        ((new && last) || id == row).then(|| row.clone())
    }

    /// Message `message_id` goes on the answer `row` as its next step: the row keeps its id
    /// (the first message's: the UI keeps its bubble), the new message's events reach it by
    /// an alias, its parts are numbered afresh and follow a `step-start`.
    pub(super) fn step_into(
        &mut self,
        h: &mut History,
        row: &str,
        message_id: String,
        text: Option<String>,
    ) {
        let Some(i) = h.position(row) else { return };
        if message_id != row {
            self.aliases.insert(message_id.clone(), row.to_string());
        }
        if let Some((_, shown)) = &mut self.answer {
            shown.push(message_id);
        }
        let st = MessageState {
            part_events: true,
            ..MessageState::default()
        };
        self.state.insert(row.to_string(), st);
        if !self.open.iter().any(|(o, _)| o == row) {
            self.open.push((row.to_string(), Role::Assistant));
        }
        let msg = h.at_mut(i);
        if !msg.parts.is_empty() && !matches!(msg.parts.last(), Some(Part::StepStart)) {
            msg.parts.push(Part::StepStart);
        }
        if let Some(t) = text.filter(|t| !t.is_empty()) {
            msg.parts.push(Part::text(t, Some(TextState::Streaming)));
        }
        self.last_delta = None;
    }

    /// Where the last step of message `i` begins (after its last `step-start`; 0 without
    /// steps, and always 0 where the gate merges finals whole).
    pub(super) fn last_step_start(&self, h: &History, i: usize) -> usize {
        let parts = &h.messages()[i].parts;
        match self.gate_rows {
            true => 0,
            false => (parts.iter())
                .rposition(|p| matches!(p, Part::StepStart))
                .map_or(0, |k| k + 1),
        }
    }

    /// Whether the gate decides rows (pi-native).
    pub fn rows_by_gate(&self) -> bool {
        self.gate_rows
    }

    /// A history read showed each `(row, ids)` as an answer of several messages (`ids`, the
    /// row's own first): their events reach the row. The last row, when an answer, is the
    /// turn's answer: a message that starts next goes on it as a step.
    pub fn folded(&mut self, h: &History, folds: Vec<(String, Vec<String>)>) {
        for (row, ids) in &folds {
            for id in ids.iter().filter(|i| *i != row) {
                self.aliases.insert(id.clone(), row.clone());
            }
        }
        let Some(last) = h.last().filter(|m| m.role == Role::Assistant) else {
            return;
        };
        let ids = (folds.into_iter())
            .find(|(row, _)| *row == last.id)
            .map_or_else(|| vec![last.id.clone()], |(_, ids)| ids);
        self.answer = Some((last.id.clone(), ids));
    }

    /// The turn followed now is `turn_id` (its start was named before it came): nothing
    /// restarts.
    pub fn name_turn(&mut self, turn_id: &str) {
        if self.turn.is_none() {
            self.turn = Some(turn_id.to_string());
        }
    }

    /// `turn_id` is one of the turns left behind whose watermark is kept.
    pub fn left_behind(&self, turn_id: &str) -> bool {
        self.past.iter().any(|(t, _, _)| t == turn_id)
    }

    /// The highest seq applied in the current turn.
    pub fn watermark(&self) -> Option<u64> {
        self.watermark
    }

    /// The client added an optimistic user message for the turn it is starting.
    pub fn set_pending_user(&mut self, message_id: Option<String>) {
        self.pending_user = message_id;
    }

    /// The history was replaced (hydration): forget per-message bookkeeping.
    pub fn reset(&mut self) {
        *self = PiReducer {
            watermark: self.watermark,
            legacy_watermark: self.legacy_watermark,
            turn: self.turn.take(),
            past: std::mem::take(&mut self.past),
            gate_rows: self.gate_rows,
            ..PiReducer::default()
        };
    }

    /// The turn's stream is over (`[DONE]`, a stop, the body's end): nothing is streaming any
    /// more, whatever the server forgot to end (a stopped turn sends no `-end` chunks).
    pub fn end_of_stream(&mut self, h: &mut History) {
        for (id, _) in std::mem::take(&mut self.open) {
            let Some(i) = h.position(&id) else { continue };
            let streaming = |p: &Part| {
                matches!(
                    p,
                    Part::Text {
                        state: Some(TextState::Streaming),
                        ..
                    } | Part::Reasoning {
                        state: Some(TextState::Streaming),
                        ..
                    }
                )
            };
            if h.messages()[i].parts.iter().any(streaming) {
                for p in &mut h.at_mut(i).parts {
                    if let Some((_, state @ Some(TextState::Streaming))) = text_of(p) {
                        *state = Some(TextState::Done);
                    }
                }
            }
        }
        self.pending_user = None;
    }

    pub(super) fn resolve(&self, id: &str) -> String {
        self.aliases
            .get(id)
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    /// The message `id` names, created as an assistant message when the server never started
    /// it (a resumed stream, a server bug): its content is kept and the oddity reported.
    pub(super) fn ensure_message(
        &mut self,
        h: &mut History,
        id: &str,
        out: &mut Vec<PiEffect>,
    ) -> usize {
        let id = self.resolve(id);
        if let Some(i) = h.position(&id) {
            return i;
        }
        out.push(PiEffect::Diagnostic(format!(
            "event for unknown message {id}"
        )));
        self.open.push((id.clone(), Role::Assistant));
        self.state.insert(id.clone(), MessageState::default());
        h.push(UIMessage::new(id, Role::Assistant))
    }

    /// A message the server's state shows while it streams (pi-native's `/state` of a running
    /// session): its part events go on after the state's seq, so it gets the bookkeeping its
    /// start would have made: each `(reasoning, partId, position)` of `parts` is the part the
    /// events of that id extend.
    pub fn resume_streaming(&mut self, h: &History, id: &str, parts: &[(bool, String, usize)]) {
        let Some(i) = h.position(id) else { return };
        let len = h.messages()[i].parts.len();
        let mut st = MessageState::default();
        for (reasoning, part_id, p) in parts.iter().filter(|(_, _, p)| *p < len) {
            st.parts[usize::from(*reasoning)].insert(part_id.clone(), *p);
        }
        st.part_events = true;
        self.state.insert(id.to_string(), st);
        if !self.open.iter().any(|(o, _)| o == id) {
            self.open.push((id.to_string(), Role::Assistant));
        }
    }

    /// pi-native: the message at `i` is known as `new_id` from now on; its bookkeeping (the
    /// parts its events name, whether it is open) follows it.
    pub fn rename(&mut self, h: &mut History, i: usize, new_id: &str) {
        let old = h.messages()[i].id.clone();
        if old == new_id || h.position(new_id).is_some() {
            return;
        }
        h.rename(i, new_id);
        if let Some(st) = self.state.remove(&old) {
            self.state.insert(new_id.to_string(), st);
        }
        for (o, _) in self.open.iter_mut().filter(|(o, _)| *o == old) {
            *o = new_id.to_string();
        }
        for v in self.aliases.values_mut().filter(|v| **v == old) {
            *v = new_id.to_string();
        }
        self.aliases.insert(old.clone(), new_id.to_string());
        if let Some((row, _)) = self.answer.as_mut().filter(|(r, _)| *r == old) {
            *row = new_id.to_string();
        }
        if self.pending_user.as_deref() == Some(old.as_str()) {
            self.pending_user = Some(new_id.to_string());
        }
        self.last_delta = None;
    }

    /// pi-native: the assistant message `new_id` goes on the answer of the message at `i` as
    /// its next step (pi writes one message per model call; an answer is one row). The row
    /// takes the new id and is open; the new message numbers its parts afresh, so the part
    /// ids of the steps before never reach it; a `step-start` part separates the steps.
    pub fn new_step(&mut self, h: &mut History, i: usize, new_id: &str) {
        self.rename(h, i, new_id);
        if let Some((_, shown)) = self.answer.as_mut() {
            shown.push(new_id.to_string());
        }
        let id = h.messages()[i].id.clone();
        let st = MessageState {
            part_events: true,
            ..MessageState::default()
        };
        self.state.insert(id.clone(), st);
        if !self.open.iter().any(|(o, _)| *o == id) {
            self.open.push((id, Role::Assistant));
        }
        let parts = &h.messages()[i].parts;
        if !parts.is_empty() && !matches!(parts.last(), Some(Part::StepStart)) {
            h.at_mut(i).parts.push(Part::StepStart);
        }
        self.last_delta = None;
    }

    /// The optimistic user message the turn's user message-start adopts, if one waits.
    pub fn pending_user(&self) -> Option<&str> {
        self.pending_user.as_deref()
    }

    /// The message `id` started and has not ended.
    pub fn is_open(&self, id: &str) -> bool {
        self.open.iter().any(|(o, _)| o == id)
    }

    /// The part ids the events of message `id` named, as `(position, reasoning, partId)`, in
    /// no order.
    pub fn part_ids(&self, id: &str) -> Vec<(usize, bool, String)> {
        let Some(st) = self.state.get(id) else {
            return Vec::new();
        };
        let [text, reasoning] = &st.parts;
        (text.iter().map(|(k, &p)| (p, false, k.clone())))
            .chain(reasoning.iter().map(|(k, &p)| (p, true, k.clone())))
            .collect()
    }

    /// The history was replaced by one in which only the messages `keep` names are as they
    /// were: the others' bookkeeping goes, as after a hydration.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.state.retain(|id, _| keep(id));
        self.open.retain(|(id, _)| keep(id));
        self.aliases.retain(|_, id| keep(id));
        if !self.answer.as_ref().is_some_and(|(row, _)| keep(row)) {
            self.answer = None;
        }
        if !self.pending_user.as_deref().is_some_and(&keep) {
            self.pending_user = None;
        }
        self.last_delta = None;
    }
}
