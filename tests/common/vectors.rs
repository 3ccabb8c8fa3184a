//! The upstream client's conformance vectors (`tests/fixtures/pi-native/vectors-sample.json`,
//! its `format` section defines every field) and the reducer-level way to run them: each bare
//! event wrapped in the `{ref, seq, event}` envelope the addressed server sends.

use std::path::PathBuf;

use agent_chat_store::{parse_native_line, Frame, NativeEffect, NativeSession};
use serde_json::{json, Value};

pub fn vectors() -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pi-native/vectors-sample.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("the pi-native vectors, {}: {e}", path.display()));
    let v: Value = serde_json::from_str(&text).unwrap();
    v["vectors"].as_array().unwrap().clone()
}

/// The vector whose `source` is `source` (`<file>:<line>` upstream).
pub fn vector(source: &str) -> Value {
    vectors()
        .into_iter()
        .find(|v| v["source"] == source)
        .unwrap_or_else(|| panic!("no vector {source}"))
}

/// An event as the addressed server sends it: in its `{ref, seq, event}` envelope.
pub fn wire(event: &Value) -> String {
    json!({"ref": {"agentTypeId": "pi", "sessionId": "s1"}, "seq": event["seq"], "event": event})
        .to_string()
}

pub fn frame(event: Value) -> Frame {
    parse_native_line(&wire(&event)).unwrap()
}

pub fn session_after(events: &[Value]) -> (NativeSession, Vec<NativeEffect>) {
    let mut s = NativeSession::new();
    let mut out = Vec::new();
    for e in events {
        s.apply(frame(e.clone()), &mut out);
    }
    (s, out)
}

pub fn messages(s: &NativeSession) -> Value {
    serde_json::to_value(s.messages()).unwrap()
}
