//! Identity-stable snapshots. A message (and a queued item) is converted to JS only when its
//! version changed; otherwise the previous frozen object is reused, so React skips it. The
//! whole snapshot is the same object until the store's revision moves.

use js_sys::Array;
use serde_json::json;
use wasm_bindgen::prelude::*;

use crate::protocol::json::to_string;
use crate::protocol::ChatError;
use crate::store::ChatStore;

use super::{js, js_error};

pub(crate) struct SnapshotCache {
    revision: u64,
    value: JsValue,
    messages: JsValue,
    message_keys: Vec<(String, u64)>,
    queued: JsValue,
    queued_keys: Vec<(String, u64)>,
    error: Option<ChatError>,
    error_js: JsValue,
}

impl Default for SnapshotCache {
    fn default() -> Self {
        SnapshotCache {
            revision: 0,
            value: JsValue::UNDEFINED,
            messages: JsValue::UNDEFINED,
            message_keys: Vec::new(),
            queued: JsValue::UNDEFINED,
            queued_keys: Vec::new(),
            error: None,
            error_js: JsValue::NULL,
        }
    }
}

/// Re-exports the changed entries of a list; the unchanged ones keep their JS objects.
/// `json(i)` is called only for the entries that changed.
fn patch(
    prev: &JsValue,
    keys: &mut Vec<(String, u64)>,
    items: impl ExactSizeIterator<Item = (String, u64)>,
    json: impl Fn(usize) -> String,
) -> Option<JsValue> {
    let len = items.len();
    let changed = Array::new();
    for (i, (id, version)) in items.enumerate() {
        let same = keys.get(i).is_some_and(|(k, v)| *k == id && *v == version);
        if !same {
            changed.push(&JsValue::from(i as u32));
            changed.push(&js::parse_frozen(&json(i)));
            if i < keys.len() {
                keys[i] = (id, version);
            } else {
                keys.push((id, version));
            }
        }
    }
    let shrunk = keys.len() > len;
    keys.truncate(len);
    if changed.length() == 0 && !shrunk && !prev.is_undefined() {
        return None; // the very same array
    }
    Some(js::patch_array(prev, len as u32, &changed))
}

impl SnapshotCache {
    pub(crate) fn get(&mut self, core: &ChatStore) -> JsValue {
        if self.revision == core.revision() && !self.value.is_undefined() {
            return self.value.clone();
        }
        let messages = core.messages();
        let msgs = messages
            .iter()
            .enumerate()
            .map(|(i, m)| (m.id.clone(), core.message_version(i)));
        let export = |i: usize| to_string(&core.export_message(i));
        if let Some(arr) = patch(&self.messages, &mut self.message_keys, msgs, export) {
            self.messages = arr;
        }
        let items = core.queued();
        let queued = items.iter().map(|q| (q.id.clone(), q.version));
        if let Some(arr) = patch(&self.queued, &mut self.queued_keys, queued, |i| {
            to_string(&items[i])
        }) {
            self.queued = arr;
        }
        if core.error() != self.error.as_ref() {
            self.error = core.error().cloned();
            self.error_js = self.error.as_ref().map(js_error).unwrap_or(JsValue::NULL);
        }
        let composer = core.composer();
        let head = json!({
            "sessionId": core.session_id(),
            "status": core.status(),
            "capabilities": core.capabilities(),
            "capabilitiesLoaded": core.capabilities_loaded(),
            "tools": core.tools(),
            "composer": {
                "draft": core.draft(),
                "files": core.draft_files(),
                "canSend": composer.can_send,
                "reason": composer.reason,
                "hint": composer.hint,
            },
            "turnId": core.turn_id(),
            "hydrated": core.hydrated(),
            "canRegenerate": core.can_regenerate(),
        });
        let head = js::parse(&to_string(&head));
        self.value = js::snapshot(&head, &self.messages, &self.queued, &self.error_js);
        self.revision = core.revision();
        self.value.clone()
    }
}
