//! The command bodies and paths of the protocol (reference §3.12–§3.16), as the upstream
//! client sends them: `requestId` is the prompt's `clientNonce`, a follow-up's
//! `"<clientNonce>:<clientSeq>"`, so a retry is the same command byte for byte.

use serde_json::{json, Value};

use crate::protocol::FileAttachment;

/// `/api/v1/agents/{agentType}/sessions/{sessionId}`, segments encoded.
pub fn session_path(agent_type: &str, session_id: &str) -> String {
    format!("{}/{}", sessions_path(agent_type), encode(session_id))
}

/// `/api/v1/agents/{agentType}/sessions`: the list, and `POST` to create one.
pub fn sessions_path(agent_type: &str) -> String {
    format!("/api/v1/agents/{}/sessions", encode(agent_type))
}

fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// `POST …/rename`.
pub fn rename(request_id: &str, title: &str) -> Value {
    json!({"requestId": request_id, "title": title})
}

/// `POST /api/v1/agents/{agentType}/sessions`: a new session, named by the server; the
/// title the user gave it before it existed goes with it.
pub fn create(request_id: &str, title: Option<&str>) -> Value {
    let mut body = json!({ "requestId": request_id });
    if let Some(t) = title {
        body["title"] = Value::String(t.into());
    }
    body
}

/// `POST …/prompt`, with the send's files as its `attachments` (reference §11: the
/// server gives the model the images among them).
pub fn prompt(client_nonce: &str, content: &str, files: &[FileAttachment]) -> Value {
    let mut body =
        json!({"requestId": client_nonce, "clientNonce": client_nonce, "content": content});
    if !files.is_empty() {
        let attachments = files.iter().map(|f| {
            let mut a = json!({"url": f.url, "mediaType": f.media_type});
            if let Some(name) = &f.filename {
                a["filename"] = Value::String(name.clone());
            }
            a
        });
        body["attachments"] = Value::Array(attachments.collect());
    }
    body
}

/// `POST …/followup`.
pub fn followup(client_nonce: &str, client_seq: u64, content: &str) -> Value {
    json!({
        "requestId": format!("{client_nonce}:{client_seq}"),
        "clientNonce": client_nonce,
        "content": content,
        "clientSeq": client_seq,
    })
}

/// `POST …/queue/clear` for one item: both selectors, so an item no longer queued is a
/// 409 (`AGENT_REQUEST_CONFLICT`) rather than a silent `cleared: 0`.
pub fn clear_one(client_nonce: &str, client_seq: u64) -> Value {
    json!({"clientNonce": client_nonce, "clientSeq": client_seq})
}
