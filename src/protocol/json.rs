//! Small helpers to take typed fields out of a parsed JSON object without cloning, and to
//! write a JSON string fast.
//!
//! Chunks are parsed once into a [`Value`]; the reducers then move the fields they need out
//! of its map. A `null` counts as absent, as it does for the `ai` package's optional fields.

use serde_json::{Map, Value};

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

/// A non-negative integer field (also accepts a float with no fraction, as JS sends them).
pub fn get_u64(obj: &Object, key: &str) -> Option<u64> {
    let v = obj.get(key)?;
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 9.007_199_254_740_992e15)
            .map(|f| f as u64)
    })
}

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
/// `Value` cannot hold, so the fallback is never seen.
pub fn to_string(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| String::from("null"))
}

/// Appends `s` as a JSON string literal, byte for byte as serde_json writes it (`\"`, `\\`,
/// the short escapes `\b \t \n \f \r`, `\u00xx` for the other control characters, nothing
/// else escaped). The runs between escapes are copied whole, found eight bytes at a time:
/// serde_json looks every byte up in a table, which costs most of serialising a long text.
pub fn push_json_str(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let mut rest = s;
    while let Some(i) = crate::scan::string_special(rest.as_bytes()) {
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
