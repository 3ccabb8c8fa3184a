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

use crate::protocol::{Approval, Question};
use crate::util::hash::HashMap;

use serde_json::Value;

use crate::protocol::chunk::{PartKind, PiEvent};
use crate::protocol::{Json, Part, Role, TextState, ToolPart, ToolState, UIMessage};

use super::History;

mod parts;
pub use parts::shape_pi_output;
use parts::{error_text, kind_key, result_content, text_of};

mod deltas;

mod turns;

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
    /// The turn's answer being shown (SPEC §14 "rows are messages of a turn"): its row, and
    /// the server's ids of the messages shown in it as steps, in order. pi writes a message
    /// per model call; an assistant message that starts while this row is the last one is
    /// the answer's next step, not a bubble of its own. A user message ends the answer.
    answer: Option<(String, Vec<String>)>,
    /// pi-native: the gate names the row of every event (by the run's turn ids) and merges
    /// finals itself; the reducer then neither folds steps nor scopes finals to one.
    gate_rows: bool,
}

/// How many turns left behind keep their watermarks ([`PiReducer::past`]).
const PAST_TURNS: usize = 8;

impl PiReducer {
    /// A reducer for an empty history, before any turn.
    pub fn new() -> Self {
        PiReducer::default()
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
                if role == Role::User {
                    self.answer = None;
                } else if let Some(row) = self.next_step_row(h, &message_id, &id) {
                    self.step_into(h, &row, message_id, text);
                    return true;
                }
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
                    if role == Role::Assistant {
                        self.answer = Some((id.clone(), vec![message_id.clone()]));
                    }
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
                    if role == Role::Assistant {
                        self.answer = Some((id.clone(), vec![message_id.clone()]));
                    }
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
                    let denied = t.approval.as_deref().is_some_and(Approval::denied);
                    // The question is answered: it waits no more.
                    t.interrupt = None;
                    // This result's content, not an earlier one's.
                    t.result_content = None;
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
                    shape_pi_output(t);
                }
            }
            PiEvent::ToolApprovalRequest {
                message_id,
                tool_call_id,
                approval_id,
                reason,
                ..
            } => {
                let mut approval = Approval::requested(approval_id);
                approval.set_request_reason(reason);
                self.wait_on_user(h, &message_id, &tool_call_id, out, |t| {
                    t.state = ToolState::ApprovalRequested;
                    t.approval = Some(Box::new(approval));
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
                    let mut approval = t.approval.take().map_or_else(Approval::unasked, |a| *a);
                    approval.answered(approval_id, approved, reason);
                    t.state = ToolState::ApprovalResponded;
                    t.approval = Some(Box::new(approval));
                });
            }
            PiEvent::ToolInputRequest {
                message_id,
                tool_call_id,
                question,
                options,
                ..
            } => {
                let options = Value::from(options.unwrap_or_default());
                let asked = Question::asked(question.unwrap_or_default(), options);
                self.wait_on_user(h, &message_id, &tool_call_id, out, |t| {
                    t.state = ToolState::InputAvailable;
                    t.interrupt = Some(Box::new(asked));
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
