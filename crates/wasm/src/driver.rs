//! The IO driver: performs one request the core asked for and feeds every step of its answer
//! back (head, each body chunk as it arrives, the end or the failure).
//!
//! The fetch, its body's reader and the host's hooks are awaited in JS (`start_request`),
//! which calls back a [`RequestSink`] at each step: an async Rust driver kept
//! wasm-bindgen-futures' executor and a state machine per await in the module, 3.7 KB gzip
//! (bench/results.md, "Size, step by step"), for IO that decides nothing. What each step
//! means stays the core's.

use std::rc::Rc;

use js_sys::Function;
use wasm_bindgen::prelude::*;

use agent_chat_store::{Request, RequestId, RequestKind, ResponseHead};

use super::{js, Shell};

#[wasm_bindgen(inline_js = r#"
export function fetch_host(baseUrl, headers, credentials, fetch, prepare) {
  return { baseUrl, headers, credentials, fetch, prepare };
}
function merge_headers(user, json) {
  const out = {};
  if (user && typeof user === 'object') {
    // A Headers instance or a plain object; copied with define semantics, never assigned
    // into a prototype.
    const entries = typeof user.entries === 'function' && typeof user.get === 'function'
      ? Array.from(user.entries()) : Object.entries(user);
    for (const [k, v] of entries) define(out, k, String(v));
  }
  if (json) out['content-type'] = 'application/json';
  return out;
}
function define(o, k, value) {
  Object.defineProperty(o, k, { value, enumerable: true, writable: true, configurable: true });
}
// The host's `prepareSendMessagesRequest` (the `ai` package's hook): it sees the request the
// store made and may replace its `api`, `body`, `headers` and `credentials`. `body` is what the
// `ai` package gives it (the `body` option's keys and the send's, JSON from the core), the
// messages apart (in pi mode, where the body has none: the snapshot's).
async function prepare_chat(hook, req, messages, metadata, body) {
  const parsed = req.body === undefined ? {} : JSON.parse(req.body);
  // The headers as the host gave them: the store's `content-type` goes on after the hook.
  const { 'content-type': _json, ...headers } = req.headers;
  const prepared = await hook({
    api: req.url, id: parsed.id, messages: parsed.messages ?? messages, body: JSON.parse(body), headers,
    credentials: req.credentials, requestMetadata: metadata === undefined ? undefined : JSON.parse(metadata),
    trigger: parsed.trigger, messageId: parsed.messageId,
  });
  if (prepared == null) return req;
  const text = (v) => (typeof v === 'string' ? v : undefined);
  return {
    url: text(prepared.api ?? req.url) ?? '',
    headers: prepared.headers !== undefined ? merge_headers(prepared.headers, req.body !== undefined) : req.headers,
    body: text(prepared.body !== undefined ? JSON.stringify(prepared.body) : req.body),
    credentials: text(prepared.credentials ?? req.credentials),
  };
}
function join_url(base, path) {
  if (!base) return path;
  return base.replace(/\/+$/, '') + '/' + path.replace(/^\/+/, '');
}
// What a request was failed with may be anything (a Proxy whose traps throw).
function is_abort(e) {
  try { return !!e && (e.name === 'AbortError' || e.code === 20); } catch (_) { return false; }
}
function error_message(e) {
  try {
    if (e && typeof e.message === 'string') return e.message;
    return String(e);
  } catch (_) { return 'unknown error'; }
}
function header_value(response, name) {
  try {
    const h = response.headers;
    if (!h) return undefined;
    const v = typeof h.get === 'function' ? h.get(name) : h[name];
    return v == null ? undefined : String(v);
  } catch (_) {
    return undefined; // a broken answer's headers: its status and body decide
  }
}
// The most of a body chunk copied into wasm at once: a runtime that gives a whole body as one
// chunk (Node's `Response` of a string, `arrayBuffer()`) would otherwise put a copy of all of
// it in wasm memory beside what the core builds from it, and wasm memory never shrinks.
const FEED_BYTES = 65536;
function feed(sink, chunk) {
  for (let at = 0; at < chunk.length && sink.wanted(); at += FEED_BYTES) {
    sink.body(chunk.subarray(at, at + FEED_BYTES));
  }
}
// A body chunk as bytes, known by what it is and not by its realm: jsdom, happy-dom, a worker or
// an iframe each have their own `Uint8Array`, so `instanceof` refuses another's bytes.
function bytes_of(value) {
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (Object.prototype.toString.call(value) === '[object ArrayBuffer]') return new Uint8Array(value);
  throw new Error('the body gave a chunk that is not bytes (no ArrayBuffer view)');
}
// Starts the request on the next microtask (never inside the store's call that asked for
// it) and gives its AbortController at once: the core may abort it before it leaves.
export function start_request(sink, host, method, path, body, chatBody, sendHeaders, metadata) {
  const controller = new AbortController();
  Promise.resolve()
    .then(() => run(sink, host, controller.signal, method, path, body, chatBody, sendHeaders, metadata))
    .catch((e) => sink.fail(is_abort(e) ? undefined : error_message(e)))
    .finally(() => sink.free());
  return controller;
}
async function run(sink, host, signal, method, path, body, chatBody, sendHeaders, metadata) {
  let user = host.headers;
  if (typeof user === 'function') {
    user = user();
    if (user instanceof Promise) user = await user;
  }
  let headers = merge_headers(user, body !== undefined);
  // A send's own headers (JSON `[[name, value], …]`) over the store's.
  if (sendHeaders !== undefined) for (const [k, v] of JSON.parse(sendHeaders)) define(headers, k, v);
  let url = join_url(host.baseUrl, path), credentials = host.credentials;
  if (chatBody !== undefined && host.prepare) {
    ({ url, headers, body, credentials } = await prepare_chat(
      host.prepare, { url, headers, body, credentials }, sink.messages(), metadata, chatBody));
  }
  if (!sink.wanted()) return; // aborted before it left (a switch in the same tick)
  const init = { method, headers, signal };
  if (body !== undefined) init.body = body;
  if (credentials !== undefined) init.credentials = credentials;
  const fetch = host.fetch
    ?? (typeof globalThis.fetch === 'function' ? globalThis.fetch.bind(globalThis) : undefined);
  if (fetch === undefined) throw new Error('no fetch available: pass the fetch option');
  const response = await fetch.call(undefined, url, init);
  if (!sink.wanted()) return;
  // What `fetch` gave must look like a Response.
  if (response === null || typeof response !== 'object' || typeof response.status !== 'number') {
    throw new TypeError('fetch did not give a Response');
  }
  sink.head(response.status, header_value(response, 'content-type'), header_value(response, 'x-turn-id'));
  const stream = response.body;
  if (stream !== null && typeof stream === 'object') {
    // Chunk by chunk as the network delivers them: the snapshot moves before the body ends.
    const reader = stream.getReader();
    for (;;) {
      const step = await reader.read();
      if (!sink.wanted()) {
        try { Promise.resolve(reader.cancel()).catch(() => {}); } catch (_) {}
        return;
      }
      if (step.done) break;
      feed(sink, bytes_of(step.value));
    }
  } else if (stream != null && sink.wanted()) {
    feed(sink, new Uint8Array(await response.arrayBuffer()));
  }
  if (sink.wanted()) sink.end();
}
"#)]
extern "C" {
    pub(super) fn fetch_host(
        base_url: &str,
        headers: &JsValue,
        credentials: Option<String>,
        fetch: Option<Function>,
        prepare: Option<Function>,
    ) -> JsValue;
    #[allow(clippy::too_many_arguments)]
    fn start_request(
        sink: RequestSink,
        host: &JsValue,
        method: &str,
        path: &str,
        body: Option<String>,
        chat_body: Option<String>,
        send_headers: Option<String>,
        metadata: Option<String>,
    ) -> js::AbortController;
}

/// The AbortController of each request in flight: a handful at most, so a list (a hash map
/// would link std's SipHash for nothing else).
#[derive(Default)]
pub(super) struct Controllers(Vec<(RequestId, js::AbortController)>);

impl Controllers {
    fn contains(&self, id: RequestId) -> bool {
        self.0.iter().any(|(i, _)| *i == id)
    }

    pub(super) fn remove(&mut self, id: RequestId) -> Option<js::AbortController> {
        let at = self.0.iter().position(|(i, _)| *i == id)?;
        Some(self.0.swap_remove(at).1)
    }

    pub(super) fn take_all(&mut self) -> Vec<(RequestId, js::AbortController)> {
        std::mem::take(&mut self.0)
    }
}

pub(super) fn spawn(shell: &Rc<Shell>, req: Request) {
    use agent_chat_store::shell_json::to_string;
    let options = req.options.as_deref();
    // The `ai` package's body for the host's prepare hook: chat POSTs only.
    let chat_body = (req.kind == RequestKind::Chat)
        .then(|| options.map_or_else(|| "{}".into(), |o| to_string(&o.body)));
    let send_headers = options
        .filter(|o| !o.headers.is_empty())
        .map(|o| to_string(&o.headers));
    let metadata = options.and_then(|o| o.metadata.as_ref()).map(to_string);
    let sink = RequestSink {
        shell: shell.clone(),
        id: req.id,
    };
    let controller = start_request(
        sink,
        &shell.host.fetch_host,
        req.method.as_str(),
        &req.path,
        req.body,
        chat_body,
        send_headers,
        metadata,
    );
    shell.controllers.borrow_mut().0.push((req.id, controller));
}

/// What the JS driver tells of one request; every step after the core aborted it (or the
/// store was disposed) is dropped. It holds the store until the driver frees it, when the
/// request settled: a store nobody references still takes in the answer it asked for.
#[wasm_bindgen(skip_typescript)]
pub struct RequestSink {
    shell: Rc<Shell>,
    id: RequestId,
}

impl RequestSink {
    /// The store, while the request is still wanted (not aborted by the core, the store not
    /// disposed: `dispose` takes every controller).
    fn shell(&self) -> Option<&Rc<Shell>> {
        let wanted = self.shell.controllers.borrow().contains(self.id);
        wanted.then_some(&self.shell)
    }
}

#[wasm_bindgen]
impl RequestSink {
    pub fn wanted(&self) -> bool {
        self.shell().is_some()
    }

    /// The snapshot's messages, for the host's prepare hook.
    pub fn messages(&self) -> JsValue {
        js_sys::Reflect::get(&self.shell.fresh_snapshot(), &"messages".into())
            .unwrap_or(JsValue::UNDEFINED)
    }

    pub fn head(&self, status: u16, content_type: Option<String>, turn_id: Option<String>) {
        if let Some(shell) = self.shell() {
            let head = ResponseHead {
                status,
                content_type,
                turn_id,
            };
            shell.with_core(|c, now| c.handle_response_head(self.id, head, now));
        }
    }

    pub fn body(&self, chunk: &[u8]) {
        if let Some(shell) = self.shell() {
            shell.with_core(|c, now| c.handle_response_body(self.id, chunk, now));
        }
    }

    pub fn end(&self) {
        if let Some(shell) = self.shell() {
            shell.controllers.borrow_mut().remove(self.id);
            shell.with_core(|c, now| c.handle_response_end(self.id, now));
        }
    }

    /// The request failed with `message`; none when it was aborted.
    pub fn fail(&self, message: Option<String>) {
        let Some(shell) = self.shell() else { return };
        shell.controllers.borrow_mut().remove(self.id);
        if let Some(message) = message {
            shell.with_core(|c, now| c.handle_request_failed(self.id, &message, now));
        }
    }
}
