//! The core natively, on the bytes the Node bench wrote (issue 6 (g) and the native floor).
//!
//! `node bench/run.mjs` writes `target/bench/manifest.json` and the `.sse` / history files it
//! names, then runs `cargo bench --bench native`. Each scenario feeds its SSE bytes, in the
//! manifest's network chunk size, to a core `ChatStore` through `handle_response_body` (the
//! same loop as the wasm `BenchCore` export), and the floor scenario runs the same loop as the
//! wasm `benchFloor`. Prints one JSON line per scenario (`{"native": …}`); the Node script
//! reads them. Run it alone with `cargo bench --bench native` after the Node script wrote the
//! files (`node bench/run.mjs --only=gen`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use agent_chat_store::protocol::{Capabilities, Role};
use agent_chat_store::random::SeededRandom;
use agent_chat_store::sse::{SseDecoder, SseItem};
use agent_chat_store::store::{ChatStore, RequestKind, ResponseHead, StoreOptions};
use serde_json::{json, Value};

/// The floor: split events, parse each with serde_json, append the text deltas.
fn floor(bytes: &[u8], chunk: usize) -> usize {
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

/// The core on a scripted transport (mirrors `src/wasm/bench.rs`'s `BenchCore`).
struct Core {
    store: ChatStore,
    now: u64,
}

impl Core {
    fn new(caps: Capabilities, history: Option<&[u8]>) -> Core {
        let mut opts = StoreOptions::new("bench");
        opts.capabilities = Some(caps);
        opts.hydrate = history.is_some();
        let store = ChatStore::new(opts, Box::new(SeededRandom(1)), 1);
        let mut core = Core { store, now: 1 };
        core.answer_all(history);
        core
    }

    fn run(&mut self, bytes: &[u8], chunk: usize) -> usize {
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
        let id = chat.expect("the chat request");
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
        self.store.messages().len()
    }

    fn last_message_json(&self) -> String {
        self.store
            .messages()
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(|m| serde_json::to_string(m).unwrap_or_default())
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

    fn drain(&mut self) {
        while self.store.poll_event().is_some() {}
        while self.store.poll_abort().is_some() {}
    }
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    let p = dir.join(name);
    std::fs::read(&p)
        .unwrap_or_else(|e| panic!("{}: {e} (run node bench/run.mjs first)", p.display()))
}

fn main() {
    // `cargo bench` passes `--bench`; the rest are ours.
    let mut dir = PathBuf::from("target/bench");
    let mut only: Option<String> = None;
    for arg in std::env::args().skip(1) {
        if let Some(d) = arg.strip_prefix("--dir=") {
            dir = PathBuf::from(d);
        } else if let Some(o) = arg.strip_prefix("--only=") {
            only = Some(o.to_string());
        }
    }
    let manifest: Value =
        serde_json::from_slice(&read(&dir, "manifest.json")).expect("manifest.json is JSON");
    let chunk = manifest["chunkSize"].as_u64().unwrap_or(16384) as usize;
    let runs = manifest["nativeRuns"].as_u64().unwrap_or(5) as usize;
    let list = manifest["native"].as_array().cloned().unwrap_or_default();
    for s in list {
        let name = s["name"].as_str().unwrap_or("?").to_string();
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|x| x == name))
        {
            continue;
        }
        let bytes = read(&dir, s["file"].as_str().expect("file"));
        let mut times = Vec::with_capacity(runs);
        let mut out = json!({ "name": name });
        if s["kind"].as_str() == Some("floor") {
            let mut len = 0;
            for _ in 0..runs {
                let t = Instant::now();
                len = std::hint::black_box(floor(std::hint::black_box(&bytes), chunk));
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
            out["textLength"] = json!(len);
        } else {
            let caps = Capabilities::from_json(s["capabilities"].to_string().as_bytes())
                .expect("capabilities");
            let history = s["history"].as_str().map(|f| read(&dir, f));
            let mut last = String::new();
            let mut messages = 0;
            for _ in 0..runs {
                // A fresh store per run (hydration is not timed), as in the Node bench.
                let mut core = Core::new(caps, history.as_deref());
                let t = Instant::now();
                messages = std::hint::black_box(core.run(std::hint::black_box(&bytes), chunk));
                times.push(t.elapsed().as_secs_f64() * 1e3);
                last = core.last_message_json();
            }
            out["messages"] = json!(messages);
            out["lastMessageBytes"] = json!(last.len());
        }
        out["runsMs"] = json!(times.clone());
        out["medianMs"] = json!(median(&mut times));
        println!("{}", json!({ "native": out }));
    }
}
