//! The benchmark's scenario driver, one copy for both benches: the native one
//! (`benches/native.rs`, `cargo bench --bench native --features _internal_bench`) and the wasm
//! exports of `crates/wasm/src/bench.rs` (`benchFloor`, `BenchCore`; the `bench` feature,
//! `bench/build.sh`), so the two time the same loop and give the wasm/native ratio of the core
//! itself. Not part of the library's API: only built with the `_internal_bench` feature (which
//! `bench` turns on).
//!
//! - [`floor`]: the floor of issue 6 (h). The least any SSE + JSON client must do with a stream
//!   of text deltas: split the events with the crate's own SSE decoder, parse each chunk with
//!   serde_json into a `Value`, and append the `text-delta` deltas to one string.
//! - [`Core`]: the core [`ChatStore`] on a scripted transport, without any host (no fetch, no
//!   promises, no snapshots).

use serde_json::Value;

use crate::codec::sse::{SseDecoder, SseItem};
use crate::protocol::{Capabilities, Role};
use crate::util::random::SeededRandom;
use std::collections::VecDeque;

use crate::store::{ChatStore, Output, Request, RequestKind, ResponseHead, StoreOptions};

/// The floor: feeds `bytes` in pieces of `chunk` (> 0) bytes, splits the events, parses each
/// with serde_json and appends the text deltas. Returns the text's length (so the work cannot
/// be optimised away).
pub fn floor(bytes: &[u8], chunk: usize) -> usize {
    let mut decoder = SseDecoder::new();
    let mut items: Vec<SseItem> = Vec::new();
    let mut text = String::new();
    for piece in bytes.chunks(chunk) {
        decoder.push_into(piece, &mut items);
        for item in items.drain(..) {
            let Ok(ev) = item else { continue };
            if ev.data == "[DONE]" {
                continue;
            }
            let Ok(v) = serde_json::from_str::<Value>(&ev.data) else {
                continue;
            };
            if v.get("type").and_then(Value::as_str) == Some("text-delta") {
                if let Some(d) = v.get("delta").and_then(Value::as_str) {
                    text.push_str(d);
                }
            }
        }
    }
    decoder.finish();
    text.len()
}

/// The core store on a scripted transport: [`Core::new`] hydrates from `history` (a
/// messages-route answer) when given; [`Core::run`] sends one message and feeds its bytes as
/// the chat stream in network-sized chunks, answering every other request the store makes
/// (the history PUT) with `{}`.
pub struct Core {
    store: ChatStore,
    now: u64,
    /// Requests drained while the stream is fed, answered afterwards.
    deferred: VecDeque<Request>,
}

impl Core {
    /// A store with these capabilities (the defaults for `None`), hydrated from `history`.
    pub fn new(capabilities: Option<Capabilities>, history: Option<&[u8]>) -> Core {
        let mut opts = StoreOptions::new("bench");
        opts.capabilities = capabilities;
        opts.hydrate = history.is_some();
        let store = ChatStore::new(opts, Box::new(SeededRandom(1)), 1);
        let mut core = Core {
            store,
            now: 1,
            deferred: VecDeque::new(),
        };
        core.answer_all(history);
        core
    }

    /// One turn over `bytes` in pieces of `chunk` (> 0) bytes; returns the number of messages
    /// afterwards, or `None` when the store made no chat request.
    pub fn run(&mut self, bytes: &[u8], chunk: usize) -> Option<usize> {
        self.now += 1;
        let now = self.now;
        self.store.send("go", Vec::new(), now);
        let mut chat = None;
        loop {
            self.drain();
            let Some(req) = self.deferred.pop_front() else {
                break;
            };
            if req.kind == RequestKind::Chat {
                chat = Some(req.id);
            } else {
                self.answer(req.id, b"{}");
            }
        }
        let id = chat?;
        let head = ResponseHead {
            status: 200,
            content_type: Some("text/event-stream".into()),
            turn_id: None,
        };
        self.store.handle_response_head(id, head, now);
        self.drain();
        for piece in bytes.chunks(chunk) {
            self.store.handle_response_body(id, piece, now);
            self.drain();
        }
        self.store.handle_response_end(id, now);
        self.answer_all(None);
        Some(self.store.messages().len())
    }

    /// The last assistant message as JSON (for checking a run, outside the timed part).
    pub fn last_message_json(&self) -> String {
        self.store
            .messages()
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(crate::protocol::json::to_string)
            .unwrap_or_default()
    }

    fn answer(&mut self, id: u64, body: &[u8]) {
        let head = ResponseHead {
            status: 200,
            content_type: Some("application/json".into()),
            turn_id: None,
        };
        self.store.handle_response_head(id, head, self.now);
        self.store.handle_response_body(id, body, self.now);
        self.store.handle_response_end(id, self.now);
    }

    /// Answers every request (the history GET with `history`, anything else with `{}`).
    fn answer_all(&mut self, history: Option<&[u8]>) {
        loop {
            self.drain();
            let Some(req) = self.deferred.pop_front() else {
                break;
            };
            let body = match (req.kind, history) {
                (RequestKind::MessagesGet, Some(h)) => h,
                _ => b"{}".as_slice(),
            };
            self.answer(req.id, body);
        }
    }

    /// The run loop's drain: events and aborts are dropped (a host would deliver them),
    /// requests wait in `deferred` for the caller to answer.
    fn drain(&mut self) {
        while let Some(out) = self.store.poll_output() {
            if let Output::Request(req) = out {
                self.deferred.push_back(req);
            }
        }
    }
}

// ----- big inputs of issue 38: a pi-native `/state`, a history, a session list -------------

/// The words of the generated texts (deterministic, no randomness needed).
const WORDS: [&str; 8] = [
    "alpha ", "beta ", "gamma ", "delta ", "epsilon ", "zeta ", "eta ", "theta ",
];

fn text_of(i: usize, words: usize) -> String {
    (0..words)
        .map(|k| WORDS[(i * 7 + k) % WORDS.len()])
        .collect()
}

/// `n` messages, user and assistant in turn; every assistant message has a text and, every
/// other one, a settled tool call. `native`: as `GET …/state` lists them (`BoringChatMessage`,
/// SPEC §14), else as the messages route does (`UIMessage`s). The two hold the same content.
/// `tiny`: a word of text each and no tool calls (where the cost per message shows most).
fn messages_json(n: usize, native: bool, tiny: bool) -> String {
    let mut out = String::from("[");
    for i in 0..n {
        if i > 0 {
            out.push(',');
        }
        let user = i % 2 == 0;
        let role = if user { "user" } else { "assistant" };
        let text = match tiny {
            true => text_of(i, 1),
            false => text_of(i, if user { 12 } else { 40 }),
        };
        let tool = !tiny && !user && i % 4 == 1;
        if native {
            out.push_str(&format!(
                r#"{{"id":"m{i}","role":"{role}","status":"done","createdAt":{},"turnId":"t{}","parts":[{{"type":"text","id":"m{i}:text:0","text":"{text}"}}"#,
                1_700_000_000_000u64 + i as u64,
                i / 2
            ));
            if tool {
                out.push_str(&format!(
                    r#",{{"type":"tool-call","id":"c{i}","toolName":"read","input":{{"path":"/src/file{i}.rs"}},"state":"output-available","output":{{"content":[{{"type":"text","text":"fn f{i}() {{}}"}}]}}}}"#
                ));
            }
        } else {
            out.push_str(&format!(
                r#"{{"id":"m{i}","role":"{role}","metadata":{{"status":"done","createdAt":{},"turnId":"t{}"}},"parts":[{{"type":"text","text":"{text}","state":"done"}}"#,
                1_700_000_000_000u64 + i as u64,
                i / 2
            ));
            if tool {
                out.push_str(&format!(
                    r#",{{"type":"tool-read","toolCallId":"c{i}","toolName":"read","input":{{"path":"/src/file{i}.rs"}},"state":"output-available","output":[{{"type":"text","text":"fn f{i}() {{}}"}}]}}"#
                ));
            }
        }
        out.push_str("]}");
    }
    out.push(']');
    out
}

/// A pi-native `GET …/state` answer of `n` messages (idle, nothing queued).
pub fn native_state_body(n: usize, tiny: bool) -> Vec<u8> {
    state_with(n, tiny, "")
}

/// [`native_state_body`] with `extra` (messages as JSON, each after a comma) after the `n`.
fn state_with(n: usize, tiny: bool, extra: &str) -> Vec<u8> {
    let mut messages = messages_json(n, true, tiny);
    messages.pop();
    messages.push_str(extra);
    format!(
        r#"{{"ref":{{"agentTypeId":"pi","sessionId":"bench"}},"seq":{n},"state":{{"protocolVersion":1,"sessionId":"bench","seq":{n},"status":"idle","messages":{messages}],"queue":{{"followUps":[]}},"followUpMode":"one-at-a-time"}}}}"#,
    )
    .into_bytes()
}

/// A messages-route answer (`{messages: [...]}`) of the same `n` messages.
pub fn history_body(n: usize, tiny: bool) -> Vec<u8> {
    format!(r#"{{"messages":{}}}"#, messages_json(n, false, tiny)).into_bytes()
}

/// The pages of a pi-native session list of `n` sessions, `per_page` a page (the last has
/// no `nextCursor`), most recent first.
pub fn session_pages(n: usize, per_page: usize) -> Vec<Vec<u8>> {
    let per_page = per_page.max(1);
    let mut pages = Vec::new();
    let mut start = 0;
    while start < n || pages.is_empty() {
        let end = (start + per_page).min(n);
        let mut s = String::from(r#"{"sessions":["#);
        for i in start..end {
            if i > start {
                s.push(',');
            }
            s.push_str(&format!(
                r#"{{"ref":{{"agentTypeId":"pi","sessionId":"s{i}"}},"title":"{}","status":"idle","createdAt":{},"updatedAt":{},"turnCount":3}}"#,
                text_of(i, 5).trim_end(),
                1_700_000_000_000u64 - i as u64,
                1_700_000_000_000u64 - i as u64
            ));
        }
        s.push(']');
        if end < n {
            s.push_str(&format!(r#","nextCursor":"c{end}""#));
        }
        s.push('}');
        pages.push(s.into_bytes());
        start = end;
    }
    pages
}

/// A store over the pi-native transport (agent type `pi`): opened, so its first request,
/// the state read, is on its way.
#[cfg(feature = "pi")]
fn native_store() -> ChatStore {
    let mut opts = StoreOptions::new("bench");
    opts.pi_native = Some("pi".into());
    ChatStore::new(opts, Box::new(SeededRandom(1)), 1)
}

#[cfg(feature = "pi")]
fn next_request(store: &mut ChatStore, kind: RequestKind) -> Option<u64> {
    let mut found = None;
    while let Some(out) = store.poll_output() {
        if let Output::Request(req) = out {
            if req.kind == kind && found.is_none() {
                found = Some(req.id);
            }
        }
    }
    found
}

/// Answers `id` with `body` in pieces of `chunk` (> 0) bytes.
fn answer_in_pieces(store: &mut ChatStore, id: u64, body: &[u8], chunk: usize, now: u64) {
    let head = ResponseHead {
        status: 200,
        content_type: Some("application/json".into()),
        turn_id: None,
    };
    store.handle_response_head(id, head, now);
    for piece in body.chunks(chunk) {
        store.handle_response_body(id, piece, now);
    }
    store.handle_response_end(id, now);
}

/// A pi-native store reads `body` as its `/state` answer, in network pieces of `chunk` (> 0)
/// bytes: what opening a session of that history costs. Returns the messages shown.
#[cfg(feature = "pi")]
pub fn native_state(body: &[u8], chunk: usize) -> usize {
    let mut store = native_store();
    let Some(id) = next_request(&mut store, RequestKind::NativeState) else {
        return 0;
    };
    answer_in_pieces(&mut store, id, body, chunk, 2);
    let n = store.messages().len();
    // The events read it asks next stays unanswered.
    while store.poll_output().is_some() {}
    n
}

/// A pi-native store showing the `n` messages of [`native_state_body`] and the optimistic
/// message of a prompt whose POST answered 503 (whether it landed, only the state can say):
/// [`NativeReread::reread`] is the state read that follows, which shows the prompt ran,
/// merged into the rows shown (`reduce::native_merge::merge_state`).
#[cfg(feature = "pi")]
pub struct NativeReread {
    store: ChatStore,
    state: Option<u64>,
    body: Vec<u8>,
}

#[cfg(feature = "pi")]
impl NativeReread {
    /// Opened on `n` messages, a prompt sent, its answer lost: the state read is asked.
    pub fn new(n: usize) -> NativeReread {
        let mut store = native_store();
        if let Some(id) = next_request(&mut store, RequestKind::NativeState) {
            answer_in_pieces(&mut store, id, &native_state_body(n, false), usize::MAX, 2);
        }
        while store.poll_output().is_some() {}
        store.send("go", Vec::new(), 3);
        let mut prompt = None;
        while let Some(out) = store.poll_output() {
            if let Output::Request(req) = out {
                if req.kind == RequestKind::NativePrompt {
                    prompt = Some(req);
                }
            }
        }
        let nonce = prompt
            .as_ref()
            .and_then(|p| serde_json::from_str::<Value>(p.body.as_deref()?).ok())
            .and_then(|b| Some(b.get("clientNonce")?.as_str()?.to_string()))
            .unwrap_or_default();
        let mut state = None;
        if let Some(p) = prompt {
            let head = ResponseHead {
                status: 503,
                content_type: Some("application/json".into()),
                turn_id: None,
            };
            store.handle_response_head(p.id, head, 4);
            let unknown = br#"{"error":{"code":"AGENT_REQUEST_OUTCOME_UNKNOWN"}}"#;
            store.handle_response_body(p.id, unknown, 4);
            store.handle_response_end(p.id, 4);
            state = next_request(&mut store, RequestKind::NativeState);
        }
        let extra = format!(
            r#",{{"id":"u-go","role":"user","status":"done","clientNonce":"{nonce}","parts":[{{"type":"text","id":"u-go:text:0","text":"go"}}]}},{{"id":"a-go","role":"assistant","status":"done","parts":[{{"type":"text","id":"a-go:text:0","text":"gone"}}]}}"#
        );
        NativeReread {
            store,
            state,
            body: state_with(n, false, &extra),
        }
    }

    /// The state read answered, in pieces of `chunk` (> 0) bytes: returns the messages shown
    /// (0 when the store asked no state read).
    pub fn reread(&mut self, chunk: usize) -> usize {
        let Some(id) = self.state.take() else {
            return 0;
        };
        answer_in_pieces(&mut self.store, id, &self.body, chunk, 5);
        while self.store.poll_output().is_some() {}
        self.store.messages().len()
    }
}

/// A store on the messages routes hydrates from `body` (a messages-route answer), in network
/// pieces of `chunk` (> 0) bytes. Returns the messages shown.
pub fn history(body: &[u8], chunk: usize) -> usize {
    let mut opts = StoreOptions::new("bench");
    opts.capabilities =
        Capabilities::from_json(br#"{"nativeFollowUp":false,"aiSdkOwnsHistory":true}"#);
    opts.hydrate = true;
    let mut store = ChatStore::new(opts, Box::new(SeededRandom(1)), 1);
    let mut get = None;
    while let Some(out) = store.poll_output() {
        if let Output::Request(req) = out {
            if req.kind == RequestKind::MessagesGet {
                get = Some(req.id);
            }
        }
    }
    let Some(id) = get else { return 0 };
    answer_in_pieces(&mut store, id, body, chunk, 2);
    store.messages().len()
}

/// A session list loaded page by page, then refreshed.
#[cfg(feature = "pi")]
pub struct SessionListRun {
    store: ChatStore,
}

#[cfg(feature = "pi")]
impl SessionListRun {
    /// A pi-native store opened on an empty session, its list not loaded.
    pub fn new() -> SessionListRun {
        let mut store = native_store();
        if let Some(id) = next_request(&mut store, RequestKind::NativeState) {
            answer_in_pieces(&mut store, id, &native_state_body(0, false), usize::MAX, 2);
        }
        while store.poll_output().is_some() {}
        SessionListRun { store }
    }

    fn page(&mut self, body: &[u8], now: u64) -> bool {
        let Some(id) = next_request(&mut self.store, RequestKind::SessionsGet) else {
            return false;
        };
        answer_in_pieces(&mut self.store, id, body, 16 * 1024, now);
        // What a UI reads after every page (the snapshot's `sessions.items`).
        std::hint::black_box(self.store.sessions().view());
        true
    }

    /// `loadSessions()` then `loadMoreSessions()` until `pages` are all read, as a list
    /// scrolled to its end: returns the sessions shown.
    pub fn load(&mut self, pages: &[Vec<u8>]) -> usize {
        for (k, body) in pages.iter().enumerate() {
            let asked = match k {
                0 => self.store.sessions_mut().load(false, 3),
                _ => self.store.sessions_mut().load_more(false, 3),
            };
            if !asked || !self.page(body, 3) {
                break;
            }
        }
        self.store.sessions().items().len()
    }

    /// The refresh after a turn: the first page asked again and answered with `first`.
    /// Returns the sessions shown.
    pub fn refresh(&mut self, first: &[u8]) -> usize {
        self.store.sessions_mut().load(false, 4);
        self.page(first, 4);
        self.store.sessions().items().len()
    }
}

#[cfg(feature = "pi")]
impl Default for SessionListRun {
    fn default() -> Self {
        SessionListRun::new()
    }
}

/// The page size the store asks for by default (`StoreOptions::session_page_size`), which the
/// generated list uses.
pub const SESSION_PAGE: usize = 20;
