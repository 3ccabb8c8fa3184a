//! Exports used only by the benchmark (`bench/run.mjs`), not part of the documented API, and
//! only in a build with the `bench` feature (`bench/build.sh`).
//!
//! - `benchFloor(bytes)`: the floor of issue 6 (h). The least any SSE + JSON client must do
//!   with a stream of text deltas: split the events with the crate's own SSE decoder, parse
//!   each chunk with serde_json into a `Value`, and append the `text-delta` deltas to one
//!   string. Returns the string's length (so the work cannot be optimised away).
//! - `BenchCore`: the core `ChatStore` driven directly from Rust inside the same wasm module,
//!   without the JS shell (no fetch, no promises, no snapshots): the same loop as
//!   `benches/native.rs`, so the two give the wasm/native ratio of the core itself.

use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::protocol::{Capabilities, Role};
use crate::random::SeededRandom;
use crate::sse::{SseDecoder, SseItem};
use crate::store::{ChatStore, RequestKind, ResponseHead, StoreOptions};

/// The network chunk size the bench splits bodies into (a typical TCP read).
const DEFAULT_CHUNK: usize = 16 * 1024;

fn chunk_size(n: Option<u32>) -> usize {
    match n {
        Some(n) if n > 0 => n as usize,
        _ => DEFAULT_CHUNK,
    }
}

/// `benchFloor(bytes, chunkSize?) → number`: see the module docs.
#[wasm_bindgen(js_name = benchFloor, skip_typescript)]
pub fn bench_floor(bytes: &[u8], chunk: Option<u32>) -> f64 {
    let mut decoder = SseDecoder::new();
    let mut items: Vec<SseItem> = Vec::new();
    let mut text = String::new();
    for piece in bytes.chunks(chunk_size(chunk)) {
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
    text.len() as f64
}

/// The core store on a scripted transport: `new BenchCore(capabilitiesJson, historyJson?)`
/// hydrates from `historyJson` (a messages-route answer) when given; `run(bytes)` sends one
/// message and feeds `bytes` as the chat stream in network-sized chunks, answering every
/// other request the store makes (the history PUT) with `{}`.
#[wasm_bindgen(js_name = BenchCore, skip_typescript)]
pub struct BenchCore {
    store: ChatStore,
    now: u64,
}

#[wasm_bindgen(js_class = BenchCore)]
impl BenchCore {
    #[wasm_bindgen(constructor)]
    pub fn new(capabilities: &str, history: Option<Vec<u8>>) -> BenchCore {
        let mut opts = StoreOptions::new("bench");
        opts.capabilities = Capabilities::from_json(capabilities.as_bytes());
        opts.hydrate = history.is_some();
        let store = ChatStore::new(opts, Box::new(SeededRandom(1)), 1);
        let mut core = BenchCore { store, now: 1 };
        core.answer_all(history.as_deref());
        core
    }

    /// One turn over `bytes`; returns the number of messages afterwards.
    pub fn run(&mut self, bytes: &[u8], chunk: Option<u32>) -> u32 {
        self.now += 1;
        let now = self.now;
        self.store.send("go", Vec::new(), now);
        let mut chat = None;
        while let Some(req) = self.store.poll_request() {
            if req.kind == RequestKind::Chat {
                chat = Some(req.id);
            } else {
                self.answer(req.id, b"{}");
            }
        }
        let Some(id) = chat else {
            return 0;
        };
        let head = ResponseHead {
            status: 200,
            content_type: Some("text/event-stream".into()),
            turn_id: None,
        };
        self.store.handle_response_head(id, head, now);
        self.drain();
        for piece in bytes.chunks(chunk_size(chunk)) {
            self.store.handle_response_body(id, piece, now);
            self.drain();
        }
        self.store.handle_response_end(id, now);
        self.answer_all(None);
        self.store.messages().len() as u32
    }

    /// The last message as JSON (for checking a run, outside the timed part).
    #[wasm_bindgen(js_name = lastMessageJson)]
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
            let Some(req) = self.store.poll_request() else {
                break;
            };
            let body = match (req.kind, history) {
                (RequestKind::MessagesGet, Some(h)) => h,
                _ => b"{}".as_slice(),
            };
            self.answer(req.id, body);
        }
    }

    /// Drops the events and aborts (a host would deliver them); requests stay for the caller.
    fn drain(&mut self) {
        while self.store.poll_event().is_some() {}
        while self.store.poll_abort().is_some() {}
    }
}

/// `benchExportedMessages(store) → string`: the store's messages as the core exports them
/// (`ChatStore::export_message`), as JSON, for checking that the incremental snapshot shows
/// exactly that.
#[wasm_bindgen(js_name = benchExportedMessages, skip_typescript)]
pub fn bench_exported_messages(store: &super::JsChatStore) -> String {
    let core = store.shell.core.borrow();
    let list: Vec<Value> = (0..core.messages().len())
        .map(|i| core.export_message(i))
        .collect();
    crate::protocol::json::to_string(&list)
}
