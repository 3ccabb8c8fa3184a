//! The IO driver: performs one request the core asked for and feeds every step of its answer
//! back (head, each body chunk as it arrives, the end or the failure).

use std::rc::Rc;

use js_sys::{Function, Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use agent_chat_store::{Request, RequestId, RequestKind, ResponseHead};

use super::{js, Shell};

#[wasm_bindgen(inline_js = r#"
export function merge_headers(user, json) {
  const out = {};
  if (user && typeof user === 'object') {
    // A Headers instance or a plain object; copied with define semantics, never assigned
    // into a prototype.
    const entries = typeof user.entries === 'function' && typeof user.get === 'function'
      ? Array.from(user.entries()) : Object.entries(user);
    for (const [k, v] of entries) Object.defineProperty(out, k, { value: String(v), enumerable: true, writable: true, configurable: true });
  }
  if (json) out['content-type'] = 'application/json';
  return out;
}
// A send's own headers (JSON `[[name, value], …]`) over the store's.
export function add_headers(out, pairs) {
  for (const [k, v] of JSON.parse(pairs)) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
}
// The host's `prepareSendMessagesRequest` (the `ai` package's hook): it sees the request the
// store made and may replace its `api`, `body`, `headers` and `credentials`. `body` is what the
// `ai` package gives it (the `body` option's keys and the send's, JSON from the core), the
// messages apart (in pi mode, where the body has none: the snapshot's).
export async function prepare_chat(hook, req, messages, metadata, body) {
  const parsed = req.body === undefined ? {} : JSON.parse(req.body);
  // The headers as the host gave them: the store's `content-type` goes on after the hook.
  const { 'content-type': _json, ...headers } = req.headers;
  const prepared = await hook({
    api: req.url, id: parsed.id, messages: parsed.messages ?? messages, body: JSON.parse(body), headers,
    credentials: req.credentials, requestMetadata: metadata === undefined ? undefined : JSON.parse(metadata),
    trigger: parsed.trigger, messageId: parsed.messageId,
  });
  if (prepared == null) return req;
  return {
    url: prepared.api ?? req.url,
    headers: prepared.headers !== undefined ? merge_headers(prepared.headers, req.body !== undefined) : req.headers,
    body: prepared.body !== undefined ? JSON.stringify(prepared.body) : req.body,
    credentials: prepared.credentials ?? req.credentials,
  };
}
export function join_url(base, path) {
  if (!base) return path;
  return base.replace(/\/+$/, '') + '/' + path.replace(/^\/+/, '');
}
"#)]
extern "C" {
    // `catch`: a host's headers object may throw (a getter, a Proxy); the request then fails.
    #[wasm_bindgen(catch)]
    fn merge_headers(user: &JsValue, json: bool) -> Result<JsValue, JsValue>;
    fn join_url(base: &str, path: &str) -> String;
    fn add_headers(out: &JsValue, pairs: &str);
    #[wasm_bindgen(catch)]
    fn prepare_chat(
        hook: &Function,
        req: &JsValue,
        messages: &JsValue,
        metadata: Option<String>,
        body: &str,
    ) -> Result<Promise, JsValue>;
}

/// What a request goes out with: its URL, headers, body and credentials.
struct Outgoing {
    url: String,
    headers: JsValue,
    body: Option<String>,
    credentials: Option<String>,
}

/// The request's headers (the store's, then the send's own) and, for a chat POST, what the
/// host's `prepareSendMessagesRequest` makes of it.
async fn outgoing(shell: &Shell, req: &Request) -> Result<Outgoing, JsValue> {
    let headers = headers(shell, req.body.is_some()).await?;
    let options = req.options.as_deref();
    if let Some(o) = options.filter(|o| !o.headers.is_empty()) {
        add_headers(
            &headers,
            &agent_chat_store::shell_json::to_string(&o.headers),
        );
    }
    let out = Outgoing {
        url: join_url(&shell.host.base_url, &req.path),
        headers,
        body: req.body.clone(),
        credentials: shell.host.credentials.clone(),
    };
    let hook = shell.host.prepare_send_messages_request.as_ref();
    let Some(hook) = hook.filter(|_| req.kind == RequestKind::Chat) else {
        return Ok(out);
    };
    let plain = js_sys::Object::new();
    for (k, v) in [
        ("url", JsValue::from_str(&out.url)),
        ("headers", out.headers),
        ("body", out.body.map_or(JsValue::UNDEFINED, |b| b.into())),
        (
            "credentials",
            out.credentials.map_or(JsValue::UNDEFINED, |c| c.into()),
        ),
    ] {
        js_sys::Reflect::set(&plain, &k.into(), &v)?;
    }
    let messages = js_sys::Reflect::get(&shell.fresh_snapshot(), &"messages".into())?;
    let metadata = options.and_then(|o| o.metadata.as_ref());
    let metadata = metadata.map(agent_chat_store::shell_json::to_string);
    let body = options.map_or_else(
        || "{}".into(),
        |o| agent_chat_store::shell_json::to_string(&o.body),
    );
    let prepared = JsFuture::from(prepare_chat(hook, &plain, &messages, metadata, &body)?).await?;
    let get = |k: &str| js_sys::Reflect::get(&prepared, &k.into()).unwrap_or(JsValue::UNDEFINED);
    Ok(Outgoing {
        url: get("url").as_string().unwrap_or_default(),
        headers: get("headers"),
        body: get("body").as_string(),
        credentials: get("credentials").as_string(),
    })
}

/// The AbortController of each request in flight: a handful at most, so a list (a hash map
/// would link std's SipHash for nothing else).
#[derive(Default)]
pub(super) struct Controllers(Vec<(RequestId, js::AbortController)>);

impl Controllers {
    fn insert(&mut self, id: RequestId, c: js::AbortController) {
        self.0.push((id, c));
    }

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

pub(super) fn spawn(shell: Rc<Shell>, req: Request) {
    let controller = js::AbortController::new();
    shell
        .controllers
        .borrow_mut()
        .insert(req.id, controller.clone());
    wasm_bindgen_futures::spawn_local(run(shell, req, controller));
}

/// The request is still wanted (not aborted by the core, the store not disposed).
fn wanted(shell: &Shell, id: RequestId) -> bool {
    shell.controllers.borrow().contains(id)
}

fn failed(shell: &Rc<Shell>, id: RequestId, e: &JsValue) {
    if !wanted(shell, id) || js::is_abort(e) {
        shell.controllers.borrow_mut().remove(id);
        return;
    }
    shell.controllers.borrow_mut().remove(id);
    let message = js::error_message(e);
    shell.with_core(|c, now| c.handle_request_failed(id, &message, now));
}

async fn headers(shell: &Shell, has_body: bool) -> Result<JsValue, JsValue> {
    let mut user = shell.host.headers.clone();
    if js::is_function(&user) {
        user = user
            .unchecked_ref::<Function>()
            .call0(&JsValue::UNDEFINED)?;
        if user.is_instance_of::<Promise>() {
            user = JsFuture::from(user.unchecked_into::<Promise>()).await?;
        }
    }
    merge_headers(&user, has_body)
}

async fn run(shell: Rc<Shell>, req: Request, controller: js::AbortController) {
    let id = req.id;
    let result: Result<(), JsValue> = async {
        let Outgoing {
            url,
            headers,
            body,
            credentials,
        } = outgoing(&shell, &req).await?;
        if !wanted(&shell, id) {
            return Ok(()); // aborted before it left (a switch in the same tick)
        }
        let init = js::make_init(
            req.method.as_str(),
            &headers,
            body,
            credentials,
            &controller.signal(),
        );
        let fetch = match &shell.host.fetch {
            Some(f) => f.clone().into(),
            None => js::global_fetch(),
        };
        let fetch: Function = fetch
            .dyn_into()
            .map_err(|_| JsValue::from_str("no fetch available: pass the fetch option"))?;
        let promise = Promise::resolve(&fetch.call2(&JsValue::UNDEFINED, &url.into(), &init)?);
        let response = JsFuture::from(promise).await?;
        if !wanted(&shell, id) {
            return Ok(());
        }
        let head = ResponseHead {
            status: js::response_status(&response)?,
            content_type: js::header_value(&response, "content-type"),
            turn_id: js::header_value(&response, "x-turn-id"),
        };
        shell.with_core(|c, now| c.handle_response_head(id, head, now));
        let response: js::Response = response.unchecked_into();
        let body = response.body()?;
        if body.is_object() {
            // Chunk by chunk as the network delivers them: the snapshot moves before the body
            // ends. Each chunk crosses into wasm once.
            let reader = body.unchecked_into::<js::ReadableStream>().get_reader()?;
            loop {
                let step = JsFuture::from(reader.read()?).await?;
                if !wanted(&shell, id) {
                    let _ = reader.cancel();
                    return Ok(());
                }
                let step: js::ReadResult = step.unchecked_into();
                if step.done()?.is_truthy() {
                    break;
                }
                let value = step.value()?;
                let Some(chunk) = value.dyn_ref::<Uint8Array>() else {
                    return Err(JsValue::from_str(
                        "the body gave a chunk that is no Uint8Array",
                    ));
                };
                feed(&shell, id, chunk);
            }
        } else if wanted(&shell, id) && !body.is_null() && !body.is_undefined() {
            let buf = JsFuture::from(response.array_buffer()?).await?;
            feed(&shell, id, &Uint8Array::new(&buf));
        }
        if wanted(&shell, id) {
            shell.controllers.borrow_mut().remove(id);
            shell.with_core(|c, now| c.handle_response_end(id, now));
        }
        Ok(())
    }
    .await;
    if let Err(e) = result {
        failed(&shell, id, &e);
    }
}

/// The most of a body chunk copied into wasm at once.
const FEED_BYTES: u32 = 64 * 1024;

/// Hands `chunk` to the core in pieces of [`FEED_BYTES`]: a runtime that gives a whole body
/// as one chunk (Node's `Response` of a string, `arrayBuffer()`) would otherwise put a copy of
/// all of it in wasm memory beside what the core builds from it, and wasm memory never
/// shrinks.
fn feed(shell: &Rc<Shell>, id: RequestId, chunk: &Uint8Array) {
    let len = chunk.length();
    let mut at = 0;
    while at < len && wanted(shell, id) {
        let end = len.min(at + FEED_BYTES);
        let bytes = chunk.subarray(at, end).to_vec();
        shell.with_core(|c, now| c.handle_response_body(id, &bytes, now));
        at = end;
    }
}
