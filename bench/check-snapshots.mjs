#!/usr/bin/env node
// Checks the incremental snapshot export against the core's own export, chunk by chunk: after
// every notification `getSnapshot().messages` must deep-equal `benchExportedMessages(store)`
// (what `ChatStore::export_message` gives for each message), be frozen all the way down, and a
// message that did not change must keep its object. Random AI SDK streams (the differential
// test's generator), the legacy pi traces, long texts, hydrated histories, and switches
// between sessions whose messages share ids.
//
//   bash bench/build.sh && node bench/check-snapshots.mjs [--seeds=N]
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { generateStream, prng } from '../tests/js/differential/generate.mjs';
import { piChunks } from './gen.mjs';
import { macrotask } from './lib.mjs';

const root = resolve(import.meta.dirname, '..');
const pkgDir = resolve(process.env.BENCH_PKG ?? join(root, 'target/bench-pkg'));
const ours = await import(pathToFileURL(join(pkgDir, 'agent_chat_store.js')).href);
if (typeof ours.benchExportedMessages !== 'function') throw new Error(`${pkgDir} has no bench exports: bash bench/build.sh`);
const seeds = Number(process.argv.find((a) => a.startsWith('--seeds='))?.slice(8) ?? 300);

const enc = new TextEncoder();
const sse = (c) => enc.encode(`data: ${JSON.stringify(c)}\n\n`);

function deepFrozen(v, path = 'snapshot') {
  if (v === null || typeof v !== 'object') return;
  assert.ok(Object.isFrozen(v), `${path} is not frozen`);
  for (const [k, x] of Object.entries(v)) deepFrozen(x, `${path}.${k}`);
}

let checks = 0;
let kept = 0;
let partsKept = 0;
let renewed = 0;
/** Compares the snapshot with the core's export; unchanged messages must keep their objects. */
function check(store, prev, label) {
  const snap = store.getSnapshot();
  assert.equal(store.getSnapshot(), snap, `${label}: same snapshot object while nothing changed`);
  const want = JSON.parse(ours.benchExportedMessages(store));
  assert.deepStrictEqual(snap.messages, want, `${label}: messages differ from the core's export`);
  deepFrozen(snap, label);
  if (prev) {
    const a = prev.messages;
    const b = snap.messages;
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const same = JSON.stringify(a[i]) === JSON.stringify(b[i]);
      if (a[i] === b[i]) {
        kept++;
        assert.ok(same, `${label}: message ${i} kept its object but changed`);
      } else if (same) {
        renewed++; // a version bump without a visible change (e.g. finish-step)
      }
      if (a[i] !== b[i] && a[i].parts && b[i].parts) {
        for (let p = 0; p < Math.min(a[i].parts.length, b[i].parts.length); p++) {
          if (a[i].parts[p] === b[i].parts[p]) partsKept++;
        }
      }
    }
  }
  checks++;
  return snap;
}

/** A store whose chat POST answers a stream this script feeds by hand. */
function storeWith({ caps, history, sessionId = 'chk' }) {
  let ctl;
  const fetch = async (url, init = {}) => {
    const path = new URL(String(url)).pathname;
    const method = (init.method ?? 'GET').toUpperCase();
    if (method === 'POST' && path.endsWith('/chat')) {
      const body = new ReadableStream({ start: (c) => (ctl = c) }, { highWaterMark: 0 });
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    }
    if (method === 'GET' && path.endsWith('/messages') && history) {
      return new Response(JSON.stringify({ messages: history }), { status: 200, headers: { 'content-type': 'application/json' } });
    }
    if (method === 'GET' && path.endsWith('/catalog')) {
      return new Response(JSON.stringify({ tools: [{ name: 'search', ui: { rendererId: 'r-search', icon: 'i' } }] }), { status: 200 });
    }
    return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
  };
  const store = new ours.ChatStore({ sessionId, baseUrl: 'http://chk.invalid', capabilities: caps, hydrate: !!history, fetch });
  return { store, feed: (bytes) => ctl.enqueue(bytes), close: () => ctl.close(), ready: () => !!ctl };
}

const settle = async (n = 3) => {
  for (let i = 0; i < n; i++) await macrotask();
};

/** Feeds `chunks` (objects or raw byte arrays) in random batches, checking after each. */
async function drive(r, store, feed, chunks, label) {
  let prev = check(store, null, `${label} start`);
  for (let i = 0; i < chunks.length; ) {
    const n = 1 + (r.chance(0.5) ? 0 : r.int(4));
    const parts = chunks.slice(i, i + n).map((c) => (c instanceof Uint8Array ? c : sse(c)));
    const all = new Uint8Array(parts.reduce((k, p) => k + p.length, 0));
    let off = 0;
    for (const p of parts) all.set(p, off), (off += p.length);
    feed(all);
    i += n;
    await settle(2);
    prev = check(store, prev, `${label} @${i}`);
    if (store.getSnapshot().status === 'error') break;
  }
  return prev;
}

const aiCaps = { nativeFollowUp: false, aiSdkOwnsHistory: true };
const piCaps = { nativeFollowUp: true, aiSdkOwnsHistory: false };
const history = (n) =>
  Array.from({ length: n }, (_, i) =>
    i % 2
      ? { id: `h${i}`, role: 'assistant', parts: [{ type: 'text', text: `answer ${i}`, state: 'done' }, { type: 'tool-search', toolCallId: `hc${i}`, state: 'input-available', input: { q: i } }] }
      : { id: `h${i}`, role: 'user', parts: [{ type: 'text', text: `question ${i}` }] },
  );

// 1. Random AI SDK streams, some after a hydrated history, with a tool catalog.
for (let seed = 1; seed <= seeds; seed++) {
  const r = prng(seed);
  const { chunks } = generateStream(r);
  // A tool-ui chunk now and then, for a call the stream may have.
  for (let k = r.int(3); k > 0; k--) {
    chunks.splice(r.int(chunks.length + 1), 0, { type: 'data-tool-ui', data: { toolCallId: r.pick(['c1', 'c2']), rendererId: 'live', details: { n: r.int(9) } } });
  }
  const { store, feed, close } = storeWith({ caps: aiCaps, history: seed % 3 === 0 ? history(6) : null });
  await settle(4);
  store.send('go');
  await settle(2);
  const label = `seed ${seed}`;
  // Long text now and then: the rope path over many snapshots.
  if (seed % 10 === 0) chunks.unshift({ type: 'text-start', id: 'long' }, ...Array.from({ length: 50 }, (_, i) => ({ type: 'text-delta', id: 'long', delta: `w${i} `.repeat(1 + r.int(30)) })));
  await drive(r, store, feed, chunks, label);
  close();
  await settle(3);
  check(store, null, `${label} end`);
  if (seed % 7 === 0 && store.getSnapshot().canRegenerate) {
    store.regenerate();
    await settle(3);
    check(store, null, `${label} regenerate`);
  }
  store.dispose();
}

// 2. The legacy pi traces, in pi mode, fed in random cuts.
// tests/fixtures/README.md: a missing folder or trace fails the check (readdirSync throws).
const fixtures = join(root, 'tests/fixtures/legacy-server');
const traces = readdirSync(fixtures).filter((f) => f.endsWith('.sse'));
if (traces.length !== 3) throw new Error(`the three legacy traces in ${fixtures}: found ${traces.length}`);
for (const t of traces) {
  for (let seed = 1; seed <= 5; seed++) {
    const r = prng(1000 + seed);
    const body = readFileSync(join(fixtures, t));
    const cuts = [];
    for (let i = 0; i < body.length; ) {
      const n = 1 + r.int(300);
      cuts.push(body.subarray(i, i + n));
      i += n;
    }
    const { store, feed, close } = storeWith({ caps: piCaps });
    await settle(4);
    store.send('go');
    await settle(2);
    await drive(r, store, feed, cuts, `${t} #${seed}`);
    close();
    await settle(3);
    check(store, null, `${t} #${seed} end`);
    store.dispose();
  }
}

// 3. Pi mode text deltas into a long message (the rope path in the pi reducer).
{
  const r = prng(7);
  const { store, feed, close } = storeWith({ caps: piCaps });
  await settle(4);
  store.send('go');
  await settle(2);
  const chunks = piChunks(300, { seed: 5 });
  await drive(r, store, feed, chunks, 'pi text');
  close();
  await settle(3);
  check(store, null, 'pi text end');
  store.dispose();
}

// 4. Streamed JSON tool inputs, read in cuts of random length: the input shared with the
// previous snapshot's value where it did not change (nested arrays and objects that grow, a
// `__proto__` key, values that change type, a text that turns invalid and back).
{
  const inputs = [
    JSON.stringify({ query: 'q', files: Array.from({ length: 40 }, (_, i) => ({ path: `src/f${i}.rs`, line: i * 37, tags: ['a', `t${i}`], nested: { deep: [[i], { k: 'v'.repeat(i) }] }, open: i % 2 === 0, score: i / 7 })) }),
    '[[1,2,[3,[4,5]]],{"__proto__":{"x":[1,{"y":null}]},"constructor":{"a":1}},"tail",12345.5e2,true,null]',
    '{"a":{"b":{"c":[{"d":"eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"},{"d":1}]}},"z":[]}',
    '{"x":[1,2,3]} garbage {"y":',
    '"just a long string' + ' value'.repeat(30) + '"',
  ];
  for (let seed = 1; seed <= 20; seed++) {
    const r = prng(3000 + seed);
    const text = inputs[seed % inputs.length];
    const chunks = [{ type: 'start', messageId: 'm' }, { type: 'start-step' }, { type: 'tool-input-start', toolCallId: 't1', toolName: 'search' }];
    for (let i = 0; i < text.length; ) {
      const n = 1 + r.int(seed % 2 ? 4 : 40);
      chunks.push({ type: 'tool-input-delta', toolCallId: 't1', inputTextDelta: text.slice(i, i + n) });
      i += n;
    }
    let input;
    try {
      input = JSON.parse(text);
    } catch {
      input = { x: 1 };
    }
    chunks.push({ type: 'tool-input-available', toolCallId: 't1', toolName: 'search', input }, { type: 'finish-step' }, { type: 'finish' });
    const { store, feed, close } = storeWith({ caps: aiCaps });
    await settle(4);
    store.send('go');
    await settle(2);
    await drive(r, store, feed, chunks, `tool input ${seed}`);
    close();
    await settle(3);
    check(store, null, `tool input ${seed} end`);
    store.dispose();
  }
}

// 5. Session switches: two sessions whose histories and streamed answers share message ids and
// positions (hydrated `w0`, `w1`; the answer `shared`), texts of different byte lengths with
// multi-byte characters, switched back and forth while a turn streams; checked at every step.
// (A message id names a message within one session only: the part cache once took one
// session's `shared` for the other's.)
for (let seed = 1; seed <= 10; seed++) {
  const r = prng(5000 + seed);
  const texts = { A: 'é', B: 'ab' };
  const streams = [];
  const held = [];
  const fetch = async (url, init = {}) => {
    const path = new URL(String(url)).pathname;
    const sid = path.includes('/A/') ? 'A' : 'B';
    const method = (init.method ?? 'GET').toUpperCase();
    if (method === 'POST' && path.endsWith('/chat')) {
      let ctl;
      const body = new ReadableStream({ start: (c) => (ctl = c) }, { highWaterMark: 0 });
      streams.push({ sid, feed: (b) => { try { ctl.enqueue(b); } catch {} }, close: () => { try { ctl.close(); } catch {} } });
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    }
    if (method === 'GET' && path.endsWith('/messages')) {
      // Held until the script lets it through: meanwhile a session switched back to shows its
      // parked history.
      const messages = [0, 1].map((i) => ({ id: `w${i}`, role: i ? 'assistant' : 'user', parts: [{ type: 'text', text: texts[sid].repeat(1 + i + r.int(3)) }] }));
      const answer = new Response(JSON.stringify({ messages }), { status: 200, headers: { 'content-type': 'application/json' } });
      return new Promise((resolve) => held.push(() => resolve(answer)));
    }
    return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
  };
  const store = new ours.ChatStore({ sessionId: 'A', baseUrl: 'http://chk.invalid', capabilities: aiCaps, hydrate: true, fetch });
  await settle(4);
  let prev = check(store, null, `sessions ${seed} start`);
  for (let step = 0; step < 30; step++) {
    const here = store.getSnapshot().sessionId;
    const open = streams.filter((s) => s.sid === here).at(-1);
    const label = `sessions ${seed} step ${step} (${here})`;
    if (r.chance(0.25)) {
      store.switchSession(here === 'A' ? 'B' : 'A');
    } else if (held.length && r.chance(0.4)) {
      held.shift()();
    } else if (!open || r.chance(0.1)) {
      if (store.getSnapshot().composer.canSend) store.send('go');
    } else {
      const chunks = [];
      if (r.chance(0.3)) chunks.push({ type: 'start', messageId: 'shared' }, { type: 'text-start', id: 't' });
      for (let k = r.int(4); k > 0; k--) chunks.push({ type: 'text-delta', id: 't', delta: r.pick(['é', 'ab', 'größe ', '😀']) });
      if (r.chance(0.1)) chunks.push({ type: 'text-end', id: 't' }, { type: 'finish' });
      for (const c of chunks) open.feed(sse(c));
      if (r.chance(0.1)) open.close();
    }
    await settle(2);
    prev = check(store, r.chance(0.5) ? prev : null, label);
  }
  store.dispose();
}

console.log(`snapshots checked: ${checks} (messages kept: ${kept}, parts kept in changed messages: ${partsKept}, unchanged messages given a new object: ${renewed})`);
