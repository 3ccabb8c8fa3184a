// The long attacks of issue 17, as figures (not part of the test command):
//   node bench/attacks.mjs [--only=drain,parts,hydrate] [--n=10000]
// drain: n follow-ups queued during one turn, against a server that accepts each at once and
//   consumes them all at the end: the time from the first POST to the last accepted one.
// state / history / sessions (issue 38; a bench build, bash bench/build.sh, ACS_PKG=target/bench-pkg):
//   the core in wasm, as benches/native.rs runs it natively (`cargo bench --bench native
//   --features _internal_bench -- --big`): a pi-native `/state` of --messages=50000 messages,
//   the messages route's history of the same messages (time, and wasm memory growth: run
//   each in its own process, wasm memory only grows), a session list of --sessions=40000,100000
//   loaded page by page then refreshed after a turn; state-tiny / history-tiny: messages of a
//   word each; state-pkg / history-pkg (and -tiny): the whole package (a ChatStore whose fetch
//   serves the body) from its creation to the snapshot showing every message.
// ACS_PKG=dir measures another build (default pkg/).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '..');
const pkgDir = process.env.ACS_PKG || resolve(root, 'pkg');
const pkg = await import(pathToFileURL(resolve(pkgDir, 'agent_chat_store.js')).href);
// Already initialised by the root entry: initSync hands back the same instance's exports.
const { memory } = pkg.initSync();
const arg = (k, d) => process.argv.find((a) => a.startsWith(`--${k}=`))?.split('=')[1] ?? d;
const only = arg('only', 'drain,parts,hydrate').split(',');
const enc = new TextEncoder();
const sse = (o) => enc.encode(`data: ${JSON.stringify(o)}\n\n`);
const caps = { nativeFollowUp: true, aiSdkOwnsHistory: false };

function openStream() {
  let ctl;
  const body = new ReadableStream({ start(c) { ctl = c; } });
  return { body, push: (o) => ctl.enqueue(sse(o)), end: () => { try { ctl.enqueue(enc.encode('data: [DONE]\n\n')); ctl.close(); } catch {} } };
}

async function drain(n) {
  const stream = openStream();
  let accepted = 0;
  let first = 0;
  let done;
  const finished = new Promise((r) => { done = r; });
  const fetch = async (url, init) => {
    const path = String(url).split('?')[0];
    if (path.endsWith('/followup') && init.method === 'POST') {
      if (!first) first = performance.now();
      if (++accepted === n) done(performance.now());
      return new Response('{"queued":true}', { status: 202, headers: { 'content-type': 'application/json' } });
    }
    if (path.endsWith('/chat')) {
      return new Response(stream.body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    }
    return new Response('', { status: 404 });
  };
  const store = new pkg.ChatStore({ sessionId: 'bench', capabilities: caps, hydrate: false, fetch, persistSeq: false });
  let notes = 0;
  store.subscribe(() => { store.getSnapshot(); notes++; });
  store.send('start');
  stream.push({ type: 'data-turn-start', data: { turnId: 't' } });
  while (store.getSnapshot().status !== 'streaming') await new Promise((r) => setTimeout(r, 1));
  const t0 = performance.now();
  for (let i = 0; i < n; i++) store.send(`follow-up ${i}`);
  const queuedMs = performance.now() - t0;
  const last = await finished;
  stream.end();
  store.dispose();
  return { n, queueMs: +queuedMs.toFixed(1), drainMs: +(last - first).toFixed(1), perItemUs: +(((last - first) * 1000) / n).toFixed(1), notifications: notes };
}

async function parts(count) {
  // One assistant message with `count` text parts, then deltas into the last one: the cost of
  // getSnapshot() per notification.
  const stream = openStream();
  const fetch = async (url) => (String(url).split('?')[0].endsWith('/chat')
    ? new Response(stream.body, { status: 200, headers: { 'content-type': 'text/event-stream' } })
    : new Response('', { status: 404 }));
  const store = new pkg.ChatStore({ sessionId: 'bench', capabilities: { nativeFollowUp: false, aiSdkOwnsHistory: true }, hydrate: false, fetch, persistSeq: false });
  store.send('go');
  stream.push({ type: 'start', messageId: 'm' });
  for (let i = 0; i < count; i++) {
    stream.push({ type: 'text-start', id: `p${i}` });
    stream.push({ type: 'text-delta', id: `p${i}`, delta: `part ${i} ` });
    stream.push({ type: 'text-end', id: `p${i}` });
  }
  stream.push({ type: 'text-start', id: 'last' });
  await new Promise((r) => setTimeout(r, 50));
  while (store.getSnapshot().messages.at(-1)?.parts.length !== count + 1) await new Promise((r) => setTimeout(r, 5));
  const rounds = 200;
  let total = 0;
  for (let i = 0; i < rounds; i++) {
    stream.push({ type: 'text-delta', id: 'last', delta: 'x' });
    await new Promise((r) => setTimeout(r, 0));
    const t = performance.now();
    store.getSnapshot();
    total += performance.now() - t;
  }
  stream.end();
  store.dispose();
  return { parts: count, snapshotUs: +((total * 1000) / rounds).toFixed(1) };
}

async function hydrate(count) {
  const messages = [];
  for (let i = 0; i < count; i++) {
    messages.push({ id: `m${i}`, role: 'assistant', parts: [{ type: 'tool-ls', toolCallId: `c${i}`, state: 'output-available', input: { path: `/d/${i}` }, output: [{ type: 'text', text: `f${i}` }] }] });
  }
  const body = JSON.stringify({ messages });
  messages.length = 0;
  const before = memory.buffer.byteLength;
  const fetch = async (url) => (String(url).split('?')[0].endsWith('/messages')
    ? new Response(body, { status: 200, headers: { 'content-type': 'application/json' } })
    : new Response('', { status: 404 }));
  const store = new pkg.ChatStore({ sessionId: 'bench', capabilities: caps, fetch, persistSeq: false });
  store.start(); // read by polling, not subscribed: nothing else starts it
  while (!store.getSnapshot().hydrated) await new Promise((r) => setTimeout(r, 5));
  const n = store.getSnapshot().messages.length;
  const after = memory.buffer.byteLength;
  store.dispose();
  return { toolCalls: n, jsonBytes: body.length, wasmGrowthBytes: after - before, perJsonByte: +((after - before) / body.length).toFixed(2) };
}

async function streamMemory(mode, megabytes) {
  // One answer of `megabytes` MB of text in 4 KB deltas, in AI SDK mode (text-delta chunks) or
  // pi mode (data-pi-text-delta chunks): wasm memory growth per streamed character. Run each
  // mode in a fresh process (wasm memory only grows): `--only=stream-ai` / `--only=stream-pi`.
  // 60 MB stays under the largest `limits.maxMessageChars` (64 Mi), which stops a longer one.
  const stream = openStream();
  const ai = mode === 'ai';
  const fetch = async (url) => (String(url).split('?')[0].endsWith('/chat')
    ? new Response(stream.body, { status: 200, headers: { 'content-type': 'text/event-stream' } })
    : new Response('', { status: 404 }));
  const store = new pkg.ChatStore({ sessionId: 'bench', capabilities: { nativeFollowUp: !ai, aiSdkOwnsHistory: ai }, hydrate: false, fetch, persistSeq: false, limits: { maxMessageChars: 64 << 20, maxHistoryChars: 256 << 20 } });
  const before = memory.buffer.byteLength;
  store.send('go');
  const piecesPerMb = 256;
  const piece = 'abcdefghijklmnop'.repeat(256); // 4,096 chars
  const total = megabytes * piecesPerMb;
  if (ai) {
    stream.push({ type: 'start', messageId: 'm' });
    stream.push({ type: 'text-start', id: 't' });
  } else {
    stream.push({ type: 'data-pi-mode', data: { enabled: true } });
    stream.push({ type: 'data-pi-message-start', data: { seq: 1, messageId: 'm', role: 'assistant' } });
    stream.push({ type: 'data-pi-text-start', data: { seq: 2, messageId: 'm', partId: 't' } });
  }
  for (let i = 0; i < total; i++) {
    if (ai) stream.push({ type: 'text-delta', id: 't', delta: piece });
    else stream.push({ type: 'data-pi-text-delta', data: { seq: 3 + i, messageId: 'm', partId: 't', delta: piece } });
    if (i % 64 === 63) await new Promise((r) => setTimeout(r, 0));
  }
  while ((store.getSnapshot().messages.at(-1)?.parts.at(-1)?.text?.length ?? 0) < total * piece.length) await new Promise((r) => setTimeout(r, 5));
  const after = memory.buffer.byteLength;
  const chars = total * piece.length;
  stream.end();
  store.dispose();
  return { mode, streamedChars: chars, wasmGrowthBytes: after - before, perChar: +((after - before) / chars).toFixed(2) };
}

/** The core alone reads a big input (`benchNativeState` / `benchHistory`): median ms of `runs`, and wasm memory growth over all of them. */
function big(kind, messages, runs = 5) {
  const bench = kind.startsWith('state') ? pkg.benchNativeState : pkg.benchHistory;
  if (typeof bench !== 'function') throw new Error('no bench exports: a bench build (bash bench/build.sh), ACS_PKG=target/bench-pkg');
  // Generated by another process (wasm memory only grows: generating it here would grow it
  // before the measurement), read outside the wasm.
  const file = resolve(root, `target/bench/big-${kind}-${messages}.json`);
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    const w = spawnSync(process.execPath, [import.meta.filename, `--write=${kind}`, `--messages=${messages}`], { stdio: 'inherit', env: process.env });
    if (w.status !== 0) throw new Error(`writing ${file} failed`);
  }
  const body = new Uint8Array(readFileSync(file));
  const before = memory.buffer.byteLength;
  const times = [];
  for (let r = 0; r < runs; r++) {
    const t = performance.now();
    const shown = bench(body);
    times.push(performance.now() - t);
    if (shown !== messages) throw new Error(`${kind}: ${shown} of ${messages} messages shown`);
  }
  times.sort((a, b) => a - b);
  return { kind, messages, bodyBytes: body.length, medianMs: +times[runs >> 1].toFixed(1), wasmGrowthBytes: memory.buffer.byteLength - before };
}

/** The whole package: a `ChatStore` opens a session whose `/state` (pi-native) or history
 * (the messages route) is the big input, served at once by its `fetch`; timed from the store's
 * creation to the first snapshot that shows it all, with wasm memory growth. */
async function bigPackage(kind, messages) {
  const file = resolve(root, `target/bench/big-${kind}-${messages}.json`);
  if (!existsSync(file)) big(kind, 1, 1); // writes it (and times a tiny one)
  const bytes = readFileSync(file);
  const native = kind.startsWith('state');
  const fetch = async (url) => {
    const path = String(url).split('?')[0];
    if (native ? path.endsWith('/state') : path.endsWith('/messages')) {
      return new Response(bytes, { status: 200, headers: { 'content-type': 'application/json' } });
    }
    if (native && path.endsWith('/events')) return new Response(new ReadableStream({}), { status: 200, headers: { 'content-type': 'application/x-ndjson' } });
    return new Response('', { status: 404 });
  };
  const before = memory.buffer.byteLength;
  const t = performance.now();
  const store = new pkg.ChatStore(native
    ? { sessionId: 'bench', protocol: 'pi-native', fetch, persistSeq: false }
    : { sessionId: 'bench', capabilities: { nativeFollowUp: false, aiSdkOwnsHistory: true }, fetch, persistSeq: false });
  store.start(); // read by polling, not subscribed: nothing else starts it
  let longest = 0;
  let shown = 0;
  while (shown !== messages) {
    await new Promise((r) => setTimeout(r, 0));
    const t1 = performance.now();
    shown = store.getSnapshot().messages.length;
    longest = Math.max(longest, performance.now() - t1);
    if (performance.now() - t > 120_000) throw new Error(`${kind}: ${shown} of ${messages} after 120 s`);
  }
  const ms = performance.now() - t;
  const out = { kind, messages, ms: +ms.toFixed(1), wasmGrowthBytes: memory.buffer.byteLength - before };
  store.dispose();
  return out;
}

function sessionList(count, perPage, runs = 5) {
  const before = memory.buffer.byteLength;
  const list = new pkg.BenchSessionList(count, perPage);
  const t = performance.now();
  const shown = list.load();
  const loadMs = performance.now() - t;
  if (shown !== count + 1) throw new Error(`${shown} of ${count} sessions shown`);
  const times = [];
  for (let r = 0; r < runs; r++) {
    const t1 = performance.now();
    list.refresh();
    times.push(performance.now() - t1);
  }
  times.sort((a, b) => a - b);
  list.free();
  return { sessions: count, perPage: perPage ?? 20, loadMs: +loadMs.toFixed(1), refreshMs: +times[runs >> 1].toFixed(2), wasmGrowthBytes: memory.buffer.byteLength - before };
}

const n = Number(arg('n', 10000));
if (arg('write', null)) {
  const messages = Number(arg('messages', 50000));
  writeFileSync(resolve(root, `target/bench/big-${arg('write')}-${messages}.json`), pkg.benchInput(arg('write'), messages));
  process.exit(0);
}
const kinds = ['state', 'history', 'state-tiny', 'history-tiny'];
for (const kind of kinds) if (only.includes(`${kind}-pkg`)) console.log(`${kind}-pkg`, JSON.stringify(await bigPackage(kind, Number(arg('messages', 50000)))));
for (const kind of kinds) if (only.includes(kind)) console.log(kind, JSON.stringify(big(kind, Number(arg('messages', 50000)))));
// Pages of the store's size (20), and the whole list in one page (a server that ignores `limit`).
if (only.includes('sessions')) {
  for (const c of arg('sessions', '40000,100000').split(',')) {
    for (const perPage of [undefined, Number(c)]) console.log('sessions', JSON.stringify(sessionList(Number(c), perPage)));
  }
}
if (only.includes('drain')) console.log('drain', JSON.stringify(await drain(n)));
if (only.includes('parts')) for (const c of [1, 1000]) console.log('parts', JSON.stringify(await parts(c)));
for (const mode of ['ai', 'pi']) if (only.includes(`stream-${mode}`)) console.log('stream', JSON.stringify(await streamMemory(mode, Number(arg('mb', 60)))));
if (only.includes('hydrate')) console.log('hydrate', JSON.stringify(await hydrate(Number(arg('tools', 100000)))));
