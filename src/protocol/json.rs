//! Small helpers to take typed fields out of a parsed JSON object without cloning, and to
//! write a JSON string fast.
//!
//! Chunks are parsed once into a [`Value`]; the reducers then move the fields they need out
//! of its map. A `null` counts as absent, as it does for the `ai` package's optional fields.

use serde_json::{Map, Value};

mod read;

pub use read::JsonError;
pub(crate) use read::{overflows, Digits, Exponent};

/// A JSON object, as serde_json holds it.
pub type Object = Map<String, Value>;

/// Moves `key` out of `obj`; `null` counts as absent.
pub fn take(obj: &mut Object, key: &str) -> Option<Value> {
    match obj.remove(key) {
        Some(Value::Null) | None => None,
        Some(v) => Some(v),
    }
}

/// Moves a string field out of `obj`; any other type counts as absent.
pub fn take_str(obj: &mut Object, key: &str) -> Option<String> {
    match obj.remove(key) {
        Some(Value::String(s)) => Some(s),
        _ => None,
    }
}

/// The keys left in `obj` once its known fields were taken, kept as a part's unknown keys: an
/// emptied map keeps its node (~320 bytes in wasm), so a part without unknown keys holds none.
pub fn unknown_keys(obj: Object) -> Object {
    if obj.is_empty() {
        Object::new()
    } else {
        obj
    }
}

/// A non-negative integer field (also accepts a float with no fraction, as JS sends them).
pub fn get_u64(obj: &Object, key: &str) -> Option<u64> {
    let v = obj.get(key)?;
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 9.007_199_254_740_992e15)
            .map(|f| f as u64)
    })
}

/// A boolean field; any other type counts as absent.
pub fn get_bool(obj: &Object, key: &str) -> Option<bool> {
    obj.get(key).and_then(Value::as_bool)
}

/// An optional string field read as serde's derive reads an `Option<String>`: absent or `null`
/// is `Some(None)`, a string `Some(Some(_))`, anything else `None` (the wrong type).
pub fn opt_string(v: Option<&Value>) -> Option<Option<String>> {
    match v {
        None | Some(Value::Null) => Some(None),
        Some(Value::String(s)) => Some(Some(s.clone())),
        Some(_) => None,
    }
}

/// Serialises a value to a JSON string. Only fails for maps with non-string keys, which a
/// `Value` cannot hold, so the fallback is never seen. Lone surrogates held as markers are
/// written as the escapes they came as ([`MARKERS`]).
pub fn to_string(v: &impl serde::Serialize) -> String {
    let out = serde_json::to_string(v).unwrap_or_else(|_| String::from("null"));
    if !has_marker(&out) {
        return out;
    }
    // A marker (a 4-byte character) can only be inside a JSON string of the output.
    let mut escaped = String::with_capacity(out.len() + 8);
    push_marked(&mut escaped, &out);
    escaped
}

/// Lone UTF-16 surrogates. JSON may hold one as an escape (`"\ud83d"`): `JSON.stringify`
/// writes one for a string cut inside a character, as a server streaming text in UTF-16
/// slices does, and the `ai` package keeps it (the next delta's `"\ude00"` completes the
/// character). serde_json refuses them and a Rust string cannot hold one, so each lone
/// surrogate `0xD800 + k` is held as the character `MARKERS + k` (the last 2,048 code points
/// of plane 16, private use). Every writer of JSON for JS or the server writes such a
/// character back as the escape it came as, so a pair split over two deltas is one character
/// again in JS, and a lone surrogate stays one, as in the `ai` package.
///
/// A real character of that range is held as the markers of its own two surrogates (every
/// ingress converts it: [`from_slice`], the partial-JSON lexer, [`push_char`],
/// [`mark_private`] for strings from JS), so it is written back as that surrogate pair, which
/// is the character again: no text can hold a marker that stands for anything else.
pub const MARKERS: u32 = 0x10_F800;

/// The marker of the lone surrogate `unit` (0xD800..=0xDFFF; anything else is U+FFFD).
pub fn marker(unit: u32) -> char {
    match unit.checked_sub(0xD800).filter(|k| *k < 0x800) {
        Some(k) => char::from_u32(MARKERS + k).unwrap_or('\u{FFFD}'),
        None => '\u{FFFD}',
    }
}

/// Whether `c` is a character of the marker range ([`MARKERS`]).
fn in_marker_range(c: u32) -> bool {
    (MARKERS..=0x10_FFFF).contains(&c)
}

/// Pushes `c`, a real character, as Rust holds it: itself, or in the marker range the
/// markers of its two UTF-16 surrogates ([`MARKERS`]).
pub fn push_char(buf: &mut String, c: char) {
    let u = u32::from(c);
    if in_marker_range(u) {
        let v = u - 0x1_0000;
        buf.push(marker(0xD800 + (v >> 10)));
        buf.push(marker(0xDC00 + (v & 0x3FF)));
    } else {
        buf.push(c);
    }
}

/// A string from JS (or anything else that holds real characters only), as Rust holds it:
/// characters of the marker range as the markers of their surrogates ([`push_char`]).
pub fn mark_private(s: &str) -> std::borrow::Cow<'_, str> {
    if !has_marker(s) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        push_char(&mut out, c);
    }
    std::borrow::Cow::Owned(out)
}

/// [`mark_private`] in place.
pub fn mark_private_in(s: &mut String) {
    if let std::borrow::Cow::Owned(o) = mark_private(s) {
        *s = o;
    }
}

/// Whether `s` may hold a marker: its UTF-8 starts with 0xF4 (plane 16). Rare in real text,
/// so the writers take their slow path only then.
pub fn has_marker(s: &str) -> bool {
    s.as_bytes().contains(&0xF4)
}

/// Appends `s` with each marker written as its `\uXXXX` escape (for text already inside a
/// JSON string).
fn push_marked(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for c in s.chars() {
        match u32::from(c).checked_sub(MARKERS) {
            Some(k) => {
                let u = 0xD800 + k;
                out.push_str("\\u");
                for shift in [12, 8, 4, 0] {
                    out.push(char::from(HEX[((u >> shift) & 15) as usize]));
                }
            }
            None => out.push(c),
        }
    }
}

/// Parses JSON as `JSON.parse` would take it, with lone surrogates and characters of the marker
/// range held as markers ([`MARKERS`]).
pub fn from_slice(bytes: &[u8]) -> Result<Value, JsonError> {
    read::read(bytes, read::Marks::Mark)
}

/// Parses JSON this crate wrote from a `Value` ([`to_string`] without the marker escapes:
/// serde_json's own text), whose markers are markers already.
pub(crate) fn from_written(bytes: &[u8]) -> Result<Value, JsonError> {
    read::read(bytes, read::Marks::Keep)
}

/// Appends `s` as a JSON string literal, byte for byte as serde_json writes it (`\"`, `\\`,
/// the short escapes `\b \t \n \f \r`, `\u00xx` for the other control characters, nothing
/// else escaped). The runs between escapes are copied whole, found eight bytes at a time:
/// serde_json looks every byte up in a table, which costs most of serialising a long text.
/// A marker is written as the lone surrogate escape it stands for ([`MARKERS`]).
pub fn push_json_str(out: &mut String, s: &str) {
    if has_marker(s) {
        // Rare (a lone surrogate): the plain escapes first, then the markers'.
        let mut plain = String::with_capacity(s.len() + 2);
        push_json_str_plain(&mut plain, s);
        push_marked(out, &plain);
        return;
    }
    push_json_str_plain(out, s);
}

fn push_json_str_plain(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let mut rest = s;
    while let Some(i) = crate::codec::scan::string_special(rest.as_bytes()) {
        out.push_str(&rest[..i]);
        let b = rest.as_bytes()[i];
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0C => out.push_str("\\f"),
            _ => {
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 15)]));
            }
        }
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lone surrogate escapes become markers, and only they: a pair, an escaped backslash
    /// before `ud800` and other escapes are read as serde_json reads them.
    #[test]
    fn lone_surrogates_are_read_as_markers() {
        let read = |t: &str| from_slice(t.as_bytes()).ok();
        let s = |t: String| Some(Value::String(t));
        assert_eq!(read(r#""a\ud83d""#), s(format!("a{}", marker(0xD83D))));
        assert_eq!(read(r#""\uDE00b""#), s(format!("{}b", marker(0xDE00))));
        assert_eq!(read(r#""\ud83d\ude00""#), s("😀".into()));
        assert_eq!(read(r#""\\ud800""#), s("\\ud800".into()));
        assert_eq!(
            read(r#""\ud800\u0041\udbff\ud800""#),
            s(format!(
                "{}A{}{}",
                marker(0xD800),
                marker(0xDBFF),
                marker(0xD800)
            ))
        );
        assert_eq!(
            read(r#"{"\udc00":["\n\ud83d"]}"#),
            Some(
                serde_json::json!({ marker(0xDC00).to_string(): [format!("\n{}", marker(0xD83D))] })
            )
        );
        // Not the surrogates' fault: refused where the text goes wrong.
        let bad = r#"["\ud83d", oops]"#;
        assert_eq!(
            from_slice(bad.as_bytes()).unwrap_err().to_string(),
            "expected a value at byte 11"
        );
        assert!(read(r#""\ud83""#).is_none());
    }

    /// Written back as the escapes they came as, by both writers; two halves side by side are
    /// the escaped pair, which `JSON.parse` reads as one character.
    #[test]
    fn markers_are_written_as_their_escapes() {
        let text = format!("x{}{}\"y{}", marker(0xD83D), marker(0xDE00), marker(0xDFFF));
        let want = r#""x\ud83d\ude00\"y\udfff""#;
        let mut out = String::new();
        push_json_str(&mut out, &text);
        assert_eq!(out, want);
        assert_eq!(
            to_string(&serde_json::json!({ "t": text })),
            format!(r#"{{"t":{want}}}"#)
        );
        // Read back as JS reads it: the two halves are one character, the last one is lone.
        let back = format!("x😀\"y{}", marker(0xDFFF));
        assert_eq!(from_slice(want.as_bytes()).unwrap(), Value::String(back));
        assert!(!has_marker("größe 😀"));
        // Plane 16 below the markers is written as it is.
        let mut out = String::new();
        push_json_str(&mut out, "\u{10F7FF}\u{100000}");
        assert_eq!(out, "\"\u{10F7FF}\u{100000}\"");
    }

    /// A real character of the marker range, as UTF-8 or as an escaped pair, is held as the
    /// markers of its surrogates and written back as that pair, which is the character again;
    /// a lone surrogate beside it stays lone (U+10F800–U+10FFFF used to be read as markers).
    #[test]
    fn private_use_characters_of_the_marker_range_round_trip() {
        for c in ['\u{10F800}', '\u{10FABC}', '\u{10FFFF}'] {
            let u = u32::from(c) - 0x1_0000;
            let (hi, lo) = (0xD800 + (u >> 10), 0xDC00 + (u & 0x3FF));
            let held = format!("a{}{}b", marker(hi), marker(lo));
            let raw = format!("\"a{c}b\"");
            let escaped = format!("\"a\\u{hi:04x}\\u{lo:04x}b\"");
            for text in [&raw, &escaped] {
                assert_eq!(
                    from_slice(text.as_bytes()).unwrap(),
                    Value::String(held.clone())
                );
            }
            let mut pushed = String::from("a");
            push_char(&mut pushed, c);
            pushed.push('b');
            assert_eq!(pushed, held);
            assert_eq!(mark_private(&format!("a{c}b")), held);
            // Written back as the pair, which JSON.parse (serde_json here) reads as `c`.
            let out = to_string(&Value::String(held));
            assert_eq!(out, escaped);
            assert_eq!(
                serde_json::from_str::<String>(&out).unwrap(),
                format!("a{c}b")
            );
        }
        // Beside a lone surrogate, in one text.
        let t = "\"\u{10F800}\\ud800x\"";
        let want = format!("{}{}{}x", marker(0xDBFE), marker(0xDC00), marker(0xD800));
        assert_eq!(from_slice(t.as_bytes()).unwrap(), Value::String(want));
        // The character below the range is itself.
        assert_eq!(mark_private("\u{10F7FF}"), "\u{10F7FF}");
    }

    /// Every byte that can need an escape, in every neighbourhood, as serde_json writes it.
    #[test]
    fn json_strings_are_written_as_serde_json_writes_them() {
        let mut cases: Vec<String> = (0u8..0x80).map(|b| char::from(b).to_string()).collect();
        cases.extend(
            [
                "",
                "plain",
                "größe 😀",
                "a\"b\\c\u{7f}\u{1f}\u{0}",
                "\n\n\r\t\u{8}\u{c}",
            ]
            .map(String::from),
        );
        let mut long = String::new();
        for k in 0..200u32 {
            long.push(char::from_u32(k % 0x90 + 1).unwrap_or('x'));
            long.push_str("0123456789");
            cases.push(long.clone());
        }
        for s in cases {
            let mut out = String::new();
            push_json_str(&mut out, &s);
            assert_eq!(out, serde_json::to_string(&s).unwrap(), "{s:?}");
        }
    }
}
