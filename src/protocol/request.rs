//! What a host adds to one send: `useChat`'s `ChatRequestOptions` and the new user message's
//! own fields.

use serde_json::{Map, Value};

/// The options of one `send` / `regenerate` (and of the follow-up a send while busy becomes).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SendOptions {
    /// Keys merged into the request's JSON body after the store's own, which they never
    /// replace (`id`, `sessionId`, `message`, `messages`, `trigger`, …).
    pub body: Map<String, Value>,
    /// Headers for this request, over the store's `headers`.
    pub headers: Vec<(String, String)>,
    /// Request metadata: handed to the host's `prepareSendMessagesRequest`, never sent.
    pub metadata: Option<Value>,
    /// The new user message's `metadata`.
    pub message_metadata: Option<Value>,
    /// The new user message's id (a host's `generateId`); the store makes one otherwise.
    pub message_id: Option<String>,
    /// The answer's id when its stream names none and it starts a new message.
    pub response_id: Option<String>,
}

impl SendOptions {
    /// Nothing added.
    pub fn is_empty(&self) -> bool {
        *self == SendOptions::default()
    }

    /// What the request itself carries to the shell: headers, request metadata, and with
    /// `store_body` (the host has a prepare hook) the body that hook sees, as the `ai`
    /// package gives it: the send's keys over `store_body`'s, none of the store's own. `None`
    /// when there is nothing; always `Some` with `store_body`, an empty body included.
    pub fn carried(&self, store_body: Option<&Map<String, Value>>) -> Option<Box<SendOptions>> {
        let mut body = Map::new();
        if let Some(store_body) = store_body {
            body = self.body.clone();
            for (k, v) in store_body {
                body.entry(k.clone()).or_insert_with(|| v.clone());
            }
            // The messages are the store's, given to the hook apart (as `merge_body`).
            body.remove("messages");
        }
        let empty = self.headers.is_empty() && self.metadata.is_none() && store_body.is_none();
        (!empty).then(|| {
            Box::new(SendOptions {
                body,
                headers: self.headers.clone(),
                metadata: self.metadata.clone(),
                ..SendOptions::default()
            })
        })
    }

    /// Adds `body`'s keys to `fields` (a JSON object) where `fields` has none of that name;
    /// `messages` is always the store's.
    pub fn merge_body(&self, fields: &mut Value) {
        merge_body(&self.body, fields);
    }
}

/// Adds `extra`'s keys to `fields` (a JSON object) where it has none of that name, and never
/// `messages` (the store adds the history after).
pub fn merge_body(extra: &Map<String, Value>, fields: &mut Value) {
    let Value::Object(fields) = fields else {
        return;
    };
    for (k, v) in extra {
        if k != "messages" && !fields.contains_key(k) {
            fields.insert(k.clone(), v.clone());
        }
    }
}
