//! The pi reducer (SPEC §7): `data-pi-*` projection events into the message history.
//!
//! The server's pi agent owns history; this reducer mirrors it from the projection stream.
//! Real servers repeat, rename and reorder things (see the `legacy-server` fixtures), so every
//! rule here is about applying each fact once, in the right place:
//! - a seq watermark per turn skips duplicates and replays;
//! - parts are keyed by `partId` (text, reasoning) and `toolCallId` (tools) within a message;
//! - a message-end whose id differs from its start is an alias of the open message of that role;
//! - `-end` texts and `final` snapshots replace what deltas built;
//! - tool results attach to the owning tool part, never as a bubble of their own.
//!
//! Effects the store must act on (follow-up consumption, the turn id, the mode switch, data for
//! the host) come out as [`PiEffect`]s; the reducer never touches the follow-up queue itself.

use crate::util::hash::HashMap;

use serde_json::{Map as Object, Value};

use crate::protocol::chunk::{PartKind, PiEvent};
use crate::protocol::{Json, Part, Role, TextState, ToolPart, ToolState, UIMessage};

use super::History;

/// What the store must do after an event.
#[derive(Debug, Clone, PartialEq)]
pub enum PiEffect {
    /// A user message was committed by the server; with a nonce, it is the follow-up queued
    /// under that nonce.
    UserMessage {
        /// The server's `messageId` of the committed message.
        message_id: String,
        /// The `clientNonce` it carried, if any: the queued follow-up it commits.
        client_nonce: Option<String>,
    },
    /// `data-followup-consumed`.
    FollowUpConsumed {
        /// The chunk's `clientNonce`, if it had one.
        client_nonce: Option<String>,
        /// The chunk's `clientSeq`, if it had one.
        client_seq: Option<u64>,
    },
    /// A `data-pi-*` event this version does not know: for the host's `onData`, not history.
    Data {
        /// The chunk's name without `data-` (`pi-…`).
        name: String,
        /// The chunk's `data`.
        data: Value,
    },
    /// Something odd but survivable (an event for an unknown message, …).
    Diagnostic(String),
}

#[derive(Debug, Default, Clone)]
struct MessageState {
    /// Text (`[0]`) and reasoning (`[1]`) parts by partId → position in `parts` (two maps of
    /// the one type the other maps have, not a third type of map in the wasm).
    parts: [HashMap<String, usize>; 2],
    /// Tool parts by toolCallId → position in `parts`.
    tools: HashMap<String, usize>,
    /// Streamed tool input text by toolCallId, until the call's end gives the input.
    tool_text: HashMap<String, String>,
    /// The message received text or reasoning part events: legacy message deltas, which
    /// duplicate text deltas, are then redundant. Tool events carry no text: they do not count.
    part_events: bool,
    /// Positions of the text parts built from legacy `data-pi-message-delta`s, in order (a
    /// tool call between two runs of text splits them, as the part events would).
    legacy: Vec<usize>,
}

impl MessageState {
    /// Part positions after `removed` moved down by one.
    fn shift_after(&mut self, removed: usize) {
        let [text, reasoning] = &mut self.parts;
        for i in (text.values_mut())
            .chain(reasoning.values_mut())
            .chain(self.tools.values_mut())
        {
            if *i > removed {
                *i -= 1;
            }
        }
    }
}

/// The pi projection reducer. One per session; it lives as long as the session's history.
#[derive(Debug, Default, Clone)]
pub struct PiReducer {
    watermark: Option<u64>,
    /// The highest seq of an applied legacy delta. It is kept apart from `watermark`: a legacy
    /// delta must not hide the part delta it duplicates (same seq, which may come second), yet
    /// a replayed legacy delta must not append its text again.
    legacy_watermark: Option<u64>,
    /// The id of the current turn's `data-turn-start`: the same start again is a replay of
    /// this turn (a stream resumed from its beginning), not a new turn.
    turn: Option<String>,
    /// The watermarks of the last turns left (their id, `watermark`, `legacy_watermark`): a
    /// start of one of them is a replay of it (a stream route that replays the last turn,
    /// as the legacy server's does after a stop), whose applied events are skipped.
    past: Vec<(String, Option<u64>, Option<u64>)>,
    state: HashMap<String, MessageState>,
    /// Other ids a server used for a message (message-end ids, `final.id`) → the history id.
    aliases: HashMap<String, String>,
    /// Started and not yet ended messages, in start order.
    open: Vec<(String, Role)>,
    /// The optimistic user message of the turn this client started, which the turn's first
    /// user message-start (without a follow-up nonce) replaces.
    pending_user: Option<String>,
    /// Where the last event, a text or reasoning delta, went: (messageId, reasoning, partId,
    /// message position, part position, history revision after it). The next delta of the
    /// same part, with no other event and no history change in between, goes there directly:
    /// every lookup would find the same.
    last_delta: Option<(String, bool, String, usize, usize, u64)>,
}

/// How many turns left behind keep their watermarks ([`PiReducer::past`]).
const PAST_TURNS: usize = 8;

fn kind_key(kind: PartKind) -> bool {
    kind == PartKind::Reasoning
}

fn new_text_part(kind: PartKind, text: String, state: Option<TextState>) -> Part {
    match kind {
        PartKind::Text => Part::Text {
            text,
            state,
            provider_metadata: None,
            citations: None,
        },
        PartKind::Reasoning => Part::Reasoning {
            id: None,
            text,
            state,
            provider_metadata: None,
        },
    }
}

fn text_of(part: &mut Part) -> Option<(&mut String, &mut Option<TextState>)> {
    match part {
        Part::Text { text, state, .. } | Part::Reasoning { text, state, .. } => Some((text, state)),
        _ => None,
    }
}

/// A tool result's output as the canonical history stores it: the `content` of a whole pi
/// result (`{content: [...], details?}`), with its `details`; any other value as it is.
fn result_content(output: Option<Value>) -> (Value, Option<Value>) {
    match output {
        Some(Value::Object(mut o)) if o.contains_key("content") => {
            let details = o.remove("details");
            (o.remove("content").unwrap_or(Value::Null), details)
        }
        other => (other.unwrap_or(Value::Null), None),
    }
}

/// A tool error's text: pi results are `[{type:"text", text}]` lists or plain strings.
fn error_text(output: Option<&Value>) -> String {
    match output {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => {
            let texts: Vec<&str> = items
                .iter()
                .filter_map(|i| i.get("text").and_then(Value::as_str))
                .collect();
            if texts.is_empty() {
                crate::protocol::json::to_string(&Value::Array(items.clone()))
            } else {
                texts.join("\n")
            }
        }
        // `{content: [...]}`: a whole pi tool result.
        Some(v) => match v.get("content") {
            Some(c) => error_text(Some(c)),
            None => crate::protocol::json::to_string(v),
        },
        None => String::from("Tool failed"),
    }
}

impl PiReducer {
    /// A reducer for an empty history, before any turn.
    pub fn new() -> Self {
        PiReducer::default()
    }

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

    fn resolve(&self, id: &str) -> String {
        self.aliases
            .get(id)
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    /// The message `id` names, created as an assistant message when the server never started
    /// it (a resumed stream, a server bug): its content is kept and the oddity reported.
    fn ensure_message(&mut self, h: &mut History, id: &str, out: &mut Vec<PiEffect>) -> usize {
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
        if !self.pending_user.as_deref().is_some_and(&keep) {
            self.pending_user = None;
        }
        self.last_delta = None;
    }

    /// A message known only from the canonical history (complete there) whose part events a
    /// replayed stream repeats without its start: they are already in it.
    fn known_complete(&self, h: &History, message_id: &str) -> bool {
        let id = self.resolve(message_id);
        h.position(&id).is_some() && !self.state.contains_key(&id)
    }

    /// A part delta read in place (the store's fast path): the same as [`apply`](Self::apply)
    /// with `PiEvent::PartDelta`; only a delta that does not extend the last one builds it.
    pub fn apply_delta(
        &mut self,
        h: &mut History,
        seq: u64,
        kind: PartKind,
        (message_id, part_id): (&str, &str),
        delta: &str,
        out: &mut Vec<PiEffect>,
    ) -> bool {
        if self.watermark.is_some_and(|w| seq <= w) {
            return false; // as `apply` would say
        }
        if self.append_to_last(h, kind, message_id, part_id, delta) {
            self.watermark = Some(seq);
            return true;
        }
        let ev = PiEvent::PartDelta {
            seq: Some(seq),
            kind,
            message_id: message_id.to_owned(),
            part_id: part_id.to_owned(),
            delta: delta.to_owned(),
        };
        self.apply(h, ev, out)
    }

    /// A delta to the part the last delta went to, with nothing changed in between, is
    /// appended without looking the message and part up again; false when it is not one.
    fn append_to_last(
        &mut self,
        h: &mut History,
        kind: PartKind,
        message_id: &str,
        part_id: &str,
        delta: &str,
    ) -> bool {
        let Some((m, k, part, i, p, rev)) = &mut self.last_delta else {
            return false;
        };
        if *rev != h.revision() || m != message_id || *k != kind_key(kind) || part != part_id {
            return false;
        }
        if let Some((text, _)) = text_of(&mut h.append_mut(*i).parts[*p]) {
            text.push_str(delta);
        }
        *rev = h.revision();
        true
    }

    /// Applies one event. Returns whether history changed.
    pub fn apply(&mut self, h: &mut History, ev: PiEvent, out: &mut Vec<PiEffect>) -> bool {
        let seq = ev.seq();
        let legacy = matches!(ev, PiEvent::LegacyMessageDelta { .. });
        let mark = if legacy {
            self.watermark.max(self.legacy_watermark)
        } else {
            self.watermark
        };
        if let (Some(s), Some(w)) = (seq, mark) {
            if s <= w {
                return false; // a duplicate or a replay of what was applied
            }
        }
        // A legacy delta duplicates a part delta under the same seq: it must not raise the
        // watermark, or the part delta it duplicates would be skipped when it comes second.
        if let Some(s) = seq {
            if legacy {
                self.legacy_watermark = Some(s);
            } else {
                self.watermark = Some(s);
            }
        }
        if let PiEvent::PartDelta {
            kind,
            message_id,
            part_id,
            delta,
            ..
        } = &ev
        {
            if self.append_to_last(h, *kind, message_id, part_id, delta) {
                return true;
            }
        }
        self.last_delta = None;
        let before = h.revision();
        match ev {
            // The mode is the authority gate's (`conversation.rs`); a turn-start of another
            // turn than the one followed restarts the watermark.
            PiEvent::Mode { .. } => {}
            PiEvent::TurnStart { turn_id } => {
                if self.turn.as_deref() != Some(turn_id.as_str()) {
                    self.new_turn();
                    // A turn followed before: what of it was applied is not applied again.
                    if let Some(i) = self.past.iter().position(|(t, _, _)| *t == turn_id) {
                        let (_, w, lw) = self.past.remove(i);
                        (self.watermark, self.legacy_watermark) = (w, lw);
                    }
                    self.turn = Some(turn_id);
                }
            }
            PiEvent::AgentStart { .. } | PiEvent::AgentEnd { .. } => {}
            PiEvent::MessageStart {
                message_id,
                role,
                client_nonce,
                text,
                ..
            } => {
                let mut id = self.resolve(&message_id);
                if let Some(own) = h.id_for(&id, role) {
                    // Another role's message holds the id (a server numbering each role on
                    // its own): this one is another message, under an id of its own.
                    self.aliases.insert(message_id.clone(), own.clone());
                    id = own;
                }
                if let Some(at) = h.position(&id) {
                    // A duplicate start, or the turn's own user message already known from a
                    // canonical history loaded while the turn began: then the optimistic copy
                    // is that message twice, and goes.
                    let own = client_nonce.is_none() && role == Role::User;
                    let local = if own { self.pending_user.take() } else { None };
                    // Only a copy that says what the start says is that message: a start
                    // replayed with another text is an older message's, and the prompt's copy
                    // waits on for its own start.
                    let same = |l: &String| {
                        let says =
                            |m: &UIMessage| m.text().trim() == text.as_deref().unwrap_or("").trim();
                        text.is_none() || h.get(l).is_some_and(says)
                    };
                    match local {
                        Some(l) if l != id && !same(&l) => self.pending_user = Some(l),
                        Some(l) => {
                            if let Some(i) = h.position(&l).filter(|_| l != id) {
                                h.remove(i);
                                return true;
                            }
                        }
                        None => {}
                    }
                    if self.state.contains_key(&id) {
                        return false;
                    }
                    // Known only from the canonical history, and the stream replays it from its
                    // start (a resume from before it): rebuilt from the replay, so its parts are
                    // not doubled.
                    self.state.insert(id.clone(), MessageState::default());
                    self.open.push((id.clone(), role));
                    let msg = h.at_mut(at);
                    msg.parts.clear();
                    if let Some(t) = text.filter(|t| !t.is_empty()) {
                        let state = (role == Role::Assistant).then_some(TextState::Streaming);
                        msg.parts.push(Part::text(t, state));
                    }
                    return true;
                }
                self.state.insert(id.clone(), MessageState::default());
                let adopt = match (&client_nonce, role, self.pending_user.take()) {
                    (None, Role::User, Some(local)) => h.position(&local),
                    (_, _, pending) => {
                        self.pending_user = pending;
                        None
                    }
                };
                if let Some(i) = adopt {
                    // The turn's own user message: the optimistic copy becomes the committed
                    // one (the server's id, the server's text; files kept).
                    h.rename(i, &id);
                    if let Some(t) = text {
                        let msg = h.at_mut(i);
                        match msg.parts.iter_mut().find_map(text_of) {
                            Some((old, _)) => *old = t,
                            None => msg.parts.insert(0, Part::text(t, None)),
                        }
                    }
                } else {
                    let mut msg = UIMessage::new(id.clone(), role);
                    if let Some(t) = text.filter(|t| !t.is_empty()) {
                        let state = (role == Role::Assistant).then_some(TextState::Streaming);
                        msg.parts.push(Part::text(t, state));
                    }
                    h.push(msg);
                }
                self.open.push((id.clone(), role));
                if role == Role::User {
                    out.push(PiEffect::UserMessage {
                        message_id: id,
                        client_nonce,
                    });
                }
            }
            PiEvent::MessageEnd {
                message_id,
                role,
                text,
                final_message,
                ..
            } => self.message_end(h, message_id, role, text, final_message, out),
            PiEvent::PartStart {
                kind,
                message_id,
                part_id,
                ..
            } => {
                if self.known_complete(h, &message_id) {
                    return false;
                }
                let i = self.ensure_message(h, &message_id, out);
                self.part_index(h, i, kind, part_id);
            }
            PiEvent::PartDelta {
                kind,
                message_id,
                part_id,
                delta,
                ..
            } => {
                if self.known_complete(h, &message_id) {
                    return false;
                }
                let i = self.ensure_message(h, &message_id, out);
                let p = self.part_index(h, i, kind, part_id.clone());
                if let Some((text, _)) = text_of(&mut h.at_mut(i).parts[p]) {
                    text.push_str(&delta);
                }
                let key = (message_id, kind_key(kind), part_id);
                self.last_delta = Some((key.0, key.1, key.2, i, p, h.revision()));
            }
            PiEvent::PartEnd {
                kind,
                message_id,
                part_id,
                text,
                ..
            } => {
                if self.known_complete(h, &message_id) {
                    return false;
                }
                let i = self.ensure_message(h, &message_id, out);
                let p = self.part_index(h, i, kind, part_id);
                // A repeated end that says what the part already is changes nothing: the
                // message keeps its version, so the UI keeps its object.
                let repeated = match &h.messages()[i].parts[p] {
                    Part::Text {
                        text: old, state, ..
                    }
                    | Part::Reasoning {
                        text: old, state, ..
                    } => *state == Some(TextState::Done) && !matches!(&text, Some(t) if t != old),
                    _ => true,
                };
                if !repeated {
                    if let Some((old, state)) = text_of(&mut h.at_mut(i).parts[p]) {
                        if let Some(t) = text {
                            *old = t; // the end's full text is authoritative
                        }
                        *state = Some(TextState::Done);
                    }
                }
            }
            PiEvent::ToolCallStart {
                message_id,
                tool_call_id,
                tool_name,
                ..
            } => {
                if self.known_complete(h, &message_id) {
                    return false;
                }
                let i = self.ensure_message(h, &message_id, out);
                self.tool_index(h, i, &tool_call_id, tool_name);
            }
            PiEvent::ToolCallDelta {
                message_id,
                tool_call_id,
                delta,
                ..
            } => {
                if self.known_complete(h, &message_id) {
                    return false;
                }
                let i = self.ensure_message(h, &message_id, out);
                let p = self.tool_index(h, i, &tool_call_id, None);
                let id = h.messages()[i].id.clone();
                let buf = self
                    .state
                    .entry(id)
                    .or_default()
                    .tool_text
                    .entry(tool_call_id)
                    .or_default();
                match delta {
                    Value::String(s) => buf.push_str(&s),
                    // No delta at all (the parser's stand-in for a missing one): appending
                    // `null` would make the whole input unparsable.
                    Value::Null => {}
                    other => buf.push_str(&crate::protocol::json::to_string(&other)),
                }
                // Only a buffer that could be complete is worth a parse; the store shows the
                // input once it is whole (incremental partial JSON is the AI SDK reducer's job).
                let parsed = buf
                    .trim_end()
                    .ends_with(['}', ']'])
                    .then(|| crate::protocol::json::from_slice(buf.as_bytes()).ok())
                    .flatten();
                if let Some(v) = parsed {
                    if let Some(t) = h.at_mut(i).parts[p].as_tool_mut() {
                        if t.state == ToolState::InputStreaming {
                            t.input = Some(v.into());
                        }
                    }
                }
            }
            PiEvent::ToolCallEnd {
                message_id,
                tool_call_id,
                tool_name,
                input,
                ..
            } => {
                if self.known_complete(h, &message_id) {
                    return false;
                }
                let i = self.ensure_message(h, &message_id, out);
                let p = self.tool_index(h, i, &tool_call_id, tool_name);
                let id = h.messages()[i].id.clone();
                let streamed = self
                    .state
                    .get_mut(&id)
                    .and_then(|s| s.tool_text.remove(&tool_call_id));
                let input = input.or_else(|| {
                    streamed.and_then(|s| crate::protocol::json::from_slice(s.as_bytes()).ok())
                });
                // The same end again (servers send it twice) changes nothing, not even the
                // message's version.
                let repeated = h.messages()[i].parts[p].as_tool().is_some_and(|t| {
                    (input.is_none()
                        || t.input
                            .as_ref()
                            .zip(input.as_ref())
                            .is_some_and(|(a, b)| a == b))
                        && (t.state.is_final() || t.state == ToolState::InputAvailable)
                });
                if !repeated {
                    if let Some(t) = h.at_mut(i).parts[p].as_tool_mut() {
                        if input.is_some() {
                            t.input = input.map(Json::from);
                        }
                        // A repeated end after the result must not take the call back in time.
                        if !t.state.is_final() {
                            t.state = ToolState::InputAvailable;
                        }
                    }
                }
            }
            PiEvent::ToolResult {
                message_id,
                tool_call_id,
                tool_name,
                output,
                is_error,
                details,
                ..
            } => {
                let (i, p) = match self.find_tool(h, &message_id, &tool_call_id) {
                    Some(found) => found,
                    None => {
                        out.push(PiEffect::Diagnostic(format!(
                            "tool result for unknown tool call {tool_call_id}"
                        )));
                        let i = self.ensure_message(h, &message_id, out);
                        (i, self.tool_index(h, i, &tool_call_id, tool_name))
                    }
                };
                if let Some(t) = h.at_mut(i).parts[p].as_tool_mut() {
                    let denied = (t.approval.as_deref())
                        .and_then(|a| a.get("approved"))
                        .and_then(Value::as_bool)
                        == Some(false);
                    // The question is answered: it waits no more.
                    t.extra.remove("interrupt");
                    if denied {
                        // The blocked result of a denied call: what the `ai` package shows
                        // as a denial.
                        t.state = ToolState::OutputDenied;
                        t.output = None;
                        t.error_text = None;
                    } else if is_error {
                        t.state = ToolState::OutputError;
                        t.error_text = Some(error_text(output.as_ref()));
                        t.output = None;
                    } else {
                        // The result's `content`, as the history stores it; a whole result
                        // object's `details` are kept beside, for renderers.
                        let (output, inner) = result_content(output);
                        t.state = ToolState::OutputAvailable;
                        t.output = Some(output.into());
                        t.error_text = None;
                        if details.is_none() && inner.is_some() {
                            t.details = inner.map(Json::from);
                        }
                    }
                    if details.is_some() {
                        t.details = details.map(Json::from);
                    }
                }
            }
            PiEvent::ToolApprovalRequest {
                message_id,
                tool_call_id,
                approval_id,
                reason,
                ..
            } => {
                let mut approval = Object::new();
                approval.insert("id".into(), Value::String(approval_id));
                if let Some(r) = reason {
                    approval.insert("requestReason".into(), Value::String(r));
                }
                self.wait_on_user(h, &message_id, &tool_call_id, out, |t| {
                    t.state = ToolState::ApprovalRequested;
                    t.approval = Some(Box::new(Value::Object(approval)));
                });
            }
            PiEvent::ToolApprovalResponse {
                message_id,
                tool_call_id,
                approval_id,
                approved,
                reason,
                ..
            } => {
                self.wait_on_user(h, &message_id, &tool_call_id, out, |t| {
                    let mut approval = match t.approval.as_deref() {
                        Some(Value::Object(a)) => a.clone(),
                        _ => Object::new(),
                    };
                    approval.insert("id".into(), Value::String(approval_id));
                    approval.insert("approved".into(), Value::Bool(approved));
                    if let Some(r) = reason {
                        approval.insert("reason".into(), Value::String(r));
                    }
                    t.state = ToolState::ApprovalResponded;
                    t.approval = Some(Box::new(Value::Object(approval)));
                });
            }
            PiEvent::ToolInputRequest {
                message_id,
                tool_call_id,
                question,
                options,
                ..
            } => {
                let interrupt = serde_json::json!({
                    "question": question.unwrap_or_default(),
                    "options": options.unwrap_or_default(),
                });
                self.wait_on_user(h, &message_id, &tool_call_id, out, |t| {
                    t.state = ToolState::InputAvailable;
                    t.extra.insert("interrupt".into(), interrupt);
                });
            }
            PiEvent::LegacyMessageDelta {
                message_id, delta, ..
            } => {
                if self.known_complete(h, &message_id) {
                    return false;
                }
                let i = self.ensure_message(h, &message_id, out);
                let id = h.messages()[i].id.clone();
                let st = self.state.entry(id).or_default();
                if st.part_events {
                    return false; // the part events already carry this text
                }
                let msg = h.at_mut(i);
                match st.legacy.last() {
                    // The text goes on while its part is still the message's last one.
                    Some(&p) if p + 1 == msg.parts.len() => {
                        if let Some((text, _)) = text_of(&mut msg.parts[p]) {
                            text.push_str(&delta);
                        }
                    }
                    // The first text, or text after a tool call: a part of its own, after it.
                    _ => {
                        msg.parts
                            .push(Part::text(delta, Some(TextState::Streaming)));
                        st.legacy.push(msg.parts.len() - 1);
                    }
                }
            }
            PiEvent::FollowUpConsumed {
                client_nonce,
                client_seq,
                ..
            } => out.push(PiEffect::FollowUpConsumed {
                client_nonce,
                client_seq,
            }),
            PiEvent::Other { name, data } => out.push(PiEffect::Data {
                name: format!("pi-{}", name.strip_prefix("pi-").unwrap_or(&name)),
                data,
            }),
        }
        h.revision() != before
    }

    fn message_end(
        &mut self,
        h: &mut History,
        message_id: String,
        role: Role,
        text: Option<String>,
        final_message: Option<UIMessage>,
        out: &mut Vec<PiEffect>,
    ) {
        let mut id = self.resolve(&message_id);
        if h.position(&id).is_none() {
            // Servers seen in the wild end a user message under another id than its start:
            // it is the open message of that role.
            match self.open.iter().rev().find(|(_, r)| *r == role) {
                Some((open_id, _)) => {
                    self.aliases.insert(message_id.clone(), open_id.clone());
                    id = open_id.clone();
                }
                None => {
                    out.push(PiEffect::Diagnostic(format!(
                        "message end for unknown message {message_id}"
                    )));
                    h.push(UIMessage::new(id.clone(), role));
                }
            }
        }
        self.open.retain(|(o, _)| *o != id);
        let Some(i) = h.position(&id) else { return };
        if let Some(fin) = final_message {
            // The final snapshot is the message: it replaces what the deltas built.
            if fin.id != id {
                self.aliases.insert(fin.id.clone(), id.clone());
            }
            let st = self.state.entry(id.clone()).or_default();
            st.parts = Default::default();
            st.tools.clear();
            st.tool_text.clear();
            st.legacy.clear();
            st.part_events = true;
            for (p, part) in fin.parts.iter().enumerate() {
                if let Part::Tool(t) = part {
                    st.tools.insert(t.tool_call_id.clone(), p);
                }
            }
            let msg = h.at_mut(i);
            msg.parts = fin.parts;
            if fin.metadata.is_some() {
                msg.metadata = fin.metadata;
            }
            return;
        }
        let current = &h.messages()[i];
        let text_parts = current
            .parts
            .iter()
            .filter(|p| matches!(p, Part::Text { .. }))
            .count();
        let streaming = current.parts.iter().any(|p| {
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
        });
        let replace_text = match &text {
            // With several text parts the end's joined text cannot be attributed; the parts
            // stand as their own ends made them.
            Some(t) => {
                (text_parts == 0 && !t.is_empty()) || (text_parts == 1 && current.text() != *t)
            }
            None => false,
        };
        if !replace_text && !streaming {
            return; // a duplicate end, or nothing to settle
        }
        let msg = h.at_mut(i);
        if let (true, Some(t)) = (replace_text, text) {
            let state = (role == Role::Assistant).then_some(TextState::Done);
            match msg
                .parts
                .iter_mut()
                .find(|p| matches!(p, Part::Text { .. }))
            {
                Some(Part::Text { text, .. }) => *text = t,
                _ => msg.parts.push(Part::text(t, state)),
            }
        }
        for p in &mut msg.parts {
            if let Some((_, state)) = text_of(p) {
                if state.is_some() {
                    *state = Some(TextState::Done);
                }
            }
        }
    }

    /// The position of the (kind, partId) part of message `i`, created if new.
    fn part_index(&mut self, h: &mut History, i: usize, kind: PartKind, part_id: String) -> usize {
        let id = h.messages()[i].id.clone();
        let st = self.state.entry(id).or_default();
        st.part_events = true;
        // Real part events supersede the legacy text built before them (last first, so the
        // positions still to remove stay valid).
        for legacy in std::mem::take(&mut st.legacy).into_iter().rev() {
            h.at_mut(i).parts.remove(legacy);
            st.shift_after(legacy);
        }
        let parts = &mut st.parts[usize::from(kind_key(kind))];
        if let Some(&p) = parts.get(&part_id) {
            return p;
        }
        let msg = h.at_mut(i);
        msg.parts.push(new_text_part(
            kind,
            String::new(),
            Some(TextState::Streaming),
        ));
        let p = msg.parts.len() - 1;
        parts.insert(part_id, p);
        p
    }

    /// A call that waits for the user (SPEC §13): `wait` sets its state, unless it has its
    /// outcome already (a replayed request after the result must not take it back in time).
    /// An unknown call gets its part, and a diagnostic.
    fn wait_on_user(
        &mut self,
        h: &mut History,
        message_id: &str,
        tool_call_id: &str,
        out: &mut Vec<PiEffect>,
        wait: impl FnOnce(&mut ToolPart),
    ) {
        let (i, p) = match self.find_tool(h, message_id, tool_call_id) {
            Some(found) => found,
            None => {
                out.push(PiEffect::Diagnostic(format!(
                    "a wait for the user on unknown tool call {tool_call_id}"
                )));
                let i = self.ensure_message(h, message_id, out);
                (i, self.tool_index(h, i, tool_call_id, None))
            }
        };
        let final_already = h.messages()[i].parts[p]
            .as_tool()
            .is_some_and(|t| t.state.is_final());
        if !final_already {
            if let Some(t) = h.at_mut(i).parts[p].as_tool_mut() {
                wait(t);
            }
        }
    }

    /// The position of the tool part `tool_call_id` of message `i`, created if new.
    fn tool_index(
        &mut self,
        h: &mut History,
        i: usize,
        tool_call_id: &str,
        tool_name: Option<String>,
    ) -> usize {
        let id = h.messages()[i].id.clone();
        let st = self.state.entry(id).or_default();
        let existing = st.tools.get(tool_call_id).copied().or_else(|| {
            // A message hydrated from the canonical history has no bookkeeping: look in it.
            h.messages()[i]
                .parts
                .iter()
                .position(|p| p.as_tool().is_some_and(|t| t.tool_call_id == tool_call_id))
        });
        if let Some(p) = existing {
            st.tools.insert(tool_call_id.to_string(), p);
            let unnamed = h.messages()[i].parts[p]
                .as_tool()
                .is_some_and(|t| t.tool_name.is_empty());
            if let (true, Some(name)) = (unnamed, tool_name.filter(|n| !n.is_empty())) {
                if let Some(t) = h.at_mut(i).parts[p].as_tool_mut() {
                    t.extra
                        .insert("toolName".into(), Value::String(name.clone()));
                    t.tool_name = name;
                    t.dynamic = false;
                }
            }
            return p;
        }
        // A static `tool-<toolName>` part, as the server family's canonical history stores pi
        // tool calls (SPEC §7): a reload renders what was streamed. Only a call whose name is
        // not known yet is a `dynamic-tool` until it is.
        let name = tool_name.unwrap_or_default();
        let dynamic = name.is_empty();
        let mut part = ToolPart::new(tool_call_id, name.clone(), dynamic);
        if !dynamic {
            // The stored part names its tool (SPEC §7), beside the `tool-<toolName>` type.
            part.extra.insert("toolName".into(), Value::String(name));
        }
        let msg = h.at_mut(i);
        msg.parts.push(Part::Tool(Box::new(part)));
        let p = msg.parts.len() - 1;
        st.tools.insert(tool_call_id.to_string(), p);
        p
    }

    /// The tool part a result belongs to: in the named message if it has that call, else the
    /// latest message that does (pi names the tool-result message, not the assistant one).
    fn find_tool(
        &mut self,
        h: &History,
        message_id: &str,
        tool_call_id: &str,
    ) -> Option<(usize, usize)> {
        let find_in = |i: usize| {
            h.messages()[i]
                .parts
                .iter()
                .position(|p| p.as_tool().is_some_and(|t| t.tool_call_id == tool_call_id))
                .map(|p| (i, p))
        };
        let named = self.resolve(message_id);
        if let Some(found) = h.position(&named).and_then(find_in) {
            return Some(found);
        }
        (0..h.len()).rev().find_map(find_in)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::chunk::parse_chunk;
    use crate::protocol::chunk::Chunk;

    /// The shortcut for a delta to the same part as the last event changes nothing: random
    /// event sequences give the same history with it as without it, after every event.
    #[test]
    fn the_repeated_delta_shortcut_is_invisible() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let mut total_hits = 0;
        for _ in 0..300 {
            let (mut fast, mut slow) = (PiReducer::new(), PiReducer::new());
            let (mut hf, mut hs) = (History::new(), History::new());
            let (mut seq, mut hits) = (0, 0);
            let (mut m, mut part, mut kind) = ("a1", "0", "text");
            for _ in 0..60 {
                // Mostly the same part again, as a real stream.
                if next(4) == 0 {
                    m = ["a1", "a2"][next(2) as usize];
                    part = ["0", "1"][next(2) as usize];
                    kind = ["text", "reasoning"][next(2) as usize];
                }
                seq += 1;
                let s = if next(10) == 0 { seq / 2 } else { seq };
                let data = match next(12) {
                    0 => format!(
                        r#""type":"data-pi-message-start","data":{{"seq":{s},"messageId":"{m}","role":"assistant"}}"#
                    ),
                    1 => format!(
                        r#""type":"data-pi-{kind}-start","data":{{"seq":{s},"messageId":"{m}","partId":"{part}"}}"#
                    ),
                    2 => format!(
                        r#""type":"data-pi-{kind}-end","data":{{"seq":{s},"messageId":"{m}","partId":"{part}"}}"#
                    ),
                    3 => format!(
                        r#""type":"data-pi-message-end","data":{{"seq":{s},"messageId":"{m}","role":"assistant","text":"t{s}"}}"#
                    ),
                    4 => format!(
                        r#""type":"data-pi-message-delta","data":{{"seq":{s},"messageId":"{m}","delta":"L{s}"}}"#
                    ),
                    5 => format!(
                        r#""type":"data-pi-tool-call-start","data":{{"seq":{s},"messageId":"{m}","toolCallId":"c{s}","toolName":"t"}}"#
                    ),
                    6 => format!(
                        r#""type":"data-pi-message-end","data":{{"seq":{s},"messageId":"{m}","role":"assistant","final":{{"id":"{m}","role":"assistant","parts":[{{"type":"text","text":"F"}}]}}}}"#
                    ),
                    _ => format!(
                        r#""type":"data-pi-{kind}-delta","data":{{"seq":{s},"messageId":"{m}","partId":"{part}","delta":"d{s} "}}"#
                    ),
                };
                let Ok(Chunk::Pi(ev)) = parse_chunk(&format!("{{{data}}}")) else {
                    panic!("{data}")
                };
                // Now and then the host changes the history between two events.
                match next(8) {
                    0 => {
                        for h in [&mut hf, &mut hs] {
                            h.push(UIMessage::user_text(format!("u{seq}"), "hi"));
                        }
                    }
                    // The host's own messages (not the projection's) come and go.
                    1 => {
                        for h in [&mut hf, &mut hs] {
                            if let Some(i) = h.messages().iter().position(|m| m.id.starts_with('u'))
                            {
                                h.remove(i);
                            }
                        }
                    }
                    _ => {}
                }
                let mut out = Vec::new();
                hits += usize::from(fast.last_delta.is_some());
                let a = fast.apply(&mut hf, ev.clone(), &mut out);
                slow.last_delta = None;
                let b = slow.apply(&mut hs, ev, &mut out);
                assert_eq!(a, b);
                assert_eq!(hf.messages(), hs.messages(), "after {data}");
            }
            total_hits += hits;
        }
        assert!(
            total_hits > 1000,
            "the shortcut was tried {total_hits} times"
        );
    }

    /// A user message's start replayed with its own text while this client's prompt waits
    /// for its start: the prompt's optimistic copy is not that message and stays; a start
    /// replayed with the prompt's text is the copy twice, which goes.
    #[test]
    fn a_replayed_start_of_another_text_leaves_the_prompt_copy() {
        let start = |id: &str, text: &str| PiEvent::MessageStart {
            seq: None,
            message_id: id.into(),
            role: Role::User,
            client_nonce: None,
            text: Some(text.into()),
        };
        let mut r = PiReducer::new();
        let mut h = History::new();
        let mut out = Vec::new();
        r.apply(&mut h, start("u1", "older"), &mut out);
        h.push(UIMessage::user_text("local-1", "again"));
        r.set_pending_user(Some("local-1".into()));
        r.apply(&mut h, start("u1", "older"), &mut out);
        let ids: Vec<&str> = h.messages().iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["u1", "local-1"]);
        assert_eq!(r.pending_user(), Some("local-1"));

        h.push(UIMessage::user_text("local-2", "older"));
        r.set_pending_user(Some("local-2".into()));
        r.apply(&mut h, start("u1", "older"), &mut out);
        let ids: Vec<&str> = h.messages().iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["u1", "local-1"]);
    }
}
