//! Finding and making parts: text parts by kind, tool parts by call, a message's end.

use super::*;

pub(super) fn kind_key(kind: PartKind) -> bool {
    kind == PartKind::Reasoning
}

pub(super) fn new_text_part(kind: PartKind, text: String, state: Option<TextState>) -> Part {
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

pub(super) fn text_of(part: &mut Part) -> Option<(&mut String, &mut Option<TextState>)> {
    match part {
        Part::Text { text, state, .. } | Part::Reasoning { text, state, .. } => Some((text, state)),
        _ => None,
    }
}

/// A tool result's output as the canonical history stores it: the `content` of a whole pi
/// result (`{content: [...], details?}`), with its `details`; any other value as it is.
pub(super) fn result_content(output: Option<Value>) -> (Value, Option<Value>) {
    match output {
        Some(Value::Object(mut o)) if o.contains_key("content") => {
            let details = o.remove("details");
            (o.remove("content").unwrap_or(Value::Null), details)
        }
        other => (other.unwrap_or(Value::Null), None),
    }
}

/// A pi tool's `output` as a tool UI expects it (SPEC §7, extended): pi gives a result as the
/// model reads it, `[{type: "text", text}, …]`, where a tool UI (assistant-ui's `result`, the
/// AI SDK's `output`) expects the tool's output. A result of text parts only shows as its
/// text: one part whose text is a JSON object or array as that value, else the texts joined
/// by newlines; any other content (an image, a plain value) stays as it is. The content as pi
/// gave it stays beside, as `resultContent`, whenever `output` shows it otherwise; the
/// result's `details` stay in `details` (assistant-ui's `artifact`). Applied wherever a pi
/// result enters the history (the stream, a final, a history read), and idempotent: a part
/// shaped already keeps its `resultContent` and gets the same `output`.
pub fn shape_pi_output(t: &mut ToolPart) {
    if t.state != ToolState::OutputAvailable {
        return;
    }
    let Some(content) = t.result_content.take().or_else(|| t.output.take()) else {
        return;
    };
    let shown = shown_output(&content.value());
    match shown {
        Some(v) => {
            t.output = Some(v.into());
            t.result_content = Some(content);
        }
        None => t.output = Some(content),
    }
}

/// What [`shape_pi_output`] shows for `content`, when not the content itself.
fn shown_output(content: &Value) -> Option<Value> {
    let Value::Array(items) = content else {
        return None;
    };
    let text = |i: &Value| match (i.get("type")?.as_str()?, i.get("text")?.as_str()) {
        ("text", Some(t)) => Some(t.to_string()),
        _ => None,
    };
    let texts: Vec<String> = items.iter().map(text).collect::<Option<_>>()?;
    if let [one] = texts.as_slice() {
        if one.trim_start().starts_with(['{', '[']) {
            if let Ok(v) = crate::protocol::json::from_slice(one.as_bytes()) {
                return Some(v);
            }
        }
    }
    (!texts.is_empty()).then(|| Value::String(texts.join("\n")))
}

/// A tool error's text: pi results are `[{type:"text", text}]` lists or plain strings.
pub(super) fn error_text(output: Option<&Value>) -> String {
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
    pub(super) fn message_end(
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
        // A message shown as the last step of its answer's row ends that step only.
        let from = self.last_step_start(h, i);
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
            let msg = h.at_mut(i);
            let mut parts = fin.parts;
            // A call an earlier step shows stays there.
            let earlier = &msg.parts[..from];
            parts.retain(|p| {
                !p.as_tool().is_some_and(|t| {
                    (earlier.iter().filter_map(Part::as_tool))
                        .any(|e| e.tool_call_id == t.tool_call_id)
                })
            });
            msg.parts.truncate(from);
            msg.parts.extend(parts);
            for (p, part) in msg.parts.iter_mut().enumerate().skip(from) {
                if let Part::Tool(t) = part {
                    st.tools.insert(t.tool_call_id.clone(), p);
                    shape_pi_output(t);
                }
            }
            if fin.metadata.is_some() {
                msg.metadata = fin.metadata;
            }
            return;
        }
        let current = &h.messages()[i].parts[from..];
        let text_parts = current
            .iter()
            .filter(|p| matches!(p, Part::Text { .. }))
            .count();
        let step_text = || -> String {
            (current.iter())
                .filter_map(|p| match p {
                    Part::Text { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect()
        };
        let streaming = current.iter().any(|p| {
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
            Some(t) => (text_parts == 0 && !t.is_empty()) || (text_parts == 1 && step_text() != *t),
            None => false,
        };
        if !replace_text && !streaming {
            return; // a duplicate end, or nothing to settle
        }
        let msg = h.at_mut(i);
        if let (true, Some(t)) = (replace_text, text) {
            let state = (role == Role::Assistant).then_some(TextState::Done);
            match msg.parts[from..]
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
    pub(super) fn part_index(
        &mut self,
        h: &mut History,
        i: usize,
        kind: PartKind,
        part_id: String,
    ) -> usize {
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
    pub(super) fn wait_on_user(
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
    pub(super) fn tool_index(
        &mut self,
        h: &mut History,
        i: usize,
        tool_call_id: &str,
        tool_name: Option<String>,
    ) -> usize {
        let id = h.messages()[i].id.clone();
        let from = self.last_step_start(h, i);
        let st = self.state.entry(id).or_default();
        let existing = st.tools.get(tool_call_id).copied().or_else(|| {
            // A message hydrated from the canonical history has no bookkeeping: look in it
            // (in its last step: an earlier step's call of the same id is another call, a
            // provider numbering its calls per model call).
            (h.messages()[i].parts[from..].iter())
                .position(|p| p.as_tool().is_some_and(|t| t.tool_call_id == tool_call_id))
                .map(|p| p + from)
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
    pub(super) fn find_tool(
        &mut self,
        h: &History,
        message_id: &str,
        tool_call_id: &str,
    ) -> Option<(usize, usize)> {
        // The newest part of the call (a provider may number calls per model call: steps of
        // one row may show the same id), within `range` of message `i`'s parts.
        let find_in = |i: usize, range: std::ops::Range<usize>| {
            let parts = &h.messages()[i].parts[range.clone()];
            (parts.iter())
                .rposition(|p| p.as_tool().is_some_and(|t| t.tool_call_id == tool_call_id))
                .map(|p| (i, p + range.start))
        };
        let whole = |i: usize| find_in(i, 0..h.messages()[i].parts.len());
        let named = self.resolve(message_id);
        if let Some(i) = h.position(&named) {
            // A message shown as a step of its answer's row: that step first.
            let step = (self.answer.as_ref())
                .filter(|(row, _)| *row == named && !self.gate_rows)
                .and_then(|(_, shown)| shown.iter().position(|s| s == message_id))
                .and_then(|k| {
                    crate::reduce::native_merge::steps(&h.messages()[i].parts)
                        .get(k)
                        .cloned()
                });
            if let Some(found) = step.and_then(|s| find_in(i, s)).or_else(|| whole(i)) {
                return Some(found);
            }
        }
        (0..h.len()).rev().find_map(whole)
    }
}
