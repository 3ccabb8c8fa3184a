//! The JS this shell needs: a few helpers that are smaller and faster written in JS than
//! driven call by call from Rust, and the AbortController the request driver gives.

use js_sys::{Array, Function, Uint8Array};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
function freeze(v) {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) freeze(v[k]);
  }
  return v;
}
// JSON.parse defines `__proto__` as a plain own data property: server keys can never reach
// an object's prototype this way (unlike Object.assign or `o[k] = v`).
export function parse_frozen(text) { return freeze(JSON.parse(text)); }
export function parse(text) { return JSON.parse(text); }
export function stringify(v) { return v === undefined ? undefined : JSON.stringify(v); }
export function freeze_value(v) { return freeze(v); }
export function drop_front(arr, n) { arr.splice(0, n); }
// The messages: a master array mutated in place and never handed out (slicing a frozen array
// is some 100x slower than slicing a plain one), and a frozen copy per snapshot.
export function set_slot(arr, i, v) { arr[i] = v; }
export function frozen_copy(arr, len) {
  if (arr.length > len) arr.length = len;
  return Object.freeze(arr.slice());
}
// A part whose long string (`text`, `rawInput`; none when `key` is empty) is set apart from its
// JSON: that string is the previous part's plus a suffix when it only grew (the engine
// concatenates without copying). A tool part's `input` (a placeholder in `head`) is given
// apart too, when it has one (a value made by share_value or parse_frozen). `marked`: the
// suffix holds characters that stand for lone surrogates (protocol::json::MARKERS), given back
// as those surrogates here (a pair split over two deltas is one character again once joined).
const MARKED = /[\u{10F800}-\u{10FFFF}]/gu;
export function string_part(head, key, prev, suffix, input, marked) {
  // No head: the part is `prev` but for its grown string (a copy, not a parse, per delta).
  const p = head ? JSON.parse(head) : { ...prev };
  if (marked) suffix = suffix.replace(MARKED, (c) => String.fromCharCode(c.codePointAt(0) - 0x10f800 + 0xd800));
  if (key) p[key] = prev === undefined ? suffix : prev[key] + suffix;
  if (input !== undefined) p.input = input;
  return freeze(p);
}
// A changed array or object whose unchanged entries keep their (frozen) values: `json` is the
// new value, from index `from` on for an array (the entries before are `prev`'s), with a null
// in place of the entries `keep` lists (taken from `prev`) and of those `set` gives as
// (key, value) pairs. The placeholders are own properties, so `__proto__` is one too.
export function share_value(prev, from, json, keep, set) {
  let v = JSON.parse(json);
  if (from > 0) v = prev.slice(0, from).concat(v);
  for (let i = 0; i < keep.length; i++) v[keep[i]] = prev[keep[i]];
  for (let i = 0; i < set.length; i += 2) v[set[i]] = set[i + 1];
  return freeze(v);
}
// No head: the message is `prev` but for its parts.
export function message(head, parts, prev) {
  const m = head ? JSON.parse(head) : { ...prev };
  m.parts = Object.freeze(parts);
  return freeze(m);
}
export function make_error(text) {
  const d = JSON.parse(text);
  const e = new Error(d.message);
  e.name = 'ChatStoreError';
  e.code = d.kind;
  if (d.status !== undefined) e.status = d.status;
  if (d.serverCode !== undefined) e.serverCode = d.serverCode;
  if (d.field !== undefined) e.field = d.field;
  return Object.freeze(e);
}
const STATUS = ['ready', 'submitted', 'streaming', 'error'];
// The keys in the order the snapshot always had (sorted, as serde_json's map writes them).
export function snapshot(flags, status, sessionId, sessions, pending, turnId, capabilities, composer, tools, messages, queued, error, losses, branches) {
  return Object.freeze({
    awaitingAnswer: (flags & 32) !== 0,
    busy: (flags & 8) !== 0,
    canEdit: (flags & 16) !== 0,
    canRegenerate: (flags & 1) !== 0,
    canRetry: (flags & 128) !== 0,
    capabilities,
    capabilitiesLoaded: (flags & 2) !== 0,
    composer,
    hydrated: (flags & 4) !== 0,
    pending,
    sessionId,
    sessions,
    status: STATUS[status],
    stopped: (flags & 64) !== 0,
    tools,
    turnId,
    messages,
    queued,
    error,
    losses,
    branches,
  });
}
// `snapshot.branches`: items `{parentId, message}` by `plan` (a position in `messages`, or
// `-1 - k` for `kept[k]`); an item equal to `prev`'s at its index keeps its object, and all
// equal keeps `prev`.
export function branches(headId, plan, parents, kept, messages, prev) {
  const old = prev ? prev.items : undefined;
  let same = !!prev && prev.headId === headId && old.length === plan.length;
  const items = new Array(plan.length);
  for (let i = 0; i < plan.length; i++) {
    const c = plan[i];
    const message = c >= 0 ? messages[c] : kept[-1 - c];
    const parentId = parents[i];
    const o = old ? old[i] : undefined;
    if (o !== undefined && o.message === message && o.parentId === parentId) items[i] = o;
    else {
      items[i] = Object.freeze({ parentId, message });
      same = false;
    }
  }
  return same ? prev : Object.freeze({ headId, items: Object.freeze(items) });
}
// The session list's part of the snapshot; its `error` is a ChatStoreError (or null). Its
// items are given as runs `[archived, from, to]` of a walk's exported (frozen) items, and items
// of their own.
export function sessions_snapshot(json, error, active, archived) {
  const s = JSON.parse(json);
  let items = [];
  for (const e of s.items) {
    // A whole walk is joined as it is: one copy, not two (100,000 items, after every page).
    const m = Array.isArray(e) && (e[0] ? archived : active);
    if (m) items = items.concat(e[1] === 0 && e[2] === m.length ? m : m.slice(e[1], e[2]));
    else items.push(freeze(e));
  }
  s.items = Object.freeze(items);
  s.error = error;
  return freeze(s);
}
// The first page listed again: its items, then the others in their order.
export function refront(arr, json) {
  const page = JSON.parse(json).map(freeze);
  const ids = new Set(page.map((i) => i.id));
  return page.concat(arr.filter((i) => !ids.has(i.id)));
}
export function append_frozen(arr, json) { for (const v of JSON.parse(json)) arr.push(freeze(v)); }
export function call_safely(f, a) {
  try { f(a); } catch (e) { setTimeout(() => { throw e; }, 0); }
}
export function call2_safely(f, a, b) {
  try { f(a, b); } catch (e) { setTimeout(() => { throw e; }, 0); }
}
export function queue_microtask(f) {
  if (typeof queueMicrotask === 'function') queueMicrotask(f); else Promise.resolve().then(f);
}
// setTimeout holds a signed 32-bit delay: a longer one fires at once (and a due time past it
// would re-arm in a loop). A clamped timer fires early, finds nothing due and is armed again.
export function set_timeout(f, ms) { return setTimeout(f, Math.min(ms, 2147483647)); }
export function clear_timeout(h) { clearTimeout(h); }
export function now_ms() { return Date.now(); }
export function fill_random(buf) {
  const c = globalThis.crypto;
  if (c && typeof c.getRandomValues === 'function') { c.getRandomValues(buf); return; }
  for (let i = 0; i < buf.length; i++) buf[i] = (Math.random() * 256) | 0;
}
// A promise's (or a thenable's, or a value's) truthiness once it settles; false if it rejects.
export function when_settled(v, f) {
  Promise.resolve(v).then((x) => f(!!x), () => f(false));
}
export function is_function(v) { return typeof v === 'function'; }
// A Headers instance or a plain object as [name, value] pairs.
export function header_entries(h) {
  const list = typeof h.entries === 'function' && typeof h.get === 'function'
    ? Array.from(h.entries()) : Object.entries(h);
  return list.map(([k, v]) => [String(k), String(v)]);
}
export function object_of(key, value) { return Object.freeze({ [key]: value }); }
// `useChat`'s onFinish argument: the turn's assistant message as the snapshot shows it (an
// empty one when nothing answered), the messages, and how the turn ended.
const NO_ANSWER = Object.freeze({ id: '', role: 'assistant', parts: Object.freeze([]) });
export function finish_event(ev, messages, id) {
  let message = NO_ANSWER;
  if (id !== undefined && Array.isArray(messages)) {
    for (let i = messages.length - 1; i >= 0; i--) if (messages[i].id === id) { message = messages[i]; break; }
  }
  return Object.freeze({
    message, messages, isAbort: ev.isAbort, isDisconnect: ev.isDisconnect, isError: ev.isError,
    finishReason: ev.finishReason,
  });
}
// The last clientSeq per session in localStorage, where the page has it (private modes and
// Node have none, or throw): a number, or undefined.
export function stored_seq(key) {
  try { const v = Number(globalThis.localStorage?.getItem(key)); return v > 0 ? v : undefined; } catch (_) { return undefined; }
}
export function store_seq(key, v) {
  try { globalThis.localStorage?.setItem(key, String(v)); } catch (_) {}
}
"#)]
extern "C" {
    pub fn stored_seq(key: &str) -> Option<f64>;
    pub fn store_seq(key: &str, v: f64);
    pub fn parse_frozen(text: &str) -> JsValue;
    pub fn parse(text: &str) -> JsValue;
    // `catch`: JSON.stringify throws on cycles, BigInt and nesting past the JS stack
    // (a RangeError); each caller turns that into a typed `Validation` error.
    #[wasm_bindgen(catch)]
    pub fn stringify(v: &JsValue) -> Result<Option<String>, JsValue>;
    pub fn freeze_value(v: &JsValue) -> JsValue;
    pub fn drop_front(arr: &JsValue, n: u32);
    pub fn set_slot(arr: &JsValue, i: u32, v: &JsValue);
    pub fn frozen_copy(arr: &JsValue, len: u32) -> JsValue;
    pub fn string_part(
        head: &str,
        key: &str,
        prev: &JsValue,
        suffix: &str,
        input: &JsValue,
        marked: bool,
    ) -> JsValue;
    pub fn share_value(prev: &JsValue, from: u32, json: &str, keep: &Array, set: &Array)
        -> JsValue;
    pub fn message(head: &str, parts: &Array, prev: &JsValue) -> JsValue;
    pub fn make_error(text: &str) -> JsValue;
    #[allow(clippy::too_many_arguments)]
    pub fn snapshot(
        flags: u32,
        status: u32,
        session_id: &JsValue,
        sessions: &JsValue,
        pending: &JsValue,
        turn_id: &JsValue,
        capabilities: &JsValue,
        composer: &JsValue,
        tools: &JsValue,
        messages: &JsValue,
        queued: &JsValue,
        error: &JsValue,
        losses: &JsValue,
        branches: &JsValue,
    ) -> JsValue;
    pub fn branches(
        head_id: &JsValue,
        plan: &[i32],
        parents: &JsValue,
        kept: &JsValue,
        messages: &JsValue,
        prev: &JsValue,
    ) -> JsValue;
    pub fn sessions_snapshot(
        json: &str,
        error: &JsValue,
        active: &JsValue,
        archived: &JsValue,
    ) -> JsValue;
    pub fn append_frozen(arr: &JsValue, json: &str);
    pub fn refront(arr: &JsValue, json: &str) -> JsValue;
    pub fn call_safely(f: &Function, a: &JsValue);
    pub fn call2_safely(f: &Function, a: &JsValue, b: &JsValue);
    pub fn queue_microtask(f: &Function);
    pub fn set_timeout(f: &Function, ms: f64) -> JsValue;
    pub fn clear_timeout(handle: &JsValue);
    pub fn now_ms() -> f64;
    pub fn fill_random(buf: &Uint8Array);
    pub fn when_settled(v: &JsValue, f: &Function);
    pub fn is_function(v: &JsValue) -> bool;
    #[wasm_bindgen(catch)]
    pub fn header_entries(h: &JsValue) -> Result<JsValue, JsValue>;
    pub fn object_of(key: &str, value: &JsValue) -> JsValue;
    pub fn finish_event(ev: &JsValue, messages: &JsValue, id: Option<&str>) -> JsValue;
}

#[wasm_bindgen]
extern "C" {
    /// `AbortController`: one per request, aborted when the core says so.
    pub type AbortController;
    #[wasm_bindgen(method)]
    pub fn abort(this: &AbortController);
}
