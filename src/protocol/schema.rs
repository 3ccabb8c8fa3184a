//! `uiMessageChunkSchema`, the `ai` package's zod schema of a UI message chunk, as a table:
//! the fields each chunk type must or may carry and their types. [`super::chunk`]'s strict
//! reader checks a chunk against it before reading it, as the package's HTTP transport does.

use serde_json::Value;

use super::chunk::ChunkError;
use super::json::Object;
use super::part::plain_chunk_schema;

/// The type of one field in `uiMessageChunkSchema`. `z.optional` refuses `null`;
/// `z.unknown()` takes anything but requires the key.
#[derive(Clone, Copy)]
pub(crate) enum Field {
    Str,
    OptStr,
    Bool,
    OptBool,
    /// Present, any value.
    Any,
    /// `Record<string, Record<string, JSONValue>>`.
    OptProviderMetadata,
    /// `Record<string, JSONValue>`.
    OptObject,
    /// `json` | `text`.
    OptInputEncoding,
    OptFinishReason,
    OptCitations,
    SteeringParts,
    /// Not a field of the chunk (the part it carries has it): not checked.
    Unread,
}

const FINISH_REASONS: [&str; 7] = [
    "stop",
    "length",
    "content-filter",
    "tool-calls",
    "error",
    "interrupted",
    "other",
];

/// The fields `uiMessageChunkSchema` checks for each chunk type (other keys pass untouched).
fn schema(t: &str) -> Option<&'static [(&'static str, Field)]> {
    if let Some(fields) = plain_chunk_schema(t) {
        return Some(fields);
    }
    use Field::*;
    const PM: (&str, Field) = ("providerMetadata", OptProviderMetadata);
    const TOOL_CALL: (&str, Field) = ("toolCallId", Str);
    const TOOL_INPUT: [(&str, Field); 8] = [
        TOOL_CALL,
        ("toolName", Str),
        ("input", Any),
        ("providerExecuted", OptBool),
        PM,
        ("toolMetadata", OptObject),
        ("dynamic", OptBool),
        ("title", OptStr),
    ];
    Some(match t {
        "text-start" | "reasoning-start" | "reasoning-end" => &[("id", Str), PM],
        "text-delta" | "reasoning-delta" => &[("id", Str), ("delta", Str), PM],
        "text-end" => &[("id", Str), ("citations", OptCitations), PM],
        "error" => &[("errorText", Str)],
        "tool-input-start" => &[
            TOOL_CALL,
            ("toolName", Str),
            ("inputEncoding", OptInputEncoding),
            ("providerExecuted", OptBool),
            PM,
            ("toolMetadata", OptObject),
            ("dynamic", OptBool),
            ("title", OptStr),
        ],
        "tool-input-delta" => &[TOOL_CALL, ("inputTextDelta", Str)],
        "tool-input-available" => &TOOL_INPUT,
        "tool-input-error" => &[
            TOOL_INPUT[0],
            TOOL_INPUT[1],
            TOOL_INPUT[2],
            TOOL_INPUT[3],
            TOOL_INPUT[4],
            TOOL_INPUT[5],
            TOOL_INPUT[6],
            TOOL_INPUT[7],
            ("errorText", Str),
        ],
        "tool-approval-request" => &[
            ("approvalId", Str),
            TOOL_CALL,
            ("reason", OptStr),
            ("isAutomatic", OptBool),
            ("signature", OptStr),
        ],
        "tool-approval-response" => &[
            ("approvalId", Str),
            ("approved", Bool),
            ("reason", OptStr),
            ("providerExecuted", OptBool),
            PM,
        ],
        "tool-output-available" => &[
            TOOL_CALL,
            ("output", Any),
            ("providerExecuted", OptBool),
            PM,
            ("toolMetadata", OptObject),
            ("dynamic", OptBool),
            ("preliminary", OptBool),
        ],
        "tool-output-error" => &[
            TOOL_CALL,
            ("errorText", Str),
            ("providerExecuted", OptBool),
            PM,
            ("toolMetadata", OptObject),
            ("dynamic", OptBool),
        ],
        "tool-output-denied" => &[TOOL_CALL],
        "start-step" | "finish-step" | "reset-step" => &[],
        "start" => &[("messageId", OptStr)],
        "finish" => &[("finishReason", OptFinishReason)],
        "abort" => &[("reason", OptStr)],
        "message-metadata" => &[("messageMetadata", Any)],
        _ if t.starts_with("data-") => &[("id", OptStr), ("data", Any), ("transient", OptBool)],
        _ => return None,
    })
}

/// Checks a chunk (without its `type`) against `uiMessageChunkSchema`, and rewrites what the
/// schema's output rewrites: `citations` lose the keys their `z.object` does not name.
pub(super) fn validate(t: &str, o: &mut Object) -> Result<(), ChunkError> {
    let fields = schema(t).ok_or_else(|| ChunkError::UnknownType(t.to_string()))?;
    for &(name, field) in fields {
        let invalid = || ChunkError::Invalid {
            chunk_type: t.to_string(),
            field: name,
        };
        let Some(v) = o.get_mut(name) else {
            match field {
                Field::Str | Field::Bool | Field::Any | Field::SteeringParts => {
                    return Err(ChunkError::missing(t, name))
                }
                _ => continue,
            }
        };
        let ok = match field {
            Field::Str | Field::OptStr => v.is_string(),
            Field::Bool | Field::OptBool => v.is_boolean(),
            Field::Any => true,
            Field::OptProviderMetadata => is_provider_metadata(v),
            Field::OptObject => v.is_object(),
            Field::OptInputEncoding => matches!(v.as_str(), Some("json" | "text")),
            Field::OptFinishReason => v.as_str().is_some_and(|r| FINISH_REASONS.contains(&r)),
            Field::OptCitations => match v {
                Value::Array(list) => list.iter_mut().all(citation),
                _ => false,
            },
            Field::SteeringParts => match v {
                Value::Array(list) => list.iter().all(steering_part),
                _ => false,
            },
            Field::Unread => true,
        };
        if !ok {
            return Err(invalid());
        }
    }
    Ok(())
}

fn is_provider_metadata(v: &Value) -> bool {
    matches!(v, Value::Object(m) if m.values().all(Value::is_object))
}

/// `z.optional(...)` of one of these: absent, or `ok` of the value.
fn opt(o: &Object, k: &str, ok: impl Fn(&Value) -> bool) -> bool {
    o.get(k).is_none_or(ok)
}

fn is_str(o: &Object, k: &str) -> bool {
    o.get(k).is_some_and(Value::is_string)
}

/// One `citationSchema` entry (a strict `z.object`: unknown keys are dropped from its output).
fn citation(v: &mut Value) -> bool {
    let Value::Object(c) = v else { return false };
    let index = |v: &Value| {
        v.as_f64()
            .is_some_and(|n| n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0)
    };
    let ok = opt(c, "startIndex", index)
        && opt(c, "endIndex", index)
        && opt(c, "citedText", Value::is_string)
        && match c.get_mut("source") {
            Some(Value::Object(s)) => {
                let keys: &[&str] = match s.get("sourceType").and_then(Value::as_str) {
                    Some("url") if is_str(s, "url") => &["url"],
                    Some("document") if is_str(s, "mediaType") && is_str(s, "title") => {
                        &["mediaType", "filename"]
                    }
                    _ => return false,
                };
                let ok = s.get("type").and_then(Value::as_str) == Some("source")
                    && is_str(s, "id")
                    && opt(s, "title", Value::is_string)
                    && opt(s, "filename", Value::is_string)
                    && opt(s, "providerMetadata", is_provider_metadata);
                let common = ["type", "sourceType", "id", "title", "providerMetadata"];
                s.retain(|k, _| common.contains(&k.as_str()) || keys.contains(&k.as_str()));
                ok
            }
            _ => false,
        };
    c.retain(|k, _| ["source", "startIndex", "endIndex", "citedText"].contains(&k.as_str()));
    ok
}

/// A `steering-message` part: a text or file part (loose objects).
fn steering_part(v: &Value) -> bool {
    let Value::Object(p) = v else { return false };
    let pm = opt(p, "providerMetadata", is_provider_metadata);
    match p.get("type").and_then(Value::as_str) {
        Some("text") => is_str(p, "text") && pm,
        Some("file") => {
            is_str(p, "mediaType")
                && is_str(p, "url")
                && opt(p, "filename", Value::is_string)
                && opt(
                    p,
                    "providerReference",
                    |r| matches!(r, Value::Object(m) if m.values().all(Value::is_string)),
                )
                && pm
        }
        _ => false,
    }
}
