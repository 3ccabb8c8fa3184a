//! Input builders shared by the fuzz targets: arbitrary bytes become the chunks, SSE bodies,
//! JSON answers and network splits that a broken or hostile server (or network) could produce.
//!
//! Everything is drawn from an [`arbitrary::Unstructured`], so libFuzzer's mutations of the
//! input bytes move through the space of *structured* inputs: chunk types, field names and ids
//! come from small pools (so chunks refer to each other and reach deep reducer states), and
//! every field is sometimes missing, `null`, of the wrong type, or hostile (`__proto__` keys,
//! lone surrogates, huge numbers).

use arbitrary::Unstructured;
use serde_json::{json, Map, Value};

/// `put_value` with its value computed first (it draws from the same input).
macro_rules! put {
    ($u:expr, $o:expr, $k:expr, $v:expr $(,)?) => {{
        let v = $v;
        put_value($u, $o, $k, v)
    }};
}

pub const MESSAGE_IDS: &[&str] = &["m0", "m1", "m2", "u0", "u1", "__proto__", ""];
pub const PART_IDS: &[&str] = &["0", "1", "2", "t", "r"];
pub const TOOL_CALL_IDS: &[&str] = &["c0", "c1", "c2", "constructor"];
pub const TOOL_NAMES: &[&str] = &["ls", "echo", "weather", ""];
pub const ROLES: &[&str] = &["user", "assistant", "system", "tool", "bogus"];
pub const TURN_IDS: &[&str] = &["turn-1", "turn-2", "turn-3"];
pub const KEYS: &[&str] = &[
    "a",
    "b",
    "__proto__",
    "constructor",
    "prototype",
    "toString",
    "details",
    "content",
    "text",
    "type",
];
const STRINGS: &[&str] = &[
    "",
    "a",
    "Hi",
    " there",
    "Hello, world",
    "ü€😀",
    "\u{0}",
    "\u{FFFD}",
    "line\nbreak",
    "__proto__",
    "{\"a\":",
    "1}",
    "]",
    "[DONE]",
    "<script>alert(1)</script>",
];

/// The chunk types the generator builds, both families, plus unknown ones.
pub const PI_TYPES: &[&str] = &[
    "pi-mode",
    "pi-tool-approval-request",
    "pi-tool-approval-response",
    "pi-tool-input-request",
    "pi-agent-start",
    "pi-agent-end",
    "pi-message-start",
    "pi-message-end",
    "pi-text-start",
    "pi-text-delta",
    "pi-text-end",
    "pi-reasoning-start",
    "pi-reasoning-delta",
    "pi-reasoning-end",
    "pi-tool-call-start",
    "pi-tool-call-delta",
    "pi-tool-call-end",
    "pi-tool-result",
    "pi-message-delta",
    "followup-consumed",
    "turn-start",
    "pi-future-thing",
];

pub const UI_TYPES: &[&str] = &[
    "start",
    "start-step",
    "finish-step",
    "reset-step",
    "finish",
    "abort",
    "error",
    "message-metadata",
    "text-start",
    "text-delta",
    "text-end",
    "reasoning-start",
    "reasoning-delta",
    "reasoning-end",
    "custom",
    "tool-input-start",
    "tool-input-delta",
    "tool-input-available",
    "tool-input-error",
    "tool-output-available",
    "tool-output-error",
    "tool-output-denied",
    "tool-approval-request",
    "tool-approval-response",
    "source-url",
    "source-document",
    "file",
    "reasoning-file",
    "steering-message",
    "data-weather",
    "data-tool-ui",
    "future-chunk",
];

/// A value drawn from `list` (its first one when the input ran out).
pub fn pick<T: Copy>(u: &mut Unstructured, list: &[T]) -> T {
    u.choose(list).copied().unwrap_or(list[0])
}

/// True one time in `n` (false when the input ran out).
pub fn one_in(u: &mut Unstructured, n: u32) -> bool {
    u.ratio(1, n).unwrap_or(false)
}

pub fn int(u: &mut Unstructured, lo: u64, hi: u64) -> u64 {
    u.int_in_range(lo..=hi).unwrap_or(lo)
}

/// A short string: mostly from a pool, sometimes arbitrary.
pub fn string(u: &mut Unstructured) -> String {
    if one_in(u, 4) {
        let s: String = u.arbitrary().unwrap_or_default();
        s.chars().take(40).collect()
    } else {
        pick(u, STRINGS).to_string()
    }
}

/// An arbitrary JSON value of bounded depth, with hostile keys.
pub fn value(u: &mut Unstructured, depth: u32) -> Value {
    let top = if depth == 0 { 5 } else { 7 };
    match int(u, 0, top) {
        0 => Value::Null,
        1 => Value::Bool(one_in(u, 2)),
        2 => match int(u, 0, 4) {
            0 => json!(int(u, 0, 10)),
            1 => json!(u64::MAX),
            2 => json!(-1),
            3 => json!(1.5),
            _ => json!(1e300),
        },
        3 | 4 => Value::String(string(u)),
        5 => Value::String(pick(u, KEYS).to_string()),
        6 => {
            let n = int(u, 0, 3);
            Value::Array((0..n).map(|_| value(u, depth - 1)).collect())
        }
        _ => {
            let mut m = Map::new();
            for _ in 0..int(u, 0, 3) {
                let k = if one_in(u, 3) {
                    string(u)
                } else {
                    pick(u, KEYS).to_string()
                };
                let v = value(u, depth - 1);
                m.insert(k, v);
            }
            Value::Object(m)
        }
    }
}

/// What the generator keeps between chunks so they refer to each other.
#[derive(Debug, Default)]
pub struct Ctx {
    /// The last seq handed out.
    pub seq: u64,
    /// Nonces and seqs of follow-ups the store queued (the store target fills them in), so
    /// consumption signals can name real items.
    pub nonces: Vec<String>,
    pub client_seqs: Vec<u64>,
    /// Message ids the store made up (optimistic messages), for chunks that name them.
    pub local_ids: Vec<String>,
}

impl Ctx {
    fn message_id(&self, u: &mut Unstructured) -> String {
        if !self.local_ids.is_empty() && one_in(u, 6) {
            return pick_owned(u, &self.local_ids);
        }
        pick(u, MESSAGE_IDS).to_string()
    }

    fn seq(&mut self, u: &mut Unstructured) -> Option<Value> {
        Some(match int(u, 0, 15) {
            0 => return None,
            1 => json!(self.seq),
            2 => json!(self.seq.saturating_sub(int(u, 1, 5))),
            3 => json!(u64::MAX),
            4 => json!(-1),
            5 => json!(self.seq as f64 + 0.5),
            6 => json!(format!("{}", self.seq + 1)),
            7 => Value::Null,
            _ => {
                self.seq += int(u, 1, 3);
                json!(self.seq)
            }
        })
    }
}

fn pick_owned(u: &mut Unstructured, list: &[String]) -> String {
    u.choose(list).cloned().unwrap_or_default()
}

/// Inserts `key`: usually the good value, sometimes nothing, `null` or junk.
fn put_value(u: &mut Unstructured, o: &mut Map<String, Value>, key: &str, good: Value) {
    match int(u, 0, 23) {
        0 => {}
        1 => {
            o.insert(key.into(), Value::Null);
        }
        2 => {
            let v = value(u, 2);
            o.insert(key.into(), v);
        }
        _ => {
            o.insert(key.into(), good);
        }
    }
}

/// A `UIMessage` as JSON (for `final` snapshots, histories and `lastMessage`).
pub fn message(u: &mut Unstructured, ctx: &mut Ctx) -> Value {
    let mut parts = Vec::new();
    for _ in 0..int(u, 0, 4) {
        parts.push(match int(u, 0, 7) {
            0 => json!({"type": "text", "text": string(u), "state": "done"}),
            1 => json!({"type": "reasoning", "text": string(u)}),
            2 => json!({"type": "step-start"}),
            3 => json!({
                "type": "dynamic-tool",
                "toolCallId": pick(u, TOOL_CALL_IDS),
                "toolName": pick(u, TOOL_NAMES),
                "state": pick(u, &["input-streaming", "input-available", "output-available", "output-error", "approval-requested"]),
                "input": value(u, 2),
                "output": value(u, 2),
            }),
            4 => json!({
                "type": format!("tool-{}", pick(u, TOOL_NAMES)),
                "toolCallId": pick(u, TOOL_CALL_IDS),
                "state": "input-available",
                "input": value(u, 2),
                "approval": {"id": "ap0"},
            }),
            5 => json!({"type": "data-weather", "id": pick(u, PART_IDS), "data": value(u, 2)}),
            6 => json!({"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,AA=="}),
            _ => value(u, 2),
        });
    }
    let mut o = Map::new();
    put!(u, &mut o, "id", Value::String(ctx.message_id(u)));
    put!(u, &mut o, "role", Value::String(pick(u, ROLES).into()));
    if one_in(u, 3) {
        let md = value(u, 2);
        o.insert("metadata".into(), md);
    }
    put!(u, &mut o, "parts", Value::Array(parts));
    Value::Object(o)
}

/// One `data-pi-*` (or follow-up / turn) chunk.
pub fn pi_chunk(u: &mut Unstructured, ctx: &mut Ctx) -> Value {
    let name = pick(u, PI_TYPES);
    let mut d = Map::new();
    if let Some(s) = ctx.seq(u) {
        d.insert("seq".into(), s);
    }
    let mid = ctx.message_id(u);
    match name {
        "pi-mode" => put!(u, &mut d, "enabled", Value::Bool(!one_in(u, 4))),
        "pi-agent-start" | "pi-agent-end" => {}
        "pi-message-start" | "pi-message-end" => {
            put!(u, &mut d, "messageId", Value::String(mid));
            put!(u, &mut d, "role", Value::String(pick(u, ROLES).into()));
            if one_in(u, 2) {
                d.insert("text".into(), Value::String(string(u)));
            }
            if name == "pi-message-start" && !ctx.nonces.is_empty() && one_in(u, 3) {
                let n = pick_owned(u, &ctx.nonces);
                d.insert("clientNonce".into(), Value::String(n));
            }
            if name == "pi-message-end" && one_in(u, 4) {
                let m = message(u, ctx);
                d.insert("final".into(), m);
            }
        }
        "pi-text-start" | "pi-reasoning-start" | "pi-text-end" | "pi-reasoning-end" => {
            put!(u, &mut d, "messageId", Value::String(mid));
            put!(u, &mut d, "partId", Value::String(pick(u, PART_IDS).into()));
            if name.ends_with("-end") && one_in(u, 2) {
                d.insert("text".into(), Value::String(string(u)));
            }
        }
        "pi-text-delta" | "pi-reasoning-delta" => {
            put!(u, &mut d, "messageId", Value::String(mid));
            put!(u, &mut d, "partId", Value::String(pick(u, PART_IDS).into()));
            put!(u, &mut d, "delta", Value::String(string(u)));
        }
        "pi-tool-call-start" | "pi-tool-call-delta" | "pi-tool-call-end" | "pi-tool-result" => {
            put!(u, &mut d, "messageId", Value::String(mid));
            put!(
                u,
                &mut d,
                "toolCallId",
                Value::String(pick(u, TOOL_CALL_IDS).into()),
            );
            if one_in(u, 2) {
                d.insert("toolName".into(), Value::String(pick(u, TOOL_NAMES).into()));
            }
            match name {
                "pi-tool-call-delta" => {
                    let delta = if one_in(u, 4) {
                        value(u, 2)
                    } else {
                        Value::String(
                            pick(u, &["{", "\"a\":", "1", "}", "[", "]", ",", "\"x\""]).into(),
                        )
                    };
                    d.insert("delta".into(), delta);
                }
                "pi-tool-call-end" if one_in(u, 2) => {
                    let v = value(u, 3);
                    d.insert("input".into(), v);
                }
                "pi-tool-result" => {
                    let out = match int(u, 0, 2) {
                        0 => json!([{"type": "text", "text": string(u)}]),
                        1 => {
                            json!({"content": [{"type": "text", "text": string(u)}], "details": value(u, 2)})
                        }
                        _ => value(u, 3),
                    };
                    d.insert("output".into(), out);
                    put!(u, &mut d, "isError", Value::Bool(one_in(u, 3)));
                    if one_in(u, 3) {
                        let v = value(u, 2);
                        d.insert("details".into(), v);
                    }
                }
                _ => {}
            }
        }
        "pi-message-delta" => {
            put!(u, &mut d, "messageId", Value::String(mid));
            put!(u, &mut d, "delta", Value::String(string(u)));
        }
        // SPEC §13: a call that waits for the user (approval ids as the store target answers).
        "pi-tool-approval-request" | "pi-tool-approval-response" | "pi-tool-input-request" => {
            put!(u, &mut d, "messageId", Value::String(mid));
            let call = pick(u, TOOL_CALL_IDS);
            put!(u, &mut d, "toolCallId", Value::String(call.into()));
            if name != "pi-tool-input-request" {
                put!(
                    u,
                    &mut d,
                    "approvalId",
                    Value::String(pick(u, &["ap0", "ap1"]).into())
                );
            }
            if name == "pi-tool-approval-response" {
                put!(u, &mut d, "approved", Value::Bool(one_in(u, 2)));
            }
            if one_in(u, 2) {
                d.insert("reason".into(), Value::String(string(u)));
            }
            if name == "pi-tool-input-request" {
                d.insert("question".into(), Value::String(string(u)));
                d.insert(
                    "options".into(),
                    if one_in(u, 4) {
                        value(u, 2)
                    } else {
                        json!(["red", "green"])
                    },
                );
            }
        }
        "followup-consumed" => {
            if !ctx.nonces.is_empty() && !one_in(u, 4) {
                let n = pick_owned(u, &ctx.nonces);
                d.insert("clientNonce".into(), Value::String(n));
            }
            if !ctx.client_seqs.is_empty() && one_in(u, 2) {
                let s = u.choose(&ctx.client_seqs).copied().unwrap_or(0);
                d.insert("clientSeq".into(), json!(s));
            }
            if one_in(u, 2) {
                d.insert("messageId".into(), Value::String(mid));
            }
        }
        "turn-start" => put!(u, &mut d, "turnId", Value::String(pick(u, TURN_IDS).into())),
        _ => {
            let v = value(u, 2);
            d.insert("x".into(), v);
        }
    }
    if name.starts_with("pi-") && name != "pi-mode" && one_in(u, 8) {
        // The legacy envelope: the event's own type inside `data`.
        d.insert("type".into(), Value::String(name.into()));
        return json!({"type": "data-pi-message-update", "data": Value::Object(d)});
    }
    let mut o = Map::new();
    o.insert("type".into(), Value::String(format!("data-{name}")));
    put!(u, &mut o, "data", Value::Object(d));
    Value::Object(o)
}

/// One AI SDK UI message chunk (or a `data-*` / unknown one).
pub fn ui_chunk(u: &mut Unstructured, ctx: &mut Ctx) -> Value {
    let ty = pick(u, UI_TYPES);
    let mut o = Map::new();
    o.insert("type".into(), Value::String(ty.into()));
    let pm = |u: &mut Unstructured, o: &mut Map<String, Value>| {
        if one_in(u, 6) {
            let v = if one_in(u, 2) {
                json!({"p": {"k": value(u, 1)}})
            } else {
                value(u, 2)
            };
            o.insert("providerMetadata".into(), v);
        }
    };
    let tool_call = |u: &mut Unstructured, o: &mut Map<String, Value>| {
        put!(
            u,
            o,
            "toolCallId",
            Value::String(pick(u, TOOL_CALL_IDS).into())
        );
    };
    match ty {
        "start" => {
            if one_in(u, 2) {
                put!(u, &mut o, "messageId", Value::String(ctx.message_id(u)));
            }
            if one_in(u, 3) {
                let v = value(u, 3);
                o.insert("messageMetadata".into(), v);
            }
        }
        "finish" => {
            if one_in(u, 2) {
                put!(
                    u,
                    &mut o,
                    "finishReason",
                    Value::String(
                        pick(u, &["stop", "length", "error", "tool-calls", "done"]).into()
                    ),
                );
            }
            if one_in(u, 3) {
                let v = value(u, 3);
                o.insert("messageMetadata".into(), v);
            }
        }
        "message-metadata" => {
            let v = value(u, 3);
            o.insert("messageMetadata".into(), v);
        }
        "abort" => {
            if one_in(u, 2) {
                o.insert("reason".into(), Value::String(string(u)));
            }
        }
        "error" => put!(u, &mut o, "errorText", Value::String(string(u))),
        "text-start" | "reasoning-start" | "text-end" | "reasoning-end" => {
            put!(u, &mut o, "id", Value::String(pick(u, PART_IDS).into()));
            pm(u, &mut o);
        }
        "text-delta" | "reasoning-delta" => {
            put!(u, &mut o, "id", Value::String(pick(u, PART_IDS).into()));
            put!(u, &mut o, "delta", Value::String(string(u)));
            pm(u, &mut o);
        }
        "custom" => put!(u, &mut o, "kind", Value::String(string(u))),
        "tool-input-start" => {
            tool_call(u, &mut o);
            put!(
                u,
                &mut o,
                "toolName",
                Value::String(pick(u, TOOL_NAMES).into())
            );
            if one_in(u, 3) {
                o.insert(
                    "inputEncoding".into(),
                    Value::String(pick(u, &["json", "text", "xml"]).into()),
                );
            }
            if one_in(u, 3) {
                o.insert("dynamic".into(), Value::Bool(one_in(u, 2)));
            }
            pm(u, &mut o);
        }
        "tool-input-delta" => {
            tool_call(u, &mut o);
            let delta = pick(
                u,
                &[
                    "{", "\"a\"", ":", "1", "}", "[", "]", ",", "\"x", "\\u00", "e+", "tru",
                ],
            );
            let delta = if one_in(u, 4) {
                string(u)
            } else {
                delta.to_string()
            };
            put!(u, &mut o, "inputTextDelta", Value::String(delta));
        }
        "tool-input-available" | "tool-input-error" => {
            tool_call(u, &mut o);
            put!(
                u,
                &mut o,
                "toolName",
                Value::String(pick(u, TOOL_NAMES).into())
            );
            let v = value(u, 3);
            put!(u, &mut o, "input", v);
            if ty == "tool-input-error" {
                put!(u, &mut o, "errorText", Value::String(string(u)));
            }
            if one_in(u, 3) {
                o.insert("dynamic".into(), Value::Bool(one_in(u, 2)));
            }
            if one_in(u, 4) {
                o.insert("providerExecuted".into(), Value::Bool(one_in(u, 2)));
            }
            pm(u, &mut o);
        }
        "tool-output-available" => {
            tool_call(u, &mut o);
            let v = value(u, 3);
            put!(u, &mut o, "output", v);
            if one_in(u, 3) {
                o.insert("preliminary".into(), Value::Bool(one_in(u, 2)));
            }
        }
        "tool-output-error" => {
            tool_call(u, &mut o);
            put!(u, &mut o, "errorText", Value::String(string(u)));
        }
        "tool-output-denied" => tool_call(u, &mut o),
        "tool-approval-request" => {
            tool_call(u, &mut o);
            put!(
                u,
                &mut o,
                "approvalId",
                Value::String(pick(u, &["ap0", "ap1"]).into())
            );
        }
        "tool-approval-response" => {
            put!(
                u,
                &mut o,
                "approvalId",
                Value::String(pick(u, &["ap0", "ap1"]).into())
            );
            put!(u, &mut o, "approved", Value::Bool(one_in(u, 2)));
        }
        "source-url" => {
            put!(u, &mut o, "sourceId", Value::String(string(u)));
            put!(u, &mut o, "url", Value::String(string(u)));
        }
        "source-document" => {
            put!(u, &mut o, "sourceId", Value::String(string(u)));
            put!(u, &mut o, "mediaType", Value::String("text/plain".into()));
            put!(u, &mut o, "title", Value::String(string(u)));
        }
        "file" | "reasoning-file" => {
            put!(u, &mut o, "url", Value::String(string(u)));
            put!(u, &mut o, "mediaType", Value::String("image/png".into()));
        }
        "steering-message" => {
            put!(u, &mut o, "id", Value::String(pick(u, MESSAGE_IDS).into()));
            let parts = json!([{"type": "text", "text": string(u)}]);
            put!(u, &mut o, "parts", parts);
        }
        "data-weather" => {
            if one_in(u, 2) {
                put!(u, &mut o, "id", Value::String(pick(u, PART_IDS).into()));
            }
            let v = value(u, 3);
            put!(u, &mut o, "data", v);
            if one_in(u, 3) {
                o.insert("transient".into(), Value::Bool(one_in(u, 2)));
            }
        }
        "data-tool-ui" => {
            let data = json!({
                "toolCallId": pick(u, TOOL_CALL_IDS),
                "rendererId": string(u),
                "details": value(u, 2),
            });
            put!(u, &mut o, "data", data);
            if one_in(u, 2) {
                o.insert("transient".into(), Value::Bool(one_in(u, 2)));
            }
        }
        _ => {
            let v = value(u, 2);
            o.insert("x".into(), v);
        }
    }
    if one_in(u, 16) {
        // A hostile extra key anywhere in the chunk.
        let v = value(u, 2);
        o.insert(pick(u, KEYS).into(), v);
    }
    Value::Object(o)
}

/// One chunk of either family; sometimes not a chunk at all.
pub fn any_chunk(u: &mut Unstructured, ctx: &mut Ctx) -> Value {
    match int(u, 0, 11) {
        0 => value(u, 3),
        1..=5 => ui_chunk(u, ctx),
        _ => pi_chunk(u, ctx),
    }
}

/// The event's data text for a chunk: its JSON, or (rarely) bytes that are no JSON at all.
pub fn chunk_text(u: &mut Unstructured, chunk: &Value) -> String {
    match int(u, 0, 31) {
        0 => "[DONE]".into(),
        1 => {
            // Cut JSON.
            let t = chunk.to_string();
            let n = int(u, 0, t.len() as u64) as usize;
            t.chars().take(n).collect()
        }
        2 => "[".repeat(int(u, 1, 3000) as usize),
        3 => string(u),
        _ => chunk.to_string(),
    }
}

/// An SSE body carrying `texts`, framed the ways servers do (LF, CRLF, CR, ids, comments,
/// event names, retry lines) and sometimes broken (invalid UTF-8, a missing blank line).
pub fn sse_body(u: &mut Unstructured, texts: &[String]) -> Vec<u8> {
    let mut out = Vec::new();
    let eol: &[u8] = pick(u, &[&b"\n"[..], b"\n", b"\r\n", b"\r"]);
    if one_in(u, 16) {
        out.extend_from_slice(b"\xEF\xBB\xBF");
    }
    for (i, t) in texts.iter().enumerate() {
        if one_in(u, 8) {
            out.extend_from_slice(b": keep-alive");
            out.extend_from_slice(eol);
        }
        if one_in(u, 6) {
            out.extend_from_slice(format!("id: {i}").as_bytes());
            out.extend_from_slice(eol);
        }
        if one_in(u, 16) {
            out.extend_from_slice(b"event: message");
            out.extend_from_slice(eol);
        }
        if one_in(u, 32) {
            out.extend_from_slice(b"retry: 10");
            out.extend_from_slice(eol);
        }
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(t.as_bytes());
        if one_in(u, 32) {
            out.extend_from_slice(b"\xFF\xC3");
        }
        out.extend_from_slice(eol);
        if !one_in(u, 32) {
            out.extend_from_slice(eol);
        }
    }
    out
}

/// Splits `bytes` into network chunks (sizes from the input; empty chunks included).
pub fn split<'b>(u: &mut Unstructured, bytes: &'b [u8]) -> Vec<&'b [u8]> {
    let max = pick(u, &[1u64, 2, 3, 7, 64, 4096, u32::MAX as u64]);
    let mut rest = bytes;
    let mut out = Vec::new();
    while !rest.is_empty() {
        let n = (int(u, 0, max) as usize).min(rest.len());
        let n = if u.is_empty() { rest.len() } else { n };
        let (a, b) = rest.split_at(n);
        out.push(a);
        rest = b;
    }
    out
}

/// A tiny deterministic PRNG for split points derived from a seed in the input (the SSE target
/// keeps the rest of its input as the raw body, so fixture seeds stay readable).
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Counts the heap bytes live in the process, for memory-bound invariants.
pub mod alloc_count {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicUsize, Ordering};

    pub struct Counting;
    static LIVE: AtomicUsize = AtomicUsize::new(0);

    /// Bytes currently allocated through the Rust allocator.
    pub fn live() -> usize {
        LIVE.load(Ordering::Relaxed)
    }

    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            let p = System.alloc(l);
            if !p.is_null() {
                LIVE.fetch_add(l.size(), Ordering::Relaxed);
            }
            p
        }
        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            System.dealloc(p, l);
            LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        }
        unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
            let q = System.realloc(p, l, new);
            if !q.is_null() {
                LIVE.fetch_sub(l.size(), Ordering::Relaxed);
                LIVE.fetch_add(new, Ordering::Relaxed);
            }
            q
        }
    }
}
