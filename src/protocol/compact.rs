//! [`Json`]: a JSON value of a tool part, held as text once it is only kept.
//!
//! A `serde_json` object is a B-tree whose every node has room for eleven entries: a one-key
//! object costs about 320 bytes of wasm memory, where its JSON is twenty. A history of 100,000
//! hydrated tool calls took 12.9× its JSON that way. Values read from a stored history are
//! kept as their JSON text instead (about their own size) and parsed when they are read;
//! values the reducers build while a part streams stay trees, which they change in place.

use std::borrow::Cow;

use serde::{Serialize, Serializer};
use serde_json::Value;

/// A JSON value: a tree, or (an array or object only kept) its compact JSON text.
#[derive(Debug, Clone)]
pub enum Json {
    /// A value as a tree (boxed: an `Option<Json>` is 12 bytes in wasm, not 24, in every
    /// tool part).
    Tree(Box<Value>),
    /// A non-empty array or object as `serde_json` writes it: keys sorted (a `Value`
    /// object's order), so equal values have equal texts.
    Text(Box<str>),
}

impl Json {
    /// `v`, as text when it is a non-empty array or object.
    pub fn compact(v: Value) -> Json {
        let nested = match &v {
            Value::Array(a) => !a.is_empty(),
            Value::Object(o) => !o.is_empty(),
            _ => false,
        };
        if !nested {
            return Json::from(v);
        }
        match serde_json::to_string(&v) {
            Ok(text) => Json::Text(text.into_boxed_str()),
            Err(_) => Json::from(v),
        }
    }

    /// The value (parsed from its text, which cannot fail: it was written from a value).
    pub fn value(&self) -> Cow<'_, Value> {
        match self {
            Json::Tree(v) => Cow::Borrowed(&**v),
            Json::Text(text) => {
                Cow::Owned(super::json::from_written(text.as_bytes()).unwrap_or_default())
            }
        }
    }

    /// The value, owned.
    pub fn into_value(self) -> Value {
        match self {
            Json::Tree(v) => *v,
            json => json.value().into_owned(),
        }
    }

    /// The tree, when the value is held as one.
    pub fn as_tree(&self) -> Option<&Value> {
        match self {
            Json::Tree(v) => Some(&**v),
            Json::Text(_) => None,
        }
    }

    /// The tree, when the value is held as one, to change in place.
    pub fn tree_mut(&mut self) -> Option<&mut Value> {
        match self {
            Json::Tree(v) => Some(&mut **v),
            Json::Text(_) => None,
        }
    }
}

impl From<Value> for Json {
    fn from(v: Value) -> Json {
        Json::Tree(Box::new(v))
    }
}

impl PartialEq for Json {
    fn eq(&self, other: &Json) -> bool {
        match (self, other) {
            (Json::Tree(a), Json::Tree(b)) => a == b,
            (Json::Text(a), Json::Text(b)) => a == b,
            _ => *self.value() == *other.value(),
        }
    }
}

impl PartialEq<Value> for Json {
    fn eq(&self, other: &Value) -> bool {
        *self.value() == *other
    }
}

/// A text is written by parsing it again: it is exported once per change of its message,
/// and serde_json's raw values (which would copy it through) cost 10 KB of wasm.
impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value().serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_compacted_value_reads_writes_and_compares_as_the_value() {
        let v = json!({"path": "/d/1", "a": [1, {"b": null}], "s": "\u{10F800}x"});
        let c = Json::compact(v.clone());
        assert!(matches!(c, Json::Text(_)));
        assert_eq!(*c.value(), v);
        assert_eq!(c, Json::from(v.clone()));
        assert_eq!(c, Json::compact(v.clone()));
        assert_ne!(c, Json::compact(json!({"path": "/d/2"})));
        assert_eq!(serde_json::to_value(&c).unwrap(), v);
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            serde_json::to_string(&v).unwrap()
        );
        // Scalars and empty containers stay trees: nothing to gain.
        for s in [json!(1), json!("x"), json!([]), json!({}), Value::Null] {
            assert!(matches!(Json::compact(s), Json::Tree(_)));
        }
    }
}
