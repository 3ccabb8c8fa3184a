//! Exports used only by the benchmark (`bench/run.mjs`), not part of the documented API, and
//! only in a build with the `bench` feature (`bench/build.sh`).
//!
//! - `benchFloor(bytes)`: the floor of issue 6 (h), `agent_chat_store::bench_scenarios::floor`: split the
//!   events with the crate's own SSE decoder, parse each chunk with serde_json into a `Value`,
//!   and append the `text-delta` deltas to one string. Returns the string's length (so the
//!   work cannot be optimised away).
//! - `BenchCore`: the core `ChatStore` driven directly from Rust inside the same wasm module,
//!   without the JS shell (no fetch, no promises, no snapshots): `agent_chat_store::bench_scenarios::Core`,
//!   the same loop `benches/native.rs` runs, so the two give the wasm/native ratio of the core
//!   itself.

use serde_json::Value;
use wasm_bindgen::prelude::*;

use agent_chat_store::bench_scenarios::{self, Core};
use agent_chat_store::Capabilities;

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
    bench_scenarios::floor(bytes, chunk_size(chunk)) as f64
}

/// The core store on a scripted transport: `new BenchCore(capabilitiesJson, historyJson?)`
/// hydrates from `historyJson` (a messages-route answer) when given; `run(bytes)` sends one
/// message and feeds `bytes` as the chat stream in network-sized chunks, answering every
/// other request the store makes (the history PUT) with `{}`.
#[wasm_bindgen(js_name = BenchCore, skip_typescript)]
pub struct BenchCore(Core);

#[wasm_bindgen(js_class = BenchCore)]
impl BenchCore {
    #[wasm_bindgen(constructor)]
    pub fn new(capabilities: &str, history: Option<Vec<u8>>) -> BenchCore {
        let caps = Capabilities::from_json(capabilities.as_bytes());
        BenchCore(Core::new(caps, history.as_deref()))
    }

    /// One turn over `bytes`; returns the number of messages afterwards (0 without a chat
    /// request).
    pub fn run(&mut self, bytes: &[u8], chunk: Option<u32>) -> u32 {
        self.0.run(bytes, chunk_size(chunk)).unwrap_or(0) as u32
    }

    /// The last message as JSON (for checking a run, outside the timed part).
    #[wasm_bindgen(js_name = lastMessageJson)]
    pub fn last_message_json(&self) -> String {
        self.0.last_message_json()
    }
}

/// `benchExportedMessages(store) → string`: the store's messages as the core exports them
/// (`SessionView::export_message`), as JSON, for checking that the incremental snapshot shows
/// exactly that.
#[wasm_bindgen(js_name = benchExportedMessages, skip_typescript)]
pub fn bench_exported_messages(store: &super::JsChatStore) -> String {
    let core = store.shell.core.borrow();
    let list: Vec<Value> = (0..core.messages().len())
        .map(|i| core.session().export_message(i))
        .collect();
    agent_chat_store::shell_json::to_string(&list)
}

/// `benchInput(kind, n) → Uint8Array`: the generated big inputs of issue 38
/// (`bench_scenarios`, the bytes `benches/native.rs` reads): `"state"`, a pi-native `/state`
/// answer of `n` messages; `"history"`, the messages route's answer of the same messages;
/// `"state-tiny"`, `"history-tiny"`: messages of a word each.
#[wasm_bindgen(js_name = benchInput, skip_typescript)]
pub fn bench_input(kind: &str, n: u32) -> Vec<u8> {
    let n = n as usize;
    match kind {
        "state" => bench_scenarios::native_state_body(n, false),
        "history" => bench_scenarios::history_body(n, false),
        "state-tiny" => bench_scenarios::native_state_body(n, true),
        "history-tiny" => bench_scenarios::history_body(n, true),
        _ => Vec::new(),
    }
}

/// `benchNativeState(bytes, chunkSize?) → number`: a pi-native store reads `bytes` as its
/// `/state` answer; the messages it shows.
#[cfg(feature = "pi")]
#[wasm_bindgen(js_name = benchNativeState, skip_typescript)]
pub fn bench_native_state(bytes: &[u8], chunk: Option<u32>) -> u32 {
    bench_scenarios::native_state(bytes, chunk_size(chunk)) as u32
}

/// `benchHistory(bytes, chunkSize?) → number`: a store on the messages routes hydrates from
/// `bytes`; the messages it shows.
#[wasm_bindgen(js_name = benchHistory, skip_typescript)]
pub fn bench_history(bytes: &[u8], chunk: Option<u32>) -> u32 {
    bench_scenarios::history(bytes, chunk_size(chunk)) as u32
}

/// A pi-native session list of `n` generated sessions (`new BenchSessionList(n, perPage?)`,
/// pages of the store's default size unless `perPage`): `load()` reads every page as a list scrolled to its end,
/// `refresh()` the first page again as after a turn; each returns the sessions shown.
#[cfg(feature = "pi")]
#[wasm_bindgen(js_name = BenchSessionList, skip_typescript)]
pub struct BenchSessionList {
    run: bench_scenarios::SessionListRun,
    pages: Vec<Vec<u8>>,
}

#[cfg(feature = "pi")]
#[wasm_bindgen(js_class = BenchSessionList)]
impl BenchSessionList {
    #[wasm_bindgen(constructor)]
    pub fn new(n: u32, per_page: Option<u32>) -> BenchSessionList {
        let per_page = per_page.map_or(bench_scenarios::SESSION_PAGE, |p| p as usize);
        BenchSessionList {
            run: bench_scenarios::SessionListRun::new(),
            pages: bench_scenarios::session_pages(n as usize, per_page),
        }
    }

    pub fn load(&mut self) -> u32 {
        self.run.load(&self.pages) as u32
    }

    pub fn refresh(&mut self) -> u32 {
        self.run.refresh(&self.pages[0]) as u32
    }
}
