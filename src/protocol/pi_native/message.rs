//! A pi-native message (an entry of `/state` or a `message-end` final) as a `UIMessage`.

use super::*;

/// A `BoringChatMessage` as a `UIMessage`, by the mapping `reference/pi-native-protocol.md`
/// §8 recommends: `text` / `reasoning` as they are (`done`), `tool-call` as a static
/// `tool-<toolName>` part whose output is the result's content (an `aborted` call becomes
/// `output-error` "aborted": the AI SDK has no such state) and whose `ui` hints are kept,
/// `file` as a file part, `notice` as a `data-notice` part; the message's `status`,
/// `createdAt`, `turnId`, `clientNonce`, `clientSeq` and `piEntryId` in its metadata.
pub fn message_from_native(v: Value) -> Result<UIMessage, String> {
    native_message(v).map(|(m, _)| m)
}

/// [`message_from_native`], with each part's native id beside it (a tool's is its call id):
/// a final is merged into the streamed parts by them (`reduce::native_merge`).
pub(crate) fn native_message(v: Value) -> Result<(UIMessage, Vec<Option<String>>), String> {
    let Value::Object(mut m) = v else {
        return Err("message is not an object".into());
    };
    let (parts, ids): (Vec<Value>, Vec<Option<String>>) = match m.remove("parts") {
        Some(Value::Array(ps)) => one_part_per_id(ps.into_iter().filter_map(part_from_native))
            .into_iter()
            .unzip(),
        _ => (Vec::new(), Vec::new()),
    };
    let mut metadata = Object::new();
    for k in [
        "status",
        "createdAt",
        "turnId",
        "clientNonce",
        "clientSeq",
        "piEntryId",
    ] {
        if let Some(v) = m.remove(k).filter(|v| !v.is_null()) {
            metadata.insert(k.into(), v);
        }
    }
    // `{id, role, metadata?, parts}` made by hand: the `json!` macro copied every part again
    // through serde.
    let mut out = Object::new();
    for k in ["id", "role"] {
        out.insert(k.into(), m.remove(k).unwrap_or(Value::Null));
    }
    out.insert("parts".into(), Value::Array(parts));
    if !metadata.is_empty() {
        out.insert("metadata".into(), Value::Object(metadata));
    }
    let msg = UIMessage::from_json(Value::Object(out))?;
    // A part the reader left out would shift every id after it: then none is known.
    let ids = match ids.len() == msg.parts.len() {
        true => ids,
        false => vec![None; msg.parts.len()],
    };
    Ok((msg, ids))
}

/// A message may list one part twice: a tool call (its call, then a settled copy without
/// the input) is one part, at the first copy's place, with the settled copy's state and
/// result (a later copy never undoes a settled one) and the first input that is not empty;
/// a text or reasoning part under one id twice is the fuller of the two, at the first place
/// (upstream `piChatPartMerging.ts` ranks them so).
pub(super) fn one_part_per_id(
    parts: impl Iterator<Item = (Value, Option<String>)>,
) -> Vec<(Value, Option<String>)> {
    let settled = |p: &Value| {
        matches!(
            p["state"].as_str(),
            Some("output-available" | "output-error")
        )
    };
    let input = |p: &Value| {
        p.get("input")
            .filter(|i| i.as_object().is_none_or(|o| !o.is_empty()))
            .cloned()
    };
    let text_len = |p: &Value| p["text"].as_str().map_or(0, |t| t.chars().count());
    let mut out: Vec<(Value, Option<String>)> = Vec::new();
    for (p, id) in parts {
        let tool = p.get("toolCallId").is_some();
        let same = id.as_ref().and_then(|id| {
            out.iter()
                .position(|(q, qid)| qid.as_ref() == Some(id) && q["type"] == p["type"])
        });
        let Some(at) = same else {
            out.push((p, id));
            continue;
        };
        let kept = &mut out[at].0;
        if !tool {
            if text_len(&p) >= text_len(kept) {
                *kept = p;
            }
            continue;
        }
        let first_input = input(kept).or_else(|| input(&p));
        if settled(&p) || !settled(kept) {
            *kept = p;
        }
        if let Some(i) = first_input {
            kept["input"] = i;
        }
    }
    out
}

/// One native part as a `UIMessage` part, with its native id.
pub(super) fn part_from_native(p: Value) -> Option<(Value, Option<String>)> {
    let Value::Object(mut p) = p else { return None };
    let ty = take_str(&mut p, "type")?;
    let id = p.get("id").and_then(Value::as_str).map(str::to_string);
    let text = |p: &mut Object| {
        p.remove("text")
            .filter(Value::is_string)
            .unwrap_or_else(|| json!(""))
    };
    let part = match ty.as_str() {
        // Not `json!`: it would copy the text once more through serde.
        "text" | "reasoning" => {
            let mut o = Object::new();
            o.insert("type".into(), Value::String(ty.clone()));
            o.insert("text".into(), text(&mut p));
            o.insert("state".into(), Value::String("done".into()));
            Value::Object(o)
        }
        "tool-call" => {
            let name = take_str(&mut p, "toolName")?;
            // Named beside its type, as a streamed pi tool part is (SPEC §7): a reload renders
            // what was streamed.
            let mut part = json!({
                "type": format!("tool-{name}"),
                "toolCallId": p.remove("id")?,
                "toolName": name,
                "input": p.remove("input").filter(|v| !v.is_null()).unwrap_or_else(|| json!({})),
            });
            let (output, details) = split_result(p.remove("output").unwrap_or(Value::Null));
            let state = match take_str(&mut p, "state").as_deref() {
                Some("output-available") => {
                    part["output"] = output;
                    "output-available"
                }
                Some("output-error") => {
                    part["errorText"] = json!(take_str(&mut p, "errorText").unwrap_or_default());
                    "output-error"
                }
                Some("aborted") => {
                    part["errorText"] = json!("aborted");
                    "output-error"
                }
                Some("input-streaming") => "input-streaming",
                _ => "input-available",
            };
            part["state"] = json!(state);
            if let Some(d) = details {
                part["details"] = d;
            }
            if let Some(ui) = p.remove("ui").filter(Value::is_object) {
                part["ui"] = ui;
            }
            part
        }
        "file" => {
            let mut f = json!({
                "type": "file",
                "mediaType": p.remove("mediaType").filter(Value::is_string).unwrap_or_else(|| json!("application/octet-stream")),
                "url": p.remove("url").filter(Value::is_string).unwrap_or_else(|| json!("")),
            });
            if let Some(name) = p.remove("filename").filter(Value::is_string) {
                f["filename"] = name;
            }
            f
        }
        "notice" => {
            let mut n = json!({"type": "data-notice", "data": {"level": p.remove("level"), "text": p.remove("text")}});
            if let Some(id) = p.remove("id").filter(Value::is_string) {
                n["id"] = id;
            }
            n
        }
        _ => return None,
    };
    Some((part, id))
}
