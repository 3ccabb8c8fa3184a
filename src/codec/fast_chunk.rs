//! A fast path for the chunks a long stream is made of: text, reasoning and tool input
//! deltas, and pi text deltas, in the exact shape servers write them
//! (`{"type":"text-delta","id":"…","delta":"…"}`,
//! `{"type":"data-pi-text-delta","data":{"seq":1,"messageId":"…","partId":"…","delta":"…"}}`,
//! `{"type":"tool-input-delta","toolCallId":"…","inputTextDelta":"…"}`).
//!
//! [`parse_chunk`](crate::protocol::chunk::parse_chunk) builds a `serde_json::Value` (a map
//! with a string per key and value) and then moves the fields out into the typed chunk; for a
//! delta that is most of the work the store does per event. [`parse_delta`] reads those
//! shapes in place, into a [`Delta`] that borrows the event's data, and the store applies it
//! without building the chunk at all (no allocation per delta). Anything else (another key
//! order, whitespace, an extra key, a number that is not a small integer) gives `None`, and
//! the caller falls back to `parse_chunk`; where it gives a delta, its chunk is exactly the one
//! `parse_chunk` gives (the tests hold it to that).

use std::borrow::Cow;

use crate::protocol::chunk::{Chunk, PartKind, PiEvent, ToolChunk, UiChunk};
// The prefixes are compared eight bytes at a time: `str::strip_prefix` is a byte-by-byte
// `memcmp` in wasm, three per delta.
use crate::codec::scan::strip_prefix as strip;

/// A delta read in place: its strings borrow the event's data unless they hold escapes. The
/// store applies it without building the [`Chunk`] (no allocation per delta);
/// [`into_chunk`](Delta::into_chunk) gives the chunk `parse_chunk` would give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delta<'a> {
    /// `text-delta` or `reasoning-delta`.
    Part {
        /// Text or reasoning.
        kind: PartKind,
        /// The part's `id`.
        id: Cow<'a, str>,
        /// The `delta` text.
        delta: Cow<'a, str>,
    },
    /// `tool-input-delta`.
    ToolInput {
        /// The `toolCallId`.
        tool_call_id: Cow<'a, str>,
        /// The `inputTextDelta` text.
        delta: Cow<'a, str>,
    },
    /// `data-pi-text-delta` or `data-pi-reasoning-delta`.
    Pi {
        /// `data.seq`.
        seq: u64,
        /// Text or reasoning.
        kind: PartKind,
        /// `data.messageId`.
        message_id: Cow<'a, str>,
        /// `data.partId`.
        part_id: Cow<'a, str>,
        /// `data.delta`.
        delta: Cow<'a, str>,
    },
}

impl Delta<'_> {
    /// The chunk [`parse_chunk`](crate::protocol::chunk::parse_chunk) gives for the same data.
    pub fn into_chunk(self) -> Chunk {
        match self {
            Delta::Part { kind, id, delta } => Chunk::Ui(UiChunk::PartDelta {
                kind,
                id: id.into_owned(),
                delta: delta.into_owned(),
                provider_metadata: None,
            }),
            Delta::ToolInput {
                tool_call_id,
                delta,
            } => Chunk::Ui(UiChunk::ToolInputDelta(ToolChunk {
                tool_call_id: tool_call_id.into_owned(),
                tool_name: None,
                input: None,
                input_text_delta: Some(delta.into_owned()),
                input_encoding: None,
                output: None,
                error_text: None,
                provider_executed: None,
                dynamic: None,
                preliminary: None,
                title: None,
                provider_metadata: None,
                tool_metadata: None,
            })),
            Delta::Pi {
                seq,
                kind,
                message_id,
                part_id,
                delta,
            } => Chunk::Pi(PiEvent::PartDelta {
                seq: Some(seq),
                kind,
                message_id: message_id.into_owned(),
                part_id: part_id.into_owned(),
                delta: delta.into_owned(),
            }),
        }
    }
}

/// The delta in its canonical shape, or `None` (then use `parse_chunk`).
#[cfg_attr(optimize_hot_path, optimize(speed))]
pub fn parse_delta(data: &str) -> Option<Delta<'_>> {
    let rest = strip(data, r#"{"type":""#)?;
    if let Some(rest) = strip(rest, r#"text-delta","id":"#) {
        return part_delta(PartKind::Text, rest);
    }
    if let Some(rest) = strip(rest, r#"data-pi-text-delta","data":{"seq":"#) {
        return pi_delta(PartKind::Text, rest);
    }
    if let Some(rest) = strip(rest, r#"tool-input-delta","toolCallId":"#) {
        let (tool_call_id, rest) = string(rest)?;
        let (delta, rest) = string(strip(rest, r#","inputTextDelta":"#)?)?;
        end(rest, "}")?;
        return Some(Delta::ToolInput {
            tool_call_id,
            delta,
        });
    }
    if let Some(rest) = strip(rest, r#"reasoning-delta","id":"#) {
        return part_delta(PartKind::Reasoning, rest);
    }
    if let Some(rest) = strip(rest, r#"data-pi-reasoning-delta","data":{"seq":"#) {
        return pi_delta(PartKind::Reasoning, rest);
    }
    None
}

#[cfg_attr(optimize_hot_path, optimize(speed))]
fn part_delta(kind: PartKind, rest: &str) -> Option<Delta<'_>> {
    let (id, rest) = string(rest)?;
    let (delta, rest) = string(strip(rest, r#","delta":"#)?)?;
    end(rest, "}")?;
    Some(Delta::Part { kind, id, delta })
}

#[cfg_attr(optimize_hot_path, optimize(speed))]
fn pi_delta(kind: PartKind, rest: &str) -> Option<Delta<'_>> {
    let (seq, rest) = integer(rest)?;
    let (message_id, rest) = string(strip(rest, r#","messageId":"#)?)?;
    let (part_id, rest) = string(strip(rest, r#","partId":"#)?)?;
    let (delta, rest) = string(strip(rest, r#","delta":"#)?)?;
    end(rest, "}}")?;
    Some(Delta::Pi {
        seq,
        kind,
        message_id,
        part_id,
        delta,
    })
}

/// The closing braces, then only the whitespace JSON allows after a value.
#[cfg_attr(optimize_hot_path, optimize(speed))]
fn end(rest: &str, closing: &str) -> Option<()> {
    let tail = strip(rest, closing)?;
    tail.bytes()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .then_some(())
}

/// A JSON string literal at the start of `s`: its value (borrowed when it holds no escape) and
/// the rest. Escapes are decoded by the crate's JSON reader (as on the general path); a control
/// character or a bad escape gives `None`.
#[cfg_attr(optimize_hot_path, optimize(speed))]
fn string(s: &str) -> Option<(Cow<'_, str>, &str)> {
    let bytes = s.as_bytes();
    if bytes.first() != Some(&b'"') {
        return None;
    }
    let mut escaped = false;
    let mut i = 1;
    loop {
        i += crate::codec::scan::string_special_or_plane16(bytes.get(i..)?)?;
        match bytes[i] {
            b'"' => {
                let (lit, rest) = s.split_at(i + 1);
                let value = if escaped {
                    match crate::protocol::json::from_slice(lit.as_bytes()) {
                        Ok(serde_json::Value::String(s)) => Cow::Owned(s),
                        _ => return None,
                    }
                } else {
                    Cow::Borrowed(&lit[1..lit.len() - 1])
                };
                return Some((value, rest));
            }
            b'\\' => {
                escaped = true;
                i += 2;
            }
            // A control character, or a character of plane 16, which may be one of the marker
            // range: the general path holds those as two markers (`protocol::json::MARKERS`).
            _ => return None,
        }
    }
}

/// A JSON integer small enough that the general path reads it exactly (`get_u64` takes an
/// integer or a whole float below 2^53): at most 15 digits, no leading zero.
fn integer(s: &str) -> Option<(u64, &str)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 15 || (digits > 1 && s.starts_with('0')) {
        return None;
    }
    let (n, rest) = s.split_at(digits);
    // A fraction or an exponent would make it a float: the general path's business.
    if rest.starts_with(['.', 'e', 'E']) {
        return None;
    }
    Some((n.parse().ok()?, rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::chunk::parse_chunk;

    /// Whatever the fast path reads, the general path reads the same.
    fn same(data: &str) -> bool {
        match parse_delta(data) {
            Some(d) => {
                assert_eq!(Ok(d.into_chunk()), parse_chunk(data), "{data}");
                true
            }
            None => false,
        }
    }

    #[test]
    fn canonical_deltas_take_the_fast_path() {
        for data in [
            r#"{"type":"text-delta","id":"t","delta":"Hello"}"#,
            r#"{"type":"text-delta","id":"t","delta":""}"#,
            r#"{"type":"text-delta","id":"t","delta":"line\n \"q\" \\ \u00e9 \ud83d\ude00 \/"}"#,
            "{\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"é😀\"}\n",
            r#"{"type":"reasoning-delta","id":"r","delta":"hm"}"#,
            r#"{"type":"tool-input-delta","toolCallId":"c1","inputTextDelta":"{\"a\":"}"#,
            r#"{"type":"data-pi-text-delta","data":{"seq":5,"messageId":"a-1","partId":"0","delta":"Answer "}}"#,
            r#"{"type":"data-pi-reasoning-delta","data":{"seq":0,"messageId":"a","partId":"r","delta":"x"}}"#,
            r#"{"type":"data-pi-text-delta","data":{"seq":999999999999999,"messageId":"a","partId":"0","delta":"x"}}"#,
            // A lone surrogate: its marker, as the general path reads it.
            r#"{"type":"text-delta","id":"t","delta":"\ud800"}"#,
        ] {
            assert!(same(data), "not fast: {data}");
        }
    }

    #[test]
    fn anything_else_falls_back() {
        for data in [
            r#"{"type":"text-delta","delta":"x","id":"t"}"#,
            r#"{"type":"text-delta","id":"t","delta":"x","providerMetadata":{"p":{}}}"#,
            r#"{"type": "text-delta","id":"t","delta":"x"}"#,
            r#"{"type":"text-delta","id":"t","delta":"x"} x"#,
            r#"{"type":"text-delta","id":"t","delta":"x""#,
            r#"{"type":"text-delta","id":"t","delta":"a	b"}"#,
            r#"{"type":"text-delta","id":"t","delta":"\x"}"#,
            r#"{"type":"text-delta","id":"t","delta":5}"#,
            r#"{"type":"text-delta","id":null,"delta":"x"}"#,
            r#"{"type":"data-pi-text-delta","data":{"seq":01,"messageId":"a","partId":"0","delta":"x"}}"#,
            r#"{"type":"data-pi-text-delta","data":{"seq":1.0,"messageId":"a","partId":"0","delta":"x"}}"#,
            r#"{"type":"data-pi-text-delta","data":{"seq":1e3,"messageId":"a","partId":"0","delta":"x"}}"#,
            r#"{"type":"data-pi-text-delta","data":{"seq":9999999999999999,"messageId":"a","partId":"0","delta":"x"}}"#,
            r#"{"type":"data-pi-text-delta","data":{"seq":-1,"messageId":"a","partId":"0","delta":"x"}}"#,
            r#"{"type":"data-pi-text-delta","data":{"seq":1,"messageId":"a","partId":"0","delta":"x"},"transient":true}"#,
            r#"{"type":"tool-input-delta","toolCallId":"c","inputTextDelta":"x","dynamic":true}"#,
            r#"{"type":"text-start","id":"t"}"#,
        ] {
            assert!(!same(data), "fast, but should not be: {data}");
        }
    }

    /// Random mutations of canonical deltas: the fast path either declines or agrees.
    #[test]
    fn mutations_never_disagree() {
        let seeds = [
            r#"{"type":"text-delta","id":"t1","delta":"a \"b\" \\n"}"#,
            r#"{"type":"data-pi-text-delta","data":{"seq":12,"messageId":"m","partId":"0","delta":"x\u0041"}}"#,
            r#"{"type":"tool-input-delta","toolCallId":"c","inputTextDelta":"{\"k\":[1,"}"#,
        ];
        let alphabet = b"{}[]\":,\\ \n0129.-eEatu\x01\x7f";
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut fast = 0;
        for round in 0..30_000 {
            let mut s = seeds[round % seeds.len()].as_bytes().to_vec();
            for _ in 0..1 + round % 3 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let at = (x >> 8) as usize % (s.len() + 1);
                let c = alphabet[(x >> 40) as usize % alphabet.len()];
                match x % 3 {
                    0 if at < s.len() => {
                        s.remove(at);
                    }
                    1 if at < s.len() => s[at] = c,
                    _ => s.insert(at, c),
                }
            }
            if let Ok(data) = std::str::from_utf8(&s) {
                fast += usize::from(same(data));
            }
        }
        assert!(fast > 1000, "the mutations should keep some fast: {fast}");
    }
}
