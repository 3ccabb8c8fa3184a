//! Small helpers to take typed fields out of a parsed JSON object without cloning.
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

/// Serialises a value to a JSON string. Only fails for maps with non-string keys, which a
/// `Value` cannot hold, so the fallback is never seen.
pub fn to_string(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| String::from("null"))
}
