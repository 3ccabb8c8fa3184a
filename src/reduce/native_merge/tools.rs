//! Merging tool parts: what is pending, which of two values is richer, ui hints, results.

use super::*;

/// The call has no outcome yet (it runs).
pub fn pending(t: &ToolPart) -> bool {
    matches!(
        t.state,
        ToolState::InputStreaming | ToolState::InputAvailable
    )
}

/// How much a payload says (upstream `payloadRichness`): a string's length, else its JSON's.
pub(super) fn richness(v: &Value) -> usize {
    match v {
        Value::Null => 1,
        Value::String(s) => s.chars().count(),
        other => crate::protocol::json::to_string(other).len(),
    }
}

pub(super) fn json_richness(j: &Json) -> usize {
    match j {
        Json::Text(t) => t.len(),
        Json::Tree(v) => richness(v),
    }
}

/// The richer of two payloads, the existing one on a tie: a placeholder (`{}`) never
/// replaces a real result.
pub(super) fn richer<T: Clone>(
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
pub(super) fn ui_of(t: &ToolPart) -> Option<&Value> {
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
    // The content as pi gave it goes with the output it shows (pi's rule: `shape_pi_output`).
    if t.output == existing.output {
        t.result_content = existing.result_content.clone();
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
