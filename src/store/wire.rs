//! What goes on the wire: path encoding, request bodies (the history as stored), and
//! sniffing a response that is not the event stream it should be.

use super::*;
use crate::reduce::History;

/// How much of a 2xx stream answer is kept to tell what it was when it held no event.
pub(super) const SNIFF_BYTES: usize = 256;

/// Whether the start of a body that yielded no event reads as an event stream (empty, only
/// comments and keep-alives, or a field line cut before its event ended) rather than a page
/// or a JSON document. Only the first non-blank line is looked at.
pub(super) fn looks_like_sse(body: &[u8]) -> bool {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let Some(line) = body
        .split(|&b| b == b'\n' || b == b'\r')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace))
    else {
        return true;
    };
    if line.starts_with(b":") {
        return true;
    }
    pub(super) const FIELDS: [&[u8]; 4] = [b"data", b"event", b"id", b"retry"];
    let field = line.split(|&b| b == b':').next().unwrap_or(line);
    if FIELDS.contains(&field) {
        return true;
    }
    // The kept bytes may end inside the first field name (a body padded with blank lines):
    // an unterminated line that begins a field name still reads as a stream.
    let end = line.as_ptr() as usize - body.as_ptr() as usize + line.len();
    end == body.len() && FIELDS.iter().any(|f| f.starts_with(line))
}

/// The error of a non-2xx answer: status 0 marks a body over `limits.maxBodyBytes` (the answer
/// `what` was is named in the message), any other status is the server's refusal.
pub(super) fn refusal(status: u16, body: &[u8], what: &str) -> ChatError {
    match status {
        0 => ChatError::protocol(format!("{what} too large")),
        _ => ChatError::from_http(status, body),
    }
}

/// `s.replace(pat, with)` for a non-empty `pat`, without `str::replace`: its two-way
/// substring searcher costs 2.7 KB of wasm, for routes a few dozen bytes long.
pub(super) fn replace_all(s: &str, pat: &str, with: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let (mut i, mut from) = (0, 0);
    while i < s.len() {
        if s.as_bytes()[i..].starts_with(pat.as_bytes()) {
            // A match starts on a char boundary: `pat` is UTF-8, so its first byte leads.
            out.push_str(&s[from..i]);
            out.push_str(with);
            i += pat.len();
            from = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&s[from..]);
    out
}

/// Percent-encodes a path segment or query value (everything but RFC 3986's unreserved set).
pub(super) fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The history as the server stores it: a file part's `data:` URL longer than `max_url`
/// chars is left out (it is the bytes themselves, often megabytes, and the server keeps its
/// own copy of attachments); a shorter one is kept, so the file still shows after a reload.
pub fn history_for_storage(messages: &[UIMessage], max_url: usize) -> Value {
    Value::Array(
        messages
            .iter()
            .map(|m| message_for_storage(m, max_url))
            .collect(),
    )
}

/// One message as the server stores it (see [`history_for_storage`]).
pub(super) fn message_for_storage(m: &UIMessage, max_url: usize) -> Value {
    let mut v = serde_json::to_value(m).unwrap_or(Value::Null);
    if let Some(parts) = v.get_mut("parts").and_then(Value::as_array_mut) {
        for p in parts
            .iter_mut()
            .filter(|p| is_big_data_url_file(p, max_url))
        {
            if let Some(obj) = p.as_object_mut() {
                obj.remove("url");
            }
        }
    }
    v
}

/// A part's JSON is a file part whose `url` is a `data:` URL longer than `max_url`.
pub(super) fn is_big_data_url_file(p: &Value, max_url: usize) -> bool {
    p.get("type").and_then(Value::as_str) == Some("file")
        && p.get("url")
            .and_then(Value::as_str)
            .is_some_and(|u| is_big_data_url(u, max_url))
}

fn is_big_data_url(url: &str, max_url: usize) -> bool {
    url.starts_with("data:") && url.len() > max_url
}

/// Whether the stored form of `m` differs from what the chat POST sends: it has a file part
/// with a `data:` URL longer than `max_url`.
pub(super) fn has_big_data_url(m: &UIMessage, max_url: usize) -> bool {
    m.parts.iter().any(|p| match p {
        Part::File { url, .. } => is_big_data_url(url, max_url),
        Part::Other(v) => is_big_data_url_file(v, max_url),
        _ => false,
    })
}

/// The history's JSON, message by message, each kept with the version it was written at. The
/// chat POST and the PUT of AI SDK mode carry the whole history: with this, a turn after a long
/// history serialises only the messages that changed, then concatenates.
#[derive(Debug, Default)]
pub(super) struct HistoryJson {
    /// By position in the history.
    pub(super) entries: Vec<MessageJson>,
}

#[derive(Debug)]
pub(super) struct MessageJson {
    /// The message's version when `sent` was written (versions are never reused in a store).
    pub(super) version: u64,
    /// The message as the chat POST sends it.
    pub(super) sent: String,
    /// As the PUT stores it, when that differs (`data:` URLs stripped).
    pub(super) stored: Option<String>,
}

impl MessageJson {
    pub(super) fn new(m: &UIMessage, version: u64, max_url: usize) -> Self {
        MessageJson {
            version,
            // Straight to text (no `Value` tree), texts escaped by runs.
            sent: m.to_json(),
            stored: has_big_data_url(m, max_url)
                .then(|| to_string(&message_for_storage(m, max_url))),
        }
    }
}

impl HistoryJson {
    /// Brings every entry up to date with `history`: only messages whose version moved are
    /// serialised again.
    pub(super) fn refresh(&mut self, history: &History, max_url: usize) {
        let messages = history.messages();
        self.entries.truncate(messages.len());
        for (i, (m, &v)) in messages.iter().zip(history.versions()).enumerate() {
            match self.entries.get_mut(i) {
                Some(e) if e.version == v => {}
                Some(e) => *e = MessageJson::new(m, v, max_url),
                None => self.entries.push(MessageJson::new(m, v, max_url)),
            }
        }
    }

    /// `fields` (a JSON object) as text with `"messages"`: the history as sent (`stored`:
    /// as stored) added last. Call [`HistoryJson::refresh`] first.
    pub(super) fn body(&self, fields: &Value, stored: bool) -> String {
        let head = to_string(fields);
        fn pick(e: &MessageJson, stored: bool) -> &str {
            match (&e.stored, stored) {
                (Some(s), true) => s,
                _ => &e.sent,
            }
        }
        let len: usize = self.entries.iter().map(|e| pick(e, stored).len() + 1).sum();
        let mut out = String::with_capacity(head.len() + len + 16);
        out.push_str(head.strip_suffix('}').unwrap_or("{"));
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str("\"messages\":[");
        for (i, e) in self.entries.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(pick(e, stored));
        }
        out.push_str("]}");
        out
    }

    pub(super) fn clear(&mut self) {
        self.entries = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `replace_all` is `str::replace` (for the non-empty patterns it is given).
    #[test]
    fn replace_all_is_str_replace() {
        for s in [
            "",
            "{sessionId}",
            "/api/{sessionId}/x/{sessionId}",
            "{{sessionId}}",
            "{sessionI{sessionId}d}",
            "é{sessionId}ü{session",
            "no placeholder",
        ] {
            for with in ["", "s%201", "{sessionId}"] {
                assert_eq!(
                    replace_all(s, "{sessionId}", with),
                    s.replace("{sessionId}", with)
                );
            }
        }
    }

    fn message(id: &str, n: usize) -> UIMessage {
        let v = json!({"id": id, "role": if n.is_multiple_of(2) { "user" } else { "assistant" },
        "metadata": if n.is_multiple_of(3) { json!({"z": 1, "a": [n]}) } else { Value::Null },
        "parts": [
            {"type": "text", "text": format!("t{n} \"q\" \u{e9}"), "state": "done"},
            {"type": "file", "mediaType": "image/png",
             "url": match n % 4 { 0 => "data:image/png;base64,AAAA", 1 => "data:,x", _ => "https://x/a.png" }},
            {"type": "tool-x", "toolCallId": format!("c{n}"), "state": "output-available",
             "input": {"b": 1, "a": 2}, "output": null, "futureKey": [n]},
            {"type": "data-y", "data": {"k": n}, "transient": false},
            {"type": "future-kind", "url": "data:x", "type2": 1},
        ]});
        let mut m = UIMessage::from_json(v).unwrap();
        if n.is_multiple_of(4) {
            m.metadata = None;
        }
        m
    }

    /// The bodies as they were built before the cache: through one `Value`.
    fn expected(h: &History, fields: &Value, stored: bool) -> Value {
        let mut body = fields.clone();
        body["messages"] = if stored {
            history_for_storage(h.messages(), 8)
        } else {
            serde_json::to_value(h.messages()).unwrap()
        };
        body
    }

    fn check(cache: &mut HistoryJson, h: &History) {
        cache.refresh(h, 8);
        let fields = json!({"id": "s", "trigger": "submit-message", "message": "m"});
        for (fields, stored) in [(fields, false), (json!({}), true)] {
            let text = cache.body(&fields, stored);
            let got: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(got, expected(h, &fields, stored), "stored: {stored}");
        }
    }

    #[test]
    fn cached_history_bodies_are_the_history() {
        let mut h = History::new();
        let mut cache = HistoryJson::default();
        check(&mut cache, &h);
        for n in 0..12 {
            h.push(message(&format!("m{n}"), n));
        }
        check(&mut cache, &h);
        // A change in the middle, a rename, a removal, a truncation, a replacement.
        h.at_mut(3).parts.push(Part::StepStart);
        h.rename(5, "renamed");
        check(&mut cache, &h);
        assert_eq!(cache.entries[3].version, h.version(3));
        h.remove(1);
        check(&mut cache, &h);
        h.truncate(7);
        h.push(message("m4", 4));
        check(&mut cache, &h);
        h.replace_all((0..5).map(|n| message(&format!("r{n}"), n + 1)).collect());
        check(&mut cache, &h);
    }

    #[test]
    fn unchanged_messages_are_not_serialised_again() {
        let mut h = History::new();
        for n in 0..4 {
            h.push(message(&format!("m{n}"), n));
        }
        let mut cache = HistoryJson::default();
        cache.refresh(&h, 8);
        let before: Vec<*const u8> = cache.entries.iter().map(|e| e.sent.as_ptr()).collect();
        h.at_mut(2);
        cache.refresh(&h, 8);
        let after: Vec<*const u8> = cache.entries.iter().map(|e| e.sent.as_ptr()).collect();
        assert_eq!(before[..2], after[..2]);
        assert_eq!(before[3], after[3]);
    }
}
