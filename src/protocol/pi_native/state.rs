//! The `/state` document: its messages, queue, status and what is still streaming.

use super::*;

/// The session document of `GET …/state`.
#[derive(Debug, Clone, PartialEq)]
pub struct StateDoc {
    /// `seq`: the cursor the events stream opens from.
    pub seq: u64,
    /// `state.status`: `idle`, `streaming` or `error`.
    pub status: String,
    /// `state.activeTurnId`.
    pub active_turn_id: Option<String>,
    /// `state.messages`.
    pub messages: Vec<UIMessage>,
    /// `state.queue.followUps`.
    pub queue: Vec<QueueRow>,
    /// `state.error.message`, when the session is in error.
    pub error: Option<String>,
    /// The assistant messages still streaming, each with its text and reasoning parts as
    /// `(reasoning, partId, position)`: the events after `seq` extend those parts.
    pub streaming: Vec<(String, Vec<StreamedPart>)>,
}

/// `(reasoning, partId, position)`: a streaming message's part its events extend.
pub type StreamedPart = (bool, String, usize);

/// A streaming message's text and reasoning parts by the `partId`s their events may use: its
/// part's own id, and the content index that id ends in (`<messageId>:text:<k>`, reference
/// §8: the stream numbers a message's parts by index), with the part's position.
pub(super) fn streaming_parts(
    m: &UIMessage,
    ids: &[Option<String>],
) -> Option<(String, Vec<StreamedPart>)> {
    let status = m.metadata.as_deref().and_then(|d| d.get("status"));
    if status.and_then(Value::as_str) != Some("streaming") {
        return None;
    }
    let mut out = Vec::new();
    for (position, (part, part_id)) in m.parts.iter().zip(ids).enumerate() {
        let (reasoning, ty) = match part {
            crate::protocol::Part::Text { .. } => (false, "text"),
            crate::protocol::Part::Reasoning { .. } => (true, "reasoning"),
            _ => continue,
        };
        let Some(part_id) = part_id else { continue };
        if let Some(index) = part_id.strip_prefix(&format!("{}:{ty}:", m.id)) {
            out.push((reasoning, index.to_string(), position));
        }
        out.push((reasoning, part_id.clone(), position));
    }
    Some((m.id.clone(), out))
}

/// Reads a `/state` answer (`{ref, seq, summary, state}`; a bare `PiChatSnapshot` too).
/// A `protocolVersion` other than 1 is refused, as the upstream client refuses it.
pub fn parse_state(v: Value) -> Result<StateDoc, String> {
    state_doc(v, |_, list| match list {
        Some(Value::Array(ms)) => ms
            .into_iter()
            .filter_map(|m| native_message(m).ok())
            .collect(),
        _ => Vec::new(),
    })
}

/// [`parse_state`] of a `/state` answer's bytes, without a JSON tree of the whole history:
/// each message is converted as soon as the reader has it (the messages route's
/// `HistoryParser`, which tells the lists a state holds its messages in), and the rest of
/// the document is read as [`parse_state`] reads it. A body that is not JSON is refused with
/// the JSON reader's own words.
pub fn read_state(body: &[u8]) -> Result<StateDoc, String> {
    let mut reader = crate::reduce::history::HistoryParser::for_state(native_message);
    reader.push(body);
    let Some(lists) = reader.finish_state() else {
        // In the whole document's reader's words (it refuses what the list reader refuses).
        let error = crate::protocol::json::from_slice(body).err();
        return Err(error.map_or_else(|| "state is not JSON".into(), |e| e.to_string()));
    };
    let crate::reduce::history::StateLists {
        skeleton,
        top,
        nested,
    } = lists;
    let mut lists = [top, nested];
    state_doc(skeleton, |nested, list| match list {
        Some(Value::Array(_)) => std::mem::take(&mut lists[usize::from(nested)]),
        _ => Vec::new(),
    })
}

/// The `/state` document of [`parse_state`], whose messages `messages` converts: told
/// whether they are `state.messages` (else the top-level list) and given that key's value.
pub(super) fn state_doc(
    v: Value,
    messages: impl FnOnce(bool, Option<Value>) -> Vec<(UIMessage, Vec<Option<String>>)>,
) -> Result<StateDoc, String> {
    let outer_seq = v.get("seq").and_then(Value::as_u64);
    let (mut s, nested) = match v {
        Value::Object(mut o) => match o.remove("state") {
            Some(Value::Object(s)) => (s, true),
            _ => (o, false),
        },
        _ => return Err("state is not an object".into()),
    };
    match s.get("protocolVersion").and_then(Value::as_u64) {
        Some(1) => {}
        _ => {
            // As JSON text: `{:?}` would link Debug formatting into the wasm.
            let v = s
                .get("protocolVersion")
                .map_or("(missing)".into(), to_string);
            return Err(format!("unsupported protocolVersion {v}"));
        }
    }
    let seq = opt_u64(&s, "seq")
        .or(outer_seq)
        .ok_or("state without seq")?;
    let converted = messages(nested, s.remove("messages"));
    let mut streaming = Vec::new();
    let mut messages = Vec::with_capacity(converted.len());
    for (m, ids) in converted {
        streaming.extend(streaming_parts(&m, &ids));
        messages.push(m);
    }
    Ok(StateDoc {
        seq,
        status: take_str(&mut s, "status").unwrap_or_else(|| "idle".into()),
        active_turn_id: take_str(&mut s, "activeTurnId"),
        messages,
        queue: queue_rows(s.get("queue")).unwrap_or_default(),
        error: s
            .get("error")
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .map(str::to_string),
        streaming,
    })
}
