//! How the pi-native transport writes a message it already shows (SPEC §14.1), by the upstream
//! client's rules (`piChatPartMerging.ts`, `piChatAssistantCommit.ts`, `piChatReducer.ts`):
//! a `message-end` final merges into what streamed, an answer's next message is a step of its
//! row, a run's end settles what it left unfinished, a `/state` read merges into the rows
//! shown. A final describes pi's entry, which lacks what the stream learnt since (tool results,
//! UI hints, reasoning): it is never simply the message.
//!
//! Pure functions on `UIMessage`s; [`super::pi_native::NativeGate`] decides which row an event
//! writes and hands the result to the pi reducer.

use serde_json::{Map, Value};

use crate::protocol::pi_native::EndStatus;
use crate::protocol::{Json, Part, Role, TextState, ToolPart, ToolState, UIMessage};

mod tools;
pub use tools::{add_ui, merge_tool, pending, result_applies};

mod parts;
pub use parts::merge_parts;
use parts::overlap;

mod state;
pub use state::merge_state;

/// A part's identity when a final is matched against the streamed parts: a tool's call id, a
/// text or reasoning part's native id (its `partId`, or its id in a final), when known.
pub type PartId = Option<String>;

// ----- metadata --------------------------------------------------------------------------------

/// A string of the message's metadata (`status`, `turnId`, `clientNonce`, `createdAt`).
pub fn meta<'a>(m: &'a UIMessage, key: &str) -> Option<&'a str> {
    m.metadata.as_deref()?.get(key)?.as_str()
}

/// Sets `key` in the message's metadata (an object; a host's non-object metadata is left).
pub fn set_meta(m: &mut UIMessage, key: &str, v: Value) {
    let meta = m
        .metadata
        .get_or_insert_with(|| Box::new(Value::Object(Map::new())));
    if let Value::Object(o) = meta.as_mut() {
        o.insert(key.into(), v);
    }
}

/// The turn a message belongs to, when the server (or the run it streamed in) said.
pub fn turn_of(m: &UIMessage) -> Option<&str> {
    meta(m, "turnId")
}

/// Two turns may be one: unknown on either side, or the same.
pub fn same_turn(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

/// `aborted` or `error`: how the message ended, which a later final does not undo.
fn terminal(status: Option<&str>) -> bool {
    matches!(status, Some("aborted" | "error"))
}

/// The earlier of two ISO times (`createdAt`); the first when they cannot be compared.
fn earliest(a: Option<&Value>, b: Option<&Value>) -> Option<Value> {
    match (a, b) {
        (None, b) => b.cloned(),
        (a, None) => a.cloned(),
        (Some(Value::String(x)), Some(Value::String(y)))
            if x.len() == y.len() && x.ends_with('Z') && y.ends_with('Z') =>
        {
            Some(Value::String(x.min(y).clone()))
        }
        (a, _) => a.cloned(),
    }
}

/// The message's `createdAt` becomes the earlier of its own and `at`.
pub fn keep_earliest_created_at(m: &mut UIMessage, at: &Value) {
    let now = m.metadata.as_deref().and_then(|d| d.get("createdAt"));
    if let Some(v) = earliest(now, Some(at)) {
        if now != Some(&v) {
            set_meta(m, "createdAt", v);
        }
    }
}

/// A message's status after a final (upstream `preservedFinalMessageStatus`): an aborted or
/// failed message stays so; one whose tools still run streams on, whatever the final says.
fn kept_status(fin: Option<&str>, existing: Option<&str>, parts: &[Part]) -> String {
    if terminal(existing) {
        return existing.unwrap_or_default().to_string();
    }
    let running = parts.iter().any(|p| p.as_tool().is_some_and(pending));
    match fin {
        None | Some("done") if running => "streaming".into(),
        None => "done".into(),
        Some(s) => s.into(),
    }
}

/// The metadata of a message `fin` merges into: its own, with the final's keys over it, the
/// earliest `createdAt` and `status`.
fn merged_metadata(existing: Option<&Value>, fin: Option<&Value>, status: String) -> Value {
    let mut out = match existing {
        Some(Value::Object(o)) => o.clone(),
        _ => Map::new(),
    };
    if let Some(Value::Object(f)) = fin {
        for (k, v) in f {
            let v = match k.as_str() {
                "createdAt" => earliest(out.get(k), Some(v)).unwrap_or(Value::Null),
                _ => v.clone(),
            };
            out.insert(k.clone(), v);
        }
    }
    out.insert("status".into(), Value::String(status));
    Value::Object(out)
}

// ----- tools -----------------------------------------------------------------------------------

// ----- a final into its step ---------------------------------------------------------------

/// The parts of a row as steps (between `step-start` parts): each step's range.
pub fn steps(parts: &[Part]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, p) in parts.iter().enumerate() {
        if matches!(p, Part::StepStart) {
            out.push(start..i);
            start = i + 1;
        }
    }
    out.push(start..parts.len());
    out
}

/// Which step of the row shows a tool call.
fn step_of_call(parts: &[Part], call: &str) -> Option<usize> {
    let at = parts
        .iter()
        .position(|p| p.as_tool().is_some_and(|t| t.tool_call_id == call))?;
    Some(
        parts[..at]
            .iter()
            .filter(|p| matches!(p, Part::StepStart))
            .count(),
    )
}

/// `fin`, the final of the message shown as step `step` of `row` (the last when `None`),
/// merged into the row ([`merge_parts`] on that step; a call an earlier step shows is merged
/// there). `streamed` are the part ids the message's events named, by position. A user
/// message's final is its content as the server stored it.
pub fn merge_final(
    row: &UIMessage,
    streamed: &[(usize, bool, String)],
    step: Option<usize>,
    fin: UIMessage,
    f_ids: Vec<PartId>,
) -> UIMessage {
    let f_ids = match f_ids.len() == fin.parts.len() {
        true => f_ids,
        false => vec![None; fin.parts.len()],
    };
    let parts = match row.role {
        Role::User => fin.parts,
        _ => {
            let ranges = steps(&row.parts);
            let at = step.unwrap_or(usize::MAX).min(ranges.len() - 1);
            let mut parts = row.parts.clone();
            let mut rest = Vec::new();
            let mut rest_ids = Vec::new();
            for (p, id) in fin.parts.into_iter().zip(f_ids) {
                let other = p
                    .as_tool()
                    .and_then(|t| step_of_call(&parts, &t.tool_call_id))
                    .filter(|&s| s != at);
                match (other, &p) {
                    (Some(_), Part::Tool(f)) => {
                        for q in parts.iter_mut() {
                            if let Some(e) =
                                q.as_tool_mut().filter(|e| e.tool_call_id == f.tool_call_id)
                            {
                                *e = merge_tool(e, f);
                            }
                        }
                    }
                    _ => {
                        rest.push(p);
                        rest_ids.push(id);
                    }
                }
            }
            let range = ranges[at].clone();
            let mut e_ids: Vec<PartId> = vec![None; range.len()];
            for (pos, _, id) in streamed {
                if range.contains(pos) {
                    e_ids[pos - range.start] = Some(id.clone());
                }
            }
            let step_parts = merge_parts(&parts[range.clone()], &e_ids, &rest, &rest_ids);
            parts.splice(range, step_parts);
            parts
        }
    };
    let status = kept_status(
        status_in(fin.metadata.as_deref()),
        meta(row, "status"),
        &parts,
    );
    let metadata = merged_metadata(row.metadata.as_deref(), fin.metadata.as_deref(), status);
    UIMessage {
        id: row.id.clone(),
        role: row.role,
        metadata: Some(Box::new(metadata)),
        parts,
    }
}

/// The `status` a message's metadata says.
fn status_in(metadata: Option<&Value>) -> Option<&str> {
    metadata?.get("status")?.as_str()
}

/// The tools of `from` merged into the same calls of `row`, in place (the parts keep their
/// places: the row is still being streamed into).
pub fn merge_tools_in_place(row: &mut UIMessage, from: &UIMessage) {
    for p in &from.parts {
        let Part::Tool(f) = p else { continue };
        for q in row.parts.iter_mut() {
            if let Some(e) = q.as_tool_mut().filter(|e| e.tool_call_id == f.tool_call_id) {
                *e = merge_tool(e, f);
            }
        }
    }
}

/// Whether `fin` says something the row shows: a part of the same identity (a call), or a
/// text or reasoning that overlaps one of its own (upstream `assistantMessagesShareFinalContent`).
pub fn shares_content(row: &UIMessage, fin: &UIMessage) -> bool {
    fin.parts.iter().any(|f| {
        row.parts.iter().any(|r| match (r, f) {
            (Part::Tool(a), Part::Tool(b)) => a.tool_call_id == b.tool_call_id,
            (Part::Text { text: a, .. }, Part::Text { text: b, .. })
            | (Part::Reasoning { text: a, .. }, Part::Reasoning { text: b, .. }) => overlap(a, b),
            _ => false,
        })
    })
}

/// The row shows one of these calls.
pub fn shows_call(row: &UIMessage, calls: &[&str]) -> bool {
    row.parts.iter().any(|p| {
        p.as_tool()
            .is_some_and(|t| calls.contains(&t.tool_call_id.as_str()))
    })
}

// ----- a /state read ---------------------------------------------------------------------------

/// The next message of an answer as a step of its row, in a `/state` document (pi's split:
/// a tool-call message then a text message, one answer): `next`'s parts after a `step-start`,
/// a call the row shows merged there; the row takes `next`'s id, the earliest `createdAt`,
/// and keeps an aborted or failed status. Returns where each of `next`'s parts went.
pub fn fold_step(row: &mut UIMessage, next: UIMessage) -> Vec<Option<usize>> {
    let mut at = Vec::with_capacity(next.parts.len());
    let mut stepped = row.parts.is_empty();
    for p in next.parts {
        if let Part::Tool(f) = &p {
            if let Some(e) = (row.parts.iter_mut())
                .find_map(|q| q.as_tool_mut().filter(|e| e.tool_call_id == f.tool_call_id))
            {
                *e = merge_tool(e, f);
                at.push(None);
                continue;
            }
        }
        if !stepped {
            row.parts.push(Part::StepStart);
            stepped = true;
        }
        at.push(Some(row.parts.len()));
        row.parts.push(p);
    }
    let status = kept_status(
        status_in(next.metadata.as_deref()),
        meta(row, "status"),
        &row.parts,
    );
    let metadata = merged_metadata(row.metadata.as_deref(), next.metadata.as_deref(), status);
    row.metadata = Some(Box::new(metadata));
    row.id = next.id;
    at
}

/// Two rows of a `/state` document are one answer (upstream
/// `shouldMergeAssistantSnapshotMessages`): both assistant, not of two different turns, and
/// the same message or of one known turn.
pub fn one_answer(prev: &UIMessage, next: &UIMessage) -> bool {
    if prev.role != Role::Assistant || next.role != Role::Assistant {
        return false;
    }
    match (turn_of(prev), turn_of(next)) {
        (Some(a), Some(b)) => a == b,
        _ => prev.id == next.id,
    }
}

/// The id a message shown beside an older row holding its id gets: `<id>~<turnId>`, else
/// the first free `<id>~<n>` (n from 2). `taken` says whether an id is held. The same
/// messages met in the same order get the same ids.
pub fn distinct_id(id: &str, turn: Option<&str>, taken: &dyn Fn(&str) -> bool) -> String {
    if let Some(t) = turn {
        let c = format!("{id}~{t}");
        if !taken(&c) {
            return c;
        }
    }
    (2..)
        .map(|n| format!("{id}~{n}"))
        .find(|c| !taken(c))
        .unwrap_or_default()
}

// ----- a run's end -----------------------------------------------------------------------------

/// What a run's end leaves of a row it wrote (upstream `settleTurn`): a call without its
/// result is over (aborted, or failed with the run's error), no text streams, a trailing
/// `step-start` goes; a row the end cut off is `aborted` or `error`, one still `streaming`
/// after a run that ended well is `done`. Returns whether the row changed.
pub fn settle_row(m: &mut UIMessage, status: EndStatus, error: Option<&str>, open: bool) -> bool {
    let mut changed = false;
    let mut cut = false;
    for p in m.parts.iter_mut() {
        match p {
            Part::Tool(t) if pending(t) => {
                t.state = ToolState::OutputError;
                t.output = None;
                t.error_text = Some(match status {
                    EndStatus::Error => error.unwrap_or("the run failed").to_string(),
                    _ => "aborted".to_string(),
                });
                cut = true;
                changed = true;
            }
            Part::Text { state, .. } | Part::Reasoning { state, .. }
                if *state == Some(TextState::Streaming) =>
            {
                *state = Some(TextState::Done);
                changed = true;
            }
            _ => {}
        }
    }
    if matches!(m.parts.last(), Some(Part::StepStart)) {
        m.parts.pop();
        changed = true;
    }
    if m.role != Role::Assistant {
        return changed;
    }
    let now = meta(m, "status");
    let next = match status {
        EndStatus::Ok => (now == Some("streaming")).then_some("done"),
        EndStatus::Aborted | EndStatus::Error if terminal(now) => None,
        _ if cut || open || now == Some("streaming") => Some(match status {
            EndStatus::Error => "error",
            _ => "aborted",
        }),
        _ => None,
    };
    if let Some(s) = next {
        set_meta(m, "status", Value::String(s.into()));
        changed = true;
    }
    changed
}

/// The message says it streams while no call of it runs: once it ended, it is done (its
/// status was `streaming` only for the calls its final left running).
pub fn done_but_calls(m: &UIMessage) -> bool {
    meta(m, "status") == Some("streaming")
        && !m.parts.iter().any(|p| p.as_tool().is_some_and(pending))
}
