//! A `ChatStore` on virtual time, talking to a scripted server (STYLE.md §3; the models are
//! quinn-proto's `Pair::drive` and h11's `ConnectionPair`).
//!
//! The harness plays the host's fetch driver: after every action or input it drains
//! `poll_output` until it is empty (the run loop rule) and records what came out. A test plays the server: it answers a recorded request by id with
//! a [`Reply`] (a head, a body split into network chunks, and an end, a break-off, or nothing
//! yet), or a network failure. Time only moves when the test says so, and then in steps to
//! each `poll_timeout()`: nothing sleeps.
//!
//! Beside the harness: [`scenario`], the setups the store's scenario tests share (a turn left
//! streaming, the recorded trace whole or cut, AI SDK answers, a turn that ends in tool calls,
//! a hydrating store), and [`sim_server`], a simulated server that keeps SPEC §2's follow-up
//! rules, or speaks the pi-native protocol of SPEC §14 (the fault schedules drive it), with
//! the fault schedules' [`fault_world`] and [`fault_network`] around it and their schedule,
//! invariants and seed loop in [`fault_check`].

#![allow(dead_code)] // each feature set uses a different part of the harness

use std::collections::HashSet;
use std::path::PathBuf;

use agent_chat_store::SeededRandom;
use agent_chat_store::Status;
use agent_chat_store::{Capabilities, ChatError, FileAttachment};
use agent_chat_store::{
    ChatStore, Method, Output, RequestId, RequestKind, ResponseHead, StoreEvent, StoreOptions,
    SubmitResult,
};
use serde_json::Value;

#[cfg(feature = "pi")]
pub mod fault_check;
#[cfg(feature = "pi")]
pub mod fault_network;
#[cfg(feature = "pi")]
pub mod fault_world;
#[cfg(feature = "pi")]
pub mod native_store;
pub mod scenario;
#[cfg(feature = "pi")]
pub mod sim_server;
#[cfg(feature = "pi")]
pub mod vectors;

/// The virtual clock's start: a plausible epoch-ms value, so `clientSeq = max(last+1, now)`
/// behaves as it does in a browser.
pub const T0: u64 = 1_700_000_000_000;

pub const SESSION: &str = "S";

/// What a pi-projection server of the reference family says about itself.
pub const PI_CAPS: Capabilities = Capabilities {
    native_follow_up: true,
    ai_sdk_owns_history: false,
    follow_up_attachments: false,
    text_required: false,
};

/// A plain AI SDK server: no follow-ups, the client owns history.
pub const AI_SDK_CAPS: Capabilities = Capabilities {
    native_follow_up: false,
    ai_sdk_owns_history: true,
    follow_up_attachments: false,
    text_required: false,
};

/// Options for session [`SESSION`] with fetched capabilities and no hydration request (tests
/// that care about hydration turn it on), so the recorded requests are the ones under test.
/// Streams have no idle timeout (tests that step to the next timer would otherwise meet it;
/// the timeout has its own test).
pub fn options() -> StoreOptions {
    let mut o = StoreOptions::new(SESSION);
    o.hydrate = false;
    o.stream_idle_timeout_ms = None;
    o
}

/// [`options`] with a static capabilities override (no capabilities request).
pub fn options_with(caps: Capabilities) -> StoreOptions {
    let mut o = options();
    o.capabilities = Some(caps);
    o
}

/// One request the store asked for, as the driver saw it.
#[derive(Debug, Clone)]
pub struct Sent {
    pub id: RequestId,
    pub kind: RequestKind,
    pub method: Method,
    pub path: String,
    /// The body, parsed as JSON (every body the store sends is JSON).
    pub body: Option<Value>,
    /// What the send that made it added for the shell (headers, request metadata).
    pub options: Option<Box<agent_chat_store::SendOptions>>,
    /// Virtual time at which it was polled.
    pub at: u64,
}

impl Sent {
    pub fn body(&self) -> &Value {
        self.body.as_ref().expect("request has a body")
    }
    pub fn client_seq(&self) -> u64 {
        self.body()["clientSeq"].as_u64().expect("clientSeq")
    }
    pub fn client_nonce(&self) -> &str {
        self.body()["clientNonce"].as_str().expect("clientNonce")
    }
    /// The `clientNonce` of a `DELETE …/followup?clientNonce=N&clientSeq=Q`.
    pub fn client_nonce_in_path(&self) -> &str {
        let q = self.path.split_once('?').map_or("", |(_, q)| q);
        q.split('&')
            .find_map(|kv| kv.strip_prefix("clientNonce="))
            .expect("clientNonce in the query")
    }
    pub fn message(&self) -> &str {
        self.body()["message"].as_str().expect("message")
    }
}

/// How a scripted answer ends after its body chunks.
#[derive(Debug, Clone)]
pub enum Ending {
    /// `handle_response_end`.
    Complete,
    /// The body breaks off: `handle_request_failed` after the chunks.
    Break(String),
    /// Nothing yet: the test continues the answer with [`Harness::body`] / [`Harness::end`].
    Open,
}

/// A scripted server answer.
#[derive(Debug, Clone)]
pub enum Reply {
    Answer {
        head: ResponseHead,
        chunks: Vec<Vec<u8>>,
        ending: Ending,
    },
    /// No answer at all (DNS, CORS, connection refused).
    NetworkFailure(String),
}

impl Reply {
    /// A status with an empty body.
    pub fn status(status: u16) -> Reply {
        Reply::bytes(status, None, Vec::new())
    }

    pub fn bytes(status: u16, content_type: Option<&str>, body: impl Into<Vec<u8>>) -> Reply {
        let body = body.into();
        Reply::Answer {
            head: ResponseHead {
                status,
                content_type: content_type.map(str::to_string),
                turn_id: None,
            },
            chunks: if body.is_empty() { vec![] } else { vec![body] },
            ending: Ending::Complete,
        }
    }

    pub fn json(status: u16, body: Value) -> Reply {
        Reply::bytes(status, Some("application/json"), body.to_string())
    }

    /// `{"error":{"code","message"}}`, the contract's error shape.
    pub fn error(status: u16, code: &str, message: &str) -> Reply {
        Reply::json(
            status,
            serde_json::json!({"error": {"code": code, "message": message}}),
        )
    }

    /// A 200 event stream.
    pub fn sse(body: impl Into<Vec<u8>>) -> Reply {
        Reply::bytes(200, Some("text/event-stream"), body)
    }

    pub fn network(message: &str) -> Reply {
        Reply::NetworkFailure(message.to_string())
    }

    /// Splits the body into network chunks of at most `size` bytes (boundaries fall anywhere,
    /// mid-line and mid-UTF-8 included).
    pub fn chunked(self, size: usize) -> Reply {
        match self {
            Reply::Answer {
                head,
                chunks,
                ending,
            } => Reply::Answer {
                head,
                chunks: chunks.concat().chunks(size).map(<[u8]>::to_vec).collect(),
                ending,
            },
            other => other,
        }
    }

    /// The body breaks off after its chunks.
    pub fn broken(self, message: &str) -> Reply {
        self.with_ending(Ending::Break(message.to_string()))
    }

    /// The body is not over yet.
    pub fn open(self) -> Reply {
        self.with_ending(Ending::Open)
    }

    /// The `x-turn-id` header.
    pub fn turn_id(self, id: &str) -> Reply {
        match self {
            Reply::Answer {
                mut head,
                chunks,
                ending,
            } => {
                head.turn_id = Some(id.to_string());
                Reply::Answer {
                    head,
                    chunks,
                    ending,
                }
            }
            other => other,
        }
    }

    fn with_ending(self, ending: Ending) -> Reply {
        match self {
            Reply::Answer { head, chunks, .. } => Reply::Answer {
                head,
                chunks,
                ending,
            },
            other => other,
        }
    }
}

/// The store, its fake clock, and everything it asked the outside world for.
pub struct Harness {
    pub store: ChatStore,
    pub now: u64,
    /// Every request polled, in order.
    pub sent: Vec<Sent>,
    /// Every abort polled, in order.
    pub aborted: Vec<RequestId>,
    /// Every event polled, in order.
    pub events: Vec<StoreEvent>,
    /// Every question for a host's `sendAutomaticallyWhen` polled (its token), in order.
    pub asked: Vec<u64>,
    /// Requests that got their end (answer, failure) or were aborted.
    closed: HashSet<RequestId>,
}

impl Harness {
    pub fn new(opts: StoreOptions) -> Harness {
        Harness::at(opts, T0, 7)
    }

    /// A store created at virtual time `now` (a page loaded later), with its own seed.
    pub fn at(opts: StoreOptions, now: u64, seed: u64) -> Harness {
        let store = ChatStore::new(opts, Box::new(SeededRandom(seed)), now);
        let mut h = Harness {
            store,
            now,
            sent: Vec::new(),
            aborted: Vec::new(),
            events: Vec::new(),
            asked: Vec::new(),
            closed: HashSet::new(),
        };
        h.drain();
        h
    }

    /// A store with static capabilities (no capabilities request).
    pub fn with_caps(caps: Capabilities) -> Harness {
        Harness::new(options_with(caps))
    }

    // ----- the run loop -----

    /// Drains every output until none is left, recording them.
    pub fn drain(&mut self) {
        while let Some(out) = self.store.poll_output() {
            match out {
                Output::Request(r) => {
                    let body = r.body.as_deref().map(|b| {
                        // As the server reads it: lone surrogate escapes included.
                        agent_chat_store::parse_json(b.as_bytes())
                            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {b}"))
                    });
                    self.sent.push(Sent {
                        id: r.id,
                        kind: r.kind,
                        method: r.method,
                        path: r.path,
                        body,
                        options: r.options,
                        at: self.now,
                    });
                }
                Output::Abort(id) => {
                    self.aborted.push(id);
                    self.closed.insert(id);
                }
                Output::Event(e) => self.events.push(e),
                Output::AskAutoSend { token } => self.asked.push(token),
            }
        }
    }

    /// Runs an action on the store at the current virtual time, then drains.
    pub fn act<R>(&mut self, f: impl FnOnce(&mut ChatStore, u64) -> R) -> R {
        let now = self.now;
        let r = f(&mut self.store, now);
        self.drain();
        r
    }

    pub fn send(&mut self, text: &str) -> SubmitResult {
        self.act(|s, now| s.send(text, Vec::new(), now))
    }

    pub fn send_files(&mut self, text: &str, files: Vec<FileAttachment>) -> SubmitResult {
        self.act(|s, now| s.send(text, files, now))
    }

    /// Types `text` into the composer and submits it.
    pub fn submit(&mut self, text: &str) -> SubmitResult {
        self.act(|s, now| {
            s.composer_mut().set_draft(text);
            s.composer_mut().submit(now)
        })
    }

    pub fn stop(&mut self) {
        self.act(|s, now| s.turn_mut().stop(now))
    }

    pub fn switch_session(&mut self, id: &str) {
        self.act(|s, now| s.switch_session(id, now))
    }

    pub fn dispose(&mut self) {
        self.act(|s, _| s.dispose())
    }

    pub fn retry_queued(&mut self, item_id: &str) -> bool {
        self.act(|s, now| s.follow_ups_mut().retry(item_id, now))
    }

    // ----- the scripted server -----

    /// Answers request `id` with `reply`, step by step, draining after every step. Returns the
    /// status seen after each step (after the head, after each body chunk, after the end), so a
    /// test can say what the user saw while the answer arrived.
    pub fn respond(&mut self, id: RequestId, reply: Reply) -> Vec<Status> {
        assert!(
            self.sent.iter().any(|r| r.id == id),
            "request {id} was never made"
        );
        let mut seen = Vec::new();
        match reply {
            Reply::NetworkFailure(message) => {
                self.fail(id, &message);
                seen.push(self.store.status());
            }
            Reply::Answer {
                head,
                chunks,
                ending,
            } => {
                self.head(id, head);
                seen.push(self.store.status());
                for c in &chunks {
                    self.body(id, c);
                    seen.push(self.store.status());
                }
                match ending {
                    Ending::Complete => {
                        self.end(id);
                        seen.push(self.store.status());
                    }
                    Ending::Break(message) => {
                        self.fail(id, &message);
                        seen.push(self.store.status());
                    }
                    Ending::Open => {}
                }
            }
        }
        seen
    }

    pub fn head(&mut self, id: RequestId, head: ResponseHead) {
        self.act(|s, now| s.handle_response_head(id, head, now));
    }

    pub fn body(&mut self, id: RequestId, bytes: &[u8]) {
        self.act(|s, now| s.handle_response_body(id, bytes, now));
    }

    pub fn end(&mut self, id: RequestId) {
        self.closed.insert(id);
        self.act(|s, now| s.handle_response_end(id, now));
    }

    pub fn fail(&mut self, id: RequestId, message: &str) {
        self.closed.insert(id);
        self.act(|s, now| s.handle_request_failed(id, message, now));
    }

    // ----- virtual time -----

    /// Moves the clock `ms` forward, firing every timer that falls due on the way, each at its
    /// own time.
    pub fn advance(&mut self, ms: u64) {
        let target = self.now + ms;
        let mut fired = 0;
        while let Some(t) = self.store.poll_timeout() {
            if t > target {
                break;
            }
            self.fire(t);
            fired += 1;
            assert!(fired < 10_000, "timer at {t} keeps firing without progress");
        }
        self.now = target;
    }

    /// Steps to each next timer until none is left.
    pub fn run_until_idle(&mut self) {
        let mut fired = 0;
        while let Some(t) = self.store.poll_timeout() {
            self.fire(t);
            fired += 1;
            assert!(fired < 10_000, "timer at {t} keeps firing without progress");
        }
    }

    fn fire(&mut self, t: u64) {
        self.now = self.now.max(t);
        self.act(|s, now| s.handle_timeout(now));
    }

    // ----- what the store asked for -----

    /// Requests of a kind, in order.
    pub fn requests(&self, kind: RequestKind) -> Vec<&Sent> {
        self.sent.iter().filter(|r| r.kind == kind).collect()
    }

    /// Requests of a kind that have neither ended nor been aborted.
    pub fn open(&self, kind: RequestKind) -> Vec<&Sent> {
        self.sent
            .iter()
            .filter(|r| r.kind == kind && !self.closed.contains(&r.id))
            .collect()
    }

    /// The one open request of a kind (panics if there are none or several).
    pub fn the_open(&self, kind: RequestKind) -> Sent {
        let open = self.open(kind);
        assert_eq!(open.len(), 1, "open {kind:?} requests: {open:#?}");
        open[0].clone()
    }

    /// The last request of a kind.
    pub fn last(&self, kind: RequestKind) -> Sent {
        self.requests(kind)
            .last()
            .map(|r| (*r).clone())
            .unwrap_or_else(|| panic!("no {kind:?} request in {:#?}", self.sent))
    }

    pub fn count(&self, kind: RequestKind) -> usize {
        self.requests(kind).len()
    }

    pub fn errors(&self) -> Vec<&ChatError> {
        self.events
            .iter()
            .filter_map(|e| match e {
                StoreEvent::Error { error } => Some(error),
                _ => None,
            })
            .collect()
    }

    /// The history as JSON, for comparisons with fixtures.
    pub fn history(&self) -> Vec<Value> {
        self.store
            .messages()
            .iter()
            .map(|m| serde_json::to_value(m).unwrap())
            .collect()
    }

    /// The position of message `id` in the store's history (panics when it is not there).
    pub fn message_index(&self, id: &str) -> usize {
        let messages = self.store.messages();
        (messages.iter().position(|m| m.id == id)).unwrap_or_else(|| panic!("no message {id}"))
    }
}

// ----- fixtures and stream building -----

/// The legacy server's traces (tests/fixtures/README.md says where they come from).
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/legacy-server")
}

/// A trace's bytes; a missing one fails the test, naming its path.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = fixtures().join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

/// The events of an SSE body, each with its terminating blank line, as bytes (for cutting a
/// trace at an event boundary or re-sending part of it).
pub fn sse_events(body: &[u8]) -> Vec<Vec<u8>> {
    let text = std::str::from_utf8(body).expect("trace is UTF-8");
    text.split_inclusive("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| e.as_bytes().to_vec())
        .collect()
}

/// An SSE body with one event per chunk.
pub fn sse(chunks: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for c in chunks {
        out.extend_from_slice(format!("data: {c}\n\n").as_bytes());
    }
    out
}

pub const DONE: &[u8] = b"data: [DONE]\n\n";

/// A `data-pi-<ty>` chunk whose data is `data` with `seq` set.
pub fn pi_chunk(ty: &str, seq: u64, mut data: Value) -> Value {
    data["seq"] = serde_json::json!(seq);
    serde_json::json!({"type": format!("data-pi-{ty}"), "data": data})
}

/// A history without message ids (they are the server's, assigned differently on the
/// canonical route).
pub fn without_ids(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .map(|m| {
            let mut m = m.clone();
            m.as_object_mut().unwrap().remove("id");
            m
        })
        .collect()
}

/// A lowercase hyphenated version-4 UUID.
pub fn is_v4_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_digit() || (b'a'..=b'f').contains(c),
        })
        && b[14] == b'4'
        && matches!(b[19], b'8' | b'9' | b'a' | b'b')
}

/// A seeded xorshift, so a failing seed replays.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}
