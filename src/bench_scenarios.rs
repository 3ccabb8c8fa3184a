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

use crate::protocol::{Capabilities, Role};
use crate::random::SeededRandom;
use crate::sse::{SseDecoder, SseItem};
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
