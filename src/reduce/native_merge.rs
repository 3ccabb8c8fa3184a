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

/// The call has no outcome yet (it runs).
pub fn pending(t: &ToolPart) -> bool {
    matches!(
        t.state,
        ToolState::InputStreaming | ToolState::InputAvailable
    )
}

/// How much a payload says (upstream `payloadRichness`): a string's length, else its JSON's.
fn richness(v: &Value) -> usize {
    match v {
        Value::Null => 1,
        Value::String(s) => s.chars().count(),
        other => crate::protocol::json::to_string(other).len(),
    }
}

fn json_richness(j: &Json) -> usize {
    match j {
        Json::Text(t) => t.len(),
        Json::Tree(v) => richness(v),
    }
}

/// The richer of two payloads, the existing one on a tie: a placeholder (`{}`) never
/// replaces a real result.
fn richer<T: Clone>(
    existing: &Option<T>,
    fin: &Option<T>,
    rich: impl Fn(&T) -> usize,
) -> Option<T> {
    match (existing, fin) {
        (None, f) => f.clone(),
        (e, None) => e.clone(),
        (Some(e), Some(f)) => Some(if rich(f) > rich(e) { f } else { e }.clone()),
    }
}

/// A tool part's `ui` hints (kept as the protocol gave them).
fn ui_of(t: &ToolPart) -> Option<&Value> {
    t.extra.get("ui").filter(|u| u.is_object())
}

/// Two `ui` hints in one (upstream `mergeToolUiMetadata`): the first's `rendererId`,
/// `displayGroup` and `icon` where it has them, `details` merged key by key (the richer
/// value of each).
pub fn merge_ui(existing: Option<&Value>, fin: Option<&Value>) -> Option<Value> {
    let (e, f) = match (existing, fin) {
        (None, f) => return f.cloned(),
        (e, None) => return e.cloned(),
        (Some(e), Some(f)) => (e, f),
    };
    let mut out = Map::new();
    for k in ["rendererId", "displayGroup", "icon"] {
        if let Some(v) = e.get(k).or_else(|| f.get(k)).filter(|v| !v.is_null()) {
            out.insert(k.into(), v.clone());
        }
    }
    let details = match (e.get("details"), f.get("details")) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let mut d = a.clone();
            for (k, v) in b {
                let kept = richer(&d.get(k).cloned(), &Some(v.clone()), richness);
                d.insert(k.clone(), kept.unwrap_or(Value::Null));
            }
            Some(Value::Object(d))
        }
        (a, b) => richer(&a.cloned(), &b.cloned(), richness),
    };
    if let Some(d) = details {
        out.insert("details".into(), d);
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// Puts `ui` on a tool part (merged with what it has).
pub fn add_ui(t: &mut ToolPart, ui: &Value) {
    if let Some(merged) = merge_ui(ui_of(t), Some(ui)) {
        t.extra.insert("ui".into(), merged);
    }
}

/// A tool part a final (or a later copy) says something of, merged into the one shown
/// (upstream `mergeMatchingFinalPart`): the input, result and UI hints the final lacks stay;
/// a settled call keeps its outcome against a stale final (a request-only copy, another
/// state, or one without the result).
pub fn merge_tool(existing: &ToolPart, fin: &ToolPart) -> ToolPart {
    let mut t = fin.clone();
    if existing.tool_name.len() > fin.tool_name.len() {
        t.tool_name = existing.tool_name.clone();
        t.dynamic = existing.dynamic;
    }
    t.input = richer(&existing.input, &fin.input, json_richness);
    for (k, v) in &existing.extra {
        t.extra.entry(k.clone()).or_insert_with(|| v.clone());
    }
    match merge_ui(ui_of(existing), ui_of(fin)) {
        Some(ui) => t.extra.insert("ui".into(), ui),
        None => t.extra.remove("ui"),
    };
    let payload = |p: &ToolPart| p.output.is_some() || p.error_text.is_some();
    let keep = !pending(existing)
        && (pending(fin) || fin.state != existing.state || (payload(existing) && !payload(fin)));
    if keep {
        t.state = existing.state;
        t.output = existing.output.clone();
        t.error_text = existing.error_text.clone();
        t.details = existing.details.clone().or_else(|| fin.details.clone());
    } else {
        t.output = richer(&existing.output, &fin.output, json_richness);
        t.error_text = richer(&existing.error_text, &fin.error_text, |s| s.chars().count());
        t.details = richer(&existing.details, &fin.details, json_richness);
    }
    t
}

/// Whether a `tool-result` still says something to the part it names (upstream
/// `mergeToolResultPart`): an aborted or failed call keeps its outcome, a call that returned
/// keeps it against an error or a poorer output (a placeholder).
pub fn result_applies(t: &ToolPart, is_error: bool, output: &Value) -> bool {
    match t.state {
        ToolState::OutputError | ToolState::OutputDenied => false,
        ToolState::OutputAvailable => {
            !is_error && richness(output) > t.output.as_ref().map_or(0, json_richness)
        }
        _ => true,
    }
}

// ----- a final into its step ---------------------------------------------------------------

fn text_of(p: &Part) -> Option<&str> {
    match p {
        Part::Text { text, .. } | Part::Reasoning { text, .. } => Some(text),
        _ => None,
    }
}

/// Either text contains the other.
fn overlap(a: &str, b: &str) -> bool {
    a.contains(b) || b.contains(a)
}

/// A part the message ended with: its text no longer streams.
fn settled(mut p: Part) -> Part {
    if let Part::Text { state, .. } | Part::Reasoning { state, .. } = &mut p {
        if *state == Some(TextState::Streaming) {
            *state = Some(TextState::Done);
        }
    }
    p
}

/// The identity a part is matched and ordered by.
fn ident<'a>(p: &'a Part, id: &'a PartId) -> Option<&'a str> {
    match p {
        Part::Tool(t) => Some(&t.tool_call_id),
        _ => id.as_deref(),
    }
}

#[derive(Clone, Copy)]
enum From {
    Existing(usize),
    Final(usize),
}

/// The parts of the final of one kind, one per id (the fuller text), in the order of their
/// ids' first places; parts without an id each count.
fn ranked(fin: &[Part], ids: &[PartId], kind: fn(&Part) -> bool) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for j in (0..fin.len()).filter(|&j| kind(&fin[j])) {
        let same = ids[j]
            .as_ref()
            .and_then(|id| out.iter().position(|&k| ids[k].as_ref() == Some(id)));
        match same {
            Some(at) => {
                let len = |k: usize| text_of(&fin[k]).map_or(0, |t| t.chars().count());
                if len(j) >= len(out[at]) {
                    out[at] = j;
                }
            }
            None => out.push(j),
        }
    }
    out
}

/// One message's final merged into the parts that streamed for it (upstream
/// `mergeFinalMessageParts`, the same message's mode): merged kind by kind, then put back in
/// the order the final says, each streamed-only part after the part it followed.
///
/// - text: the final's text replaces a streamed part of its id, or one it contains (the
///   streamed copy is not kept beside it); a streamed text the final does not cover stays,
///   and a final text that a kept one contains is not added twice;
/// - reasoning: matched by id, else by overlapping text; the fuller text wins; none twice;
/// - tools: by call id ([`merge_tool`]); a call the final lacks stays;
/// - other parts (files, notices): each once.
pub fn merge_parts(
    existing: &[Part],
    e_ids: &[PartId],
    fin: &[Part],
    f_ids: &[PartId],
) -> Vec<Part> {
    let mut merged: Vec<(Part, From)> = Vec::new();
    let mut used = vec![false; fin.len()];
    let same_id = |a: &PartId, b: &PartId| a.is_some() && a == b;
    let reasoning: fn(&Part) -> bool = |p| matches!(p, Part::Reasoning { .. });
    let is_text: fn(&Part) -> bool = |p| matches!(p, Part::Text { .. });
    let covered = |merged: &[(Part, From)], kind: fn(&Part) -> bool, t: &str| {
        merged
            .iter()
            .any(|(p, _)| kind(p) && text_of(p).is_some_and(|m| m.contains(t)))
    };

    // Reasoning.
    let f_r = ranked(fin, f_ids, reasoning);
    let pick = |i: usize, j: usize| {
        let (e, f) = (text_of(&existing[i]), text_of(&fin[j]));
        let longer = |t: Option<&str>| t.map_or(0, |t| t.chars().count());
        match longer(f) >= longer(e) {
            true => (fin[j].clone(), From::Final(j)),
            false => (settled(existing[i].clone()), From::Existing(i)),
        }
    };
    let mut unmatched = Vec::new();
    for i in (0..existing.len()).filter(|&i| reasoning(&existing[i])) {
        match f_r
            .iter()
            .find(|&&j| !used[j] && same_id(&e_ids[i], &f_ids[j]))
        {
            Some(&j) => {
                used[j] = true;
                merged.push(pick(i, j));
            }
            None => unmatched.push(i),
        }
    }
    for i in unmatched {
        let text = text_of(&existing[i]).unwrap_or_default();
        let near = f_r
            .iter()
            .find(|&&j| !used[j] && text_of(&fin[j]).is_some_and(|f| overlap(text, f)));
        match near {
            Some(&j) => {
                used[j] = true;
                merged.push(pick(i, j));
            }
            None if !covered(&merged, reasoning, text) => {
                merged.push((settled(existing[i].clone()), From::Existing(i)))
            }
            None => {}
        }
    }
    for &j in &f_r {
        if !used[j] && !covered(&merged, reasoning, text_of(&fin[j]).unwrap_or_default()) {
            used[j] = true;
            merged.push((fin[j].clone(), From::Final(j)));
        }
    }

    // Tools: the final's copies of one call are one; each streamed call meets its copy.
    let mut f_tools: Vec<(usize, ToolPart)> = Vec::new();
    for (j, p) in fin.iter().enumerate() {
        let Part::Tool(t) = p else { continue };
        match f_tools
            .iter_mut()
            .find(|(_, c)| c.tool_call_id == t.tool_call_id)
        {
            Some((_, c)) => *c = merge_tool(c, t),
            None => f_tools.push((j, (**t).clone())),
        }
    }
    let mut met = vec![false; f_tools.len()];
    for (i, p) in existing.iter().enumerate() {
        let Part::Tool(e) = p else { continue };
        let copy = f_tools
            .iter()
            .position(|(_, f)| f.tool_call_id == e.tool_call_id);
        let part = match copy {
            Some(k) if !met[k] => {
                met[k] = true;
                merge_tool(e, &f_tools[k].1)
            }
            _ => (**e).clone(),
        };
        merged.push((Part::Tool(Box::new(part)), From::Existing(i)));
    }
    for (k, (j, t)) in f_tools.into_iter().enumerate() {
        let shown = existing.iter().any(|p| {
            p.as_tool()
                .is_some_and(|e| e.tool_call_id == t.tool_call_id)
        });
        if !met[k] && !shown {
            merged.push((Part::Tool(Box::new(t)), From::Final(j)));
        }
    }

    // Text.
    let f_x = ranked(fin, f_ids, is_text);
    if f_x.is_empty() {
        for i in (0..existing.len()).filter(|&i| is_text(&existing[i])) {
            merged.push((settled(existing[i].clone()), From::Existing(i)));
        }
    } else {
        let mut taken = vec![false; existing.len()];
        for i in (0..existing.len()).filter(|&i| is_text(&existing[i])) {
            if let Some(&j) = f_x
                .iter()
                .find(|&&j| !used[j] && same_id(&e_ids[i], &f_ids[j]))
            {
                used[j] = true;
                taken[i] = true;
                merged.push((fin[j].clone(), From::Final(j)));
            }
        }
        for i in (0..existing.len()).filter(|&i| is_text(&existing[i]) && !taken[i]) {
            let id_shown = e_ids[i].is_some()
                && merged.iter().any(|(_, from)| match *from {
                    From::Existing(k) => e_ids[k] == e_ids[i],
                    From::Final(k) => f_ids[k] == e_ids[i],
                });
            let text = text_of(&existing[i]).unwrap_or_default();
            let in_final = f_x
                .iter()
                .any(|&j| text_of(&fin[j]).is_some_and(|f| f.contains(text)));
            if !id_shown && !in_final {
                merged.push((settled(existing[i].clone()), From::Existing(i)));
            }
        }
        for &j in &f_x {
            if !used[j] && !covered(&merged, is_text, text_of(&fin[j]).unwrap_or_default()) {
                used[j] = true;
                merged.push((fin[j].clone(), From::Final(j)));
            }
        }
    }

    // Files, notices and any other part: each once.
    let other = |p: &Part| {
        !matches!(
            p,
            Part::Text { .. } | Part::Reasoning { .. } | Part::Tool(_)
        )
    };
    for (i, p) in existing.iter().enumerate().filter(|(_, p)| other(p)) {
        merged.push((p.clone(), From::Existing(i)));
    }
    for (j, p) in fin.iter().enumerate().filter(|(_, p)| other(p)) {
        if !merged.iter().any(|(m, _)| m == p) {
            merged.push((p.clone(), From::Final(j)));
        }
    }

    order(merged, existing, e_ids, fin, f_ids)
}

/// The merged parts in the order the final gives (upstream `orderPartsBySourceSequence`): a
/// part the final has (by identity, or the final's own part) at its place there; a streamed
/// part the final lacks just after the last streamed part before it that the final has.
fn order(
    merged: Vec<(Part, From)>,
    existing: &[Part],
    e_ids: &[PartId],
    fin: &[Part],
    f_ids: &[PartId],
) -> Vec<Part> {
    let final_pos = |id: &str| (0..fin.len()).find(|&j| ident(&fin[j], &f_ids[j]) == Some(id));
    let span = (existing.len() + 1) as f64;
    let (mut anchor, mut sub) = (-1.0_f64, 0.0_f64);
    let stream_key: Vec<f64> = (0..existing.len())
        .map(
            |i| match ident(&existing[i], &e_ids[i]).and_then(final_pos) {
                Some(j) => {
                    (anchor, sub) = (j as f64, 0.0);
                    anchor
                }
                None => {
                    sub += 1.0;
                    anchor + sub / span
                }
            },
        )
        .collect();
    let mut keyed: Vec<(f64, Part)> = merged
        .into_iter()
        .map(|(p, from)| {
            let id = match from {
                From::Existing(i) => ident(&p, &e_ids[i]).map(str::to_string),
                From::Final(j) => ident(&p, &f_ids[j]).map(str::to_string),
            };
            let key = match (id.as_deref().and_then(final_pos), from) {
                (Some(j), _) | (None, From::Final(j)) => j as f64,
                (None, From::Existing(i)) => stream_key[i],
            };
            (key, p)
        })
        .collect();
    // A stable insertion sort: a step has a handful of parts, and a sort of std's would add
    // its code for one more element type to the wasm.
    for i in 1..keyed.len() {
        let mut j = i;
        while j > 0 && keyed[j - 1].0 > keyed[j].0 {
            keyed.swap(j - 1, j);
            j -= 1;
        }
    }
    keyed.into_iter().map(|(_, p)| p).collect()
}

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

/// A message of this client's the server has not shown yet (its optimistic copy): a user
/// message without the `status` the server's messages carry.
fn unsent(m: &UIMessage) -> bool {
    m.role == Role::User && meta(m, "status").is_none()
}

/// A user message's text, to know it again under another id.
fn user_text(m: &UIMessage) -> String {
    m.text()
}

/// How a `/state` read that shows less than the client (a busy session's state lacks the
/// answer being written; its ids are pi's entry ids, not the streamed ones) goes into the
/// rows shown.
pub struct StateMerge {
    /// The history now.
    pub messages: Vec<UIMessage>,
    /// Rows shown before whose content the state changed: what the reducers knew of them goes.
    pub changed: Vec<String>,
    /// Per state row, the id it is shown under, and whether its parts are the state's own
    /// (a streaming one then goes on from the state's parts).
    pub shown: Vec<(String, bool)>,
}

/// Merges the state's rows `doc` into the rows shown, `local` (upstream
/// `mergeSnapshotMessagesIntoLocal`, with what it lacks: ids that differ). Each state row is
/// the row shown with its id; else, for a user row, the next shown one with its
/// `clientNonce` or (neither having one) its text; else, for an assistant row, the answer
/// shown where it stands (after the same user row). A row shown that the state lacks stays
/// where it is. A matched row keeps its id (a user row the state gives a nonce takes the
/// state's); one being streamed into (`open`) keeps its parts unless the state has it
/// streaming too; another takes the state's copy merged into it, as a final.
pub fn merge_state(
    local: &[UIMessage],
    open: impl Fn(&str) -> bool,
    doc: Vec<UIMessage>,
    doc_streaming: &[bool],
) -> StateMerge {
    enum Row {
        Local(usize),
        Doc(usize),
    }
    let by_id: crate::util::hash::HashMap<&str, usize> = local
        .iter()
        .enumerate()
        .map(|(i, m)| (m.id.as_str(), i))
        .collect();
    let mut matched = vec![false; local.len()];
    let mut pairs: Vec<Option<usize>> = vec![None; doc.len()];
    // A row known by its text or its place is looked for after the last one matched.
    let mut next = 0;
    for (j, s) in doc.iter().enumerate() {
        let by_id = by_id.get(s.id.as_str()).copied().filter(|&k| !matched[k]);
        let free = |k: &usize| !matched[*k] && local[*k].role == s.role;
        let found = by_id.or_else(|| match s.role {
            Role::User => {
                let nonce = meta(s, "clientNonce");
                let text = user_text(s);
                (next..local.len())
                    .filter(free)
                    .find(|&k| nonce.is_some() && meta(&local[k], "clientNonce") == nonce)
                    .or_else(|| {
                        let same = |k: &usize| {
                            let theirs = meta(&local[*k], "clientNonce");
                            (nonce.is_none() || theirs.is_none() || theirs == nonce)
                                && user_text(&local[*k]) == text
                        };
                        // A message on its way may be shown before rows the server listed
                        // ahead of it: it is looked for wherever it is.
                        (next..local.len()).filter(free).find(same).or_else(|| {
                            (0..next)
                                .filter(free)
                                .filter(|&k| unsent(&local[k]))
                                .find(same)
                        })
                    })
            }
            _ => (next..local.len())
                .take_while(|&k| local[k].role != Role::User)
                .filter(free)
                .find(|&k| same_turn(turn_of(&local[k]), turn_of(s))),
        });
        if let Some(k) = found {
            matched[k] = true;
            pairs[j] = Some(k);
            next = next.max(k + 1);
        }
    }
    // The state's order (the server's, for the rows both show); a row only the client shows
    // just after the row before it that the state has too, or after all the state's when it
    // is past the last of those (an answer being written) or a message of this client's on
    // its way to the server (a user message without the status every server message has),
    // which the server will list after what it has.
    let mut doc_of: Vec<Option<usize>> = vec![None; local.len()];
    for (j, k) in pairs.iter().enumerate() {
        if let Some(k) = k {
            doc_of[*k] = Some(j);
        }
    }
    let last = doc_of.iter().rposition(Option::is_some);
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); doc.len() + 1];
    let mut slot = 0;
    for (i, j) in doc_of.iter().enumerate() {
        match j {
            Some(j) => slot = j + 1,
            None if last.is_none_or(|l| i > l) || unsent(&local[i]) => after[doc.len()].push(i),
            None => after[slot].push(i),
        }
    }
    let mut rows: Vec<Row> = Vec::with_capacity(local.len() + doc.len());
    for (k, list) in after.into_iter().enumerate() {
        if k > 0 {
            rows.push(Row::Doc(k - 1));
        }
        rows.extend(list.into_iter().map(Row::Local));
    }

    let mut changed = Vec::new();
    let mut shown: Vec<(String, bool)> = vec![(String::new(), false); doc.len()];
    let mut doc: Vec<Option<UIMessage>> = doc.into_iter().map(Some).collect();
    let mut messages = Vec::with_capacity(rows.len());
    for r in rows {
        match r {
            Row::Local(i) => messages.push(local[i].clone()),
            Row::Doc(j) => {
                let s = doc[j]
                    .take()
                    .unwrap_or_else(|| UIMessage::new("", Role::User));
                let Some(k) = pairs[j] else {
                    // A row the client did not show: under its own id, unless a row shown
                    // holds it.
                    let mut s = s;
                    if by_id.contains_key(s.id.as_str()) {
                        let held = |c: &str| {
                            by_id.contains_key(c)
                                || doc.iter().flatten().any(|d| d.id == c)
                                || messages.iter().any(|m: &UIMessage| m.id == c)
                        };
                        s.id = distinct_id(&s.id, turn_of(&s), &held);
                    }
                    shown[j] = (s.id.clone(), true);
                    messages.push(s);
                    continue;
                };
                let l = &local[k];
                let s_id = s.id.clone();
                // The state has fewer steps of an answer being written than the client (the
                // live server's busy state lacks the message being written): the row goes on
                // as it is. Of as many steps, and not streaming, its message ended among
                // events this client missed: the state's copy stands.
                let behind = steps(&s.parts).len() < steps(&l.parts).len();
                let (m, own) = if open(&l.id) && !doc_streaming[j] && behind {
                    let mut m = l.clone();
                    merge_tools_in_place(&mut m, &s);
                    (m, false)
                } else if (open(&l.id) && doc_streaming[j]) || l.role == Role::User {
                    let mut m = merge_final(l, &[], None, s.clone(), Vec::new());
                    m.parts = s.parts;
                    (m, doc_streaming[j])
                } else {
                    (merge_rows(l, s), false)
                };
                let mut m = m;
                // A user message the state names by its nonce takes the state's id: the
                // client knows it by that nonce. So does this client's optimistic copy known
                // by its text: the server's events name it by the server's id from now on.
                let renamed = l.role == Role::User
                    && (meta(&m, "clientNonce").is_some() || unsent(l))
                    && by_id.get(s_id.as_str()).is_none_or(|&i| i == k);
                if renamed {
                    m.id = s_id;
                }
                if m != *l {
                    changed.push(l.id.clone());
                }
                shown[j] = (m.id.clone(), own);
                messages.push(m);
            }
        }
    }
    StateMerge {
        messages,
        changed,
        shown,
    }
}

/// The state's copy `s` of a row the client shows, `l`, that nothing streams into any more:
/// the copy with more steps (the newer; the state's on a tie), its calls merged with the
/// other's ([`merge_tool`]: a settled outcome stands), under the row's id.
fn merge_rows(l: &UIMessage, s: UIMessage) -> UIMessage {
    let state_newer = steps(&s.parts).len() >= steps(&l.parts).len();
    let (mut newer, older) = match state_newer {
        true => (s.clone(), l),
        false => (l.clone(), &s),
    };
    for p in newer.parts.iter_mut() {
        let Some(t) = p.as_tool_mut() else { continue };
        let same = older
            .parts
            .iter()
            .find_map(|q| q.as_tool().filter(|o| o.tool_call_id == t.tool_call_id));
        if let Some(o) = same {
            // The row shown is the one whose settled outcome stands.
            *t = match state_newer {
                true => merge_tool(o, t),
                false => merge_tool(t, o),
            };
        }
    }
    let status = kept_status(meta(&s, "status"), meta(l, "status"), &newer.parts);
    newer.metadata = Some(Box::new(merged_metadata(
        l.metadata.as_deref(),
        s.metadata.as_deref(),
        status,
    )));
    newer.id = l.id.clone();
    newer
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
